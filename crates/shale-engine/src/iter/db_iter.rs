//! The user-facing iterator: turns the merged stream of internal entries into the user's
//! view at one snapshot.
//!
//! ```text
//! inner (internal keys, newest first per user key):
//!   a@9 Value   a@7 Del   b@12 Value   b@8 Value   c@5 Del   c@3 Value
//! snapshot 10 (no range tombstones)  =>  a -> (a@9)   b -> (b@8)   (c hidden)
//! ```
//! Rules, as RocksDB's: entries newer than the snapshot are invisible; per user key the
//! newest visible entry decides: a Value is yielded, a Deletion or SingleDeletion hides the
//! key, an entry older than a covering range tombstone (visible at the snapshot) is hidden,
//! and a Merge is resolved with the family's merge operator (RocksDB's `DBIter`): forward,
//! the operands are gathered newest first down to a Put (the base), a deletion, a covered
//! entry or the key's end (`MergeValuesNewToOld`), which leaves the inner iterator past the
//! key and the merged value in `saved_value`; backward, the key's entries are walked oldest
//! to newest, a Put or deletion restarting the stack (`FindValueForCurrentKey`). A merge
//! that fails makes the iterator invalid with a Corruption status naming the key.
//! RangeDeletion entries met in the point stream are ignored; tombstones come through
//! `tombstones`. Bounds: lower inclusive, upper exclusive.
//!
//! With `prefix_same_as_start` (and a prefix extractor) a positioning call remembers the
//! prefix of its target (`seek`, `seek_for_prev`) or of the key it lands on
//! (`seek_to_first`, `seek_to_last`), and the iterator becomes invalid at the first key
//! without that prefix, in either direction (RocksDB's `PrefixCheck`).
//!
//! Moving forward the inner iterator sits on the current entry. Moving backward it sits
//! just before every entry of the current key, whose key is copied into a reused buffer
//! (LevelDB's scheme); its value too, unless the inner iterator says the value's bytes
//! stay put (`InternalIterator::value_pinned`): then the iterator keeps their address
//! instead, as RocksDB's `DBIter` keeps `pinned_value_`. A memtable's values stay put in
//! its arena; a table's lie in a data block, which stays put because the iterator turns
//! pinning on while it moves backward (`crate::iter::PinnedData`, RocksDB's
//! `PinnedIteratorsManager` and `TempPinData`): a table iterator that steps out of a block
//! hands the block to the pinned data instead of dropping it, a level iterator the
//! iterator of a file it leaves, and the iterator lets go of them when it moves to the
//! next key. Copying would read every value's bytes, which a forward scan never touches:
//! with a memtable out of cache that was most of a reverse scan's time. With `pin_data`
//! pinning stays on and nothing is let go of until the iterator is dropped.
//!
//! A family with user-defined timestamps puts the iterator in its timestamp mode
//! (`set_timestamps`, at the end of this file; RocksDB's `timestamp_ub_`, `timestamp_lb_`
//! and `timestamp_size_`). Each public positioning call tests the mode once; the per-entry
//! loops above are those of a timestamp size of 0 and do nothing for the mode.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::range_del::FragmentedTombstones;
use crate::iter::{BoxedIterator, PinRef};
use crate::key::{
    append_internal_key, parse_internal_key, user_key, InternalKeyComparator, SequenceNumber, ValueType,
    MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK,
};
use crate::memtable::MemTable;
use crate::merge::{no_merge_operator, MergeOperatorCore};
use crate::perf::{self, Field};

/// After this many steps over entries of one user key, iteration re-seeks past them
/// (RocksDB's `max_sequential_skip_in_iterations` default; a family's own value comes
/// through `DBIter::set_max_sequential_skip`).
const MAX_SEQUENTIAL_SKIP: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// A stored value that reads as something else: a blob index, a wide-column entity.
#[inline]
fn needs_resolve(t: ValueType) -> bool {
    matches!(t, ValueType::BlobIndex | ValueType::WideColumnEntity)
}

/// What a key's newest visible entry says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    Hidden,
    Value,
    Merge,
}

/// A cursor over user keys and values at a snapshot, within optional bounds.
pub struct DBIter {
    icmp: InternalKeyComparator,
    inner: BoxedIterator,
    tombstones: Arc<FragmentedTombstones>,
    sequence: SequenceNumber,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    direction: Direction,
    valid: bool,
    /// Forward: the user key whose older entries are being skipped. Reverse: the current key.
    saved_key: Vec<u8>,
    /// Reverse: the current value, unless `pinned_value` has it.
    saved_value: Vec<u8>,
    /// Reverse: the current value's bytes, where the inner iterator pinned them.
    pinned_value: Option<PinnedValue>,
    /// What the iterators below keep alive while pinning is on (shared with them).
    pins: PinRef,
    /// `pin_data`: pinning is on, and nothing is released, for the iterator's life.
    pin_data: bool,
    /// Reused buffer for seek targets.
    scratch: Vec<u8>,
    err: Option<Error>,
    /// `max_skippable_internal_keys` (0: no limit) and the entries passed over by the
    /// current step.
    max_skip: u64,
    skipped: u64,
    /// `max_sequential_skip_in_iterations`: entries of one user key stepped over before a
    /// reseek jumps past the rest (each reseek counted as `rocksdb.number.reseeks.iteration`).
    max_sequential_skip: usize,
    /// `prefix_same_as_start`: the family's prefix extractor.
    prefix_extractor: Option<crate::slice_transform::SliceTransformRef>,
    /// The prefix iteration stays within (set by the last positioning call).
    prefix: Option<Vec<u8>>,
    /// The family's merge operator.
    merge_operator: Option<Arc<dyn MergeOperatorCore>>,
    /// The database's statistics (failed merges and reseeks are counted there).
    stats: Option<Arc<crate::statistics::Statistics>>,
    /// Forward: the current entry is a merge result, in `saved_key` / `saved_value`, and the
    /// inner iterator is already past (some of) the key's entries.
    merged: bool,
    /// A family with user-defined timestamps: the timestamp mode's state (RocksDB's
    /// `timestamp_ub_`, `timestamp_lb_`, `timestamp_size_`); None: timestamp size 0, and
    /// no step pays anything for the mode beyond one test per positioning call.
    ts: Option<Box<TsMode>>,
    /// Resolves blob indexes (BlobDB); None: an entry of type BlobIndex is Corruption.
    blob: Option<crate::blob::BlobFetcher>,
    /// The current entry is a wide-column entity (`wide_columns.rs`): its encoding (after
    /// any merge onto its default column); `value()` is its default column's value.
    entity: Option<Vec<u8>>,
    /// `memtable_op_scan_flush_trigger` (and its average form) on the active memtable the
    /// iterator was made over; None: off (the default, a tailing or read-only iterator).
    scan_flush: Option<Box<ScanFlush>>,
    /// `min_tombstones_for_range_conversion` on the active memtable the iterator was made
    /// over; None: off (the default, and wherever RocksDB turns it off).
    range_conv: Option<Box<RangeConv>>,
}

/// RocksDB's read-path range conversion (`min_tombstones_for_range_conversion`,
/// `DBIter::TrackContiguousTombstone` / `FlushPendingTombstoneRun` /
/// `MaybeInsertRangeTombstone`): a forward step that passes `min` or more point tombstones
/// (Deletion, SingleDeletion: the newest visible entries of their keys, not covered by a
/// range tombstone) with no live key between them adds the range tombstone
/// `[first tombstone's key, end)` to the active memtable at the iterator's sequence, `end`
/// being the live key (or merge) that ends the run, or else the last key the step passed
/// (the run ran into the upper bound, the prefix's end or the data's end). Backward, the run
/// is tracked below a key above it ([`RangeConv::end`]) down to a live key, the lower
/// bound, the prefix's start or the data's start, and the range is
/// `[lowest tombstone's key, end)` (only when `end` is within the seek's prefix).
/// Counted as `rocksdb.read.path.range.tombstones.inserted`; a run long enough that is not
/// added (the memtable's earliest sequence is above the read's, a tombstone of the memtable
/// already covers the range, the memtable was switched out, an ingestion is under way or
/// assigned a later sequence) as `...discarded`.
struct RangeConv {
    mem: Arc<MemTable>,
    /// The family's ingestion lock (`CfHandle::ingest_lock`).
    ingest_lock: Arc<parking_lot::RwLock<()>>,
    min: u32,
    count: u32,
    first: Vec<u8>,
    last: Vec<u8>,
    /// Reverse: the key above the run (RocksDB's `range_tomb_end_key_`): the current key
    /// when `prev` is called, a `seek_for_prev`'s target (or the upper bound it is clamped
    /// to); None (nothing is tracked) after `seek_to_last` without an upper bound.
    end: Option<Vec<u8>>,
    /// Reverse: the key `find_value_for_current_key` just decided has an uncovered point
    /// tombstone as its newest visible entry.
    tomb: bool,
}

/// RocksDB's `memtable_op_scan_flush_trigger` and `memtable_avg_op_scan_flush_trigger`
/// (`DBIter::MarkMemtableForFlushForPerOpTrigger` / `...ForAvgTrigger`): a forward step
/// that passes over `trigger` or more hidden entries of the active memtable (a deletion, or
/// an older version of a key already decided, visible at the snapshot, not covered by a
/// range tombstone, with a sequence at or above the memtable's first), or a window between
/// two positioning calls whose hidden entries reach `trigger` and average `avg_trigger` or
/// more per step, marks that memtable for flush ([`MemTable::mark_for_flush`]); once
/// marked, the iterator stops counting.
struct ScanFlush {
    mem: Arc<MemTable>,
    /// The memtable's first sequence when the iterator was made (its earliest when empty).
    seqno_lb: SequenceNumber,
    trigger: u64,
    avg_trigger: u64,
    /// Positioning calls and `next`s since the last positioning call (RocksDB's
    /// `iter_step_since_seek_`, from 1).
    steps_since_seek: u64,
    /// Hidden memtable entries passed since the last positioning call.
    hidden_since_seek: u64,
}

