//! The rest of rust-rocksdb's `DBCommon`/`DBWithThreadMode` API over Shale's engine: the open
//! variants, merges and timestamps (refused until their issues land), the metadata calls
//! (`live_files`, column-family metadata, approximate sizes), manual compaction with
//! `CompactOptions`, and the calls whose features belong to other issues, each returning
//! NotSupported naming the feature and the issue.

use crate::cf_descriptor::{ColumnFamilyDescriptor, ColumnFamilyTtl};
use crate::db::HandleOf;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::iterator::{DBIteratorWithThreadMode, Direction, IteratorMode};
use super::pinnable::DBPinnableSlice;
use super::{DBCommon, DBInner, DBWithThreadMode, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::{Error, Result};
use crate::ffi_util::CSlice;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::options_api::{CompactOptions, IngestExternalFileOptions, WaitForCompactOptions};
use crate::wal_iter::DBWALIterator;

/// A key range for `get_approximate_sizes`, as rust-rocksdb's `Range`.
pub struct Range<'a> {
    start_key: &'a [u8],
    end_key: &'a [u8],
}

impl<'a> Range<'a> {
    pub fn new(start_key: &'a [u8], end_key: &'a [u8]) -> Range<'a> {
        Range { start_key, end_key }
    }
}

/// A live table file, as rust-rocksdb's `LiveFile`.
#[derive(Debug, Clone)]
pub struct LiveFile {
    pub column_family_name: String,
    pub name: String,
    pub size: usize,
    pub level: i32,
    pub start_key: Option<Vec<u8>>,
    pub end_key: Option<Vec<u8>>,
    pub num_entries: u64,
    pub num_deletions: u64,
}

/// A column family's size and file count, as rust-rocksdb's `ColumnFamilyMetaData`.
#[derive(Debug, Clone)]
pub struct ColumnFamilyMetaData {
    pub size: u64,
    pub name: String,
    pub file_count: usize,
}

impl<T: ThreadMode> DBWithThreadMode<T> {
    /// Opens with column families given as `(name, options)` pairs.
    pub fn open_cf_with_opts<P, I, N>(opts: &Options, path: P, cfs: I) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = (N, Options)>,
        N: AsRef<str>,
    {
        let descs = cfs.into_iter().map(|(name, o)| ColumnFamilyDescriptor::new(name.as_ref(), o));
        Self::open_cf_descriptors(opts, path, descs)
    }

    /// Opens the default family read-only (see `open_cf_descriptors_read_only`).
    pub fn open_for_read_only<P: AsRef<Path>>(
        opts: &Options,
        path: P,
        error_if_log_file_exist: bool,
    ) -> Result<Self> {
        Self::open_cf_for_read_only(opts, path, None::<&str>, error_if_log_file_exist)
    }

