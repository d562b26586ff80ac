//! A slow WAL fsync does not delay a flush's install: nothing under the DB mutex waits on
//! a WAL fsync (`db/wal_sync.rs`; RocksDB's `SyncWalImpl` fsyncs outside its locks).
//!
//! A file system holds two syncs at gates the test opens: the flush's table sync, then a
//! sync write's WAL fsync. With the WAL fsync still held, the table gate opens: the flush
//! must finish (its MANIFEST write and install take the DB mutex) while the fsync waits.
//! Built with debug assertions (`cargo test`), the file system layer also fails any sync
//! made with the DB mutex held (`shale_base::fs::db_mutex_check`).
//!
//! The second test holds the fsync of a `flush_wal(true)` (RocksDB's `SyncWAL`), which
//! syncs the current WAL outside the WAL lock (a sync handle of the file): a flush, whose
//! memtable switch takes that lock to roll the WAL, must still switch and install.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::Path;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use shale::fs::{default_fs, SyncHandle, WritableFile};
use shale::{Options, WriteOptions, DB};

/// Long enough for a loaded machine.
const DEADLINE: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gate {
    Table,
    Wal,
}

#[derive(Default)]
struct Gates {
    /// Per gate: armed (the next sync of such a file stops), a sync waits at it, open.
    state: Mutex<[(bool, bool, bool); 2]>,
    cv: Condvar,
}

impl Gates {
    fn idx(g: Gate) -> usize {
        g as usize
    }
    fn arm(&self, g: Gate) {
        self.state.lock().unwrap()[Self::idx(g)] = (true, false, false);
    }
    fn open(&self, g: Gate) {
        self.state.lock().unwrap()[Self::idx(g)].2 = true;
        self.cv.notify_all();
    }
    fn waiting(&self, g: Gate) -> bool {
        let s = self.state.lock().unwrap()[Self::idx(g)];
        s.1 && !s.2
    }
    /// Waits (with the deadline) until a sync stops at `g`.
    fn wait_reached(&self, g: Gate) {
        let end = Instant::now() + DEADLINE;
        let mut s = self.state.lock().unwrap();
        while !s[Self::idx(g)].1 {
            let left =
                end.checked_duration_since(Instant::now()).unwrap_or_else(|| panic!("no sync reached {g:?}"));
            s = self.cv.wait_timeout(s, left).unwrap().0;
        }
    }
    /// Called by a sync of a file of kind `g`: stops there if armed, until opened.
    fn pass(&self, g: Gate) {
        let mut s = self.state.lock().unwrap();
        let i = Self::idx(g);
        if !s[i].0 {
            return;
        }
        s[i].0 = false;
        s[i].1 = true;
        self.cv.notify_all();
        while !s[i].2 {
            s = self.cv.wait(s).unwrap();
        }
    }
}

struct GatedFile {
    base: Box<dyn WritableFile>,
    kind: Option<Gate>,
    gates: Arc<Gates>,
}

impl WritableFile for GatedFile {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        self.base.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.base.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        if let Some(g) = self.kind {
            self.gates.pass(g);
        }
        self.base.sync()
    }
    fn size(&self) -> u64 {
        self.base.size()
    }
    fn sync_handle(&self) -> Option<Arc<dyn SyncHandle>> {
        let base = self.base.sync_handle()?;
        Some(Arc::new(GatedSyncHandle { base, kind: self.kind, gates: self.gates.clone() }))
    }
}

/// A sync made through a file's sync handle (`flush_wal(true)`, `SyncWAL`) stops at the
/// file's gate too.
struct GatedSyncHandle {
    base: Arc<dyn SyncHandle>,
    kind: Option<Gate>,
    gates: Arc<Gates>,
}

impl SyncHandle for GatedSyncHandle {
    fn sync(&self) -> shale::Result<()> {
        if let Some(g) = self.kind {
            self.gates.pass(g);
        }
        self.base.sync()
    }
}

struct GatedFs {
    gates: Arc<Gates>,
}

