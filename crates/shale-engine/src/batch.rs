//! RocksDB's WriteBatch: the payload of every WAL record (db/write_batch.cc), as the engine
//! builds, decodes and applies it (`Batch`; rust-rocksdb's `WriteBatch` is the facade's
//! wrapper of it, naming families by handle where this names them by id).
//!
//! ```text
//! batch  = sequence fixed64 | count fixed32 | record*          (12-byte header)
//! record = 0x1 Value            key value        | 0x5 CF Value        cf key value
//!        | 0x0 Deletion         key              | 0x4 CF Deletion     cf key
//!        | 0x7 SingleDeletion   key              | 0x8 CF SingleDel.   cf key
//!        | 0xF RangeDeletion    begin end        | 0xE CF RangeDel.    cf begin end
//!        | 0x2 Merge            key value        | 0x6 CF Merge        cf key value
//!        | 0x3 LogData          blob             | 0xD Noop
//! key, value, begin, end, blob, xid = varint32 length | bytes;   cf = varint32 family id
//!        | 0x9 BeginPrepareXID                   | 0xA EndPrepareXID   xid
//!        | 0xB CommitXID        xid              | 0xC RollbackXID     xid
//!        | 0x15 CommitXIDAndTimestamp  commit_ts xid     (commit_ts = varint32 length | bytes)
//! ```
//! `count` counts the Value/Deletion/SingleDeletion/RangeDeletion/Merge records (not
//! LogData, Noop or the two-phase-commit markers). The sequence number is that of the first
//! counted record; each counted record takes the next one. The markers of two-phase commit
//! (RocksDB's WRITE_COMMITTED transactions, `db/twopc.rs`) frame a prepared
//! transaction in the WAL:
//! ```text
//! prepare  = header(seq, count=n) | 0x9 | n records | 0xA xid     (WAL only)
//! commit   = header(seq, count=0) | 0xB xid     (the WAL part; the memtables get the n records)
//! rollback = header(seq, count=0) | 0xC xid     (WAL only)
//! commit with a commit timestamp = header(seq, count=0) | 0x15 commit_ts xid
//! ```
//! The last is RocksDB's `MarkCommitWithTimestamp`: a WRITE_COMMITTED transaction given a
//! commit timestamp (`Transaction::SetCommitTimestamp`) commits so, and recovery applies the
//! prepared records with that timestamp in place of the last bytes of each key of a family
//! with timestamps (`db/twopc.rs`). Other tags of transactions (0x12, 0x13: write-prepared/
//! unprepared policies) are refused as NotSupported, as RocksDB's WRITE_COMMITTED database
//! refuses them, and 0x14 (DeletionWithTimestamp, never written) likewise. A blob index
//! (`0x11 key index | 0x10 cf key index`, RocksDB's PutBlobIndex) is what blob direct write
//! leaves in the WAL and the memtables in place of a large value. A wide-column entity (RocksDB's PutEntity) is
//! `0x16 key entity | 0x17 cf key entity`, the entity encoded as `wide_columns.rs` draws it.

use crate::coding::{put_length_prefixed_slice, Decoder};
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueType};

/// Bytes of the sequence + count header.
pub const HEADER_SIZE: usize = 12;

/// Record tags of db/dbformat.h that appear in batches.
pub mod tag {
    pub const DELETION: u8 = 0x0;
    pub const VALUE: u8 = 0x1;
    pub const MERGE: u8 = 0x2;
    pub const LOG_DATA: u8 = 0x3;
    pub const CF_DELETION: u8 = 0x4;
    pub const CF_VALUE: u8 = 0x5;
    pub const CF_MERGE: u8 = 0x6;
    pub const SINGLE_DELETION: u8 = 0x7;
    pub const CF_SINGLE_DELETION: u8 = 0x8;
    pub const BEGIN_PREPARE_XID: u8 = 0x9;
    pub const END_PREPARE_XID: u8 = 0xA;
    pub const COMMIT_XID: u8 = 0xB;
    pub const ROLLBACK_XID: u8 = 0xC;
    pub const NOOP: u8 = 0xD;
    pub const CF_RANGE_DELETION: u8 = 0xE;
    pub const RANGE_DELETION: u8 = 0xF;
    pub const CF_BLOB_INDEX: u8 = 0x10;
    pub const BLOB_INDEX: u8 = 0x11;
    pub const BEGIN_PERSISTED_PREPARE_XID: u8 = 0x12;
    pub const BEGIN_UNPREPARE_XID: u8 = 0x13;
    pub const DELETION_WITH_TIMESTAMP: u8 = 0x14;
    pub const COMMIT_XID_AND_TIMESTAMP: u8 = 0x15;
    pub const WIDE_COLUMN_ENTITY: u8 = 0x16;
    pub const CF_WIDE_COLUMN_ENTITY: u8 = 0x17;
}

