//! The user-facing iterators: `DBRawIterator` (RocksDB's Iterator) and `DBIterator` (a Rust
//! `Iterator` of `(key, value)` pairs), as in rust-rocksdb.
//!
//! Both sit on `iter::db_iter::DBIter` over a merging iterator of every source of one
//! column family's SuperVersion; the SuperVersion is held so its files stay on disk.

use crate::db::HandleOf;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use super::cf::{CfHandle, SuperVersion};
use super::iter_build::PrefixMode;
use super::{DBCommon, DBInner, DbInner, ThreadMode, DB};
use crate::cf_ref::AsColumnFamilyRef;
use crate::db::thread_mode::DBAccess;
use crate::error::Result;
use crate::iter::db_iter::DBIter;
use crate::iter::range_del::FragmentedTombstones;
use crate::iter::BoxedIterator;
use crate::options::ReadOptions;

/// Iteration direction, as rust-rocksdb's `Direction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Reverse,
}

/// Where a `DBIterator` starts, as rust-rocksdb's `IteratorMode`.
#[derive(Debug, Clone, Copy)]
pub enum IteratorMode<'a> {
    Start,
    End,
    From(&'a [u8], Direction),
}

/// `(key, value)` as rust-rocksdb's `KVBytes`.
pub type KVBytes = (Box<[u8]>, Box<[u8]>);

/// A raw iterator over a `DB`.
pub type DBRawIterator<'a> = DBRawIteratorWithThreadMode<'a, DB>;

impl<D: DBAccess> Drop for DBRawIteratorWithThreadMode<'_, D> {
    fn drop(&mut self) {
        let Some(src) = &self.source else { return };
        let Some(inner) = src.inner.upgrade() else { return };
        if let Some(seq) = self.held_snapshot.take() {
            inner.release_snapshot(seq);
        }
        if !inner.has_obsolete.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        // Let go of the read view (the SuperVersion and the table iterators, which hold the
        // tables' metadata) first, then purge: tables no other reader holds are deleted here,
        // or by a flush thread with `background_purge_on_iterator_cleanup`.
        self.iter = empty_iter(&src.cf);
        self._sv = None;
        inner.reader_released(src.ro.settings.background_purge_on_iterator_cleanup);
    }
}

/// An unpositioned iterator over nothing: it stands in while a view is let go in `drop`
/// (never read). No error is built for it: an Error's message is a `format!`.
fn empty_iter(cf: &CfHandle) -> DBIter {
    DBIter::new(
        cf.icmp.clone(),
        Box::new(crate::iter::VecIterator::new(Vec::new(), cf.icmp.clone())),
        Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), Vec::new())),
        0,
        None,
        None,
    )
}

/// How an iterator follows the family's newer SuperVersions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    /// It reads the SuperVersion it was built on until `refresh`.
    Pinned,
    /// `auto_refresh_iterator_with_snapshot`: at the same snapshot, onto each newer one.
    AutoRefresh,
    /// `tailing`: at the latest data, onto each newer one.
    Tailing,
}

/// The number an iterator that does not follow compares with: it never changes, so the
/// check of a pinned iterator never fires.
static NEVER_CHANGES: AtomicU64 = AtomicU64::new(0);

/// Where an iterator reads the SuperVersion number it compares with its own on every step:
/// its family's `CfHandle::super_version_number` while it follows newer SuperVersions,
/// `NEVER_CHANGES` otherwise. A pointer, so the check after each `next`/`prev` is one
/// relaxed load and one compare (as RocksDB's PR 13354) after the follow mode's, without
/// going through `Option<Source>` and the `Arc` first.
#[derive(Clone, Copy)]
struct SvWatch(NonNull<AtomicU64>);

// SAFETY: the pointee is an `AtomicU64`, which is `Sync`; `SvWatch` only gives shared
// access to it (`load`), as `&AtomicU64` (which is `Send` and `Sync`) would.
unsafe impl Send for SvWatch {}
// SAFETY: as for `Send` above.
unsafe impl Sync for SvWatch {}

impl SvWatch {
    fn never() -> Self {
        SvWatch(NonNull::from(&NEVER_CHANGES))
    }

