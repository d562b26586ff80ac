//! The state and rules of one transaction, pessimistic or optimistic (RocksDB's
//! `PessimisticTransaction`/`WriteCommittedTxn` and `OptimisticTransaction`).
//!
//! A pessimistic transaction locks every key it writes, and every key it reads with
//! `get_for_update`, through its database's lock manager (`lock_mgr.rs`) before the
//! operation; with a snapshot it also checks, once per key, that nobody wrote the key
//! after the snapshot (Busy otherwise). Commit writes its batch in one atomic write, then
//! releases its locks. Two-phase commit (a named transaction): `prepare` writes the batch
//! to the WAL only, between a begin-prepare and an end-prepare(name) marker; `commit`
//! writes a commit(name) marker to the WAL and the batch to the memtables; `rollback`
//! writes a rollback(name) marker (see `twopc.rs`).
//!
//! An optimistic transaction locks nothing: it notes the sequence number at which it
//! first read or wrote each key (its snapshot's, or the last sequence then), and commit
//! checks that none of those keys was written since (Busy otherwise). The check and the
//! write run under the database's striped commit locks of those keys, taken in order, so
//! two optimistic transactions touching a common key cannot both pass their checks
//! (RocksDB's `kValidateParallel`).

use crate::db::HandleOf;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::lock_mgr::{
    LockManager, LockRequest, TxnShared, AWAITING_COMMIT, AWAITING_PREPARE, AWAITING_ROLLBACK, COMMITTED,
    LOCKS_STOLEN, PREPARED, ROLLEDBACK, STARTED,
};
use super::options::TransactionDBOptions;
use super::wbwi::{self, IndexedBatch, Lookup};
use crate::batch::WriteBatch;
use crate::db::thread_mode::DBAccess;
use crate::db::{CfHandle, DBRawIteratorWithThreadMode, DbInner};
use crate::error::{Error, ErrorKind, Result};
use crate::iter::{DBIter, MergingIterator};
use crate::key::{SequenceNumber, ValueType};
use crate::options::{ReadOptions, WriteOptions};

/// What a pessimistic transaction database shares with its transactions.
pub(crate) struct TxnDbShared {
    pub locks: LockManager,
    pub opts: TransactionDBOptions,
    /// Names of the live named transactions (RocksDB's `RegisterTransaction`).
    pub names: Mutex<HashMap<Vec<u8>, u64>>,
    pub next_id: std::sync::atomic::AtomicU64,
    /// Prepared transactions found in the WAL at open (holding their locks), waiting for
    /// `prepared_transactions`.
    pub recovered: Mutex<Vec<TxnCore>>,
}

impl TxnDbShared {
    pub fn new(opts: &TransactionDBOptions) -> TxnDbShared {
        TxnDbShared {
            locks: LockManager::new(opts.num_stripes, opts.max_num_locks),
            opts: opts.clone(),
            names: Mutex::new(HashMap::new()),
            next_id: std::sync::atomic::AtomicU64::new(1),
            recovered: Mutex::new(Vec::new()),
        }
    }

    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Microseconds a lock request may wait: `ms` (negative: the database's default).
    pub fn timeout_us(ms: i64) -> i64 {
        if ms < 0 {
            -1
        } else {
            ms.saturating_mul(1000)
        }
    }
}

/// The commit locks of an optimistic transaction database (RocksDB's
/// `OccLockBuckets`): a key's bucket is its hash modulo their number.
pub(crate) struct OccShared {
    buckets: Vec<Mutex<()>>,
}

impl OccShared {
    pub fn new(n: usize) -> OccShared {
        OccShared { buckets: (0..n.max(1)).map(|_| Mutex::new(())).collect() }
    }