    pub fn open_cf_for_read_only<P, I, N>(
        opts: &Options,
        path: P,
        cfs: I,
        error_if_log_file_exist: bool,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let descs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), Options::default()));
        Self::open_cf_descriptors_read_only(opts, path, descs, error_if_log_file_exist)
    }

    pub fn open_cf_with_opts_for_read_only<P, I, N>(
        db_opts: &Options,
        path: P,
        cfs: I,
        error_if_log_file_exist: bool,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = (N, Options)>,
        N: AsRef<str>,
    {
        let descs = cfs.into_iter().map(|(n, o)| ColumnFamilyDescriptor::new(n.as_ref(), o));
        Self::open_cf_descriptors_read_only(db_opts, path, descs, error_if_log_file_exist)
    }

    /// Opens read-only (RocksDB's DBImplReadOnly, see `db/readonly.rs`): no file is
    /// created, changed or deleted; a subset of the families may be opened; writes return
    /// NotSupported. With `error_if_log_file_exist`, a non-empty WAL fails the open.
    pub fn open_cf_descriptors_read_only<P, I>(
        opts: &Options,
        path: P,
        cfs: I,
        error_if_log_file_exist: bool,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        super::readonly_api::open_read_only(
            opts,
            path.as_ref(),
            cfs.into_iter().collect(),
            error_if_log_file_exist,
        )
    }

    /// Opens a secondary instance (see `open_cf_descriptors_as_secondary`).
    pub fn open_as_secondary<P: AsRef<Path>>(
        opts: &Options,
        primary_path: P,
        secondary_path: P,
    ) -> Result<Self> {
        Self::open_cf_as_secondary(opts, primary_path, secondary_path, None::<&str>)
    }

    pub fn open_cf_as_secondary<P, I, N>(
        opts: &Options,
        primary_path: P,
        secondary_path: P,
        cfs: I,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let descs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), Options::default()));
        Self::open_cf_descriptors_as_secondary(opts, primary_path, secondary_path, descs)
    }

    /// Opens a secondary instance of the primary at `path` (RocksDB's DBImplSecondary, see
    /// `db/readonly.rs`), its info log in `secondary_path`; `try_catch_up_with_primary`
    /// follows the primary's MANIFEST and WALs.
    pub fn open_cf_descriptors_as_secondary<P, I>(
        opts: &Options,
        path: P,
        secondary_path: P,
        cfs: I,
    ) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        super::readonly_api::open_secondary(
            opts,
            path.as_ref(),
            secondary_path.as_ref(),
            cfs.into_iter().collect(),
        )
    }

    /// Opens a TTL database with only the default family (see
    /// `open_cf_descriptors_with_ttl`).
    pub fn open_with_ttl<P: AsRef<Path>>(opts: &Options, path: P, ttl: Duration) -> Result<Self> {
        Self::open_cf_descriptors_with_ttl(opts, path, Vec::new(), ttl)
    }

    pub fn open_cf_with_ttl<P, I, N>(opts: &Options, path: P, cfs: I, ttl: Duration) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = N>,
        N: AsRef<str>,
    {
        let descs = cfs.into_iter().map(|n| ColumnFamilyDescriptor::new(n.as_ref(), Options::default()));
        Self::open_cf_descriptors_with_ttl(opts, path, descs, ttl)
    }

    /// Opens a TTL database (RocksDB's DBWithTTL, see `db/ttl.rs`): values carry their
    /// write time, and compactions drop those older than their family's TTL (`ttl` for the
    /// database, or the descriptor's `ColumnFamilyTtl`; zero never expires).
    pub fn open_cf_descriptors_with_ttl<P, I>(opts: &Options, path: P, cfs: I, ttl: Duration) -> Result<Self>
    where
        P: AsRef<Path>,
        I: IntoIterator<Item = ColumnFamilyDescriptor>,
    {
        let db_ttl = i32::try_from(ttl.as_secs()).unwrap_or(i32::MAX);
        let family_ttl = |t: ColumnFamilyTtl| match t {
            ColumnFamilyTtl::Disabled => i32::MAX,
            ColumnFamilyTtl::Duration(d) => i32::try_from(d.as_secs()).unwrap_or(i32::MAX),
            ColumnFamilyTtl::SameAsDb => db_ttl,
        };
        let mut db_opts = opts.clone();
        db_opts.ttl_db = Some(db_ttl);
        let mut cfs: Vec<ColumnFamilyDescriptor> = cfs.into_iter().collect();
        // As rust-rocksdb: a list naming other families but not "default" opens it with
        // `Options::default()` (added here so that it gets the database's TTL).
        if !cfs.is_empty() && !cfs.iter().any(|d| d.name == crate::DEFAULT_COLUMN_FAMILY_NAME) {
            cfs.push(ColumnFamilyDescriptor::new(crate::DEFAULT_COLUMN_FAMILY_NAME, Options::default()));
        }
        let descs: Vec<ColumnFamilyDescriptor> = cfs
            .into_iter()
            .map(|mut d| {
                d.options.ttl_db = Some(family_ttl(d.options.cf_ttl));
                d.options.cf_ttl = ColumnFamilyTtl::SameAsDb;
                d
            })
            .collect();
        Self::open_cf_descriptors(&db_opts, path, descs)
    }

    /// Stops the deletion of obsolete files (tables and WALs wait on their lists) until as
    /// many `enable_file_deletions` calls have been made, as RocksDB's counter does.
    pub fn disable_file_deletions(&self) -> Result<()> {
        self.inner.lock_state().file_deletion_holds += 1;
        Ok(())
    }

    /// Undoes one `disable_file_deletions`; the last one deletes what waited.
    pub fn enable_file_deletions(&self) -> Result<()> {
        self.inner.release_deletion_hold();
        Ok(())
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Writes a merge operand for `key` (the family needs a merge operator).
    pub fn merge<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, key: K, value: V) -> Result<()> {
        self.merge_opt(key, value, &WriteOptions::default())
    }

    pub fn merge_opt<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        key: K,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.refuse_merge_without_operator(0)?;
        let mut b = crate::WriteBatch::default();
        b.merge(key, value);
        self.write_batch(b, opts)
    }

    /// RocksDB's `DBImpl::Merge`: a family without a merge operator refuses a merge before
    /// anything is written (a batch holding one is refused with InvalidArgument instead).
    fn refuse_merge_without_operator(&self, cf_id: u32) -> Result<()> {
        match self.inner.cf_handle_by_id(cf_id) {
            Some(h) if h.config().callbacks.merge_operator.is_none() => {
                Err(crate::Error::not_supported("Provide a merge_operator when opening DB"))
            }
            _ => Ok(()),
        }
    }

    pub fn merge_cf<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
    ) -> Result<()> {
        self.merge_cf_opt(cf, key, value, &WriteOptions::default())
    }

    pub fn merge_cf_opt<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.refuse_merge_without_operator(cf.cf_id())?;
        let mut b = crate::WriteBatch::default();
        b.merge_cf(cf, key, value);
        self.write_batch(b, opts)
    }

    /// A put of `key` at timestamp `ts` into the default family, which must have
    /// user-defined timestamps of `ts`'s size (docs/timestamps.md).
    pub fn put_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        key: K,
        ts: S,
        value: V,
    ) -> Result<()> {
        self.put_with_ts_opt(key, ts, value, &WriteOptions::default())
    }

    pub fn put_with_ts_opt<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        key: K,
        ts: S,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.put_cf_with_ts_opt(&crate::cf_ref::CfId(0), key, ts, value, opts)
    }

    pub fn put_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
    ) -> Result<()> {
        self.put_cf_with_ts_opt(cf, key, ts, value, &WriteOptions::default())
    }

    pub fn put_cf_with_ts_opt<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = crate::WriteBatch::default();
        b.put_cf_with_ts(cf, key, ts, value);
        self.write_batch(b, opts)
    }

    /// A deletion of `key` at timestamp `ts` in the default family.
    pub fn delete_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(&self, key: K, ts: S) -> Result<()> {
        self.delete_with_ts_opt(key, ts, &WriteOptions::default())
    }

    pub fn delete_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        key: K,
        ts: S,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.delete_cf_with_ts_opt(&crate::cf_ref::CfId(0), key, ts, opts)
    }

    pub fn delete_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
    ) -> Result<()> {
        self.delete_cf_with_ts_opt(cf, key, ts, &WriteOptions::default())
    }

    pub fn delete_cf_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = crate::WriteBatch::default();
        b.delete_cf_with_ts(cf, key, ts);
        self.write_batch(b, opts)
    }

    /// A merge operand for `key` at timestamp `ts` (RocksDB's `DB::Merge(options, cf, key, ts,
    /// value)`; rust-rocksdb 0.25 has no such method, a Shale extension).
    pub fn merge_cf_with_ts<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
    ) -> Result<()> {
        self.merge_cf_with_ts_opt(cf, key, ts, value, &WriteOptions::default())
    }

    pub fn merge_cf_with_ts_opt<K: AsRef<[u8]>, V: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        ts: S,
        value: V,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.refuse_merge_without_operator(cf.cf_id())?;
        let mut b = crate::WriteBatch::default();
        b.merge_cf_with_ts(cf, key, ts, value);
        self.write_batch(b, opts)
    }

    /// Deletes the keys in `[from, to)` of `cf` at timestamp `ts` (RocksDB's
    /// `DB::DeleteRange(options, cf, begin, end, ts)`; rust-rocksdb 0.25 has no such method, a
    /// Shale extension).
    pub fn delete_range_cf_with_ts<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        ts: S,
    ) -> Result<()> {
        self.delete_range_cf_with_ts_opt(cf, from, to, ts, &WriteOptions::default())
    }

    pub fn delete_range_cf_with_ts_opt<K: AsRef<[u8]>, S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
        ts: S,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut b = crate::WriteBatch::default();
        b.delete_range_cf_with_ts(cf, from, to, ts);
        self.write_batch(b, opts)
    }

    /// Raises the family's `full_history_ts_low` (recorded in the MANIFEST): reads below it
    /// are refused from now on, and compaction may collect the versions it hides.
    /// Lowering it is InvalidArgument, as in RocksDB.
    pub fn increase_full_history_ts_low<S: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        ts: S,
    ) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        self.inner.increase_full_history_ts_low(&h, ts.as_ref())
    }

    /// The family's `full_history_ts_low` (empty when never set).
    pub fn get_full_history_ts_low(&self, cf: &impl AsColumnFamilyRef) -> Result<Vec<u8>> {
        let h = self.inner.handle_of(cf)?;
        if h.icmp.timestamp_size() == 0 {
            return Err(Error::invalid_argument(format!(
                "Timestamp is not enabled in column family {}",
                h.name
            )));
        }
        Ok(h.full_history_ts_low())
    }

    /// Point lookups of many keys of one family, as rust-rocksdb's `batched_multi_get_cf`.
    pub fn batched_multi_get_cf<'a, K, It>(
        &self,
        cf: &impl AsColumnFamilyRef,
        keys: It,
        sorted_input: bool,
    ) -> Vec<Result<Option<DBPinnableSlice<'_>>>>
    where
        K: AsRef<[u8]> + 'a + ?Sized,
        It: IntoIterator<Item = &'a K>,
    {
        self.batched_multi_get_cf_opt(cf, keys, sorted_input, &ReadOptions::default())
    }

    pub fn batched_multi_get_cf_opt<'a, K, It>(
        &self,
        cf: &impl AsColumnFamilyRef,
        keys: It,
        sorted_input: bool,
        readopts: &ReadOptions,
    ) -> Vec<Result<Option<DBPinnableSlice<'_>>>>
    where
        K: AsRef<[u8]> + 'a + ?Sized,
        It: IntoIterator<Item = &'a K>,
    {
        let keys: Vec<&K> = keys.into_iter().collect();
        // The family is looked up once for the whole call.
        let handle = self.inner.handle_of(cf);
        // Unsorted input is read in the family's key order, as RocksDB's MultiGet sorts it
        // (`PrepareMultiGetKeys`): neighbouring keys then share data blocks, so a block read
        // and uncompressed for one key is a cache hit for the next ones. The results come
        // back in the caller's order. Sorted input is taken as given, as RocksDB does.
        let mut order: Vec<usize> = (0..keys.len()).collect();
        if let (Ok(h), false) = (&handle, sorted_input) {
            order.sort_by(|&a, &b| h.icmp.compare_user_without_ts(keys[a].as_ref(), keys[b].as_ref()));
        }
        // One view for the whole call (one sequence, one SuperVersion), as `multi_get_cf_opt`
        // and RocksDB's batched MultiGet.
        let found = self.inner.with_pinned_read(readopts, |o| {
            self.inner.multi_get_impl(order.iter().map(|&i| (handle.clone(), keys[i].as_ref())), o)
        });
        let mut out: Vec<Option<Result<Option<DBPinnableSlice<'_>>>>> = Vec::with_capacity(keys.len());
        out.resize_with(keys.len(), || None);
        for (&i, r) in order.iter().zip(found) {
            out[i] = Some(r.map(super::pinnable::pin));
        }
        // Every index of `order` got its result (multi_get_impl answers each key it is given).
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::corruption("batched_multi_get: a key got no result"))))
            .collect()
    }

    /// Whether the key may exist, and its value when found: Shale reads the key, so the
    /// answer is exact and the value always comes with a "yes".
    pub fn key_may_exist_cf_opt_value<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        key: K,
        readopts: &ReadOptions,
    ) -> (bool, Option<CSlice>) {
        match self.get_cf_opt(cf, key, readopts) {
            Ok(Some(v)) => (true, Some(CSlice::new(v))),
            Ok(None) => (false, None),
            Err(_) => (true, None),
        }
    }

    /// A forward iterator from `prefix` with `prefix_same_as_start`, as rust-rocksdb's: with
    /// a prefix extractor it stops at the end of `prefix`'s extracted prefix (and passes over
    /// tables whose prefix filter excludes it); without one it runs to the end.
    pub fn prefix_iterator<'a: 'b, 'b, P: AsRef<[u8]>>(
        &'a self,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        self.iterator_opt(IteratorMode::From(prefix.as_ref(), Direction::Forward), ro)
    }

    pub fn prefix_iterator_cf<'a, P: AsRef<[u8]>>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
        prefix: P,
    ) -> DBIteratorWithThreadMode<'a, Self> {
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        self.iterator_cf_opt(cf, ro, IteratorMode::From(prefix.as_ref(), Direction::Forward))
    }

    /// An iterator over the whole of `cf` (total-order seek).
    pub fn full_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        self.iterator_cf_opt(cf, ro, mode)
    }

    /// Manual compaction with options, as RocksDB 11.8.1's `CompactRange`: the bottommost
    /// level policy, and with `set_change_level` the move of the resulting level to
    /// `set_target_level` (`db/compact.rs`). rust-rocksdb's signature returns nothing: a
    /// failure or refusal is written to LOG (`try_compact_range_cf_opt` returns it).
    pub fn compact_range_opt<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        start: Option<S>,
        end: Option<E>,
        opts: &CompactOptions,
    ) {
        let cf = self.default_handle().clone_handle();
        self.compact_range_cf_opt(&cf, start, end, opts)
    }

    pub fn compact_range_cf_opt<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
        opts: &CompactOptions,
    ) {
        // A failure is in LOG already.
        let _ = self.try_compact_range_cf_opt(cf, start, end, opts);
    }

    /// `compact_range_cf_opt` with its outcome (Shale's; rust-rocksdb's returns nothing):
    /// RocksDB's Status for a refused level change, for instance NotSupported "Levels
    /// between source and target are not empty for a move.".
    pub fn try_compact_range_cf_opt<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
        opts: &CompactOptions,
    ) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        // RocksDB's CompactRange refuses a level change under FIFO first.
        if opts.change_level().is_some() && h.config().style == shale_engine::config::CompactionStyle::Fifo {
            return Err(crate::Error::not_supported("FIFO compaction does not support change_level."));
        }
        // Then it raises the family's full_history_ts_low, refusing it with a range.
        if let Some(ts) = opts.full_history_ts_low().filter(|t| !t.is_empty()) {
            if start.is_some() || end.is_some() {
                return Err(crate::Error::invalid_argument(
                    "Cannot specify compaction range with full_history_ts_low",
                ));
            }
            if let Err(e) = self.inner.increase_full_history_ts_low(&h, ts) {
                self.inner.info_log.log(format_args!("compact_range refused: {e}"));
                return Err(e);
            }
        }
        self.compact_range_opt_result(
            &h,
            start,
            end,
            opts.bottommost_level_compaction(),
            opts.change_level(),
            opts.exclusive_manual_compaction(),
        )
    }

    /// Waits until no flush or compaction is queued or running (RocksDB's WaitForCompact);
    /// with `set_flush`, flushes every family first. TimedOut after `set_timeout`.
    pub fn wait_for_compact(&self, opts: &WaitForCompactOptions) -> Result<()> {
        if opts.flush() {
            self.inner.flush_memtables(true, None)?;
        }
        self.inner.wait_for_background_work(opts.timeout_micros())
    }

    /// Changes options of the default family by RocksDB's names and value syntax, as
    /// RocksDB's `SetOptions` (see `db/dyn_options.rs` for what each one does). An unknown
    /// name or a bad value is InvalidArgument naming it, and nothing changes.
    pub fn set_options(&self, opts: &[(&str, &str)]) -> Result<()> {
        check_option_pairs(opts)?;
        super::dyn_options::set_cf_options(&self.inner, &self.default_handle().handle, opts)
    }

    /// RocksDB's `SetDBOptions` (rust-rocksdb's `set_db_options` of later releases): changes
    /// mutable DB-wide options by RocksDB's names, all or none, and writes a new OPTIONS
    /// file. Which act live and where: `shale_engine::db::live_options` and
    /// `db/dyn_options.rs::apply_db_options` (every mutable DB option of RocksDB 11.8.1); an
    /// option that is not a DB option or cannot change is InvalidArgument naming it.
    pub fn set_db_options(&self, opts: &[(&str, &str)]) -> Result<()> {
        check_option_pairs(opts)?;
        super::dyn_options::set_db_options(&self.inner, opts)
    }

    /// `set_options` on the family `cf`.
    pub fn set_options_cf(&self, cf: &impl AsColumnFamilyRef, opts: &[(&str, &str)]) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        check_option_pairs(opts)?;
        super::dyn_options::set_cf_options(&self.inner, &h, opts)
    }

    /// Approximate on-disk bytes of each range in the default family: the sizes of the
    /// table files overlapping it.
    pub fn get_approximate_sizes(&self, ranges: &[Range]) -> Vec<u64> {
        let cf = self.default_handle().clone_handle();
        self.get_approximate_sizes_cf(&cf, ranges)
    }

    pub fn get_approximate_sizes_cf(&self, cf: &impl AsColumnFamilyRef, ranges: &[Range]) -> Vec<u64> {
        let Ok(h) = self.inner.handle_of(cf) else {
            return vec![0; ranges.len()];
        };
        let sv = h.super_version();
        let ucmp = h.icmp.user_comparator().clone();
        ranges
            .iter()
            .map(|r| {
                sv.current
                    .all_files()
                    .filter(|(_, f)| {
                        let lo = crate::key::user_key(&f.smallest);
                        let hi = crate::key::user_key(&f.largest);
                        ucmp.compare(lo, r.end_key).is_lt() && ucmp.compare(hi, r.start_key).is_ge()
                    })
                    .map(|(_, f)| f.file_size)
                    .sum()
            })
            .collect()
    }

    /// The write batches after `seq_number`, read back from the WALs on disk (see
    /// `wal_iter.rs`).
    pub fn get_updates_since(&self, seq_number: u64) -> Result<DBWALIterator> {
        crate::statistics::record_tick(
            self.inner.config.statistics.as_deref(),
            crate::statistics::Ticker::GetUpdatesSinceCalls,
            1,
        );
        // Buffered WAL bytes must reach the file before it is read back.
        if self.inner.check_writable().is_ok() {
            self.flush_wal(false)?;
        }
        let last = self.latest_sequence_number();
        crate::wal_iter::updates_since(&*self.inner.fs, &self.inner.wal_dir(), seq_number, last)
    }

    /// A secondary instance reads what its primary wrote since (see `db/readonly.rs`);
    /// other databases answer NotSupported, as RocksDB's.
    pub fn try_catch_up_with_primary(&self) -> Result<()> {
        self.inner.try_catch_up_with_primary()
    }

    pub fn ingest_external_file<P: AsRef<Path>>(&self, paths: Vec<P>) -> Result<()> {
        self.ingest_external_file_opts(&IngestExternalFileOptions::default(), paths)
    }

    /// Ingests external SST files into the default family (`db/ingest.rs`).
    pub fn ingest_external_file_opts<P: AsRef<Path>>(
        &self,
        opts: &IngestExternalFileOptions,
        paths: Vec<P>,
    ) -> Result<()> {
        let cf = self.default_handle().clone_handle();
        self.ingest_external_file_cf_opts(&cf, opts, paths)
    }

    pub fn ingest_external_file_cf<P: AsRef<Path>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        paths: Vec<P>,
    ) -> Result<()> {
        self.ingest_external_file_cf_opts(cf, &IngestExternalFileOptions::default(), paths)
    }

    /// Ingests external SST files into `cf`: all of them or none (`db/ingest.rs`).
    pub fn ingest_external_file_cf_opts<P: AsRef<Path>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        opts: &IngestExternalFileOptions,
        paths: Vec<P>,
    ) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        let paths: Vec<std::path::PathBuf> = paths.iter().map(|p| p.as_ref().to_path_buf()).collect();
        self.inner.ingest_external_files(&h, &opts.engine(), &paths)
    }

    /// The default family's size and table count.
    pub fn get_column_family_metadata(&self) -> ColumnFamilyMetaData {
        let cf = self.default_handle().clone_handle();
        self.get_column_family_metadata_cf(&cf)
    }

    pub fn get_column_family_metadata_cf(&self, cf: &impl AsColumnFamilyRef) -> ColumnFamilyMetaData {
        match self.inner.handle_of(cf) {
            Ok(h) => {
                let sv = h.super_version();
                let files: Vec<_> = sv.current.all_files().collect();
                ColumnFamilyMetaData {
                    size: files.iter().map(|(_, f)| f.file_size).sum(),
                    name: h.name.clone(),
                    file_count: files.len(),
                }
            }
            Err(_) => ColumnFamilyMetaData { size: 0, name: String::new(), file_count: 0 },
        }
    }

    /// Every live table file of every family.
    pub fn live_files(&self) -> Result<Vec<LiveFile>> {
        let handles: Vec<_> = self.inner.lock_state().cfs.values().map(|c| c.handle.clone()).collect();
        let mut out = Vec::new();
        for h in handles {
            let sv = h.super_version();
            for (level, f) in sv.current.all_files() {
                let (entries, deletions) = match self.inner.table_cache.get(&h, f) {
                    Ok(t) => (t.table.properties().num_entries, t.table.properties().num_deletions),
                    Err(e) => return Err(e),
                };
                out.push(LiveFile {
                    column_family_name: h.name.clone(),
                    name: format!("/{:06}.sst", f.number),
                    size: f.file_size as usize,
                    level: level as i32,
                    start_key: Some(crate::key::user_key(&f.smallest).to_vec()),
                    end_key: Some(crate::key::user_key(&f.largest).to_vec()),
                    num_entries: entries,
                    num_deletions: deletions,
                });
            }
        }
        Ok(out)
    }

    /// Removes the tables of levels 1 and deeper that lie wholly in `[from, to]`, without
    /// compaction (RocksDB's DeleteFilesInRange; `db/delete_files.rs`).
    pub fn delete_file_in_range<K: AsRef<[u8]>>(&self, from: K, to: K) -> Result<()> {
        let h = self
            .inner
            .cf_handle_by_id(0)
            .ok_or_else(|| Error::invalid_argument("default column family missing"))?;
        self.inner.delete_files_in_range(&h, from.as_ref(), to.as_ref())
    }

    pub fn delete_file_in_range_cf<K: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        from: K,
        to: K,
    ) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        self.inner.delete_files_in_range(&h, from.as_ref(), to.as_ref())
    }

    /// Stops background flushes and compactions (they resume only after a reopen), as
    /// RocksDB's CancelAllBackgroundWork; `wait` waits for the running ones.
    pub fn cancel_all_background_work(&self, wait: bool) {
        self.inner.shutting_down.store(true, Ordering::Release);
        let mut st = self.inner.lock_state();
        self.inner.work_cv.notify_all();
        self.inner.done_cv.notify_all();
        if wait {
            while st.jobs.running_flushes > 0 || st.jobs.running_compactions > 0 {
                self.inner.done_cv.wait(&mut st);
            }
        }
    }
}

/// RocksDB's checks on `SetOptions` input: none given, or a NUL byte in a name or value.
fn check_option_pairs(opts: &[(&str, &str)]) -> Result<()> {
    if opts.is_empty() {
        return Err(Error::invalid_argument("set_options: no options given"));
    }
    for (k, v) in opts {
        if k.contains('\0') || v.contains('\0') {
            return Err(Error::invalid_argument(format!("Invalid option `{k}`: must not contain NUL")));
        }
    }
    Ok(())
}
