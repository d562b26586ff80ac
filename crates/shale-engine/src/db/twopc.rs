//! Two-phase commit in the WAL, as RocksDB's WRITE_COMMITTED transactions write it
//! (db/write_batch.cc `MarkEndPrepare`/`MarkCommit`/`MarkRollback`, the `batch.rs` layout):
//!
//! ```text
//! prepare:  WAL only        header(seq = last+1, count = n) | BeginPrepare | n records | EndPrepare(name)
//! commit:   WAL             header(seq = S, count = 0) | Commit(name)
//!           memtables       the n records at S, S+1, ...   (one write: a WAL termination point)
//! rollback: WAL only        header(seq = last+1, count = 0) | Rollback(name)
//! ```
//!
//! A transaction given a commit timestamp (RocksDB's `Transaction::SetCommitTimestamp`)
//! commits with `CommitXIDAndTimestamp(commit_ts, name)` in place of `Commit(name)`; recovery
//! then inserts its records with `commit_ts` as the timestamp of each key of a family with
//! timestamps (RocksDB's `MemTableInserter::MarkCommitWithTimestamp`, which calls
//! `WriteBatch::UpdateTimestamps` on the recovered batch). Neither rust-rocksdb 0.25 nor
//! Shale's transactions have a commit timestamp, so Shale writes this marker only when a
//! caller builds it (`Batch::commit_with_timestamp_marker`); it recovers RocksDB's.
//!
//! Recovery (`db/open.rs` `replay_wal`, with `RecoveredPrepared::replay`) keeps the records
//! of each prepare section aside under its name; a Commit(name) inserts them into the
//! memtables at the commit record's sequence numbers, a Rollback(name) drops them. Those
//! left undecided are the prepared transactions `TransactionDB::prepared_transactions`
//! returns; the open writes their prepare sections again into the new WAL (the old WALs
//! are deleted once the MANIFEST names the new one), so they survive any number of
//! reopens until decided. A plain (not `allow_2pc`) open of a WAL holding a prepare section
//! fails with NotSupported, as RocksDB's.
//!
//! While the database runs, the WAL holding a prepare section is kept (`PrepTracker`, read
//! by `db/obsolete.rs`) until its transaction is rolled back, or committed and every
//! memtable written while the commit's WAL was current has been flushed: the commit's WAL
//! record holds only the marker, so the prepare section is the only copy of the data.

use std::collections::BTreeMap;

use crate::batch::{Batch as WriteBatch, BatchEntry, Marker, WalRecord};
use crate::config::WriteSettings;
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::wal::LogWriter;

/// Prepare sections met in WAL recovery and not yet decided, by name, in the order met.
#[derive(Default)]
pub struct RecoveredPrepared {
    txns: Vec<(Vec<u8>, WriteBatch)>,
    /// The prepare section being read (between BeginPrepare and EndPrepare).
    rebuilding: Option<WriteBatch>,
}

