//! issue 33 (fifo): the `compaction_options_fifo` fields RocksDB 11.8.1 acts on beyond the
//! size limit and `allow_compaction`: `max_data_files_size` (blob bytes counted),
//! `file_temperature_age_thresholds` with `allow_trivial_copy_when_change_temperature` and
//! `trivial_copy_buffer_size`, and `use_kv_ratio_compaction`. Parsed, written back to the
//! OPTIONS file, changed by `set_options`, validated as RocksDB's
//! `ColumnFamilyData::ValidateOptions`, and each acting. Ages are real seconds (the engine's
//! table times come from the system clock, as the FIFO ttl tests in `fifo_compaction.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::statistics::Ticker;
use shale::{ErrorKind, Options, WaitForCompactOptions, DB};

fn fifo(extra: &str) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    let base = "compaction_style=kCompactionStyleFIFO;compression=kNoCompression;";
    o.get_options_from_string(format!("{base}{extra}")).unwrap()
}

fn wait(db: &DB) {
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
}

fn options_file(dir: &Path) -> String {
    let p = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    std::fs::read_to_string(p).unwrap()
}

/// Flushes one table of keys `t*1000 ..+n`, values of `len` bytes.
fn table(db: &DB, t: u32, n: u32, len: usize) {
    for i in 0..n {
        db.put(format!("k{:07}", t * 1000 + i), vec![b'a' + (t % 26) as u8; len]).unwrap();
    }
    db.flush().unwrap();
}

fn int_property(db: &DB, name: &str) -> u64 {
    db.property_int_value(name).unwrap().unwrap()
}

#[test]
fn fields_parse_write_back_change_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    let o = fifo(
        "num_levels=1;compaction_options_fifo={max_data_files_size=123456;use_kv_ratio_compaction=true;\
         allow_trivial_copy_when_change_temperature=true;trivial_copy_buffer_size=8192;\
         file_temperature_age_thresholds={{age=10;temperature=kWarm}:{age=20;temperature=kCold}}}",
    );
    let db = DB::open(&o, dir.path()).unwrap();
    let text = options_file(dir.path());
    let want = "compaction_options_fifo={use_kv_ratio_compaction=true;max_data_files_size=123456;\
                trivial_copy_buffer_size=8192;allow_trivial_copy_when_change_temperature=true;\
                file_temperature_age_thresholds={{age=10;temperature=kWarm;}:{age=20;temperature=kCold;}};\
                allow_compaction=false;age_for_warm=0;max_table_files_size=1073741824;}";
    assert!(text.contains(want), "{text}");
    // RocksDB leaves max_compaction_bytes 0 under FIFO with kv-ratio compaction.
    assert!(text.contains("  max_compaction_bytes=0\n"), "{text}");
    // The OPTIONS file reads back to the same text.
    let (_, cfs) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    drop(cfs);

    // set_options changes them (one element without the outer braces, as RocksDB's parser
    // takes it) and rewrites the OPTIONS file.
    db.set_options(&[(
        "compaction_options_fifo",
        "{max_data_files_size=0;use_kv_ratio_compaction=false;trivial_copy_buffer_size=4096;\
         file_temperature_age_thresholds={temperature=kCold;age=1000}}",
    )])
    .unwrap();
    let text = options_file(dir.path());
    assert!(text.contains("file_temperature_age_thresholds={{age=1000;temperature=kCold;}};"), "{text}");
    assert!(text.contains("max_data_files_size=0;"), "{text}");
    assert!(
        text.contains("allow_trivial_copy_when_change_temperature=true;"),
        "fields not named stay: {text}"
    );

    // RocksDB's ValidateOptions, on set_options too (nothing changes then).
    let e = db
        .set_options(&[(
            "compaction_options_fifo",
            "{file_temperature_age_thresholds={{age=20;temperature=kWarm}:{age=10;temperature=kCold}}}",
        )])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("requires elements to be sorted in increasing order"), "{e}");
    assert!(options_file(dir.path()).contains("{{age=1000;temperature=kCold;}}"));
    // RocksDB's SetOptions does not sanitize again: max_compaction_bytes stays 0 though the
    // kv-ratio pick is off now.
    assert!(options_file(dir.path()).contains("  max_compaction_bytes=0\n"));
    // Bad values are refused by name.
    let e = db
        .set_options(&[(
            "compaction_options_fifo",
            "{file_temperature_age_thresholds={age=1;temperature=kLukewarm}}",
        )])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = db
        .set_options(&[("compaction_options_fifo", "{file_temperature_age_thresholds={agee=1}}")])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(db);

    // The other way: opened without kv-ratio, max_compaction_bytes is sanitized to 25 target
    // files and stays so when set_options turns kv-ratio on.
    let dir2 = tempfile::tempdir().unwrap();
    let db = DB::open(&fifo(""), dir2.path()).unwrap();
    assert!(options_file(dir2.path()).contains("  max_compaction_bytes=1677721600\n"));
    db.set_options(&[("compaction_options_fifo", "{use_kv_ratio_compaction=true}")]).unwrap();
    let text = options_file(dir2.path());
    assert!(
        text.contains("use_kv_ratio_compaction=true;")
            && text.contains("  max_compaction_bytes=1677721600\n")
    );
    drop(db);

    let thresholds = "compaction_options_fifo={file_temperature_age_thresholds={age=10;temperature=kWarm}}";
    // Only FIFO, and only with one level.
    let e = DB::open(&fifo(&format!("num_levels=7;{thresholds}")), dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("is only supported when num_levels = 1"), "{e}");
    let mut o = Options::default();
    o.create_if_missing(true);
    let o = o.get_options_from_string(thresholds).unwrap();
    let e = DB::open(&o, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("only supports FIFO compaction"), "{e}");
}

