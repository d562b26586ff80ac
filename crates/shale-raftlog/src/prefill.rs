//! Zeros written ahead of the append position, off the commit path, two ways: into the
//! active append file ahead of its batches (`prefill_zeros_ahead`, `Prefiller`, drawn
//! here), or as the whole next file before rotation (`prefill_next_file`, `NextFiles`,
//! drawn further down; faster at a lower tail, docs/benchmarks.md).
//!
//! ```text
//!  active file: | header | batches ...... | zeros, synced ................ | end of file
//!               0                  reserved ^                     frontier ^
//!                                  (appends reach here)   (reserved + `ahead` at most)
//! ```
//! Why: on ext4 (as on other journaling file systems) the `fdatasync` after an append
//! that grows the file must also commit the new size and extents through the journal;
//! after an overwrite of blocks the file already has, written and synced, it need not.
//! A thread writes zeros up to `ahead` bytes past the appends, a chunk at a time, and
//! syncs them; each group commit then overwrites blocks that are already there. (An
//! `fallocate`d range does not do it: its extents stay "unwritten" until the first write
//! converts them, a metadata change again; see docs/benchmarks.md.)
//!
//! The bytes: the thread writes a chunk only at offsets no append has reserved yet
//! (`reserved`, raised under the state lock before each append is written), and an append
//! that would reach the chunk being written waits for it. A crash leaves zeros after the
//! last batch, which recovery takes as a clean end and cuts off (`recovery.rs`), as it
//! does the tail raft-engine's `fallocate` leaves. A file being sealed is cut back to its
//! batches before its recovery index is written; the active one when the engine is
//! dropped. So files handed to raft-engine after a clean close have no zero tail.
//!
//! Only on the real file system (`PosixFileSystem`): the thread writes at offsets through
//! its own `std::fs::File`, which Shale's append-only `WritableFile` cannot do. On the
//! in-memory and fault-injecting file systems there is no prefill: appends grow the file.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::poison;
use crate::Result;

struct State {
    /// The active file, open for writes at offsets; None: nothing to prefill.
    file: Option<Arc<File>>,
    /// Appends reach up to here (the end of the last append started).
    reserved: u64,
    /// Zeros are written and synced up to here (the file's length, when past `reserved`).
    frontier: u64,
    /// A chunk being written: [start, end).
    in_flight: Option<(u64, u64)>,
    /// A write or sync of zeros failed: no more prefill for this file.
    failed: bool,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    /// The thread waits here for work.
    work: Condvar,
    /// Appends and seals wait here for a chunk to finish.
    done: Condvar,
    ahead: u64,
    chunk: u64,
    /// No zeros past this offset (the target file size plus a chunk).
    limit: u64,
}

/// The prefill thread of one queue and its state.
pub(crate) struct Prefiller {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Prefiller {
    /// Starts the thread: keeps `ahead` bytes of zeros past the appends, in files of up
    /// to about `target_file_size` bytes. None when the thread cannot be started (then
    /// appends grow the file, as without prefill).
    pub fn start(ahead: u64, target_file_size: u64) -> Option<Prefiller> {
        let chunk = (ahead / 4).clamp(64 << 10, 4 << 20);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                file: None,
                reserved: 0,
                frontier: 0,
                in_flight: None,
                failed: false,
                stop: false,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            ahead,
            chunk,
            limit: target_file_size.saturating_add(chunk),
        });
        let s = shared.clone();
        let thread =
            std::thread::Builder::new().name("raftlog-prefill".into()).spawn(move || run(&s)).ok()?;
        Some(Prefiller { shared, thread: Some(thread) })
    }

    /// A new active file `path`, `len` bytes long (its header, synced). When it cannot be
    /// opened for writing, it is not prefilled.
    pub fn attach(&self, path: &Path, len: u64) -> Result<()> {
        let file = OpenOptions::new().write(true).open(path).ok().map(Arc::new);
        let mut st = poison::lock(&self.shared.state, "prefill")?;
        while st.in_flight.is_some() {
            st = poison::wait(&self.shared.done, st, "prefill")?;
        }
        st.file = file;
        st.reserved = len;
        st.frontier = len;
        st.failed = false;
        self.shared.work.notify_one();
        Ok(())
    }

    /// Called before an append that ends at `end` is written: waits while a chunk of
    /// zeros is being written where the append goes, then reserves up to `end`. A
    /// poisoned state is an error: zeros might be on their way to where the append goes.
    pub fn reserve(&self, end: u64) -> Result<()> {
        let mut st = poison::lock(&self.shared.state, "prefill")?;
        while matches!(st.in_flight, Some((start, _)) if start < end) {
            st = poison::wait(&self.shared.done, st, "prefill")?;
        }
        st.reserved = st.reserved.max(end);
        if st.file.is_some() && st.frontier < st.reserved.saturating_add(self.shared.ahead) {
            self.shared.work.notify_one();
        }
        Ok(())
    }

    /// The active file is being sealed at `len` bytes: stops prefilling it and cuts it
    /// back to `len` (synced) when zeros were written past that. False when the cut
    /// failed (the file then ends with zeros, which readers take as its end).
    pub fn seal(&self, len: u64) -> Result<bool> {
        let file = {
            let mut st = poison::lock(&self.shared.state, "prefill")?;
            while st.in_flight.is_some() {
                st = poison::wait(&self.shared.done, st, "prefill")?;
            }
            st.file.take()
        };
        Ok(match file {
            Some(f) => cut(&f, len, true),
            None => true,
        })
    }
}

