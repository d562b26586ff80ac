//! FIFO compaction as RocksDB's `FIFOCompactionPicker` (size-based): once a family's tables
//! hold more than `max_table_files_size`, its oldest level-0 tables are deleted until the
//! rest fit; a family that was leveled before loses its last level first, smallest keys
//! first; level-0 file counts never stall writes; `compact_range` runs FIFO's pick.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{
    DBCompactionStyle, ErrorKind, FifoCompactOptions, Options, WaitForCompactOptions, WriteOptions, DB,
};

const VALUE: usize = 1000;
const KEYS_PER_TABLE: u32 = 50;

fn fifo_options(max_bytes: u64) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(shale::DBCompressionType::None);
    let mut f = FifoCompactOptions::default();
    f.set_max_table_files_size(max_bytes);
    o.set_compaction_style(DBCompactionStyle::Fifo);
    o.set_fifo_compaction_options(&f);
    // Leveled compaction would stall writes at these counts; FIFO must not.
    o.set_level_zero_slowdown_writes_trigger(2);
    o.set_level_zero_stop_writes_trigger(3);
    o
}

/// Table `t` holds keys t*1000 .. t*1000+49.
fn write_table(db: &DB, t: u32) {
    let mut w = WriteOptions::default();
    w.set_no_slowdown(true);
    for i in 0..KEYS_PER_TABLE {
        db.put_opt(format!("k{:07}", t * 1000 + i), vec![b'a' + (t % 26) as u8; VALUE], &w)
            .unwrap_or_else(|e| panic!("table {t}: a FIFO write must never stall: {e}"));
    }
    db.flush().unwrap();
}

fn sst_bytes(db: &DB) -> u64 {
    db.live_files().unwrap().iter().map(|f| f.size as u64).sum()
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

#[test]
fn oldest_tables_are_deleted_past_the_size_bound() {
    let dir = tempfile::tempdir().unwrap();
    // About three tables' worth.
    let max = 3 * (KEYS_PER_TABLE as u64 * VALUE as u64) + 4000;
    let db = DB::open(&fifo_options(max), dir.path()).unwrap();
    for t in 0..12 {
        write_table(&db, t);
        wait(&db);
        assert!(sst_bytes(&db) <= max, "after table {t}: {} bytes over the bound {max}", sst_bytes(&db));
    }
    let files = db.live_files().unwrap();
    assert!(files.iter().all(|f| f.level == 0), "FIFO keeps everything in level 0");
    assert!((2..=3).contains(&files.len()), "{} tables left", files.len());
    // The newest tables are whole, the oldest gone entirely.
    for i in 0..KEYS_PER_TABLE {
        assert!(db.get(format!("k{:07}", 11_000 + i)).unwrap().is_some());
        assert!(db.get(format!("k{:07}", 10_000 + i)).unwrap().is_some());
        assert_eq!(db.get(format!("k{:07}", i)).unwrap(), None, "table 0 must be deleted");
        assert_eq!(db.get(format!("k{:07}", 5000 + i)).unwrap(), None, "table 5 must be deleted");
    }
    // The OPTIONS file records the style as RocksDB names it.
    let options_file = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(options_file).unwrap();
    assert!(text.contains("compaction_style=kCompactionStyleFIFO"), "{text}");
    assert!(text.contains(&format!("max_table_files_size={max};")), "{text}");
}

#[test]
fn a_leveled_family_switched_to_fifo_loses_its_last_level_first() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_compression_type(shale::DBCompressionType::None);
        o.set_target_file_size_base(20 * VALUE as u64); // several files in the last level
        let db = DB::open(&o, dir.path()).unwrap();
        for t in 0..4 {
            write_table(&db, t);
        }
        db.compact_range::<&[u8], &[u8]>(None, None);
        assert!(db.live_files().unwrap().iter().all(|f| f.level > 0));
        write_table(&db, 4); // one table in level 0, newer than everything below
    }
    let total = 5 * KEYS_PER_TABLE as u64 * VALUE as u64;
    let db = DB::open(&fifo_options(total / 2), dir.path()).unwrap();
    // Nothing happens until something is flushed or compaction is asked for.
    db.compact_range::<&[u8], &[u8]>(None, None);
    wait(&db);
    db.compact_range::<&[u8], &[u8]>(None, None);
    wait(&db);
    assert!(sst_bytes(&db) <= total / 2, "{} bytes left", sst_bytes(&db));
    // The last level went first, from its smallest keys; level 0 is untouched.
    assert_eq!(db.get(format!("k{:07}", 0)).unwrap(), None);
    assert!(db.get(format!("k{:07}", 4000)).unwrap().is_some(), "level 0 must outlive the old levels");
    assert!(db.get(format!("k{:07}", 3049)).unwrap().is_some(), "the largest keys of the last level go last");
}

#[test]
fn ttl_deletes_expired_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fifo_options(1 << 30);
    // Ages are whole seconds (a table expires once now - its time > ttl): after 6.5 s the two
    // first tables are past a ttl of 5 s whatever the rounding, and the third stays young
    // unless more than 5 s pass between its flush and the pick (a margin for a loaded
    // machine: two test suites at once on 2 cores).
    o.set_ttl(5);
    let db = DB::open(&o, dir.path()).unwrap();
    write_table(&db, 0);
    write_table(&db, 1);
    std::thread::sleep(std::time::Duration::from_millis(6500));
    write_table(&db, 2);
    // compact_range runs FIFO's pick: the two tables older than 3 s go, the new one stays.
    db.compact_range::<&[u8], &[u8]>(None, None);
    wait(&db);
    assert_eq!(db.get(format!("k{:07}", 0)).unwrap(), None, "table 0 expired");
    assert_eq!(db.get(format!("k{:07}", 1000)).unwrap(), None, "table 1 expired");
    assert!(db.get(format!("k{:07}", 2000)).unwrap().is_some(), "table 2 is young");
    assert_eq!(db.live_files().unwrap().len(), 1);
}

#[test]
fn fifo_ttl_needs_max_open_files_unlimited() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fifo_options(1 << 20);
    o.set_max_open_files(100);
    // RocksDB's default FIFO ttl is 30 days, so this is refused as RocksDB refuses it.
    let e = DB::open(&o, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("max_open_files = -1"), "{e}");
    o.set_ttl(0);
    DB::open(&o, dir.path()).unwrap();
}

#[test]
fn allow_compaction_merges_small_level0_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fifo_options(1 << 30);
    let mut f = FifoCompactOptions::default();
    f.set_max_table_files_size(1 << 30);
    f.set_allow_compaction(true);
    o.set_fifo_compaction_options(&f);
    o.set_level_zero_file_num_compaction_trigger(4);
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 0..8 {
        write_table(&db, t);
        wait(&db);
    }
    let files = db.live_files().unwrap();
    assert!(files.iter().all(|f| f.level == 0), "FIFO keeps everything in level 0");
    assert!(files.len() < 8, "{} tables: none merged", files.len());
    for t in 0..8 {
        assert!(db.get(format!("k{:07}", t * 1000 + 7)).unwrap().is_some(), "table {t}'s keys");
    }
}