impl ScanFlush {
    /// RocksDB's `MarkMemtableForFlushForPerOpTrigger`: one hidden entry of sequence `seq`
    /// passed by the current step (`scanned` counts the step's memtable ones).
    #[inline]
    fn count(&mut self, seq: SequenceNumber, scanned: &mut u64) {
        if self.trigger == 0 || seq < self.seqno_lb {
            return;
        }
        *scanned += 1;
        if *scanned >= self.trigger {
            self.mem.mark_for_flush();
            self.trigger = 0;
            self.avg_trigger = 0;
        }
        if self.avg_trigger > 0 {
            self.hidden_since_seek += 1;
        }
    }
}

impl RangeConv {
    /// A point tombstone of `user_key` (the newest visible entry of its key, not covered
    /// by a range tombstone) passed by a forward step: it extends the run.
    fn track(&mut self, user_key: &[u8]) {
        if self.count == 0 {
            self.first.clear();
            self.first.extend_from_slice(user_key);
        }
        self.count = self.count.saturating_add(1);
        self.last.clear();
        self.last.extend_from_slice(user_key);
    }

    /// Reverse: a point tombstone of `user_key`, below the ones tracked so far (RocksDB's
    /// `TrackContiguousTombstone` with `always_update_first_key`).
    fn track_reverse(&mut self, user_key: &[u8]) {
        self.first.clear();
        self.first.extend_from_slice(user_key);
        self.count = self.count.saturating_add(1);
    }

    /// Reverse: ends the pending run at `end`, the key above it (RocksDB's
    /// `FlushPendingTombstoneRun` with `check_prefix_match`: `end_in_prefix` says whether
    /// `end` is within the seek's prefix).
    fn flush_reverse(
        &mut self,
        icmp: &InternalKeyComparator,
        sequence: SequenceNumber,
        stats: Option<&crate::statistics::Statistics>,
        end_in_prefix: bool,
    ) {
        if self.count > 0 && self.count >= self.min && end_in_prefix {
            if let Some(end) = &self.end {
                let tick = self.insert(icmp, sequence, end);
                crate::statistics::record_tick(stats, tick, 1);
            }
        }
        self.count = 0;
    }

    /// An entry newer than the snapshot of a key past the run's last one: RocksDB's
    /// `saved_key_` moves to it, and a run that ends with the step ends there.
    fn newer_key(&mut self, icmp: &InternalKeyComparator, user_key: &[u8]) {
        if self.count > 0 && icmp.compare_user(user_key, &self.last) == Ordering::Greater {
            self.last.clear();
            self.last.extend_from_slice(user_key);
        }
    }

    /// Ends the pending run at `end` (None: at its last key), adding its range tombstone
    /// when it is long enough (RocksDB's `FlushPendingTombstoneRun`).
    fn flush(
        &mut self,
        icmp: &InternalKeyComparator,
        sequence: SequenceNumber,
        stats: Option<&crate::statistics::Statistics>,
        end: Option<&[u8]>,
    ) {
        if self.count >= self.min {
            let tick = self.insert(icmp, sequence, end.unwrap_or(&self.last));
            crate::statistics::record_tick(stats, tick, 1);
        }
        self.count = 0;
    }

    /// RocksDB's `MaybeInsertRangeTombstone` for the run ending at `end`, read at
    /// `sequence`: the ticker to count.
    fn insert(
        &self,
        icmp: &InternalKeyComparator,
        sequence: SequenceNumber,
        end: &[u8],
    ) -> crate::statistics::Ticker {
        use crate::statistics::Ticker;
        // The read's snapshot predates the memtable: the tombstone would cover writes made
        // between the two.
        if sequence < self.mem.earliest_seqno() {
            return Ticker::ReadPathRangeTombstonesDiscarded;
        }
        // RocksDB looks for one fragment of the memtable's tombstones (split at every
        // tombstone's start and end, visible at the read's sequence) that contains the
        // whole range.
        if self.mem.num_range_deletes() > 0 {
            let first = &self.first[..];
            let inside = |k: &[u8]| {
                icmp.compare_user(k, first) == Ordering::Greater
                    && icmp.compare_user(k, end) == Ordering::Less
            };
            let all = self.mem.range_tombstones();
            let split = all.iter().any(|(k, e)| inside(user_key(k)) || inside(e));
            let covering = all.iter().any(|(k, e)| {
                parse_internal_key(k).is_ok_and(|p| {
                    p.sequence <= sequence
                        && icmp.compare_user(p.user_key, first) != Ordering::Greater
                        && icmp.compare_user(e, end) != Ordering::Less
                        && icmp.compare_user(e, first) == Ordering::Greater
                })
            });
            if covering && !split {
                return Ticker::ReadPathRangeTombstonesDiscarded;
            }
        }
        if self.mem.add_redundant_range_tombstone(sequence, &self.first, end, &self.ingest_lock) {
            Ticker::ReadPathRangeTombstonesInserted
        } else {
            Ticker::ReadPathRangeTombstonesDiscarded
        }
    }
}

impl DBIter {
    pub fn new(
        icmp: InternalKeyComparator,
        inner: BoxedIterator,
        tombstones: Arc<FragmentedTombstones>,
        sequence: SequenceNumber,
        lower_bound: Option<Vec<u8>>,
        upper_bound: Option<Vec<u8>>,
    ) -> Self {
        let mut inner = inner;
        let pins = PinRef::default();
        inner.set_pinned_data(&pins);
        DBIter {
            icmp,
            inner,
            tombstones,
            sequence,
            lower: lower_bound,
            upper: upper_bound,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            pinned_value: None,
            pins,
            pin_data: false,
            scratch: Vec::new(),
            err: None,
            max_skip: 0,
            skipped: 0,
            max_sequential_skip: MAX_SEQUENTIAL_SKIP,
            prefix_extractor: None,
            prefix: None,
            merge_operator: None,
            stats: None,
            merged: false,
            ts: None,
            blob: None,
            entity: None,
            scan_flush: None,
            range_conv: None,
        }
    }

    /// RocksDB's `min_tombstones_for_range_conversion` (0: off) on `active`, the active
    /// memtable of the SuperVersion the iterator reads, with the family's ingestion lock
    /// (see [`RangeConv`]). The caller leaves it off where RocksDB does.
    pub fn set_range_conversion(
        &mut self,
        active: Arc<MemTable>,
        ingest_lock: Arc<parking_lot::RwLock<()>>,
        min: u32,
    ) {
        self.range_conv = (min > 0).then(|| {
            Box::new(RangeConv {
                mem: active,
                ingest_lock,
                min,
                count: 0,
                first: Vec::new(),
                last: Vec::new(),
                end: None,
                tomb: false,
            })
        });
    }

    /// RocksDB's `memtable_op_scan_flush_trigger` (0: off) and
    /// `memtable_avg_op_scan_flush_trigger` (used only with the first) on `active`, the
    /// active memtable of the SuperVersion the iterator reads (see [`ScanFlush`]).
    pub fn set_memtable_scan_flush(&mut self, active: Arc<MemTable>, trigger: u32, avg_trigger: u32) {
        if trigger == 0 {
            self.scan_flush = None;
            return;
        }
        // RocksDB's DBIter: the first sequence (its earliest when empty; see its FIXME on
        // GetEarliestSequenceNumber).
        let seqno_lb = if active.is_empty() { active.earliest_seqno() } else { active.first_seqno() };
        self.scan_flush = Some(Box::new(ScanFlush {
            mem: active,
            seqno_lb,
            trigger: trigger.into(),
            avg_trigger: avg_trigger.into(),
            steps_since_seek: 1,
            hidden_since_seek: 0,
        }));
    }

    /// RocksDB's `MarkMemtableForFlushForAvgTrigger`: at each positioning call and when the
    /// iterator is dropped, the window since the last one is judged and a new one starts.
    fn end_scan_window(&mut self) {
        let Some(f) = self.scan_flush.as_deref_mut() else { return };
        if f.avg_trigger > 0
            && f.hidden_since_seek >= f.trigger
            && f.hidden_since_seek >= f.steps_since_seek.saturating_mul(f.avg_trigger)
        {
            f.mem.mark_for_flush();
            f.avg_trigger = 0;
            f.trigger = 0;
        }
        f.steps_since_seek = 1;
        f.hidden_since_seek = 0;
    }

    /// Reverse: ends the pending run at the key above it (see [`RangeConv::flush_reverse`]).
    #[cold]
    fn flush_reverse_run(&mut self) {
        let in_prefix =
            self.range_conv.as_deref().and_then(|rc| rc.end.as_deref()).is_some_and(|e| self.prefix_ok(e));
        if let Some(rc) = self.range_conv.as_deref_mut() {
            rc.flush_reverse(&self.icmp, self.sequence, self.stats.as_deref(), in_prefix);
        }
    }

    /// Reverse: the newest visible entry of `saved_key` so far has sequence `seq` and type
    /// `t`: whether it is a point tombstone no range tombstone covers (RocksDB's merging
    /// iterator drops covered entries before its DBIter sees them).
    #[cold]
    fn note_reverse_tombstone(&mut self, seq: SequenceNumber, t: ValueType) {
        let tomb = matches!(t, ValueType::Deletion | ValueType::SingleDeletion)
            && !self.covered(&self.saved_key, seq);
        if let Some(rc) = self.range_conv.as_deref_mut() {
            rc.tomb = tomb;
        }
    }

