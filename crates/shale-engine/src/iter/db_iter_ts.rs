//! `DBIter` over a column family with user-defined timestamps (docs/timestamps.md).
//!
//! ```text
//! inner (user key = key | ts, ordered key ascending, ts descending, then seq descending):
//!   a|5@9 Value   a|3@7 Del   a|1@2 Value   b|4@8 Value   b|2@3 Value
//! read ts 4            =>  (a hidden: a|3 Del is its newest version <= 4)   b -> b|4
//! read ts 2            =>  a -> a|1   b -> b|2
//! read ts 5, start ts 2 =>  a|5@9  a|3@7 (Del)  b|4@8  b|2@3   (every version, as internal keys)
//! ```
//! An entry is visible when its sequence is at or below the snapshot and its timestamp at
//! or below the read timestamp (and, with `iter_start_ts`, at or above that). Without
//! `iter_start_ts`, per key (compared without timestamps) the newest visible entry decides
//! as in RocksDB's `DBIter`: a Value is yielded, with `key()` the key without its timestamp
//! and `timestamp()` the version's; a deletion hides the key. With `iter_start_ts` every
//! visible entry is yielded, deletions included (empty value), and `key()` is the whole
//! internal key, as RocksDB's. Bounds are keys without timestamps. Merge operands and
//! range tombstones are not built for timestamps: meeting one fails with NotSupported.
//!
//! Forward, the inner iterator sits on the current entry. Backward, it sits before every
//! entry of the current key (or, with `iter_start_ts`, before the current entry).

use std::cmp::Ordering;

use super::DBIter;
use crate::comparator::ComparatorRef;
use crate::key::{
    append_internal_key, parse_internal_key, ParsedInternalKey, ValueType, MAX_SEQUENCE_NUMBER,
    VALUE_TYPE_FOR_SEEK,
};

/// The timestamp side of a `DBIter` (None in families without timestamps).
pub struct TsView {
    ucmp: ComparatorRef,
    ts_sz: usize,
    read_ts: Vec<u8>,
    start_ts: Option<Vec<u8>>,
    /// The current entry's internal key and value.
    cur_key: Vec<u8>,
    cur_value: Vec<u8>,
}

impl TsView {
    pub fn new(ucmp: ComparatorRef, read_ts: Vec<u8>, start_ts: Option<Vec<u8>>) -> TsView {
        let ts_sz = ucmp.timestamp_size();
        TsView { ucmp, ts_sz, read_ts, start_ts, cur_key: Vec::new(), cur_value: Vec::new() }
    }

    /// The key proper of a user key.
    #[inline]
    fn strip<'a>(&self, uk: &'a [u8]) -> &'a [u8] {
        &uk[..uk.len().saturating_sub(self.ts_sz)]
    }

    #[inline]
    fn ts_of<'a>(&self, uk: &'a [u8]) -> &'a [u8] {
        &uk[uk.len().saturating_sub(self.ts_sz)..]
    }

    /// Two user keys (with timestamps) equal without them.
    #[inline]
    fn same_key(&self, a: &[u8], b: &[u8]) -> bool {
        self.ucmp.compare_without_timestamp(a, true, b, true) == Ordering::Equal
    }

    /// A user key (with timestamp) against a bound (without).
    #[inline]
    fn cmp_bound(&self, uk: &[u8], bound: &[u8]) -> Ordering {
        self.ucmp.compare_without_timestamp(uk, true, bound, false)
    }

    fn visible_ts(&self, ts: &[u8]) -> bool {
        self.ucmp.compare_timestamp(ts, &self.read_ts) != Ordering::Greater
            && self.start_ts.as_ref().is_none_or(|lo| self.ucmp.compare_timestamp(ts, lo) != Ordering::Less)
    }

    /// `key | ts | seq/type` in `dst`. The seek type is `DELETION_WITH_TIMESTAMP`, the
    /// highest type a family with timestamps stores (RocksDB writes its deletions so).
    fn seek_key(dst: &mut Vec<u8>, key: &[u8], ts: &[u8], seq: u64, t: ValueType) {
        dst.clear();
        let mut uk = Vec::with_capacity(key.len() + ts.len());
        uk.extend_from_slice(key);
        uk.extend_from_slice(ts);
        append_internal_key(dst, &uk, seq, t);
        if t == VALUE_TYPE_FOR_SEEK {
            let n = dst.len();
            dst[n - 8] = crate::key::DELETION_WITH_TIMESTAMP;
        }
    }

    fn all_versions(&self) -> bool {
        self.start_ts.is_some()
    }
}