/// Cuts `f` to `len` bytes when it is longer (then syncs, when `sync`).
fn cut(f: &File, len: u64, sync: bool) -> bool {
    match f.metadata() {
        Ok(m) if m.len() > len => {
            f.set_len(len).and_then(|_| if sync { f.sync_data() } else { Ok(()) }).is_ok()
        }
        Ok(_) => true,
        Err(_) => false,
    }
}

impl Drop for Prefiller {
    fn drop(&mut self) {
        // A poisoned state: the thread has stopped (it stops on one) and the file keeps
        // its zero tail, which recovery cuts.
        let file = poison::lock(&self.shared.state, "prefill").ok().and_then(|mut st| {
            st.stop = true;
            self.shared.work.notify_all();
            st.file.take().map(|f| (f, st.reserved))
        });
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // The engine is closing: its active file loses its zero tail (not synced: a crash
        // before the cut reaches the disk leaves zeros, which recovery cuts).
        if let Some((f, len)) = file {
            let _ = cut(&f, len, false);
        }
    }
}

/// The prefill thread. A poisoned state stops it (the writers meet the error themselves).
fn run(s: &Shared) {
    let zeros = vec![0u8; s.chunk as usize];
    let Ok(mut st) = poison::lock(&s.state, "prefill") else { return };
    loop {
        if st.stop {
            return;
        }
        let job = match &st.file {
            Some(f) if st.in_flight.is_none() && !st.failed => {
                let start = st.frontier.max(st.reserved);
                if start < st.reserved.saturating_add(s.ahead) && start < s.limit {
                    let end = ((start / s.chunk + 1) * s.chunk).min(s.limit);
                    Some((f.clone(), start, end))
                } else {
                    None
                }
            }
            _ => None,
        };
        let Some((f, start, end)) = job else {
            let Ok(g) = poison::wait(&s.work, st, "prefill") else { return };
            st = g;
            continue;
        };
        st.in_flight = Some((start, end));
        drop(st);
        let r = f.write_all_at(&zeros[..(end - start) as usize], start).and_then(|_| f.sync_data());
        let Ok(g) = poison::lock(&s.state, "prefill") else { return };
        st = g;
        st.in_flight = None;
        if st.file.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, &f)) {
            match r {
                Ok(()) => st.frontier = st.frontier.max(end),
                Err(_) => st.failed = true,
            }
        }
        s.done.notify_all();
    }
}

