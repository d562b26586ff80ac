//! A fault-injecting [`FileSystem`] wrapping another (usually [`super::MemFileSystem`]), in
//! the manner of RocksDB's FaultInjectionTestFS: it models what a power loss forgets, and
//! fails chosen operations with EIO or ENOSPC.
//!
//! ```text
//! tracked per file   (path -> FileState)  bytes appended so far, bytes durable (last sync)
//! tracked per name   (path -> Before)     the durable state of a directory entry before its
//!                                         first change since its directory's last sync:
//!                                         absent, or present with (contents, synced length)
//! ```
//! `crash(drop_unsynced)` turns that into the post-crash state: each file loses what was
//! appended after its last sync (when `drop_unsynced`), then every name changed since its
//! directory's last sync goes back to its Before state (created files vanish, removed and
//! renamed-away ones reappear, renamed-over targets regain their old contents). Handles
//! opened before the crash fail with an IO error from then on. Directory creation is not
//! modelled (directories are durable at once).
//!
//! Faults: the Nth operation of one kind (counted from when the fault is set) fails once or
//! persistently with a chosen OS code; or the next (or every) operation of one kind on a
//! file whose name ends with a given suffix (`fail_matching`, e.g. only table writes); or, for crash sweeps, the Nth operation among a set
//! of kinds "crashes": it and every later operation fail until `crash()` or `clear_faults()`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{read_file, FileLock, FileSystem, FileSystemRef, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};
use crate::poison;

/// The kinds of operation that can be counted and failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `WritableFile::append`.
    Write,
    /// `WritableFile::sync`.
    Sync,
    /// `FileSystem::sync_dir`.
    DirSync,
    Rename,
    /// `new_writable_file`.
    Create,
    /// Opening a file for reading, and every read call.
    Read,
    /// `remove_file` and `remove_dir`.
    Remove,
    /// `WritableFile::range_sync` (write-back asked for: `bytes_per_sync`, `wal_bytes_per_sync`).
    RangeSync,
    /// `WritableFile::allocate` (space preallocated: `allow_fallocate`).
    Allocate,
    /// `WritableFile::range_sync_strict` (write-back under `strict_bytes_per_sync`).
    RangeSyncStrict,
}

impl OpKind {
    pub const ALL: [OpKind; 10] = [
        OpKind::Write,
        OpKind::Sync,
        OpKind::DirSync,
        OpKind::Rename,
        OpKind::Create,
        OpKind::Read,
        OpKind::Remove,
        OpKind::RangeSync,
        OpKind::Allocate,
        OpKind::RangeSyncStrict,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// Whether an injected fault fires once or on every matching operation from then on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    Once,
    Persistent,
}

#[derive(Debug, Clone, Copy)]
struct Fault {
    kind: OpKind,
    /// Counter value of `kind` at which the fault fires.
    at: u64,
    mode: FaultMode,
    code: i32,
    /// Only operations on paths ending with this fail (and `at` is the first to consider).
    suffix: Option<&'static str>,
}

#[derive(Default)]
struct FileState {
    size: u64,
    synced: u64,
    /// Bytes handed to the inner file by the last `flush` (what a sync handle covers).
    flushed: u64,
}

type Tracked = Arc<Mutex<FileState>>;

#[derive(Default)]
struct Control {
    fault: Option<Fault>,
    fired: u64,
    /// (kinds, operations of those kinds still to go before the crash point).
    crash_point: Option<(Vec<OpKind>, u64)>,
    stopped: bool,
    files: BTreeMap<PathBuf, Tracked>,
    /// Durable state of a name before its first unsynced directory change.
    before: BTreeMap<PathBuf, Option<(Vec<u8>, u64)>>,
}

struct Shared {
    base: FileSystemRef,
    counters: [AtomicU64; 10],
    epoch: AtomicU64,
    ctl: Mutex<Control>,
}

/// The fault-injecting file system. Pass `Arc<FaultInjectionFs>` to
/// `Options::set_file_system` and keep a clone to drive faults and crashes.
pub struct FaultInjectionFs {
    shared: Arc<Shared>,
}

// A test tool: a poisoned lock here panics (`poison::or_panic`), so the test fails on the
// first panic instead of simulating crashes from a state a panic left half changed.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    poison::or_panic(poison::lock(m, "fault-injecting file system"))
}

