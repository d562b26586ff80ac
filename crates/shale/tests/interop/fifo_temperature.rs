//! issue 33 (fifo): FIFO's temperature change against RocksDB 11.8.1's release tools
//! (skipped with a printed reason when they are absent, see tools/mod.rs). Shale copies its
//! tables past `file_temperature_age_thresholds`' first age to kWarm
//! (`allow_trivial_copy_when_change_temperature`); then `ldb manifest_dump --verbose` shows
//! the temperature Shale recorded (` temperature: 8`), `ldb --try_load_options` opens the
//! database with the OPTIONS file Shale wrote (its thresholds text parsed by RocksDB) and
//! scans what Shale scans, `sst_dump --command=verify` passes the copies, and Shale reopens
//! the database with the temperatures kept.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools::*;

use shale::{Options, WaitForCompactOptions, DB};

fn warm_bytes(db: &DB) -> u64 {
    db.property_value("rocksdb.live-sst-files-size-at-temperature8").unwrap().unwrap().parse().unwrap()
}

#[test]
fn shale_fifo_temperature_copies_read_in_rocksdb() {
    if !use_rocksdb_11("shale_fifo_temperature_copies_read_in_rocksdb") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    let o = o
        .get_options_from_string(
            "compaction_style=kCompactionStyleFIFO;num_levels=1;compression=kNoCompression;\
             compaction_options_fifo={allow_trivial_copy_when_change_temperature=true;\
             trivial_copy_buffer_size=16384;\
             file_temperature_age_thresholds={{age=2;temperature=kWarm}:{age=100000;temperature=kCold}}}",
        )
        .unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 0..2u32 {
        for i in 0..100u32 {
            db.put(format!("k{t}{i:04}"), format!("v{t}-{i}").repeat(20)).unwrap();
        }
        db.flush().unwrap();
    }
    let total: u64 = db.property_int_value("rocksdb.total-sst-files-size").unwrap().unwrap();
    // Each table is copied once 2 s old (the periodic check runs every second here).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while warm_bytes(&db) != total {
        assert!(std::time::Instant::now() < deadline, "not every table became warm");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    let want = shale_scan_default(&db);
    assert_eq!(want.len(), 200);
    let names: Vec<String> = db.live_files().unwrap().into_iter().map(|f| f.name).collect();
    drop(db);

    let d = format!("--db={}", dir.path().display());
    let dump = run_tool("ldb", &args(&["manifest_dump", "--verbose", &d]));
    assert_eq!(dump.matches(" temperature: 8").count(), 2, "{dump}");
    for n in &names {
        let f = dir.path().join(n.trim_start_matches('/'));
        run_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=verify"]));
    }
    run_tool("ldb", &args(&[&d, "--try_load_options", "scan"]));
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Options.compaction_style: kCompactionStyleFIFO"), "RocksDB's LOG");
    assert_same_pairs(&ldb_scan(dir.path(), None), &want, "ldb scan of Shale's copies");

    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(warm_bytes(&db), total, "the MANIFEST keeps the temperatures");
    assert_eq!(shale_scan_default(&db), want);
}
