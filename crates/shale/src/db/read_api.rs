//! The public read and write methods of `DB` (rust-rocksdb's names and shapes), over the
//! engine's point reads (`read.rs`) and write path (`write.rs`).

use std::sync::Arc;

use super::cf::CfHandle;
use super::{DBCommon, DBInner, DBWithThreadMode, DbInner, ThreadMode};
use crate::batch::WriteBatch;
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::{Error, Result};
use crate::key::ValueType;
use crate::options::{FlushOptions, ReadOptions, WriteOptions};

/// A family handle of the API resolved to the engine's open family.
pub(crate) trait HandleOf {
    fn handle_of(&self, cf: &impl AsColumnFamilyRef) -> Result<Arc<CfHandle>>;
}

impl HandleOf for DbInner {
    fn handle_of(&self, cf: &impl AsColumnFamilyRef) -> Result<Arc<CfHandle>> {
        self.cf_handle_by_id(cf.cf_id())
            .ok_or_else(|| Error::invalid_argument(format!("Invalid column family: id {}", cf.cf_id())))
    }
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Deletes the keys in `[from, to)` of `cf` (a range tombstone).
    pub fn delete_range_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, from: K, to: K) -> Result<()> {
        self.delete_range_cf_opt(cf, from, to, &WriteOptions::default())
    }

    pub fn delete_range_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        opts: &WriteOptions,
    ) -> Result<()> {
        let n = from.as_ref().len() + to.as_ref().len();
        self.write_one(opts, n, |b| b.delete_range_cf(cf, from, to))
    }

    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.write_opt(batch, &WriteOptions::default())
    }

    pub fn write_opt(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.write_batch(batch, opts)
    }

    pub fn write_without_wal(&self, batch: WriteBatch) -> Result<()> {
        let mut o = WriteOptions::default();
        o.disable_wal(true);
        self.write_opt(batch, &o)
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Writes a batch (a TTL database's values get their write time first).
    pub(crate) fn write_batch(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.inner.check_writable()?;
        // A TTL database's values carry their write time (`ttl.rs`).
        let batch = if self.inner.config.ttl_db.is_some() {
            WriteBatch { b: batch.engine().with_value_suffix(&super::ttl::timestamp_suffix())? }
        } else {
            batch
        };
        self.write_batch_as_is(batch, opts)
    }

    /// Writes a batch as it is, in a TTL database too (what RocksDB's StackableDB passes to
    /// the base database: `PutEntity`, which DBWithTTL does not override).
    fn write_batch_as_is(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.inner.check_writable()?;
        if !batch.engine().ts_writes.is_empty()
            || self.inner.ts_families.load(std::sync::atomic::Ordering::Acquire)
        {
            self.check_timestamps(&batch)?;
        }
        if batch.has_merge() {
            // In a TTL database each family's operator is RocksDB's TtlMergeOperator
            // around the user's (`Options::merge_core_arc`).
            self.check_merge_operators(&batch)?;
        }
        self.inner.write(&opts.engine(), batch.into_engine())
    }

    /// A batch's records against the families' timestamps (RocksDB's `CheckWriteBatchTs`):
    /// a family with timestamps takes only records written with one of its size, a family
    /// without takes none.
    fn check_timestamps(&self, batch: &WriteBatch) -> Result<()> {
        for w in &batch.engine().ts_writes {
            if let Some(h) = self.inner.cf_handle_by_id(w.cf) {
                let ts_sz = h.icmp.timestamp_size();
                if ts_sz == 0 {
                    return Err(Error::invalid_argument(format!(
                        "column family {} has no user-defined timestamps: write it without one",
                        h.name
                    )));
                }
                if w.ts_size != ts_sz {
                    return Err(Error::invalid_argument(format!(
                        "Timestamp size mismatch: {}-byte timestamp for column family {}, which has {ts_sz}-byte ones",
                        w.ts_size, h.name
                    )));
                }
            }
        }
        // Records per family with timestamps; each must be one of the timestamped writes.
        let mut seen: Vec<(u32, u32)> = Vec::new();
        batch.for_each(&mut |e| {
            let Some(h) = self.inner.cf_handle_by_id(e.cf_id) else { return Ok(()) };
            if h.icmp.timestamp_size() == 0 {
                return Ok(());
            }
            match seen.iter_mut().find(|(cf, _)| *cf == e.cf_id) {
                Some((_, n)) => *n += 1,
                None => seen.push((e.cf_id, 1)),
            }
            Ok(())
        })?;
        for (cf, n) in seen {
            let with_ts: u32 = batch.engine().ts_writes.iter().filter(|w| w.cf == cf).map(|w| w.count).sum();
            if n > with_ts {
                let name = self.inner.cf_handle_by_id(cf).map(|h| h.name.clone()).unwrap_or_default();
                return Err(Error::invalid_argument(format!(
                    "column family {name} has user-defined timestamps: write it with a timestamp (put_cf_with_ts, delete_cf_with_ts, merge_cf_with_ts, delete_range_cf_with_ts)"
                )));
            }
        }
        Ok(())
    }

    /// A merge into a family without a merge operator is refused before anything is written,
    /// with RocksDB's message.
    fn check_merge_operators(&self, batch: &WriteBatch) -> Result<()> {
        let mut checked: Vec<u32> = Vec::new();
        batch.for_each(&mut |e| {
            if e.value_type == ValueType::Merge && !checked.contains(&e.cf_id) {
                // An unknown family is reported by the write itself.
                if let Some(h) = self.inner.cf_handle_by_id(e.cf_id) {
                    if h.config().callbacks.merge_operator.is_none() {
                        return Err(Error::invalid_argument(
                            "Merge requires `ColumnFamilyOptions::merge_operator != nullptr`",
                        ));
                    }
                }
                checked.push(e.cf_id);
            }
            Ok(())
        })
    }

    pub fn put<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    pub fn put_opt<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        key: K,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        let n = key.as_ref().len() + value.as_ref().len();
        self.write_one(opts, n, |b| b.put(key, value))
    }

    pub fn put_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<()> {
        self.put_cf_opt(cf, key, value, &WriteOptions::default())
    }

    pub fn put_cf_opt<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        let n = key.as_ref().len() + value.as_ref().len();
        self.write_one(opts, n, |b| b.put_cf(cf, key, value))
    }

    pub fn delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    pub fn delete_opt<K: AsRef<[u8]>>(&self, key: K, opts: &WriteOptions) -> Result<()> {
        let n = key.as_ref().len();
        self.write_one(opts, n, |b| b.delete(key))
    }

    pub fn delete_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<()> {
        self.delete_cf_opt(cf, key, &WriteOptions::default())
    }

    pub fn delete_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        opts: &WriteOptions,
    ) -> Result<()> {
        let n = key.as_ref().len();
        self.write_one(opts, n, |b| b.delete_cf(cf, key))
    }

    pub fn single_delete<K: AsRef<[u8]>>(&self, key: K) -> Result<()> {
        self.single_delete_opt(key, &WriteOptions::default())
    }

    pub fn single_delete_opt<K: AsRef<[u8]>>(&self, key: K, opts: &WriteOptions) -> Result<()> {
        let n = key.as_ref().len();
        self.write_one(opts, n, |b| b.single_delete(key))
    }

    pub fn single_delete_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<()> {
        self.single_delete_cf_opt(cf, key, &WriteOptions::default())
    }

    pub fn single_delete_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        opts: &WriteOptions,
    ) -> Result<()> {
        let n = key.as_ref().len();
        self.write_one(opts, n, |b| b.single_delete_cf(cf, key))
    }

    /// Deletes the keys in `[from, to)` of the default column family (a range tombstone).
    pub fn delete_range<K: AsRef<[u8]>>(&self, from: K, to: K) -> Result<()> {
        let n = from.as_ref().len() + to.as_ref().len();
        self.write_one(&WriteOptions::default(), n, |b| b.delete_range(from, to))
    }

    /// Writes a batch of one operation (the single-operation methods above) whose keys and
    /// values hold `bytes` bytes: the batch is allocated once, with room for its record (as
    /// RocksDB's `DB::Put` reserves its batch), not grown from an empty header.
    fn write_one(&self, opts: &WriteOptions, bytes: usize, op: impl FnOnce(&mut WriteBatch)) -> Result<()> {
        let mut b = WriteBatch::with_capacity_bytes(crate::batch::one_record_capacity(bytes));
        op(&mut b);
        self.write_batch(b, opts)
    }

    /// Writes a wide-column entity (RocksDB's `DB::PutEntity`; rust-rocksdb 0.25 has no such
    /// method): see `WriteBatch::put_entity_cf`. In a TTL database the entity is written
    /// as it is, with no write time (RocksDB's DBWithTTL does not override PutEntity:
    /// StackableDB passes it to the base database); a batch holding one is refused there.
    pub fn put_entity_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        columns: &[(&[u8], &[u8])],
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = WriteBatch::default();
        b.put_entity_cf(cf, key, columns)?;
        self.write_batch_as_is(b, opts)
    }

    /// The wide columns of `key` (RocksDB's `DB::GetEntity`): an entity's columns sorted by
    /// name, or one default column (empty name) holding a plain value; None if absent.
    pub fn get_entity_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        opts: &ReadOptions,
    ) -> Result<Option<crate::wide_columns::WideColumns>> {
        let h = self.inner.handle_of(cf)?;
        match self.inner.get_maybe_entity(&h, key.as_ref(), opts, true)? {
            Some(e) => crate::wide_columns::owned_columns(&e).map(Some),
            None => Ok(None),
        }
    }

    pub fn get<K: AsRef<[u8]>>(&self, key: K) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    pub fn get_opt<K: AsRef<[u8]>>(&self, key: K, opts: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.inner.get_impl(&self.default_handle().handle, key.as_ref(), opts)
    }

    pub fn get_cf<K: AsRef<[u8]>>(&self, cf: &impl AsColumnFamilyRef, key: K) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    pub fn get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        opts: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let h = self.inner.handle_of(cf)?;
        self.inner.get_impl(&h, key.as_ref(), opts)
    }

    pub fn multi_get<K, I>(&self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    pub fn multi_get_opt<K, I>(&self, keys: I, opts: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = K>,
    {
        // One consistent view for the whole call, as RocksDB's MultiGet.
        let h = &self.default_handle().handle;
        let keys: Vec<K> = keys.into_iter().collect();
        self.inner.with_pinned_read(opts, |o| {
            self.inner.multi_get_impl(keys.iter().map(|k| (Ok(h.clone()), k.as_ref())), o)
        })
    }

    pub fn multi_get_cf<'a, 'b: 'a, K, I, W>(&'a self, keys: I) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        self.multi_get_cf_opt(keys, &ReadOptions::default())
    }

    pub fn multi_get_cf_opt<'a, 'b: 'a, K, I, W>(
        &'a self,
        keys: I,
        opts: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>>
    where
        K: AsRef<[u8]>,
        I: IntoIterator<Item = (&'b W, K)>,
        W: 'b + AsColumnFamilyRef,
    {
        let keys: Vec<(&'b W, K)> = keys.into_iter().collect();
        self.inner.with_pinned_read(opts, |o| {
            self.inner.multi_get_impl(keys.iter().map(|(cf, k)| (self.inner.handle_of(*cf), k.as_ref())), o)
        })
    }

    /// Flushes every memtable of the default column family to level 0, waiting for it.
    pub fn flush(&self) -> Result<()> {
        self.flush_opt(&FlushOptions::default())
    }

    pub fn flush_opt(&self, opts: &FlushOptions) -> Result<()> {
        self.inner.flush_memtables(opts.wait, Some(self.default_handle().handle.id))
    }

    pub fn flush_cf(&self, cf: &impl AsColumnFamilyRef) -> Result<()> {
        self.flush_cf_opt(cf, &FlushOptions::default())
    }

    pub fn flush_cf_opt(&self, cf: &impl AsColumnFamilyRef, opts: &FlushOptions) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        self.inner.flush_memtables(opts.wait, Some(h.id))
    }

    /// Writes buffered WAL data to the OS and, with `sync`, to disk.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.inner.check_writable()?;
        let r = if sync {
            // Every WAL still alive, oldest first, as RocksDB's SyncWAL, the fsyncs outside
            // the WAL lock (`wal_sync.rs`).
            self.inner.sync_wals_unlocked(true).map(|_| ())
        } else {
            self.inner.lock_or_halt(&self.inner.wal, "WAL")?.writer.flush()
        };
        // As RocksDB's FlushWAL: a failure is a WAL write error.
        if let Err(e) = &r {
            self.inner.set_bg_error(e.clone(), super::error_handler::BgErrorReason::WriteCallback);
        }
        r
    }
}