/// What a backward walk over one key found.
enum Back {
    /// A visible entry to yield (in `cur_key` / `cur_value`).
    Found,
    /// The key is hidden; continue with the previous one.
    Hidden,
    /// Below the lower bound or out of entries.
    End,
}

impl DBIter {
    /// Reads the family's timestamps: `read_ts` bounds every read, `start_ts` makes the
    /// iterator return every version (see the module comment).
    pub fn set_timestamps(&mut self, ucmp: ComparatorRef, read_ts: Vec<u8>, start_ts: Option<Vec<u8>>) {
        self.ts = Some(Box::new(TsView::new(ucmp, read_ts, start_ts)));
    }

    /// The current entry's timestamp (families with timestamps), empty otherwise.
    pub fn timestamp(&self) -> &[u8] {
        match &self.ts {
            Some(t) => {
                let uk = crate::key::user_key(&t.cur_key);
                t.ts_of(uk)
            }
            None => &[],
        }
    }

    pub(super) fn ts_key(&self) -> &[u8] {
        let Some(t) = &self.ts else { return &[] };
        if t.all_versions() {
            &t.cur_key
        } else {
            t.strip(crate::key::user_key(&t.cur_key))
        }
    }

    pub(super) fn ts_value(&self) -> &[u8] {
        self.ts.as_ref().map_or(&[][..], |t| &t.cur_value)
    }

    fn ts_view(&self) -> &TsView {
        // Only called in timestamp mode.
        self.ts.as_deref().unwrap_or_else(|| unreachable!("timestamp mode without a TsView"))
    }

    fn ts_check_tombstones(&mut self) -> bool {
        if self.tombstones.is_empty() {
            return true;
        }
        self.fail(crate::iter::ts_unsupported("range deletions"));
        false
    }

    pub(super) fn ts_seek_to_first(&mut self) {
        if let Some(lower) = self.lower.clone() {
            return self.ts_seek(&lower);
        }
        self.reset(super::Direction::Forward);
        if !self.ts_check_tombstones() {
            return;
        }
        self.inner.seek_to_first();
        self.ts_find_next(None);
    }

