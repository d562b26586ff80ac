//! Shale writes wide-column entities with their large column values in blob files, and
//! RocksDB 11.8.1 reads them (skipped, with the reason printed, when 11.8.1's tools do not
//! run here; see tools/mod.rs):
//! - Shale's flush (`enable_blob_files`, `min_blob_size` 20) writes version-2 entities with
//!   blob-index columns (11.8.1's `idump` prints them as "error deserializing wide columns",
//!   as it does its own); a compaction with blob files turned on moves the columns of
//!   entities flushed without them; blob garbage collection relocates old ones;
//! - 11.8.1's `ldb scan` and `ldb get_entity` print every column resolved, `sst_dump
//!   --command=verify` passes on every table, and `ldb compact` (RocksDB's own compaction
//!   over Shale's tables and blob files) keeps them readable, by 11.8.1 and by Shale.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{BottommostLevelCompaction, CompactOptions, Options, ReadOptions, WriteOptions, DB};
use tools::*;

/// A full compaction that rewrites the last level too (no trivial move keeps a table).
fn compact(db: &DB) {
    let mut c = CompactOptions::default();
    c.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &c);
}

type Cols = Vec<(Vec<u8>, Vec<u8>)>;

fn big(tag: &str) -> Vec<u8> {
    format!("{tag}{}", "x".repeat(40)).into_bytes()
}

fn ldb(dir: &Path, extra: &[&str]) -> String {
    let mut a = vec![format!("--db={}", dir.display())];
    a.extend(extra.iter().map(|s| s.to_string()));
    run_tool("ldb", &a)
}

/// `ldb scan`'s line for an entity: "key ==> name:value ..." (a lone default column as its
/// value).
fn scan_line(k: &[u8], cols: &Cols) -> String {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let body = if cols.len() == 1 && cols[0].0.is_empty() {
        s(&cols[0].1)
    } else {
        cols.iter().map(|(n, v)| format!("{}:{}", s(n), s(v))).collect::<Vec<_>>().join(" ")
    };
    format!("{} ==> {body}\n", s(k))
}

fn check_rocksdb(dir: &Path, want: &BTreeMap<Vec<u8>, Cols>, stage: &str) {
    let scan = ldb(dir, &["scan"]);
    let lines: String = want.iter().map(|(k, c)| scan_line(k, c)).collect();
    assert_eq!(scan, lines, "{stage}: 11.8.1's ldb scan");
    for (k, cols) in want {
        let got = ldb(dir, &["get_entity", std::str::from_utf8(k).unwrap()]);
        let line = scan_line(k, cols);
        let (_, body) = line.trim_end().split_once(" ==> ").unwrap();
        // get_entity prints every column as name:value, a lone default one too.
        let all: Vec<String> = cols
            .iter()
            .map(|(n, v)| format!("{}:{}", String::from_utf8_lossy(n), String::from_utf8_lossy(v)))
            .collect();
        let got = got.trim_end();
        assert!(got == all.join(" ") || got == body, "{stage}: get_entity {k:?}: {got}");
    }
    for t in files_with_suffix(dir, ".sst") {
        let out = run_tool("sst_dump", &[format!("--file={}", t.display()), "--command=verify".into()]);
        assert!(!out.to_lowercase().contains("corrupt"), "{stage}: {out}");
    }
}

fn check_shale(db: &DB, want: &BTreeMap<Vec<u8>, Cols>, stage: &str) {
    let cf = db.cf_handle("default").unwrap();
    for (k, cols) in want {
        let got = db.get_entity_cf_opt(&cf, k, &ReadOptions::default()).unwrap();
        assert_eq!(got.as_ref(), Some(cols), "{stage}: get_entity {k:?}");
    }
}

/// How many version-2 entities 11.8.1's idump could not print (it has no blob fetcher).
fn v2_in_idump(dir: &Path) -> usize {
    let a = vec![format!("--db={}", dir.display()), "idump".to_string()];
    let (ok, out, err) = try_tool("ldb", &a);
    assert!(ok, "{out}{err}");
    format!("{out}{err}").matches("type:22 => error deserializing wide columns").count()
}

#[test]
fn shale_entities_with_blob_columns_read_by_rocksdb() {
    let test = "interop_wide_columns_blob_write";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(20);
    let mut want: BTreeMap<Vec<u8>, Cols> = BTreeMap::new();
    let put = |db: &DB, want: &mut BTreeMap<Vec<u8>, Cols>, k: &str, cols: Cols| {
        let cf = db.cf_handle("default").unwrap();
        let c: Vec<(&[u8], &[u8])> = cols.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        db.put_entity_cf(&cf, k, &c, &WriteOptions::default()).unwrap();
        want.insert(k.as_bytes().to_vec(), cols);
    };
    {
        let db = DB::open(&o, &dir).unwrap();
        // Large default and other column; large non-default only; small default, large
        // other; all small.
        put(
            &db,
            &mut want,
            "e0",
            vec![(vec![], big("D0")), (b"a".to_vec(), b"short".to_vec()), (b"b".to_vec(), big("B0"))],
        );
        put(&db, &mut want, "e1", vec![(b"x".to_vec(), big("X1"))]);
        put(&db, &mut want, "e2", vec![(vec![], b"small".to_vec()), (b"y".to_vec(), big("Y2"))]);
        put(&db, &mut want, "e3", vec![(vec![], b"tiny".to_vec()), (b"t".to_vec(), b"1".to_vec())]);
        db.flush().unwrap();
        check_shale(&db, &want, "flushed");
    }
    assert_eq!(files_with_suffix(&dir, ".blob").len(), 1);
    assert_eq!(v2_in_idump(&dir), 3, "e0, e1 and e2 are version 2");
    check_rocksdb(&dir, &want, "Shale's flush");

    // Entities flushed without blob files, moved by Shale's compaction once turned on.
    {
        let mut plain = o.clone();
        plain.set_enable_blob_files(false);
        let db = DB::open(&plain, &dir).unwrap();
        put(&db, &mut want, "e4", vec![(vec![], big("D4")), (b"z".to_vec(), big("Z4"))]);
        put(&db, &mut want, "e1", vec![(vec![], big("D1")), (b"x".to_vec(), big("X1new"))]);
        db.flush().unwrap();
        db.set_options(&[("enable_blob_files", "true")]).unwrap();
        compact(&db);
        check_shale(&db, &want, "compacted");
    }
    assert_eq!(v2_in_idump(&dir), 4, "e0, e1, e2 and e4 are version 2");
    check_rocksdb(&dir, &want, "Shale's compaction");

    // Blob garbage collection: every entity blob column is relocated, the old files go.
    let before = files_with_suffix(&dir, ".blob");
    {
        let mut gc = o.clone();
        gc.set_enable_blob_gc(true);
        gc.set_blob_gc_age_cutoff(1.0);
        let db = DB::open(&gc, &dir).unwrap();
        compact(&db);
        check_shale(&db, &want, "relocated");
    }
    let after = files_with_suffix(&dir, ".blob");
    assert!(before.iter().all(|f| !after.contains(f)), "{before:?} -> {after:?}");
    assert_eq!(after.len(), 1);
    check_rocksdb(&dir, &want, "Shale's blob GC");

    // RocksDB's own compaction over Shale's tables and blob files.
    ldb(&dir, &["--enable_blob_files", "--min_blob_size=20", "compact"]);
    check_rocksdb(&dir, &want, "11.8.1's compaction");
    let db = DB::open(&o, &dir).unwrap();
    check_shale(&db, &want, "after 11.8.1's compaction");
}
