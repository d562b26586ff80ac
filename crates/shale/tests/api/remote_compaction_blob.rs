//! Remote compaction of a family that writes blob files (helper tbl3, issue 33): RocksDB
//! 11.8.1's `CompactionServiceResult` lists table files only, so a worker's blob files could
//! never be installed; Shale refuses with NotSupported before calling the service, and the
//! database keeps its data. Without blob files the same service is called.
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

fn run(blob_files: bool) -> (shale::Error, usize) {
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
    let e =
        db.try_compact_range_cf(&db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>).unwrap_err();
    for i in 0..50 {
        assert_eq!(db.get(format!("k{i:03}")).unwrap().unwrap(), format!("v1-{i}").into_bytes());
    }
    (e, service.0.load(Ordering::SeqCst))
}

#[test]
fn remote_compaction_writing_blob_files_is_refused_before_the_service() {
    let (e, calls) = run(true);
    assert_eq!(e.kind(), shale::ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("CompactionServiceResult carries no blob files"), "{e}");
    assert_eq!(calls, 0);
    let (e, calls) = run(false);
    assert_ne!(e.kind(), shale::ErrorKind::NotSupported, "{e}");
    assert!(calls > 0);
}