    /// Watches `cf`'s SuperVersion number. The caller keeps `cf` (an `Arc`) alive for as
    /// long as it loads through the result.
    fn of(cf: &Arc<CfHandle>) -> Self {
        SvWatch(NonNull::from(&cf.super_version_number))
    }

    #[inline(always)]
    fn load(self) -> u64 {
        // SAFETY: the pointer is either to the static `NEVER_CHANGES` or (`SvWatch::of`) to
        // a field of the `CfHandle` in the iterator's `source.cf`: an `Arc` the iterator
        // holds from its creation until it is dropped and never replaces (`source` is set
        // once, in `new`), so the `CfHandle` does not move or go while the iterator can
        // call this.
        unsafe { self.0.as_ref() }.load(Ordering::Relaxed)
    }
}

/// A transaction's writes as internal entries (key, value), sorted.
type BatchEntries = Vec<(Vec<u8>, Vec<u8>)>;

/// What `refresh` and the SuperVersion checks rebuild the iterator from. The database is
/// weak: an iterator must not keep a closed database (and its LOCK) alive.
struct Source {
    inner: Weak<DbInner>,
    cf: Arc<CfHandle>,
    ro: ReadOptions,
    /// A transaction's writes to `cf`, as internal entries numbered above every sequence
    /// number the database can reach, merged over each view built (RocksDB's
    /// `WriteBatchWithIndex::NewIteratorWithBase` over a tailing base iterator): the batch
    /// entry of a key hides the database's, and the database is read at the latest data.
    overlay: Option<Arc<BatchEntries>>,
}

/// One view an iterator reads: its merged iterator and the SuperVersion under it.
struct View {
    iter: DBIter,
    sv: Arc<SuperVersion>,
    follow: Follow,
    /// The snapshot to hold while following (auto-refresh), if any.
    want_hold: Option<u64>,
}

/// RocksDB's Iterator: positioned explicitly, read with `key`/`value`, as rust-rocksdb's
/// `DBRawIteratorWithThreadMode`. It borrows the database, so it cannot outlive it.
///
/// It holds the SuperVersion it reads, which keeps that view's memtables and tables alive.
/// `refresh` moves it onto the newest one. With `auto_refresh_iterator_with_snapshot` (and
/// a snapshot) it moves itself: before each seek and after each `next`/`prev` it compares
/// the family's SuperVersion number (one relaxed load) with its own, and on a change
/// rebuilds on the new SuperVersion at the same sequence number and re-seeks at its
/// current key in its current direction (`seek` forward, `seek_for_prev` backward). The
/// snapshot keeps every entry it sees from compaction, so the re-seek lands on the same
/// key and value. A tailing iterator does the same at the latest data (sequence number
/// unbounded): it reads the live memtable, so it sees writes made after its creation. As
/// RocksDB's, it only moves forward: `prev`, `seek_for_prev` and `seek_to_last` make it
/// invalid with NotSupported.
pub struct DBRawIteratorWithThreadMode<'a, D: DBAccess> {
    iter: DBIter,
    /// The SuperVersion number the iterator compares with `sv_number` after each step:
    /// the family's while it follows (auto-refresh, tailing), else one that never changes.
    watch: SvWatch,
    /// The number of `_sv` while the iterator follows (compared with `watch`'s), else
    /// `NEVER_CHANGES`'s 0.
    sv_number: u64,
    _sv: Option<Arc<SuperVersion>>,
    /// Tailing: range tombstones the active memtable had when `iter` was built (a seek
    /// rebuilds when there are more).
    mem_range_dels: u64,
    follow: Follow,
    /// The snapshot sequence this iterator registered while it auto-refreshes, so
    /// compaction keeps its entries even if the caller releases the snapshot first.
    held_snapshot: Option<u64>,
    /// None for an iterator that failed to build.
    source: Option<Source>,
    /// Seeks and steps, for `Options::enable_statistics` (issue 14).
    counts: crate::statistics::IterCounts,
    _db: PhantomData<&'a D>,
}

impl<'a, D: DBAccess> DBRawIteratorWithThreadMode<'a, D> {
    pub(crate) fn new(inner: &Arc<DbInner>, cf: &Arc<CfHandle>, ro: &ReadOptions) -> Self {
        Self::with_source(
            inner,
            Source { inner: Arc::downgrade(inner), cf: cf.clone(), ro: ro.clone(), overlay: None },
        )
    }

