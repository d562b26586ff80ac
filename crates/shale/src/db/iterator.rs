//! The user-facing iterators: `DBRawIterator` (RocksDB's Iterator) and `DBIterator` (a Rust
//! `Iterator` of `(key, value)` pairs), as in rust-rocksdb.
//!
//! Both sit on `iter::db_iter::DBIter` over a merging iterator of every source of one
//! column family's SuperVersion; the SuperVersion is held so its files stay on disk.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Weak};

use super::cf::{CfHandle, SuperVersion};
use super::table_cache::TableEntry;
use super::{DBCommon, DBInner, DbInner, ThreadMode, DB};
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::iter::db_iter::DBIter;
use crate::iter::level::{LevelFile, LevelIterator};
use crate::iter::merging::MergingIterator;
use crate::iter::range_del::{self, FragmentedTombstones, RangeTombstone};
use crate::iter::BoxedIterator;
use crate::options::ReadOptions;
use crate::thread_mode::DBAccess;
use crate::version::edit::FileMetaData;

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

/// Files of a level by number, for opening them from a `LevelFile`.
type FilesByNumber = Arc<HashMap<u64, Arc<FileMetaData>>>;

/// What iterators of one SuperVersion share: its tables, level runs and range tombstones.
pub(crate) struct IterParts {
    l0: Vec<Arc<TableEntry>>,
    levels: Vec<(Arc<[LevelFile]>, FilesByNumber)>,
    tombstones: Vec<RangeTombstone>,
    /// `tombstones` fragmented, for views whose memtables hold none.
    fragmented: Arc<FragmentedTombstones>,
}

impl DbInner {
    fn iter_parts(&self, cf: &Arc<CfHandle>, sv: &SuperVersion) -> Result<Arc<IterParts>> {
        if let Some(p) = sv.iter_parts.get() {
            return Ok(p.clone());
        }
        let v = &sv.current;
        let mut tombstones = Vec::new();
        let mut l0 = Vec::new();
        for f in v.files(0) {
            let e = self.table_cache.get(cf, f)?;
            tombstones.extend(range_del::from_table_entries(e.table.range_tombstones())?);
            l0.push(e);
        }
        let mut levels = Vec::new();
        for level in 1..v.num_levels() {
            let files = v.files(level);
            if files.is_empty() {
                continue;
            }
            for f in files {
                let e = self.table_cache.get(cf, f)?;
                tombstones.extend(range_del::from_table_entries(e.table.range_tombstones())?);
            }
            let run: Arc<[LevelFile]> = files
                .iter()
                .map(|f| LevelFile {
                    number: f.number,
                    smallest: f.smallest.clone(),
                    largest: f.largest.clone(),
                })
                .collect();
            let by_number = Arc::new(files.iter().map(|f| (f.number, f.clone())).collect());
            levels.push((run, by_number));
        }
        let fragmented = Arc::new(FragmentedTombstones::new(cf.opts.comparator.clone(), tombstones.clone()));
        let parts = Arc::new(IterParts { l0, levels, tombstones, fragmented });
        let _ = sv.iter_parts.set(parts.clone());
        Ok(parts)
    }

