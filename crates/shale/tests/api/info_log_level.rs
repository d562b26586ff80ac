//! `info_log_level` and `set_info_logger`: the LOG keeps only lines at the level set and
//! above (those above INFO with RocksDB's `[ERROR] ` prefix); a user's logger gets the lines
//! (level and text) instead of a LOG file, filtered by its own level. The DB options are
//! dumped at open as RocksDB's `Options.<name>: <value>` lines.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::{Arc, Mutex};

use shale::fs::{FaultInjectionFs, FaultMode, FileSystem, MemFileSystem, OpKind};
use shale::{InfoLogger, LogLevel, Options, DB};

/// Opens a database on `fs`, writes, then fails a flush (no space), and closes.
fn run_with_failed_flush(o: &mut Options, fs: &Arc<FaultInjectionFs>) {
    o.create_if_missing(true);
    o.set_file_system(fs.clone());
    o.set_max_open_files(123);
    o.set_max_bgerror_resume_count(0);
    let db = DB::open(o, "/db").unwrap();
    db.put("k", "v").unwrap();
    db.flush().unwrap();
    db.put("k2", "v").unwrap();
    fs.fail_matching(OpKind::Write, ".sst", FaultMode::Persistent, libc::ENOSPC);
    assert!(db.flush().is_err());
    fs.clear_faults();
    drop(db);
}

fn log_text(fs: &dyn FileSystem) -> String {
    String::from_utf8(shale::fs::read_file(fs, Path::new("/db/LOG")).unwrap()).unwrap()
}

#[test]
fn info_keeps_everything_and_dumps_the_db_options() {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    run_with_failed_flush(&mut Options::default(), &fs);
    let log = log_text(&*fs);
    assert!(log.contains("                         Options.max_open_files: 123\n"), "{log}");
    assert!(log.contains("Options.create_if_missing: 1\n"), "{log}");
    assert!(log.contains("EVENT_LOG_v1"), "{log}");
    assert!(log.contains("Recovered to sequence"), "{log}");
    assert!(log.lines().any(|l| l.contains(" [ERROR] ") && l.contains("failed")), "{log}");
}

#[test]
fn warn_keeps_only_warnings_and_errors() {
    for level in [LogLevel::Warn, LogLevel::Error] {
        let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
        let mut o = Options::default();
        o.set_log_level(level);
        run_with_failed_flush(&mut o, &fs);
        let log = log_text(&*fs);
        assert!(!log.is_empty(), "the error line is kept at {level:?}");
        for l in log.lines() {
            assert!(l.contains(" [ERROR] ") || l.contains(" [WARN] "), "a line below {level:?}: {l}");
        }
        let text = shale::fs::read_file(&*fs, Path::new(&latest_options(&*fs))).unwrap();
        let name = if level == LogLevel::Warn { "WARN_LEVEL" } else { "ERROR_LEVEL" };
        assert!(String::from_utf8(text).unwrap().contains(&format!("info_log_level={name}")));
    }
    // FATAL: Shale writes no fatal line, so the LOG stays empty.
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.set_log_level(LogLevel::Fatal);
    run_with_failed_flush(&mut o, &fs);
    assert_eq!(log_text(&*fs), "");
}

fn latest_options(fs: &dyn FileSystem) -> String {
    let mut v: Vec<String> =
        fs.children(Path::new("/db")).unwrap().into_iter().filter(|n| n.starts_with("OPTIONS-")).collect();
    v.sort();
    format!("/db/{}", v.last().unwrap())
}

#[test]
fn a_callback_logger_gets_the_lines_instead_of_a_log_file() {
    let got: Arc<Mutex<Vec<(LogLevel, String)>>> = Arc::default();
    let sink = got.clone();
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.set_info_logger(InfoLogger::new_callback_logger(LogLevel::Info, move |l, t| {
        sink.lock().unwrap().push((l, t.to_string()))
    }));
    run_with_failed_flush(&mut o, &fs);
    assert!(!fs.file_exists(Path::new("/db/LOG")), "no LOG file with a logger");
    let got = got.lock().unwrap();
    assert!(got.iter().any(|(l, t)| *l == LogLevel::Info && t.ends_with("Options.max_open_files: 123")));
    assert!(got.iter().any(|(l, t)| *l == LogLevel::Info && t.starts_with("EVENT_LOG_v1")));
    // The level goes to the callback, not a prefix in the text.
    assert!(got.iter().any(|(l, t)| *l == LogLevel::Error && t.contains("failed") && !t.contains("[ERROR]")));

    // A logger at ERROR gets only the error.
    let got: Arc<Mutex<Vec<(LogLevel, String)>>> = Arc::default();
    let sink = got.clone();
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = Options::default();
    o.set_info_logger(InfoLogger::new_callback_logger(LogLevel::Error, move |l, t| {
        sink.lock().unwrap().push((l, t.to_string()))
    }));
    run_with_failed_flush(&mut o, &fs);
    let got = got.lock().unwrap();
    assert!(!got.is_empty());
    assert!(got.iter().all(|(l, _)| *l == LogLevel::Error), "{got:?}");
}
