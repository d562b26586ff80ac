//! No LOG line is written while the DB mutex is held: lines and events that arise under it
//! (a MemPurge, a flush, a compaction, ReFitLevel, DeleteFilesInRange) are buffered and
//! written without it.
//!
//! When they reach the LOG is not promised relative to the return of the call that waited for
//! the job: RocksDB's `BackgroundCallFlush` writes its `LogBuffer` after the flush is
//! installed, and a `Flush()` waiter woken by any `bg_cv_` signal returns as soon as the
//! memtables are gone (and its posix logger flushes the file every few seconds). So the test
//! waits (with a deadline) for each job's lines to appear instead of reading the LOG once.
//!
//! How it is seen: the LOG is a file of a wrapping file system; when one of the watched
//! lines is appended, the append asks another thread to read a property that takes the DB
//! mutex (`rocksdb.num-immutable-mem-table`) and waits for it. If the appending thread
//! holds the mutex, that read cannot finish: after 60 seconds the line is recorded as
//! written under the mutex and the append goes on (which releases the reader). A line
//! written without the mutex waits only for one property read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use shale::fs::{default_fs, WritableFile};
use shale::{CompactOptions, Options, DB};

use crate::util;

const WATCHED: &[&str] = &[
    "Mempurge of",
    "Flushed memtable",
    "] Compacted ",
    "ReFitLevel moved",
    "delete_file_in_range removed",
    "\"event\": \"flush_finished\"",
    "\"event\": \"compaction_finished\"",
];

#[derive(Default)]
struct Probe {
    db: Mutex<Option<Arc<DB>>>,
    /// Watched lines appended, and those appended while the DB mutex was held.
    seen: Mutex<Vec<String>>,
    under_mutex: Mutex<Vec<String>>,
}

impl Probe {
    fn check(&self, line: &str) {
        if !WATCHED.iter().any(|w| line.contains(w)) {
            return;
        }
        self.seen.lock().unwrap().push(line.to_string());
        let Some(db) = self.db.lock().unwrap().clone() else { return };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = db.property_int_value("rocksdb.num-immutable-mem-table");
            drop(db);
            let _ = tx.send(());
        });
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            self.under_mutex.lock().unwrap().push(line.to_string());
        }
    }
}

struct ProbedLog {
    base: Box<dyn WritableFile>,
    probe: Arc<Probe>,
}

impl WritableFile for ProbedLog {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        self.probe.check(&String::from_utf8_lossy(data));
        self.base.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.base.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.base.sync()
    }
    fn size(&self) -> u64 {
        self.base.size()
    }
}

struct ProbedFs {
    probe: Arc<Probe>,
}

impl util::FsHooks for ProbedFs {
    fn writable(&self, path: &Path, f: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        if path.file_name().is_some_and(|n| n == "LOG") {
            return Box::new(ProbedLog { base: f, probe: self.probe.clone() });
        }
        f
    }
}

fn log_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("LOG")).unwrap()
}

/// Waits until the LOG holds `needle`. A line written under the DB mutex stalls its append
/// for 60 s (see above) and is reported at the end, so the deadline is longer than that.
fn wait_for_log_line(dir: &Path, needle: &str, what: &str) {
    util::wait_until(180, what, || log_text(dir).contains(needle));
}

#[test]
fn log_lines_are_written_without_the_db_mutex() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let probe = Arc::new(Probe::default());
    let mut o = Options::default();
    o.create_if_missing(true);
    // Nothing compacts unless asked, so the tables listed stay.
    o.set_disable_auto_compactions(true);
    o.set_write_buffer_size(256 << 10);
    o.set_max_write_buffer_number(4);
    o.set_experimental_mempurge_threshold(1.0);
    o.set_file_system(util::HookedFs::new(default_fs(), ProbedFs { probe: probe.clone() }));
    let db = Arc::new(DB::open(&o, &dir).unwrap());
    *probe.db.lock().unwrap() = Some(db.clone());

    // About 12 write buffers of overwrites of a few keys: purged in memory (the writes
    // stall on 4 memtables until the purges make room).
    for round in 0..3000u32 {
        db.put(b"key00", format!("round {round} {}", "x".repeat(10))).unwrap();
        db.put(b"old", format!("overwritten {round}").repeat(20)).unwrap();
    }
    db.flush().unwrap();
    wait_for_log_line(&dir, "Flushed memtable", "the flush's lines in the LOG");

    for i in 0..500u32 {
        db.put(format!("k{i:04}"), b"v").unwrap();
    }
    db.flush().unwrap();
    let mut co = CompactOptions::default();
    co.set_change_level(true);
    co.set_target_level(1);
    db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
    wait_for_log_line(&dir, "] Compacted ", "the compaction's lines in the LOG");
    wait_for_log_line(&dir, "\"event\": \"compaction_finished\"", "the compaction_finished event in the LOG");

    db.delete_file_in_range(b"a".as_slice(), b"z".as_slice()).unwrap();
    assert!(db.live_files().unwrap().is_empty(), "the tables were deleted");

    *probe.db.lock().unwrap() = None;
    drop(db);
    let seen = probe.seen.lock().unwrap().clone();
    for w in WATCHED {
        assert!(seen.iter().any(|l| l.contains(w)), "no LOG line with {w:?} was written");
    }
    let under = probe.under_mutex.lock().unwrap().clone();
    assert!(under.is_empty(), "LOG lines written under the DB mutex:\n{}", under.join(""));
}