// ---------------------------------------------------------------------------------------
// The next file, zeroed ahead (`Config::prefill_next_file`).
//
//  dir/prefill.raftlog.next:  | header | zeros ..................................... |
//                             0        header len                              size ^
//  size: `prefill_first_file_size` (4 MiB) for the first file after open, then twice the
//  previous file's, up to the target file size; the active file is sealed at its size.
//
// A thread writes the file above (header, then zeros to its size), syncs it
// and the directory, all before it is needed. It writes gently, so that the commits'
// `fdatasync` of the active file never meet a large flush of zeros: 256 KiB at a time, each
// piece handed to the disk at once (`sync_file_range`, no journal commit, no cache flush)
// and waited for before the next one, so at most about 512 KiB of zeros are in flight (1 MiB
// pieces put a commit's P99 at 1.4x raft-engine's on the quiet machine; 256 KiB at 0.8x,
// docs/benchmarks.md); and
// paced on the active file's progress (zeros up to 4 MiB + 1.5 x the bytes appended to the
// active file, times the next file's size over the active one's), so the next file is
// ready at about two thirds of the active one and the
// zeros are spread over the whole time the active file fills. One `fsync` at the end
// commits the file's blocks (one journal commit per file). At rotation the pipe does not
// wait for a file not yet ready: it creates the new file fresh (appends then grow it, as
// without prefill), seals it early (at the first file's size, so that slow path is
// short) and the thread goes on with the next one. Open waits for the first, short one
// (4 MiB: about 10 ms; the target size, 128 MiB, took 0.2 s). At rotation (and at open,
// for the first
// active file) the pipe renames it to the new file's name (`NNN.raftlog`), syncs the
// directory and appends into it at offsets: the active file's size never changes while
// batches go in, and no zeros are written into it, so a commit's `fdatasync` flushes the
// batches' blocks alone. The name is neither engine's: raft-engine 0.4.2's and Shale's
// file-name parsers take `NNN.raftlog`, `NNN.rewrite`, `NNN.raftlog.reserved` (and Shale
// its `.idx`), so a crash that leaves it, whole or in part, confuses neither; Shale's open
// removes it. After the rename, the file is a header and zeros: the zero tail that
// recovery takes as a clean end and cuts (`recovery.rs`).
// ---------------------------------------------------------------------------------------

/// The name of the file being zeroed ahead.
pub(crate) const NEXT_FILE_NAME: &str = "prefill.raftlog.next";

struct NextState {
    /// The file is complete and synced (header, zeros, directory entry).
    ready: bool,
    /// The size of the file being prepared (or ready): `FIRST_FILE`, doubling at each
    /// file taken, up to the target file size.
    size: u64,
    /// The thread is asked to prepare the file.
    wanted: bool,
    /// Its last attempt failed (the pipe then creates files as without prefill).
    failed: bool,
    stop: bool,
}

struct NextShared {
    state: Mutex<NextState>,
    cv: Condvar,
    dir: std::path::PathBuf,
    header: Vec<u8>,
    /// The target file size: no file is prepared larger.
    target: u64,
    /// The first file's size: a file created fresh (the prepared one not ready) is sealed
    /// at this size at most, so that the file-growing path lasts a short while.
    first: u64,
    /// Bytes appended to the active file (its length), for pacing; `u64::MAX`: no pacing
    /// (open is waiting for the file).
    progress: AtomicU64,
    /// The active file's rotation size (`Taken::limit`), for pacing.
    active_size: AtomicU64,
}

/// The default first file prepared (`Config::prefill_first_file_size`: the one open
/// waits for, about 10 ms of zeros on an SSD); each next one is twice its predecessor,
/// up to the target file size. The short first files are sealed early (file sizes are
/// free in the format), while the thread prepares the longer ones, paced on them.
#[cfg(test)]
const FIRST_FILE: u64 = 4 << 20;

/// What `NextFiles::take` gives: the new active file, or the size it is to be sealed at
/// when created fresh.
pub(crate) struct Taken {
    /// The prepared file renamed in, open for writes at offsets, and its header's length;
    /// None: not ready (or failed), the caller creates the file fresh.
    pub file: Option<(File, u64)>,
    /// The new active file is sealed once it holds this many bytes: the prepared file's
    /// size, or the size of the one being prepared when the file is created fresh.
    pub limit: u64,
}

/// The thread that keeps the next append file zeroed ahead.
pub(crate) struct NextFiles {
    shared: Arc<NextShared>,
    thread: Option<JoinHandle<()>>,
}

impl NextFiles {
    /// Removes a leftover next file of `dir` and starts the thread preparing one of
    /// `size` bytes starting with `header`. None when the thread cannot be started.
    /// The first file is `first` bytes long (at most `size`), each next one twice its
    /// predecessor's, up to `size`.
    pub fn start(dir: &Path, header: Vec<u8>, size: u64, first: u64) -> Option<NextFiles> {
        let _ = std::fs::remove_file(dir.join(NEXT_FILE_NAME));
        let target = size.max(header.len() as u64);
        let first = target.min(first.max(header.len() as u64));
        let shared = Arc::new(NextShared {
            state: Mutex::new(NextState {
                ready: false,
                size: first,
                wanted: true,
                failed: false,
                stop: false,
            }),
            cv: Condvar::new(),
            dir: dir.to_path_buf(),
            target,
            first,
            header,
            progress: AtomicU64::new(u64::MAX),
            active_size: AtomicU64::new(first),
        });
        let s = shared.clone();
        let thread =
            std::thread::Builder::new().name("raftlog-next".into()).spawn(move || run_next(&s)).ok()?;
        Some(NextFiles { shared, thread: Some(thread) })
    }

