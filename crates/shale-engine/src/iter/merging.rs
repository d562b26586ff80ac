//! A merging iterator: one sorted cursor over several sorted child cursors (memtables,
//! level-0 files, deeper levels).
//!
//! Children are kept in a binary heap of child indices ordered by their current keys: a
//! min-heap while moving forward, a max-heap while moving backward. The heap top is the
//! current entry. Changing direction repositions every other child around the current key
//! (forward -> backward: each other child goes to its last entry < key; backward -> forward:
//! to its first entry > key), then rebuilds the heap in the new order.
//!
//! A child that stops on an error (a damaged block) ends the whole iteration, as in
//! RocksDB: going on with the other children would surface entries the failed child
//! shadows (older values, deleted keys).

use std::cmp::Ordering;

use crate::error::Result;
use crate::iter::{BoxedIterator, InternalIterator};
use crate::key::InternalKeyComparator;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// A cursor over the union of its children, in internal-key order.
pub struct MergingIterator {
    icmp: InternalKeyComparator,
    children: Vec<BoxedIterator>,
    /// Indices of the valid children, heap-ordered by key for `direction`.
    heap: Vec<usize>,
    direction: Direction,
    /// A child stopped on an error since the last positioning: not valid; `status` has it.
    failed: bool,
    /// Reused copy of the current key during a direction switch.
    scratch: Vec<u8>,
    /// Per child (same index): the first 8 bytes of its current user key, zero-padded, as
    /// a big-endian integer, kept up to date for every child in the heap. Only when
    /// `prefix_order` holds; see [`order_prefix`].
    prefixes: Vec<u64>,
    /// The user keys are in plain byte order without timestamps: two children whose
    /// prefixes differ are ordered by them, without reading their keys (RocksDB's
    /// `IteratorWrapper` keeps each child's key at hand for the heap in the same spirit).
    prefix_order: bool,
}

/// The first 8 bytes of `ikey`'s user key (zero-padded when shorter) as a big-endian
/// integer. In byte order, `order_prefix(a) < order_prefix(b)` implies `a`'s user key is
/// below `b`'s: at the first byte where the padded prefixes differ, either both keys have
/// that byte, or the shorter key ends there and is a proper prefix of the other. Equal
/// prefixes decide nothing.
#[inline]
fn order_prefix(ikey: &[u8]) -> u64 {
    let uk = crate::key::user_key(ikey);
    match uk.first_chunk::<8>() {
        Some(c) => u64::from_be_bytes(*c),
        None => {
            let mut b = [0u8; 8];
            b[..uk.len()].copy_from_slice(uk);
            u64::from_be_bytes(b)
        }
    }
}

impl MergingIterator {
    pub fn new(icmp: InternalKeyComparator, children: Vec<BoxedIterator>) -> Self {
        let heap = Vec::with_capacity(children.len());
        let prefixes = vec![0; children.len()];
        let prefix_order = icmp.user_comparator().is_bytewise() && icmp.timestamp_size() == 0;
        MergingIterator {
            icmp,
            children,
            heap,
            direction: Direction::Forward,
            failed: false,
            scratch: Vec::new(),
            prefixes,
            prefix_order,
        }
    }

    fn single(&self) -> bool {
        self.children.len() == 1
    }

    /// True when child `a` belongs above child `b` in the heap: by their cached key
    /// prefixes when those differ, else by their keys.
    #[inline(always)]
    fn above(&self, a: usize, b: usize) -> bool {
        if self.prefix_order {
            let (pa, pb) = (self.prefixes[a], self.prefixes[b]);
            if pa != pb {
                // Counted as the comparison it stands for (perf context).
                crate::perf::count(crate::perf::Field::UserKeyComparisonCount, 1);
                return match self.direction {
                    Direction::Forward => pa < pb,
                    Direction::Reverse => pa > pb,
                };
            }
        }
        self.above_by_keys(a, b)
    }

    /// `above` by the children's keys.
    #[inline(never)]
    fn above_by_keys(&self, a: usize, b: usize) -> bool {
        let o = self.icmp.compare(self.children[a].key(), self.children[b].key());
        match self.direction {
            Direction::Forward => o == Ordering::Less,
            Direction::Reverse => o == Ordering::Greater,
        }
    }