impl util::FsHooks for GatedFs {
    fn writable(&self, path: &Path, f: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let kind = if name.ends_with(".sst") {
            Some(Gate::Table)
        } else if name.ends_with(".log") {
            Some(Gate::Wal)
        } else {
            None
        };
        Box::new(GatedFile { base: f, kind, gates: self.gates.clone() })
    }
}

#[test]
fn a_slow_wal_fsync_does_not_delay_a_flush_install() {
    let tmp = tempfile::tempdir().unwrap();
    let gates = Arc::new(Gates::default());
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(util::HookedFs::new(default_fs(), GatedFs { gates: gates.clone() }));
    let db = Arc::new(DB::open(&o, tmp.path()).unwrap());
    db.put(b"flushed", b"1").unwrap();

    // The flush: its memtable switch goes through, its table sync stops at the gate.
    gates.arm(Gate::Table);
    let (flush_tx, flush_rx) = mpsc::channel();
    let flusher = {
        let db = db.clone();
        std::thread::spawn(move || {
            let r = db.flush();
            let _ = flush_tx.send(r);
        })
    };
    gates.wait_reached(Gate::Table);

    // A sync write: its WAL fsync (under the write leader's WAL lock) stops at the gate.
    gates.arm(Gate::Wal);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut w = WriteOptions::default();
            w.set_sync(true);
            db.put_opt(b"synced", b"2", &w)
        })
    };
    gates.wait_reached(Gate::Wal);

    // The flush goes on: it must be installed while the WAL fsync still waits.
    gates.open(Gate::Table);
    let r = flush_rx.recv_timeout(DEADLINE);
    let still_syncing = gates.waiting(Gate::Wal);
    gates.open(Gate::Wal); // whatever happened, let the writer finish
    match r {
        Ok(r) => r.unwrap(),
        Err(_) => panic!("the flush did not finish within {DEADLINE:?} while a WAL fsync was held"),
    }
    assert!(still_syncing, "the WAL fsync was still held when the flush finished");
    writer.join().unwrap().unwrap();
    flusher.join().unwrap();

    assert_eq!(db.live_files().unwrap().len(), 1, "the flush installed its table");
    assert_eq!(db.get(b"flushed").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"synced").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn a_slow_sync_wal_does_not_delay_a_flush_switch_and_install() {
    let tmp = tempfile::tempdir().unwrap();
    let gates = Arc::new(Gates::default());
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(util::HookedFs::new(default_fs(), GatedFs { gates: gates.clone() }));
    let db = Arc::new(DB::open(&o, tmp.path()).unwrap());
    db.put(b"before", b"1").unwrap();

    // flush_wal(true): its fsync of the current WAL stops at the gate.
    gates.arm(Gate::Wal);
    let syncer = {
        let db = db.clone();
        std::thread::spawn(move || db.flush_wal(true))
    };
    gates.wait_reached(Gate::Wal);

    // A write and a flush meanwhile: the write appends to the WAL being synced, the flush
    // rolls the WAL (the WAL lock), writes its table and installs it.
    let (flush_tx, flush_rx) = mpsc::channel();
    let flusher = {
        let db = db.clone();
        std::thread::spawn(move || {
            let _ = flush_tx.send(db.put(b"during", b"2").and_then(|_| db.flush()));
        })
    };
    let r = flush_rx.recv_timeout(DEADLINE);
    let still_syncing = gates.waiting(Gate::Wal);
    gates.open(Gate::Wal); // whatever happened, let the sync finish
    match r {
        Ok(r) => r.unwrap(),
        Err(_) => {
            panic!("the flush did not finish within {DEADLINE:?} while a flush_wal(true) fsync was held")
        }
    }
    assert!(still_syncing, "the WAL fsync was still held when the flush finished");
    syncer.join().unwrap().unwrap();
    flusher.join().unwrap();

    assert_eq!(db.live_files().unwrap().len(), 1, "the flush installed its table");
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"during").unwrap().as_deref(), Some(&b"2"[..]));
    // The WAL synced meanwhile was closed by the flush's switch: a later sync still works.
    db.flush_wal(true).unwrap();
}