fn stopped_error(what: &Path) -> Error {
    Error::io_code(format!("simulated crash: file system stopped: {}", what.display()), libc::EIO)
}

impl Shared {
    /// Counts an operation of `kind` and decides whether it fails.
    fn check(&self, kind: OpKind, what: &Path) -> Result<()> {
        let mut ctl = lock(&self.ctl);
        if ctl.stopped {
            return Err(stopped_error(what));
        }
        let n = self.counters[kind.index()].fetch_add(1, Ordering::SeqCst) + 1;
        if let Some((kinds, left)) = &mut ctl.crash_point {
            if kinds.contains(&kind) {
                *left -= 1;
                if *left == 0 {
                    ctl.crash_point = None;
                    ctl.stopped = true;
                    return Err(stopped_error(what));
                }
            }
        }
        if let Some(f) = ctl.fault {
            let fires = match f.suffix {
                None => n == f.at || (f.mode == FaultMode::Persistent && n > f.at),
                Some(s) => n >= f.at && what.to_string_lossy().ends_with(s),
            };
            if f.kind == kind && fires {
                if f.suffix.is_some() && f.mode == FaultMode::Once {
                    ctl.fault = None;
                }
                ctl.fired += 1;
                let reason =
                    if f.code == libc::ENOSPC { "No space left on device" } else { "Input/output error" };
                return Err(Error::io_code(
                    format!("injected {kind:?} fault (#{n}): {}: {reason}", what.display()),
                    f.code,
                ));
            }
        }
        Ok(())
    }

    fn check_stopped(&self, what: &Path) -> Result<()> {
        if lock(&self.ctl).stopped {
            Err(stopped_error(what))
        } else {
            Ok(())
        }
    }

    /// Remembers the durable state of `path` before its directory entry changes.
    fn record_before(&self, ctl: &mut Control, path: &Path) {
        if ctl.before.contains_key(path) {
            return;
        }
        let state = match read_file(&*self.base, path) {
            Ok(data) => {
                let synced = ctl.files.get(path).map_or(data.len() as u64, |f| lock(f).synced);
                Some((data, synced))
            }
            Err(_) if !self.base.file_exists(path) => None,
            Err(_) => return, // a directory, or unreadable: not modelled
        };
        ctl.before.insert(path.to_path_buf(), state);
    }

    fn rewrite(&self, path: &Path, data: &[u8]) {
        if let Ok(mut f) = self.base.new_writable_file(path) {
            let _ = f.append(data).and_then(|_| f.sync());
        }
    }
}

impl FaultInjectionFs {
    pub fn new(base: FileSystemRef) -> FaultInjectionFs {
        FaultInjectionFs {
            shared: Arc::new(Shared {
                base,
                counters: Default::default(),
                epoch: AtomicU64::new(0),
                ctl: Mutex::new(Control::default()),
            }),
        }
    }

    /// The wrapped file system.
    pub fn base(&self) -> &FileSystemRef {
        &self.shared.base
    }

    /// Operations of `kind` attempted so far (failed ones included).
    pub fn count(&self, kind: OpKind) -> u64 {
        self.shared.counters[kind.index()].load(Ordering::SeqCst)
    }

    /// Sum of `count` over `kinds`.
    pub fn count_of(&self, kinds: &[OpKind]) -> u64 {
        kinds.iter().map(|k| self.count(*k)).sum()
    }