    /// A tailing iterator over a transaction's writes to `cf` (`batch`: internal entries,
    /// sorted, numbered above every sequence number the database can reach) and the
    /// database's latest data, as RocksDB's `Transaction::GetIterator` with `tailing`
    /// (a `BaseDeltaIterator` over a `ForwardIterator`). It follows the family's newer
    /// SuperVersions and refuses backward moves as a tailing iterator over the database
    /// does; the batch is the one given (writes the transaction makes later are not seen).
    pub(crate) fn tailing_over_batch(
        inner: &Arc<DbInner>,
        cf: &Arc<CfHandle>,
        ro: &ReadOptions,
        batch: BatchEntries,
    ) -> Self {
        let source = Source {
            inner: Arc::downgrade(inner),
            cf: cf.clone(),
            ro: ro.clone(),
            overlay: Some(Arc::new(batch)),
        };
        Self::with_source(inner, source)
    }

    fn with_source(inner: &Arc<DbInner>, source: Source) -> Self {
        // The first view is built before the iterator, which starts on it: no placeholder
        // iterator is built and dropped (about 900 instructions of each seekrandom seek).
        let view = Self::build_view(inner, &source);
        let mut it = DBRawIteratorWithThreadMode {
            iter: view.iter,
            watch: SvWatch::never(),
            sv_number: 0,
            _sv: None,
            mem_range_dels: 0,
            follow: Follow::Pinned,
            held_snapshot: None,
            source: Some(source),
            counts: crate::statistics::IterCounts::new(inner.config.statistics.clone()),
            _db: PhantomData,
        };
        it.adopt(inner, view.sv, view.follow, view.want_hold);
        it
    }

    /// How iterators made with `ro` follow newer SuperVersions, or why `ro` is refused.
    fn follow_of(ro: &ReadOptions) -> Result<Follow> {
        if ro.tailing {
            if ro.snapshot.is_some() {
                return Err(crate::Error::invalid_argument(
                    "a tailing iterator reads the latest data: it cannot be given a snapshot",
                ));
            }
            return Ok(Follow::Tailing);
        }
        if ro.auto_refresh_iterator_with_snapshot {
            if ro.snapshot.is_none() {
                return Err(crate::Error::invalid_argument(
                    "auto_refresh_iterator_with_snapshot needs an explicit snapshot (ReadOptions::set_snapshot)",
                ));
            }
            return Ok(Follow::AutoRefresh);
        }
        Ok(Follow::Pinned)
    }

    /// Builds `iter` over the family's current SuperVersion from `source.ro` (unpositioned),
    /// releasing the one held before. An error is kept in the iterator's status.
    fn rebuild(&mut self, inner: &Arc<DbInner>) {
        let Some(src) = &self.source else { return };
        let view = Self::build_view(inner, src);
        // The old view goes only now: `iter` and then `_sv` are replaced.
        self.iter = view.iter;
        self.adopt(inner, view.sv, view.follow, view.want_hold);
    }