/// The tags of a record of `vt`: (default family, a named family).
fn record_tags(vt: ValueType) -> (u8, u8) {
    match vt {
        ValueType::Value => (tag::VALUE, tag::CF_VALUE),
        ValueType::Merge => (tag::MERGE, tag::CF_MERGE),
        ValueType::Deletion => (tag::DELETION, tag::CF_DELETION),
        ValueType::SingleDeletion => (tag::SINGLE_DELETION, tag::CF_SINGLE_DELETION),
        ValueType::RangeDeletion => (tag::RANGE_DELETION, tag::CF_RANGE_DELETION),
        ValueType::BlobIndex => (tag::BLOB_INDEX, tag::CF_BLOB_INDEX),
        ValueType::WideColumnEntity => (tag::WIDE_COLUMN_ENTITY, tag::CF_WIDE_COLUMN_ENTITY),
    }
}

/// One counted record of a batch, as the engine applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    pub cf_id: u32,
    pub value_type: ValueType,
    pub key: &'a [u8],
    /// The value of a Put or Merge, the end key of a RangeDeletion, empty for deletions.
    pub value: &'a [u8],
}

/// What [`Batch::with_blob_indexes`] asks of each Put and PutEntity: `(family, type, key,
/// value)` to what replaces the value (a Put's blob index; an entity re-serialized with
/// blob columns), or None to keep it.
pub type BlobValueFn<'a> = dyn FnMut(u32, ValueType, &[u8], &[u8]) -> Result<Option<Vec<u8>>> + 'a;

/// An atomic group of writes, encoded the way RocksDB writes it to the WAL. Families are
/// named by id (0: the default family).
#[derive(Clone, Debug)]
pub struct Batch {
    rep: Vec<u8>,
    /// Whether a Merge record is present; None when unknown (a batch from `from_data`).
    has_merge: Option<bool>,
    /// RocksDB's WAL termination point: the WAL gets only the bytes before it (with the
    /// count then), the memtables the whole batch (a two-phase commit).
    pub wal_end: Option<(usize, u32)>,
    /// Records written with a user-defined timestamp: per (family, timestamp size) their
    /// count, checked against the families when the batch is written (`db/read.rs`).
    pub ts_writes: Vec<TsWrites>,
}

/// The records of one family written with timestamps of one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TsWrites {
    pub cf: u32,
    pub ts_size: usize,
    pub count: u32,
}

impl Default for Batch {
    fn default() -> Self {
        Self::new()
    }
}

