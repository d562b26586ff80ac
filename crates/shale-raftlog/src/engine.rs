//! The engine: raft-engine's `Engine` API over Shale's file-system layer.
//!
//! ```text
//! write(batch, sync) ─► WriteGroup: the first writer to arrive leads; it appends every
//!                       queued batch (one write each, to the append queue's active file),
//!                       then one sync if any of them asked for it, then applies them to
//!                       the index in file order, and wakes each writer of the group (its
//!                       own slot: no writer is woken for nothing), then hands leading
//!                       to the oldest writer queued meanwhile (raft-engine's hand-off)
//! reads ─────────────► MemTables (where is entry i) ─► pipe read of the entries blob
//! purge ─────────────► rewrite lagging / dirty regions into the rewrite queue, sync,
//!                       then remove append files below the oldest live one
//! ```
//! A failed write or sync, a panicking leader or a batch written but not indexed stops the
//! engine (`halt.rs`): every later write, sync and purge returns that first error; reads go
//! on; reopening the engine recovers every acknowledged write.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Instant;

use shale_base::fs::{FileLock, FileSystemRef};

use crate::config::Config;
use crate::env::{DefaultFileSystem, FileSystem};
use crate::format::{FileId, FileSeq, LogFileFormat, LogQueue};
use crate::halt::Halt;
use crate::log_batch::{decode_entries_block, decode_entry, EncodedBatch, LogItem, MessageExt};
use crate::memtable::{EntryLoc, KvLoc, MemTables, NewRun, Op};
use crate::perf::{with_perf, PerfContext};
use crate::pipe::{FileBlockHandle, SinglePipe};
use crate::poison;
use crate::recovery::{batch_ops, recover};
use crate::{Command, Error, LogBatch, Result};

/// raft-engine's pipe type parameter; Shale has one pipe implementation.
pub struct FilePipeLog<F>(PhantomData<fn() -> F>);

const FORCE_COMPACT_RATIO: f64 = 0.2;
const REWRITE_RATIO: f64 = 0.7;
const MAX_REWRITE_ENTRIES_PER_REGION: usize = 32;
const REWRITE_BATCH_BYTES: usize = 1 << 20;

/// The Raft log engine.
pub struct Engine<F = DefaultFileSystem, P = FilePipeLog<F>> {
    inner: Arc<Inner>,
    _marker: PhantomData<fn() -> (F, P)>,
}

struct Job {
    batch: EncodedBatch,
    items: Vec<LogItem>,
    sync: bool,
}

/// Where a queued writer waits: for its result, or to be made the leader.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    cv: Condvar,
}

#[derive(Default)]
enum SlotState {
    #[default]
    Waiting,
    /// Lead the queued writers (this one's job among them).
    Lead,
    Done(Result<usize>),
}

impl Slot {
    /// Sets the slot's state and wakes its writer. A poisoned slot (its writer panicked
    /// holding it, so it waits no more) is left alone.
    fn set(&self, st: SlotState) {
        if let Ok(mut g) = poison::lock(&self.state, "write slot") {
            *g = st;
        }
        self.cv.notify_one();
    }
}

#[derive(Default)]
struct GroupState {
    queue: Vec<(Arc<Slot>, Job)>,
    /// A writer is leading (from when it takes the queue until it hands on or finds the
    /// queue empty).
    leader: bool,
}

/// Dropped only when a group leader panics (it is forgotten otherwise): stops the engine
/// with the poisoned-lock error (`halt.rs`; a lock taken while unwinding is not marked
/// poisoned by std, so the guard does it), so later writes fail instead of queueing
/// behind a leader that is gone, and answers the writers of the group and the queue.
struct LeadGuard<'a> {
    group: &'a Mutex<GroupState>,
    halt: &'a Halt,
    slots: Vec<Arc<Slot>>,
}

impl Drop for LeadGuard<'_> {
    fn drop(&mut self) {
        let e = self.halt.halt(poison::poisoned("write group"));
        // Halted before the queue is taken: a writer that queues after this sees the halt.
        // (Poisoned, the group fails every write already; its queue waits for nothing.)
        let queued = match self.group.lock() {
            Ok(mut g) => std::mem::take(&mut g.queue),
            Err(_) => Vec::new(),
        };
        for s in self.slots.iter().chain(queued.iter().map(|(s, _)| s)) {
            s.set(SlotState::Done(Err(e.duplicate())));
        }
    }
}