    fn sift_down(&mut self, mut pos: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * pos + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let best = if r < n && self.above(self.heap[r], self.heap[l]) { r } else { l };
            if !self.above(self.heap[best], self.heap[pos]) {
                break;
            }
            self.heap.swap(pos, best);
            pos = best;
        }
    }

    /// Rebuilds the heap from every valid child, for the current direction.
    fn rebuild_heap(&mut self) {
        self.heap.clear();
        self.failed = false;
        for i in 0..self.children.len() {
            if self.children[i].valid() {
                self.note_key(i);
                self.heap.push(i);
            } else if self.children[i].status().is_err() {
                self.failed = true;
            }
        }
        if self.heap.len() > 1 {
            for pos in (0..self.heap.len() / 2).rev() {
                self.sift_down(pos);
            }
        }
    }

    /// Child `i` (valid) moved: its key prefix for the heap's comparisons.
    #[inline]
    fn note_key(&mut self, i: usize) {
        if self.prefix_order {
            self.prefixes[i] = order_prefix(self.children[i].key());
        }
    }

    /// After the top child moved: re-place it, or drop it if it ran out.
    fn fix_top(&mut self) {
        let top = self.heap[0];
        if self.children[top].valid() {
            self.note_key(top);
            self.sift_down(0);
        } else {
            if self.children[top].status().is_err() {
                self.failed = true;
            }
            let last = self.heap.len() - 1;
            self.heap.swap(0, last);
            self.heap.pop();
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
    }

    /// Moves every child but the current one to the first entry after the current key,
    /// then makes the heap a min-heap.
    fn switch_to_forward(&mut self) {
        let cur = self.heap[0];
        let mut key = std::mem::take(&mut self.scratch);
        key.clear();
        key.extend_from_slice(self.children[cur].key());
        for i in 0..self.children.len() {
            if i == cur {
                continue;
            }
            let child = &mut self.children[i];
            child.seek(&key);
            if child.valid() && self.icmp.compare(child.key(), &key) == Ordering::Equal {
                child.next();
            }
        }
        self.scratch = key;
        self.direction = Direction::Forward;
        self.rebuild_heap();
        // The current child holds the smallest key, so it is back on top.
        debug_assert_eq!(self.heap.first().copied(), Some(cur));
    }

    /// Moves every child but the current one to the last entry before the current key,
    /// then makes the heap a max-heap.
    fn switch_to_reverse(&mut self) {
        let cur = self.heap[0];
        let mut key = std::mem::take(&mut self.scratch);
        key.clear();
        key.extend_from_slice(self.children[cur].key());
        for i in 0..self.children.len() {
            if i == cur {
                continue;
            }
            let child = &mut self.children[i];
            child.seek_for_prev(&key);
            if child.valid() && self.icmp.compare(child.key(), &key) == Ordering::Equal {
                child.prev();
            }
        }
        self.scratch = key;
        self.direction = Direction::Reverse;
        self.rebuild_heap();
        debug_assert_eq!(self.heap.first().copied(), Some(cur));
    }

    fn current(&self) -> &BoxedIterator {
        &self.children[self.heap[0]]
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        if self.single() {
            return self.children[0].valid();
        }
        !self.failed && !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.direction = Direction::Forward;
        if !self.single() {
            self.rebuild_heap();
        }
    }

    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.direction = Direction::Reverse;
        if !self.single() {
            self.rebuild_heap();
        }
    }

    fn seek(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek(target);
        }
        self.direction = Direction::Forward;
        if !self.single() {
            self.rebuild_heap();
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek_for_prev(target);
        }
        self.direction = Direction::Reverse;
        if !self.single() {
            self.rebuild_heap();
        }
    }

    fn next(&mut self) {
        if self.single() {
            self.children[0].next();
            return;
        }
        debug_assert!(self.valid());
        if self.heap.is_empty() {
            return;
        }
        if self.direction != Direction::Forward {
            self.switch_to_forward();
        }
        let top = self.heap[0];
        self.children[top].next();
        self.fix_top();
    }

    fn prev(&mut self) {
        if self.single() {
            self.children[0].prev();
            return;
        }
        debug_assert!(self.valid());
        if self.heap.is_empty() {
            return;
        }
        if self.direction != Direction::Reverse {
            self.switch_to_reverse();
        }
        let top = self.heap[0];
        self.children[top].prev();
        self.fix_top();
    }

    fn key(&self) -> &[u8] {
        if self.single() {
            return self.children[0].key();
        }
        self.current().key()
    }

    fn value(&self) -> &[u8] {
        if self.single() {
            return self.children[0].value();
        }
        self.current().value()
    }

    fn status(&self) -> Result<()> {
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }

    /// The current child's answer: the children live as long as this iterator.
    fn value_pinned(&self) -> bool {
        if self.single() {
            return self.children[0].value_pinned();
        }
        self.current().value_pinned()
    }

    fn value_if_pinned(&self) -> Option<&[u8]> {
        if self.single() {
            return self.children[0].value_if_pinned();
        }
        self.current().value_if_pinned()
    }

    fn set_pinned_data(&mut self, pins: &crate::iter::PinRef) {
        for c in &mut self.children {
            c.set_pinned_data(pins);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::{ErrorIterator, VecIterator};
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn ikey(k: u32, seq: u64) -> Vec<u8> {
        make_internal_key(format!("k{k:04}").as_bytes(), seq, ValueType::Value)
    }

    /// A user key for `run_case_with` whose order the heap's 8-byte prefixes decide only in
    /// part: 0 to 12 bytes from {0x00, 0x01, 0x7f, 0xff}, after a common start or not (keys
    /// shorter than 8 bytes, keys that are prefixes of others, equal first 8 bytes).
    fn varied_user_key(rng: &mut SmallRng) -> Vec<u8> {
        const BYTES: [u8; 4] = [0x00, 0x01, 0x7f, 0xff];
        let mut k = if rng.gen_bool(0.5) { b"pre\x00fix".to_vec() } else { Vec::new() };
        k.truncate(rng.gen_range(0..=k.len()));
        for _ in 0..rng.gen_range(0..5) {
            k.push(BYTES[rng.gen_range(0..BYTES.len())]);
        }
        k
    }

    /// Checks the merging iterator against a sorted vector under random operations.
    fn run_case(rng: &mut SmallRng, nchildren: usize, nkeys: usize) {
        run_case_with(rng, nchildren, nkeys, |rng| format!("k{:04}", rng.gen_range(0..62)).into_bytes())
    }

    /// `run_case` with user keys (of entries and seek targets) made by `user_key`.
    fn run_case_with(
        rng: &mut SmallRng,
        nchildren: usize,
        nkeys: usize,
        user_key: impl Fn(&mut SmallRng) -> Vec<u8>,
    ) {
        let ikey = |rng: &mut SmallRng, seq: u64| make_internal_key(&user_key(rng), seq, ValueType::Value);
        let icmp = bytewise_internal_comparator();
        // Unique internal keys spread over the children.
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut per_child: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); nchildren];
        let mut seen = std::collections::HashSet::new();
        for _ in 0..nkeys {
            let seq = rng.gen_range(1..5);
            let k = ikey(rng, seq);
            if !seen.insert(k.clone()) {
                continue;
            }
            let v = format!("v{}", all.len()).into_bytes();
            per_child[rng.gen_range(0..nchildren)].push((k.clone(), v.clone()));
            all.push((k, v));
        }
        all.sort_by(|a, b| icmp.compare(&a.0, &b.0));
        let children: Vec<BoxedIterator> = per_child
            .into_iter()
            .map(|mut c| {
                c.sort_by(|a, b| icmp.compare(&a.0, &b.0));
                Box::new(VecIterator::new(c, icmp.clone())) as BoxedIterator
            })
            .collect();
        let mut it = MergingIterator::new(icmp.clone(), children);
        let mut pos: Option<usize> = None;
        for _ in 0..200 {
            match rng.gen_range(0..10) {
                0 => {
                    it.seek_to_first();
                    pos = if all.is_empty() { None } else { Some(0) };
                }
                1 => {
                    it.seek_to_last();
                    pos = all.len().checked_sub(1);
                }
                2 => {
                    let seq = rng.gen_range(0..6);
                    let t = ikey(rng, seq);
                    it.seek(&t);
                    let p = all.partition_point(|(k, _)| icmp.compare(k, &t).is_lt());
                    pos = (p < all.len()).then_some(p);
                }
                3 => {
                    let seq = rng.gen_range(0..6);
                    let t = ikey(rng, seq);
                    it.seek_for_prev(&t);
                    let p = all.partition_point(|(k, _)| icmp.compare(k, &t).is_le());
                    pos = p.checked_sub(1);
                }
                4..=6 => {
                    if let Some(p) = pos {
                        it.next();
                        pos = (p + 1 < all.len()).then_some(p + 1);
                    }
                }
                _ => {
                    if let Some(p) = pos {
                        it.prev();
                        pos = p.checked_sub(1);
                    }
                }
            }
            assert_eq!(it.valid(), pos.is_some());
            if let Some(p) = pos {
                assert_eq!(it.key(), &all[p].0[..]);
                assert_eq!(it.value(), &all[p].1[..]);
            }
            it.status().unwrap();
        }
    }

    #[test]
    fn matches_sorted_model() {
        let mut rng = SmallRng::seed_from_u64(7);
        for case in 0..600 {
            let nchildren = 1 + case % 7;
            let nkeys = rng.gen_range(0..120);
            run_case(&mut rng, nchildren, nkeys);
        }
    }

    /// Keys of any length and byte (shorter than the heap's 8-byte prefixes, sharing them,
    /// zero bytes where the padding has them): the order is still the comparator's.
    #[test]
    fn matches_sorted_model_with_varied_keys() {
        let mut rng = SmallRng::seed_from_u64(11);
        for case in 0..600 {
            let nchildren = 1 + case % 7;
            let nkeys = rng.gen_range(0..120);
            run_case_with(&mut rng, nchildren, nkeys, varied_user_key);
        }
    }

    #[test]
    fn empty_and_single_child() {
        let icmp = bytewise_internal_comparator();
        let mut it = MergingIterator::new(icmp.clone(), Vec::new());
        it.seek_to_first();
        assert!(!it.valid());
        it.seek_to_last();
        assert!(!it.valid());
        it.status().unwrap();

        let entries = vec![(ikey(1, 1), b"a".to_vec()), (ikey(2, 1), b"b".to_vec())];
        let child = Box::new(VecIterator::new(entries, icmp.clone()));
        let mut it = MergingIterator::new(icmp, vec![child]);
        it.seek_to_last();
        assert_eq!(it.value(), b"b");
        it.prev();
        assert_eq!(it.value(), b"a");
        it.next();
        assert_eq!(it.value(), b"b");
        it.next();
        assert!(!it.valid());
    }

    #[test]
    fn child_error_ends_iteration() {
        let icmp = bytewise_internal_comparator();
        let good = Box::new(VecIterator::new(vec![(ikey(1, 1), b"a".to_vec())], icmp.clone()));
        let failure = crate::Error::corruption("bad block in 000007.sst at offset 10");
        let mut it = MergingIterator::new(icmp.clone(), vec![good, Box::new(ErrorIterator::new(failure))]);
        it.seek_to_first();
        // The failed child may hide entries of the good one: no entry is shown.
        assert!(!it.valid());
        let err = it.status().unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Corruption);
        assert!(err.to_string().contains("000007.sst"), "{err}");
        it.seek_to_last();
        assert!(!it.valid());
        it.seek(&ikey(0, 1));
        assert!(!it.valid());
    }

    /// A child that fails part-way (after `ok` entries).
    struct FailsAfter {
        inner: VecIterator,
        ok: usize,
        steps: usize,
    }
    impl InternalIterator for FailsAfter {
        fn valid(&self) -> bool {
            self.steps < self.ok && self.inner.valid()
        }
        fn seek_to_first(&mut self) {
            self.steps = 0;
            self.inner.seek_to_first();
        }
        fn seek_to_last(&mut self) {
            self.steps = 0;
            self.inner.seek_to_last();
        }
        fn seek(&mut self, t: &[u8]) {
            self.steps = 0;
            self.inner.seek(t);
        }
        fn seek_for_prev(&mut self, t: &[u8]) {
            self.steps = 0;
            self.inner.seek_for_prev(t);
        }
        fn next(&mut self) {
            self.steps += 1;
            self.inner.next();
        }
        fn prev(&mut self) {
            self.steps += 1;
            self.inner.prev();
        }
        fn key(&self) -> &[u8] {
            self.inner.key()
        }
        fn value(&self) -> &[u8] {
            self.inner.value()
        }
        fn status(&self) -> Result<()> {
            if self.steps >= self.ok {
                return Err(crate::Error::corruption("bad block in 000009.sst at offset 0"));
            }
            Ok(())
        }
    }

    #[test]
    fn child_failing_mid_scan_ends_iteration() {
        let icmp = bytewise_internal_comparator();
        // The newer child (seq 2) shadows k0003..k0005 of the older one; it fails after
        // its first entry, so the older child's k0003.. must never be shown as current.
        let newer: Vec<_> = (2..6).map(|k| (ikey(k, 2), b"new".to_vec())).collect();
        let older: Vec<_> = (1..8).map(|k| (ikey(k, 1), b"old".to_vec())).collect();
        let failing = FailsAfter { inner: VecIterator::new(newer, icmp.clone()), ok: 1, steps: 0 };
        let mut it = MergingIterator::new(
            icmp.clone(),
            vec![Box::new(failing), Box::new(VecIterator::new(older, icmp.clone()))],
        );
        it.seek_to_first();
        let mut seen = Vec::new();
        while it.valid() {
            seen.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        assert!(it.status().is_err());
        // k0001 (old), k0002 (new), then the newer child fails on its next step.
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen.iter().all(|(k, _)| k[..5] <= b"k0002"[..]));
    }
}