    /// Reverse: the key above a run the next backward step may track (None: none).
    fn set_reverse_end(&mut self, end: Option<&[u8]>) {
        if let Some(rc) = self.range_conv.as_deref_mut() {
            rc.count = 0;
            rc.end = end.map(<[u8]>::to_vec);
        }
    }

    /// RocksDB's `pin_data`: every data block the iterator reads stays alive until it is
    /// dropped, so a value's bytes never move while it lives (it never copies a value
    /// from a table, in either direction).
    pub fn set_pin_data(&mut self, on: bool) {
        self.pin_data = on;
        self.pins.set_enabled(on);
    }

    /// How many blocks and file iterators the iterator keeps alive for values it handed out.
    pub fn pinned_count(&self) -> usize {
        self.pins.pinned()
    }

    /// Before a positioning call: the value handed out before is no longer needed, so
    /// what was kept alive for it goes (unless `pin_data`); pinning is on while moving
    /// backward (RocksDB's `TempPinData` / `ReleaseTempPinnedData`).
    #[inline]
    fn start_step(&mut self, reverse: bool) {
        if !self.pin_data {
            self.pinned_value = None;
            self.pins.release();
            self.pins.set_enabled(reverse);
        }
    }

    /// Blob indexes met are resolved through `blob` (BlobDB).
    pub fn set_blob_fetcher(&mut self, blob: Option<crate::blob::BlobFetcher>) {
        self.blob = blob;
    }

    /// The value a blob index of `user_key` points at.
    fn fetch_blob(&self, user_key: &[u8], index: &[u8]) -> Result<Vec<u8>> {
        match &self.blob {
            Some(b) => b.fetch(user_key, index),
            None => Err(Error::corruption("blob index met where no blob files are known")),
        }
    }

    /// The value a stored entry of type `t` (a blob index or an entity) reads as; an entity
    /// is kept as the current entry's columns.
    fn resolve_stored(&mut self, t: ValueType, user_key: &[u8], raw: &[u8]) -> Result<Vec<u8>> {
        if t == ValueType::WideColumnEntity {
            let e = self.resolve_entity(user_key, raw)?;
            let v = crate::wide_columns::default_column_value(&e)?.to_vec();
            self.entity = Some(e);
            return Ok(v);
        }
        self.fetch_blob(user_key, raw)
    }

    /// A stored entity of `user_key` with its columns in blob files read and put inline
    /// (RocksDB's DBIter resolves them all when it lands on the entity, and before a merge).
    fn resolve_entity(&self, user_key: &[u8], raw: &[u8]) -> Result<Vec<u8>> {
        let resolved = crate::wide_columns::resolve_blob_columns(raw, |i| self.fetch_blob(user_key, i))?;
        Ok(resolved.unwrap_or_else(|| raw.to_vec()))
    }

    /// The current entry's wide columns, as RocksDB's `Iterator::columns()`: an entity's
    /// columns, or one default column (empty name) holding `value()`. Requires `valid()`.
    pub fn columns(&self) -> Result<crate::wide_columns::WideColumns> {
        if let Some(t) = &self.ts {
            return match t.current().and_then(|c| c.entity.as_ref()) {
                Some(e) => crate::wide_columns::owned_columns(e),
                None => Ok(vec![(Vec::new(), self.value().to_vec())]),
            };
        }
        match &self.entity {
            Some(e) => crate::wide_columns::owned_columns(e),
            _ => Ok(vec![(Vec::new(), self.value().to_vec())]),
        }
    }

    /// RocksDB's `prefix_same_as_start` with the family's extractor (None: no effect).
    pub fn set_prefix_same_as_start(&mut self, extractor: Option<crate::slice_transform::SliceTransformRef>) {
        self.prefix_extractor = extractor;
    }

    /// Remembers the prefix of `key` (when it has one) as the one iteration stays within.
    fn set_prefix_from(&mut self, key_is_current: bool, target: Option<&[u8]>) {
        let Some(t) = &self.prefix_extractor else { return };
        let prefix = {
            let key = match target {
                Some(k) => k,
                None if key_is_current && self.valid => self.key(),
                None => return,
            };
            t.transform(key).map(|p| p.to_vec())
        };
        self.prefix = prefix;
    }

    /// RocksDB's `PrefixCheck`: `user_key` is within the remembered prefix (or there is none).
    #[inline(always)]
    fn prefix_ok(&self, user_key: &[u8]) -> bool {
        self.prefix.is_none() || self.prefix_matches(user_key)
    }

    /// `prefix_ok` with a remembered prefix.
    #[inline(never)]
    fn prefix_matches(&self, user_key: &[u8]) -> bool {
        match (&self.prefix, &self.prefix_extractor) {
            // Prefixes are of user keys without timestamps (RocksDB's `PrefixCheck` compares
            // them with `CompareWithoutTimestamp(.., false, .., false)`).
            (Some(p), Some(t)) => t.transform(user_key).is_some_and(|k| {
                let c = if self.icmp.timestamp_size() == 0 {
                    self.icmp.compare_user(k, p)
                } else {
                    self.icmp.user_comparator().compare_without_timestamp(k, false, p, false)
                };
                c == Ordering::Equal
            }),
            _ => true,
        }
    }

    /// The merge operator that resolves merge operands (none: reading one fails).
    pub fn set_merge_operator(&mut self, op: Option<Arc<dyn MergeOperatorCore>>) {
        self.merge_operator = op;
    }

    /// The database's statistics, where failed merges and reseeks are counted.
    pub fn set_statistics(&mut self, stats: Option<Arc<crate::statistics::Statistics>>) {
        self.stats = stats;
    }

    /// The family's `max_sequential_skip_in_iterations`: stepping over more than `n` entries
    /// of one user key reseeks past the rest (RocksDB's DBIter `max_skip_`), each reseek
    /// counted as `rocksdb.number.reseeks.iteration` in the statistics of `set_statistics`.
    pub fn set_max_sequential_skip(&mut self, n: u64) {
        self.max_sequential_skip = usize::try_from(n).unwrap_or(usize::MAX);
    }

    /// One reseek past the versions of a key (RocksDB's `NUMBER_OF_RESEEKS_IN_ITERATION`).
    fn count_reseek(&self) {
        crate::statistics::record_tick(
            self.stats.as_deref(),
            crate::statistics::Ticker::NumberOfReseeksInIteration,
            1,
        );
    }

    /// A step that passes over more than `n` internal entries it does not return stops
    /// with status Incomplete (RocksDB's `max_skippable_internal_keys`; 0: no limit).
    pub fn set_max_skippable_internal_keys(&mut self, n: u64) {
        self.max_skip = n;
    }

    /// Makes the iterator invalid with `e` as its status (until the next seek).
    pub fn fail_with(&mut self, e: Error) {
        self.fail(e);
    }

    /// Whether the current step passed over more entries than allowed.
    #[inline]
    fn skip_limit_exceeded(&self) -> bool {
        self.max_skip > 0 && self.skipped > self.max_skip
    }

    #[cold]
    fn fail_skipped(&mut self) {
        self.fail(Error::new(crate::error::ErrorKind::Incomplete, "Too many internal keys skipped."));
    }

    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current user key. Requires `valid()`.
    pub fn key(&self) -> &[u8] {
        debug_assert!(self.valid);
        if self.ts.is_some() {
            return self.ts_key();
        }
        match self.direction {
            Direction::Forward if !self.merged => user_key(self.inner.key()),
            _ => &self.saved_key,
        }
    }

    /// The current value. Requires `valid()`.
    pub fn value(&self) -> &[u8] {
        debug_assert!(self.valid);
        if self.ts.is_some() {
            return self.ts_value();
        }
        match (self.direction, &self.pinned_value) {
            (Direction::Forward, _) if !self.merged => self.inner.value(),
            // SAFETY: the inner iterator said these bytes stay put while it lives, and
            // `self` owns it; `pinned_value` is cleared whenever the value changes.
            (Direction::Reverse, Some(p)) => unsafe { p.get() },
            _ => &self.saved_value,
        }
    }