struct Inner {
    cfg: Config,
    append: SinglePipe,
    rewrite: SinglePipe,
    memtables: MemTables,
    group: Mutex<GroupState>,
    /// Held (shared) by a group leader from its first append until its batches are in the
    /// index; purge takes it exclusively to find the first file that may hold writes not
    /// yet in the index, and never removes that file or later ones.
    apply_gate: RwLock<()>,
    purge_lock: Mutex<()>,
    /// The stored error that stops every write (`halt.rs`), shared with both pipes.
    halt: Arc<Halt>,
    _lock: Box<dyn FileLock>,
}

impl Engine<DefaultFileSystem, FilePipeLog<DefaultFileSystem>> {
    /// Opens (or creates) the engine in `cfg.dir`, recovering what is there.
    pub fn open(cfg: Config) -> Result<Engine<DefaultFileSystem, FilePipeLog<DefaultFileSystem>>> {
        Self::open_with_file_system(cfg, Arc::new(DefaultFileSystem))
    }

    /// Checks every entries blob of every file of `path`; returns, per region whose
    /// entries are damaged, the lowest damaged index (raft-engine's consistency check).
    pub fn consistency_check(path: &Path) -> Result<Vec<(u64, u64)>> {
        crate::tools::consistency_check(Arc::new(DefaultFileSystem), path)
    }

    /// Every item of every file of `path`, oldest first (raft-engine's `dump`).
    pub fn dump(path: &Path) -> Result<crate::tools::LogItemReader> {
        crate::tools::LogItemReader::open(Arc::new(DefaultFileSystem), path)
    }
}

impl<F: FileSystem> Engine<F, FilePipeLog<F>> {
    /// Opens the engine on `file_system` (any of Shale's: the fault-injecting one too).
    pub fn open_with_file_system(mut cfg: Config, file_system: Arc<F>) -> Result<Engine<F, FilePipeLog<F>>> {
        cfg.sanitize()?;
        cfg.check_supported()?;
        let fs: FileSystemRef = file_system;
        let dir = PathBuf::from(&cfg.dir);
        fs.create_dir_all(&dir)?;
        let lock_file = fs.lock_file(&dir.join("LOCK"))?;
        let rec = recover(
            &fs,
            &dir,
            cfg.recovery_mode,
            cfg.recovery_threads,
            cfg.recovery_read_block_size.0 as usize,
            true,
            cfg.recovery_index_files,
        )?;
        let format = LogFileFormat::new(cfg.format_version, 0);
        let target = cfg.target_file_size.0;
        let posix = std::any::TypeId::of::<F>() == std::any::TypeId::of::<crate::env::PosixFileSystem>();
        let halt = Arc::new(Halt::default());
        // `prefill_for_recycle`: reserved files prepared at open, as many as raft-engine's
        // `initialize_files` keeps.
        let prefill_recycle = cfg
            .prefill_for_recycle
            .then(|| cfg.prefill_capacity().min(cfg.recycle_capacity().saturating_sub(rec.append.len())));
        let append = SinglePipe::open(
            LogQueue::Append,
            &dir,
            fs.clone(),
            target,
            format,
            rec.append,
            rec.reserved,
            cfg.recycle_capacity(),
            cfg.recovery_index_files,
            // Zeros ahead need writes at offsets, which only the real file system's files
            // are given here (`prefill.rs`).
            if posix { cfg.prefill_zeros_ahead.0 } else { 0 },
            (posix && cfg.prefill_next_file).then_some(cfg.prefill_first_file_size.0),
            prefill_recycle,
            posix,
            halt.clone(),
        )?;
        let rewrite = SinglePipe::open(
            LogQueue::Rewrite,
            &dir,
            fs.clone(),
            target,
            format,
            rec.rewrite,
            Vec::new(),
            0,
            cfg.recovery_index_files,
            0,
            None,
            None,
            posix,
            halt.clone(),
        )?;
        let inner = Inner {
            cfg,
            append,
            rewrite,
            memtables: rec.memtables,
            group: Mutex::new(GroupState::default()),
            apply_gate: RwLock::new(()),
            purge_lock: Mutex::new(()),
            halt,
            _lock: lock_file,
        };
        Ok(Engine { inner: Arc::new(inner), _marker: PhantomData })
    }

    /// Checks every entries blob under `path` through `file_system`.
    pub fn consistency_check_with_file_system(path: &Path, file_system: Arc<F>) -> Result<Vec<(u64, u64)>> {
        crate::tools::consistency_check(file_system, path)
    }