thread_local! {
    /// The buffer of the last batch this thread dropped, for the next batch it makes: a
    /// writer that makes and writes one batch a put (rust-rocksdb's `put`, which consumes
    /// its batch) reuses one buffer instead of allocating and freeing one each time, as
    /// db_bench reuses its `WriteBatch`.
    static SPARE_REP: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The largest buffer kept as [`SPARE_REP`] (a larger one is freed).
const SPARE_REP_MAX: usize = 16 << 10;

/// An empty buffer with room for `capacity` bytes: this thread's spare when it is large
/// enough.
fn fresh_rep(capacity: usize) -> Vec<u8> {
    let spare = SPARE_REP.try_with(|s| s.take()).unwrap_or_default();
    if spare.capacity() >= capacity {
        spare
    } else {
        Vec::with_capacity(capacity)
    }
}

impl Drop for Batch {
    /// Keeps a small buffer as this thread's spare (see [`SPARE_REP`]).
    fn drop(&mut self) {
        let cap = self.rep.capacity();
        if cap != 0 && cap <= SPARE_REP_MAX {
            let mut rep = std::mem::take(&mut self.rep);
            rep.clear();
            // A thread being torn down has no spare any more: the buffer is freed.
            let _ = SPARE_REP.try_with(|s| s.set(rep));
        }
    }
}

/// A decoded record, counted or not.
pub enum Record<'a> {
    Entry(BatchEntry<'a>),
    LogData,
    Noop,
    /// A two-phase-commit marker (`Marker`).
    Marker(Marker<'a>),
}

/// A two-phase-commit marker of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker<'a> {
    BeginPrepare,
    EndPrepare(&'a [u8]),
    Commit(&'a [u8]),
    /// CommitXIDAndTimestamp: the transaction `xid` committed at timestamp `ts`.
    CommitWithTimestamp {
        xid: &'a [u8],
        ts: &'a [u8],
    },
    Rollback(&'a [u8]),
}

/// A record as WAL recovery sees it: an entry or a marker.
pub enum WalRecord<'a> {
    Entry(BatchEntry<'a>),
    Marker(Marker<'a>),
}

/// The bytes a batch of one record needs whose key and value hold `key_value_bytes`: the
/// header, the tag, at most 5 bytes each of family id, key length and value length.
pub fn one_record_capacity(key_value_bytes: usize) -> usize {
    (HEADER_SIZE + 1 + 5 + 5 + 5).saturating_add(key_value_bytes)
}

impl Batch {
    /// An empty batch: a zero header.
    pub fn new() -> Self {
        let mut rep = fresh_rep(HEADER_SIZE);
        rep.resize(HEADER_SIZE, 0);
        Batch { rep, has_merge: Some(false), wal_end: None, ts_writes: Vec::new() }
    }

    /// An empty batch with room for `capacity_bytes` bytes of records.
    pub fn with_capacity_bytes(capacity_bytes: usize) -> Self {
        let mut rep = fresh_rep(capacity_bytes.max(HEADER_SIZE));
        rep.resize(HEADER_SIZE, 0);
        Batch { rep, has_merge: Some(false), wal_end: None, ts_writes: Vec::new() }
    }

    /// A batch over bytes from [`data`](Self::data) or a WAL record. Nothing is checked
    /// here; a malformed batch fails when it is iterated or applied.
    pub fn from_data(data: &[u8]) -> Self {
        Batch { rep: data.to_vec(), has_merge: None, wal_end: None, ts_writes: Vec::new() }
    }

    /// The number of counted records (the header's count).
    pub fn len(&self) -> usize {
        self.count() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Size of the encoded batch, header included.
    pub fn size_in_bytes(&self) -> usize {
        self.rep.len()
    }

    /// The encoded batch.
    pub fn data(&self) -> &[u8] {
        &self.rep
    }

    /// The header's count (0 for a batch shorter than its header).
    pub fn count(&self) -> u32 {
        match self.rep.get(8..HEADER_SIZE) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => 0,
        }
    }

    /// The sequence number of the first record (0 for a batch shorter than its header).
    pub fn sequence(&self) -> SequenceNumber {
        match self.rep.get(..8) {
            Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
            None => 0,
        }
    }

    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        self.ensure_header();
        self.rep[..8].copy_from_slice(&seq.to_le_bytes());
    }

    fn set_count(&mut self, n: u32) {
        self.ensure_header();
        self.rep[8..HEADER_SIZE].copy_from_slice(&n.to_le_bytes());
    }

    /// A batch from `from_data` may be shorter than a header; writes first zero-fill one.
    fn ensure_header(&mut self) {
        if self.rep.len() < HEADER_SIZE {
            self.rep.resize(HEADER_SIZE, 0);
        }
    }

    /// RocksDB refuses (and rust-rocksdb then ignores) keys or values over 4 GiB.
    fn too_large(parts: &[&[u8]]) -> bool {
        parts.iter().any(|p| p.len() > u32::MAX as usize)
    }

    fn add_kv(&mut self, cf: u32, tags: (u8, u8), key: &[u8], value: Option<&[u8]>) {
        if Self::too_large(&[key, value.unwrap_or(&[])]) {
            return;
        }
        // The whole record at once (tag, family varint, two length varints, key and value):
        // growing the buffer piece by piece reallocated it three or four times for one put.
        let v_len = value.map_or(0, |v| v.len() + 5);
        self.rep.reserve(HEADER_SIZE.saturating_sub(self.rep.len()) + 1 + 5 + 5 + key.len() + v_len);
        self.ensure_header();
        self.set_count(self.count().wrapping_add(1));
        // Tag, family and key length, then value length, each gathered on the stack and
        // appended in one piece (not byte by byte).
        let mut head = [0u8; 11];
        let mut n = 1;
        if cf == 0 {
            head[0] = tags.0;
        } else {
            head[0] = tags.1;
            n = varint_into(&mut head, n, cf);
        }
        n = varint_into(&mut head, n, key.len() as u32);
        self.rep.extend_from_slice(&head[..n]);
        self.rep.extend_from_slice(key);
        if let Some(v) = value {
            let mut len = [0u8; 5];
            let m = varint_into(&mut len, 0, v.len() as u32);
            self.rep.extend_from_slice(&len[..m]);
            self.rep.extend_from_slice(v);
        }
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.add_kv(0, (tag::VALUE, tag::CF_VALUE), key.as_ref(), Some(value.as_ref()));
    }

    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, cf: u32, key: K, value: V) {
        self.add_kv(cf, (tag::VALUE, tag::CF_VALUE), key.as_ref(), Some(value.as_ref()));
    }

    /// A wide-column entity (RocksDB's `WriteBatch::PutEntity`; rust-rocksdb 0.25 has no such
    /// method): `columns` as (name, value) pairs in any order, sorted and encoded as
    /// `wide_columns.rs` draws it. The default column (empty name) is what `get` returns.
    /// Duplicate names are refused, as RocksDB refuses them.
    pub fn put_entity_cf<K: AsRef<[u8]>>(
        &mut self,
        cf: u32,
        key: K,
        columns: &[(&[u8], &[u8])],
    ) -> Result<()> {
        self.put_entity_id(cf, key.as_ref(), columns)
    }

    /// `put_entity_cf` in the default column family.
    pub fn put_entity<K: AsRef<[u8]>>(&mut self, key: K, columns: &[(&[u8], &[u8])]) -> Result<()> {
        self.put_entity_id(0, key.as_ref(), columns)
    }

    fn put_entity_id(&mut self, cf_id: u32, key: &[u8], columns: &[(&[u8], &[u8])]) -> Result<()> {
        let entity = crate::wide_columns::serialize(columns)?;
        if u32::try_from(key.len()).is_err() || u32::try_from(entity.len()).is_err() {
            return Err(Error::invalid_argument("wide column entity is too large"));
        }
        self.add_kv(cf_id, (tag::WIDE_COLUMN_ENTITY, tag::CF_WIDE_COLUMN_ENTITY), key, Some(&entity));
        Ok(())
    }

    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, key: K, value: V) {
        self.add_kv(0, (tag::MERGE, tag::CF_MERGE), key.as_ref(), Some(value.as_ref()));
        self.has_merge = Some(true);
    }

    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(&mut self, cf: u32, key: K, value: V) {
        self.add_kv(cf, (tag::MERGE, tag::CF_MERGE), key.as_ref(), Some(value.as_ref()));
        self.has_merge = Some(true);
    }

    pub fn delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.add_kv(0, (tag::DELETION, tag::CF_DELETION), key.as_ref(), None);
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&mut self, cf: u32, key: K) {
        self.add_kv(cf, (tag::DELETION, tag::CF_DELETION), key.as_ref(), None);
    }

    pub fn single_delete<K: AsRef<[u8]>>(&mut self, key: K) {
        self.add_kv(0, (tag::SINGLE_DELETION, tag::CF_SINGLE_DELETION), key.as_ref(), None);
    }

    pub fn single_delete_cf<K: AsRef<[u8]>>(&mut self, cf: u32, key: K) {
        let tags = (tag::SINGLE_DELETION, tag::CF_SINGLE_DELETION);
        self.add_kv(cf, tags, key.as_ref(), None);
    }

    /// Deletes the keys in `[from, to)`.
    pub fn delete_range<K: AsRef<[u8]>>(&mut self, from: K, to: K) {
        let tags = (tag::RANGE_DELETION, tag::CF_RANGE_DELETION);
        self.add_kv(0, tags, from.as_ref(), Some(to.as_ref()));
    }

    pub fn delete_range_cf<K: AsRef<[u8]>>(&mut self, cf: u32, from: K, to: K) {
        let tags = (tag::RANGE_DELETION, tag::CF_RANGE_DELETION);
        self.add_kv(cf, tags, from.as_ref(), Some(to.as_ref()));
    }

    /// Adds a blob that is written to the WAL but not applied or counted.
    pub fn put_log_data<V: AsRef<[u8]>>(&mut self, log_data: V) {
        let blob = log_data.as_ref();
        if Self::too_large(&[blob]) {
            return;
        }
        self.ensure_header();
        self.rep.push(tag::LOG_DATA);
        put_length_prefixed_slice(&mut self.rep, blob);
    }

    /// Removes every record (and resets the sequence number).
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_SIZE, 0);
        self.has_merge = Some(false);
        self.wal_end = None;
        self.ts_writes.clear();
    }

    /// Appends `other`'s records to this batch and adds its count (group commit).
    pub fn append(&mut self, other: &Self) {
        if other.rep.len() <= HEADER_SIZE {
            return;
        }
        self.ensure_header();
        self.set_count(self.count().wrapping_add(other.count()));
        self.rep.extend_from_slice(&other.rep[HEADER_SIZE..]);
        self.has_merge = match (self.has_merge, other.has_merge) {
            (Some(a), Some(b)) => Some(a || b),
            _ => None,
        };
        for w in &other.ts_writes {
            match self.ts_writes.iter_mut().find(|x| x.cf == w.cf && x.ts_size == w.ts_size) {
                Some(x) => x.count += w.count,
                None => self.ts_writes.push(*w),
            }
        }
    }

    /// The batch as RocksDB's WAL-only writes make it: `header | BeginPrepare | records of
    /// ops | EndPrepare(xid)`, with ops' count.
    pub fn prepare_section(xid: &[u8], ops: &Batch) -> Self {
        let mut b = Self::new();
        b.set_count(ops.count());
        b.rep.push(tag::BEGIN_PREPARE_XID);
        b.rep.extend_from_slice(ops.rep.get(HEADER_SIZE..).unwrap_or(&[]));
        b.rep.push(tag::END_PREPARE_XID);
        put_length_prefixed_slice(&mut b.rep, xid);
        b.has_merge = ops.has_merge;
        b
    }

    /// A batch of one marker, Commit(xid) or Rollback(xid) (count 0).
    pub fn marker(commit: bool, xid: &[u8]) -> Self {
        let mut b = Self::new();
        b.rep.push(if commit { tag::COMMIT_XID } else { tag::ROLLBACK_XID });
        put_length_prefixed_slice(&mut b.rep, xid);
        b
    }

    /// A batch of one CommitXIDAndTimestamp marker (count 0), as RocksDB's
    /// `WriteBatchInternal::MarkCommitWithTimestamp` writes it: `0x15 commit_ts xid`.
    pub fn commit_with_timestamp_marker(xid: &[u8], commit_ts: &[u8]) -> Self {
        let mut b = Self::new();
        b.rep.push(tag::COMMIT_XID_AND_TIMESTAMP);
        put_length_prefixed_slice(&mut b.rep, commit_ts);
        put_length_prefixed_slice(&mut b.rep, xid);
        b
    }

    /// A copy whose keys (both ends of a range deletion) of each family with timestamps
    /// (`ts_size(cf)` not 0) end with `ts` in place of their timestamp, the other records as
    /// they are: RocksDB's `WriteBatch::UpdateTimestamps`, which WAL recovery applies to a
    /// prepared transaction committed with a commit timestamp. As RocksDB's
    /// `TimestampUpdater`: an empty `ts` or one of another size than the family's is
    /// InvalidArgument, and a wide-column entity NotSupported (the updater does not handle
    /// PutEntityCF; `WriteBatch::Handler`'s default refuses it).
    pub fn with_commit_timestamp(&self, ts: &[u8], ts_size: &dyn Fn(u32) -> usize) -> Result<Self> {
        let mut out = Self::new();
        let (mut key, mut end) = (Vec::new(), Vec::new());
        self.for_each(&mut |e| {
            if e.value_type == ValueType::WideColumnEntity {
                return Err(Error::not_supported("PutEntityCF not implemented"));
            }
            if ts.is_empty() {
                return Err(Error::invalid_argument("Timestamp is empty"));
            }
            let sz = ts_size(e.cf_id);
            if sz == 0 {
                out.add_entry(&e);
                return Ok(());
            }
            if sz != ts.len() {
                return Err(Error::invalid_argument("timestamp size mismatch"));
            }
            let stamp = |from: &[u8], to: &mut Vec<u8>| -> Result<()> {
                let base = from.len().checked_sub(sz).ok_or_else(|| {
                    Error::corruption(format!(
                        "a key of {} bytes in column family {} is shorter than its {sz}-byte timestamp",
                        from.len(),
                        e.cf_id
                    ))
                })?;
                to.clear();
                to.extend_from_slice(&from[..base]);
                to.extend_from_slice(ts);
                Ok(())
            };
            stamp(e.key, &mut key)?;
            let value = if e.value_type == ValueType::RangeDeletion {
                stamp(e.value, &mut end)?;
                &end[..]
            } else {
                e.value
            };
            out.add_entry(&BatchEntry { key: &key, value, ..e });
            Ok(())
        })?;
        Ok(out)
    }

    /// Appends a copy of a decoded entry (WAL recovery rebuilding a prepared batch).
    pub fn add_entry(&mut self, e: &BatchEntry<'_>) {
        let tags = record_tags(e.value_type);
        let value = match e.value_type {
            ValueType::Value
            | ValueType::Merge
            | ValueType::RangeDeletion
            | ValueType::BlobIndex
            | ValueType::WideColumnEntity => Some(e.value),
            _ => None,
        };
        if e.value_type == ValueType::Merge {
            self.has_merge = self.has_merge.map(|_| true);
        }
        self.add_kv(e.cf_id, tags, e.key, value);
    }

    /// Marks the end of what the WAL gets (RocksDB's `MarkWalTerminationPoint`).
    pub fn mark_wal_termination_point(&mut self) {
        self.ensure_header();
        self.wal_end = Some((self.rep.len(), self.count()));
    }

    /// What the WAL gets: the whole batch, or the part before its termination point.
    pub fn wal_data(&self) -> std::borrow::Cow<'_, [u8]> {
        match self.wal_end {
            None => std::borrow::Cow::Borrowed(&self.rep),
            Some((end, count)) => {
                let mut v = self.rep[..end.min(self.rep.len())].to_vec();
                v[8..HEADER_SIZE].copy_from_slice(&count.to_le_bytes());
                std::borrow::Cow::Owned(v)
            }
        }
    }

    /// Calls `f` with every entry and two-phase-commit marker in order (LogData and Noop
    /// are skipped), then checks the header's count (WAL recovery).
    pub fn for_each_wal_record(&self, f: &mut dyn FnMut(WalRecord<'_>) -> Result<()>) -> Result<()> {
        if self.rep.len() < HEADER_SIZE {
            return Err(Error::corruption("malformed WriteBatch (too small)"));
        }
        let mut input = Decoder::new(&self.rep[HEADER_SIZE..]);
        let mut found = 0u32;
        while !input.is_empty() {
            let offset = self.rep.len() - input.remaining().len();
            match decode_record(&mut input, offset)? {
                Record::Entry(e) => {
                    found = found.wrapping_add(1);
                    f(WalRecord::Entry(e))?;
                }
                Record::Marker(m) => f(WalRecord::Marker(m))?,
                Record::LogData | Record::Noop => {}
            }
        }
        if found != self.count() {
            return Err(Error::corruption("WriteBatch has wrong count"));
        }
        Ok(())
    }

    /// Whether the batch holds a Merge record.
    pub fn has_merge(&self) -> bool {
        match self.has_merge {
            Some(known) => known,
            None => {
                let mut found = false;
                let _ = self.for_each(&mut |e| {
                    found |= e.value_type == ValueType::Merge;
                    Ok(())
                });
                found
            }
        }
    }

    /// A copy with `suffix` appended to the value of every Put and Merge, the other records
    /// as they are (RocksDB's DBWithTTL write path, `db/ttl.rs`).
    pub fn with_value_suffix(&self, suffix: &[u8]) -> Result<Self> {
        let mut out = Self::new();
        out.has_merge = self.has_merge;
        out.ts_writes = self.ts_writes.clone();
        let body = self.rep.get(HEADER_SIZE..).unwrap_or(&[]);
        let mut input = Decoder::new(body);
        let mut value = Vec::new();
        while !input.is_empty() {
            let before = input.remaining();
            let offset = self.rep.len() - before.len();
            match decode_record(&mut input, offset)? {
                Record::Entry(e) => {
                    if e.value_type == ValueType::WideColumnEntity {
                        // RocksDB's DBWithTTLImpl::Write: its handler keeps the default PutEntityCF
                        // (put_entity itself bypasses this path, as StackableDB's PutEntity).
                        return Err(Error::not_supported("PutEntityCF not implemented"));
                    }
                    let tags = record_tags(e.value_type);
                    match e.value_type {
                        ValueType::Value | ValueType::Merge => {
                            value.clear();
                            value.extend_from_slice(e.value);
                            value.extend_from_slice(suffix);
                            out.add_kv(e.cf_id, tags, e.key, Some(&value));
                        }
                        ValueType::RangeDeletion | ValueType::BlobIndex => {
                            out.add_kv(e.cf_id, tags, e.key, Some(e.value))
                        }
                        _ => out.add_kv(e.cf_id, tags, e.key, None),
                    }
                }
                // Uncounted records (LogData, Noop, markers) are copied byte for byte.
                Record::LogData | Record::Noop | Record::Marker(_) => {
                    out.ensure_header();
                    out.rep.extend_from_slice(&before[..before.len() - input.remaining().len()]);
                }
            }
        }
        Ok(out)
    }

    /// Blob direct write (RocksDB's `BlobWriteBatchTransformer`): a copy in which every Put
    /// whose value `f(family, Value, key, value)` turns into a blob index is a PutBlobIndex
    /// record of it, and every PutEntity `f(family, WideColumnEntity, key, entity)` rewrites
    /// is a PutEntity of the new entity; the other records stay as they are, uncounted ones
    /// byte for byte. None when `f` turned no value (the batch is used as it is). The
    /// sequence is set later.
    pub fn with_blob_indexes(&self, f: &mut BlobValueFn<'_>) -> Result<Option<Self>> {
        let mut out = Self::new();
        out.has_merge = self.has_merge;
        out.ts_writes = self.ts_writes.clone();
        let body = self.rep.get(HEADER_SIZE..).unwrap_or(&[]);
        let mut input = Decoder::new(body);
        let mut changed = false;
        while !input.is_empty() {
            let before = input.remaining();
            let offset = self.rep.len() - before.len();
            let record = decode_record(&mut input, offset)?;
            let raw = &before[..before.len() - input.remaining().len()];
            if let Record::Entry(e) = &record {
                if e.value_type == ValueType::Value {
                    if let Some(index) = f(e.cf_id, ValueType::Value, e.key, e.value)? {
                        out.add_kv(e.cf_id, (tag::BLOB_INDEX, tag::CF_BLOB_INDEX), e.key, Some(&index));
                        changed = true;
                        continue;
                    }
                } else if e.value_type == ValueType::WideColumnEntity {
                    if let Some(entity) = f(e.cf_id, ValueType::WideColumnEntity, e.key, e.value)? {
                        let tags = (tag::WIDE_COLUMN_ENTITY, tag::CF_WIDE_COLUMN_ENTITY);
                        out.add_kv(e.cf_id, tags, e.key, Some(&entity));
                        changed = true;
                        continue;
                    }
                }
                // A counted record copied byte for byte.
                out.ensure_header();
                out.set_count(out.count().wrapping_add(1));
                out.rep.extend_from_slice(raw);
            } else {
                out.ensure_header();
                out.rep.extend_from_slice(raw);
            }
        }
        Ok(changed.then_some(out))
    }

    /// Calls `f` with each counted record in order (LogData and Noop are skipped), then
    /// checks the header's count. Stops at the first error from `f` or from decoding.
    pub fn for_each(&self, f: &mut dyn FnMut(BatchEntry<'_>) -> Result<()>) -> Result<()> {
        if self.rep.len() < HEADER_SIZE {
            return Err(Error::corruption("malformed WriteBatch (too small)"));
        }
        let body = &self.rep[HEADER_SIZE..];
        let mut pos = 0;
        let mut found = 0u32;
        while let Some(rest) = body.get(pos..).filter(|r| !r.is_empty()) {
            if let Some((e, n)) = decode_entry_fast(rest) {
                pos += n;
                found = found.wrapping_add(1);
                f(e)?;
                continue;
            }
            let mut input = Decoder::new(rest);
            let r = decode_record(&mut input, HEADER_SIZE + pos)?;
            pos = body.len() - input.remaining().len();
            if let Record::Entry(e) = r {
                found = found.wrapping_add(1);
                f(e)?;
            }
        }
        if found != self.count() {
            return Err(Error::corruption("WriteBatch has wrong count"));
        }
        Ok(())
    }

    /// Every record in order, counted or not, decoded one at a time; a decoding error is
    /// the last item. The header's count is not checked (see [`for_each`](Self::for_each)).
    pub fn records(&self) -> Records<'_> {
        let body = self.rep.get(HEADER_SIZE..).unwrap_or(&[]);
        Records { len: self.rep.len(), input: Decoder::new(body), failed: false }
    }

    /// A put of `key` at timestamp `ts` into a family with user-defined timestamps: the
    /// record's key is `key | ts`, as RocksDB encodes it (docs/timestamps.md). Writing the
    /// batch fails with InvalidArgument if the family has no timestamps or another size.
    pub fn put_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: u32,
        key: K,
        ts: S,
        value: V,
    ) {
        let (key, ts, value) = (key.as_ref(), ts.as_ref(), value.as_ref());
        if Self::too_large(&[key, ts, value]) {
            return;
        }
        self.add_with_ts(cf, (tag::VALUE, tag::CF_VALUE), key, ts, Some(value));
    }

    /// A deletion of `key` at timestamp `ts`: see `put_cf_with_ts`.
    pub fn delete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(&mut self, cf: u32, key: K, ts: S) {
        let (key, ts) = (key.as_ref(), ts.as_ref());
        if Self::too_large(&[key, ts]) {
            return;
        }
        self.add_with_ts(cf, (tag::DELETION, tag::CF_DELETION), key, ts, None);
    }

    /// A merge operand for `key` at timestamp `ts` (RocksDB's `WriteBatch::Merge(cf, key,
    /// ts, value)`): the record's key is `key | ts`; see `put_cf_with_ts`.
    pub fn merge_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: u32,
        key: K,
        ts: S,
        value: V,
    ) {
        let (key, ts, value) = (key.as_ref(), ts.as_ref(), value.as_ref());
        if Self::too_large(&[key, ts, value]) {
            return;
        }
        if self.add_with_ts(cf, (tag::MERGE, tag::CF_MERGE), key, ts, Some(value)) {
            self.has_merge = Some(true);
        }
    }

    /// A deletion of the keys in `[from, to)` at timestamp `ts` (RocksDB's
    /// `WriteBatch::DeleteRange(cf, begin, end, ts)`): both ends carry `ts`, the record is
    /// `from | ts` to `to | ts`; see `put_cf_with_ts`.
    pub fn delete_range_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &mut self,
        cf: u32,
        from: K,
        to: K,
        ts: S,
    ) {
        let (from, to, ts) = (from.as_ref(), to.as_ref(), ts.as_ref());
        if Self::too_large(&[from, to, ts, ts]) {
            return;
        }
        let tags = (tag::RANGE_DELETION, tag::CF_RANGE_DELETION);
        self.add_with_ts(cf, tags, from, ts, Some(&[to, ts].concat()));
    }

    /// Adds the record of `key | ts` and counts it among the family's timestamped writes;
    /// false when it was not added (too large).
    fn add_with_ts(&mut self, cf: u32, tags: (u8, u8), key: &[u8], ts: &[u8], value: Option<&[u8]>) -> bool {
        let before = self.count();
        self.add_kv(cf, tags, &[key, ts].concat(), value);
        if self.count() == before {
            return false;
        }
        self.note_ts(cf, ts.len());
        true
    }

    /// Counts a record just added with a timestamp of `ts_size` bytes.
    fn note_ts(&mut self, cf: u32, ts_size: usize) {
        match self.ts_writes.iter_mut().find(|w| w.cf == cf && w.ts_size == ts_size) {
            Some(w) => w.count += 1,
            None => self.ts_writes.push(TsWrites { cf, ts_size, count: 1 }),
        }
    }
}

