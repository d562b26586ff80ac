//! The state machine on the Shale KV engine: openraft's [`RaftStateMachine`] and
//! [`RaftSnapshotBuilder`].
//!
//! One Shale database holds, in the default column family:
//!
//! ```text
//! "d" + user key      -> user value           (the replicated key-values)
//! "m/applied"         -> JSON Option<LogId>   (last applied log id)
//! "m/membership"      -> JSON StoredMembership
//! "m/snapshot"        -> meta_len (u32 LE) | JSON SnapshotMeta | snapshot bytes
//! ```
//!
//! `apply` puts the data of its entries, the last applied log id and the membership in one
//! `WriteBatch`: after a crash the data and the applied id agree, and openraft re-applies the
//! rest from the log. A snapshot is built from an iterator over one DB snapshot (so the data,
//! the applied id and the membership it records are of the same instant) in the format of
//! [`crate::snapshot_format`]; it is kept under `m/snapshot` (written synced) so
//! `get_current_snapshot` survives a restart. Installing a snapshot is one `WriteBatch`:
//! a range deletion of every user key, the snapshot's key-values, the applied id, the
//! membership and the snapshot itself, written synced: it happens whole or not at all.

// openraft's traits fix the error type (`StorageError`, large); the helpers return it too.
#![allow(clippy::result_large_err)]

use std::io::Cursor;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use openraft::storage::{RaftStateMachine, Snapshot, SnapshotMeta};
use openraft::{
    AnyError, Entry, EntryPayload, ErrorSubject, ErrorVerb, LogId, OptionalSend, RaftSnapshotBuilder,
    StorageError, StorageIOError, StoredMembership,
};
use shale::{Direction, IteratorMode, Options, WriteBatch, WriteOptions, DB};

use crate::snapshot_format::{self, SnapshotWriter};
use crate::{Node, NodeId, Request, Response, TypeConfig};

const DATA_PREFIX: u8 = b'd';
const DATA_END: &[u8] = b"e";
const KEY_APPLIED: &[u8] = b"m/applied";
const KEY_MEMBERSHIP: &[u8] = b"m/membership";
const KEY_SNAPSHOT: &[u8] = b"m/snapshot";

type StorageResult<T> = Result<T, StorageError<NodeId>>;
type Membership = StoredMembership<NodeId, Node>;

/// Key-value pairs in key order.
pub type KeyValues = Vec<(Vec<u8>, Vec<u8>)>;

fn sm_err(verb: ErrorVerb, e: impl std::fmt::Display) -> StorageError<NodeId> {
    StorageIOError::new(ErrorSubject::StateMachine, verb, AnyError::error(e.to_string())).into()
}

fn snap_err(verb: ErrorVerb, e: impl std::fmt::Display) -> StorageError<NodeId> {
    StorageIOError::new(ErrorSubject::Snapshot(None), verb, AnyError::error(e.to_string())).into()
}

fn data_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(DATA_PREFIX);
    k.extend_from_slice(key);
    k
}

/// The replicated key-value state machine. Clones share the database (the snapshot builder
/// and the example's read path are clones).
#[derive(Clone)]
pub struct ShaleStateMachine {
    db: Arc<DB>,
}