#[test]
fn max_data_files_size_counts_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    // Tables of 50 keys whose 2000-byte values go to blob files: the tables are small, the
    // blob files about 100 KB each.
    let blobs = "enable_blob_files=true;min_blob_size=0;";
    let limit: u64 = 350_000;
    let o = fifo(&format!(
        "{blobs}compaction_options_fifo={{max_table_files_size=1073741824;max_data_files_size={limit}}}"
    ));
    let db = DB::open(&o, dir.path()).unwrap();
    for t in 0..10 {
        table(&db, t, 50, 2000);
        wait(&db);
        let sst = int_property(&db, "rocksdb.total-sst-files-size");
        let blob = int_property(&db, "rocksdb.total-blob-file-size");
        assert!(sst < 100_000, "tables alone stay far under the limit: {sst}");
        assert!(sst + blob <= limit, "after table {t}: {sst} + {blob} bytes over {limit}");
    }
    // Three tables (and their blob files) fit; the oldest went with their blobs.
    assert_eq!(db.get(format!("k{:07}", 0)).unwrap(), None);
    assert_eq!(db.get(format!("k{:07}", 5000)).unwrap(), None);
    assert_eq!(db.get(format!("k{:07}", 9049)).unwrap(), Some(vec![b'a' + 9; 2000]));
    assert!(db.live_files().unwrap().len() <= 3);
    drop(db);

    // Without it the same data is kept whole: only the tables count against 1 GiB.
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&fifo(blobs), dir.path()).unwrap();
    for t in 0..10 {
        table(&db, t, 50, 2000);
    }
    wait(&db);
    assert!(int_property(&db, "rocksdb.total-blob-file-size") > 1_000_000);
    assert_eq!(db.get(format!("k{:07}", 0)).unwrap(), Some(vec![b'a'; 2000]));

    // Set by set_options: the next pick drops down to the limit.
    db.set_options(&[("compaction_options_fifo", &format!("{{max_data_files_size={limit}}}"))]).unwrap();
    table(&db, 10, 50, 2000);
    wait(&db);
    let total =
        int_property(&db, "rocksdb.total-sst-files-size") + int_property(&db, "rocksdb.total-blob-file-size");
    assert!(total <= limit, "{total}");
    assert_eq!(db.get(format!("k{:07}", 0)).unwrap(), None);
}