    fn bucket(&self, cf: u32, key: &[u8]) -> usize {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        cf.hash(&mut h);
        key.hash(&mut h);
        (h.finish() % self.buckets.len() as u64) as usize
    }
}

pub(crate) enum Kind {
    Pessimistic {
        db: Arc<TxnDbShared>,
        /// Microseconds (negative: forever).
        lock_timeout_us: i64,
        deadlock_detect: bool,
        deadlock_detect_depth: i64,
        skip_prepare: bool,
        max_write_batch_size: usize,
    },
    Optimistic {
        occ: Arc<OccShared>,
    },
}

/// A key the transaction locked (pessimistic) or depends on (optimistic).
#[derive(Clone, Copy)]
struct Tracked {
    /// The sequence number the key was checked / read at.
    seq: SequenceNumber,
    exclusive: bool,
}

struct SavePoint {
    ops: usize,
    /// Keys first tracked after the savepoint (unlocked / forgotten on rollback to it).
    new_keys: Vec<(u32, Vec<u8>)>,
}

struct TxnState {
    batch: IndexedBatch,
    /// The transaction's snapshot, registered with the database.
    snapshot: Option<SequenceNumber>,
    tracked: HashMap<(u32, Vec<u8>), Tracked>,
    savepoints: Vec<SavePoint>,
    name: Option<Vec<u8>>,
    /// The WAL holding the prepare section, once prepared.
    prep_log: Option<u64>,
}

/// One transaction.
pub(crate) struct TxnCore {
    pub inner: Arc<DbInner>,
    pub default_cf: Arc<CfHandle>,
    write_opts: WriteOptions,
    kind: Kind,
    pub shared: Arc<TxnShared>,
    st: Mutex<TxnState>,
}

fn expired() -> Error {
    Error::new(ErrorKind::Expired, "")
}

impl TxnCore {
    pub fn new(
        inner: Arc<DbInner>,
        default_cf: Arc<CfHandle>,
        write_opts: &WriteOptions,
        kind: Kind,
        set_snapshot: bool,
        expiration_ms: i64,
    ) -> TxnCore {
        let id = match &kind {
            Kind::Pessimistic { db, .. } => db.new_id(),
            Kind::Optimistic { .. } => 0,
        };
        let shared = TxnShared::new(id, expiration_ms);
        if let Kind::Pessimistic { db, .. } = &kind {
            db.locks.register(&shared);
        }
        let snapshot = set_snapshot.then(|| inner.acquire_snapshot());
        TxnCore {
            inner,
            default_cf,
            write_opts: write_opts.clone(),
            kind,
            shared,
            st: Mutex::new(TxnState {
                batch: IndexedBatch::default(),
                snapshot,
                tracked: HashMap::new(),
                savepoints: Vec::new(),
                name: None,
                prep_log: None,
            }),
        }
    }

    fn state(&self) -> u8 {
        self.shared.state.load(std::sync::atomic::Ordering::Acquire)
    }

    fn set_state(&self, s: u8) {
        self.shared.state.store(s, std::sync::atomic::Ordering::Release)
    }

    pub fn handle(&self, id: u32) -> Result<Arc<CfHandle>> {
        if id == self.default_cf.id {
            return Ok(self.default_cf.clone());
        }
        self.inner.handle_of(&crate::cf_ref::CfId(id))
    }

    /// The snapshot sequence, if the transaction has one.
    pub fn snapshot_seq(&self) -> Option<SequenceNumber> {
        self.st.lock().snapshot
    }

    /// Locks (pessimistic) or notes (optimistic) `key` before reading it for update or
    /// writing it.
    fn track(&self, st: &mut TxnState, cf: &CfHandle, key: &[u8], exclusive: bool) -> Result<()> {
        let k = (cf.id, key.to_vec());
        let prev = st.tracked.get(&k).copied();
        match &self.kind {
            Kind::Pessimistic { db, lock_timeout_us, deadlock_detect, deadlock_detect_depth, .. } => {
                if self.shared.is_expired() || self.state() == LOCKS_STOLEN {
                    return Err(expired());
                }
                let need_lock = match prev {
                    None => true,
                    Some(t) => exclusive && !t.exclusive,
                };
                if need_lock {
                    db.locks.lock(
                        &self.shared,
                        cf.id,
                        key,
                        LockRequest {
                            exclusive,
                            timeout_us: *lock_timeout_us,
                            deadlock_detect: *deadlock_detect,
                            deadlock_detect_depth: *deadlock_detect_depth,
                        },
                    )?;
                }
                let mut seq = prev.map_or(SequenceNumber::MAX, |t| t.seq);
                if let Some(snap) = st.snapshot {
                    if seq > snap {
                        if let Err(e) = self.inner.check_key_conflict(cf, key, snap) {
                            if prev.is_none() {
                                db.locks.unlock(self.shared.id, [(cf.id, key)]);
                            }
                            return Err(e);
                        }
                        seq = snap;
                    }
                } else if prev.is_none() {
                    seq = self.inner.last_sequence();
                }
                let exclusive = exclusive || prev.is_some_and(|t| t.exclusive);
                st.tracked.insert(k.clone(), Tracked { seq, exclusive });
            }
            Kind::Optimistic { .. } => {
                let seq = st.snapshot.unwrap_or_else(|| self.inner.last_sequence());
                let seq = prev.map_or(seq, |t| t.seq.min(seq));
                let exclusive = exclusive || prev.is_some_and(|t| t.exclusive);
                st.tracked.insert(k.clone(), Tracked { seq, exclusive });
            }
        }
        if prev.is_none() {
            if let Some(sp) = st.savepoints.last_mut() {
                sp.new_keys.push(k);
            }
        }
        Ok(())
    }

