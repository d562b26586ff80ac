//! Wide-column entities in Shale alone: `put_entity_cf` writes RocksDB's kTypeWideColumnEntity;
//! `get` and iterators' `value()` read the default column (empty when the entity has none),
//! `get_entity_cf_opt` and the iterator's `columns()` the columns, from the memtable, after a
//! flush, after a compaction and after a reopen that replays the WAL; a newer put or delete
//! shadows an entity and a snapshot still sees it; merge operands onto an entity merge onto
//! its default column and keep the other columns (RocksDB's MergeHelper), in reads and when
//! compaction folds them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, ReadOptions, WriteOptions, DB};

type Cols = Vec<(Vec<u8>, Vec<u8>)>;

fn cols(list: &[(&str, &str)]) -> Cols {
    list.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
}

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_merge_operator_object(shale::merge_operators::stringappend(","));
    o
}

fn put_entity(db: &DB, key: &str, columns: &[(&str, &str)]) {
    let c: Vec<(&[u8], &[u8])> = columns.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())).collect();
    db.put_entity_cf(db.cf_handle("default").unwrap(), key, &c, &WriteOptions::default()).unwrap();
}

fn entity(db: &DB, key: &str, ro: &ReadOptions) -> Option<Cols> {
    db.get_entity_cf_opt(db.cf_handle("default").unwrap(), key, ro).unwrap()
}

/// Every entry as (key, value, columns), forward; and the same backward, compared.
fn scan(db: &DB) -> Vec<(Vec<u8>, Vec<u8>, Cols)> {
    let mut it = db.raw_iterator();
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        fwd.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec(), it.columns().unwrap().unwrap()));
        it.next();
    }
    it.status().unwrap();
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec(), it.columns().unwrap().unwrap()));
        it.prev();
    }
    back.reverse();
    assert_eq!(fwd, back, "forward and backward scans differ");
    fwd
}

fn check(db: &DB, stage: &str) {
    let ro = ReadOptions::default();
    // e1: a default column and two others (given out of order).
    assert_eq!(db.get("e1").unwrap().as_deref(), Some(&b"d1"[..]), "{stage}");
    assert_eq!(entity(db, "e1", &ro), Some(cols(&[("", "d1"), ("a", "1"), ("b", "2")])), "{stage}");
    // e2: no default column: get reads empty.
    assert_eq!(db.get("e2").unwrap().as_deref(), Some(&b""[..]), "{stage}");
    assert_eq!(entity(db, "e2", &ro), Some(cols(&[("x", "9")])), "{stage}");
    // p: a plain value reads as one default column.
    assert_eq!(entity(db, "p", &ro), Some(cols(&[("", "plain")])), "{stage}");
    // m: two operands onto an entity's default column.
    assert_eq!(db.get("m").unwrap().as_deref(), Some(&b"base,m1,m2"[..]), "{stage}");
    assert_eq!(entity(db, "m", &ro), Some(cols(&[("", "base,m1,m2"), ("c", "3")])), "{stage}");
    // s: an entity shadowed by a put; d: by a delete.
    assert_eq!(db.get("s").unwrap().as_deref(), Some(&b"newer"[..]), "{stage}");
    assert_eq!(entity(db, "s", &ro), Some(cols(&[("", "newer")])), "{stage}");
    assert_eq!(db.get("d").unwrap(), None, "{stage}");
    assert_eq!(entity(db, "d", &ro), None, "{stage}");
    assert_eq!(entity(db, "absent", &ro), None, "{stage}");
    let got = scan(db);
    let want = vec![
        (b"e1".to_vec(), b"d1".to_vec(), cols(&[("", "d1"), ("a", "1"), ("b", "2")])),
        (b"e2".to_vec(), b"".to_vec(), cols(&[("x", "9")])),
        (b"m".to_vec(), b"base,m1,m2".to_vec(), cols(&[("", "base,m1,m2"), ("c", "3")])),
        (b"p".to_vec(), b"plain".to_vec(), cols(&[("", "plain")])),
        (b"s".to_vec(), b"newer".to_vec(), cols(&[("", "newer")])),
    ];
    assert_eq!(got, want, "{stage}");
}

#[test]
fn wide_column_entities_through_flush_compaction_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    {
        let db = DB::open(&opts(), path).unwrap();
        put_entity(&db, "e1", &[("b", "2"), ("", "d1"), ("a", "1")]);
        put_entity(&db, "e2", &[("x", "9")]);
        db.put("p", "plain").unwrap();
        put_entity(&db, "m", &[("", "base"), ("c", "3")]);
        db.merge("m", "m1").unwrap();
        put_entity(&db, "s", &[("", "old"), ("k", "v")]);
        put_entity(&db, "d", &[("", "gone")]);
        let snap = db.snapshot();
        db.put("s", "newer").unwrap();
        db.delete("d").unwrap();
        db.merge("m", "m2").unwrap();
        // Duplicate names are refused, as RocksDB refuses them.
        let dup: Vec<(&[u8], &[u8])> = vec![(b"a", b"1"), (b"a", b"2")];
        assert!(db
            .put_entity_cf(db.cf_handle("default").unwrap(), "bad", &dup, &WriteOptions::default())
            .is_err());
        check(&db, "memtable");
        let mut at = ReadOptions::default();
        at.set_snapshot(&snap);
        assert_eq!(entity(&db, "s", &at), Some(cols(&[("", "old"), ("k", "v")])));
        assert_eq!(entity(&db, "d", &at), Some(cols(&[("", "gone")])));
        assert_eq!(db.get_opt("m", &at).unwrap().as_deref(), Some(&b"base,m1"[..]));
        drop(snap);
        db.flush().unwrap();
        check(&db, "after flush");
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        check(&db, "after compaction");
        // More entities in the WAL only.
        put_entity(&db, "w", &[("", "wal"), ("z", "1")]);
    }
    let db = DB::open(&opts(), path).unwrap();
    assert_eq!(entity(&db, "w", &ReadOptions::default()), Some(cols(&[("", "wal"), ("z", "1")])));
    db.delete("w").unwrap();
    check(&db, "after reopen");
}