    pub fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => self.inner.status(),
        }
    }

    pub fn seek_to_first(&mut self) {
        self.end_scan_window();
        if self.ts.is_some() {
            return self.ts_seek_to_first();
        }
        self.start_step(false);
        if let Some(lower) = self.lower.take() {
            self.seek(&lower);
            self.lower = Some(lower);
            return;
        }
        self.reset(Direction::Forward);
        self.inner.seek_to_first();
        self.find_next_user_entry(false);
        self.set_prefix_from(true, None);
    }

    pub fn seek_to_last(&mut self) {
        self.end_scan_window();
        if self.ts.is_some() {
            return self.ts_seek_to_last();
        }
        self.start_step(true);
        self.reset(Direction::Reverse);
        if self.range_conv.is_some() {
            let upper = self.upper.clone();
            self.set_reverse_end(upper.as_deref());
        }
        if let Some(upper) = self.upper.take() {
            // RocksDB seeks for prev at the upper bound: the prefix is the bound's.
            self.set_prefix_from(false, Some(&upper));
            self.upper = Some(upper);
            self.position_before_upper();
            self.prev_user_entry();
        } else {
            self.inner.seek_to_last();
            self.prev_user_entry();
            self.set_prefix_from(true, None);
        }
    }

    /// Positions at the first key `>= target` (and `>= lower bound`).
    pub fn seek(&mut self, target: &[u8]) {
        self.end_scan_window();
        if self.ts.is_some() {
            return self.ts_seek(target);
        }
        self.start_step(false);
        self.reset(Direction::Forward);
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let t = match &self.lower {
            Some(lo) if self.icmp.compare_user(target, lo) == Ordering::Less => lo.as_slice(),
            _ => target,
        };
        let past_upper =
            self.upper.as_ref().is_some_and(|up| self.icmp.compare_user(t, up) != Ordering::Less);
        append_internal_key(&mut scratch, t, self.sequence, crate::key::VALUE_TYPE_FOR_LOOKUP);
        if !past_upper {
            self.inner.seek(&scratch);
        }
        if self.prefix_extractor.is_some() {
            let target = user_key(&scratch).to_vec();
            self.set_prefix_from(false, Some(&target));
        }
        self.scratch = scratch;
        if !past_upper {
            self.find_next_user_entry(false);
        }
    }

    /// Positions at the last key `<= target` (and below the upper bound).
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.end_scan_window();
        if self.ts.is_some() {
            return self.ts_seek_for_prev(target);
        }
        self.start_step(true);
        self.reset(Direction::Reverse);
        if self.range_conv.is_some() {
            // RocksDB's `SetSavedKeyToSeekForPrevTarget`: the target, clamped to the bound.
            let end = match &self.upper {
                Some(up) if self.icmp.compare_user(target, up) != Ordering::Less => up.clone(),
                _ => target.to_vec(),
            };
            self.set_reverse_end(Some(&end));
        }
        self.set_prefix_from(false, Some(target));
        if let Some(lo) = &self.lower {
            if self.icmp.compare_user(target, lo) == Ordering::Less {
                return;
            }
        }
        if self.upper.as_ref().is_some_and(|up| self.icmp.compare_user(target, up) != Ordering::Less) {
            self.position_before_upper();
        } else {
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            // The last possible internal key of `target`.
            append_internal_key(&mut scratch, target, 0, ValueType::Deletion);
            self.inner.seek_for_prev(&scratch);
            self.scratch = scratch;
        }
        self.prev_user_entry();
    }

    /// Requires `valid()`.
    pub fn next(&mut self) {
        debug_assert!(self.valid);
        if !self.valid {
            return;
        }
        if let Some(f) = self.scan_flush.as_deref_mut() {
            f.steps_since_seek += 1;
        }
        if self.ts.is_some() {
            return self.ts_next();
        }
        self.start_step(false);
        if self.direction == Direction::Reverse {
            // The inner iterator is before every entry of `saved_key`; step onto them and
            // let the skipping below pass them.
            self.direction = Direction::Forward;
            if self.inner.valid() {
                self.inner.next();
            } else {
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                append_internal_key(&mut scratch, &self.saved_key, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
                self.inner.seek(&scratch);
                self.scratch = scratch;
            }
        } else if self.merged {
            // `saved_key` is the current key; the inner iterator is already past its operands.
            self.merged = false;
        } else {
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            self.inner.next();
            // RocksDB's DBIter::Next counts the entry it steps off.
            perf::count(Field::InternalKeySkippedCount, 1);
        }
        self.find_next_user_entry(true);
    }

    /// Requires `valid()`.
    pub fn prev(&mut self) {
        debug_assert!(self.valid);
        if !self.valid {
            return;
        }
        if self.ts.is_some() {
            return self.ts_prev();
        }
        if self.range_conv.is_some() {
            let current = self.key().to_vec();
            self.set_reverse_end(Some(&current));
        }
        self.start_step(true);
        if self.direction == Direction::Forward && self.merged {
            // The inner iterator is past the current key (`saved_key`): go back before it.
            self.merged = false;
            self.seek_before_saved_key();
            self.direction = Direction::Reverse;
        } else if self.direction == Direction::Forward {
            // Move the inner iterator before every entry of the current key.
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            let mut steps = 0usize;
            loop {
                self.inner.prev();
                if !self.inner.valid()
                    || self.icmp.compare_user(user_key(self.inner.key()), &self.saved_key) == Ordering::Less
                {
                    break;
                }
                steps += 1;
                if steps > self.max_sequential_skip {
                    self.count_reseek();
                    self.seek_before_saved_key();
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.prev_user_entry();
    }

    fn reset(&mut self, direction: Direction) {
        self.prefix = None;
        self.merged = false;
        self.pinned_value = None;
        self.err = None;
        self.skipped = 0;
        self.valid = false;
        self.direction = direction;
    }

    fn fail(&mut self, e: Error) {
        self.merged = false;
        self.err = Some(e);
        self.valid = false;
        self.saved_key.clear();
        self.saved_value.clear();
        self.pinned_value = None;
    }

    #[inline]
    fn covered(&self, user_key: &[u8], seq: SequenceNumber) -> bool {
        !self.tombstones.is_empty() && self.tombstones.max_covering_seq(user_key, self.sequence) > seq
    }

    /// Puts the inner iterator on the last entry whose user key is below the upper bound.
    fn position_before_upper(&mut self) {
        let Some(upper) = &self.upper else { return };
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        append_internal_key(&mut scratch, upper, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
        self.inner.seek_for_prev(&scratch);
        self.scratch = scratch;
        while self.inner.valid()
            && self.icmp.compare_user(user_key(self.inner.key()), upper) != Ordering::Less
        {
            self.inner.prev();
        }
    }

    /// Moving forward from the inner position, stops on the first entry that is the newest
    /// visible, live Value of its key. With `skipping`, entries of keys `<= saved_key` are
    /// passed over (they are older versions of a key already dealt with).
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        self.skipped = 0;
        if let Some(rc) = self.range_conv.as_deref_mut() {
            rc.count = 0;
        }
        let mut num_skipped = 0usize;
        let mut mem_hidden = 0u64;
        while self.inner.valid() {
            let p = match parse_internal_key(self.inner.key()) {
                Ok(p) => p,
                Err(e) => return self.fail(e),
            };
            if let Some(up) = &self.upper {
                if self.icmp.compare_user(p.user_key, up) != Ordering::Less {
                    break;
                }
            }
            if !self.prefix_ok(p.user_key) {
                break;
            }
            let hidden = skipping && self.icmp.compare_user(p.user_key, &self.saved_key) != Ordering::Greater;
            if p.sequence > self.sequence {
                perf::count(Field::InternalRecentSkippedCount, 1);
                if !hidden {
                    if let Some(rc) = self.range_conv.as_deref_mut() {
                        rc.newer_key(&self.icmp, p.user_key);
                    }
                }
            } else if hidden {
                perf::count(Field::InternalKeySkippedCount, 1);
                // RocksDB's merging iterator drops covered entries before its DBIter sees
                // them: those are not counted.
                if self.scan_flush.is_some() && !self.covered(p.user_key, p.sequence) {
                    if let Some(f) = self.scan_flush.as_deref_mut() {
                        f.count(p.sequence, &mut mem_hidden);
                    }
                }
            }
            if hidden || p.sequence > self.sequence {
                self.skipped += 1;
                if self.skip_limit_exceeded() {
                    return self.fail_skipped();
                }
                num_skipped += 1;
                if num_skipped > self.max_sequential_skip {
                    // Jump over the rest of these versions with one seek.
                    num_skipped = 0;
                    self.count_reseek();
                    let mut scratch = std::mem::take(&mut self.scratch);
                    scratch.clear();
                    if hidden {
                        append_internal_key(&mut scratch, &self.saved_key, 0, ValueType::Deletion);
                    } else {
                        append_internal_key(
                            &mut scratch,
                            p.user_key,
                            self.sequence,
                            crate::key::VALUE_TYPE_FOR_LOOKUP,
                        );
                    }
                    self.inner.seek(&scratch);
                    self.scratch = scratch;
                    continue;
                }
            } else {
                num_skipped = 0;
                match self.classify(p.user_key, p.sequence, p.value_type) {
                    Some(Found::Value) => {
                        if let Some(rc) = self.range_conv.as_deref_mut() {
                            rc.flush(&self.icmp, self.sequence, self.stats.as_deref(), Some(p.user_key));
                        }
                        self.entity = None;
                        if needs_resolve(p.value_type) {
                            // The blob's value (an entity's default column), kept as a
                            // merge result is.
                            let uk = p.user_key.to_vec();
                            let raw = self.inner.value().to_vec();
                            match self.resolve_stored(p.value_type, &uk, &raw) {
                                Ok(v) => {
                                    self.saved_key = uk;
                                    self.saved_value = v;
                                    self.merged = true;
                                }
                                Err(e) => return self.fail(e),
                            }
                        }
                        self.valid = true;
                        return;
                    }
                    Some(Found::Merge) => {
                        if let Some(rc) = self.range_conv.as_deref_mut() {
                            rc.flush(&self.icmp, self.sequence, self.stats.as_deref(), Some(p.user_key));
                        }
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        match self.merge_values_new_to_old() {
                            Ok(v) => {
                                self.saved_value = v;
                                self.merged = true;
                                self.valid = true;
                            }
                            Err(e) => self.fail(e),
                        }
                        return;
                    }
                    None => {}
                    Some(Found::Hidden) => {
                        perf::count(Field::InternalDeleteSkippedCount, 1);
                        if let Some(f) = self.scan_flush.as_deref_mut() {
                            if matches!(p.value_type, ValueType::Deletion | ValueType::SingleDeletion) {
                                f.count(p.sequence, &mut mem_hidden);
                            }
                        }
                        // RocksDB's merging iterator drops tombstones a range tombstone
                        // covers before its DBIter sees them: those are not counted.
                        if self.range_conv.is_some()
                            && matches!(p.value_type, ValueType::Deletion | ValueType::SingleDeletion)
                            && !self.covered(p.user_key, p.sequence)
                        {
                            if let Some(rc) = self.range_conv.as_deref_mut() {
                                rc.track(p.user_key);
                            }
                        }
                        self.skipped += 1;
                        if self.skip_limit_exceeded() {
                            return self.fail_skipped();
                        }
                        // Deleted or covered: hide this key's older entries.
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        skipping = true;
                    }
                }
            }
            self.inner.next();
        }
        if self.range_conv.is_some() && self.inner.status().is_ok() {
            if let Some(rc) = self.range_conv.as_deref_mut() {
                rc.flush(&self.icmp, self.sequence, self.stats.as_deref(), None);
            }
        }
        self.valid = false;
    }

    /// Moving backward from the inner position, finds the previous user key whose newest
    /// visible entry is a live Value; copies it to `saved_key` / `saved_value` and leaves
    /// the inner iterator before that key's entries.
    fn prev_user_entry(&mut self) {
        self.skipped = 0;
        while self.inner.valid() {
            if let Some(rc) = self.range_conv.as_deref_mut() {
                rc.tomb = false;
            }
            // The inner iterator is on the last (oldest) entry of the next candidate key.
            match self.find_value_for_current_key() {
                Ok(Some(Found::Value)) => {
                    if self.range_conv.is_some() {
                        self.flush_reverse_run();
                    }
                    self.valid = true;
                    return;
                }
                // Merges are resolved into a Value by `find_value_for_current_key`.
                Ok(Some(Found::Merge)) => return self.fail(Error::corruption("unresolved merge in DBIter")),
                Ok(Some(Found::Hidden)) => {
                    if let Some(rc) = self.range_conv.as_deref_mut() {
                        if rc.tomb && rc.end.is_some() {
                            rc.track_reverse(&self.saved_key);
                        }
                    }
                    if self.skip_limit_exceeded() {
                        return self.fail_skipped();
                    }
                }
                Ok(None) => break,
                Err(e) => return self.fail(e),
            }
        }
        // Below the lower bound, out of the prefix or at the data's start.
        if self.range_conv.is_some() {
            self.flush_reverse_run();
        }
        self.set_invalid();
    }

    fn set_invalid(&mut self) {
        self.valid = false;
        self.saved_key.clear();
        self.saved_value.clear();
        self.pinned_value = None;
    }

    /// What an entry visible at the snapshot says about its key.
    #[inline]
    fn classify(&self, user_key: &[u8], seq: SequenceNumber, t: ValueType) -> Option<Found> {
        match t {
            ValueType::RangeDeletion => None,
            ValueType::Deletion | ValueType::SingleDeletion => Some(Found::Hidden),
            _ if self.covered(user_key, seq) => Some(Found::Hidden),
            ValueType::Value | ValueType::BlobIndex | ValueType::WideColumnEntity => Some(Found::Value),
            ValueType::Merge => Some(Found::Merge),
        }
    }

    /// From the oldest entry of a key (the inner iterator must be valid), copies the key
    /// to `saved_key` and walks back over its entries, leaving the inner iterator before
    /// them; the newest visible entry decides. `None` when the key is below the lower bound.
    /// Falls back to a seek when the key has many entries.
    fn find_value_for_current_key(&mut self) -> Result<Option<Found>> {
        let p = parse_internal_key(self.inner.key())?;
        if let Some(lo) = &self.lower {
            if self.icmp.compare_user(p.user_key, lo) == Ordering::Less {
                return Ok(None);
            }
        }
        if !self.prefix_ok(p.user_key) {
            return Ok(None);
        }
        self.saved_key.clear();
        self.saved_key.extend_from_slice(p.user_key);
        // The value of the key before (if any) is no longer needed.
        self.pinned_value = None;
        if !self.pin_data {
            self.pins.release();
        }
        let (mut sequence, mut value_type) = (p.sequence, p.value_type);
        let mut found = Found::Hidden;
        let mut steps = 0usize;
        // Merge operands newer than the last Put or deletion, oldest first; whether that
        // Put (in `saved_value`) is their base.
        let mut operands: Vec<Vec<u8>> = Vec::new();
        let mut has_base = false;
        // The base in `saved_value` is a stored blob index or entity of this type, resolved
        // once the walk ends (RocksDB's FindValueForCurrentKey resolves the newest visible
        // one only: older versions walked over fetch nothing).
        let mut unresolved: Option<ValueType> = None;
        loop {
            if sequence <= self.sequence {
                match self.classify(&self.saved_key, sequence, value_type) {
                    Some(Found::Value) => {
                        found = Found::Value;
                        has_base = true;
                        operands.clear();
                        self.entity = None;
                        if let Some(rc) = self.range_conv.as_deref_mut() {
                            rc.tomb = false;
                        }
                        unresolved = None;
                        if needs_resolve(value_type) {
                            self.pinned_value = None;
                            self.saved_value.clear();
                            self.saved_value.extend_from_slice(self.inner.value());
                            unresolved = Some(value_type);
                        } else if let Some(v) = self.inner.value_if_pinned() {
                            self.pinned_value = Some(PinnedValue::new(v));
                        } else {
                            self.pinned_value = None;
                            self.saved_value.clear();
                            self.saved_value.extend_from_slice(self.inner.value());
                        }
                    }
                    Some(Found::Merge) => {
                        perf::count(Field::InternalMergeCount, 1);
                        found = Found::Merge;
                        operands.push(self.inner.value().to_vec());
                        if let Some(rc) = self.range_conv.as_deref_mut() {
                            rc.tomb = false;
                        }
                    }
                    Some(f) => {
                        perf::count(Field::InternalDeleteSkippedCount, 1);
                        found = f;
                        has_base = false;
                        unresolved = None;
                        operands.clear();
                        self.entity = None;
                        if self.range_conv.is_some() {
                            self.note_reverse_tombstone(sequence, value_type);
                        }
                    }
                    None => {}
                }
            }
            // As RocksDB's FindValueForCurrentKey: every entry of the key walked over.
            if sequence <= self.sequence {
                perf::count(Field::InternalKeySkippedCount, 1);
            } else {
                perf::count(Field::InternalRecentSkippedCount, 1);
            }
            steps += 1;
            if steps > self.max_sequential_skip {
                self.count_reseek();
                self.skipped += steps as u64;
                return self.find_value_for_current_key_using_seek().map(Some);
            }
            self.inner.prev();
            if !self.inner.valid() {
                // Stopped by an error, the walk may have missed a newer entry of the key:
                // what was found so far may be stale.
                self.inner.status()?;
                break;
            }
            let p = parse_internal_key(self.inner.key())?;
            if self.icmp.compare_user(p.user_key, &self.saved_key) != Ordering::Equal {
                break;
            }
            (sequence, value_type) = (p.sequence, p.value_type);
        }
        // Entries of this key passed over (all of them when it is hidden).
        self.skipped += steps as u64 - u64::from(found != Found::Hidden);
        if let Some(t) = unresolved.filter(|_| has_base) {
            let (uk, raw) = (self.saved_key.clone(), std::mem::take(&mut self.saved_value));
            self.saved_value = self.resolve_stored(t, &uk, &raw)?;
        }
        if found == Found::Merge {
            let base = match self.pinned_value.take() {
                // SAFETY: as in `value`: the inner iterator keeps pinned bytes alive.
                Some(p) if has_base => Some(unsafe { p.get() }.to_vec()),
                _ if has_base => Some(std::mem::take(&mut self.saved_value)),
                _ => None,
            };
            self.saved_value = self.full_merge(base.as_deref(), operands)?;
            if let Some(e) = self.entity.take() {
                self.entity = Some(crate::wide_columns::with_default_column(&e, &self.saved_value)?);
            }
            found = Found::Value;
        }
        Ok(Some(found))
    }

    /// Seeks to the newest visible entry of `saved_key`, reads the decision there, then
    /// puts the inner iterator before the key's entries.
    fn find_value_for_current_key_using_seek(&mut self) -> Result<Found> {
        self.pinned_value = None;
        if let Some(rc) = self.range_conv.as_deref_mut() {
            rc.tomb = false;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        append_internal_key(&mut scratch, &self.saved_key, self.sequence, crate::key::VALUE_TYPE_FOR_LOOKUP);
        self.inner.seek(&scratch);
        let mut found = Found::Hidden;
        while self.inner.valid() {
            let p = match parse_internal_key(self.inner.key()) {
                Ok(p) => p,
                Err(e) => {
                    self.scratch = scratch;
                    return Err(e);
                }
            };
            if self.icmp.compare_user(p.user_key, &self.saved_key) != Ordering::Equal {
                break;
            }
            // Every entry here is visible: the seek passed the newer ones.
            match self.classify(p.user_key, p.sequence, p.value_type) {
                None => {
                    self.inner.next();
                    continue;
                }
                Some(Found::Merge) => {
                    match self.merge_values_new_to_old() {
                        Ok(v) => self.saved_value = v,
                        Err(e) => {
                            self.scratch = scratch;
                            return Err(e);
                        }
                    }
                    found = Found::Value;
                    break;
                }
                Some(f) => {
                    self.entity = None;
                    if self.range_conv.is_some() {
                        let tomb = matches!(p.value_type, ValueType::Deletion | ValueType::SingleDeletion)
                            && !self.covered(&self.saved_key, p.sequence);
                        if let Some(rc) = self.range_conv.as_deref_mut() {
                            rc.tomb = tomb;
                        }
                    }
                    if f == Found::Value && needs_resolve(p.value_type) {
                        let (uk, raw) = (self.saved_key.clone(), self.inner.value().to_vec());
                        let v = match self.resolve_stored(p.value_type, &uk, &raw) {
                            Ok(v) => v,
                            Err(e) => {
                                self.scratch = scratch;
                                return Err(e);
                            }
                        };
                        self.saved_value = v;
                    } else if f == Found::Value {
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.inner.value());
                    }
                    found = f;
                    break;
                }
            }
        }
        self.scratch = scratch;
        self.inner.status()?;
        self.seek_before_saved_key();
        Ok(found)
    }

    /// From the newest visible entry of `saved_key`, a merge operand, gathers the operands
    /// down to a base (RocksDB's `MergeValuesNewToOld`) and returns the merged value; the
    /// inner iterator is left on the first entry not gathered.
    fn merge_values_new_to_old(&mut self) -> Result<Vec<u8>> {
        let max_cov = if self.tombstones.is_empty() {
            0
        } else {
            self.tombstones.max_covering_seq(&self.saved_key, self.sequence)
        };
        let mut operands = vec![self.inner.value().to_vec()];
        let mut base: Option<Vec<u8>> = None;
        self.entity = None;
        let mut entity_base: Option<Vec<u8>> = None;
        self.inner.next();
        while self.inner.valid() {
            let p = parse_internal_key(self.inner.key())?;
            if self.icmp.compare_user(p.user_key, &self.saved_key) != Ordering::Equal || p.sequence < max_cov
            {
                break;
            }
            match p.value_type {
                ValueType::Value => {
                    base = Some(self.inner.value().to_vec());
                    break;
                }
                ValueType::BlobIndex => {
                    base = Some(self.fetch_blob(&self.saved_key, self.inner.value())?);
                    break;
                }
                ValueType::WideColumnEntity => {
                    let e = self.resolve_entity(&self.saved_key, self.inner.value())?;
                    base = Some(crate::wide_columns::default_column_value(&e)?.to_vec());
                    entity_base = Some(e);
                    break;
                }
                ValueType::Deletion | ValueType::SingleDeletion => break,
                ValueType::RangeDeletion => {}
                ValueType::Merge => operands.push(self.inner.value().to_vec()),
            }
            self.inner.next();
        }
        self.inner.status()?;
        operands.reverse();
        let merged = self.full_merge(base.as_deref(), operands)?;
        if let Some(e) = entity_base {
            self.entity = Some(crate::wide_columns::with_default_column(&e, &merged)?);
        }
        Ok(merged)
    }

    /// The full merge of `operands` (oldest first) onto `base` for `saved_key`.
    fn full_merge(&self, base: Option<&[u8]>, operands: Vec<Vec<u8>>) -> Result<Vec<u8>> {
        let op = self.merge_operator.as_deref().ok_or_else(no_merge_operator)?;
        op.full_merge(&self.saved_key, base, operands, self.stats.as_deref())
    }

    /// Puts the inner iterator on the last entry whose user key is below `saved_key`.
    fn seek_before_saved_key(&mut self) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        append_internal_key(&mut scratch, &self.saved_key, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
        self.inner.seek_for_prev(&scratch);
        self.scratch = scratch;
        while self.inner.valid()
            && self.icmp.compare_user(user_key(self.inner.key()), &self.saved_key) != Ordering::Less
        {
            self.inner.prev();
        }
    }
}

/// The address of a value's bytes that an inner iterator pinned
/// ([`crate::iter::InternalIterator::value_pinned`]).
#[derive(Clone, Copy)]
struct PinnedValue {
    ptr: *const u8,
    len: usize,
}

// SAFETY: a `PinnedValue` only reads bytes that nothing rewrites (a memtable arena's) and
// lives inside the `DBIter` whose inner iterator keeps them alive; moving it, or sharing
// it, between threads changes nothing about that.
unsafe impl Send for PinnedValue {}
// SAFETY: as for Send: the bytes are read only.
unsafe impl Sync for PinnedValue {}

impl PinnedValue {
    fn new(v: &[u8]) -> Self {
        PinnedValue { ptr: v.as_ptr(), len: v.len() }
    }

    /// The bytes.
    ///
    /// # Safety
    /// The iterator that pinned them is alive, and the returned slice does not outlive it.
    #[inline]
    unsafe fn get<'a>(&self) -> &'a [u8] {
        // SAFETY: per the contract the `len` bytes at `ptr` are alive and unchanged.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for DBIter {
    /// Pinned file iterators hold the pinned data too: letting go of them here breaks
    /// that cycle.
    fn drop(&mut self) {
        self.end_scan_window();
        self.pins.release();
    }
}

// ---------------------------------------------------------------------------------------
// The timestamp mode.
// ---------------------------------------------------------------------------------------

/// One entry of the current key, as read from the inner iterator.
struct TsRaw {
    ikey: Vec<u8>,
    value: Vec<u8>,
    seq: SequenceNumber,
    vt: ValueType,
}

/// One version the iterator yields.
struct TsYield {
    /// The internal key of the version (its user key carries the timestamp).
    ikey: Vec<u8>,
    value: Vec<u8>,
    /// A wide-column entity's encoding (after any merge onto its default column).
    entity: Option<Vec<u8>>,
}

/// The timestamp mode of [`DBIter`] (families with user-defined timestamps).
struct TsMode {
    ucmp: crate::comparator::ComparatorRef,
    ts_sz: usize,
    /// `ReadOptions::timestamp` (RocksDB's `timestamp_ub_`).
    read_ts: Vec<u8>,
    /// `ReadOptions::iter_start_ts` (RocksDB's `timestamp_lb_`): every version is yielded.
    start_ts: Option<Vec<u8>>,
    /// The current key's entries, newest first (reused).
    entries: Vec<TsRaw>,
    /// What the current key yields, in forward order, and which one is current.
    yields: Vec<TsYield>,
    pos: usize,
}

impl TsMode {
    #[inline]
    fn strip<'a>(&self, uk: &'a [u8]) -> &'a [u8] {
        &uk[..uk.len().saturating_sub(self.ts_sz)]
    }

    #[inline]
    fn ts_of<'a>(&self, uk: &'a [u8]) -> &'a [u8] {
        &uk[uk.len().saturating_sub(self.ts_sz)..]
    }

    /// A key without timestamp against another without.
    #[inline]
    fn cmp_plain(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.ucmp.compare_without_timestamp(a, false, b, false)
    }

    /// RocksDB's `IsVisible` for the timestamp part.
    fn ts_visible(&self, ts: &[u8]) -> bool {
        self.ucmp.compare_timestamp(ts, &self.read_ts) != Ordering::Greater
            && self.start_ts.as_ref().is_none_or(|lo| self.ucmp.compare_timestamp(ts, lo) != Ordering::Less)
    }

    fn current(&self) -> Option<&TsYield> {
        self.yields.get(self.pos)
    }

    /// `key | ts` as an internal key at `seq` / `t`.
    fn seek_key(dst: &mut Vec<u8>, key: &[u8], ts: &[u8], seq: SequenceNumber, t: ValueType) {
        dst.clear();
        let mut uk = Vec::with_capacity(key.len() + ts.len());
        uk.extend_from_slice(key);
        uk.extend_from_slice(ts);
        append_internal_key(dst, &uk, seq, t);
    }
}

