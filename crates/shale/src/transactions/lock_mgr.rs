//! The point lock manager of pessimistic transactions, as RocksDB's `PointLockManager`
//! (utilities/transactions/lock/point/point_lock_manager.cc).
//!
//! Keys are locked per (column family, key), shared or exclusive. The key space is split
//! into `num_stripes` stripes by hash; each stripe has its own mutex and condition
//! variable, so transactions locking unrelated keys rarely contend. A lock request that
//! conflicts waits on its stripe's condition variable until the holder lets go, the
//! request's timeout passes (TimedOut "Timeout waiting to lock key"), or the holder's
//! expiration time passes (its locks are then stolen: the holder can no longer commit, it
//! gets Expired).
//!
//! Deadlock detection (`deadlock_detect`): a waiting transaction records whom it waits for
//! in a wait-for map; before waiting, a breadth-first walk from the holders through that
//! map looks for the requester. Finding it, or going deeper than `deadlock_detect_depth`
//! (RocksDB assumes a deadlock then), fails the request with Busy "Deadlock".
//!
//! `max_num_locks` caps the keys locked at once per column family (Busy "Failed to
//! acquire lock due to max_num_locks limit").
//!
//! Lock order: a stripe's mutex, then the wait-for map or the transaction registry (leaf
//! locks; never a stripe's mutex while holding one of them).

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, ErrorKind, Result};

/// Transaction states that matter to lock stealing (RocksDB's `TransactionState`).
pub(crate) const STARTED: u8 = 0;
pub(crate) const AWAITING_PREPARE: u8 = 1;
pub(crate) const PREPARED: u8 = 2;
pub(crate) const AWAITING_COMMIT: u8 = 3;
pub(crate) const COMMITTED: u8 = 4;
pub(crate) const AWAITING_ROLLBACK: u8 = 5;
pub(crate) const ROLLEDBACK: u8 = 6;
pub(crate) const LOCKS_STOLEN: u8 = 7;

/// What the lock manager knows of a transaction: its id, its expiration time and its
/// state (another transaction may move it from STARTED to LOCKS_STOLEN).
pub(crate) struct TxnShared {
    pub id: u64,
    /// Microseconds since the epoch after which the transaction's locks may be stolen;
    /// 0: never.
    pub expiration_us: std::sync::atomic::AtomicU64,
    pub state: AtomicU8,
}

impl TxnShared {
    pub fn new(id: u64, expiration_ms: i64) -> Arc<TxnShared> {
        let exp = if expiration_ms >= 0 { now_us() + expiration_ms as u64 * 1000 } else { 0 };
        Arc::new(TxnShared {
            id,
            expiration_us: std::sync::atomic::AtomicU64::new(exp),
            state: AtomicU8::new(STARTED),
        })
    }

    pub fn expiration(&self) -> u64 {
        self.expiration_us.load(Ordering::Acquire)
    }

    /// Whether the transaction has passed its expiration time.
    pub fn is_expired(&self) -> bool {
        let e = self.expiration();
        e > 0 && now_us() >= e
    }

    /// Moves the transaction from STARTED to LOCKS_STOLEN (RocksDB's `TryStealingLocks`);
    /// false if it is committing, prepared or done.
    fn try_steal(&self) -> bool {
        self.state.compare_exchange(STARTED, LOCKS_STOLEN, Ordering::AcqRel, Ordering::Acquire).is_ok()
            || self.state.load(Ordering::Acquire) == LOCKS_STOLEN
    }
}

pub(crate) fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// One locked key: its holders (one when exclusive) and when the lock expires.
struct LockInfo {
    txn_ids: Vec<u64>,
    exclusive: bool,
    /// Microseconds since the epoch; 0: never.
    expiration_us: u64,
}

type LockKey = (u32, Vec<u8>);

struct Stripe {
    keys: Mutex<HashMap<LockKey, LockInfo>>,
    cv: Condvar,
}

/// How one lock request may wait.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LockRequest {
    pub exclusive: bool,
    /// Microseconds; negative: forever; 0: not at all.
    pub timeout_us: i64,
    pub deadlock_detect: bool,
    pub deadlock_detect_depth: i64,
}

