//! A wide-column entity whose column values are in blob files (version 2, as RocksDB
//! 11.8.1's flush and compaction write one), built by hand here: Shale writes two blob
//! values of one key to two blob files, the test reads their blob indexes out of the
//! tables and writes (as a raw write batch) an entity whose default column and column "b"
//! point at them, beside an inline column "a". Every read resolves the blob columns: `get`,
//! `get_pinned`, `multi_get` (the default column only), `get_entity`, the iterator's
//! `value()` / `columns()` (backward fetching the newest visible version only), a merge
//! onto the entity (whose result holds the values inline), through flushes, compactions and
//! reopens. (That Shale's tables link to the blob files an entity points into is checked by
//! interop_wide_columns_blob, where the entities own their blob records.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::{Path, PathBuf};

use shale::statistics::Ticker;
use shale::table::reader::{Table, TableReaderOptions};
use shale::{Options, ReadOptions, WriteBatch, DB};

fn varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A version-2 entity: (name, value, value is a blob index), sorted by name.
fn entity_v2(cols: &[(&[u8], &[u8], bool)]) -> Vec<u8> {
    let (mut ns, mut vs, mut names, mut values) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (n, v, _) in cols {
        varint(&mut ns, n.len() as u32);
        varint(&mut vs, v.len() as u32);
        names.extend_from_slice(n);
        values.extend_from_slice(v);
    }
    let mut e = Vec::new();
    for x in [2, cols.len(), ns.len(), vs.len(), names.len()] {
        varint(&mut e, x as u32);
    }
    e.extend(cols.iter().map(|c| if c.2 { 0x11u8 } else { 0x1 }));
    for part in [ns, vs, names, values] {
        e.extend_from_slice(&part);
    }
    e
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// The value of the one entry of table `f` (a blob index here).
fn only_value(f: &Path) -> Vec<u8> {
    let size = std::fs::metadata(f).unwrap().len();
    let file = shale::fs::default_fs().new_random_access_file(f).unwrap();
    let opts =
        TableReaderOptions::standalone(shale::key::bytewise_internal_comparator(), f.display().to_string());
    let t = Table::open(file, size, opts).unwrap();
    let mut it = t.iter(false);
    it.seek_to_first();
    assert!(it.valid());
    let v = it.value().to_vec();
    let k = it.key();
    assert_eq!(k[k.len() - 8], 0x11, "a blob index (type 17)");
    it.next();
    assert!(!it.valid());
    v
}

fn concat(_key: &[u8], existing: Option<&[u8]>, ops: &shale::MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for o in ops {
        v.extend_from_slice(o);
    }
    Some(v)
}

type Cols = Vec<(Vec<u8>, Vec<u8>)>;

fn check(db: &DB, default: &[u8], cols: &Cols, stage: &str) {
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(default), "{stage}: get");
    assert_eq!(db.get_pinned(b"k").unwrap().as_deref(), Some(default), "{stage}: get_pinned");
    let mg: Vec<_> = db.multi_get([b"k", b"z"]).into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(mg, vec![Some(default.to_vec()), Some(b"after".to_vec())], "{stage}: multi_get");
    let cf = db.cf_handle("default").unwrap();
    assert_eq!(
        db.get_entity_cf_opt(cf, b"k", &ReadOptions::default()).unwrap().as_ref(),
        Some(cols),
        "{stage}"
    );
    let mut it = db.raw_iterator();
    for forward in [true, false] {
        if forward {
            it.seek_to_first();
        } else {
            it.seek_to_last();
            it.prev();
        }
        assert!(it.valid(), "{stage}");
        assert_eq!(it.key(), Some(&b"k"[..]), "{stage}");
        assert_eq!(it.value(), Some(default), "{stage}: value()");
        assert_eq!(it.columns().unwrap().unwrap(), *cols, "{stage}: columns()");
    }
}

