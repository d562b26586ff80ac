//! No table is opened under the DB mutex: what the compaction picker weighs (deletion counts
//! for `compaction_pri` kByCompensatedSize, newest key times for FIFO's temperature change)
//! is loaded into each file's metadata when its Version is built, with the mutex released
//! (RocksDB 11.8.1's `UpdateAccumulatedStats` in `ProcessManifestWrites`), and the picker
//! reads only that (the picker's own test: `db/mod.rs`, `table_stats_tests`). Debug builds
//! panic on any table opened under the mutex (`table_cache.rs`); with a table cache
//! smaller than the tables (`max_open_files` 20: 16 kept open) the oldest are closed, and
//! the properties that read tables open them without it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{CompactionPri, Options, WaitForCompactOptions, DB};

fn options(extra: &str) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    let mut o = o.get_options_from_string(format!("compression=kNoCompression;{extra}")).unwrap();
    o.set_max_open_files(20);
    o.enable_statistics();
    o
}

/// `n` tables of 20 keys each, keys `t*1000..`.
fn tables(db: &DB, n: u32) {
    for t in 0..n {
        for i in 0..20 {
            db.put(format!("k{:07}", t * 1000 + i), vec![b'v'; 50]).unwrap();
        }
        db.flush().unwrap();
    }
}

fn opens(o: &Options) -> u64 {
    o.get_ticker_count(Ticker::NoFileOpens)
}

/// The properties that read every table (`estimate-num-keys`, `shale.data-blocks-read`) open
/// the closed ones without the mutex (debug builds would panic otherwise), before and after
/// a reopen that loads the counts (not with skip_stats_update_on_db_open).
#[test]
fn properties_open_closed_tables_without_the_mutex() {
    for skip in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options("disable_auto_compactions=true");
        o.set_compaction_pri(CompactionPri::ByCompensatedSize);
        o.set_skip_stats_update_on_db_open(skip);
        let db = DB::open(&o, dir.path()).unwrap();
        tables(&db, 24);
        let before = opens(&o);
        assert_eq!(db.property_int_value("rocksdb.estimate-num-keys").unwrap(), Some(24 * 20));
        assert!(opens(&o) > before, "the closed tables were opened");
        db.property_int_value("rocksdb.shale.data-blocks-read").unwrap().unwrap();
        drop(db);
        let db = DB::open(&o, dir.path()).unwrap();
        assert_eq!(db.property_int_value("rocksdb.estimate-num-keys").unwrap(), Some(24 * 20));
        db.set_options(&[("disable_auto_compactions", "false")]).unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
        db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
        assert_eq!(db.get(format!("k{:07}", 23 * 1000 + 19)).unwrap(), Some(vec![b'v'; 50]));
    }
}