/// The timestamp mode: RocksDB's `DBIter` with `timestamp_size_ > 0`.
///
/// ```text
/// inner (user key = key | ts: key ascending, ts descending, then seq descending):
///   a|5@9 Merge m   a|3@7 Value x   a|1@2 Del   b|4@8 Value y   b|2@3 Value z
/// read ts 4               =>  a -> x (ts 3)          b -> y (ts 4)
/// read ts 5               =>  a -> x+m (ts 5)        b -> y
/// read ts 5, start ts 2   =>  a|5@9 x+m   a|3@7 x   b|4@8 y   b|2@3 z
/// ```
/// An entry is visible when its sequence is at or below the snapshot and its timestamp at
/// or below the read timestamp (and, with `iter_start_ts`, at or above that). Entries
/// covered by a range tombstone are gone before visibility is asked (RocksDB's merging
/// iterator drops them): a tombstone counts when its sequence is at or below the snapshot
/// and its timestamp at or below the read timestamp, and it covers every version of its
/// keys older (by sequence) than itself. Without `iter_start_ts`, per key (compared without
/// timestamps) the newest visible entry decides, as without timestamps: a Value, blob or
/// entity is yielded (`key()` without the timestamp, `timestamp()` the version's), a
/// deletion hides the key, a merge operand is merged with the entries below it (older
/// timestamps too, as RocksDB's `MergeValuesNewToOld`) down to a base or a deletion. With
/// `iter_start_ts` every visible version is yielded (the newest sequence of each
/// timestamp): `key()` is its whole internal key, a deletion yields an empty value, and a
/// merge operand the merge of the key's entries from it down.
///
/// The mode works one key at a time: its entries are read into `TsMode::entries` and
/// resolved into the versions it yields. Forward the inner iterator then sits past the
/// key's entries, backward before them.
impl DBIter {
    /// Reads the family's timestamps: `read_ts` bounds every read, `start_ts` makes the
    /// iterator return every version (see above). A comparator without timestamps leaves
    /// the iterator as it is.
    pub fn set_timestamps(
        &mut self,
        ucmp: crate::comparator::ComparatorRef,
        read_ts: Vec<u8>,
        start_ts: Option<Vec<u8>>,
    ) {
        let ts_sz = ucmp.timestamp_size();
        if ts_sz == 0 {
            self.ts = None;
            return;
        }
        self.ts = Some(Box::new(TsMode {
            ucmp,
            ts_sz,
            read_ts,
            start_ts,
            entries: Vec::new(),
            yields: Vec::new(),
            pos: 0,
        }));
    }