    /// Waits for the prepared file and renames it to `path` (then syncs the directory).
    /// Returns the file open for writes at offsets and the header's length; None when
    /// the file could not be prepared or renamed (the caller then creates `path` fresh).
    /// Asks the thread for the next one either way (twice as long as the one taken, up
    /// to the target size). With the file, or without, the size to seal the new active
    /// file at.
    ///
    /// `wait`: wait for a file being prepared (open does; the first file is short); else
    /// a file not ready yet is left to the thread, which goes on with it, and the file is
    /// None, its limit the size of the one being prepared.
    pub fn take(&self, path: &Path, wait: bool) -> Result<Taken> {
        let mut st = poison::lock(&self.shared.state, "next file")?;
        if wait {
            // No pacing while waiting: the file is needed now.
            self.shared.progress.store(u64::MAX, Ordering::Relaxed);
            self.shared.cv.notify_all();
            while st.wanted && !st.ready && !st.failed {
                st = poison::wait(&self.shared.cv, st, "next file")?;
            }
        }
        let size = st.size;
        if !st.ready && st.wanted && !st.failed {
            // Being prepared: left for the next rotation. The file created fresh meanwhile
            // (whose commits grow it, the slow path) is sealed early, at the first file's
            // size, and the thread paced on it, which lets it run ahead (the file being
            // prepared is longer).
            let limit = size.min(self.shared.first);
            self.shared.active_size.store(limit, Ordering::Relaxed);
            self.shared.progress.store(self.shared.header.len() as u64, Ordering::Relaxed);
            self.shared.cv.notify_all();
            return Ok(Taken { file: None, limit });
        }
        let ready = st.ready;
        st.ready = false;
        let from = self.shared.dir.join(NEXT_FILE_NAME);
        let got = if ready {
            std::fs::rename(&from, path)
                .and_then(|_| File::open(&self.shared.dir)?.sync_all())
                .and_then(|_| OpenOptions::new().read(true).write(true).open(path))
                .ok()
                .map(|f| (f, self.shared.header.len() as u64))
        } else {
            None
        };
        st.wanted = true;
        st.failed = false;
        st.size = size.saturating_mul(2).min(self.shared.target);
        // The new active file starts at its header: pace the next file on it.
        self.shared.active_size.store(size, Ordering::Relaxed);
        self.shared.progress.store(self.shared.header.len() as u64, Ordering::Relaxed);
        self.shared.cv.notify_all();
        Ok(Taken { file: got, limit: size })
    }

    /// The active file now holds `len` bytes (called after each append, for pacing).
    pub fn progress(&self, len: u64) {
        let old = self.shared.progress.swap(len, Ordering::Relaxed);
        // Wake the thread when a piece's worth more may be zeroed (not at every append).
        if old != u64::MAX && len / PACE_STEP != old / PACE_STEP {
            // Through the lock: the thread checks the pace and waits under it, so the
            // wake-up cannot fall between its check and its wait.
            // (A poisoned state: the thread has stopped, there is no one to wake.)
            drop(poison::lock(&self.shared.state, "next file"));
            self.shared.cv.notify_all();
        }
    }
}

/// Zeros are written and handed to the disk this much at a time.
const PIECE: u64 = 256 << 10;
/// The thread is woken each time the active file grows by this much.
const PACE_STEP: u64 = 64 << 10;
/// Zeros allowed ahead of the pace (the next file's share of 1.5 x the active file's
/// progress).
const PACE_LEAD: u64 = 4 << 20;

/// How far into the next file (`next` bytes long) zeros may be written, given the active
/// file's length `progress` and its rotation size `active`: the next file is ready when
/// the active one is about two thirds full, whatever their sizes.
fn paced_limit(progress: u64, active: u64, next: u64) -> u64 {
    if progress == u64::MAX {
        return u64::MAX;
    }
    let share = progress as u128 * 3 * next as u128 / (2 * active.max(1) as u128);
    PACE_LEAD.saturating_add(u64::try_from(share).unwrap_or(u64::MAX))
}

impl Drop for NextFiles {
    fn drop(&mut self) {
        // A poisoned state: the thread has stopped already.
        if let Ok(mut st) = poison::lock(&self.shared.state, "next file") {
            st.stop = true;
        }
        self.shared.cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // raft-engine ignores the name, so the file would only take space.
        let _ = std::fs::remove_file(self.shared.dir.join(NEXT_FILE_NAME));
    }
}

