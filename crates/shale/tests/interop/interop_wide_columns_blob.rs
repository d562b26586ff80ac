//! Wide-column entities whose large column values RocksDB 11.8.1 put in blob files
//! (skipped, with the reason printed, when 11.8.1's tools do not run here; see tools/mod.rs):
//! - 11.8.1's `ldb --enable_blob_files --min_blob_size=20 put_entity` writes entities with
//!   large default and non-default columns, small ones, one without a default column, one
//!   all small; `ldb compact` writes them as version-2 entities
//!   with blob-index columns (its `idump` cannot print them: "error deserializing wide
//!   columns"); later ones and a plain large value land in level-0 tables (and newer blob
//!   files), the newest stays in the WAL;
//! - Shale reads the same columns `ldb scan` / `ldb get_entity` print: `get`, `get_pinned`
//!   and `multi_get` the default column, `get_entity_cf_opt` every column, the iterator's
//!   `value()` / `columns()` forward and backward;
//! - the blob cache sees what RocksDB's reads fetch: a column-unaware `get` fetches the
//!   default column only, `get_entity` every blob column;
//! - Shale's compaction keeps the blob files the live entities point into (the output tables
//!   link to them), frees the one only a superseded entity used, and 11.8.1 still scans the
//!   same; a merge onto an entity with blob
//!   columns sees the resolved default column and keeps the others, before and after a
//!   compaction and a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::statistics::Ticker;
use shale::{Options, ReadOptions, DB};
use tools::*;

use super::interop_wide_columns::{parse, Cols};

const MIN_BLOB: &str = "--min_blob_size=20";

fn ldb(dir: &Path, extra: &[&str]) -> String {
    let mut a =
        vec![format!("--db={}", dir.display()), "--enable_blob_files".to_string(), MIN_BLOB.to_string()];
    a.extend(extra.iter().map(|s| s.to_string()));
    run_tool("ldb", &a)
}

fn big(tag: &str) -> String {
    format!("{tag}{}", "x".repeat(40))
}

fn default_of(cols: &Cols) -> Vec<u8> {
    cols.iter().find(|(n, _)| n.is_empty()).map(|(_, v)| v.clone()).unwrap_or_default()
}

fn check(db: &DB, want: &BTreeMap<Vec<u8>, Cols>, stage: &str) {
    let cf = db.cf_handle("default").unwrap();
    let ro = ReadOptions::default();
    for (k, cols) in want {
        let default = default_of(cols);
        assert_eq!(db.get(k).unwrap(), Some(default.clone()), "{stage}: get {k:?}");
        assert_eq!(db.get_pinned(k).unwrap().as_deref(), Some(&default[..]), "{stage}: get_pinned {k:?}");
        assert_eq!(
            db.get_entity_cf_opt(cf, k, &ro).unwrap().as_ref(),
            Some(cols),
            "{stage}: get_entity {k:?}"
        );
    }
    let keys: Vec<&Vec<u8>> = want.keys().collect();
    let got: Vec<Option<Vec<u8>>> = db.multi_get(&keys).into_iter().map(|r| r.unwrap()).collect();
    let defaults: Vec<Option<Vec<u8>>> = want.values().map(|c| Some(default_of(c))).collect();
    assert_eq!(got, defaults, "{stage}: multi_get");
    let want_list: Vec<(Vec<u8>, Cols)> = want.iter().map(|(k, c)| (k.clone(), c.clone())).collect();
    let mut it = db.raw_iterator();
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        let cols = it.columns().unwrap().unwrap();
        assert_eq!(it.value().unwrap(), &default_of(&cols)[..], "{stage}: value() of {:?}", it.key());
        fwd.push((it.key().unwrap().to_vec(), cols));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(fwd, want_list, "{stage}: forward scan");
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().unwrap().to_vec(), it.columns().unwrap().unwrap()));
        it.prev();
    }
    it.status().unwrap();
    back.reverse();
    assert_eq!(back, want_list, "{stage}: backward scan");
}

fn blob_files(dir: &Path) -> Vec<std::path::PathBuf> {
    files_with_suffix(dir, ".blob")
}