    /// Locks `key` exclusively without writing it (a `TransactionDB::write` batch's keys).
    pub fn lock_key(&self, cf: u32, key: &[u8]) -> Result<()> {
        let h = self.handle(cf)?;
        let mut st = self.st.lock();
        self.track(&mut st, &h, key, true)
    }

    /// A Put, Delete, SingleDelete or Merge of the transaction.
    pub fn write(&self, cf: u32, t: ValueType, key: &[u8], value: &[u8]) -> Result<()> {
        let h = self.handle(cf)?;
        let mut st = self.st.lock();
        self.track(&mut st, &h, key, true)?;
        if let Kind::Pessimistic { max_write_batch_size, .. } = &self.kind {
            if *max_write_batch_size > 0 && st.batch.bytes() + key.len() + value.len() > *max_write_batch_size
            {
                return Err(Error::new(ErrorKind::Aborted, "Memory limit reached"));
            }
        }
        st.batch.push(cf, t, key, value);
        Ok(())
    }

    /// A read of the transaction: its own writes over the database at `ro`'s snapshot.
    pub fn get(&self, cf: &Arc<CfHandle>, key: &[u8], ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let ro = normalize(ro);
        let st = self.st.lock();
        match st.batch.lookup(cf.id, key) {
            Lookup::Value(v) => Ok(Some(v)),
            Lookup::Deleted => Ok(None),
            Lookup::Absent => {
                drop(st);
                self.inner.get_impl(cf, key, &ro)
            }
            Lookup::Merge => {
                let (sv, mut it) = self.view(&st, cf, &ro)?;
                it.seek(key);
                let r = if it.valid() && cf.icmp.compare_user(it.key(), key).is_eq() {
                    Some(it.value().to_vec())
                } else {
                    None
                };
                it.status()?;
                drop(sv);
                Ok(r)
            }
        }
    }

    /// `get_for_update`: locks (or notes) the key, then reads it.
    pub fn get_for_update(
        &self,
        cf: &Arc<CfHandle>,
        key: &[u8],
        exclusive: bool,
        ro: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        {
            let mut st = self.st.lock();
            self.track(&mut st, cf, key, exclusive)?;
        }
        self.get(cf, key, ro)
    }

    /// The transaction's writes merged over the database's view of `cf` at `ro` (`tailing`
    /// is not looked at: `raw_iterator` builds tailing iterators, a `get` ignores it).
    fn view(
        &self,
        st: &TxnState,
        cf: &Arc<CfHandle>,
        ro: &ReadOptions,
    ) -> Result<(Arc<crate::db::SuperVersion>, DBIter)> {
        // The SuperVersion before the sequence, as RocksDB's NewIterator: a flush may drop
        // versions no registered snapshot sees.
        let sv = cf.super_version();
        let seq = ro.snapshot.unwrap_or_else(|| self.inner.last_sequence());
        let prefix = crate::db::PrefixMode::of(cf, ro, self.inner.config.prefix_seek_opt_in_only);
        let (base, tomb) = self.inner.internal_iterator(cf, &sv, ro, &prefix)?;
        let entries = st.batch.internal_entries(cf.id, seq + 1, &cf.icmp);
        let top = seq + st.batch.len() as u64;
        let tomb = wbwi::cap_tombstones(tomb, seq, &cf.icmp);
        let children = vec![
            Box::new(wbwi::SeqCap::new(base, seq)) as crate::iter::BoxedIterator,
            wbwi::batch_iterator(entries, &cf.icmp),
        ];
        let merged = Box::new(MergingIterator::new(cf.icmp.clone(), children));
        let mut it =
            DBIter::new(cf.icmp.clone(), merged, tomb, top, ro.lower_bound.clone(), ro.upper_bound.clone());
        it.set_max_skippable_internal_keys(ro.max_skippable_internal_keys);
        it.set_max_sequential_skip(cf.config().max_sequential_skip_in_iterations);
        it.set_pin_data(ro.pin_data);
        if ro.prefix_same_as_start {
            it.set_prefix_same_as_start(cf.config().prefix_extractor.clone());
        }
        it.set_merge_operator(cf.config().callbacks.merge_operator.clone());
        it.set_statistics(self.inner.config.statistics.clone());
        it.set_blob_fetcher(Some(crate::blob::BlobFetcher {
            cache: self.inner.blob_cache.clone(),
            cf_id: cf.id,
            value_cache: cf.config().blob_cache.clone(),
            fill_cache: ro.fill_cache,
            no_io: ro.read_tier == crate::options_api::ReadTier::BlockCache,
        }));
        Ok((sv, it))
    }

