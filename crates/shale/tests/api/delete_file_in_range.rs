//! `delete_file_in_range` as RocksDB's DeleteFilesInRange: tables of levels 1 and deeper that
//! lie wholly inside the range leave the database without a compaction; level 0, tables that
//! stick out of the range, and the memtable stay, and the files are deleted from disk.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{Options, DB};

fn key(i: u32) -> String {
    format!("k{i:05}")
}

#[test]
fn tables_inside_the_range_go_level_zero_and_the_rest_stay() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_target_file_size_base(16 << 10);
    o.set_compression_type(shale::DBCompressionType::None);
    let db = DB::open(&o, dir.path()).unwrap();
    // Two overlapping level-0 tables: the compaction merges them and cuts its output.
    for round in 0..2 {
        for i in 0..3000 {
            db.put(key(i), format!("{round}{i:039}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let deep = db.live_files().unwrap();
    assert!(deep.len() >= 4 && deep.iter().all(|f| f.level >= 1), "{}", deep.len());
    // Level 0 and the memtable hold keys in the range too.
    db.put(key(1500), b"l0").unwrap();
    db.flush().unwrap();
    db.put(key(1501), b"mem").unwrap();

    let (from, to) = (key(1000), key(2999));
    let inside: Vec<String> = deep
        .iter()
        .filter(|f| {
            f.start_key.as_deref().unwrap() >= from.as_bytes()
                && f.end_key.as_deref().unwrap() <= to.as_bytes()
        })
        .map(|f| f.name.clone())
        .collect();
    assert!(!inside.is_empty());
    db.delete_file_in_range(&from, &to).unwrap();

    let after = db.live_files().unwrap();
    assert_eq!(after.len(), deep.len() - inside.len() + 1, "the level-0 table stays");
    for name in &inside {
        assert!(!after.iter().any(|f| &f.name == name), "{name} still live");
        assert!(!dir.path().join(name.trim_start_matches('/')).exists(), "{name} still on disk");
    }
    assert_eq!(db.get(key(1500)).unwrap().as_deref(), Some(&b"l0"[..]));
    assert_eq!(db.get(key(1501)).unwrap().as_deref(), Some(&b"mem"[..]));
    assert_eq!(db.get(key(2999)).unwrap(), None, "the last table lay wholly inside");
    assert!(db.get(key(0)).unwrap().is_some(), "tables before the range stay");
    // A range with no table wholly inside changes nothing.
    db.delete_file_in_range(key(10), key(11)).unwrap();
    assert_eq!(db.live_files().unwrap().len(), after.len());
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    // (plus the level-0 table the open makes of the WAL's `k01501`)
    assert_eq!(db.live_files().unwrap().len(), after.len() + 1, "the MANIFEST records it");
    assert_eq!(db.get(key(2999)).unwrap(), None);
    assert_eq!(db.get(key(1500)).unwrap().as_deref(), Some(&b"l0"[..]));
}