/// The bytes of the live table files at temperature `t` (RocksDB's property).
fn at_temperature(db: &DB, t: u8) -> u64 {
    let v = db.property_value(format!("rocksdb.live-sst-files-size-at-temperature{t}")).unwrap().unwrap();
    v.parse().unwrap()
}

fn live_names(db: &DB) -> Vec<String> {
    let mut v: Vec<String> = db.live_files().unwrap().into_iter().map(|f| f.name).collect();
    v.sort();
    v
}

#[test]
fn tables_past_an_age_are_rewritten_to_its_temperature() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fifo(
        "num_levels=1;compaction_options_fifo={file_temperature_age_thresholds={{age=2;temperature=kWarm}}}",
    );
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    table(&db, 0, 50, 100);
    let before = live_names(&db);
    let size = int_property(&db, "rocksdb.total-sst-files-size");
    assert_eq!(at_temperature(&db, 0), size, "a flush writes kUnknown");
    // Nobody writes: the periodic check (a fifth of the 2-second age, at least 1 s) finds
    // the table once its newest data is 2 s old and rewrites it as kWarm.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while at_temperature(&db, 8) == 0 {
        assert!(std::time::Instant::now() < deadline, "the table never became warm");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    wait(&db);
    assert_eq!(at_temperature(&db, 0), 0);
    let after = live_names(&db);
    assert_eq!(after.len(), 1);
    assert_ne!(before, after, "rewritten to a new file");
    for i in 0..50 {
        assert_eq!(db.get(format!("k{:07}", i)).unwrap(), Some(vec![b'a'; 100]));
    }
    // A rewrite is not a trivial copy: RocksDB counts only the copy.
    assert_eq!(o.get_ticker_count(Ticker::FifoChangeTemperatureCompactions), 0);
    // The MANIFEST records the temperature: it holds after reopening.
    let warm = at_temperature(&db, 8);
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(at_temperature(&db, 8), warm);
    assert_eq!(live_names(&db), after);
}

#[test]
fn trivial_copy_moves_the_same_bytes_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fifo(
        "num_levels=1;compaction_options_fifo={allow_trivial_copy_when_change_temperature=true;\
         trivial_copy_buffer_size=8192;\
         file_temperature_age_thresholds={{age=2;temperature=kWarm}:{age=1000000;temperature=kCold}}}",
    );
    o.enable_statistics();
    let db = DB::open(&o, dir.path()).unwrap();
    table(&db, 0, 50, 100);
    let old = db.live_files().unwrap().remove(0);
    let old_bytes = std::fs::read(dir.path().join(old.name.trim_start_matches('/'))).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3200));
    // compact_range runs FIFO's pick (the periodic check, every second here, may be first).
    db.compact_range::<&[u8], &[u8]>(None, None);
    wait(&db);
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1);
    assert_ne!(files[0].name, old.name, "copied to a new file number");
    assert_eq!(at_temperature(&db, 8), old_bytes.len() as u64);
    // The copy holds the very bytes of the table it replaces, so the same keys and values.
    let new_bytes = std::fs::read(dir.path().join(files[0].name.trim_start_matches('/'))).unwrap();
    assert_eq!(new_bytes, old_bytes);
    assert!(!dir.path().join(old.name.trim_start_matches('/')).exists(), "the old file is gone");
    for i in 0..50 {
        assert_eq!(db.get(format!("k{:07}", i)).unwrap(), Some(vec![b'a'; 100]));
    }
    assert_eq!(
        (&files[0].start_key, &files[0].end_key, files[0].num_entries),
        (&old.start_key, &old.end_key, old.num_entries)
    );
    assert_eq!(o.get_ticker_count(Ticker::FifoChangeTemperatureCompactions), 1);
    // RocksDB's LOG line names the copy's buffer size.
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Started copying from: ") && log.contains("buffer_size=8192"), "{log}");
    // Nothing more to change: the table is warm, and not yet a million seconds old.
    db.compact_range::<&[u8], &[u8]>(None, None);
    wait(&db);
    assert_eq!(o.get_ticker_count(Ticker::FifoChangeTemperatureCompactions), 1);
    assert_eq!(live_names(&db), vec![files[0].name.clone()]);
}

