//! RocksDB 11's `separate_key_value_in_data_block` (data blocks with their keys first, then
//! their values): the tables 11.8.1's db_bench writes with it, uncompressed and with snappy,
//! open in Shale, answer every point lookup with `ldb scan`'s value, and scan forward and
//! backward to `ldb scan`'s pairs. Each table is checked to carry the layout (its property
//! `rocksdb.separate.key.value.in.data.block` is 1), so the test reads what it claims to.
//! The other way (issue 33): tables Shale writes with the option on (flushes and a
//! compaction, with and without compression and the data-block hash index) carry the layout
//! and the property, and 11.8.1's `sst_dump --command=scan` and `ldb scan` read every pair.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::table::reader::Table;
use shale::{Options, DB};
use tools::*;

/// Whether the table's properties block says its data blocks store keys and values apart.
/// The properties block is stored uncompressed and prefix-compressed: the name's tail after
/// `rocksdb.` (shared with the key before) is stored whole, and the value (a varint) follows.
fn table_is_separated(sst: &Path) -> bool {
    let bytes = std::fs::read(sst).unwrap();
    let mut name = b"separate.key.value.in.data.block".to_vec();
    name.push(1);
    bytes.windows(name.len()).any(|w| w == name.as_slice())
}

#[test]
fn rocksdb_11_separated_kv_tables_read_in_shale() {
    let test = "rocksdb_11_separated_kv_tables_read_in_shale";
    if !use_rocksdb_11(test) {
        return;
    }
    for compression in ["none", "snappy"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let c = format!("--compression_type={compression}");
        db_bench_run(
            &dir,
            "fillrandom",
            20000,
            &["--separate_key_value_in_data_block=1", "--write_buffer_size=262144", &c],
        );
        let ssts = sst_files(&dir);
        assert!(!ssts.is_empty(), "{compression}: db_bench wrote no table");
        for sst in &ssts {
            assert!(table_is_separated(sst), "{compression}: {} lacks the layout", sst.display());
        }
        let want = ldb_scan(&dir, None);
        assert!(want.len() > 10000, "{compression}: ldb saw {} pairs", want.len());
        let mut o = Options::default();
        o.create_if_missing(false);
        let db = DB::open(&o, &dir).unwrap_or_else(|e| panic!("{compression}: Shale cannot open: {e}"));
        for (k, v) in &want {
            let got = db.get(k).unwrap();
            assert_eq!(got.as_deref(), Some(v.as_slice()), "{compression}: get {}", encode_hex(k));
        }
        assert_same_pairs(&shale_scan(&db, "default"), &want, &format!("{compression}: forward scan"));
        let mut back = shale_scan_reverse(&db, "default");
        back.reverse();
        assert_same_pairs(&back, &want, &format!("{compression}: backward scan"));
    }
}

/// The pairs `sst_dump --command=scan --output_hex` prints (lines `'KEY' seq:N, type:T => VALUE`).
fn sst_dump_scan(sst: &Path) -> Pairs {
    let (ok, out, err) = try_tool(
        "sst_dump",
        &args(&[&format!("--file={}", sst.display()), "--command=scan", "--output_hex"]),
    );
    assert!(
        ok && !out.contains("Corruption") && !err.contains("Corruption"),
        "{}: {out}{err}",
        sst.display()
    );
    let mut pairs = Vec::new();
    for line in out.lines().filter(|l| l.starts_with('\'')) {
        let (k, rest) = line[1..].split_once('\'').unwrap();
        let (_, v) = rest.split_once(" => ").unwrap();
        pairs.push((decode_hex(k), decode_hex(v.trim())));
    }
    pairs
}

#[test]
fn shale_separated_kv_tables_read_by_rocksdb_11() {
    let test = "shale_separated_kv_tables_read_by_rocksdb_11";
    for (compression, table) in [
        ("kNoCompression", "{separate_key_value_in_data_block=true;block_restart_interval=4;}"),
        (
            "kSnappyCompression",
            "{separate_key_value_in_data_block=true;data_block_index_type=kDataBlockBinaryAndHash;}",
        ),
        ("kNoCompression", "{separate_key_value_in_data_block=false;}"),
    ] {
        let on = table.contains("=true");
        let ctx = format!("{compression} {table}");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let mut o = Options::default()
            .get_options_from_string(format!("compression={compression};block_based_table_factory={table}"))
            .unwrap();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..2u32 {
            for i in 0..3000u32 {
                // Values of many lengths, empty ones among them.
                let v = format!("{round}-{i}-").repeat((i % 7) as usize);
                db.put(format!("key{:06}", i * 2 + round), v).unwrap();
            }
            db.flush().unwrap();
        }
        db.delete(b"key000010").unwrap();
        db.flush().unwrap();
        let ours_before = shale_scan_default(&db);
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let ours = shale_scan_default(&db);
        assert_same_pairs(&ours, &ours_before, &format!("{ctx}: compaction"));
        assert_eq!(ours.len(), 5999, "{ctx}");
        for (k, v) in ours.iter().step_by(97) {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{ctx}: get {}", encode_hex(k));
        }
        drop(db);
        let ssts = sst_files(&dir);
        assert_eq!(ssts.len(), 1, "{ctx}: the compaction leaves one table");
        for sst in &ssts {
            assert_eq!(table_is_separated(sst), on, "{ctx}: {}", sst.display());
            let (file, size, opts) = table_file(sst);
            let t = Table::open(file, size, opts).unwrap();
            let prop = t.properties().user_collected.get("rocksdb.separate.key.value.in.data.block").cloned();
            assert_eq!(prop, on.then(|| vec![1u8]), "{ctx}: the table property");
        }
        let text = latest_options_text(&dir);
        assert!(text.contains(&format!("  separate_key_value_in_data_block={on}\n")), "{ctx}:\n{text}");
        if !use_rocksdb_11(test) {
            continue;
        }
        assert_same_pairs(&sst_dump_scan(&ssts[0]), &ours, &format!("{ctx}: sst_dump scan"));
        assert_same_pairs(&ldb_scan(&dir, None), &ours, &format!("{ctx}: ldb scan"));
        let out = run_tool(
            "ldb",
            &args(&[
                &format!("--db={}", dir.display()),
                "--try_load_options",
                "--hex",
                "scan",
                "--max_keys=3",
            ]),
        );
        assert_eq!(out.lines().filter(|l| l.contains("==>")).count(), 3, "{ctx}: {out}");
    }
}