/// The next-file thread. A poisoned state stops it (`take` meets the error itself).
fn run_next(s: &NextShared) {
    let Ok(mut st) = poison::lock(&s.state, "next file") else { return };
    loop {
        if st.stop {
            return;
        }
        if !st.wanted || st.ready {
            let Ok(g) = poison::wait(&s.cv, st, "next file") else { return };
            st = g;
            continue;
        }
        let size = st.size;
        drop(st);
        let r = prepare_next(s, size, &|at| {
            // Wait for the pace (or a stop, or open asking for the file now).
            let Ok(mut st) = poison::lock(&s.state, "next file") else { return true };
            loop {
                if st.stop {
                    return true;
                }
                let active = s.active_size.load(Ordering::Relaxed);
                if at < paced_limit(s.progress.load(Ordering::Relaxed), active, size) {
                    return false;
                }
                let Ok(g) = poison::wait(&s.cv, st, "next file") else { return true };
                st = g;
            }
        });
        let Ok(g) = poison::lock(&s.state, "next file") else { return };
        st = g;
        match r {
            Ok(true) => st.ready = true,
            Ok(false) => return,
            Err(_) => st.failed = true,
        }
        st.wanted = false;
        s.cv.notify_all();
    }
}

/// Writes the next file (header, zeros), syncs it and the directory. Ok(false): stopped.
/// `wait(at)` is called before each piece of zeros at offset `at`: it waits for the pace
/// and returns true when the thread is to stop. Each piece is handed to the disk
/// (`sync_file_range`, write) once written, and the one before it waited for, so the disk
/// takes the zeros a piece at a time beside the commits' syncs rather than in bursts.
fn prepare_next(s: &NextShared, size: u64, wait: &dyn Fn(u64) -> bool) -> std::io::Result<bool> {
    let path = s.dir.join(NEXT_FILE_NAME);
    let f = OpenOptions::new().write(true).create(true).truncate(true).open(&path)?;
    f.write_all_at(&s.header, 0)?;
    let zeros = vec![0u8; PIECE as usize];
    let mut at = s.header.len() as u64;
    let mut prev: Option<(u64, u64)> = None;
    while at < size {
        if wait(at) {
            return Ok(false);
        }
        let n = (size - at).min(PIECE);
        f.write_all_at(&zeros[..n as usize], at)?;
        start_writeback(&f, at, n, false)?;
        if let Some((p, pn)) = prev {
            start_writeback(&f, p, pn, true)?;
        }
        prev = Some((at, n));
        at += n;
    }
    f.sync_all()?;
    File::open(&s.dir)?.sync_all()?;
    Ok(true)
}

