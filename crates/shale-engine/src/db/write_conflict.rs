//! Write-conflict checks of transactions (RocksDB's `TransactionUtil::CheckKey`): has a key
//! been written after sequence number `snap`?
//!
//! RocksDB answers from the memtables only for optimistic transactions (`cache_only`),
//! failing with TryAgain when they do not reach back to `snap`
//! (`max_write_buffer_size_to_maintain`), and from every source for pessimistic ones.
//! Shale always reads every source — memtables, then level-0 tables newest first, then one
//! table per deeper level — stopping at the first (newest) entry of the key, and counts a
//! range tombstone covering the key as a write. The answer is exact, with one exception:
//! a compaction into the bottommost level zeroes the sequence number of entries no
//! snapshot needs (RocksDB's bottommost seqno zeroing), so a key whose newest entry is in a
//! table at sequence 0 may have been written after `snap`. Then RocksDB's own rule decides:
//! no conflict when the memtables, with the flushed ones kept as history
//! (`max_write_buffer_size_to_maintain`, which `OptimisticTransactionDB::open` turns on as
//! RocksDB's does), reach back to `snap` (every later write is in them, and the key is not),
//! else TryAgain with RocksDB's message. (Found by the optimistic bank of
//! `shale crash-test` on a loaded machine: a transfer validated against a zeroed entry of a
//! concurrent transfer and lost it.)

use crate::db::{CfHandle, DbInner};
use crate::error::{Error, Result};
use crate::key::{lookup_key, parse_internal_key, user_key, SequenceNumber, MAX_SEQUENCE_NUMBER};

impl DbInner {
    /// The sequence number of the newest write of `key` in family `cf` (a point entry or a
    /// range tombstone covering it), if any.
    pub fn latest_sequence_for_key(&self, cf: &CfHandle, key: &[u8]) -> Result<Option<SequenceNumber>> {
        let sv = cf.super_version();
        let mut best: SequenceNumber = 0;
        let mut found = false;
        // The history (`max_write_buffer_size_to_maintain`) holds flushed memtables whose
        // entries keep their own sequence numbers, which a bottommost compaction may have
        // zeroed in the tables since. A table ingested after them may hold a newer entry, so
        // the tables are read as well.
        for mem in sv.history.iter() {
            let cov = mem.max_covering_tombstone_seq(key, MAX_SEQUENCE_NUMBER);
            if let Some((s, _, _)) = mem.try_get(key, MAX_SEQUENCE_NUMBER)? {
                best = best.max(s).max(cov);
                found = true;
                break;
            }
            if cov > 0 {
                best = best.max(cov);
                found = true;
            }
        }
        for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
            let cov = mem.max_covering_tombstone_seq(key, MAX_SEQUENCE_NUMBER);
            if cov > 0 {
                best = best.max(cov);
                found = true;
            }
            if let Some((s, _, _)) = mem.try_get(key, MAX_SEQUENCE_NUMBER)? {
                // Older sources hold only older entries of the key; tombstones there are
                // older than this memtable's entries too.
                return Ok(Some(best.max(s)));
            }
        }
        let lookup = lookup_key(key, MAX_SEQUENCE_NUMBER);
        let version = &sv.current;
        for level in 0..version.num_levels() {
            let candidates = version.files_for_key(level, &lookup);
            for f in candidates {
                if cf.icmp.compare_user(key, user_key(&f.smallest)).is_lt()
                    || cf.icmp.compare_user(key, user_key(&f.largest)).is_gt()
                {
                    continue;
                }
                let entry = self.table_cache.get(cf, f)?;
                if !entry.tombstones.is_empty() {
                    let cov = entry.tombstones.max_covering_seq(key, MAX_SEQUENCE_NUMBER);
                    if cov > 0 {
                        best = best.max(cov);
                        found = true;
                    }
                }
                if let Some((ik, _)) = entry.table.get(&lookup, false)? {
                    let p = parse_internal_key(&ik)?;
                    return Ok(Some(best.max(p.sequence)));
                }
            }
        }
        Ok(found.then_some(best))
    }

    /// Busy when `key` was written after `snap` (RocksDB's write conflict).
    pub fn check_key_conflict(&self, cf: &CfHandle, key: &[u8], snap: SequenceNumber) -> Result<()> {
        match self.latest_sequence_for_key(cf, key)? {
            Some(s) if s > snap => Err(Error::busy("")),
            // A zeroed sequence number: the write's own is lost (see the module comment).
            Some(0) if snap < MAX_SEQUENCE_NUMBER => {
                let sv = cf.super_version();
                let earliest = std::iter::once(&sv.mem)
                    .chain(sv.imm.iter())
                    .chain(sv.history.iter())
                    .map(|m| m.earliest_seqno())
                    .min()
                    .unwrap_or(MAX_SEQUENCE_NUMBER);
                if earliest <= snap {
                    Ok(())
                } else {
                    Err(Error::new(crate::error::ErrorKind::TryAgain, format!(
                        "Transaction could not check for conflicts for operation at SequenceNumber {snap} as the MemTable only contains changes newer than SequenceNumber {earliest}.  Increasing the value of the max_write_buffer_size_to_maintain option could reduce the frequency of this error."
                    )))
                }
            }
            _ => Ok(()),
        }
    }
}
