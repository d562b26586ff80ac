//! The Raft log of one group on shale-raftlog: openraft's [`RaftLogStorage`] and
//! [`RaftLogReader`].
//!
//! One raft-engine region per Raft group. Entry `i` of the Raft log is entry `i` of the region,
//! its bytes the JSON encoding of openraft's `Entry`. The vote, the committed log id and the
//! last purged log id are the region's key-values (`vote`, `committed`, `purged`), JSON too.
//!
//! raft-engine has no "truncate the tail" command: an append from index `i` cuts off every entry
//! at or after `i`. So `truncate(i)` rewrites entry `i - 1` with its own bytes (the log keeps
//! `[first, i - 1]`), or, when nothing before `i` is left, compacts past the last entry. A purge
//! writes the `purged` key and the `Compact` command in one batch, so the two never disagree
//! after a crash.
//!
//! Durability: `append` writes its batch unsynced and a sync thread calls openraft's callback
//! only after the engine synced it (one sync for every append waiting: group commit); `save_vote` and `purge` are synced too. `save_committed` is not
//! (openraft does not require it: a lost committed id only means entries are re-applied later).

// openraft's traits fix the error type (`StorageError`, large); the helpers return it too.
#![allow(clippy::result_large_err)]

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::{
    AnyError, Entry, ErrorSubject, ErrorVerb, LogId, OptionalSend, RaftLogId, StorageError, StorageIOError,
    Vote,
};
use shale_raftlog::{Command, Config, Engine, LogBatch};

use crate::{NodeId, TypeConfig};

const KEY_VOTE: &[u8] = b"vote";
const KEY_COMMITTED: &[u8] = b"committed";
const KEY_PURGED: &[u8] = b"purged";

/// The largest encoded size of the entries put in one `LogBatch` before a new batch starts
/// (raft-engine refuses batches past 128 MiB of entries; stay far below).
const BATCH_BYTES: usize = 16 << 20;

type StorageResult<T> = Result<T, StorageError<NodeId>>;

fn io_err(
    subject: ErrorSubject<NodeId>,
    verb: ErrorVerb,
    e: impl std::error::Error + 'static,
) -> StorageError<NodeId> {
    StorageIOError::new(subject, verb, AnyError::new(&e)).into()
}

fn msg_err(subject: ErrorSubject<NodeId>, verb: ErrorVerb, msg: String) -> StorageError<NodeId> {
    StorageIOError::new(subject, verb, AnyError::error(msg)).into()
}

/// The Raft log of one group, in a shale-raftlog engine that may hold other groups too.
/// Clones share the engine (openraft's log reader is a clone).
#[derive(Clone)]
pub struct ShaleLogStore {
    engine: Arc<Engine>,
    region: u64,
    syncer: Arc<Syncer>,
}