/// The records of a batch ([`Batch::records`]).
pub struct Records<'a> {
    /// The whole batch's length, for the offsets in error messages.
    len: usize,
    input: Decoder<'a>,
    failed: bool,
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.input.is_empty() {
            return None;
        }
        if let Some((e, n)) = decode_entry_fast(self.input.remaining()) {
            self.input.bytes(n);
            return Some(Ok(Record::Entry(e)));
        }
        let offset = self.len - self.input.remaining().len();
        let r = decode_record(&mut self.input, offset);
        self.failed = r.is_err();
        Some(r)
    }
}

/// The name RocksDB gives a tag in its error messages.
fn unsupported_tag_name(t: u8) -> Option<&'static str> {
    Some(match t {
        tag::BEGIN_PERSISTED_PREPARE_XID => "BeginPersistedPrepareXID",
        tag::BEGIN_UNPREPARE_XID => "BeginUnprepareXID",
        tag::DELETION_WITH_TIMESTAMP => "DeletionWithTimestamp",
        _ => return None,
    })
}

/// Writes `v` as a varint32 at `buf[pos..]` (room for 5 bytes); returns the end.
#[inline(always)]
fn varint_into(buf: &mut [u8], mut pos: usize, mut v: u32) -> usize {
    while v >= 0x80 {
        buf[pos] = (v as u8) | 0x80;
        v >>= 7;
        pos += 1;
    }
    buf[pos] = v as u8;
    pos + 1
}

