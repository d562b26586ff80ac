//! The table properties Shale writes are the ones RocksDB 11.8.1 writes: a flushed table of
//! the same keys with the same options from `db_bench` 11.8.1 and from Shale, each shown by
//! 11.8.1's `sst_dump --show_properties`, list the same property names (the known ones and
//! the raw user-collected ones, among them
//! `rocksdb.block.based.table.decoupled.partitioned.filters`), and the same
//! "SST file compression options" text, with 11.x's `max_compressed_bytes_per_kb`, `checksum`
//! and `_type` fields. Skipped (with the reason) where 11.8.1's tools cannot run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use shale::{DBCompressionType, Options, DB};

/// What `sst_dump --show_properties` prints for the one table in `dir`: property label ->
/// value (known properties by their label, raw user-collected ones as `# <name>`).
fn properties(dir: &Path) -> BTreeMap<String, String> {
    let ssts = tools::sst_files(dir);
    assert_eq!(ssts.len(), 1, "{ssts:?}");
    let out = tools::run_tool(
        "sst_dump",
        &tools::args(&[&format!("--file={}", ssts[0].display()), "--show_properties"]),
    );
    let mut in_props = false;
    let mut m = BTreeMap::new();
    for line in out.lines() {
        if line.starts_with("Table Properties:") {
            in_props = true;
            continue;
        }
        if !in_props || line.starts_with("---") || !line.starts_with("  ") {
            continue;
        }
        if let Some((k, v)) = line.trim().split_once(": ") {
            m.insert(k.to_string(), v.to_string());
        } else if let Some(k) = line.trim().strip_suffix(':') {
            m.insert(k.to_string(), String::new());
        }
    }
    assert!(m.len() > 20, "too few properties in:\n{out}");
    m
}

const KEYS: usize = 100;

#[test]
fn shale_writes_rocksdb_11_table_properties() {
    if !tools::use_rocksdb_11("shale_writes_rocksdb_11_table_properties") {
        return;
    }
    for (compression, flag) in [(DBCompressionType::Lz4, "lz4"), (DBCompressionType::None, "none")] {
        let rocks = tempfile::tempdir().unwrap();
        // fillseq's keys are 16 bytes, its values 100; one flush, no filter.
        tools::db_bench_run(
            rocks.path(),
            "fillseq,flush",
            KEYS,
            &[&format!("--compression_type={flag}"), "--bloom_bits=-1", "--disable_auto_compactions=1"],
        );
        let shale = tempfile::tempdir().unwrap();
        {
            let mut o = Options::default();
            o.create_if_missing(true);
            o.set_compression_type(compression);
            let db = DB::open(&o, shale.path()).unwrap();
            for i in 0..KEYS {
                db.put(format!("{i:016}"), [b'v'; 100]).unwrap();
            }
            db.flush().unwrap();
        }
        let want = properties(rocks.path());
        let got = properties(shale.path());
        let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<BTreeSet<_>>();
        assert_eq!(names(&got), names(&want), "{flag}: property names differ");
        assert!(want.contains_key("# rocksdb.block.based.table.decoupled.partitioned.filters"), "{want:?}");
        for same in [
            "SST file compression options",
            "# rocksdb.block.based.table.decoupled.partitioned.filters",
            "# rocksdb.block.based.table.whole.key.filtering",
            "# rocksdb.block.based.table.prefix.filtering",
            "# rocksdb.block.based.table.index.type",
        ] {
            assert_eq!(got.get(same), want.get(same), "{flag}: {same}");
        }
    }
}