    /// The current entry's timestamp (families with timestamps), empty otherwise.
    pub fn timestamp(&self) -> &[u8] {
        match self.ts.as_deref() {
            Some(t) => t.current().map_or(&[][..], |c| t.ts_of(user_key(&c.ikey))),
            None => &[],
        }
    }

    fn ts_key(&self) -> &[u8] {
        let Some(t) = self.ts.as_deref() else { return &[] };
        match t.current() {
            Some(c) if t.start_ts.is_some() => &c.ikey,
            Some(c) => t.strip(user_key(&c.ikey)),
            None => &[],
        }
    }

    fn ts_value(&self) -> &[u8] {
        self.ts.as_deref().and_then(TsMode::current).map_or(&[][..], |c| &c.value)
    }

    /// Takes the mode's state out (put back by `ts_put`), so that it and `self` can be
    /// borrowed apart.
    fn ts_take(&mut self) -> Result<Box<TsMode>> {
        self.ts.take().ok_or_else(|| Error::corruption("DBIter: timestamp mode without its state"))
    }

    fn ts_put(&mut self, t: Box<TsMode>) {
        self.ts = Some(t);
    }

    fn ts_clear(&mut self) {
        if let Some(t) = self.ts.as_deref_mut() {
            t.yields.clear();
            t.pos = 0;
        }
    }

