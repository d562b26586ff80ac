//! The blob line of `rocksdb.cfstats` (RocksDB's `DumpCFStatsNoFileHistogram`) reports the
//! family's blob files: their count, total size and garbage, and the space amplification.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, DB};

fn blob_line(db: &DB) -> String {
    let text = db.property_value("rocksdb.cfstats").unwrap().unwrap();
    text.lines().find(|l| l.starts_with("Blob file count: ")).unwrap().to_string()
}

#[test]
fn blob_line_counts_the_versions_blob_files() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(0);
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(
        blob_line(&db),
        "Blob file count: 0, total size: 0.0 GB, garbage size: 0.0 GB, space amp: 0.0"
    );
    for round in 0..2 {
        for i in 0..100 {
            db.put(format!("k{i:03}"), vec![b'a' + round; 1000]).unwrap();
        }
        db.flush().unwrap();
    }
    // Two flushes, two blob files; nothing is garbage yet, so the live bytes are all of them.
    assert_eq!(
        blob_line(&db),
        "Blob file count: 2, total size: 0.0 GB, garbage size: 0.0 GB, space amp: 1.0"
    );
}