#[test]
fn entity_with_blob_columns_reads_resolved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cache = shale::Cache::new_lru_cache(1 << 20);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(20);
    o.set_blob_cache(&cache);
    o.enable_statistics();
    o.set_merge_operator_associative("concat", concat);
    let (dv, bv) = (vec![b'd'; 50], vec![b'b'; 60]);
    let mut cols: Cols =
        vec![(Vec::new(), dv.clone()), (b"a".to_vec(), b"short".to_vec()), (b"b".to_vec(), bv.clone())];
    {
        let db = DB::open(&o, dir).unwrap();
        // Snapshots keep the plain versions through the compaction below: the entity
        // reuses their blob records, which real entities never share (a dropped plain
        // version would make them garbage).
        db.put(b"k", &dv).unwrap();
        let _s1 = db.snapshot();
        db.flush().unwrap();
        db.put(b"k", &bv).unwrap();
        let _s2 = db.snapshot();
        db.flush().unwrap();
        let ssts = files(dir, ".sst");
        assert_eq!((ssts.len(), files(dir, ".blob").len()), (2, 2));
        let (di, bi) = (only_value(&ssts[0]), only_value(&ssts[1]));
        let entity = entity_v2(&[(b"", &di, true), (b"a", b"short", false), (b"b", &bi, true)]);
        // A raw batch: sequence (set by the write), count 1, kTypeWideColumnEntity record.
        let mut rep = vec![0u8; 8];
        rep.extend_from_slice(&1u32.to_le_bytes());
        rep.push(0x16);
        varint(&mut rep, 1);
        rep.push(b'k');
        varint(&mut rep, entity.len() as u32);
        rep.extend_from_slice(&entity);
        db.write(WriteBatch::from_data(&rep)).unwrap();
        db.put(b"z", b"after").unwrap();

        let ticks = |t| o.get_ticker_count(t);
        let (hit0, miss0) = (ticks(Ticker::BlobDbCacheHit), ticks(Ticker::BlobDbCacheMiss));
        assert_eq!(db.get(b"k").unwrap(), Some(dv.clone()));
        // A column-unaware read fetches the default column only; get_entity all of them.
        assert_eq!((ticks(Ticker::BlobDbCacheHit) - hit0, ticks(Ticker::BlobDbCacheMiss) - miss0), (0, 1));
        let cf = db.cf_handle("default").unwrap();
        db.get_entity_cf_opt(cf, b"k", &ReadOptions::default()).unwrap();
        assert_eq!((ticks(Ticker::BlobDbCacheHit) - hit0, ticks(Ticker::BlobDbCacheMiss) - miss0), (1, 2));
        // An iterator landing on the entity backward fetches its two blob columns, not
        // the older plain versions it walks over (RocksDB's FindValueForCurrentKey).
        let lookups = || ticks(Ticker::BlobDbCacheHit) + ticks(Ticker::BlobDbCacheMiss);
        let mut it = db.raw_iterator();
        it.seek_to_last();
        let before = lookups();
        it.prev();
        assert_eq!(it.key(), Some(&b"k"[..]));
        assert_eq!(lookups() - before, 2);
        drop(it);

        check(&db, &dv, &cols, "memtable");
        db.flush().unwrap();
        check(&db, &dv, &cols, "flushed");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check(&db, &dv, &cols, "compacted");
    }
    assert_eq!(files(dir, ".blob").len(), 2, "the blob files stay");
    {
        let db = DB::open(&o, dir).unwrap();
        check(&db, &dv, &cols, "reopened");
        // A merge onto the entity sees its resolved default column.
        db.merge(b"k", b"+m").unwrap();
        let merged = [&dv[..], b"+m"].concat();
        cols[0].1 = merged.clone();
        check(&db, &merged, &cols, "merged");
        db.flush().unwrap();
        check(&db, &merged, &cols, "merged, flushed");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check(&db, &merged, &cols, "merged, compacted");
    }
    let db = DB::open(&o, dir).unwrap();
    check(&db, &[&dv[..], b"+m"].concat(), &cols, "merged, reopened");
}