/// Starts writeback of `[at, at + n)` of `f` (no journal commit, no cache flush); with
/// `wait`, also waits for it to finish. Durability comes from the `fsync` at the end.
fn start_writeback(f: &File, at: u64, n: u64, wait: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let flags = if wait {
        libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER
    } else {
        libc::SYNC_FILE_RANGE_WRITE
    };
    // SAFETY: a valid open descriptor; the call only starts or waits for writeback.
    let r = unsafe { libc::sync_file_range(f.as_raw_fd(), at as libc::off64_t, n as libc::off64_t, flags) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The active file's writer when it was zeroed ahead: writes at offsets, never grows the
/// file while within its zeros.
pub(crate) struct OffsetWriter {
    file: File,
    at: u64,
    path: std::path::PathBuf,
}

impl OffsetWriter {
    pub fn new(file: File, at: u64, path: &Path) -> OffsetWriter {
        OffsetWriter { file, at, path: path.to_path_buf() }
    }
}

impl shale_base::fs::WritableFile for OffsetWriter {
    fn append(&mut self, data: &[u8]) -> shale_base::Result<()> {
        self.file
            .write_all_at(data, self.at)
            .map_err(|e| shale_base::Error::io(format!("write {} at {}", self.path.display(), self.at), e))?;
        self.at += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> shale_base::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> shale_base::Result<()> {
        self.file
            .sync_data()
            .map_err(|e| shale_base::Error::io(format!("sync {}", self.path.display()), e))?;
        Ok(())
    }
    fn size(&self) -> u64 {
        self.at
    }
}

/// Cuts a sealed or closed zeroed-ahead file back to its batches (`len`), then syncs it
/// when `sync`. False when that failed (the zeros then stay, read as the file's end).
pub(crate) fn cut_file(f: &File, len: u64, sync: bool) -> bool {
    cut(f, len, sync)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_go_ahead_and_are_cut_at_seal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"head").unwrap();
        let p = Prefiller::start(1 << 20, 8 << 20).unwrap();
        p.attach(&path, 4).unwrap();
        p.reserve(100).unwrap();
        // The thread fills up to 1 MiB past the reservation.
        let t0 = std::time::Instant::now();
        while std::fs::metadata(&path).unwrap().len() < (1 << 20) + 100 {
            assert!(t0.elapsed().as_secs() < 30, "no zeros written ahead");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // What was written before stays.
        let mut head = [0u8; 4];
        File::open(&path).unwrap().read_exact_at(&mut head, 0).unwrap();
        assert_eq!(&head, b"head");
        assert!(p.seal(100).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 100);
    }

    #[test]
    fn next_file_is_paced_and_rotation_does_not_wait() {
        let dir = tempfile::tempdir().unwrap();
        let header = b"HEADER".to_vec();
        let size = FIRST_FILE * 4;
        let next = NextFiles::start(dir.path(), header.clone(), size, FIRST_FILE).unwrap();
        // Open waits for the first file, short (no pacing then).
        let t = next.take(&dir.path().join("1.raftlog"), true).unwrap();
        let (f, at) = t.file.unwrap();
        assert_eq!(at, header.len() as u64);
        assert_eq!(t.limit, FIRST_FILE);
        assert_eq!(f.metadata().unwrap().len(), FIRST_FILE);
        // The active file holds only its header: zeros stop near the pace's lead, short of
        // the next file's twice the size, so it cannot be ready, and a rotation does not
        // wait for it: the file created fresh is sealed early, at the first file's size.
        let t = next.take(&dir.path().join("2.raftlog"), false).unwrap();
        assert!(t.file.is_none());
        assert_eq!(t.limit, FIRST_FILE);
        assert!(!dir.path().join("2.raftlog").exists());
        // The active file grows: the thread goes on, and a rotation waiting gets the file.
        next.progress(FIRST_FILE);
        let t = next.take(&dir.path().join("3.raftlog"), true).unwrap();
        let (f, _) = t.file.unwrap();
        assert_eq!(t.limit, 2 * FIRST_FILE);
        assert_eq!(f.metadata().unwrap().len(), 2 * FIRST_FILE);
        let mut head = vec![0u8; header.len()];
        f.read_exact_at(&mut head, 0).unwrap();
        assert_eq!(head, header);
        // Then twice that again, capped at the target size.
        let t = next.take(&dir.path().join("4.raftlog"), true).unwrap();
        assert_eq!(t.limit, 4 * FIRST_FILE);
        assert_eq!(t.file.unwrap().0.metadata().unwrap().len(), size);
        let t = next.take(&dir.path().join("5.raftlog"), true).unwrap();
        assert_eq!(t.limit, size);
        assert_eq!(t.file.unwrap().0.metadata().unwrap().len(), size);
        drop(next);
        assert!(!dir.path().join(NEXT_FILE_NAME).exists());
    }

    #[test]
    fn pace_scales_with_the_file_sizes() {
        assert_eq!(paced_limit(u64::MAX, 1, 1), u64::MAX);
        // Equal sizes: 1.5 x the active file's progress.
        assert_eq!(paced_limit(1 << 20, 8 << 20, 8 << 20), PACE_LEAD + (3 << 19));
        // The next file twice the active one: 3 x.
        assert_eq!(paced_limit(1 << 20, 4 << 20, 8 << 20), PACE_LEAD + (3 << 20));
        // Either way the whole next file is allowed by two thirds of the active one.
        for (a, n) in [(4u64 << 20, 8u64 << 20), (64 << 20, 128 << 20), (128 << 20, 128 << 20)] {
            assert!(paced_limit(a * 2 / 3, a, n) >= n);
        }
    }

    #[test]
    fn drop_cuts_the_active_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"head").unwrap();
        let p = Prefiller::start(256 << 10, 8 << 20).unwrap();
        p.attach(&path, 4).unwrap();
        p.reserve(10).unwrap();
        let t0 = std::time::Instant::now();
        while std::fs::metadata(&path).unwrap().len() <= 10 {
            assert!(t0.elapsed().as_secs() < 30, "no zeros written ahead");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(p);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 10);
    }
}