/// RocksDB 11.8.1's trivial copy writes through the database's rate limiter at IO_LOW
/// (`BackgroundCompaction`'s `copy_files_compaction_io_options`): the limiter's write
/// tickers count the copy's bytes on top of the flush's.
#[test]
fn trivial_copy_asks_the_rate_limiter_for_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fifo(
        "num_levels=1;compaction_options_fifo={allow_trivial_copy_when_change_temperature=true;\
         trivial_copy_buffer_size=4096;\
         file_temperature_age_thresholds={{age=2;temperature=kWarm}}}",
    );
    o.enable_statistics();
    // 64 KiB/s in 10 ms refills: a burst of 655 bytes, so a copy of ~30 KB takes several
    // requests (the limiter's counts are asserted, not the time).
    o.set_ratelimiter(64 << 10, 10_000, 10);
    let db = DB::open(&o, dir.path()).unwrap();
    table(&db, 0, 200, 150);
    let size = int_property(&db, "rocksdb.total-sst-files-size");
    assert!(size > 20_000, "{size}");
    let bytes = Ticker::RateLimiterBytesWrite;
    assert_eq!(o.get_ticker_count(bytes), size, "the flush asked for its table's bytes");
    let requests = o.get_ticker_count(Ticker::RateLimiterRequestsWrite);
    std::thread::sleep(std::time::Duration::from_millis(3200));
    db.compact_range::<&[u8], &[u8]>(None, None);
    wait(&db);
    assert_eq!(o.get_ticker_count(Ticker::FifoChangeTemperatureCompactions), 1);
    assert_eq!(at_temperature(&db, 8), size);
    assert_eq!(o.get_ticker_count(bytes), 2 * size, "the copy asked for each byte it wrote");
    let copy_requests = o.get_ticker_count(Ticker::RateLimiterRequestsWrite) - requests;
    // Split into single bursts of 655 bytes: at least size / 655 requests.
    assert!(copy_requests >= size / 655, "{copy_requests} requests for {size} bytes");
    assert_eq!(o.get_ticker_count(Ticker::RateLimiterBytesRead), 0, "its reads ask nothing");
}

#[test]
fn kv_ratio_compaction_merges_tables_in_tiers_up_to_the_target() {
    let dir = tempfile::tempdir().unwrap();
    // max_compaction_bytes set: the target itself (20000 bytes; the next tier, 10000, is
    // under RocksDB's 10 KiB floor, so 20000 is the only boundary). Tables of about 6 KB.
    let o = fifo(
        "level0_file_num_compaction_trigger=2;max_compaction_bytes=20000;\
         compaction_options_fifo={allow_compaction=true;use_kv_ratio_compaction=true;\
         max_data_files_size=1073741824;max_table_files_size=1073741824}",
    );
    let db = DB::open(&o, dir.path()).unwrap();
    let mut one = 0;
    for t in 0..16 {
        table(&db, t, 50, 100);
        if t == 0 {
            one = int_property(&db, "rocksdb.total-sst-files-size");
        }
        wait(&db);
    }
    assert!((4000..10_000).contains(&one), "a table of {one} bytes");
    let mut sizes: Vec<(String, usize)> =
        db.live_files().unwrap().into_iter().map(|f| (f.name, f.size)).collect();
    sizes.sort();
    // Merged tables reach the boundary and stay under twice it plus a table; they are never
    // merged again (graduated). What is left under the boundary is the newest run, together
    // still short of it.
    let merged: Vec<usize> = sizes.iter().map(|s| s.1).filter(|&s| s >= 20_000).collect();
    let small: usize = sizes.iter().map(|s| s.1).filter(|&s| s < 20_000).sum();
    assert!(merged.len() >= 3, "{sizes:?}");
    assert!(merged.iter().all(|&s| s < 40_000 + one as usize), "{sizes:?}");
    assert!(small < 20_000, "{sizes:?}");
    for t in 0..16 {
        assert!(db.get(format!("k{:07}", t * 1000 + 49)).unwrap().is_some(), "table {t}");
    }
}
