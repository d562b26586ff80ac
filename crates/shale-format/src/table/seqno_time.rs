//! RocksDB's sequence-number-to-time mapping (`db/seqno_to_time_mapping.*`): sampled pairs
//! (seqno, unix seconds) saying roughly when each sequence number was written, kept by the
//! database while a family has `preserve_internal_time_seconds` (or
//! `preclude_last_level_data_seconds`) set, and stored in each table's property
//! `rocksdb.seqno.time.map` for the table's sequence range.
//!
//! ```text
//! rocksdb.seqno.time.map : count varint64 | pair * count          (empty: no property)
//! pair                   : seqno delta varint64 | time delta varint64
//!                          each delta from the pair before (the first from (0, 0));
//!                          pairs sorted, seqnos and times strictly increasing
//! ```
//!
//! A pair (s, t) says: sequence number s was written no later than time t, and every
//! sequence number after s at or after t. So the time "before" seqno x is the time of the
//! last pair whose seqno is below x, and the seqno "before" time t the seqno of the last pair
//! whose time is at most t.
//!
//! "Enforced" (sorted, merged, within the capacity and the time span) is the normal state;
//! decoding or copying into a non-empty or limited mapping leaves it unenforced until
//! `enforce` (as RocksDB's).

use std::collections::{BinaryHeap, VecDeque};

use crate::coding::{decode_varint64, put_varint64};
use crate::error::{Error, Result};

/// RocksDB's `kMaxSeqnoTimePairsPerSST`.
pub const MAX_PAIRS_PER_SST: u64 = 100;
/// RocksDB's `kMaxSeqnoTimePairsPerCF`.
pub const MAX_PAIRS_PER_CF: u64 = 100;
/// RocksDB's `kMaxSeqnoToTimeEntries`.
pub const MAX_ENTRIES: u64 = MAX_PAIRS_PER_CF * 10;

/// One sample: `seqno` was written at or before `time` (unix seconds).
#[derive(Debug, Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct SeqnoTimePair {
    pub seqno: u64,
    pub time: u64,
}

impl SeqnoTimePair {
    /// RocksDB's `SeqnoTimePair::Merge`: folds `other` (not below in seqno) into this pair
    /// when one of them says nothing the other does not; false leaves both.
    fn merge(&mut self, other: SeqnoTimePair) -> bool {
        if self.seqno == other.seqno {
            self.time = self.time.min(other.time);
            true
        } else if self.time == other.time {
            self.seqno = self.seqno.max(other.seqno);
            true
        } else if self.time > other.time {
            *self = other;
            true
        } else {
            false
        }
    }
}

/// RocksDB's `SeqnoToTimeMapping`.
#[derive(Debug, Clone)]
pub struct SeqnoToTimeMapping {
    max_time_span: u64,
    capacity: u64,
    pairs: VecDeque<SeqnoTimePair>,
    enforced: bool,
}

impl Default for SeqnoToTimeMapping {
    fn default() -> Self {
        SeqnoToTimeMapping {
            max_time_span: u64::MAX,
            capacity: u64::MAX,
            pairs: VecDeque::new(),
            enforced: true,
        }
    }
}

impl SeqnoToTimeMapping {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn pairs(&self) -> impl Iterator<Item = &SeqnoTimePair> {
        self.pairs.iter()
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    fn limited(&self) -> bool {
        self.max_time_span < u64::MAX || self.capacity < u64::MAX
    }

    /// RocksDB's `SetMaxTimeSpan`: keep one pair at most older than the newest time minus
    /// `span`.
    pub fn set_max_time_span(&mut self, span: u64) -> &mut Self {
        self.max_time_span = span;
        if self.enforced {
            self.enforce_max_time_span(0);
        }
        self
    }

    /// RocksDB's `SetCapacity`.
    pub fn set_capacity(&mut self, capacity: u64) -> &mut Self {
        self.capacity = capacity;
        if self.enforced {
            self.enforce_capacity(true);
        }
        self
    }

    pub fn clear(&mut self) {
        self.pairs.clear();
        self.enforced = true;
    }

    /// RocksDB's `Enforce(now)`: sorted and merged, then the time span (from `now` when not
    /// 0, else from the newest pair) and the capacity.
    pub fn enforce(&mut self, now: u64) -> &mut Self {
        if !self.enforced {
            self.sort_and_merge();
            self.enforce_max_time_span(now);
        } else if now > 0 {
            self.enforce_max_time_span(now);
        }
        self.enforce_capacity(true);
        self
    }