impl ShaleStateMachine {
    /// Opens (creating when missing) the state machine's database in `dir`.
    pub fn open(dir: &std::path::Path) -> Result<ShaleStateMachine, shale::Error> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir)?;
        Ok(ShaleStateMachine { db: Arc::new(db) })
    }

    /// The database underneath.
    pub fn db(&self) -> &Arc<DB> {
        &self.db
    }

    /// The value of a user key as the state machine has it now (no Raft read barrier: callers
    /// wanting a linearizable read ask the leader's `ensure_linearizable` first).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, shale::Error> {
        self.db.get(data_key(key))
    }

    /// Every user key-value, in key order (for checks and tools).
    pub fn scan(&self) -> Result<KeyValues, shale::Error> {
        let mut out = Vec::new();
        for kv in self.db.iterator(IteratorMode::From(&[DATA_PREFIX], Direction::Forward)) {
            let (k, v) = kv?;
            if k.first() != Some(&DATA_PREFIX) {
                break;
            }
            out.push((k[1..].to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    fn read_json<T: serde::de::DeserializeOwned>(&self, key: &[u8]) -> StorageResult<Option<T>> {
        match self.db.get(key).map_err(|e| sm_err(ErrorVerb::Read, e))? {
            None => Ok(None),
            Some(v) => serde_json::from_slice(&v).map(Some).map_err(|e| sm_err(ErrorVerb::Read, e)),
        }
    }

    fn current_snapshot(&self) -> StorageResult<Option<Snapshot<TypeConfig>>> {
        let v = match self.db.get(KEY_SNAPSHOT).map_err(|e| snap_err(ErrorVerb::Read, e))? {
            None => return Ok(None),
            Some(v) => v,
        };
        let (meta, data) = decode_stored_snapshot(&v).map_err(|e| snap_err(ErrorVerb::Read, e))?;
        Ok(Some(Snapshot { meta, snapshot: Box::new(Cursor::new(data.to_vec())) }))
    }
}

fn encode_stored_snapshot(meta: &SnapshotMeta<NodeId, Node>, data: &[u8]) -> Result<Vec<u8>, String> {
    let m = serde_json::to_vec(meta).map_err(|e| e.to_string())?;
    let ml = u32::try_from(m.len()).map_err(|_| "snapshot meta too long".to_string())?;
    let mut out = Vec::with_capacity(4 + m.len() + data.len());
    out.extend_from_slice(&ml.to_le_bytes());
    out.extend_from_slice(&m);
    out.extend_from_slice(data);
    Ok(out)
}

fn decode_stored_snapshot(v: &[u8]) -> Result<(SnapshotMeta<NodeId, Node>, &[u8]), String> {
    if v.len() < 4 {
        return Err(format!("stored snapshot of {} bytes has no meta length", v.len()));
    }
    let ml = u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as usize;
    let end =
        4usize.checked_add(ml).filter(|&e| e <= v.len()).ok_or("stored snapshot meta runs past its value")?;
    let meta = serde_json::from_slice(&v[4..end]).map_err(|e| format!("stored snapshot meta: {e}"))?;
    Ok((meta, &v[end..]))
}

fn synced() -> WriteOptions {
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    wo
}

impl RaftSnapshotBuilder<TypeConfig> for ShaleStateMachine {
    async fn build_snapshot(&mut self) -> StorageResult<Snapshot<TypeConfig>> {
        let snap = self.db.snapshot();
        let read = |key: &[u8]| -> StorageResult<Option<Vec<u8>>> {
            snap.get(key).map_err(|e| snap_err(ErrorVerb::Read, e))
        };
        let last_log_id: Option<LogId<NodeId>> = match read(KEY_APPLIED)? {
            Some(v) => serde_json::from_slice(&v).map_err(|e| snap_err(ErrorVerb::Read, e))?,
            None => None,
        };
        let last_membership: Membership = match read(KEY_MEMBERSHIP)? {
            Some(v) => serde_json::from_slice(&v).map_err(|e| snap_err(ErrorVerb::Read, e))?,
            None => Membership::default(),
        };
        let mut w = SnapshotWriter::new();
        for kv in snap.iterator(IteratorMode::From(&[DATA_PREFIX], Direction::Forward)) {
            let (k, v) = kv.map_err(|e| snap_err(ErrorVerb::Read, e))?;
            if k.first() != Some(&DATA_PREFIX) {
                break;
            }
            w.add(&k[1..], &v).map_err(|e| snap_err(ErrorVerb::Read, e))?;
        }
        drop(snap);
        let data = w.finish();
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let snapshot_id = match &last_log_id {
            Some(l) => format!("{}-{}-{}", l.leader_id, l.index, nanos),
            None => format!("none-{nanos}"),
        };
        let meta = SnapshotMeta { last_log_id, last_membership, snapshot_id };
        let stored = encode_stored_snapshot(&meta, &data).map_err(|e| snap_err(ErrorVerb::Write, e))?;
        self.db
            .write_opt(
                {
                    let mut b = WriteBatch::default();
                    b.put(KEY_SNAPSHOT, stored);
                    b
                },
                &synced(),
            )
            .map_err(|e| snap_err(ErrorVerb::Write, e))?;
        Ok(Snapshot { meta, snapshot: Box::new(Cursor::new(data)) })
    }
}

impl RaftStateMachine<TypeConfig> for ShaleStateMachine {
    type SnapshotBuilder = ShaleStateMachine;

    async fn applied_state(&mut self) -> StorageResult<(Option<LogId<NodeId>>, Membership)> {
        let applied: Option<LogId<NodeId>> = self.read_json::<Option<LogId<NodeId>>>(KEY_APPLIED)?.flatten();
        let membership: Membership = self.read_json(KEY_MEMBERSHIP)?.unwrap_or_default();
        Ok((applied, membership))
    }

    async fn apply<I>(&mut self, entries: I) -> StorageResult<Vec<Response>>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = WriteBatch::default();
        let mut responses = Vec::new();
        let mut last: Option<LogId<NodeId>> = None;
        let mut membership: Option<Membership> = None;
        // What this batch wrote so far, for a compare-and-set later in the same batch.
        let mut pending: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
        for e in entries {
            last = Some(e.log_id);
            match e.payload {
                EntryPayload::Blank => responses.push(Response::default()),
                EntryPayload::Normal(req) => match req {
                    Request::Set { key, value } => {
                        batch.put(data_key(key.as_bytes()), value.as_bytes());
                        pending.insert(key, Some(value));
                        responses.push(Response::default());
                    }
                    Request::Delete { key } => {
                        batch.delete(data_key(key.as_bytes()));
                        pending.insert(key, None);
                        responses.push(Response::default());
                    }
                    Request::Cas { key, expected, new } => {
                        let current = match pending.get(&key) {
                            Some(v) => v.clone(),
                            None => self
                                .db
                                .get(data_key(key.as_bytes()))
                                .map_err(|e| sm_err(ErrorVerb::Read, e))?
                                .map(|v| String::from_utf8_lossy(&v).into_owned()),
                        };
                        let swapped = current == expected;
                        if swapped {
                            batch.put(data_key(key.as_bytes()), new.as_bytes());
                            pending.insert(key, Some(new));
                        }
                        responses.push(Response { value: current, swapped });
                    }
                },
                EntryPayload::Membership(m) => {
                    membership = Some(StoredMembership::new(Some(e.log_id), m));
                    responses.push(Response::default());
                }
            }
        }
        if last.is_none() {
            return Ok(responses);
        }
        let applied = serde_json::to_vec(&last).map_err(|e| sm_err(ErrorVerb::Write, e))?;
        batch.put(KEY_APPLIED, applied);
        if let Some(m) = membership {
            batch.put(KEY_MEMBERSHIP, serde_json::to_vec(&m).map_err(|e| sm_err(ErrorVerb::Write, e))?);
        }
        // Not synced: the log is, and openraft re-applies what a crash lost.
        self.db.write(batch).map_err(|e| sm_err(ErrorVerb::Write, e))?;
        Ok(responses)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> StorageResult<Box<Cursor<Vec<u8>>>> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, Node>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> StorageResult<()> {
        let data = snapshot.into_inner();
        let mut batch = WriteBatch::default();
        batch.delete_range(&[DATA_PREFIX][..], DATA_END);
        // A corrupt snapshot is refused before anything is written.
        snapshot_format::decode(&data, |k, v| batch.put(data_key(k), v))
            .map_err(|e| snap_err(ErrorVerb::Read, e))?;
        batch.put(
            KEY_APPLIED,
            serde_json::to_vec(&meta.last_log_id).map_err(|e| snap_err(ErrorVerb::Write, e))?,
        );
        batch.put(
            KEY_MEMBERSHIP,
            serde_json::to_vec(&meta.last_membership).map_err(|e| snap_err(ErrorVerb::Write, e))?,
        );
        batch.put(
            KEY_SNAPSHOT,
            encode_stored_snapshot(meta, &data).map_err(|e| snap_err(ErrorVerb::Write, e))?,
        );
        self.db.write_opt(batch, &synced()).map_err(|e| snap_err(ErrorVerb::Write, e))
    }

    async fn get_current_snapshot(&mut self) -> StorageResult<Option<Snapshot<TypeConfig>>> {
        self.current_snapshot()
    }
}