/// The varint32 at `data[pos..]` and its length; None when truncated or too long.
#[inline(always)]
fn varint32_at(data: &[u8], pos: usize) -> Option<(usize, usize)> {
    let b = *data.get(pos)?;
    if b < 0x80 {
        return Some((usize::from(b), 1));
    }
    crate::coding::decode_varint32(data.get(pos..)?).map(|(v, n)| (v as usize, n))
}

/// The record at the start of `data` when it is a whole Put, Delete, SingleDelete or Merge
/// (of any family), and the bytes it takes: the records a write inserts, decoded without
/// [`decode_record`]'s error paths. None for any other record, and for a malformed one
/// (which `decode_record` then decodes into its error).
#[inline(always)]
fn decode_entry_fast(data: &[u8]) -> Option<(BatchEntry<'_>, usize)> {
    let (value_type, has_cf, has_value) = match *data.first()? {
        tag::VALUE => (ValueType::Value, false, true),
        tag::CF_VALUE => (ValueType::Value, true, true),
        tag::DELETION => (ValueType::Deletion, false, false),
        tag::CF_DELETION => (ValueType::Deletion, true, false),
        tag::SINGLE_DELETION => (ValueType::SingleDeletion, false, false),
        tag::CF_SINGLE_DELETION => (ValueType::SingleDeletion, true, false),
        tag::MERGE => (ValueType::Merge, false, true),
        tag::CF_MERGE => (ValueType::Merge, true, true),
        _ => return None,
    };
    let mut pos = 1;
    let cf_id = if has_cf {
        let (v, n) = varint32_at(data, pos)?;
        pos += n;
        v as u32
    } else {
        0
    };
    let (klen, n) = varint32_at(data, pos)?;
    pos += n;
    let key = data.get(pos..pos.checked_add(klen)?)?;
    pos += klen;
    let value: &[u8] = if has_value {
        let (vlen, n) = varint32_at(data, pos)?;
        pos += n;
        let v = data.get(pos..pos.checked_add(vlen)?)?;
        pos += vlen;
        v
    } else {
        &[]
    };
    Some((BatchEntry { cf_id, value_type, key, value }, pos))
}