    /// Fails the `n`-th (1-based, counted from now) operation of `kind` with OS error `code`
    /// (`libc::EIO`, `libc::ENOSPC`); with `Persistent`, every later one of that kind too.
    /// Replaces any earlier fault.
    pub fn fail_nth(&self, kind: OpKind, n: u64, mode: FaultMode, code: i32) {
        let at = self.count(kind) + n.max(1);
        lock(&self.shared.ctl).fault = Some(Fault { kind, at, mode, code, suffix: None });
    }

    /// Fails the next (`Once`) or every (`Persistent`) operation of `kind` on a file whose
    /// path ends with `suffix` (".sst": table files only) with OS error `code`. Replaces any
    /// earlier fault.
    pub fn fail_matching(&self, kind: OpKind, suffix: &'static str, mode: FaultMode, code: i32) {
        let at = self.count(kind) + 1;
        lock(&self.shared.ctl).fault = Some(Fault { kind, at, mode, code, suffix: Some(suffix) });
    }

    /// How many operations the injected fault has failed.
    pub fn faults_fired(&self) -> u64 {
        lock(&self.shared.ctl).fired
    }

    /// At the `n`-th (1-based, counted from now) operation whose kind is in `kinds`, stop:
    /// that operation and every later one fail with EIO until `crash()` or `clear_faults()`.
    pub fn crash_at(&self, kinds: &[OpKind], n: u64) {
        lock(&self.shared.ctl).crash_point = Some((kinds.to_vec(), n.max(1)));
    }

    /// Stops the file system now, as a crash point would.
    pub fn stop(&self) {
        lock(&self.shared.ctl).stopped = true;
    }

    /// True once a crash point has been reached (or `stop` called).
    pub fn is_stopped(&self) -> bool {
        lock(&self.shared.ctl).stopped
    }

    /// Removes the injected fault and crash point and lets operations run again.
    pub fn clear_faults(&self) {
        let mut ctl = lock(&self.shared.ctl);
        ctl.fault = None;
        ctl.crash_point = None;
        ctl.stopped = false;
    }

    /// Simulates power loss (see the module comment). Afterwards the file system runs again
    /// (crash point and stop cleared; an injected fault stays) and everything on it counts as
    /// durable. Handles opened before fail from now on. Drop the DB first: its LOCK is only
    /// released when the lock handle is dropped.
    pub fn crash(&self, drop_unsynced: bool) {
        let s = &self.shared;
        let mut ctl = lock(&s.ctl);
        s.epoch.fetch_add(1, Ordering::SeqCst);
        ctl.stopped = false;
        ctl.crash_point = None;
        if drop_unsynced {
            for (path, f) in &ctl.files {
                let synced = lock(f).synced as usize;
                if let Ok(data) = read_file(&*s.base, path) {
                    if data.len() > synced {
                        s.rewrite(path, &data[..synced]);
                    }
                }
            }
        }
        for (path, before) in std::mem::take(&mut ctl.before) {
            match before {
                None => {
                    let _ = s.base.remove_file(&path);
                }
                Some((data, synced)) => {
                    let keep = if drop_unsynced { (synced as usize).min(data.len()) } else { data.len() };
                    s.rewrite(&path, &data[..keep]);
                }
            }
        }
        ctl.files.clear();
    }
}

/// A handle belongs to one "process lifetime" (epoch); after a crash it only fails.
struct Handle {
    shared: Arc<Shared>,
    epoch: u64,
    path: PathBuf,
}

impl Handle {
    fn new(shared: &Arc<Shared>, path: &Path) -> Handle {
        Handle {
            shared: shared.clone(),
            epoch: shared.epoch.load(Ordering::SeqCst),
            path: path.to_path_buf(),
        }
    }

    fn check(&self, kind: Option<OpKind>) -> Result<()> {
        if self.shared.epoch.load(Ordering::SeqCst) != self.epoch {
            return Err(Error::io_code(
                format!("file handle from before a simulated crash: {}", self.path.display()),
                libc::EIO,
            ));
        }
        match kind {
            Some(k) => self.shared.check(k, &self.path),
            None => self.shared.check_stopped(&self.path),
        }
    }
}