    /// RocksDB's `Append`: a new newest sample; merged into the newest pair when it says
    /// nothing new. A sample older than the newest (a clock going back) is dropped. Returns
    /// whether a pair was added.
    pub fn append(&mut self, seqno: u64, time: u64) -> bool {
        if self.capacity == 0 {
            return false;
        }
        let mut added = false;
        if seqno == 0 {
            // Sequence number 0 says nothing.
        } else if let Some(last) = self.pairs.back_mut() {
            if last.seqno <= seqno {
                // Not merged: both seqno and time are past the newest pair's.
                if !last.merge(SeqnoTimePair { seqno, time }) {
                    self.pairs.push_back(SeqnoTimePair { seqno, time });
                    added = true;
                }
            } else if !self.enforced {
                self.pairs.push_back(SeqnoTimePair { seqno, time });
                added = true;
            }
            // Else a seqno going back in the enforced state: dropped (RocksDB's release
            // build; its debug build asserts).
        } else {
            self.enforced = true;
            self.pairs.push_back(SeqnoTimePair { seqno, time });
            return true;
        }
        if !self.enforced {
            self.sort_and_merge();
        }
        self.enforce_max_time_span(0);
        self.enforce_capacity(false);
        added
    }

    /// RocksDB's `AddUnenforced`.
    pub fn add_unenforced(&mut self, seqno: u64, time: u64) {
        if seqno == 0 {
            return;
        }
        self.enforced = false;
        self.pairs.push_back(SeqnoTimePair { seqno, time });
    }

    /// RocksDB's `PrePopulate`: on an empty mapping, one pair per seqno from `from_seqno` to
    /// `to_seqno`, their times spread evenly from `from_time` to `to_time`.
    pub fn pre_populate(&mut self, from_seqno: u64, to_seqno: u64, from_time: u64, to_time: u64) {
        if !self.pairs.is_empty() || from_seqno == 0 || to_seqno <= from_seqno || to_time < from_time {
            return;
        }
        for i in from_seqno..=to_seqno {
            let t = from_time
                + ((to_time - from_time) as u128 * (i - from_seqno) as u128 / (to_seqno - from_seqno) as u128)
                    as u64;
            self.pairs.push_back(SeqnoTimePair { seqno: i, time: t });
        }
    }

    fn sort_and_merge(&mut self) {
        let mut v: Vec<SeqnoTimePair> = self.pairs.drain(..).collect();
        v.sort();
        let mut out: VecDeque<SeqnoTimePair> = VecDeque::with_capacity(v.len());
        for p in v {
            let merged = out.back_mut().is_some_and(|last| last.merge(p));
            if !merged {
                out.push_back(p);
            }
        }
        self.pairs = out;
        self.enforced = true;
    }

    fn enforce_max_time_span(&mut self, now: u64) {
        if self.pairs.len() <= 1 {
            return;
        }
        let cutoff = if now > 0 {
            if now < self.max_time_span {
                return;
            }
            now - self.max_time_span
        } else {
            let last = self.pairs.back().map_or(0, |p| p.time);
            if last < self.max_time_span {
                return;
            }
            last - self.max_time_span
        };
        while self.pairs.len() >= 2 && self.pairs[0].time <= cutoff && self.pairs[1].time <= cutoff {
            self.pairs.pop_front();
        }
    }

    /// RocksDB's `EnforceCapacity`: over the capacity (by an eighth more when not `strict`),
    /// pairs are dropped, each time the inner one whose removal leaves the smallest time gap
    /// between its neighbours (ties: the lower seqno), down to the capacity.
    fn enforce_capacity(&mut self, strict: bool) {
        let mut cap = self.capacity;
        if cap == 0 {
            self.pairs.clear();
            return;
        }
        if cap == 1 {
            cap = 2;
        }
        let effective = cap.saturating_add(if strict { 0 } else { cap / 8 });
        if self.pairs.len() as u64 <= effective {
            return;
        }
        let mut to_remove = self.pairs.len() - cap as usize;
        // Removed pairs get time 0 (no sample has it: times are after the epoch).
        let mut heap = BinaryHeap::new();
        for i in 1..self.pairs.len() - 1 {
            let gap = self.pairs[i + 1].time.wrapping_sub(self.pairs[i - 1].time);
            heap.push(std::cmp::Reverse((gap, self.pairs[i].seqno, i)));
        }
        while to_remove > 0 {
            let Some(std::cmp::Reverse((gap, seqno, i))) = heap.pop() else { break };
            let after = (i + 1..self.pairs.len()).map(|j| self.pairs[j].time).find(|&t| t != 0).unwrap_or(0);
            let before = (0..i).rev().map(|j| self.pairs[j].time).find(|&t| t != 0).unwrap_or(0);
            let now_gap = after.wrapping_sub(before);
            if gap == now_gap {
                self.pairs[i].time = 0;
                to_remove -= 1;
            } else {
                heap.push(std::cmp::Reverse((now_gap, seqno, i)));
            }
        }
        self.pairs.retain(|p| p.time != 0);
    }