    /// A view over the family's current SuperVersion read as `src.ro` says (an error kept
    /// in its iterator's status).
    fn build_view(inner: &Arc<DbInner>, src: &Source) -> View {
        let cf = &src.cf;
        let sv = cf.local_super_version().to_arc();
        let follow = Self::follow_of(&src.ro);
        let seq = match follow {
            Ok(Follow::Tailing) => crate::key::MAX_SEQUENCE_NUMBER,
            _ => src.ro.snapshot.unwrap_or_else(|| inner.last_sequence()),
        };
        let want_hold = match follow {
            Ok(Follow::AutoRefresh) => src.ro.snapshot,
            _ => None,
        };
        let prefix = PrefixMode::of(cf, &src.ro, inner.config.prefix_seek_opt_in_only);
        // A family with user-defined timestamps needs a read timestamp (`read.rs`).
        let read_ts = super::read::check_read_timestamp(cf, &src.ro).map(|t| t.map(<[u8]>::to_vec));
        let built = follow
            .and_then(|f| read_ts.as_ref().map(|_| f).map_err(Clone::clone))
            .and_then(|f| inner.internal_iterator(cf, &sv, &src.ro, &prefix).map(|x| (f, x)));
        let (follow, (it, tomb)) = match built {
            Ok((f, (it, tomb))) => match &src.overlay {
                // The transaction's entries, numbered above the database's, come first at
                // each of their keys: no database tombstone covers them.
                Some(batch) => {
                    let children = vec![it, crate::transactions::batch_iterator(batch.to_vec(), &cf.icmp)];
                    (
                        f,
                        (
                            Box::new(crate::iter::MergingIterator::new(cf.icmp.clone(), children))
                                as BoxedIterator,
                            tomb,
                        ),
                    )
                }
                None => (f, (it, tomb)),
            },
            Err(e) => (
                Follow::Pinned,
                (
                    Box::new(crate::iter::ErrorIterator::new(e)) as BoxedIterator,
                    Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), Vec::new())),
                ),
            ),
        };
        let mut iter = DBIter::new(
            cf.icmp.clone(),
            it,
            tomb,
            seq,
            src.ro.lower_bound.clone(),
            src.ro.upper_bound.clone(),
        );
        iter.set_max_skippable_internal_keys(src.ro.max_skippable_internal_keys);
        iter.set_max_sequential_skip(cf.config().max_sequential_skip_in_iterations);
        // `memtable_op_scan_flush_trigger`: not for tailing iterators (RocksDB gives those
        // no active memtable), and sanitized to 0 in a read-only or secondary database.
        let scan_trigger = cf.config().memtable_op_scan_flush_trigger;
        if scan_trigger > 0
            && inner.mode == super::readonly::DbMode::ReadWrite
            && !matches!(follow, Follow::Tailing)
        {
            iter.set_memtable_scan_flush(
                sv.mem.clone(),
                scan_trigger,
                cf.config().memtable_avg_op_scan_flush_trigger,
            );
        }
        // `min_tombstones_for_range_conversion`: RocksDB's DBIter turns it off without an
        // active memtable (tailing, read-only, secondary) and where the scan may not see
        // every live key between the tombstones (a legacy prefix seek without
        // prefix_same_as_start, or, with timestamps, a read below the maximum timestamp or
        // with `iter_start_ts`: its `HasFullTimestampVisibility`).
        let min_conv = cf.config().min_tombstones_for_range_conversion;
        let full_ts_visibility = src.ro.iter_start_ts.is_none()
            && read_ts.as_ref().ok().and_then(Option::as_ref).is_none_or(|t| t.iter().all(|b| *b == 0xff));
        if min_conv > 0
            && inner.mode == super::readonly::DbMode::ReadWrite
            && !matches!(follow, Follow::Tailing)
            && full_ts_visibility
            && (cf.config().prefix_extractor.is_none()
                || src.ro.total_order_seek
                || inner.config.prefix_seek_opt_in_only
                || src.ro.auto_prefix_mode
                || src.ro.prefix_same_as_start)
        {
            iter.set_range_conversion(sv.mem.clone(), cf.ingest_lock.clone(), min_conv);
        }
        iter.set_pin_data(src.ro.pin_data);
        if src.ro.prefix_same_as_start {
            iter.set_prefix_same_as_start(cf.config().prefix_extractor.clone());
        }
        iter.set_merge_operator(cf.config().callbacks.merge_operator.clone());
        iter.set_statistics(inner.config.statistics.clone());
        iter.set_blob_fetcher(Some(crate::blob::BlobFetcher {
            cache: inner.blob_cache.clone(),
            cf_id: cf.id,
            value_cache: cf.config().blob_cache.clone(),
            fill_cache: src.ro.fill_cache,
            no_io: src.ro.read_tier == crate::options_api::ReadTier::BlockCache,
        }));
        if let Ok(Some(ts)) = read_ts {
            iter.set_timestamps(cf.icmp.user_comparator().clone(), ts, src.ro.iter_start_ts.clone());
        }
        View { iter, sv, follow, want_hold }
    }

    /// Takes on the SuperVersion of the view whose iterator `iter` now is: holds the
    /// snapshot it follows, watches the family when it follows, and lets the view held
    /// before go.
    fn adopt(&mut self, inner: &Arc<DbInner>, sv: Arc<SuperVersion>, follow: Follow, want_hold: Option<u64>) {
        self.follow = follow;
        if self.held_snapshot != want_hold {
            if let Some(s) = want_hold {
                inner.hold_snapshot(s);
            }
            if let Some(s) = std::mem::replace(&mut self.held_snapshot, want_hold) {
                inner.release_snapshot(s);
            }
        }
        // `watch` points into `source.cf`, which the iterator holds until it is dropped.
        (self.watch, self.sv_number) = match (self.follow, &self.source) {
            (Follow::AutoRefresh | Follow::Tailing, Some(src)) => (SvWatch::of(&src.cf), sv.number),
            _ => (SvWatch::never(), 0),
        };
        self.mem_range_dels = sv.mem.num_range_deletes();
        drop(self._sv.replace(sv));
        let background =
            self.source.as_ref().is_some_and(|s| s.ro.settings.background_purge_on_iterator_cleanup);
        inner.reader_released(background);
    }

    /// The database and family to rebuild from, or why not.
    fn source_db(&self) -> Result<Arc<DbInner>> {
        let Some(src) = &self.source else {
            return self
                .iter
                .status()
                .and(Err(crate::Error::invalid_argument("refresh: the iterator has no database")));
        };
        let Some(inner) = src.inner.upgrade() else {
            return Err(crate::Error::invalid_argument("refresh: the database is closed"));
        };
        if src.cf.is_dropped() {
            return Err(crate::Error::invalid_argument(format!("column family {} was dropped", src.cf.name)));
        }
        Ok(inner)
    }

    /// Rebuilds the iterator over the database's current state, as RocksDB's
    /// `Iterator::Refresh`: it sees every write made so far (a snapshot it was made with
    /// no longer applies, so it no longer auto-refreshes) and is unpositioned until the
    /// next seek. The SuperVersion it held is released.
    pub fn refresh(&mut self) -> Result<()> {
        self.refuse_refresh_over_batch()?;
        let inner = self.source_db()?;
        if let Some(src) = &mut self.source {
            src.ro.snapshot = None;
            src.ro.auto_refresh_iterator_with_snapshot = false;
        }
        self.rebuild(&inner);
        self.iter.status()
    }

    /// Rebuilds the iterator over the database's current state read at `snapshot`, as
    /// RocksDB's `Iterator::Refresh(const Snapshot*)` (a Shale extension to rust-rocksdb's
    /// API). The iterator is unpositioned until the next seek; the SuperVersion it held
    /// is released. An auto-refreshing iterator keeps auto-refreshing, at `snapshot`. A
    /// tailing iterator refuses (InvalidArgument): it reads the latest data.
    pub fn refresh_with_snapshot<S: DBAccess>(
        &mut self,
        snapshot: &crate::db::SnapshotWithThreadMode<'_, S>,
    ) -> Result<()> {
        self.refuse_refresh_over_batch()?;
        let inner = self.source_db()?;
        if let Some(src) = &mut self.source {
            if src.ro.tailing {
                return Err(crate::Error::invalid_argument(
                    "a tailing iterator reads the latest data: it cannot be refreshed to a snapshot",
                ));
            }
            src.ro.snapshot = Some(snapshot.sequence_number());
        }
        self.rebuild(&inner);
        self.iter.status()
    }

    /// An iterator over a transaction's writes cannot be refreshed: RocksDB's
    /// `BaseDeltaIterator` keeps `Iterator::Refresh`'s NotSupported.
    fn refuse_refresh_over_batch(&self) -> Result<()> {
        if self.source.as_ref().is_some_and(|s| s.overlay.is_some()) {
            return Err(crate::Error::not_supported("Refresh() is not supported"));
        }
        Ok(())
    }

    /// Whether the family has a newer SuperVersion this iterator should move onto, or
    /// (tailing) its active memtable has new range tombstones. A pinned iterator only
    /// tests its follow mode; an auto-refreshing one adds one relaxed load through
    /// `watch` and one compare, as RocksDB's. Both branches go the same way step after
    /// step.
    #[inline(always)]
    fn stale(&self) -> bool {
        match self.follow {
            Follow::Pinned => false,
            Follow::AutoRefresh => self.watch.load() != self.sv_number,
            Follow::Tailing => self.watch.load() != self.sv_number || self.tailing_stale(),
        }
    }

    /// Tailing: whether the active memtable has range tombstones `iter` does not.
    #[inline(never)]
    fn tailing_stale(&self) -> bool {
        self._sv.as_ref().is_some_and(|sv| sv.mem.num_range_deletes() != self.mem_range_dels)
    }

    /// Before a seek: moves onto the newest SuperVersion if there is one.
    #[inline(always)]
    fn check_before_seek(&mut self) {
        if self.stale() {
            self.move_to_newest(None);
        }
    }

    /// After a step: moves onto the newest SuperVersion if there is one, re-seeking at
    /// the current key in `dir`.
    #[inline(always)]
    fn check_after_step(&mut self, dir: Direction) {
        if self.stale() && self.iter.valid() {
            self.move_to_newest(Some(dir));
        }
    }

    /// A tailing iterator only moves forward, as RocksDB's (`ForwardIterator`): a backward
    /// step could not see writes made behind it. It becomes invalid with NotSupported.
    #[inline]
    fn refuse_backward(&mut self, what: &str) -> bool {
        if self.follow != Follow::Tailing {
            return false;
        }
        self.iter.fail_with(crate::Error::not_supported(format!("{what} on a tailing iterator")));
        true
    }

    #[cold]
    fn move_to_newest(&mut self, reseek: Option<Direction>) {
        let Some(inner) = self.source.as_ref().and_then(|s| s.inner.upgrade()) else { return };
        if self.source.as_ref().is_some_and(|s| s.cf.is_dropped()) {
            // The family's last SuperVersion stays readable, as its files do.
            self.follow = Follow::Pinned;
            (self.watch, self.sv_number) = (SvWatch::never(), 0);
            return;
        }
        let key = match reseek {
            Some(_) => self.iter.key().to_vec(),
            None => Vec::new(),
        };
        if let Some(src) = &self.source {
            src.cf.iterator_refreshes.fetch_add(1, Ordering::Relaxed);
        }
        self.rebuild(&inner);
        match reseek {
            Some(Direction::Forward) => self.iter.seek(&key),
            Some(Direction::Reverse) => self.iter.seek_for_prev(&key),
            None => {}
        }
    }

    /// An iterator over a view built elsewhere (a transaction's writes over the database,
    /// `transactions/wbwi.rs`): pinned to `sv`, it cannot be refreshed.
    pub(crate) fn over_view(inner: &Arc<DbInner>, sv: Arc<SuperVersion>, iter: DBIter) -> Self {
        DBRawIteratorWithThreadMode {
            iter,
            watch: SvWatch::never(),
            sv_number: 0,
            mem_range_dels: 0,
            _sv: Some(sv),
            follow: Follow::Pinned,
            held_snapshot: None,
            source: None,
            counts: crate::statistics::IterCounts::new(inner.config.statistics.clone()),
            _db: PhantomData,
        }
    }

    pub(crate) fn failed(h: &Arc<CfHandle>, e: crate::Error) -> Self {
        let iter = DBIter::new(
            h.icmp.clone(),
            Box::new(crate::iter::ErrorIterator::new(e)),
            Arc::new(FragmentedTombstones::new(h.icmp.user_comparator().clone(), Vec::new())),
            0,
            None,
            None,
        );
        let sv = h.super_version();
        DBRawIteratorWithThreadMode {
            iter,
            watch: SvWatch::never(),
            sv_number: 0,
            mem_range_dels: 0,
            _sv: Some(sv),
            follow: Follow::Pinned,
            held_snapshot: None,
            source: None,
            counts: crate::statistics::IterCounts::new(None),
            _db: PhantomData,
        }
    }

    /// Whether the iterator is positioned on an entry.
    pub fn valid(&self) -> bool {
        self.iter.valid()
    }

    /// The error that stopped the iterator, if any.
    pub fn status(&self) -> Result<()> {
        self.iter.status()
    }

    /// The bytes of the entry the iterator is on (for the statistics and the perf context),
    /// None when not on one. 0 when neither counts bytes: reading the two lengths costs a
    /// call down the iterator stack each, on every step of a scan.
    #[inline]
    fn found(&self) -> Option<usize> {
        if !self.iter.valid() {
            return None;
        }
        Some(if self.counts.counts_bytes() { self.iter.key().len() + self.iter.value().len() } else { 0 })
    }

    pub fn seek_to_first(&mut self) {
        self.check_before_seek();
        let t = self.counts.seek_start();
        self.iter.seek_to_first();
        self.counts.seek_done(t, false, self.found());
    }

    pub fn seek_to_last(&mut self) {
        if self.refuse_backward("SeekToLast") {
            return;
        }
        self.check_before_seek();
        let t = self.counts.seek_start();
        self.iter.seek_to_last();
        self.counts.seek_done(t, false, self.found());
    }

    pub fn seek<K: AsRef<[u8]>>(&mut self, key: K) {
        self.check_before_seek();
        let t = self.counts.seek_start();
        self.iter.seek(key.as_ref());
        self.counts.seek_done(t, true, self.found());
    }

    pub fn seek_for_prev<K: AsRef<[u8]>>(&mut self, key: K) {
        if self.refuse_backward("SeekForPrev") {
            return;
        }
        self.check_before_seek();
        let t = self.counts.seek_start();
        self.iter.seek_for_prev(key.as_ref());
        self.counts.seek_done(t, true, self.found());
    }

    pub fn next(&mut self) {
        if self.iter.valid() {
            self.iter.next();
            self.check_after_step(Direction::Forward);
            let found = self.found();
            self.counts.next_done(found);
        }
    }

    pub fn prev(&mut self) {
        if self.refuse_backward("Prev") {
            return;
        }
        if self.iter.valid() {
            self.iter.prev();
            self.check_after_step(Direction::Reverse);
            let found = self.found();
            self.counts.prev_done(found);
        }
    }

    pub fn key(&self) -> Option<&[u8]> {
        self.iter.valid().then(|| self.iter.key())
    }

    pub fn value(&self) -> Option<&[u8]> {
        self.iter.valid().then(|| self.user_value())
    }

    pub fn item(&self) -> Option<(&[u8], &[u8])> {
        self.iter.valid().then(|| (self.iter.key(), self.user_value()))
    }

    /// The current entry's wide columns (RocksDB's `Iterator::columns()`): an entity's
    /// columns sorted by name, or one default column (empty name) holding `value()`; None
    /// when the iterator is not on an entry.
    pub fn columns(&self) -> Option<Result<crate::wide_columns::WideColumns>> {
        if !self.iter.valid() {
            return None;
        }
        if self.source.as_ref().is_some_and(|s| super::ttl::suffix_len(&s.cf) > 0) {
            return Some(Ok(vec![(Vec::new(), self.user_value().to_vec())]));
        }
        Some(self.iter.columns())
    }

    /// The current value without a TTL database's write-time suffix (`db/ttl.rs`).
    fn user_value(&self) -> &[u8] {
        let v = self.iter.value();
        let strip = self.source.as_ref().map_or(0, |s| super::ttl::suffix_len(&s.cf));
        &v[..v.len().saturating_sub(strip)]
    }

    /// The timestamp of the current entry (docs/timestamps.md). Without user-defined
    /// timestamps it is empty, as RocksDB's; None when the iterator is not on an entry.
    pub fn timestamp(&self) -> Option<&[u8]> {
        self.iter.valid().then(|| self.iter.timestamp())
    }
}

