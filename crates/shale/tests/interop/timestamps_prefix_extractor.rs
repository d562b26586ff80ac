//! A prefix extractor on a family with user-defined timestamps (issue 33): RocksDB 11.8.1's
//! `ldb` opens the database Shale wrote (its OPTIONS file names both the timestamp
//! comparator and the extractor, loaded with `--try_load_options`) and reads the tables at
//! several read timestamps; its `get` consults the tables' prefix filters, built by Shale
//! from user keys without their timestamps as RocksDB's are, so every present key is found
//! at any read timestamp (a filter keyed with timestamps would answer "absent"), and
//! `sst_dump` scans every entry.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools::*;

use std::sync::Arc;

use shale::{BlockBasedOptions, Options, SliceTransform, U64TsComparator, DB};

#[test]
fn rocksdb_11_reads_a_prefix_filtered_family_with_timestamps() {
    let test = "rocksdb_11_reads_a_prefix_filtered_family_with_timestamps";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
        o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
        let mut t = BlockBasedOptions::default();
        t.set_bloom_filter(10.0, false);
        t.set_whole_key_filtering(false);
        o.set_block_based_table_factory(&t);
        let db = DB::open(&o, &path).unwrap();
        for i in (0..20u32).step_by(2) {
            for j in 0..5u32 {
                db.put_with_ts(format!("k{i:02}-{j}"), 10u64.to_le_bytes(), format!("a{i}{j}")).unwrap();
            }
        }
        for i in (0..20u32).step_by(2) {
            db.put_with_ts(format!("k{i:02}-0"), 20u64.to_le_bytes(), format!("b{i}0")).unwrap();
        }
        db.put_with_ts("ab", 10u64.to_le_bytes(), "short").unwrap();
        db.flush().unwrap();
    }
    let ldb = |extra: &[&str]| -> (bool, String) {
        let mut a = vec![format!("--db={}", path.display()), "--try_load_options".to_string()];
        a.extend(extra.iter().map(|s| s.to_string()));
        let (ok, out, err) = try_tool("ldb", &a);
        (ok, format!("{out}{err}"))
    };
    for ts in [15u64, 25, 300] {
        let (ok, out) = ldb(&["scan", "--hex", &format!("--read_timestamp={ts}")]);
        assert!(ok, "{test}: ldb scan at {ts}: {out}");
        let mut want = vec![(b"ab".to_vec(), 10u64, b"short".to_vec())];
        for i in (0..20u32).step_by(2) {
            for j in 0..5u32 {
                let (t, v) = if j == 0 && ts >= 20 { (20, 'b') } else { (10, 'a') };
                want.push((format!("k{i:02}-{j}").into_bytes(), t, format!("{v}{i}{j}").into_bytes()));
            }
        }
        let got: Vec<(Vec<u8>, u64, Vec<u8>)> = out
            .lines()
            .filter(|l| l.starts_with("0x"))
            .map(|l| {
                let (k, v) = l.split_once(" ==> ").unwrap();
                let (k, t) = k.split_once("|timestamp:").unwrap();
                (decode_hex(k), t.trim().parse().unwrap(), decode_hex(v))
            })
            .collect();
        assert_eq!(got, want, "{test}: ldb scan at {ts}");
        // Gets through the tables' prefix filters, at timestamps other than the writes'.
        for (key, value) in [("k04-3", "a43"), ("k18-4", "a184"), ("ab", "short")] {
            let (ok, out) = ldb(&["get", key, &format!("--read_timestamp={ts}")]);
            assert!(ok && out.lines().next() == Some(value), "{test}: ldb get {key} at {ts}: {out}");
        }
        let (ok, out) = ldb(&["get", "k05-3", &format!("--read_timestamp={ts}")]);
        assert!(ok && out.contains("Key not found"), "{test}: ldb get k05-3 at {ts}: {out}");
    }
    let mut entries = 0;
    for f in sst_files(&path) {
        let out = run_tool("sst_dump", &[format!("--file={}", f.display()), "--command=scan".to_string()]);
        entries += out.lines().filter(|l| l.contains(" type:1 ")).count();
    }
    assert_eq!(entries, 10 * 5 + 10 + 1, "{test}: entries sst_dump scans");
}