impl RecoveredPrepared {
    /// Applies one record of WAL `wal` (`insert` puts an entry into the memtables at
    /// `*seq` and advances it; `ts_size` is a family's timestamp size, 0 without).
    #[allow(clippy::too_many_arguments)]
    pub fn replay(
        &mut self,
        config: &crate::config::DbConfig,
        _wal: u64,
        r: WalRecord<'_>,
        seq: &mut u64,
        insert: &mut dyn FnMut(&mut u64, &BatchEntry<'_>),
        ts_size: &dyn Fn(u32) -> usize,
    ) -> Result<()> {
        match r {
            WalRecord::Entry(e) => match &mut self.rebuilding {
                Some(b) => {
                    b.add_entry(&e);
                    *seq += 1;
                }
                None => insert(seq, &e),
            },
            WalRecord::Marker(Marker::BeginPrepare) => {
                if !config.allow_2pc {
                    return Err(Error::not_supported(
                        "WAL contains prepared transactions. Open with TransactionDB::Open().",
                    ));
                }
                self.rebuilding = Some(WriteBatch::default());
            }
            WalRecord::Marker(Marker::EndPrepare(name)) => {
                let b = self.rebuilding.take().unwrap_or_default();
                self.txns.retain(|(n, _)| n != name);
                self.txns.push((name.to_vec(), b));
            }
            WalRecord::Marker(Marker::Commit(name)) => {
                if let Some(i) = self.txns.iter().position(|(n, _)| n == name) {
                    let (_, b) = self.txns.remove(i);
                    b.for_each(&mut |e| {
                        insert(seq, &e);
                        Ok(())
                    })?;
                }
                // Not found: its prepare section was in a WAL deleted after the data was
                // flushed (RocksDB ignores such a marker too).
            }
            WalRecord::Marker(Marker::CommitWithTimestamp { xid, ts }) => {
                if let Some(i) = self.txns.iter().position(|(n, _)| n == xid) {
                    let (_, b) = self.txns.remove(i);
                    b.with_commit_timestamp(ts, ts_size)?.for_each(&mut |e| {
                        insert(seq, &e);
                        Ok(())
                    })?;
                }
            }
            WalRecord::Marker(Marker::Rollback(name)) => {
                self.txns.retain(|(n, _)| n != name);
            }
        }
        Ok(())
    }

    /// Writes the undecided prepare sections to `wal` (the new WAL of an open).
    pub fn relog(&self, wal: &mut LogWriter, last_sequence: u64) -> Result<()> {
        for (name, b) in &self.txns {
            let mut rec = WriteBatch::prepare_section(name, b);
            rec.set_sequence(last_sequence + 1);
            wal.add_record(rec.data())?;
        }
        Ok(())
    }
}

/// The WALs two-phase commits still need (see the module comment), and the prepared
/// transactions recovered at open until the `TransactionDB` takes them.
#[derive(Default)]
pub struct PrepTracker {
    /// WAL number -> prepared transactions whose prepare section it holds.
    live: BTreeMap<u64, usize>,
    /// (WAL of the prepare section, WAL current at commit) of committed transactions
    /// whose memtable data may be unflushed.
    committed: Vec<(u64, u64)>,
    recovered: Vec<(Vec<u8>, WriteBatch, u64)>,
}

impl PrepTracker {
    pub fn add(&mut self, log: u64) {
        *self.live.entry(log).or_insert(0) += 1;
    }

    pub fn release(&mut self, log: u64) {
        if let Some(n) = self.live.get_mut(&log) {
            *n -= 1;
            if *n == 0 {
                self.live.remove(&log);
            }
        }
    }

    pub fn committed(&mut self, log: u64, commit_wal: u64) {
        self.release(log);
        self.committed.push((log, commit_wal));
    }

    /// The oldest WAL to keep for two-phase commits, given that every family has flushed
    /// what was written before WAL `min_log` (entries older than that are dropped).
    pub fn min_log_to_keep(&mut self, min_log: u64) -> Option<u64> {
        self.committed.retain(|(_, commit_wal)| *commit_wal >= min_log);
        let a = self.live.keys().next().copied();
        let b = self.committed.iter().map(|(l, _)| *l).min();
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    pub fn set_recovered(&mut self, r: RecoveredPrepared, wal: u64) {
        for (name, b) in r.txns {
            self.add(wal);
            self.recovered.push((name, b, wal));
        }
    }

    pub fn take_recovered(&mut self) -> Vec<(Vec<u8>, WriteBatch, u64)> {
        std::mem::take(&mut self.recovered)
    }
}

impl DbInner {
    /// The prepare sections' WALs (a parking_lot leaf lock: bookkeeping only, nothing
    /// under it can panic, so it has no poisoned state; `db/halt.rs`).
    pub fn prep_tracker(
        &self,
    ) -> shale_base::lock_rank::RankedGuard<parking_lot::MutexGuard<'_, PrepTracker>> {
        self.prep.lock()
    }