/// An iterator over a `DB`.
pub type DBIterator<'a> = DBIteratorWithThreadMode<'a, DB>;

/// A Rust iterator of `Result<(key, value)>`, as rust-rocksdb's `DBIteratorWithThreadMode`.
pub struct DBIteratorWithThreadMode<'a, D: DBAccess> {
    raw: DBRawIteratorWithThreadMode<'a, D>,
    direction: Direction,
    done: bool,
}

impl<'a, D: DBAccess> DBIteratorWithThreadMode<'a, D> {
    pub(crate) fn new(raw: DBRawIteratorWithThreadMode<'a, D>, mode: IteratorMode<'_>) -> Self {
        let mut it = DBIteratorWithThreadMode { raw, direction: Direction::Forward, done: false };
        it.set_mode(mode);
        it
    }

    /// Repositions the iterator, as rust-rocksdb's `set_mode`.
    pub fn set_mode(&mut self, mode: IteratorMode<'_>) {
        self.done = false;
        self.direction = match mode {
            IteratorMode::Start => {
                self.raw.seek_to_first();
                Direction::Forward
            }
            IteratorMode::End => {
                self.raw.seek_to_last();
                Direction::Reverse
            }
            IteratorMode::From(key, Direction::Forward) => {
                self.raw.seek(key);
                Direction::Forward
            }
            IteratorMode::From(key, Direction::Reverse) => {
                self.raw.seek_for_prev(key);
                Direction::Reverse
            }
        };
    }

