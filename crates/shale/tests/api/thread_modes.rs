//! rust-rocksdb's thread modes over one engine: a `DBWithThreadMode<MultiThreaded>` creates
//! and drops column families through `&self` from several threads at once, its
//! `BoundColumnFamily` handles read and write, a handle kept past `drop_cf` fails with
//! InvalidArgument instead of reaching freed state, and a single-threaded `DB` reopens what
//! the multi-threaded one wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::{DBWithThreadMode, ErrorKind, MultiThreaded, Options, SingleThreaded};

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o
}

#[test]
fn multi_threaded_families_from_many_threads() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(DBWithThreadMode::<MultiThreaded>::open(&opts(), dir.path()).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let name = format!("cf{t}");
                db.create_cf(&name, &Options::default()).unwrap();
                let cf = db.cf_handle(&name).unwrap();
                for i in 0..100u32 {
                    db.put_cf(&cf, i.to_be_bytes(), format!("{t}:{i}")).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // The same name twice is refused.
    assert_eq!(db.create_cf("cf0", &Options::default()).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let cf2 = db.cf_handle("cf2").unwrap();
    assert_eq!(db.get_cf(&cf2, 7u32.to_be_bytes()).unwrap().as_deref(), Some(&b"2:7"[..]));
    db.drop_cf("cf2").unwrap();
    assert!(db.cf_handle("cf2").is_none());
    // The handle outlives the family: using it is an error, not a crash.
    assert!(db.get_cf(&cf2, 7u32.to_be_bytes()).is_err());
    assert!(db.put_cf(&cf2, b"k", b"v").is_err());
    drop(cf2);
    // The last owner closes the database.
    assert_eq!(Arc::strong_count(&db), 1);
    drop(db);

    let mut names = shale::DB::list_cf(&Options::default(), dir.path()).unwrap();
    names.sort();
    assert_eq!(names, ["cf0", "cf1", "cf3", "default"]);
    let db = DBWithThreadMode::<SingleThreaded>::open_cf(&opts(), dir.path(), ["cf0", "cf1", "cf3"]).unwrap();
    for (t, name) in [(0, "cf0"), (1, "cf1"), (3, "cf3")] {
        let cf = db.cf_handle(name).unwrap();
        assert_eq!(db.get_cf(cf, 99u32.to_be_bytes()).unwrap().unwrap(), format!("{t}:99").into_bytes());
    }
    // DB is Debug + Send + Sync, as rust-rocksdb's.
    fn bounds<T: std::fmt::Debug + Send + Sync>(_: &T) {}
    bounds(&db);
}