    fn ts_seek_to_first(&mut self) {
        if let Some(lower) = self.lower.take() {
            self.ts_seek(&lower);
            self.lower = Some(lower);
            return;
        }
        self.reset(Direction::Forward);
        self.ts_clear();
        self.inner.seek_to_first();
        self.ts_forward_load();
        self.ts_set_prefix_from_current();
    }

    fn ts_seek_to_last(&mut self) {
        self.reset(Direction::Reverse);
        self.ts_clear();
        if self.range_conv.is_some() {
            // RocksDB's SeekToLast: SeekForPrev(upper bound), whose target clamped to the
            // bound is `upper | max ts`; without a bound nothing is tracked.
            let end = self.upper.clone().map(|up| self.ts_with(&up, 0xff));
            self.set_reverse_end(end.as_deref());
        }
        if let Some(upper) = self.upper.take() {
            // RocksDB seeks for prev at the upper bound: the prefix is the bound's.
            self.set_prefix_from(false, Some(&upper));
            self.upper = Some(upper);
            self.ts_position_before_upper();
            self.ts_forward_or_back(false);
        } else {
            self.inner.seek_to_last();
            self.ts_forward_or_back(false);
            self.ts_set_prefix_from_current();
        }
    }

    /// `prefix_same_as_start` after a seek to the first or last key: the prefix of the key
    /// landed on, without its timestamp (RocksDB's `StripTimestampFromUserKey` before
    /// `ShouldSetPrefix`), also when `key()` is the internal key (`iter_start_ts`).
    fn ts_set_prefix_from_current(&mut self) {
        if self.prefix_extractor.is_none() || !self.valid {
            return;
        }
        let Some(t) = self.ts.as_deref() else { return };
        let key = t.current().map(|c| t.strip(user_key(&c.ikey)).to_vec());
        if let Some(k) = key {
            self.set_prefix_from(false, Some(&k));
        }
    }

    fn ts_seek(&mut self, target: &[u8]) {
        self.reset(Direction::Forward);
        self.ts_clear();
        let t = match self.ts_take() {
            Ok(t) => t,
            Err(e) => return self.fail(e),
        };
        let key = match &self.lower {
            Some(lo) if t.cmp_plain(target, lo) == Ordering::Less => lo.clone(),
            _ => target.to_vec(),
        };
        let past_upper = self.upper.as_ref().is_some_and(|up| t.cmp_plain(&key, up) != Ordering::Less);
        if !past_upper {
            // RocksDB's Seek: `target | timestamp_ub_` at the snapshot.
            let mut scratch = std::mem::take(&mut self.scratch);
            TsMode::seek_key(
                &mut scratch,
                &key,
                &t.read_ts,
                self.sequence,
                crate::key::VALUE_TYPE_FOR_LOOKUP,
            );
            self.inner.seek(&scratch);
            self.scratch = scratch;
        }
        self.ts_put(t);
        if self.prefix_extractor.is_some() {
            self.set_prefix_from(false, Some(&key));
        }
        if !past_upper {
            self.ts_forward_load();
        }
    }

    fn ts_seek_for_prev(&mut self, target: &[u8]) {
        self.reset(Direction::Reverse);
        self.ts_clear();
        self.set_prefix_from(false, Some(target));
        let t = match self.ts_take() {
            Ok(t) => t,
            Err(e) => return self.fail(e),
        };
        if self.range_conv.is_some() {
            // RocksDB's `SetSavedKeyToSeekForPrevTarget`: `target | min ts`, or
            // `upper | max ts` when the target is at or past the bound.
            let end = match &self.upper {
                Some(up) if t.cmp_plain(target, up) != Ordering::Less => {
                    [&up[..], &vec![0xffu8; t.ts_sz]].concat()
                }
                _ => [target, &vec![0u8; t.ts_sz]].concat(),
            };
            self.set_reverse_end(Some(&end));
        }
        if self.lower.as_ref().is_some_and(|lo| t.cmp_plain(target, lo) == Ordering::Less) {
            return self.ts_put(t);
        }
        let past_upper = self.upper.as_ref().is_some_and(|up| t.cmp_plain(target, up) != Ordering::Less);
        if past_upper {
            self.ts_put(t);
            self.ts_position_before_upper();
        } else {
            // The last possible internal key of `target`: the smallest timestamp, sequence 0.
            let min_ts = vec![0u8; t.ts_sz];
            let mut scratch = std::mem::take(&mut self.scratch);
            TsMode::seek_key(&mut scratch, target, &min_ts, 0, ValueType::Deletion);
            self.inner.seek_for_prev(&scratch);
            self.scratch = scratch;
            self.ts_put(t);
        }
        self.ts_forward_or_back(false);
    }

    fn ts_next(&mut self) {
        let Some(t) = self.ts.as_deref_mut() else { return };
        if t.pos + 1 < t.yields.len() {
            t.pos += 1;
            return;
        }
        if self.direction == Direction::Reverse {
            // The inner iterator is before the current key's entries: past them.
            let key = match t.current() {
                Some(c) => t.strip(user_key(&c.ikey)).to_vec(),
                None => return self.set_invalid(),
            };
            self.direction = Direction::Forward;
            self.ts_position_after_key(&key);
        }
        self.ts_forward_load();
    }

    fn ts_prev(&mut self) {
        let Some(t) = self.ts.as_deref_mut() else { return };
        if t.pos > 0 {
            t.pos -= 1;
            return;
        }
        if self.range_conv.is_some() {
            // The key above a run the step may track: the current version's user key
            // (RocksDB's `range_tomb_end_key_`, with its timestamp).
            let current = t.current().map(|c| user_key(&c.ikey).to_vec());
            self.set_reverse_end(current.as_deref());
        }
        let Some(t) = self.ts.as_deref_mut() else { return };
        if self.direction == Direction::Forward {
            // The inner iterator is past the current key's entries: before them.
            let key = match t.current() {
                Some(c) => t.strip(user_key(&c.ikey)).to_vec(),
                None => return self.set_invalid(),
            };
            self.direction = Direction::Reverse;
            self.ts_position_before_key(&key);
        }
        self.ts_forward_or_back(false);
    }

    /// Puts the inner iterator on the first entry whose key (without timestamp) is above `key`.
    fn ts_position_after_key(&mut self, key: &[u8]) {
        let Some(t) = self.ts.as_deref() else { return };
        let max_ts = vec![0xffu8; t.ts_sz];
        let mut scratch = std::mem::take(&mut self.scratch);
        TsMode::seek_key(&mut scratch, key, &max_ts, MAX_SEQUENCE_NUMBER, crate::key::VALUE_TYPE_FOR_LOOKUP);
        self.inner.seek(&scratch);
        self.scratch = scratch;
        while self.inner.valid()
            && t.ucmp.compare_without_timestamp(user_key(self.inner.key()), true, key, false)
                != Ordering::Greater
        {
            self.inner.next();
        }
    }

    /// Puts the inner iterator on the last entry whose key (without timestamp) is below `key`.
    fn ts_position_before_key(&mut self, key: &[u8]) {
        let Some(t) = self.ts.as_deref() else { return };
        let max_ts = vec![0xffu8; t.ts_sz];
        let mut scratch = std::mem::take(&mut self.scratch);
        TsMode::seek_key(&mut scratch, key, &max_ts, MAX_SEQUENCE_NUMBER, crate::key::VALUE_TYPE_FOR_LOOKUP);
        self.inner.seek_for_prev(&scratch);
        self.scratch = scratch;
        while self.inner.valid()
            && t.ucmp.compare_without_timestamp(user_key(self.inner.key()), true, key, false)
                != Ordering::Less
        {
            self.inner.prev();
        }
    }

    fn ts_position_before_upper(&mut self) {
        if let Some(upper) = self.upper.take() {
            self.ts_position_before_key(&upper);
            self.upper = Some(upper);
        }
    }

    /// Forward from the inner position: loads the next key that yields something.
    fn ts_forward_load(&mut self) {
        self.ts_forward_or_back(true);
    }

    /// From the inner position, loads the next key (forward) or the previous one that
    /// yields something, making its first (forward) or last version current.
    fn ts_forward_or_back(&mut self, forward: bool) {
        self.skipped = 0;
        let mut t = match self.ts_take() {
            Ok(t) => t,
            Err(e) => return self.fail(e),
        };
        let r = self.ts_load(&mut t, forward);
        self.ts_put(t);
        match r {
            Ok(true) => self.valid = true,
            Ok(false) => self.set_invalid(),
            Err(e) => self.fail(e),
        }
    }

