//! `dump_malloc_stats` with `stats_dump_period_sec`: the periodic stats dump into the info
//! LOG is followed by RocksDB's `------- Malloc STATS -------` heading and the system
//! allocator's figures (glibc `mallinfo2` on Linux); the OPTIONS file records the option.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::time::{Duration, Instant};

use shale::{Options, DB};

#[test]
fn malloc_stats_follow_the_periodic_stats_dump() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_stats_dump_period_sec(1);
    o.set_dump_malloc_stats(true);
    let db = DB::open(&o, tmp.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    let log_path = tmp.path().join("LOG");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut log = String::new();
    while Instant::now() < deadline {
        log = std::fs::read_to_string(&log_path).unwrap();
        if log.contains("------- DUMPING STATS -------") && log.contains("keepcost") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(db);
    assert!(log.contains("------- DUMPING STATS -------"), "{log}");
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        let at = log.find("------- Malloc STATS -------").unwrap_or_else(|| panic!("{log}"));
        assert!(at > log.find("------- DUMPING STATS -------").unwrap(), "{log}");
        let rest = &log[at..];
        for field in ["arena: ", "ordblks: ", "hblkhd: ", "uordblks: ", "fordblks: ", "keepcost: "] {
            assert!(rest.contains(field), "{field} in {rest}");
        }
    } else {
        assert!(!log.contains("------- Malloc STATS -------"), "{log}");
    }
    let options = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("OPTIONS-"))
        .unwrap();
    let text = std::fs::read_to_string(tmp.path().join(options)).unwrap();
    assert!(text.contains("dump_malloc_stats=true\n"), "{text}");
}

/// Without the option the dump has no malloc section.
#[test]
fn no_malloc_stats_without_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_stats_dump_period_sec(1);
    let db = DB::open(&o, tmp.path()).unwrap();
    // Wait for the first dump (due after a second; later on a loaded machine), then close:
    // close joins the dump thread, so the dump is whole in the LOG read below.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(tmp.path().join("LOG")).unwrap().contains("------- DUMPING STATS -------")
    {
        assert!(Instant::now() < deadline, "no stats dump in 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(db);
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    assert!(log.contains("------- DUMPING STATS -------"), "{log}");
    assert!(!log.contains("------- Malloc STATS -------"), "{log}");
}