/// The striped point lock manager of one TransactionDB.
pub(crate) struct LockManager {
    stripes: Vec<Stripe>,
    max_num_locks: i64,
    /// Keys locked per column family (kept only when `max_num_locks` > 0).
    counts: Mutex<HashMap<u32, i64>>,
    /// Transactions with an expiration time, for lock stealing (a leaf lock).
    registry: Mutex<HashMap<u64, Weak<TxnShared>>>,
    /// Who waits for whom (a leaf lock).
    wait_for: Mutex<HashMap<u64, Vec<u64>>>,
}

fn busy(sub: &str) -> Error {
    Error::new(ErrorKind::Busy, sub)
}

fn timed_out() -> Error {
    Error::new(ErrorKind::TimedOut, "Timeout waiting to lock key")
}

impl LockManager {
    pub fn new(num_stripes: usize, max_num_locks: i64) -> LockManager {
        let n = num_stripes.max(1);
        LockManager {
            stripes: (0..n)
                .map(|_| Stripe { keys: Mutex::new(HashMap::new()), cv: Condvar::new() })
                .collect(),
            max_num_locks,
            counts: Mutex::new(HashMap::new()),
            registry: Mutex::new(HashMap::new()),
            wait_for: Mutex::new(HashMap::new()),
        }
    }

    fn stripe(&self, cf: u32, key: &[u8]) -> &Stripe {
        let mut h = DefaultHasher::new();
        cf.hash(&mut h);
        key.hash(&mut h);
        &self.stripes[(h.finish() % self.stripes.len() as u64) as usize]
    }

    /// Makes a transaction with an expiration time known, so waiters can steal its locks.
    pub fn register(&self, txn: &Arc<TxnShared>) {
        if txn.expiration() > 0 {
            self.registry.lock().insert(txn.id, Arc::downgrade(txn));
        }
    }

    pub fn unregister(&self, id: u64) {
        self.registry.lock().remove(&id);
    }

    /// Whether the lock `info`, held by others, has expired and its holders' locks could be
    /// stolen (RocksDB's `IsLockExpired`). `wake_at` gets the expiration when it is later.
    fn is_expired(&self, me: u64, info: &LockInfo, wake_at: &mut Option<u64>) -> bool {
        if info.expiration_us == 0 {
            return false;
        }
        let now = now_us();
        if now < info.expiration_us {
            *wake_at = Some(info.expiration_us);
            return false;
        }
        let reg = self.registry.lock();
        for id in info.txn_ids.iter().filter(|id| **id != me) {
            // A holder that is gone (None) left its lock behind by mistake: take it.
            if let Some(t) = reg.get(id).and_then(Weak::upgrade) {
                if !t.try_steal() {
                    return false;
                }
            }
        }
        true
    }