    pub fn dump_with_file_system(path: &Path, file_system: Arc<F>) -> Result<crate::tools::LogItemReader> {
        crate::tools::LogItemReader::open(file_system, path)
    }

    /// Copies the engine at `source.dir` to `target`: every file but the newest of each
    /// queue as a symbolic link, the newest copied (raft-engine's `fork`). Refuses log
    /// recycling and TolerateAnyCorruption, as raft-engine does.
    pub fn fork<T: AsRef<Path>>(
        source: &Config,
        fs: Arc<F>,
        target: T,
    ) -> std::result::Result<CopyDetails, String> {
        let _ = fs;
        crate::tools::fork(source, target.as_ref())
    }
}

/// What `Engine::fork` did.
#[derive(Default, Debug)]
pub struct CopyDetails {
    pub copied: Vec<String>,
    pub symlinked: Vec<String>,
}

impl<F, P> Engine<F, P> {
    /// Writes `log_batch` (emptying it) and returns the bytes written; with `sync` the
    /// write is durable when this returns.
    /// Once the engine is stopped (`halt.rs`) it returns the stored error.
    pub fn write(&self, log_batch: &mut LogBatch, sync: bool) -> Result<usize> {
        self.inner.halt.check()?;
        if log_batch.is_empty() {
            if sync {
                self.inner.append.sync()?;
            }
            return Ok(0);
        }
        self.inner.memtables.check_batch(&log_batch.items)?;
        let threshold = self.inner.cfg.batch_compression_threshold.0 as usize;
        let t = Instant::now();
        let batch = log_batch.encode(threshold, self.inner.cfg.compression_level)?;
        with_perf(|p| p.log_populating_duration += t.elapsed());
        let len = batch.bytes.len();
        let items = std::mem::take(&mut log_batch.items);
        log_batch.clear();
        let r = self.inner.group_write(Job { batch, items, sync });
        r.map(|_| len)
    }

    /// Makes every write so far durable.
    pub fn sync(&self) -> Result<()> {
        self.inner.append.sync()
    }

    /// The entry `log_idx` of `region_id`, or None when there is none.
    pub fn get_entry<M: MessageExt>(&self, region_id: u64, log_idx: u64) -> Result<Option<M::Entry>> {
        match self.get_raw_entry(region_id, log_idx)? {
            Some(b) => Ok(Some(decode_entry::<M>(&b)?)),
            None => Ok(None),
        }
    }

    /// The encoded bytes of entry `log_idx` of `region_id`.
    pub fn get_raw_entry(&self, region_id: u64, log_idx: u64) -> Result<Option<Vec<u8>>> {
        let loc = self.inner.memtables.read(region_id, |r| r.and_then(|r| r.get_entry(log_idx)))?;
        match loc {
            Some(loc) => {
                let blob = self.inner.read_blob(&loc)?;
                Ok(Some(slice_entry(&blob, &loc)?.to_vec()))
            }
            None => Ok(None),
        }
    }