    /// RocksDB's `CopyFromSeqnoRange`: the pairs of `src` (enforced) that answer
    /// `proximal_time_before_seqno` for seqnos `from..=to`: those in the range and the one
    /// before it.
    pub fn copy_from_seqno_range(&mut self, src: &SeqnoToTimeMapping, from: u64, to: u64) {
        let was_empty = self.pairs.is_empty();
        let mut start = src.pairs.partition_point(|p| p.seqno < from);
        let end = if to < from { start } else { src.pairs.partition_point(|p| p.seqno <= to) };
        start = start.saturating_sub(1);
        self.pairs.extend(src.pairs.range(start..end.max(start)).copied());
        if !was_empty || self.limited() {
            self.enforced = false;
        }
    }

    /// RocksDB's `GetProximalTimeBeforeSeqno`: the newest known time at or before `seqno`
    /// was written (0: unknown).
    pub fn proximal_time_before_seqno(&self, seqno: u64) -> u64 {
        let i = self.pairs.partition_point(|p| p.seqno < seqno);
        if i == 0 {
            0
        } else {
            self.pairs[i - 1].time
        }
    }

    /// RocksDB's `GetProximalSeqnoBeforeTime`: the largest seqno written no later than
    /// `time` (0: unknown).
    pub fn proximal_seqno_before_time(&self, time: u64) -> u64 {
        let i = self.pairs.partition_point(|p| p.time <= time);
        if i == 0 {
            0
        } else {
            self.pairs[i - 1].seqno
        }
    }

    /// RocksDB's `GetCurrentTieringCutoffSeqnos`: (the oldest seqno whose time must be kept,
    /// the oldest seqno kept out of the last level); None where the feature is off.
    pub fn tiering_cutoff_seqnos(
        &self,
        now: u64,
        preserve_internal_time_seconds: u64,
        preclude_last_level_data_seconds: u64,
    ) -> (Option<u64>, Option<u64>) {
        let duration = preserve_internal_time_seconds.max(preclude_last_level_data_seconds);
        if duration == 0 {
            return (None, None);
        }
        let preserve = self.proximal_seqno_before_time(now.saturating_sub(duration)) + 1;
        let preclude = (preclude_last_level_data_seconds > 0).then(|| {
            self.proximal_seqno_before_time(now.saturating_sub(preclude_last_level_data_seconds)) + 1
        });
        (Some(preserve), preclude)
    }
    /// The part of this mapping a table holding sequence numbers `smallest..=largest`
    /// stores, encoded, as RocksDB's flush and compaction outputs: the pairs of the range and
    /// the one before it, at most [`MAX_PAIRS_PER_SST`] (`now`: the time span's reference,
    /// None for the newest pair). Empty when the mapping holds nothing for the range.
    pub fn encode_for_table(&self, smallest: u64, largest: u64, now: Option<u64>) -> Vec<u8> {
        let mut relevant = SeqnoToTimeMapping::new();
        relevant.copy_from_seqno_range(self, smallest, largest);
        relevant.set_capacity(MAX_PAIRS_PER_SST);
        if let Some(now) = now {
            relevant.enforce(now);
        }
        let mut out = Vec::new();
        relevant.encode_to(&mut out);
        out
    }

    /// RocksDB's `EncodeTo` (the mapping must be enforced; empty: nothing).
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        if self.pairs.is_empty() {
            return;
        }
        put_varint64(dst, self.pairs.len() as u64);
        let mut base = SeqnoTimePair::default();
        for p in &self.pairs {
            put_varint64(dst, p.seqno.wrapping_sub(base.seqno));
            put_varint64(dst, p.time.wrapping_sub(base.time));
            base = *p;
        }
    }

    /// RocksDB's `DecodeFrom`: adds the pairs of an encoded mapping (nothing is added on
    /// error). Into a non-empty or limited mapping it leaves the mapping unenforced.
    pub fn decode_from(&mut self, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        let mut input = src;
        let mut next = |what: &str| -> Result<u64> {
            let (v, n) = decode_varint64(input).ok_or_else(|| Error::corruption(what.to_string()))?;
            input = &input[n..];
            Ok(v)
        };
        let count = next("Invalid sequence number time size")?;
        let mut base = SeqnoTimePair::default();
        let mut got = Vec::new();
        for _ in 0..count {
            let s = next("Invalid sequence number")?;
            let t = next("Invalid time")?;
            base = SeqnoTimePair { seqno: base.seqno.wrapping_add(s), time: base.time.wrapping_add(t) };
            got.push(base);
        }
        if !input.is_empty() {
            return Err(Error::corruption("Extra bytes at end of sequence number time mapping"));
        }
        let was_empty = self.pairs.is_empty();
        self.pairs.extend(got);
        if !was_empty || self.limited() {
            self.enforced = false;
        }
        Ok(())
    }

    /// RocksDB's `ToHumanString`: `seqno->time,` per pair.
    pub fn to_human_string(&self) -> String {
        self.pairs.iter().map(|p| format!("{}->{},", p.seqno, p.time)).collect()
    }
}

#[cfg(test)]
#[path = "seqno_time_tests.rs"]
mod tests;