#[test]
fn rocksdb_entities_with_blob_columns_read_by_shale() {
    let test = "interop_wide_columns_blob";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut want: BTreeMap<Vec<u8>, Cols> = BTreeMap::new();
    let put = |want: &mut BTreeMap<Vec<u8>, Cols>, key: &str, cols: Vec<String>, first: bool| {
        let mut args: Vec<&str> = Vec::new();
        if first {
            args.push("--create_if_missing");
        }
        args.push("put_entity");
        args.push(key);
        args.extend(cols.iter().map(String::as_str));
        ldb(&dir, &args);
        want.insert(key.as_bytes().to_vec(), parse(&cols));
    };
    // Large default and other columns; large non-default only; small default, large other;
    // all small; then a plain large value.
    put(&mut want, "e0", vec![format!(":{}", big("D0")), "a:short".into(), format!("b:{}", big("B0"))], true);
    put(&mut want, "e1", vec![format!("x:{}", big("X1"))], false);
    put(&mut want, "e2", vec![":small".into(), format!("y:{}", big("Y2"))], false);
    put(&mut want, "e3", vec![":tiny".into(), "t:1".into()], false);
    ldb(&dir, &["compact"]);
    // A plain blob value in a newer blob file: only the entities link the tables to the
    // oldest one.
    ldb(&dir, &["put", "p", &big("P")]);
    want.insert(b"p".to_vec(), vec![(Vec::new(), big("P").into_bytes())]);
    // Newer versions in level-0 tables (each ldb open flushes the WAL it recovers).
    put(&mut want, "e1", vec![format!(":{}", big("D1")), format!("x:{}", big("X1new"))], false);
    put(&mut want, "e4", vec![format!("z:{}", big("Z4")), format!("zz:{}", big("ZZ4"))], false);
    // The newest stays in the WAL.
    put(&mut want, "e5", vec![format!(":{}", big("D5")), "q:small".into()], false);

    // (11.8.1's idump prints an entity it cannot deserialize on stderr.)
    let a: Vec<String> = [format!("--db={}", dir.display()), "idump".to_string()].into_iter().collect();
    let (ok, out, err) = try_tool("ldb", &a);
    assert!(ok, "{out}{err}");
    let idump = format!("{out}{err}");
    for k in ["e0", "e2", "e4"] {
        assert!(idump.contains(&format!("'{k}' seq:")), "{idump}");
    }
    assert!(
        idump.matches("type:22 => error deserializing wide columns").count() >= 4,
        "11.8.1 wrote version-2 entities with blob columns:\n{idump}"
    );
    let files_before = blob_files(&dir);
    assert!(files_before.len() >= 2, "blob files: {files_before:?}");
    let contents_before: Vec<(std::path::PathBuf, Vec<u8>)> =
        files_before.iter().map(|f| (f.clone(), std::fs::read(f).unwrap())).collect();
    let scan = ldb(&dir, &["scan"]);
    for (k, cols) in &want {
        let line: Vec<String> = cols
            .iter()
            .map(|(n, v)| format!("{}:{}", String::from_utf8_lossy(n), String::from_utf8_lossy(v)))
            .collect();
        let line = if cols.len() == 1 && cols[0].0.is_empty() {
            String::from_utf8_lossy(&cols[0].1).into_owned()
        } else {
            line.join(" ")
        };
        assert!(
            scan.contains(&format!("{} ==> {line}\n", String::from_utf8_lossy(k))),
            "{k:?} {line}\n{scan}"
        );
    }
    let got = ldb(&dir, &["get_entity", "e0"]);
    assert_eq!(got.trim_end(), format!(":{} a:short b:{}", big("D0"), big("B0")));

    let cache = shale::Cache::new_lru_cache(1 << 20);
    let mut o = Options::default();
    o.set_disable_auto_compactions(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(20);
    o.set_blob_cache(&cache);
    o.enable_statistics();
    o.set_merge_operator_associative("concat", concat);
    {
        let db = DB::open(&o, &dir).unwrap();
        // e0 holds two blob columns: the default and "b".
        let ticks = |t| o.get_ticker_count(t);
        let (hit0, miss0) = (ticks(Ticker::BlobDbCacheHit), ticks(Ticker::BlobDbCacheMiss));
        assert_eq!(db.get(b"e0").unwrap(), Some(big("D0").into_bytes()));
        assert_eq!(
            (ticks(Ticker::BlobDbCacheHit) - hit0, ticks(Ticker::BlobDbCacheMiss) - miss0),
            (0, 1),
            "a column-unaware get fetches the default column only"
        );
        let cf = db.cf_handle("default").unwrap();
        db.get_entity_cf_opt(cf, b"e0", &ReadOptions::default()).unwrap().unwrap();
        assert_eq!(
            (ticks(Ticker::BlobDbCacheHit) - hit0, ticks(Ticker::BlobDbCacheMiss) - miss0),
            (1, 2),
            "get_entity fetches every blob column (the default one from the cache)"
        );
        assert!(ticks(Ticker::BlobDbBlobFileBytesRead) > 0);
        check(&db, &want, "opened");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check(&db, &want, "compacted");
    }
    // The blob files live entities read stay (the output tables link to them). The one blob
    // file whose only record was the superseded first version of e1 (its column "x") is
    // all garbage once that version is dropped, and goes (RocksDB's BlobGarbageMeter counts
    // entity blob columns).
    let gone: Vec<_> = files_before.iter().filter(|f| !f.exists()).collect();
    assert_eq!(gone.len(), 1, "{gone:?} of {files_before:?}");
    let old_e1 = &contents_before.iter().find(|(f, _)| f == gone[0]).unwrap().1;
    // Header, one record (32-byte header, key "e1", the 42-byte value), footer.
    assert_eq!(old_e1.len(), 30 + 32 + 2 + 42 + 32, "{:?}", gone[0]);
    assert!(old_e1.windows(42).any(|w| w == big("X1").as_bytes()));
    {
        let db = DB::open(&o, &dir).unwrap();
        check(&db, &want, "reopened");
    }
    assert_eq!(ldb(&dir, &["scan"]), scan, "11.8.1's scan of what Shale compacted");

    // A merge onto an entity with blob columns: the operator sees the resolved default
    // column, the other columns are kept.
    {
        let db = DB::open(&o, &dir).unwrap();
        db.merge(b"e0", b"+m").unwrap();
        db.merge(b"e1", b"+n").unwrap();
        let e0 = want.get_mut(&b"e0"[..]).unwrap();
        e0[0].1 = format!("{}+m", big("D0")).into_bytes();
        let e1 = want.get_mut(&b"e1"[..]).unwrap();
        e1[0].1 = format!("{}+n", big("D1")).into_bytes();
        check(&db, &want, "merged");
        db.flush().unwrap();
        check(&db, &want, "merged, flushed");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check(&db, &want, "merged, compacted");
    }
    let db = DB::open(&o, &dir).unwrap();
    check(&db, &want, "merged, reopened");
}
