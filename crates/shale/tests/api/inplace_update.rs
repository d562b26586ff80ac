//! `inplace_update_support` acts as RocksDB 11.8.1's: a Put of a key whose newest memtable
//! entry is a Put with a value at least as long overwrites that value in place (the
//! memtable does not grow, `rocksdb.number.keys.updated` counts it), values stay right
//! across flushes and reopens (WAL replay updates in place too), and RocksDB's
//! ValidateOptions refusal with `allow_concurrent_memtable_write` is matched.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{ErrorKind, Options, DB};

fn inplace_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_allow_concurrent_memtable_write(false);
    o.set_inplace_update_support(true);
    o.set_inplace_update_locks(100);
    o.enable_statistics();
    o
}

fn active_size(db: &DB) -> u64 {
    db.property_int_value("rocksdb.cur-size-active-mem-table").unwrap().unwrap()
}

#[test]
fn refused_with_concurrent_memtable_writes_as_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = inplace_opts();
    o.set_allow_concurrent_memtable_write(true);
    let e = DB::open(&o, dir.path()).expect_err("RocksDB refuses the pair");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.to_string().contains(
            "In-place memtable updates (inplace_update_support) is not compatible with concurrent \
             writes (allow_concurrent_memtable_write)"
        ),
        "{e}"
    );
}

#[test]
fn same_size_overwrites_do_not_grow_the_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let o = inplace_opts();
    let db = DB::open(&o, dir.path()).unwrap();
    for i in 0..100u32 {
        db.put(format!("key{i:03}"), format!("value-{i:05}-aaaaaaaaaaaaaaaaaaaaaaaa")).unwrap();
    }
    let size = active_size(&db);
    let snap = db.snapshot();
    for round in 0..5u32 {
        for i in 0..100u32 {
            db.put(format!("key{i:03}"), format!("value-{i:05}-round{round}bbbbbbbbbbbbbbbbbb")).unwrap();
        }
    }
    assert_eq!(active_size(&db), size, "in-place overwrites must not add entries");
    assert_eq!(o.get_ticker_count(Ticker::NumberKeysUpdated), 500);
    assert_eq!(db.property_int_value("rocksdb.num-entries-active-mem-table").unwrap(), Some(100));
    // As RocksDB documents ("not compatible with snapshots"): the snapshot taken before the
    // overwrites reads the in-place value.
    assert_eq!(snap.get(b"key007").unwrap().as_deref(), Some(&b"value-00007-round4bbbbbbbbbbbbbbbbbb"[..]));
    // Longer values append.
    db.put(b"key001", vec![b'L'; 100]).unwrap();
    assert!(active_size(&db) > size);
    assert_eq!(o.get_ticker_count(Ticker::NumberKeysUpdated), 500);
    drop(snap);
    // Iterators in both directions see the newest values.
    let fwd: Vec<_> = db.iterator(shale::IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(fwd.len(), 100);
    assert_eq!(&fwd[1].1[..], &[b'L'; 100][..]);
    assert_eq!(&fwd[7].1[..], b"value-00007-round4bbbbbbbbbbbbbbbbbb");
    let back: Vec<_> = db.iterator(shale::IteratorMode::End).map(|r| r.unwrap()).collect();
    assert_eq!(back.len(), 100);
    assert_eq!(&back[99 - 7].1[..], b"value-00007-round4bbbbbbbbbbbbbbbbbb");
}

#[test]
fn values_survive_flush_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let o = inplace_opts();
    let expect = |db: &DB| {
        for i in 0..50u32 {
            let want = if i % 2 == 0 { format!("new{i:04}") } else { format!("old{i:04}-longer") };
            assert_eq!(db.get(format!("k{i:03}")).unwrap(), Some(want.into_bytes()), "k{i:03}");
        }
    };
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for i in 0..50u32 {
            db.put(format!("k{i:03}"), format!("old{i:04}-longer")).unwrap();
        }
        for i in (0..50u32).step_by(2) {
            db.put(format!("k{i:03}"), format!("new{i:04}")).unwrap();
        }
        expect(&db);
    }
    // Reopened from the WAL: the replay overwrites in place as RocksDB's does (its 25
    // overwrites counted by the new statistics).
    {
        let o = inplace_opts();
        let db = DB::open(&o, dir.path()).unwrap();
        expect(&db);
        assert_eq!(o.get_ticker_count(Ticker::NumberKeysUpdated), 25);
        db.flush().unwrap();
        expect(&db);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    expect(&db);
    // The OPTIONS file records both options; inplace_update_num_locks is mutable.
    db.set_options(&[("inplace_update_num_locks", "7")]).unwrap();
    db.put(b"k000", b"x").unwrap();
    assert_eq!(db.get(b"k000").unwrap().as_deref(), Some(&b"x"[..]));
    drop(db);
    let opts = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(opts).unwrap();
    assert!(text.contains("inplace_update_support=true"), "{text}");
    assert!(text.contains("inplace_update_num_locks=7"), "{text}");
}