/// Group commit of appends: `append` writes its batch unsynced (readable at once) and hands
/// openraft's callback to this thread, which syncs the engine once for every callback waiting
/// and then calls them, in append order. openraft goes on while the disk syncs, and concurrent
/// client writes share one fdatasync.
struct Syncer {
    tx: Option<std::sync::mpsc::Sender<LogFlushed<TypeConfig>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Syncer {
    fn start(engine: Arc<Engine>) -> std::io::Result<Syncer> {
        let (tx, rx) = std::sync::mpsc::channel::<LogFlushed<TypeConfig>>();
        let thread = std::thread::Builder::new().name("raftlog-sync".to_string()).spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut waiting = vec![first];
                while let Ok(cb) = rx.try_recv() {
                    waiting.push(cb);
                }
                let r = engine.sync().map_err(|e| e.to_string());
                for cb in waiting {
                    cb.log_io_completed(r.clone().map_err(std::io::Error::other));
                }
            }
        })?;
        Ok(Syncer { tx: Some(tx), thread: Some(thread) })
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        // Closing the channel ends the thread after it synced what is queued; joining it
        // releases its engine handle before the store is reported closed.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl ShaleLogStore {
    /// Opens (creating when missing) the log engine in `dir` and the log of group `region`.
    pub fn open(dir: &std::path::Path, region: u64) -> Result<ShaleLogStore, shale_raftlog::Error> {
        let cfg = Config { dir: dir.to_string_lossy().into_owned(), ..Config::default() };
        let engine = Engine::open(cfg)?;
        ShaleLogStore::with_engine(Arc::new(engine), region)
            .map_err(|e| shale_raftlog::Error::Other(Box::new(e)))
    }

    /// The log of group `region` in an engine already open (several groups share one engine).
    /// Starts the thread that syncs appends.
    pub fn with_engine(engine: Arc<Engine>, region: u64) -> std::io::Result<ShaleLogStore> {
        let syncer = Arc::new(Syncer::start(engine.clone())?);
        Ok(ShaleLogStore { engine, region, syncer })
    }

    /// The engine underneath.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        key: &[u8],
        subject: ErrorSubject<NodeId>,
    ) -> StorageResult<Option<T>> {
        match self.engine.get(self.region, key) {
            None => Ok(None),
            Some(v) => serde_json::from_slice(&v).map(Some).map_err(|e| io_err(subject, ErrorVerb::Read, e)),
        }
    }

    fn put_json<T: serde::Serialize>(
        &self,
        batch: &mut LogBatch,
        key: &[u8],
        v: &T,
        subject: ErrorSubject<NodeId>,
    ) -> StorageResult<()> {
        let bytes = serde_json::to_vec(v).map_err(|e| io_err(subject.clone(), ErrorVerb::Write, e))?;
        batch.put(self.region, key.to_vec(), bytes).map_err(|e| io_err(subject, ErrorVerb::Write, e))
    }

    fn write(&self, batch: &mut LogBatch, sync: bool, subject: ErrorSubject<NodeId>) -> StorageResult<()> {
        self.engine.write(batch, sync).map(|_| ()).map_err(|e| io_err(subject, ErrorVerb::Write, e))
    }

    fn decode_entry(&self, index: u64, bytes: &[u8]) -> StorageResult<Entry<TypeConfig>> {
        let e: Entry<TypeConfig> = serde_json::from_slice(bytes)
            .map_err(|e| io_err(ErrorSubject::LogIndex(index), ErrorVerb::Read, e))?;
        if e.log_id.index != index {
            return Err(msg_err(
                ErrorSubject::LogIndex(index),
                ErrorVerb::Read,
                format!(
                    "raft log of group {}: entry at index {index} says it is index {}",
                    self.region, e.log_id.index
                ),
            ));
        }
        Ok(e)
    }

    /// openraft appends right after the last entry (or over the tail); its test suite also
    /// appends past a hole once. raft-engine refuses a hole, so the entries before it, which
    /// can no longer be part of a contiguous log, are compacted away first.
    fn close_hole_before(&self, first: u64) -> StorageResult<()> {
        match self.engine.last_index(self.region) {
            Some(last) if first > last + 1 => {
                let mut b = LogBatch::default();
                b.add_command(self.region, Command::Compact { index: first });
                // Synced with the append that follows.
                self.write(&mut b, false, ErrorSubject::Logs)
            }
            _ => Ok(()),
        }
    }

    fn last_purged(&self) -> StorageResult<Option<LogId<NodeId>>> {
        self.get_json(KEY_PURGED, ErrorSubject::Logs)
    }

    /// The entries with indexes in `[start, end)` that the log holds (a purged or missing prefix
    /// or suffix is left out; openraft asks only for what `get_log_state` says exists).
    fn read_range(&self, start: u64, end: u64) -> StorageResult<Vec<Entry<TypeConfig>>> {
        let (first, last) = match (self.engine.first_index(self.region), self.engine.last_index(self.region))
        {
            (Some(f), Some(l)) => (f, l),
            _ => return Ok(Vec::new()),
        };
        let start = start.max(first);
        let end = end.min(last.saturating_add(1));
        if start >= end {
            return Ok(Vec::new());
        }
        let mut raw = Vec::with_capacity((end - start).min(4096) as usize);
        self.engine
            .fetch_raw_entries_to(self.region, start, end, None, &mut raw)
            .map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Read, e))?;
        raw.iter().enumerate().map(|(i, b)| self.decode_entry(start + i as u64, b)).collect()
    }
}

impl RaftLogReader<TypeConfig> for ShaleLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> StorageResult<Vec<Entry<TypeConfig>>> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => u64::MAX,
        };
        self.read_range(start, end)
    }
}

impl RaftLogStorage<TypeConfig> for ShaleLogStore {
    type LogReader = ShaleLogStore;