    fn ts_load(&mut self, t: &mut TsMode, forward: bool) -> Result<bool> {
        t.yields.clear();
        t.pos = 0;
        if forward {
            if let Some(rc) = self.range_conv.as_deref_mut() {
                rc.count = 0;
            }
        }
        loop {
            if !self.inner.valid() {
                self.inner.status()?;
                self.ts_end_run(forward);
                return Ok(false);
            }
            let key = t.strip(parse_internal_key(self.inner.key())?.user_key).to_vec();
            if forward {
                if self.upper.as_ref().is_some_and(|up| t.cmp_plain(&key, up) != Ordering::Less) {
                    self.ts_end_run(forward);
                    return Ok(false);
                }
            } else if self.lower.as_ref().is_some_and(|lo| t.cmp_plain(&key, lo) == Ordering::Less) {
                self.ts_end_run(forward);
                return Ok(false);
            }
            if !self.prefix_ok(&key) {
                self.ts_end_run(forward);
                return Ok(false);
            }
            self.ts_collect(t, &key, forward)?;
            self.ts_resolve(t)?;
            if self.range_conv.is_some() {
                self.ts_track(t, forward);
            }
            if !t.yields.is_empty() {
                t.pos = if forward { 0 } else { t.yields.len() - 1 };
                return Ok(true);
            }
            if self.skip_limit_exceeded() {
                return Err(Error::new(
                    crate::error::ErrorKind::Incomplete,
                    "Too many internal keys skipped.",
                ));
            }
        }
    }

    /// `key | ts` with every timestamp byte `fill` (the mode's timestamp size).
    fn ts_with(&self, key: &[u8], fill: u8) -> Vec<u8> {
        let n = self.ts.as_deref().map_or(0, |t| t.ts_sz);
        let mut v = Vec::with_capacity(key.len() + n);
        v.extend_from_slice(key);
        v.resize(key.len() + n, fill);
        v
    }

    /// Range conversion (see [`RangeConv`]) for the key just collected and resolved, as
    /// RocksDB's DBIter sees it with timestamps (read at the maximum timestamp, no
    /// `iter_start_ts`: every version at or below the snapshot is visible). Its newest
    /// visible entry decides: a live one (yielded) ends the run there, at its user key with
    /// its timestamp; a point tombstone extends it with that key (forward: the run's first
    /// and last, backward: its lowest). Forward, a key with no visible entry moves the
    /// run's last key to its first entry's (RocksDB's `saved_key_`).
    #[cold]
    fn ts_track(&mut self, t: &TsMode, forward: bool) {
        let newest = t.entries.iter().find(|e| e.seq <= self.sequence);
        let live = !t.yields.is_empty();
        if forward {
            let Some(rc) = self.range_conv.as_deref_mut() else { return };
            match newest {
                Some(e) if live => {
                    rc.flush(&self.icmp, self.sequence, self.stats.as_deref(), Some(user_key(&e.ikey)))
                }
                Some(e) if matches!(e.vt, ValueType::Deletion | ValueType::SingleDeletion) => {
                    rc.track(user_key(&e.ikey))
                }
                Some(_) => {}
                None => {
                    if let Some(first) = t.entries.first() {
                        rc.newer_key(&self.icmp, user_key(&first.ikey));
                    }
                }
            }
        } else if live {
            self.flush_reverse_run();
        } else if let Some(e) =
            newest.filter(|e| matches!(e.vt, ValueType::Deletion | ValueType::SingleDeletion))
        {
            if let Some(rc) = self.range_conv.as_deref_mut() {
                if rc.end.is_some() {
                    rc.track_reverse(user_key(&e.ikey));
                }
            }
        }
    }

    /// A step that found nothing more (a bound, the prefix's end, the data's end) ends the
    /// pending run: forward at its last key, backward at the key above it.
    fn ts_end_run(&mut self, forward: bool) {
        if self.range_conv.is_none() || self.inner.status().is_err() {
            return;
        }
        if forward {
            if let Some(rc) = self.range_conv.as_deref_mut() {
                rc.flush(&self.icmp, self.sequence, self.stats.as_deref(), None);
            }
        } else {
            self.flush_reverse_run();
        }
    }

    /// Reads every entry of `key` (without timestamp) from the inner position, forward or
    /// backward, into `t.entries` newest first, leaving out range-deletion entries and
    /// entries covered by a range tombstone visible at the snapshot and read timestamp.
    fn ts_collect(&mut self, t: &mut TsMode, key: &[u8], forward: bool) -> Result<()> {
        t.entries.clear();
        while self.inner.valid() {
            let p = parse_internal_key(self.inner.key())?;
            if t.ucmp.compare_without_timestamp(p.user_key, true, key, false) != Ordering::Equal {
                break;
            }
            let covered = !self.tombstones.is_empty()
                && self.tombstones.max_covering_seq_at(p.user_key, self.sequence, &t.read_ts) > p.sequence;
            if p.value_type == ValueType::RangeDeletion || covered {
                self.skipped += 1;
            } else {
                t.entries.push(TsRaw {
                    ikey: self.inner.key().to_vec(),
                    value: self.inner.value().to_vec(),
                    seq: p.sequence,
                    vt: p.value_type,
                });
            }
            if forward {
                self.inner.next();
            } else {
                self.inner.prev();
            }
        }
        self.inner.status()?;
        if !forward {
            t.entries.reverse();
        }
        Ok(())
    }

    /// Turns `t.entries` (one key, newest first) into the versions it yields.
    fn ts_resolve(&mut self, t: &mut TsMode) -> Result<()> {
        let n = t.entries.len();
        let all = t.start_ts.is_some();
        let mut last_ts: Option<usize> = None;
        for i in 0..n {
            let e = &t.entries[i];
            let uk = user_key(&e.ikey);
            let visible = e.seq <= self.sequence && t.ts_visible(t.ts_of(uk));
            if !visible {
                if e.seq > self.sequence {
                    perf::count(Field::InternalRecentSkippedCount, 1);
                }
                self.skipped += 1;
                continue;
            }
            if all {
                // The newest sequence of each timestamp.
                if let Some(j) = last_ts {
                    let prev = user_key(&t.entries[j].ikey);
                    if t.ucmp.compare_timestamp(t.ts_of(prev), t.ts_of(uk)) == Ordering::Equal {
                        self.skipped += 1;
                        continue;
                    }
                }
                last_ts = Some(i);
            }
            let y = match e.vt {
                ValueType::Deletion | ValueType::SingleDeletion => {
                    perf::count(Field::InternalDeleteSkippedCount, 1);
                    if all {
                        Some(TsYield { ikey: e.ikey.clone(), value: Vec::new(), entity: None })
                    } else {
                        None
                    }
                }
                ValueType::Merge => Some(self.ts_merge_from(t, i)?),
                ValueType::Value | ValueType::BlobIndex | ValueType::WideColumnEntity => {
                    let (value, entity) = self.ts_base(uk, e.vt, &e.value)?;
                    Some(TsYield { ikey: e.ikey.clone(), value, entity })
                }
                ValueType::RangeDeletion => None,
            };
            if let Some(y) = y {
                t.yields.push(y);
            } else if !all {
                self.skipped += 1;
            }
            if !all {
                // The newest visible entry decides; the rest are older versions.
                self.skipped += (n - i - 1) as u64;
                break;
            }
        }
        Ok(())
    }

    /// The value (and entity) a stored Value, blob index or entity of `uk` reads as.
    fn ts_base(&self, uk: &[u8], vt: ValueType, raw: &[u8]) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
        match vt {
            ValueType::BlobIndex => Ok((self.fetch_blob(uk, raw)?, None)),
            ValueType::WideColumnEntity => {
                let e = self.resolve_entity(uk, raw)?;
                Ok((crate::wide_columns::default_column_value(&e)?.to_vec(), Some(e)))
            }
            _ => Ok((raw.to_vec(), None)),
        }
    }

    /// The merge of entry `i` (a merge operand) with the entries below it, down to a base
    /// or a deletion (RocksDB's `MergeValuesNewToOld`, which asks no visibility below the
    /// first operand).
    fn ts_merge_from(&mut self, t: &TsMode, i: usize) -> Result<TsYield> {
        let first = &t.entries[i];
        perf::count(Field::InternalMergeCount, 1);
        let mut operands = vec![first.value.clone()];
        let mut base: Option<(Vec<u8>, Option<Vec<u8>>)> = None;
        for e in &t.entries[i + 1..] {
            match e.vt {
                ValueType::Merge => {
                    perf::count(Field::InternalMergeCount, 1);
                    operands.push(e.value.clone());
                }
                ValueType::Deletion | ValueType::SingleDeletion => break,
                ValueType::RangeDeletion => {}
                ValueType::Value | ValueType::BlobIndex | ValueType::WideColumnEntity => {
                    base = Some(self.ts_base(user_key(&e.ikey), e.vt, &e.value)?);
                    break;
                }
            }
        }
        operands.reverse();
        self.saved_key.clear();
        self.saved_key.extend_from_slice(user_key(&first.ikey));
        let (base_value, base_entity) = match base {
            Some((v, e)) => (Some(v), e),
            None => (None, None),
        };
        let value = self.full_merge(base_value.as_deref(), operands)?;
        let entity = match base_entity {
            Some(e) => Some(crate::wide_columns::with_default_column(&e, &value)?),
            None => None,
        };
        Ok(TsYield { ikey: first.ikey.clone(), value, entity })
    }
}
#[cfg(test)]
#[path = "db_iter_tests.rs"]
mod tests;