    /// The current WAL's number; a poisoned WAL lock halts the database (`db/halt.rs`).
    pub fn current_wal_number(&self) -> Result<u64> {
        Ok(self.lock_or_halt(&self.wal, "WAL")?.number)
    }

    /// Appends `batch` to the WAL only (no memtable, no sequence number used), as the only
    /// writer (with `two_write_queues`, beside the write queue); returns the WAL's number.
    fn write_wal_only(&self, opts: &WriteSettings, mut batch: WriteBatch, track: bool) -> Result<u64> {
        self.check_writable()?;
        if opts.disable_wal {
            return Err(Error::invalid_argument(
                "Cannot write a two-phase-commit record with the WAL disabled",
            ));
        }
        self.check_write_queues()?;
        // RocksDB's `two_write_queues`: a WAL-only write takes the second queue (here the
        // WAL lock, which orders it with the write leaders' WAL records) instead of waiting
        // for the write queue, whose groups may be inserting into the memtables. The WAL
        // lock held until the prepare is tracked keeps its WAL from being switched between.
        let mut write = || {
            let mut wal = self.lock_or_halt(&self.wal, "WAL")?;
            batch.set_sequence(self.last_sequence() + 1);
            let r = wal.writer.add_record(batch.data()).and_then(|_| {
                if opts.sync {
                    // Older WALs still alive first (`db/wal_sync.rs`).
                    self.sync_wals_locked(&mut wal)
                } else {
                    wal.unsynced = true;
                    if self.config.manual_wal_flush {
                        Ok(()) // left in the buffer until `flush_wal` (manual_wal_flush)
                    } else {
                        wal.writer.flush()
                    }
                }
            });
            let number = wal.number;
            if r.is_ok() && track {
                // Under the WAL lock (and, with one write queue, write leadership): no WAL
                // switch or purge comes between.
                self.prep_tracker().add(number);
            }
            drop(wal);
            match r {
                Ok(()) => Ok(number),
                Err(e) => {
                    self.set_bg_error(e.clone(), crate::db::BgErrorReason::WriteCallback);
                    Err(e)
                }
            }
        };
        if self.config.two_write_queues {
            write()
        } else {
            self.exclusive_write(write)
        }
    }
}

/// Writes the prepare section of `batch` named `name`; returns the WAL holding it.
pub fn write_prepare(inner: &DbInner, opts: &WriteSettings, name: &[u8], batch: &WriteBatch) -> Result<u64> {
    inner.write_wal_only(opts, WriteBatch::prepare_section(name, batch), true)
}

/// Commits the prepared `batch` named `name`: the WAL gets Commit(name), the memtables
/// the records.
pub fn write_commit(inner: &DbInner, opts: &WriteSettings, name: &[u8], batch: &WriteBatch) -> Result<()> {
    if opts.disable_wal {
        return Err(Error::invalid_argument("Cannot write a two-phase-commit record with the WAL disabled"));
    }
    if batch.is_empty() {
        return inner.write_wal_only(opts, WriteBatch::marker(true, name), false).map(|_| ());
    }
    let mut b = WriteBatch::marker(true, name);
    b.mark_wal_termination_point();
    b.append(batch);
    write_to(inner, b, opts)
}

/// Writes Rollback(name) to the WAL.
pub fn write_rollback(inner: &DbInner, opts: &WriteSettings, name: &[u8]) -> Result<()> {
    inner.write_wal_only(opts, WriteBatch::marker(false, name), false).map(|_| ())
}

/// Writes `batch` as a plain write (what `DBCommon::write_batch` does for a database that
/// is not TTL).
pub fn write_to(inner: &DbInner, batch: WriteBatch, opts: &WriteSettings) -> Result<()> {
    inner.check_writable()?;
    inner.write(opts, batch)
}

#[cfg(test)]
mod tests {
    use super::RecoveredPrepared;
    use crate::batch::Batch;
    use crate::key::ValueType;