    /// Appends entries `[begin, end)` of `region_id` to `vec`, stopping once `max_size`
    /// bytes are exceeded (at least one entry); returns how many were fetched.
    pub fn fetch_entries_to<M: MessageExt>(
        &self,
        region_id: u64,
        begin: u64,
        end: u64,
        max_size: Option<usize>,
        vec: &mut Vec<M::Entry>,
    ) -> Result<usize> {
        let mut n = 0;
        self.inner.fetch(region_id, begin, end, max_size, |b| {
            vec.push(decode_entry::<M>(b)?);
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }

    /// The byte-level form of [`Engine::fetch_entries_to`].
    pub fn fetch_raw_entries_to(
        &self,
        region_id: u64,
        begin: u64,
        end: u64,
        max_size: Option<usize>,
        vec: &mut Vec<Vec<u8>>,
    ) -> Result<usize> {
        let mut n = 0;
        self.inner.fetch(region_id, begin, end, max_size, |b| {
            vec.push(b.to_vec());
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }

    /// (A poisoned index lock panics here: raft-engine's signature has no error; `poison.rs`.)
    pub fn first_index(&self, region_id: u64) -> Option<u64> {
        poison::or_panic(self.inner.memtables.read(region_id, |r| r.and_then(|r| r.first())))
    }

    /// (A poisoned index lock panics here: raft-engine's signature has no error; `poison.rs`.)
    pub fn last_index(&self, region_id: u64) -> Option<u64> {
        poison::or_panic(self.inner.memtables.read(region_id, |r| r.and_then(|r| r.last_index())))
    }

    /// Compacts the entries of `region_id` below `index` (writes a Compact command, not
    /// synced); returns how many entries went.
    pub fn compact_to(&self, region_id: u64, index: u64) -> u64 {
        let first = match self.first_index(region_id) {
            Some(i) => i,
            None => return 0,
        };
        let mut b = LogBatch::default();
        b.add_command(region_id, Command::Compact { index });
        if self.write(&mut b, false).is_err() {
            return 0;
        }
        self.first_index(region_id).unwrap_or(index).saturating_sub(first)
    }

    /// The value of `key` in `region_id`.
    /// (A poisoned index lock panics here: raft-engine's signature has no error; `poison.rs`.)
    pub fn get(&self, region_id: u64, key: &[u8]) -> Option<Vec<u8>> {
        poison::or_panic(
            self.inner.memtables.read(region_id, |r| r.and_then(|r| r.kvs.get(key).map(|k| k.value.clone()))),
        )
    }

    /// The value of `key`, decoded as a protobuf message.
    #[cfg(feature = "protobuf")]
    pub fn get_message<S: protobuf::Message>(&self, region_id: u64, key: &[u8]) -> Result<Option<S>> {
        match self.get(region_id, key) {
            Some(v) => Ok(Some(S::parse_from_bytes(&v)?)),
            None => Ok(None),
        }
    }

    /// Calls `callback` with the keys in `[start_key, end_key)` of `region_id` and their
    /// values decoded as `S` (undecodable values are skipped, as raft-engine), ascending or
    /// descending, until it returns false.
    #[cfg(feature = "protobuf")]
    pub fn scan_messages<S, C>(
        &self,
        region_id: u64,
        start_key: Option<&[u8]>,
        end_key: Option<&[u8]>,
        reverse: bool,
        mut callback: C,
    ) -> Result<()>
    where
        S: protobuf::Message,
        C: FnMut(&[u8], S) -> bool,
    {
        self.scan_raw_messages(region_id, start_key, end_key, reverse, move |k, v| match S::parse_from_bytes(
            v,
        ) {
            Ok(m) => callback(k, m),
            Err(_) => true,
        })
    }

    /// Calls `callback` with the keys in `[start_key, end_key)` and their raw values.
    pub fn scan_raw_messages<C>(
        &self,
        region_id: u64,
        start_key: Option<&[u8]>,
        end_key: Option<&[u8]>,
        reverse: bool,
        mut callback: C,
    ) -> Result<()>
    where
        C: FnMut(&[u8], &[u8]) -> bool,
    {
        use std::ops::Bound;
        // Copy the range out so the callback runs without the index lock held.
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = self.inner.memtables.read(region_id, |r| {
            let Some(r) = r else { return Vec::new() };
            let lo = start_key.map_or(Bound::Unbounded, |k| Bound::Included(k.to_vec()));
            let hi = end_key.map_or(Bound::Unbounded, |k| Bound::Excluded(k.to_vec()));
            if let (Bound::Included(a), Bound::Excluded(b)) = (&lo, &hi) {
                if a >= b {
                    return Vec::new();
                }
            }
            r.kvs.range((lo, hi)).map(|(k, v)| (k.clone(), v.value.clone())).collect()
        })?;
        let mut it: Box<dyn Iterator<Item = &(Vec<u8>, Vec<u8>)>> =
            if reverse { Box::new(pairs.iter().rev()) } else { Box::new(pairs.iter()) };
        for (k, v) in &mut it {
            if !callback(k, v) {
                break;
            }
        }
        Ok(())
    }

    /// Ids of the raft groups holding entries or keys.
    /// (A poisoned index lock panics here: raft-engine's signature has no error; `poison.rs`.)
    pub fn raft_groups(&self) -> Vec<u64> {
        poison::or_panic(self.inner.memtables.region_ids())
    }

    pub fn is_empty(&self) -> bool {
        self.raft_groups().is_empty()
    }

    /// (first, active) file sequence numbers of `queue`.
    pub fn file_span(&self, queue: LogQueue) -> (u64, u64) {
        match queue {
            LogQueue::Append => poison::or_panic(self.inner.append.file_span()),
            LogQueue::Rewrite => poison::or_panic(self.inner.rewrite.file_span()),
        }
    }

    /// Bytes of log files of both queues.
    pub fn get_used_size(&self) -> usize {
        poison::or_panic(
            self.inner.append.total_size().and_then(|a| Ok(a + self.inner.rewrite.total_size()?)),
        ) as usize
    }

    pub fn path(&self) -> &str {
        &self.inner.cfg.dir
    }

    /// Purges files no longer needed: rewrites lagging regions (and regions whose deletions
    /// must be made durable) into the rewrite queue, removes append files below the oldest
    /// live one, and returns the regions that should be compacted (too many lagging entries
    /// to rewrite).
    /// Once the engine is stopped (`halt.rs`) it returns the stored error.
    pub fn purge_expired_files(&self) -> Result<Vec<u64>> {
        self.inner.purge()
    }

    /// (live entries, bytes of the entry index): the index memory figure.
    /// (A poisoned index lock panics here: the signature has no error; `poison.rs`.)
    pub fn index_memory(&self) -> (usize, usize) {
        poison::or_panic(self.inner.memtables.index_stats())
    }

    /// Recycled (reserved) files currently kept.
    pub fn recycled_files(&self) -> usize {
        poison::or_panic(self.inner.append.recycled_count())
    }
}

/// The slice of entry `loc` in its decoded blob.
fn slice_entry<'a>(blob: &'a [u8], loc: &EntryLoc) -> Result<&'a [u8]> {
    let s = loc.entry_offset as usize;
    let e = s + loc.entry_len as usize;
    blob.get(s..e).ok_or_else(|| {
        Error::corruption(format!(
            "{}: entry at {s}..{e} outside its {}-byte blob at offset {}",
            loc.file(),
            blob.len(),
            loc.blob_offset()
        ))
    })
}

impl Inner {
    fn pipe(&self, q: LogQueue) -> &SinglePipe {
        match q {
            LogQueue::Append => &self.append,
            LogQueue::Rewrite => &self.rewrite,
        }
    }

    fn read_blob(&self, loc: &EntryLoc) -> Result<Vec<u8>> {
        let id = loc.file();
        let raw = self.pipe(id.queue).read(id.seq, loc.blob_offset(), loc.blob_len() as usize)?;
        let r = decode_entries_block(&raw, loc.compression()).map_err(|e| match e {
            Error::Corruption(m) => Error::Corruption(format!("{id} at offset {}: {m}", loc.blob_offset())),
            e => e,
        });
        r
    }

    fn fetch(
        &self,
        region: u64,
        begin: u64,
        end: u64,
        max_size: Option<usize>,
        mut out: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        if end <= begin {
            return Ok(());
        }
        let locs: Vec<EntryLoc> = self.memtables.read(region, |r| -> Result<Vec<EntryLoc>> {
            let Some(r) = r else { return Ok(Vec::new()) };
            let Some(last) = r.last_index() else { return Err(Error::EntryNotFound) };
            if begin < r.first_index {
                return Err(Error::EntryCompacted);
            }
            if end > last + 1 {
                return Err(Error::EntryNotFound);
            }
            let mut v = Vec::with_capacity((end - begin) as usize);
            let mut total = 0usize;
            for l in r.locs_from(begin).take((end - begin) as usize) {
                total += l.entry_len as usize;
                if let Some(m) = max_size {
                    if total > m && !v.is_empty() {
                        break;
                    }
                }
                v.push(l);
            }
            Ok(v)
        })??;
        // Consecutive entries usually share a blob: read each blob once.
        let mut cached: Option<(FileId, u64, Vec<u8>)> = None;
        for loc in &locs {
            let key = (loc.file(), loc.blob_offset());
            let hit = matches!(&cached, Some((f, o, _)) if (*f, *o) == key);
            if !hit {
                cached = Some((key.0, key.1, self.read_blob(loc)?));
            }
            if let Some((_, _, blob)) = &cached {
                out(slice_entry(blob, loc)?)?;
            }
        }
        Ok(())
    }

    /// Group commit (see the module comment).
    fn group_write(&self, job: Job) -> Result<usize> {
        let slot = Arc::new(Slot::default());
        let wait = Instant::now();
        let lead_now = {
            let mut g = poison::lock(&self.group, "write group").map_err(|e| self.halt.halt(e))?;
            // Checked under the group lock: a panicking leader halts before it takes the
            // queue (`LeadGuard`), so a writer queued here is answered by it or sees this.
            self.halt.check()?;
            g.queue.push((slot.clone(), job));
            !std::mem::replace(&mut g.leader, true)
        };
        if !lead_now {
            let mut st = poison::lock(&slot.state, "write slot")?;
            loop {
                match std::mem::take(&mut *st) {
                    SlotState::Done(r) => {
                        with_perf(|p| p.write_wait_duration += wait.elapsed());
                        return r;
                    }
                    SlotState::Lead => break,
                    SlotState::Waiting => st = poison::wait(&slot.cv, st, "write slot")?,
                }
            }
        }
        with_perf(|p| p.write_wait_duration += wait.elapsed());
        // Leading: this writer's job is in the queue (pushed above, or left there by the
        // leader that handed on).
        let jobs = std::mem::take(&mut poison::lock(&self.group, "write group")?.queue);
        let guard = LeadGuard {
            group: &self.group,
            halt: &self.halt,
            slots: jobs.iter().map(|(s, _)| s.clone()).collect(),
        };
        let led = self.lead(jobs);
        std::mem::forget(guard);
        let mut mine = None;
        for (s, r) in led {
            if Arc::ptr_eq(&s, &slot) {
                mine = Some(r);
            } else {
                s.set(SlotState::Done(r));
            }
        }
        let mut g = poison::lock(&self.group, "write group")?;
        match g.queue.first() {
            // The oldest queued writer leads next (`leader` stays set): one wake-up, and
            // by the time it runs the writers just answered may have queued again.
            Some((s, _)) => s.set(SlotState::Lead),
            None => g.leader = false,
        }
        drop(g);
        mine.unwrap_or_else(|| Err(Error::Other("group commit lost a write's result".into())))
    }

    fn lead<K>(&self, jobs: Vec<(K, Job)>) -> Vec<(K, Result<usize>)> {
        let _gate = match poison::read(&self.apply_gate, "apply gate") {
            Ok(g) => g,
            Err(e) => {
                let e = self.halt.halt(e);
                return jobs.into_iter().map(|(id, _)| (id, Err(e.duplicate()))).collect();
            }
        };
        let t = Instant::now();
        let mut written: Vec<(K, Job, FileBlockHandle)> = Vec::with_capacity(jobs.len());
        let mut results = Vec::with_capacity(jobs.len());
        let mut want_sync = false;
        for (id, mut job) in jobs {
            match self.append.append(&mut job.batch) {
                Ok(h) => {
                    want_sync |= job.sync;
                    written.push((id, job, h));
                }
                // Whatever failed (the write, a rotation, the file list after the write),
                // the log's tail is no longer known: the engine stops (`halt.rs`).
                Err(e) => results.push((id, Err(self.halt.halt(e)))),
            }
        }
        with_perf(|p| p.log_write_duration += t.elapsed());
        let sync_err = if want_sync {
            let t = Instant::now();
            let r = self.append.sync().err();
            with_perf(|p| p.log_sync_duration += t.elapsed());
            r
        } else {
            None
        };
        let t = Instant::now();
        for (id, job, h) in written {
            // A failed sync stops the queue; nothing of this group is applied, since a
            // reader must not see what may not survive. (Unsynced batches of this group
            // stay unapplied too: the queue is stopped either way.)
            if let Some(e) = &sync_err {
                results.push((id, Err(e.duplicate())));
                continue;
            }
            let r = batch_ops(h.id, h.offset, &job.batch.header, job.items).and_then(|ops| {
                for (region, op) in ops {
                    self.memtables.apply(region, op)?;
                }
                Ok(job.batch.bytes.len())
            });
            // Written but not (wholly) in the index: reads and the files disagree, so the
            // engine stops (recovery rebuilds the index from the files).
            let r = r.map_err(|e| self.halt.halt(e));
            results.push((id, r));
        }
        with_perf(|p| p.apply_duration += t.elapsed());
        results
    }

    fn purge(&self) -> Result<Vec<u64>> {
        let _g = poison::lock(&self.purge_lock, "purge")?;
        // A stopped engine removes and rewrites nothing (`halt.rs`).
        self.halt.check()?;
        let (first_append, active_append) = {
            let _gate = poison::write(&self.apply_gate, "apply gate").map_err(|e| self.halt.halt(e))?;
            self.append.file_span()?
        };
        // Everything below the active file at this point may be purged; deletions made
        // from now on land in the active file or later ones.
        let dirty = self.memtables.take_dirty()?;
        let r = self.purge_inner(first_append, active_append, &dirty);
        if r.is_err() {
            self.memtables.restore_dirty(dirty)?;
        }
        r
    }

    fn purge_inner(
        &self,
        first_append: FileSeq,
        active_append: FileSeq,
        dirty: &HashSet<u64>,
    ) -> Result<Vec<u64>> {
        let cfg = &self.cfg;
        let needs_rewrite = self.append.total_size()? > cfg.purge_threshold.0 && active_append > first_append;
        let (rewrite_wm, compact_wm) = if needs_rewrite {
            (
                self.append.file_at(REWRITE_RATIO)?.min(active_append - 1),
                self.append.file_at(FORCE_COMPACT_RATIO)?.min(active_append - 1),
            )
        } else {
            (0, 0)
        };
        // Rewrite queue garbage.
        let rewrite_total = self.rewrite.total_size()?;
        let mut rewrite_live = 0u64;
        self.memtables.for_each(|_, r| {
            for e in r.locs().take_while(|e| e.in_rewrite()) {
                rewrite_live += e.entry_len as u64;
            }
            for (k, v) in &r.kvs {
                if v.file.queue == LogQueue::Rewrite {
                    rewrite_live += (k.len() + v.value.len()) as u64;
                }
            }
        })?;
        let rewrite_threshold = cfg.purge_rewrite_threshold.map_or(0, |s| s.0);
        let full_rewrite = rewrite_total > rewrite_threshold
            && rewrite_total > 0
            && 1.0 - (rewrite_live as f64 / rewrite_total as f64) > cfg.purge_rewrite_garbage_ratio;

        // Choose the work per region.
        let mut should_compact = Vec::new();
        let mut plans: Vec<(u64, bool)> = Vec::new(); // (region, snapshot with Clean)
        self.memtables.for_each(|id, r| {
            let snapshot = dirty.contains(&id) || (full_rewrite && r.has_rewrite_data());
            let lagging = needs_rewrite && r.min_append_seq().is_some_and(|s| s <= rewrite_wm);
            if lagging && !snapshot {
                let old_entries = r.count_entries(|f| f.queue == LogQueue::Append && f.seq <= rewrite_wm);
                if r.min_append_seq().is_some_and(|s| s < compact_wm)
                    && old_entries > MAX_REWRITE_ENTRIES_PER_REGION
                {
                    should_compact.push(id);
                    return;
                }
            }
            if snapshot || lagging {
                plans.push((id, snapshot));
            }
        })?;
        // Cleaned regions that are dirty are gone from the table: a Clean alone.
        let present: HashSet<u64> = plans.iter().map(|p| p.0).collect();
        let mut cleans: Vec<u64> = dirty.iter().copied().filter(|id| !present.contains(id)).collect();
        cleans.sort_unstable();
        plans.sort_unstable();

        if full_rewrite {
            self.rewrite.rotate()?;
        }
        let rewrite_first_new = self.rewrite.file_span()?.1;
        let mut out = RewriteWriter::new(self);
        for id in cleans {
            let still_absent = self.memtables.read(id, |r| r.is_none())?;
            if still_absent {
                let mut b = LogBatch::default();
                b.add_command(id, Command::Clean);
                out.push(b, Vec::new())?;
            }
        }
        for (id, snapshot) in plans {
            self.rewrite_region(&mut out, id, snapshot, rewrite_wm)?;
        }
        out.finish()?;

        if full_rewrite {
            self.rewrite.purge_to(rewrite_first_new)?;
        }
        // Append files below the oldest one still holding live data.
        let mut min_live = active_append;
        self.memtables.for_each(|_, r| {
            if let Some(s) = r.min_append_seq() {
                min_live = min_live.min(s);
            }
        })?;
        self.append.purge_to(min_live)?;
        should_compact.sort_unstable();
        Ok(should_compact)
    }

    /// Copies region `id`'s data below the watermark (or, for a snapshot, everything of it
    /// in the rewrite queue too, after a Clean) into the rewrite queue.
    fn rewrite_region(&self, out: &mut RewriteWriter, id: u64, snapshot: bool, wm: FileSeq) -> Result<()> {
        let pick = |f: FileId| {
            (snapshot && f.queue == LogQueue::Rewrite) || (f.queue == LogQueue::Append && f.seq <= wm)
        };
        let (first, locs, kvs) = self.memtables.read(id, |r| {
            let Some(r) = r else { return (0, Vec::new(), Vec::new()) };
            // Live entries sit in files in index order, so the picked ones are a run.
            let start = r.locs().position(|e| pick(e.file())).unwrap_or(r.len());
            let locs: Vec<EntryLoc> = r.locs().skip(start).take_while(|e| pick(e.file())).collect();
            let kvs: Vec<(Vec<u8>, KvLoc)> =
                r.kvs.iter().filter(|(_, v)| pick(v.file)).map(|(k, v)| (k.clone(), v.clone())).collect();
            (r.first_index + start as u64, locs, kvs)
        })?;
        if !snapshot && locs.is_empty() && kvs.is_empty() {
            return Ok(());
        }
        let mut entries = Vec::with_capacity(locs.len());
        let mut cached: Option<((FileId, u64), Vec<u8>)> = None;
        for l in &locs {
            let key = (l.file(), l.blob_offset());
            if cached.as_ref().map(|c| c.0) != Some(key) {
                cached = Some((key, self.read_blob(l)?));
            }
            if let Some((_, blob)) = &cached {
                entries.push(slice_entry(blob, l)?.to_vec());
            }
        }
        let mut b = LogBatch::default();
        if snapshot {
            b.add_command(id, Command::Clean);
        }
        // A snapshot goes in one batch (batches are atomic); plain copies may be split.
        let step = if snapshot { usize::MAX } else { 4096 };
        let mut i = 0;
        let mut pending: Vec<Moved> = Vec::new();
        while i < entries.len() {
            let n = step.min(entries.len() - i);
            b.add_raw_entries(id, first + i as u64, &entries[i..i + n])?;
            pending.push(Moved::Entries {
                region: id,
                first: first + i as u64,
                old: locs[i..i + n].to_vec(),
            });
            i += n;
            if !snapshot && b.approximate_size() > REWRITE_BATCH_BYTES {
                out.push(std::mem::take(&mut b), std::mem::take(&mut pending))?;
            }
        }
        for (k, v) in kvs {
            pending.push(Moved::Kv { region: id, key: k.clone(), old: v.clone() });
            b.put_unchecked(id, k, v.value);
        }
        if !b.is_empty() {
            out.push(b, pending)?;
        }
        Ok(())
    }
}

/// What a rewrite batch moved, to repoint the index once it is written.
enum Moved {
    Entries { region: u64, first: u64, old: Vec<EntryLoc> },
    Kv { region: u64, key: Vec<u8>, old: KvLoc },
}

/// Writes rewrite batches and repoints the index at them; syncs at the end.
struct RewriteWriter<'a> {
    inner: &'a Inner,
    wrote: bool,
}

impl<'a> RewriteWriter<'a> {
    fn new(inner: &'a Inner) -> RewriteWriter<'a> {
        RewriteWriter { inner, wrote: false }
    }

    fn push(&mut self, batch: LogBatch, moved: Vec<Moved>) -> Result<()> {
        let mut enc = batch.encode(
            self.inner.cfg.batch_compression_threshold.0 as usize,
            self.inner.cfg.compression_level,
        )?;
        let h = self.inner.rewrite.append(&mut enc)?;
        self.wrote = true;
        // New locations, item by item, from the written batch.
        let ops = batch_ops(h.id, h.offset, &enc.header, batch.items)?;
        let mut new_entries: HashMap<(u64, u64), NewRun> = HashMap::new();
        for (region, op) in ops {
            if let Op::Append(run) = op {
                new_entries.insert((region, run.first), run);
            }
        }
        for m in moved {
            match m {
                Moved::Entries { region, first, old } => {
                    let Some(new) = new_entries.remove(&(region, first)) else { continue };
                    // Only where nothing newer replaced the entries meanwhile.
                    self.inner.memtables.with_region_mut(region, |r| {
                        if let Some(r) = r {
                            r.repoint(&old, &new);
                        }
                    })?;
                }
                Moved::Kv { region, key, old } => {
                    self.inner.memtables.with_region_mut(region, |r| {
                        if let Some(cur) = r.and_then(|r| r.kvs.get_mut(&key)) {
                            if *cur == old {
                                cur.file = h.id;
                            }
                        }
                    })?;
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        if self.wrote {
            self.inner.rewrite.sync()?;
        }
        Ok(())
    }
}

impl<F, P> Engine<F, P> {
    /// Swaps the calling thread's perf context (raft-engine's `take_perf_context` shape is
    /// in `perf`); kept here so the engine type documents where the figures come from.
    #[doc(hidden)]
    pub fn perf_context_snapshot() -> PerfContext {
        crate::perf::get_perf_context()
    }
}