    /// A raw iterator over the transaction's writes and the database.
    pub fn raw_iterator<'a, D: DBAccess>(
        &self,
        cf: &Arc<CfHandle>,
        ro: &ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'a, D> {
        let ro = normalize(ro);
        let st = self.st.lock();
        if ro.tailing {
            // RocksDB's `NewIteratorWithBase` over the tailing `ForwardIterator` the
            // database makes: the transaction's entries are numbered above any sequence
            // number the database reaches, so they hide its entries of the same keys
            // whatever it writes later.
            let n = st.batch.len() as u64;
            let first = crate::key::MAX_SEQUENCE_NUMBER - n - 1;
            let entries = st.batch.internal_entries(cf.id, first, &cf.icmp);
            drop(st);
            return DBRawIteratorWithThreadMode::tailing_over_batch(&self.inner, cf, &ro, entries);
        }
        match self.view(&st, cf, &ro) {
            Ok((sv, it)) => DBRawIteratorWithThreadMode::over_view(&self.inner, sv, it),
            Err(e) => DBRawIteratorWithThreadMode::failed(cf, e),
        }
    }

    pub fn set_savepoint(&self) {
        let mut st = self.st.lock();
        let ops = st.batch.len();
        st.savepoints.push(SavePoint { ops, new_keys: Vec::new() });
    }

    pub fn rollback_to_savepoint(&self) -> Result<()> {
        let mut st = self.st.lock();
        let Some(sp) = st.savepoints.pop() else {
            return Err(Error::not_found(""));
        };
        st.batch.truncate(sp.ops);
        for k in &sp.new_keys {
            st.tracked.remove(k);
        }
        if let Kind::Pessimistic { db, .. } = &self.kind {
            db.locks.unlock(self.shared.id, sp.new_keys.iter().map(|(cf, k)| (*cf, k.as_slice())));
        }
        Ok(())
    }

    /// Forgets the writes, savepoints and tracked keys, releasing the locks (RocksDB's
    /// `Clear`).
    fn clear(&self, st: &mut TxnState) {
        st.batch.clear();
        st.savepoints.clear();
        let keys: Vec<(u32, Vec<u8>)> = st.tracked.drain().map(|(k, _)| k).collect();
        if let Kind::Pessimistic { db, .. } = &self.kind {
            db.locks.unlock(self.shared.id, keys.iter().map(|(cf, k)| (*cf, k.as_slice())));
        }
    }

    pub fn write_batch(&self) -> crate::batch::WriteBatchWithTransaction<true> {
        self.st.lock().batch.to_write_batch()
    }

    pub fn name(&self) -> Option<Vec<u8>> {
        self.st.lock().name.clone()
    }

    pub fn set_name(&self, name: &[u8]) -> Result<()> {
        let Kind::Pessimistic { db, .. } = &self.kind else {
            // RocksDB's OptimisticTransaction::SetName.
            return Err(Error::invalid_argument("Optimistic transactions cannot be named."));
        };
        let mut st = self.st.lock();
        if self.state() != STARTED {
            return Err(Error::invalid_argument("Transaction is beyond state for naming."));
        }
        if st.name.is_some() {
            return Err(Error::invalid_argument("Transaction has already been named."));
        }
        if name.is_empty() || name.len() > 512 {
            return Err(Error::invalid_argument("Transaction name length must be between 1 and 512 chars."));
        }
        let mut names = db.names.lock();
        if names.contains_key(name) {
            return Err(Error::invalid_argument("Transaction name must be unique."));
        }
        names.insert(name.to_vec(), self.shared.id);
        st.name = Some(name.to_vec());
        Ok(())
    }

