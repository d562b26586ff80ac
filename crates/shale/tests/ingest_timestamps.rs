//! Ingesting into a family with user-defined timestamps decides overlap on keys without
//! their timestamps, as RocksDB's ingestion does (`sstableKeyCompare` there): a file whose
//! largest key is a newer version of the first key of a last-level table overlaps that
//! table, so it goes to the level above instead of beside it (which would split the
//! versions of one key over two tables of one level).
//!
//! The shape: the last level holds [k@1, z@1]; the file ingested holds [a@3, k@3]. As whole
//! keys k@3 sorts before k@1 (newer timestamps first), so comparing whole keys finds no
//! overlap and puts the file on the last level too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::{Options, ReadOptions, SstFileWriter, U64TsComparator, DB};

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

#[test]
fn a_file_sharing_a_key_without_timestamp_goes_above_the_table_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let db = DB::open(&o, dir.path()).unwrap();
    db.put_with_ts(b"k", ts(1), b"k1").unwrap();
    db.put_with_ts(b"z", ts(1), b"z1").unwrap();
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let levels = |db: &DB| {
        let mut v: Vec<(i32, Vec<u8>)> = db
            .live_files()
            .unwrap()
            .into_iter()
            .map(|f| (f.level, f.start_key.unwrap_or_default()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(levels(&db).iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![6]);

    let sst = dir.path().join("ingest.sst");
    let mut w = SstFileWriter::create(&o);
    w.open(&sst).unwrap();
    w.put_with_ts(b"a", ts(3), b"a3").unwrap();
    w.put_with_ts(b"k", ts(3), b"k3").unwrap();
    w.finish().unwrap();
    db.ingest_external_file(vec![&sst]).unwrap();

    let got = levels(&db);
    assert_eq!(got.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![5, 6], "{got:?}");
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(10));
    assert_eq!(db.get_opt(b"k", &ro).unwrap().as_deref(), Some(&b"k3"[..]));
    assert_eq!(db.get_opt(b"a", &ro).unwrap().as_deref(), Some(&b"a3"[..]));
    ro.set_timestamp(ts(2));
    assert_eq!(db.get_opt(b"k", &ro).unwrap().as_deref(), Some(&b"k1"[..]));
    assert_eq!(db.get_opt(b"a", &ro).unwrap().as_deref(), None);
    assert_eq!(db.get_opt(b"z", &ro).unwrap().as_deref(), Some(&b"z1"[..]));
}
