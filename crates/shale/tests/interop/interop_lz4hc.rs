//! LZ4HC is real high compression: a table Shale writes with LZ4HC is smaller than the same
//! data with LZ4, and RocksDB 11.8.1's `sst_dump` and `ldb` read it back.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{DBCompressionType, Options, DB};
use tools::*;

fn write_db(dir: &Path, c: DBCompressionType) -> (u64, Pairs) {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_compression_type(c);
    let db = DB::open(&opts, dir).unwrap();
    let mut x = 7u32;
    for i in 0..6000u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let v =
            format!("user{:05}|{}|field{}|payload payload {}", (x >> 16) % 900, i % 17, (x >> 8) % 37, i % 5);
        db.put(format!("key{i:06}"), v).unwrap();
    }
    db.flush().unwrap();
    let pairs = shale_scan(&db, "default");
    drop(db);
    let size = sst_files(dir).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    (size, pairs)
}

#[test]
fn lz4hc_tables_are_smaller_than_lz4_and_rocksdb_11_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (hc_dir, fast_dir) = (tmp.path().join("hc"), tmp.path().join("fast"));
    let (hc_size, hc_pairs) = write_db(&hc_dir, DBCompressionType::Lz4hc);
    let (fast_size, fast_pairs) = write_db(&fast_dir, DBCompressionType::Lz4);
    assert_eq!(hc_pairs, fast_pairs);
    assert_eq!(hc_pairs.len(), 6000);
    // Before liblz4's LZ4_compress_HC was used, LZ4HC wrote LZ4's bytes exactly.
    assert!(hc_size < fast_size, "LZ4HC tables {hc_size} bytes, LZ4 tables {fast_size} bytes");

    // Shale reads its LZ4HC table back (reopen: from the file, not the block cache).
    let db = DB::open(&Options::default(), &hc_dir).unwrap();
    assert_eq!(shale_scan(&db, "default"), hc_pairs);
    drop(db);

    if !use_rocksdb_11("lz4hc_tables_are_smaller_than_lz4_and_rocksdb_11_reads_them") {
        return;
    }
    let sst = sst_files(&hc_dir);
    assert_eq!(sst.len(), 1, "{sst:?}");
    let props = run_tool("sst_dump", &args(&[&format!("--file={}", sst[0].display()), "--show_properties"]));
    // format_version 7 (the default) names the compression manager and the codec ids used
    // ("BuiltinV2;05;": 0x05 is LZ4HC); older formats name the codec ("LZ4HC").
    assert!(props.contains("SST file compression algo: BuiltinV2;05;") || props.contains("LZ4HC"), "{props}");
    let (ok, out, err) = try_tool(
        "sst_dump",
        &args(&[&format!("--file={}", sst[0].display()), "--command=verify", "--verify_checksum"]),
    );
    assert!(ok && !out.contains("Corruption") && !err.contains("Corruption"), "{out}{err}");
    assert_same_pairs(&ldb_scan(&hc_dir, None), &hc_pairs, "ldb 11.8.1 scan of Shale's LZ4HC table");
}