/// Decodes one record starting at byte `offset` of the batch.
fn decode_record<'a>(input: &mut Decoder<'a>, offset: usize) -> Result<Record<'a>> {
    let t = input.u8().ok_or_else(|| Error::corruption("malformed WriteBatch (empty record)"))?;
    let (value_type, has_cf, has_value, what) = match t {
        tag::VALUE => (ValueType::Value, false, true, "Put"),
        tag::CF_VALUE => (ValueType::Value, true, true, "Put"),
        tag::DELETION => (ValueType::Deletion, false, false, "Delete"),
        tag::CF_DELETION => (ValueType::Deletion, true, false, "Delete"),
        tag::SINGLE_DELETION => (ValueType::SingleDeletion, false, false, "SingleDelete"),
        tag::CF_SINGLE_DELETION => (ValueType::SingleDeletion, true, false, "SingleDelete"),
        tag::RANGE_DELETION => (ValueType::RangeDeletion, false, true, "DeleteRange"),
        tag::CF_RANGE_DELETION => (ValueType::RangeDeletion, true, true, "DeleteRange"),
        tag::MERGE => (ValueType::Merge, false, true, "Merge"),
        tag::CF_MERGE => (ValueType::Merge, true, true, "Merge"),
        // A blob reference (RocksDB's PutBlobIndex): what blob direct write puts in the WAL
        // and the memtables in place of a large value (`db/blob_direct.rs`).
        tag::BLOB_INDEX => (ValueType::BlobIndex, false, true, "PutBlobIndex"),
        tag::CF_BLOB_INDEX => (ValueType::BlobIndex, true, true, "PutBlobIndex"),
        tag::WIDE_COLUMN_ENTITY => (ValueType::WideColumnEntity, false, true, "PutEntity"),
        tag::CF_WIDE_COLUMN_ENTITY => (ValueType::WideColumnEntity, true, true, "PutEntity"),
        tag::NOOP => return Ok(Record::Noop),
        tag::BEGIN_PREPARE_XID => return Ok(Record::Marker(Marker::BeginPrepare)),
        tag::END_PREPARE_XID | tag::COMMIT_XID | tag::ROLLBACK_XID => {
            let xid = input.length_prefixed().ok_or_else(|| {
                Error::corruption(format!(
                    "bad WriteBatch two-phase-commit marker (tag {t:#x}) at offset {offset}"
                ))
            })?;
            return Ok(Record::Marker(match t {
                tag::END_PREPARE_XID => Marker::EndPrepare(xid),
                tag::COMMIT_XID => Marker::Commit(xid),
                _ => Marker::Rollback(xid),
            }));
        }
        tag::COMMIT_XID_AND_TIMESTAMP => {
            // RocksDB's ReadRecordFromWriteBatch: the timestamp, then the xid.
            let bad = |what: &str| {
                Error::corruption(format!("bad {what} (WriteBatch tag {t:#x}) at offset {offset}"))
            };
            let ts = input.length_prefixed().ok_or_else(|| bad("commit timestamp"))?;
            let xid = input.length_prefixed().ok_or_else(|| bad("Commit XID"))?;
            return Ok(Record::Marker(Marker::CommitWithTimestamp { xid, ts }));
        }
        tag::LOG_DATA => {
            return match input.length_prefixed() {
                Some(_) => Ok(Record::LogData),
                None => Err(Error::corruption(format!("bad WriteBatch Blob (tag 0x3) at offset {offset}"))),
            };
        }
        _ => {
            return Err(match unsupported_tag_name(t) {
                Some(name) => {
                    Error::not_supported(format!("WriteBatch tag {t:#x} ({name}) at offset {offset}"))
                }
                None => Error::corruption(format!("unknown WriteBatch tag {t:#x} at offset {offset}")),
            });
        }
    };
    let bad = || Error::corruption(format!("bad WriteBatch {what} (tag {t:#x}) at offset {offset}"));
    let cf_id = if has_cf { input.varint32().ok_or_else(bad)? } else { 0 };
    let key = input.length_prefixed().ok_or_else(bad)?;
    let value = if has_value { input.length_prefixed().ok_or_else(bad)? } else { &[] };
    Ok(Record::Entry(BatchEntry { cf_id, value_type, key, value }))
}

#[cfg(test)]
mod tests;
