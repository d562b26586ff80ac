//! Remote compaction of a family that writes blob files (issue 33): RocksDB 11.8.1's
//! `CompactionServiceResult` lists table files only, so a worker's blob files could never be
//! installed; Shale runs such a compaction locally, as RocksDB's primary does when its
//! service answers kUseLocal, and the service is not called. Without blob files the same
//! service is called.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shale::db::CompactionService;
use shale::{Options, DB};

/// A service that counts its calls and fails them (the test only asks whether it is called).
struct Counting(AtomicUsize);

impl CompactionService for Counting {
    fn compact(&self, _input: &[u8]) -> shale::Result<Vec<u8>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(shale::Error::new(shale::ErrorKind::Aborted, "test service: not compacting"))
    }
}

fn run(blob_files: bool) -> (shale::Result<()>, usize, u64) {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    if blob_files {
        o.set_enable_blob_files(true);
        o.set_min_blob_size(0);
    }
    let db = DB::open(&o, tmp.path()).unwrap();
    let service = Arc::new(Counting(AtomicUsize::new(0)));
    db.set_compaction_service(Some(service.clone()));
    for round in 0..2 {
        for i in 0..50 {
            db.put(format!("k{i:03}"), format!("v{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    let r = db.try_compact_range_cf(&db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>);
    for i in 0..50 {
        assert_eq!(db.get(format!("k{i:03}")).unwrap().unwrap(), format!("v1-{i}").into_bytes());
    }
    let l0 = db.property_int_value("rocksdb.num-files-at-level0").unwrap().unwrap();
    (r, service.0.load(Ordering::SeqCst), l0)
}

#[test]
fn remote_compaction_writing_blob_files_runs_locally() {
    // With blob files: compacted here (level 0 emptied), the service never called.
    let (r, calls, l0) = run(true);
    assert!(r.is_ok(), "{r:?}");
    assert_eq!((calls, l0), (0, 0));
    // Without: the service is called (and its failure is the compaction's).
    let (r, calls, l0) = run(false);
    let e = r.unwrap_err();
    assert_eq!(e.kind(), shale::ErrorKind::Aborted, "{e}");
    assert!(calls > 0);
    assert_eq!(l0, 2);
}
