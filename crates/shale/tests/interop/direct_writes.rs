//! `use_direct_io_for_flush_and_compaction` with RocksDB 11.8.1's tools: the tables Shale
//! flushes and compacts with O_DIRECT (ending mid-block, their padded tails cut off) pass
//! `sst_dump --command=verify`, and `ldb scan` reads the database to Shale's data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{Options, DB};
use tools::*;

#[test]
fn direct_written_tables_verified_by_rocksdb_11() {
    let test = "tables Shale wrote with O_DIRECT, read by RocksDB 11.8.1";
    if !use_rocksdb_11(test) {
        return;
    }
    // The build's disk: a tmpfs /tmp may have no O_DIRECT.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = tmp.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_use_direct_io_for_flush_and_compaction(true);
    opts.set_writable_file_max_buffer_size(20_000);
    opts.set_write_buffer_size(200 << 10);
    let mut model = std::collections::BTreeMap::new();
    {
        let db = DB::open(&opts, &dir).unwrap();
        for round in 0..3u32 {
            for i in 0..2000u32 {
                let k = format!("key{:05}", (i * 31 + round) % 4000).into_bytes();
                let v = format!("value {i} of round {round} ").repeat(1 + (i % 9) as usize).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    let tables = sst_files(&dir);
    assert!(!tables.is_empty(), "{test}");
    assert!(
        tables.iter().any(|t| std::fs::metadata(t).unwrap().len() % 4096 != 0),
        "{test}: some table ends mid-block"
    );
    for t in &tables {
        let out = run_tool("sst_dump", &[format!("--file={}", t.display()), "--command=verify".into()]);
        assert!(!out.to_lowercase().contains("corrupt"), "{test}: {out}");
    }
    let want: Pairs = model.into_iter().collect();
    assert_same_pairs(&ldb_scan(&dir, None), &want, &format!("{test}: ldb scan"));
}