/// [`WritableFile::sync_handle`] of the fault-injecting file system.
struct FaultSyncHandle {
    h: Handle,
    inner: Arc<dyn super::SyncHandle>,
    state: Tracked,
}

impl super::SyncHandle for FaultSyncHandle {
    fn sync(&self) -> Result<()> {
        super::db_mutex_check::assert_not_held(std::path::Path::new(
            "a file of the fault-injecting file system",
        ));
        let flushed = lock(&self.state).flushed;
        self.h.check(Some(OpKind::Sync))?;
        self.inner.sync()?;
        let mut s = lock(&self.state);
        s.synced = s.synced.max(flushed);
        Ok(())
    }
}

struct FaultWritableFile {
    h: Handle,
    inner: Box<dyn WritableFile>,
    state: Tracked,
}

impl WritableFile for FaultWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.h.check(Some(OpKind::Write))?;
        self.inner.append(data)?;
        lock(&self.state).size += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.h.check(None)?;
        self.inner.flush()?;
        let mut s = lock(&self.state);
        s.flushed = s.size;
        Ok(())
    }

    /// The inner file's handle, with the same fault checks as `sync`; a sync through it
    /// makes durable (survives `crash(true)`) what was flushed when it started.
    fn sync_handle(&self) -> Option<Arc<dyn super::SyncHandle>> {
        let inner = self.inner.sync_handle()?;
        let h = Handle { shared: self.h.shared.clone(), epoch: self.h.epoch, path: self.h.path.clone() };
        Some(Arc::new(FaultSyncHandle { h, inner, state: self.state.clone() }))
    }

    fn sync(&mut self) -> Result<()> {
        super::db_mutex_check::assert_not_held(std::path::Path::new(
            "a file of the fault-injecting file system",
        ));
        self.h.check(Some(OpKind::Sync))?;
        self.inner.sync()?;
        let mut s = lock(&self.state);
        s.synced = s.size;
        Ok(())
    }

    fn size(&self) -> u64 {
        self.inner.size()
    }

    /// Write-back of a range makes nothing durable here: unsynced bytes stay lost at a crash.
    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        self.h.check(Some(OpKind::RangeSync))?;
        self.inner.range_sync(offset, len)
    }

    /// As `range_sync`, counted apart.
    fn range_sync_strict(&mut self, end: u64) -> Result<()> {
        self.h.check(Some(OpKind::RangeSyncStrict))?;
        self.inner.range_sync_strict(end)
    }

    /// Preallocated space holds no data: nothing about a crash changes. Counted when space
    /// is reserved (the fallocate call).
    fn allocate(&mut self, offset: u64, len: u64, reserve: bool) -> Result<()> {
        if reserve {
            self.h.check(Some(OpKind::Allocate))?;
        }
        self.inner.allocate(offset, len, reserve)
    }
}

struct FaultRandomAccessFile {
    h: Handle,
    inner: Arc<dyn RandomAccessFile>,
}

impl RandomAccessFile for FaultRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.h.check(Some(OpKind::Read))?;
        self.inner.read_at(offset, buf)
    }

    fn size(&self) -> Result<u64> {
        self.h.check(None)?;
        self.inner.size()
    }

    fn prefetch(&self, offset: u64, len: u64) -> Result<()> {
        self.inner.prefetch(offset, len)
    }

    fn supports_prefetch(&self) -> bool {
        self.inner.supports_prefetch()
    }
}

struct FaultSequentialFile {
    h: Handle,
    inner: Box<dyn SequentialFile>,
}

impl SequentialFile for FaultSequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.h.check(Some(OpKind::Read))?;
        self.inner.read(buf)
    }
}