    /// An entry inserted: sequence, family, type, key, value.
    type Inserted = (u64, u32, ValueType, Vec<u8>, Vec<u8>);

    /// A WAL's records as RocksDB 11.8.1 writes them for a WRITE_COMMITTED transaction of a
    /// family with 8-byte timestamps committed with `SetCommitTimestamp(5)`, replayed: the
    /// prepared values reach the memtables at the commit timestamp and the commit's sequence.
    #[test]
    fn a_commit_with_a_timestamp_inserts_the_prepared_values_at_it() {
        // Prepare (seq 10, count 2): 0x9 | Put(cf 1, "k1"+ts0, "v1") | Put(cf 0, "p", "pv")
        // | 0xA "tx".
        let mut prepare = 10u64.to_le_bytes().to_vec();
        prepare.extend_from_slice(&2u32.to_le_bytes());
        prepare.push(0x9);
        prepare.extend_from_slice(&[0x5, 1, 10, b'k', b'1', 0, 0, 0, 0, 0, 0, 0, 0, 2, b'v', b'1']);
        prepare.extend_from_slice(&[0x1, 1, b'p', 2, b'p', b'v']);
        prepare.extend_from_slice(&[0xA, 2, b't', b'x']);
        // Commit (seq 11, count 0): 0x15 | len 8 | ts 5 | len 2 | "tx".
        let mut commit = 11u64.to_le_bytes().to_vec();
        commit.extend_from_slice(&0u32.to_le_bytes());
        commit.extend_from_slice(&[0x15, 8, 5, 0, 0, 0, 0, 0, 0, 0, 2, b't', b'x']);

        let config = crate::config::DbConfig { allow_2pc: true, ..Default::default() };
        let ts_size = |cf: u32| if cf == 1 { 8 } else { 0 };
        let mut prepared = RecoveredPrepared::default();
        let mut inserted: Vec<Inserted> = Vec::new();
        for rec in [&prepare, &commit] {
            let batch = Batch::from_data(rec);
            let mut seq = batch.sequence();
            let mut insert = |seq: &mut u64, e: &crate::batch::BatchEntry<'_>| {
                inserted.push((*seq, e.cf_id, e.value_type, e.key.to_vec(), e.value.to_vec()));
                *seq += 1;
            };
            batch
                .for_each_wal_record(&mut |r| prepared.replay(&config, 7, r, &mut seq, &mut insert, &ts_size))
                .unwrap();
        }
        let ts5 = 5u64.to_le_bytes();
        assert_eq!(
            inserted,
            vec![
                (11, 1, ValueType::Value, [&b"k1"[..], &ts5].concat(), b"v1".to_vec()),
                (12, 0, ValueType::Value, b"p".to_vec(), b"pv".to_vec()),
            ]
        );
        assert!(prepared.txns.is_empty(), "committed: nothing left prepared");

        // A commit timestamp of another size than the family's fails recovery as RocksDB's
        // UpdateTimestamps does (InvalidArgument "timestamp size mismatch").
        let mut prepared = RecoveredPrepared::default();
        let mut bad_commit = 11u64.to_le_bytes().to_vec();
        bad_commit.extend_from_slice(&0u32.to_le_bytes());
        bad_commit.extend_from_slice(&[0x15, 4, 5, 0, 0, 0, 2, b't', b'x']);
        let mut insert = |seq: &mut u64, _: &crate::batch::BatchEntry<'_>| *seq += 1;
        let mut seq = 10;
        Batch::from_data(&prepare)
            .for_each_wal_record(&mut |r| prepared.replay(&config, 7, r, &mut seq, &mut insert, &ts_size))
            .unwrap();
        let err = Batch::from_data(&bad_commit)
            .for_each_wal_record(&mut |r| prepared.replay(&config, 7, r, &mut seq, &mut insert, &ts_size))
            .unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidArgument, "{err}");
    }
}