    fn unregister_name(&self, st: &TxnState) {
        if let (Kind::Pessimistic { db, .. }, Some(n)) = (&self.kind, &st.name) {
            let mut names = db.names.lock();
            if names.get(n) == Some(&self.shared.id) {
                names.remove(n);
            }
        }
    }

    /// Moves from STARTED to `to` as RocksDB does: with an expiration time atomically, so
    /// that nobody steals the locks meanwhile.
    fn leave_started(&self, to: u8) -> bool {
        self.shared
            .state
            .compare_exchange(
                STARTED,
                to,
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Acquire,
            )
            .is_ok()
    }

    fn state_error(&self, what: &str) -> Error {
        match self.state() {
            LOCKS_STOLEN => expired(),
            PREPARED => Error::invalid_argument("Transaction has already been prepared."),
            COMMITTED => Error::invalid_argument("Transaction has already been committed."),
            ROLLEDBACK => Error::invalid_argument("Transaction has already been rolledback."),
            _ => Error::invalid_argument(format!("Transaction is not in state for {what}.")),
        }
    }

    pub fn prepare(&self) -> Result<()> {
        if matches!(self.kind, Kind::Optimistic { .. }) {
            // RocksDB's OptimisticTransaction::Prepare.
            return Err(Error::invalid_argument(
                "Two phase commit not supported for optimistic transactions.",
            ));
        }
        let st = self.st.lock();
        let Some(name) = st.name.clone() else {
            return Err(Error::invalid_argument("Cannot prepare a transaction that has not been named."));
        };
        if self.shared.is_expired() {
            return Err(expired());
        }
        if !self.leave_started(AWAITING_PREPARE) {
            return Err(self.state_error("commit"));
        }
        // A prepared transaction cannot expire.
        self.shared.expiration_us.store(0, std::sync::atomic::Ordering::Release);
        drop(st);
        match crate::db::twopc::write_prepare(
            &self.inner,
            &self.write_opts.engine(),
            &name,
            self.write_batch().engine(),
        ) {
            Ok(log) => {
                self.st.lock().prep_log = Some(log);
                self.set_state(PREPARED);
                Ok(())
            }
            Err(e) => {
                self.set_state(STARTED);
                Err(e)
            }
        }
    }

    /// Marks a transaction recovered from the WAL as prepared in `log`.
    pub fn restore_prepared(&self, name: &[u8], batch: &WriteBatch, log: u64) -> Result<()> {
        let Kind::Pessimistic { db, .. } = &self.kind else {
            return Err(Error::invalid_argument("not a pessimistic transaction"));
        };
        let mut st = self.st.lock();
        let mut ops: Vec<(u32, ValueType, Vec<u8>, Vec<u8>)> = Vec::new();
        batch.for_each(&mut |e| {
            ops.push((e.cf_id, e.value_type, e.key.to_vec(), e.value.to_vec()));
            Ok(())
        })?;
        for (cf, t, k, v) in ops {
            // Recovered transactions take their locks without waiting (RocksDB's
            // recovery does the same: nothing else runs yet).
            let h = self.handle(cf)?;
            if let std::collections::hash_map::Entry::Vacant(slot) = st.tracked.entry((cf, k.clone())) {
                db.locks.lock(
                    &self.shared,
                    h.id,
                    &k,
                    LockRequest {
                        exclusive: true,
                        timeout_us: 0,
                        deadlock_detect: false,
                        deadlock_detect_depth: 0,
                    },
                )?;
                slot.insert(Tracked { seq: 0, exclusive: true });
            }
            st.batch.push(cf, t, &k, &v);
        }
        db.names.lock().insert(name.to_vec(), self.shared.id);
        st.name = Some(name.to_vec());
        st.prep_log = Some(log);
        self.shared.expiration_us.store(0, std::sync::atomic::Ordering::Release);
        self.set_state(PREPARED);
        Ok(())
    }

    pub fn commit(&self) -> Result<()> {
        match &self.kind {
            Kind::Optimistic { occ } => self.commit_optimistic(occ),
            Kind::Pessimistic { skip_prepare, .. } => self.commit_pessimistic(*skip_prepare),
        }
    }