    async fn get_log_state(&mut self) -> StorageResult<LogState<TypeConfig>> {
        let last_purged_log_id = self.last_purged()?;
        let last_in_log = match self.engine.last_index(self.region) {
            Some(last) => {
                let raw = self
                    .engine
                    .get_raw_entry(self.region, last)
                    .map_err(|e| io_err(ErrorSubject::LogIndex(last), ErrorVerb::Read, e))?
                    .ok_or_else(|| {
                        msg_err(
                            ErrorSubject::LogIndex(last),
                            ErrorVerb::Read,
                            format!("last entry {last} is missing"),
                        )
                    })?;
                Some(*self.decode_entry(last, &raw)?.get_log_id())
            }
            None => None,
        };
        let last_log_id = match last_in_log {
            Some(l) => Some(l),
            None => last_purged_log_id,
        };
        Ok(LogState { last_purged_log_id, last_log_id })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> StorageResult<()> {
        let mut b = LogBatch::default();
        self.put_json(&mut b, KEY_VOTE, vote, ErrorSubject::Vote)?;
        self.write(&mut b, true, ErrorSubject::Vote)
    }

    async fn read_vote(&mut self) -> StorageResult<Option<Vote<NodeId>>> {
        self.get_json(KEY_VOTE, ErrorSubject::Vote)
    }

    async fn save_committed(&mut self, committed: Option<LogId<NodeId>>) -> StorageResult<()> {
        let mut b = LogBatch::default();
        self.put_json(&mut b, KEY_COMMITTED, &committed, ErrorSubject::Store)?;
        self.write(&mut b, false, ErrorSubject::Store)
    }

    async fn read_committed(&mut self) -> StorageResult<Option<LogId<NodeId>>> {
        Ok(self.get_json::<Option<LogId<NodeId>>>(KEY_COMMITTED, ErrorSubject::Store)?.flatten())
    }

    async fn append<I>(&mut self, entries: I, callback: LogFlushed<TypeConfig>) -> StorageResult<()>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = LogBatch::default();
        let mut chunk: Vec<Vec<u8>> = Vec::new();
        let mut chunk_first = 0u64;
        let mut chunk_bytes = 0usize;
        let mut next: Option<u64> = None;
        for e in entries {
            let index = e.log_id.index;
            if let Some(n) = next {
                if index != n {
                    return Err(msg_err(
                        ErrorSubject::Logs,
                        ErrorVerb::Write,
                        format!(
                            "append: entry {index} follows entry {} (entries must be consecutive)",
                            n - 1
                        ),
                    ));
                }
            }
            if next.is_none() {
                self.close_hole_before(index)?;
            }
            next = Some(index + 1);
            let bytes = serde_json::to_vec(&e)
                .map_err(|err| io_err(ErrorSubject::LogIndex(index), ErrorVerb::Write, err))?;
            if chunk.is_empty() {
                chunk_first = index;
            }
            chunk_bytes += bytes.len();
            chunk.push(bytes);
            if chunk_bytes >= BATCH_BYTES {
                batch
                    .add_raw_entries(self.region, chunk_first, &chunk)
                    .map_err(|err| io_err(ErrorSubject::Logs, ErrorVerb::Write, err))?;
                // Earlier chunks are written unsynced; the last write below syncs them all.
                self.write(&mut batch, false, ErrorSubject::Logs)?;
                chunk.clear();
                chunk_bytes = 0;
            }
        }
        if !chunk.is_empty() {
            batch
                .add_raw_entries(self.region, chunk_first, &chunk)
                .map_err(|err| io_err(ErrorSubject::Logs, ErrorVerb::Write, err))?;
        }
        // Written unsynced (readable when this returns); the sync thread calls `callback` once
        // the engine synced it.
        if let Err(e) = self.engine.write(&mut batch, false) {
            callback.log_io_completed(Err(std::io::Error::other(e.to_string())));
            return Err(io_err(ErrorSubject::Logs, ErrorVerb::Write, e));
        }
        match self.syncer.tx.as_ref().map(|tx| tx.send(callback)) {
            Some(Ok(())) => Ok(()),
            Some(Err(std::sync::mpsc::SendError(cb))) => {
                // The sync thread is gone: sync here.
                let r = self.engine.sync();
                cb.log_io_completed(r.as_ref().map(|_| ()).map_err(|e| std::io::Error::other(e.to_string())));
                r.map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Write, e))
            }
            None => Err(msg_err(ErrorSubject::Logs, ErrorVerb::Write, "the log store is closed".to_string())),
        }
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> StorageResult<()> {
        let t = log_id.index;
        let (first, last) = match (self.engine.first_index(self.region), self.engine.last_index(self.region))
        {
            (Some(f), Some(l)) => (f, l),
            _ => return Ok(()),
        };
        if t > last {
            return Ok(());
        }
        let mut b = LogBatch::default();
        if t > first {
            // Rewrite entry t - 1 with its own bytes: the append cuts off [t - 1, last] and puts
            // t - 1 back, in one atomic batch.
            let keep = t - 1;
            let raw = self
                .engine
                .get_raw_entry(self.region, keep)
                .map_err(|e| io_err(ErrorSubject::LogIndex(keep), ErrorVerb::Read, e))?
                .ok_or_else(|| {
                    msg_err(ErrorSubject::LogIndex(keep), ErrorVerb::Read, format!("entry {keep} is missing"))
                })?;
            b.add_raw_entries(self.region, keep, &[raw])
                .map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Delete, e))?;
        } else {
            // Nothing before t is left: remove every entry (the purged id is unchanged).
            b.add_command(self.region, Command::Compact { index: last + 1 });
        }
        self.write(&mut b, true, ErrorSubject::Logs)
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> StorageResult<()> {
        if let Some(p) = self.last_purged()? {
            if p.index >= log_id.index {
                return Ok(());
            }
        }
        let mut b = LogBatch::default();
        self.put_json(&mut b, KEY_PURGED, &log_id, ErrorSubject::Logs)?;
        b.add_command(self.region, Command::Compact { index: log_id.index + 1 });
        self.write(&mut b, true, ErrorSubject::Logs)?;
        // Files whose every entry is compacted away go now; a failure here loses nothing (the
        // next purge retries), so it is not the caller's error.
        let _ = self.engine.purge_expired_files();
        Ok(())
    }
}
