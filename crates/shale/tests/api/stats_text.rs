//! `rocksdb.cfstats`, `rocksdb.dbstats`, `rocksdb.stats`, `rocksdb.levelstats` and
//! `rocksdb.sstables` in RocksDB 11.8.1's layout, with the figures of the flushes and
//! compactions that ran; `stats_dump_period_sec` writes them into the info LOG; the
//! properties that were fixed values (`oldest-snapshot-time`, `base-level`) are real.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shale::{Options, DB};

/// RocksDB 11.8.1's compaction-table header (from its db_bench `stats` output).
const HEADER: &str = "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) WPreComp(GB) Wnew(GB) \
    Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)";

fn row<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("{name} in {text}"));
    line.split_whitespace().collect()
}

#[test]
fn cfstats_and_dbstats_report_flushes_and_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_level_compaction_dynamic_level_bytes(false);
    let db = DB::open(&o, tmp.path()).unwrap();
    for round in 0..3 {
        for i in 0..500 {
            db.put(format!("key{i:04}"), format!("value{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let cf = db.property_value("rocksdb.cfstats").unwrap().unwrap();
    let lines: Vec<&str> = cf.lines().collect();
    assert_eq!(lines[1], "** Compaction Stats [default] **", "{cf}");
    assert_eq!(lines[2], HEADER);
    assert_eq!(lines[3], "-".repeat(HEADER.len() + 1));
    // Three flushes of 500 keys into level 0: Comp(cnt) 3, KeyIn 1500, nothing dropped.
    // Columns: name, files, size (2), score, Read, Rn, Rnp1, Write, WPreComp, Wnew, Moved,
    // W-Amp, Rd, Wr, Comp(sec), CompMergeCPU, Comp(cnt) [17], Avg, KeyIn [19], KeyDrop [20].
    let l0 = row(&cf, "L0");
    assert_eq!(l0[1], "0/0", "{cf}");
    assert_eq!((l0[17], l0[19], l0[20]), ("3", "1500", "0"), "{cf}");
    // The compaction out of level 0 read the 1500 entries and dropped 1000 older versions
    // (a later move of its output reads and drops nothing).
    let sum = row(&cf, "Sum");
    assert_eq!(sum[1], "1/0", "{cf}");
    assert_eq!((sum[19], sum[20]), ("3000", "1000"), "{cf}");
    assert!(cf.contains("\n** Compaction Stats [default] **\nPriority    Files   Size "), "{cf}");
    assert!(row(&cf, "Low")[17] != "0" && row(&cf, "High")[17] == "3", "{cf}");
    assert!(cf.contains("\nBlob file count: 0, total size: 0.0 GB, garbage size: 0.0 GB, space amp: 0.0\n\nUptime(secs): "), "{cf}");
    assert!(cf.contains("\nFlush(GB): cumulative 0.000, interval 0.000\n"), "{cf}");
    assert!(
        cf.contains("\nAddFile(Keys): cumulative 0, interval 0\nCumulative compaction: 0.00 GB write, "),
        "{cf}"
    );
    assert!(cf.contains("\nEstimated pending compaction bytes: 0\nWrite Stall (count): cf-l0-file-count-limit-delays-with-ongoing-compaction: 0, "), "{cf}");
    assert!(cf.ends_with("\n** File Read Latency Histogram By Level [default] **\n"), "{cf}");

    let dbs = db.property_value("rocksdb.dbstats").unwrap().unwrap();
    assert!(dbs.starts_with("\n** DB Stats **\nUptime(secs): "), "{dbs}");
    assert!(dbs.contains("\nCumulative writes: 1500 writes, 1500 keys, 1500 commit groups, 1.0 writes per commit group, ingest: 0.00 GB, "), "{dbs}");
    assert!(
        dbs.contains("\nCumulative WAL: 1500 writes, 0 syncs, 1500.00 writes per sync, written: 0.00 GB, "),
        "{dbs}"
    );
    assert!(dbs.contains("\nCumulative stall: 00:00:0.000 H:M:S, 0.0 percent\n"), "{dbs}");
    assert!(dbs.ends_with("\nWrite Stall (count): write-buffer-manager-limit-stops: 0\n"), "{dbs}");
    // The next dbstats' interval starts where this one ended (RocksDB's rule).
    db.put(b"one", b"more").unwrap();
    let again = db.property_value("rocksdb.dbstats").unwrap().unwrap();
    assert!(again.contains("\nInterval writes: 1 writes, 1 keys, 1 commit groups, "), "{again}");

    let all = db.property_value("rocksdb.stats").unwrap().unwrap();
    assert!(
        all.starts_with("\n** Compaction Stats [default] **\n") && all.contains("\n** DB Stats **\n"),
        "{all}"
    );

    let levels = db.property_value("rocksdb.levelstats").unwrap().unwrap();
    assert!(
        levels.starts_with("Level Files Size(MB)\n--------------------\n  0        0        0\n  1 "),
        "{levels}"
    );
    assert_eq!(levels.lines().count(), 2 + 7, "{levels}");
    let sst = db.property_value("rocksdb.sstables").unwrap().unwrap();
    assert!(sst.starts_with("--- level 0 --- version# "), "{sst}");
    let table = sst.lines().find(|l| l.starts_with(' ')).unwrap();
    // ` number:size[smallest_seqno .. largest_seqno]['hex' seq:N, type:T .. ...](reads)`
    assert!(table.contains("['6B657930303030' seq:") && table.contains(" .. '6B657930343939' seq:"), "{sst}");
    assert!(table.ends_with("](0)"), "{sst}");
}

#[test]
fn oldest_snapshot_time_and_base_level_are_real() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_level_compaction_dynamic_level_bytes(true);
    let db = DB::open(&o, tmp.path()).unwrap();
    assert_eq!(db.property_int_value("rocksdb.oldest-snapshot-time").unwrap(), Some(0));
    let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let s1 = db.snapshot();
    db.put(b"k", b"v").unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    let s2 = db.snapshot();
    let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let t = db.property_int_value("rocksdb.oldest-snapshot-time").unwrap().unwrap();
    assert!(before <= t && t < after, "{before} <= {t} < {after}");
    drop(s1);
    let t2 = db.property_int_value("rocksdb.oldest-snapshot-time").unwrap().unwrap();
    assert!(t2 > t && t2 <= after, "the second snapshot's time: {t2}");
    drop(s2);
    assert_eq!(db.property_int_value("rocksdb.oldest-snapshot-time").unwrap(), Some(0));
    // With level_compaction_dynamic_level_bytes an empty LSM's base level is the last one.
    assert_eq!(db.property_int_value("rocksdb.base-level").unwrap(), Some(6));
    drop(db);
    let tmp2 = tempfile::tempdir().unwrap();
    o.set_level_compaction_dynamic_level_bytes(false);
    let db = DB::open(&o, tmp2.path()).unwrap();
    assert_eq!(db.property_int_value("rocksdb.base-level").unwrap(), Some(1));
}

#[test]
fn stats_dump_period_writes_the_stats_into_the_info_log() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    o.set_stats_dump_period_sec(1);
    let db = DB::open(&o, tmp.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    // Wait for a dump begun after the put (one a second; later on a loaded machine), then
    // close: close joins the dump thread, so the dump is whole in the LOG read below.
    let dumps = || {
        std::fs::read_to_string(tmp.path().join("LOG"))
            .unwrap()
            .matches("------- DUMPING STATS -------")
            .count()
    };
    let before = dumps();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while dumps() <= before {
        assert!(std::time::Instant::now() < deadline, "no stats dump in 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(db);
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    let dumps = log.matches("------- DUMPING STATS -------").count();
    assert!(dumps >= 1, "{log}");
    assert!(log.contains("** DB Stats **") && log.contains("** Compaction Stats [default] **"), "{log}");
    assert!(log.contains("Cumulative writes: 1 writes, 1 keys, 1 commit groups"), "{log}");
    assert!(log.contains("STATISTICS:\n rocksdb.block.cache.miss COUNT : "), "{log}");
    let options = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("OPTIONS-"))
        .unwrap();
    let text = std::fs::read_to_string(tmp.path().join(options)).unwrap();
    assert!(text.contains("stats_dump_period_sec=1\n"), "{text}");
}
