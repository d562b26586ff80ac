//! A close does not wait out a running compaction: the job stops (ShutdownInProgress, as
//! RocksDB's compaction on `shutting_down_`), its partial outputs are removed, and the
//! database reopens with every key and no stray table.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, DB};

#[test]
fn close_during_a_compaction_loses_nothing_and_leaves_no_stray_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_compression_type(shale::DBCompressionType::None);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        // Four overlapping level-0 tables of ~4 MB: a compaction of 16 MB at the next open.
        for round in 0..4u32 {
            for i in 0..4000u32 {
                db.put(format!("k{i:06}"), format!("{round}{:0999}", i)).unwrap();
            }
            db.flush().unwrap();
        }
    }
    let mut auto = o.clone();
    auto.set_disable_auto_compactions(false);
    for _ in 0..3 {
        // The open schedules the level-0 compaction; the drop comes at once.
        let db = DB::open(&auto, dir.path()).unwrap();
        drop(db);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    for i in (0..4000u32).step_by(37) {
        assert_eq!(db.get(format!("k{i:06}")).unwrap(), Some(format!("3{:0999}", i).into_bytes()), "k{i}");
    }
    let live: Vec<String> =
        db.live_files().unwrap().into_iter().map(|f| f.name.trim_start_matches('/').to_string()).collect();
    let on_disk: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    for n in &on_disk {
        assert!(live.contains(n), "{n} on disk but not live ({live:?})");
    }
}