impl FileSystem for FaultInjectionFs {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let s = &self.shared;
        s.check(OpKind::Create, path)?;
        let mut ctl = lock(&s.ctl);
        s.record_before(&mut ctl, path);
        let inner = s.base.new_writable_file(path)?;
        let state = Tracked::default();
        ctl.files.insert(path.to_path_buf(), state.clone());
        Ok(Box::new(FaultWritableFile { h: Handle::new(s, path), inner, state }))
    }

    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        let s = &self.shared;
        s.check(OpKind::Create, path)?;
        let mut ctl = lock(&s.ctl);
        s.record_before(&mut ctl, path);
        let inner = s.base.new_writable_file_with_buffer(path, max_buffer_size)?;
        let state = Tracked::default();
        ctl.files.insert(path.to_path_buf(), state.clone());
        Ok(Box::new(FaultWritableFile { h: Handle::new(s, path), inner, state }))
    }

    fn new_writable_file_with(
        &self,
        path: &Path,
        o: super::WriteFileOptions,
    ) -> Result<Box<dyn WritableFile>> {
        let s = &self.shared;
        s.check(OpKind::Create, path)?;
        let mut ctl = lock(&s.ctl);
        s.record_before(&mut ctl, path);
        let inner = s.base.new_writable_file_with(path, o)?;
        let state = Tracked::default();
        ctl.files.insert(path.to_path_buf(), state.clone());
        Ok(Box::new(FaultWritableFile { h: Handle::new(s, path), inner, state }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.shared.check(OpKind::Read, path)?;
        let inner = self.shared.base.new_random_access_file(path)?;
        Ok(Arc::new(FaultRandomAccessFile { h: Handle::new(&self.shared, path), inner }))
    }

    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: super::ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        self.shared.check(OpKind::Read, path)?;
        let inner = self.shared.base.new_random_access_file_with(path, o)?;
        Ok(Arc::new(FaultRandomAccessFile { h: Handle::new(&self.shared, path), inner }))
    }

    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.shared.check(OpKind::Read, path)?;
        let inner = self.shared.base.new_sequential_file(path)?;
        Ok(Box::new(FaultSequentialFile { h: Handle::new(&self.shared, path), inner }))
    }

    fn file_exists(&self, path: &Path) -> bool {
        self.shared.base.file_exists(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.shared.check_stopped(dir)?;
        self.shared.base.children(dir)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        self.shared.check_stopped(path)?;
        self.shared.base.file_size(path)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let s = &self.shared;
        s.check(OpKind::Remove, path)?;
        let mut ctl = lock(&s.ctl);
        s.record_before(&mut ctl, path);
        s.base.remove_file(path)?;
        ctl.files.remove(path);
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let s = &self.shared;
        s.check(OpKind::Rename, from)?;
        let mut ctl = lock(&s.ctl);
        if !s.base.file_exists(to) {
            if let Ok(names) = s.base.children(from) {
                // A directory (one level deep): modelled as each of its files moving, each
                // name change durable once the directory holding the new name is synced.
                for n in &names {
                    s.record_before(&mut ctl, &from.join(n));
                    s.record_before(&mut ctl, &to.join(n));
                }
                s.base.rename(from, to)?;
                for n in &names {
                    if let Some(f) = ctl.files.remove(&from.join(n)) {
                        ctl.files.insert(to.join(n), f);
                    }
                }
                return Ok(());
            }
        }
        s.record_before(&mut ctl, from);
        s.record_before(&mut ctl, to);
        s.base.rename(from, to)?;
        match ctl.files.remove(from) {
            Some(f) => ctl.files.insert(to.to_path_buf(), f),
            None => ctl.files.remove(to),
        };
        Ok(())
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.shared.check_stopped(dir)?;
        self.shared.base.create_dir_all(dir)
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.shared.check(OpKind::Remove, dir)?;
        self.shared.base.remove_dir(dir)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        super::db_mutex_check::assert_not_held(dir);
        let s = &self.shared;
        s.check(OpKind::DirSync, dir)?;
        s.base.sync_dir(dir)?;
        lock(&s.ctl).before.retain(|p, _| p.parent() != Some(dir));
        Ok(())
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.shared.check_stopped(path)?;
        self.shared.base.lock_file(path)
    }
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;