    pub fn valid(&self) -> bool {
        self.raw.valid()
    }

    /// Refreshes the underlying raw iterator (see `DBRawIteratorWithThreadMode::refresh`)
    /// and repositions it by `mode`.
    pub fn refresh(&mut self, mode: IteratorMode<'_>) -> Result<()> {
        self.raw.refresh()?;
        self.set_mode(mode);
        Ok(())
    }

    /// Refreshes the underlying raw iterator to `snapshot` (see
    /// `DBRawIteratorWithThreadMode::refresh_with_snapshot`; a Shale extension) and
    /// repositions it by `mode`.
    pub fn refresh_with_snapshot<S: DBAccess>(
        &mut self,
        snapshot: &crate::db::SnapshotWithThreadMode<'_, S>,
        mode: IteratorMode<'_>,
    ) -> Result<()> {
        self.raw.refresh_with_snapshot(snapshot)?;
        self.set_mode(mode);
        Ok(())
    }
}

impl<D: DBAccess> Iterator for DBIteratorWithThreadMode<'_, D> {
    type Item = Result<KVBytes>;

    fn next(&mut self) -> Option<Result<KVBytes>> {
        if self.done {
            return None;
        }
        if let Some((k, v)) = self.raw.item() {
            let kv = (Box::from(k), Box::from(v));
            match self.direction {
                Direction::Forward => self.raw.next(),
                Direction::Reverse => self.raw.prev(),
            }
            Some(Ok(kv))
        } else {
            self.done = true;
            self.raw.status().err().map(Err)
        }
    }
}