    /// The merged internal iterator and all range tombstones of one column family's view.
    pub(crate) fn internal_iterator(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        sv: &SuperVersion,
        fill_cache: bool,
    ) -> Result<(BoxedIterator, Arc<FragmentedTombstones>)> {
        let parts = self.iter_parts(cf, sv)?;
        let mut children: Vec<BoxedIterator> = Vec::new();
        let mut mem_tombstones: Vec<RangeTombstone> = Vec::new();
        for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
            children.push(mem.iter());
            if mem.num_range_deletes() > 0 {
                mem_tombstones.extend(range_del::from_table_entries(&mem.range_tombstones())?);
            }
        }
        for e in &parts.l0 {
            children.push(e.table.iter(fill_cache));
        }
        for (run, by_number) in &parts.levels {
            children.push(Box::new(self.level_iterator(cf, run.clone(), by_number.clone(), fill_cache)));
        }
        let tomb = if mem_tombstones.is_empty() {
            parts.fragmented.clone()
        } else {
            mem_tombstones.extend(parts.tombstones.iter().cloned());
            Arc::new(FragmentedTombstones::new(cf.opts.comparator.clone(), mem_tombstones))
        };
        Ok((Box::new(MergingIterator::new(cf.icmp.clone(), children)), tomb))
    }

    /// A concatenating iterator over one sorted level, opening tables as it reaches them.
    pub(crate) fn level_iterator(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        run: Arc<[LevelFile]>,
        by_number: FilesByNumber,
        fill_cache: bool,
    ) -> LevelIterator {
        let icmp = cf.icmp.clone();
        let inner = self.clone();
        let cf = cf.clone();
        let opener = Arc::new(move |lf: &LevelFile| -> Result<BoxedIterator> {
            let meta = by_number
                .get(&lf.number)
                .ok_or_else(|| crate::Error::corruption(format!("level file {} vanished", lf.number)))?;
            Ok(inner.table_cache.get(&cf, meta)?.table.iter(fill_cache))
        });
        LevelIterator::new(icmp, run, opener)
    }

    /// A level iterator over `files` (used by compaction).
    pub(crate) fn level_iterator_of(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        files: &[Arc<FileMetaData>],
        fill_cache: bool,
    ) -> LevelIterator {
        let run: Arc<[LevelFile]> = files
            .iter()
            .map(|f| LevelFile { number: f.number, smallest: f.smallest.clone(), largest: f.largest.clone() })
            .collect();
        let by_number = Arc::new(files.iter().map(|f| (f.number, f.clone())).collect());
        self.level_iterator(cf, run, by_number, fill_cache)
    }
}

/// A raw iterator over a `DB`.
pub type DBRawIterator<'a> = DBRawIteratorWithThreadMode<'a, DB>;

impl<D: DBAccess> Drop for DBRawIteratorWithThreadMode<'_, D> {
    fn drop(&mut self) {
        let Some((weak, cf, _)) = &self.source else { return };
        let Some(inner) = weak.upgrade() else { return };
        if !inner.has_obsolete.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        // Let go of the read view (the SuperVersion and the table iterators, which hold the
        // tables' metadata) first, then ask for the purge: tables no other reader holds are
        // deleted by a flush thread.
        self.iter = DBIter::new(
            cf.icmp.clone(),
            Box::new(crate::iter::ErrorIterator::new(crate::Error::invalid_argument("iterator dropped"))),
            Arc::new(FragmentedTombstones::new(cf.opts.comparator.clone(), Vec::new())),
            0,
            None,
            None,
        );
        self._sv = None;
        inner.reader_released();
    }
}

/// RocksDB's Iterator: positioned explicitly, read with `key`/`value`, as rust-rocksdb's
/// `DBRawIteratorWithThreadMode`. It borrows the database, so it cannot outlive it.
pub struct DBRawIteratorWithThreadMode<'a, D: DBAccess> {
    iter: DBIter,
    _sv: Option<Arc<SuperVersion>>,
    /// What `refresh` rebuilds the iterator from (None for an iterator that failed to
    /// build). Weak: an iterator must not keep a closed database (and its LOCK) alive.
    source: Option<(Weak<DbInner>, Arc<CfHandle>, ReadOptions)>,
    _db: PhantomData<&'a D>,
}

impl<'a, D: DBAccess> DBRawIteratorWithThreadMode<'a, D> {
    pub(crate) fn new(inner: &Arc<DbInner>, cf: &Arc<CfHandle>, ro: &ReadOptions) -> Self {
        let (iter, sv) = Self::build(inner, cf, ro);
        DBRawIteratorWithThreadMode {
            iter,
            _sv: Some(sv),
            source: Some((Arc::downgrade(inner), cf.clone(), ro.clone())),
            _db: PhantomData,
        }
    }