    pub(super) fn ts_seek(&mut self, target: &[u8]) {
        self.reset(super::Direction::Forward);
        if !self.ts_check_tombstones() {
            return;
        }
        let t = match &self.lower {
            Some(lo) if self.ts_view().ucmp.compare_without_timestamp(target, false, lo, false).is_lt() => {
                lo.clone()
            }
            _ => target.to_vec(),
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        TsView::seek_key(&mut scratch, &t, &self.ts_view().read_ts, self.sequence, VALUE_TYPE_FOR_SEEK);
        self.inner.seek(&scratch);
        self.scratch = scratch;
        self.ts_find_next(None);
    }

    pub(super) fn ts_seek_to_last(&mut self) {
        self.reset(super::Direction::Reverse);
        if !self.ts_check_tombstones() {
            return;
        }
        if self.upper.is_some() {
            self.ts_position_before_upper();
        } else {
            self.inner.seek_to_last();
        }
        self.ts_prev_entry();
    }

    pub(super) fn ts_seek_for_prev(&mut self, target: &[u8]) {
        self.reset(super::Direction::Reverse);
        if !self.ts_check_tombstones() {
            return;
        }
        let t = self.ts_view();
        if let Some(lo) = &self.lower {
            if t.ucmp.compare_without_timestamp(target, false, lo, false).is_lt() {
                return;
            }
        }
        let past_upper = self
            .upper
            .as_ref()
            .is_some_and(|up| t.ucmp.compare_without_timestamp(target, false, up, false) != Ordering::Less);
        if past_upper {
            self.ts_position_before_upper();
        } else {
            // The last possible internal key of `target`: the smallest timestamp, sequence 0.
            let min_ts = vec![0u8; t.ts_sz];
            let mut scratch = std::mem::take(&mut self.scratch);
            TsView::seek_key(&mut scratch, target, &min_ts, 0, ValueType::Deletion);
            self.inner.seek_for_prev(&scratch);
            self.scratch = scratch;
        }
        self.ts_prev_entry();
    }

    pub(super) fn ts_next(&mut self) {
        let all = self.ts_view().all_versions();
        let cur_uk = crate::key::user_key(&self.ts_view().cur_key).to_vec();
        if self.direction == super::Direction::Reverse {
            self.direction = super::Direction::Forward;
            // Back onto the current entry (all versions) or past the current key.
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            scratch.extend_from_slice(&self.ts_view().cur_key);
            self.inner.seek(&scratch);
            self.scratch = scratch;
            if all {
                if self.inner.valid() {
                    self.inner.next();
                }
                return self.ts_find_next(None);
            }
            return self.ts_find_next(Some(cur_uk));
        }
        if self.inner.valid() {
            self.inner.next();
        }
        if all {
            self.ts_find_next(None)
        } else {
            self.ts_find_next(Some(cur_uk))
        }
    }

    pub(super) fn ts_prev(&mut self) {
        if self.direction == super::Direction::Forward {
            self.direction = super::Direction::Reverse;
            let all = self.ts_view().all_versions();
            let cur = self.ts_view().cur_key.clone();
            if all {
                // Just before the current entry.
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                scratch.extend_from_slice(&cur);
                self.inner.seek(&scratch);
                self.scratch = scratch;
                if self.inner.valid() {
                    self.inner.prev();
                } else {
                    self.inner.seek_to_last();
                }
            } else {
                self.ts_position_before_key(crate::key::user_key(&cur));
            }
        }
        self.ts_prev_entry();
    }

    /// Puts the inner iterator on the last entry whose key is below `uk`'s key.
    fn ts_position_before_key(&mut self, uk: &[u8]) {
        let t = self.ts_view();
        let key = t.strip(uk).to_vec();
        let max_ts = vec![0xffu8; t.ts_sz];
        let mut scratch = std::mem::take(&mut self.scratch);
        TsView::seek_key(&mut scratch, &key, &max_ts, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
        self.inner.seek_for_prev(&scratch);
        self.scratch = scratch;
        while self.inner.valid() {
            let t = self.ts_view();
            let k = crate::key::user_key(self.inner.key());
            if t.ucmp.compare_without_timestamp(k, true, &key, false) == Ordering::Less {
                break;
            }
            self.inner.prev();
        }
    }

    /// Puts the inner iterator on the last entry whose key is below the upper bound.
    fn ts_position_before_upper(&mut self) {
        let Some(upper) = self.upper.clone() else { return };
        let t = self.ts_view();
        let max_ts = vec![0xffu8; t.ts_sz];
        let mut scratch = std::mem::take(&mut self.scratch);
        TsView::seek_key(&mut scratch, &upper, &max_ts, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK);
        self.inner.seek_for_prev(&scratch);
        self.scratch = scratch;
        while self.inner.valid() {
            let k = crate::key::user_key(self.inner.key());
            if self.ts_view().cmp_bound(k, &upper) == Ordering::Less {
                break;
            }
            self.inner.prev();
        }
    }

    /// Counts an entry passed over; false (and the iterator failed) past the limit.
    fn ts_skip_one(&mut self) -> bool {
        self.skipped += 1;
        if self.skip_limit_exceeded() {
            self.fail_skipped();
            return false;
        }
        true
    }

    /// Moving forward from the inner position, stops on the first entry to yield. With
    /// `skip`, entries of that key (compared without timestamps) are passed over.
    fn ts_find_next(&mut self, mut skip: Option<Vec<u8>>) {
        self.skipped = 0;
        while self.inner.valid() {
            let p = match parse_internal_key(self.inner.key()) {
                Ok(p) => p,
                Err(e) => return self.fail(e),
            };
            let t = self.ts_view();
            if let Some(up) = &self.upper {
                if t.cmp_bound(p.user_key, up) != Ordering::Less {
                    break;
                }
            }
            let skipping = skip.as_deref().is_some_and(|s| t.same_key(p.user_key, s));
            if skipping || !self.ts_visible(&p) {
                if !self.ts_skip_one() {
                    return;
                }
                self.inner.next();
                continue;
            }
            match p.value_type {
                ValueType::RangeDeletion => {}
                ValueType::Merge => return self.fail(crate::iter::ts_unsupported("merge operands")),
                ValueType::BlobIndex => return self.fail(crate::iter::ts_unsupported("blob values")),
                ValueType::WideColumnEntity => {
                    return self.fail(crate::iter::ts_unsupported("wide-column entities"))
                }
                ValueType::Value => return self.ts_set_current(),
                ValueType::Deletion | ValueType::SingleDeletion => {
                    if t.all_versions() {
                        return self.ts_set_current();
                    }
                    skip = Some(p.user_key.to_vec());
                    if !self.ts_skip_one() {
                        return;
                    }
                }
            }
            self.inner.next();
        }
        if let Err(e) = self.inner.status() {
            return self.fail(e);
        }
        self.valid = false;
    }

    #[inline]
    fn ts_visible(&self, p: &ParsedInternalKey<'_>) -> bool {
        let t = self.ts_view();
        p.sequence <= self.sequence && t.visible_ts(t.ts_of(p.user_key))
    }

    /// The inner entry becomes the current one (a Value, or any entry with all versions).
    fn ts_set_current(&mut self) {
        let (k, v) = (self.inner.key().to_vec(), self.inner.value().to_vec());
        if let Some(t) = self.ts.as_deref_mut() {
            t.cur_key = k;
            t.cur_value = v;
        }
        self.valid = true;
    }

    /// Moving backward from the inner position, finds the previous entry to yield and
    /// leaves the inner iterator before it (before its key's entries, for one version).
    fn ts_prev_entry(&mut self) {
        self.skipped = 0;
        loop {
            match self.ts_back_one_key() {
                Ok(Back::Found) => {
                    self.valid = true;
                    return;
                }
                Ok(Back::Hidden) => {
                    if self.skip_limit_exceeded() {
                        return self.fail_skipped();
                    }
                }
                Ok(Back::End) => break,
                Err(e) => return self.fail(e),
            }
        }
        self.set_invalid();
    }

    /// From the inner position (the oldest entry of a key), walks back: with all versions,
    /// to the first visible entry; otherwise over every entry of the key, keeping the
    /// newest visible one.
    fn ts_back_one_key(&mut self) -> crate::error::Result<Back> {
        if !self.inner.valid() {
            self.inner.status()?;
            return Ok(Back::End);
        }
        let first = parse_internal_key(self.inner.key())?;
        let key = first.user_key.to_vec();
        if let Some(lo) = &self.lower {
            if self.ts_view().cmp_bound(&key, lo) == Ordering::Less {
                return Ok(Back::End);
            }
        }
        let all = self.ts_view().all_versions();
        let mut best: Option<(Vec<u8>, Vec<u8>, ValueType)> = None;
        while self.inner.valid() {
            let p = parse_internal_key(self.inner.key())?;
            if !self.ts_view().same_key(p.user_key, &key) {
                break;
            }
            if self.ts_visible(&p) && p.value_type != ValueType::RangeDeletion {
                if p.value_type == ValueType::Merge {
                    return Err(crate::iter::ts_unsupported("merge operands"));
                }
                best = Some((self.inner.key().to_vec(), self.inner.value().to_vec(), p.value_type));
                if all {
                    self.inner.prev();
                    break;
                }
            } else {
                self.skipped += 1;
            }
            self.inner.prev();
        }
        self.inner.status()?;
        match best {
            Some((k, v, t)) if all || t == ValueType::Value => {
                if let Some(view) = self.ts.as_deref_mut() {
                    view.cur_key = k;
                    view.cur_value = v;
                }
                Ok(Back::Found)
            }
            Some(_) => {
                self.skipped += 1;
                Ok(Back::Hidden)
            }
            None => Ok(Back::Hidden),
        }
    }
}