impl<D: DBAccess> std::iter::FusedIterator for DBIteratorWithThreadMode<'_, D> {}

impl<'a, D: DBAccess> From<DBIteratorWithThreadMode<'a, D>> for DBRawIteratorWithThreadMode<'a, D> {
    fn from(it: DBIteratorWithThreadMode<'a, D>) -> Self {
        it.raw
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    pub fn iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_opt(mode, ReadOptions::default())
    }

    pub fn iterator_opt<'a: 'b, 'b>(
        &'a self,
        mode: IteratorMode,
        readopts: ReadOptions,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self.raw_iterator_opt(readopts), mode)
    }

    /// An iterator over every key, as `total_order_seek`.
    pub fn full_iterator<'a: 'b, 'b>(&'a self, mode: IteratorMode) -> DBIteratorWithThreadMode<'b, Self> {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        self.iterator_opt(mode, ro)
    }

    pub fn iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        self.iterator_cf_opt(cf, ReadOptions::default(), mode)
    }

    pub fn iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
        mode: IteratorMode,
    ) -> DBIteratorWithThreadMode<'b, Self> {
        DBIteratorWithThreadMode::new(self.raw_iterator_cf_opt(cf, readopts), mode)
    }

    pub fn raw_iterator<'a: 'b, 'b>(&'a self) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_opt(ReadOptions::default())
    }

    pub fn raw_iterator_opt<'a: 'b, 'b>(
        &'a self,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        DBRawIteratorWithThreadMode::new(&self.inner, &self.default_handle().handle, &readopts)
    }

    pub fn raw_iterator_cf<'a: 'b, 'b>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        self.raw_iterator_cf_opt(cf, ReadOptions::default())
    }

    pub fn raw_iterator_cf_opt<'a: 'b, 'b>(
        &'a self,
        cf: &impl AsColumnFamilyRef,
        readopts: ReadOptions,
    ) -> DBRawIteratorWithThreadMode<'b, Self> {
        match self.inner.handle_of(cf) {
            Ok(h) => DBRawIteratorWithThreadMode::new(&self.inner, &h, &readopts),
            Err(e) => DBRawIteratorWithThreadMode::failed(&self.default_handle().handle, e),
        }
    }
}