    fn build(inner: &Arc<DbInner>, cf: &Arc<CfHandle>, ro: &ReadOptions) -> (DBIter, Arc<SuperVersion>) {
        let sv = cf.super_version();
        let seq = ro.snapshot.unwrap_or_else(|| inner.last_sequence());
        let (it, tomb) =
            match ro.check_supported().and_then(|_| inner.internal_iterator(cf, &sv, ro.fill_cache)) {
                Ok(x) => x,
                Err(e) => (
                    Box::new(crate::iter::ErrorIterator::new(e)) as BoxedIterator,
                    Arc::new(FragmentedTombstones::new(cf.opts.comparator.clone(), Vec::new())),
                ),
            };
        let iter =
            DBIter::new(cf.icmp.clone(), it, tomb, seq, ro.lower_bound.clone(), ro.upper_bound.clone());
        (iter, sv)
    }

    /// Rebuilds the iterator over the database's current state, as RocksDB's
    /// `Iterator::Refresh`: it sees every write made so far (a snapshot it was made with
    /// no longer applies) and is unpositioned until the next seek.
    pub fn refresh(&mut self) -> Result<()> {
        let Some((inner, cf, ro)) = &mut self.source else {
            return self.iter.status();
        };
        let Some(inner) = inner.upgrade() else {
            return Err(crate::Error::invalid_argument("refresh: the database is closed"));
        };
        if cf.is_dropped() {
            return Err(crate::Error::invalid_argument(format!("column family {} was dropped", cf.name)));
        }
        ro.snapshot = None;
        let (iter, sv) = Self::build(&inner, cf, ro);
        self.iter = iter;
        self._sv = Some(sv);
        Ok(())
    }

    pub(crate) fn failed(h: &Arc<CfHandle>, e: crate::Error) -> Self {
        let iter = DBIter::new(
            h.icmp.clone(),
            Box::new(crate::iter::ErrorIterator::new(e)),
            Arc::new(FragmentedTombstones::new(h.opts.comparator.clone(), Vec::new())),
            0,
            None,
            None,
        );
        DBRawIteratorWithThreadMode { iter, _sv: Some(h.super_version()), source: None, _db: PhantomData }
    }

    /// Whether the iterator is positioned on an entry.
    pub fn valid(&self) -> bool {
        self.iter.valid()
    }

    /// The error that stopped the iterator, if any.
    pub fn status(&self) -> Result<()> {
        self.iter.status()
    }

    pub fn seek_to_first(&mut self) {
        self.iter.seek_to_first()
    }

    pub fn seek_to_last(&mut self) {
        self.iter.seek_to_last()
    }

    pub fn seek<K: AsRef<[u8]>>(&mut self, key: K) {
        self.iter.seek(key.as_ref())
    }

    pub fn seek_for_prev<K: AsRef<[u8]>>(&mut self, key: K) {
        self.iter.seek_for_prev(key.as_ref())
    }

    pub fn next(&mut self) {
        if self.iter.valid() {
            self.iter.next()
        }
    }

    pub fn prev(&mut self) {
        if self.iter.valid() {
            self.iter.prev()
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

    /// The current value without a TTL database's write-time suffix (`db/ttl.rs`).
    fn user_value(&self) -> &[u8] {
        let v = self.iter.value();
        let strip = self.source.as_ref().map_or(0, |(_, h, _)| super::ttl::suffix_len(h));
        &v[..v.len().saturating_sub(strip)]
    }

    /// The timestamp of the current entry. Without user-defined timestamps (issue 15) it is
    /// empty, as RocksDB's; None when the iterator is not on an entry.
    pub fn timestamp(&self) -> Option<&[u8]> {
        self.iter.valid().then_some(&[][..])
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