    fn commit_pessimistic(&self, skip_prepare: bool) -> Result<()> {
        if self.shared.is_expired() {
            return Err(expired());
        }
        let mut st = self.st.lock();
        match self.state() {
            STARTED => {
                if !skip_prepare {
                    return Err(Error::invalid_argument("Txn not prepared"));
                }
                if !self.leave_started(AWAITING_COMMIT) {
                    return Err(self.state_error("commit"));
                }
                let batch = st.batch.to_write_batch();
                let r = if batch.is_empty() {
                    Ok(())
                } else {
                    crate::db::twopc::write_to(&self.inner, batch.into_engine(), &self.write_opts.engine())
                };
                if let Err(e) = r {
                    self.set_state(STARTED);
                    return Err(e);
                }
            }
            PREPARED => {
                self.set_state(AWAITING_COMMIT);
                let name = st.name.clone().unwrap_or_default();
                let r = crate::db::twopc::write_commit(
                    &self.inner,
                    &self.write_opts.engine(),
                    &name,
                    st.batch.to_write_batch().engine(),
                );
                if let Err(e) = r {
                    self.set_state(PREPARED);
                    return Err(e);
                }
                if let Some(log) = st.prep_log.take() {
                    let now = self.inner.current_wal_number()?;
                    self.inner.prep_tracker().committed(log, now);
                }
            }
            _ => return Err(self.state_error("commit")),
        }
        self.set_state(COMMITTED);
        self.clear(&mut st);
        self.unregister_name(&st);
        Ok(())
    }

    fn commit_optimistic(&self, occ: &OccShared) -> Result<()> {
        let mut st = self.st.lock();
        if self.state() != STARTED {
            return Err(self.state_error("commit"));
        }
        let mut buckets: Vec<usize> = st.tracked.keys().map(|(cf, k)| occ.bucket(*cf, k)).collect();
        buckets.sort_unstable();
        buckets.dedup();
        let guards: Vec<_> = buckets.iter().map(|b| occ.buckets[*b].lock()).collect();
        for ((cf, key), t) in st.tracked.iter() {
            let h = match self.handle(*cf) {
                Ok(h) => h,
                // A dropped family: nothing can conflict there; the write fails below.
                Err(_) => continue,
            };
            self.inner.check_key_conflict(&h, key, t.seq)?;
        }
        let batch = st.batch.to_write_batch();
        if !batch.is_empty() {
            crate::db::twopc::write_to(&self.inner, batch.into_engine(), &self.write_opts.engine())?;
        }
        drop(guards);
        self.set_state(COMMITTED);
        self.clear(&mut st);
        Ok(())
    }

    pub fn rollback(&self) -> Result<()> {
        let mut st = self.st.lock();
        match self.state() {
            PREPARED => {
                self.set_state(AWAITING_ROLLBACK);
                let name = st.name.clone().unwrap_or_default();
                if let Err(e) =
                    crate::db::twopc::write_rollback(&self.inner, &self.write_opts.engine(), &name)
                {
                    self.set_state(PREPARED);
                    return Err(e);
                }
                if let Some(log) = st.prep_log.take() {
                    self.inner.prep_tracker().release(log);
                }
                self.clear(&mut st);
                self.unregister_name(&st);
                self.set_state(ROLLEDBACK);
                Ok(())
            }
            STARTED => {
                self.clear(&mut st);
                Ok(())
            }
            COMMITTED => Err(Error::invalid_argument("This transaction has already been committed.")),
            _ => Err(Error::invalid_argument("Two phase transaction is not in state for rollback.")),
        }
    }
}

impl Drop for TxnCore {
    fn drop(&mut self) {
        let mut st = self.st.lock();
        self.clear(&mut st);
        if let Some(s) = st.snapshot.take() {
            self.inner.release_user_snapshot(s);
        }
        // A prepared transaction dropped undecided keeps its WAL (its prepare section is
        // recovered at the next open), as RocksDB's.
        self.unregister_name(&st);
        if let Kind::Pessimistic { db, .. } = &self.kind {
            db.locks.unregister(self.shared.id);
        }
    }
}

/// A transaction's snapshot handle reads "latest" when the transaction has none; that
/// handle carries this sequence number.
pub(crate) const NO_SNAPSHOT: u64 = u64::MAX;

fn normalize(ro: &ReadOptions) -> ReadOptions {
    let mut ro = ro.clone();
    if ro.snapshot == Some(NO_SNAPSHOT) {
        ro.snapshot = None;
    }
    ro
}