    /// Locks `key` of family `cf` for `txn` as `req` says.
    pub fn lock(&self, txn: &TxnShared, cf: u32, key: &[u8], req: LockRequest) -> Result<()> {
        let stripe = self.stripe(cf, key);
        let deadline =
            (req.timeout_us > 0).then(|| Instant::now() + Duration::from_micros(req.timeout_us as u64));
        let mut keys = stripe.keys.lock();
        let mut waiting = false;
        let result = loop {
            let mut wake_at = None;
            let holders = match self.try_lock(&mut keys, txn, cf, key, req.exclusive, &mut wake_at) {
                Ok(()) => break Ok(()),
                Err(Some(e)) => break Err(e),
                Err(None) => self.holders(&keys, txn.id, cf, key),
            };
            if req.timeout_us == 0 {
                break Err(timed_out());
            }
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    break Err(timed_out());
                }
            }
            waiting = true;
            if self.note_wait(txn.id, holders, req) {
                break Err(busy("Deadlock"));
            }
            // Wake at the deadline, or when the holder's lock expires, whichever is first.
            let mut until = deadline;
            if let Some(w) = wake_at {
                let at = Instant::now() + Duration::from_micros(w.saturating_sub(now_us()) + 1);
                until = Some(until.map_or(at, |d| d.min(at)));
            }
            match until {
                Some(u) => {
                    stripe.cv.wait_until(&mut keys, u);
                }
                None => stripe.cv.wait(&mut keys),
            }
        };
        drop(keys);
        if waiting {
            self.wait_for.lock().remove(&txn.id);
        }
        result
    }

    /// Records that `me` waits for `holders`; true if that closes a cycle (or the walk goes
    /// deeper than allowed) with deadlock detection on.
    fn note_wait(&self, me: u64, holders: Vec<u64>, req: LockRequest) -> bool {
        let mut map = self.wait_for.lock();
        if !req.deadlock_detect {
            map.insert(me, holders);
            return false;
        }
        let mut queue: VecDeque<(u64, i64)> = holders.iter().map(|h| (*h, 0)).collect();
        let mut seen: HashSet<u64> = HashSet::new();
        let mut deadlock = false;
        while let Some((t, depth)) = queue.pop_front() {
            if t == me {
                deadlock = true;
                break;
            }
            if depth >= req.deadlock_detect_depth {
                // RocksDB: a wait chain too long to follow is taken for a deadlock.
                deadlock = true;
                break;
            }
            if let Some(next) = map.get(&t) {
                for n in next {
                    if seen.insert(*n) {
                        queue.push_back((*n, depth + 1));
                    }
                }
            }
        }
        if deadlock {
            map.remove(&me);
        } else {
            map.insert(me, holders);
        }
        deadlock
    }

    fn holders(&self, keys: &HashMap<LockKey, LockInfo>, me: u64, cf: u32, key: &[u8]) -> Vec<u64> {
        keys.get(&(cf, key.to_vec()))
            .map(|i| i.txn_ids.iter().copied().filter(|id| *id != me).collect())
            .unwrap_or_default()
    }

    /// One attempt (RocksDB's `AcquireLocked`): Ok when granted, Err(None) on a conflict
    /// worth waiting for, Err(Some) on a failure (the lock limit).
    fn try_lock(
        &self,
        keys: &mut HashMap<LockKey, LockInfo>,
        txn: &TxnShared,
        cf: u32,
        key: &[u8],
        exclusive: bool,
        wake_at: &mut Option<u64>,
    ) -> std::result::Result<(), Option<Error>> {
        let exp = txn.expiration();
        let k = (cf, key.to_vec());
        if let Some(info) = keys.get_mut(&k) {
            if info.exclusive || exclusive {
                if info.txn_ids.len() == 1 && info.txn_ids[0] == txn.id {
                    info.exclusive = exclusive;
                    info.expiration_us = exp;
                    return Ok(());
                }
                if self.is_expired(txn.id, info, wake_at) {
                    info.txn_ids = vec![txn.id];
                    info.exclusive = exclusive;
                    info.expiration_us = exp;
                    return Ok(());
                }
                return Err(None);
            }
            if !info.txn_ids.contains(&txn.id) {
                info.txn_ids.push(txn.id);
            }
            info.expiration_us = info.expiration_us.max(exp);
            return Ok(());
        }
        if self.max_num_locks > 0 {
            let mut counts = self.counts.lock();
            let n = counts.entry(cf).or_insert(0);
            if *n >= self.max_num_locks {
                return Err(Some(busy("Failed to acquire lock due to max_num_locks limit")));
            }
            *n += 1;
        }
        keys.insert(k, LockInfo { txn_ids: vec![txn.id], exclusive, expiration_us: exp });
        Ok(())
    }

    /// Releases `txn`'s locks on `keys` and wakes the waiters of their stripes.
    pub fn unlock<'k>(&self, txn_id: u64, keys: impl IntoIterator<Item = (u32, &'k [u8])>) {
        for (cf, key) in keys {
            let stripe = self.stripe(cf, key);
            let mut map = stripe.keys.lock();
            let k = (cf, key.to_vec());
            let mut removed = false;
            if let Some(info) = map.get_mut(&k) {
                info.txn_ids.retain(|id| *id != txn_id);
                if info.txn_ids.is_empty() {
                    map.remove(&k);
                    removed = true;
                }
            }
            drop(map);
            if removed && self.max_num_locks > 0 {
                if let Some(n) = self.counts.lock().get_mut(&cf) {
                    *n -= 1;
                }
            }
            stripe.cv.notify_all();
        }
    }

    /// The number of keys locked now (all families), for tests and properties.
    #[cfg(test)]
    pub fn num_locked(&self) -> usize {
        self.stripes.iter().map(|s| s.keys.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(exclusive: bool, timeout_us: i64) -> LockRequest {
        LockRequest { exclusive, timeout_us, deadlock_detect: true, deadlock_detect_depth: 50 }
    }

    #[test]
    fn exclusive_conflicts_and_shared_shares() {
        let m = LockManager::new(4, -1);
        let a = TxnShared::new(1, -1);
        let b = TxnShared::new(2, -1);
        m.lock(&a, 0, b"k", req(true, 0)).unwrap();
        let e = m.lock(&b, 0, b"k", req(false, 1000)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert_eq!(e.to_string(), "Operation timed out: Timeout waiting to lock key");
        m.unlock(1, [(0, &b"k"[..])]);
        m.lock(&a, 0, b"k", req(false, 0)).unwrap();
        m.lock(&b, 0, b"k", req(false, 0)).unwrap();
        assert!(m.lock(&b, 0, b"k", req(true, 0)).is_err());
        m.unlock(1, [(0, &b"k"[..])]);
        m.lock(&b, 0, b"k", req(true, 0)).unwrap();
        // The same key of another family is another lock.
        m.lock(&a, 1, b"k", req(true, 0)).unwrap();
        assert_eq!(m.num_locked(), 2);
    }

    #[test]
    fn lock_limit_per_family() {
        let m = LockManager::new(4, 2);
        let a = TxnShared::new(1, -1);
        m.lock(&a, 0, b"a", req(true, 0)).unwrap();
        m.lock(&a, 0, b"b", req(true, 0)).unwrap();
        let e = m.lock(&a, 0, b"c", req(true, 0)).unwrap_err();
        assert_eq!(e.to_string(), "Resource busy: Failed to acquire lock due to max_num_locks limit");
        m.lock(&a, 1, b"c", req(true, 0)).unwrap();
        m.unlock(1, [(0, &b"a"[..])]);
        m.lock(&a, 0, b"c", req(true, 0)).unwrap();
    }

    #[test]
    fn expired_locks_are_stolen() {
        let m = LockManager::new(4, -1);
        let a = TxnShared::new(1, 10);
        m.register(&a);
        let b = TxnShared::new(2, -1);
        m.lock(&a, 0, b"k", req(true, 0)).unwrap();
        // Waits for the expiration, then steals.
        m.lock(&b, 0, b"k", req(true, 1_000_000)).unwrap();
        assert_eq!(a.state.load(Ordering::Acquire), LOCKS_STOLEN);
    }

    #[test]
    fn waiter_wakes_on_unlock() {
        let m = Arc::new(LockManager::new(1, -1));
        let a = TxnShared::new(1, -1);
        m.lock(&a, 0, b"k", req(true, 0)).unwrap();
        let m2 = m.clone();
        let t = std::thread::spawn(move || {
            let b = TxnShared::new(2, -1);
            m2.lock(&b, 0, b"k", req(true, -1))
        });
        std::thread::sleep(Duration::from_millis(20));
        m.unlock(1, [(0, &b"k"[..])]);
        t.join().unwrap().unwrap();
    }

    #[test]
    fn deadlock_is_detected() {
        let m = Arc::new(LockManager::new(16, -1));
        let a = TxnShared::new(1, -1);
        let b = TxnShared::new(2, -1);
        m.lock(&a, 0, b"x", req(true, 0)).unwrap();
        m.lock(&b, 0, b"y", req(true, 0)).unwrap();
        let m2 = m.clone();
        let t = std::thread::spawn(move || {
            let a2 = TxnShared { id: 1, expiration_us: 0.into(), state: AtomicU8::new(STARTED) };
            m2.lock(&a2, 0, b"y", req(true, 2_000_000))
        });
        // Let the first waiter record its wait.
        let start = Instant::now();
        while m.wait_for.lock().get(&1).is_none() {
            // (A wait not recorded yet would make the second lock wait out its timeout.)
            assert!(start.elapsed() < Duration::from_secs(60), "the first waiter never waited");
            std::thread::sleep(Duration::from_millis(1));
        }
        let e = m.lock(&b, 0, b"x", req(true, 2_000_000)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Busy);
        assert_eq!(e.to_string(), "Resource busy: Deadlock");
        m.unlock(2, [(0, &b"y"[..])]);
        t.join().unwrap().unwrap();
    }
}
