//! A transaction's writes, indexed for its own reads (RocksDB's `WriteBatchWithIndex`),
//! and the views that lay them over the database (RocksDB's `BaseDeltaIterator`).
//!
//! The writes are kept in order as operations (family, type, key, value); a map from
//! (family, key) to the positions of that key's operations answers point reads: the last
//! one decides (a Put gives its value, a Delete nothing, a Merge needs the merge of the
//! operands over the older value). Savepoints are positions in the operation list.
//!
//! Reads through the transaction (iterators, and point reads that meet a Merge) see one
//! merged view, built at the internal-key level: the database's sources read at sequence
//! `S` (the snapshot, or the last sequence), capped at `S` entry by entry and tombstone by
//! tombstone, merged with the transaction's operations numbered `S+1, S+2, ...` in their
//! order, under a user-key iterator (`DBIter`) reading at `S+n`. A later operation thus
//! hides an earlier one and the database's entries, exactly as if the batch were written
//! after `S`, and a Merge is resolved by whatever `DBIter` does with merges.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::batch::WriteBatchWithTransaction;
use crate::cf_ref::CfId;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::{BoxedIterator, InternalIterator, VecIterator};
use crate::key::{make_internal_key, trailer, InternalKeyComparator, SequenceNumber, ValueType};

/// One write of a transaction.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub cf: u32,
    pub t: ValueType,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// What a transaction's own writes say about a key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// No write of the key.
    Absent,
    Value(Vec<u8>),
    Deleted,
    /// The last write is a Merge: the answer needs merging.
    Merge,
}

/// The operations and their index.
#[derive(Default, Clone)]
pub(crate) struct IndexedBatch {
    ops: Vec<Op>,
    index: BTreeMap<(u32, Vec<u8>), Vec<usize>>,
    bytes: usize,
}

impl IndexedBatch {
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Bytes of keys and values held (for `max_write_batch_size`).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn push(&mut self, cf: u32, t: ValueType, key: &[u8], value: &[u8]) {
        self.index.entry((cf, key.to_vec())).or_default().push(self.ops.len());
        self.bytes += key.len() + value.len();
        self.ops.push(Op { cf, t, key: key.to_vec(), value: value.to_vec() });
    }

    pub fn lookup(&self, cf: u32, key: &[u8]) -> Lookup {
        let Some(last) = self.index.get(&(cf, key.to_vec())).and_then(|v| v.last()) else {
            return Lookup::Absent;
        };
        let op = &self.ops[*last];
        match op.t {
            ValueType::Value => Lookup::Value(op.value.clone()),
            ValueType::Merge => Lookup::Merge,
            _ => Lookup::Deleted,
        }
    }

    /// Drops the operations from position `len` on (rollback to a savepoint).
    pub fn truncate(&mut self, len: usize) {
        while self.ops.len() > len {
            let Some(op) = self.ops.pop() else { break };
            self.bytes -= op.key.len() + op.value.len();
            let k = (op.cf, op.key);
            if let Some(v) = self.index.get_mut(&k) {
                v.pop();
                if v.is_empty() {
                    self.index.remove(&k);
                }
            }
        }
    }

    pub fn clear(&mut self) {
        *self = IndexedBatch::default();
    }

    /// The operations as a write batch, in order.
    pub fn to_write_batch(&self) -> WriteBatchWithTransaction<true> {
        let mut b = WriteBatchWithTransaction::<true>::default();
        for op in &self.ops {
            let cf = CfId(op.cf);
            match op.t {
                ValueType::Value => b.put_cf(&cf, &op.key, &op.value),
                ValueType::Merge => b.merge_cf(&cf, &op.key, &op.value),
                ValueType::SingleDeletion => b.single_delete_cf(&cf, &op.key),
                _ => b.delete_cf(&cf, &op.key),
            }
        }
        b
    }

    /// Family `cf`'s operations as internal entries numbered from `first_seq` in operation
    /// order, sorted by `icmp`.
    pub fn internal_entries(
        &self,
        cf: u32,
        first_seq: SequenceNumber,
        icmp: &InternalKeyComparator,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = self
            .ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.cf == cf)
            .map(|(i, op)| (make_internal_key(&op.key, first_seq + i as u64, op.t), op.value.clone()))
            .collect();
        out.sort_by(|a, b| icmp.compare(&a.0, &b.0));
        out
    }
}

/// An internal iterator that hides the entries newer than `max` (read at a snapshot below
/// the transaction's own writes).
pub(crate) struct SeqCap {
    inner: BoxedIterator,
    max: SequenceNumber,
}

impl SeqCap {
    pub fn new(inner: BoxedIterator, max: SequenceNumber) -> SeqCap {
        SeqCap { inner, max }
    }

    fn too_new(&self) -> bool {
        self.inner.valid() && (trailer(self.inner.key()) >> 8) > self.max
    }

    fn skip_forward(&mut self) {
        while self.too_new() {
            self.inner.next();
        }
    }

    fn skip_backward(&mut self) {
        while self.too_new() {
            self.inner.prev();
        }
    }
}

impl InternalIterator for SeqCap {
    // Values pass through unchanged: pinned where the database's are.
    shale_format::forward_iter_values!(inner);
    shale_format::forward_iter_moves!(inner, skip_forward, skip_backward);
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.skip_forward();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
        self.skip_backward();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
}

/// `tomb` without the tombstones newer than `max` (the same Arc when there are none).
pub(crate) fn cap_tombstones(
    tomb: Arc<FragmentedTombstones>,
    max: SequenceNumber,
    icmp: &InternalKeyComparator,
) -> Arc<FragmentedTombstones> {
    if !tomb.fragments().iter().any(|f| f.seqs.iter().any(|s| *s > max)) {
        return tomb;
    }
    let kept: Vec<RangeTombstone> = tomb
        .fragments()
        .iter()
        .flat_map(|f| {
            f.seqs.iter().filter(|s| **s <= max).map(|s| RangeTombstone {
                start: f.start.clone(),
                end: f.end.clone(),
                seq: *s,
            })
        })
        .collect();
    Arc::new(FragmentedTombstones::new(icmp.user_comparator().clone(), kept))
}

/// The transaction's entries of one family as an internal iterator.
pub(crate) fn batch_iterator(
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    icmp: &InternalKeyComparator,
) -> BoxedIterator {
    Box::new(VecIterator::new(entries, icmp.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_follows_the_last_write_and_truncate_undoes() {
        let mut b = IndexedBatch::default();
        assert_eq!(b.lookup(0, b"a"), Lookup::Absent);
        b.push(0, ValueType::Value, b"a", b"1");
        b.push(1, ValueType::Value, b"a", b"x");
        let mark = b.len();
        b.push(0, ValueType::Deletion, b"a", b"");
        assert_eq!(b.lookup(0, b"a"), Lookup::Deleted);
        assert_eq!(b.lookup(1, b"a"), Lookup::Value(b"x".to_vec()));
        b.push(0, ValueType::Merge, b"a", b"+");
        assert_eq!(b.lookup(0, b"a"), Lookup::Merge);
        b.truncate(mark);
        assert_eq!(b.lookup(0, b"a"), Lookup::Value(b"1".to_vec()));
        assert_eq!(b.bytes(), 4);
        let wb = b.to_write_batch();
        assert_eq!(wb.len(), 2);
    }

    #[test]
    fn seq_cap_hides_newer_entries_both_ways() {
        let icmp = crate::key::bytewise_internal_comparator();
        let mut e = vec![
            (make_internal_key(b"a", 5, ValueType::Value), b"a5".to_vec()),
            (make_internal_key(b"a", 3, ValueType::Value), b"a3".to_vec()),
            (make_internal_key(b"b", 9, ValueType::Value), b"b9".to_vec()),
            (make_internal_key(b"c", 1, ValueType::Value), b"c1".to_vec()),
        ];
        e.sort_by(|x, y| icmp.compare(&x.0, &y.0));
        let mut it = SeqCap::new(Box::new(VecIterator::new(e, icmp.clone())), 4);
        it.seek_to_first();
        let mut fwd = Vec::new();
        while it.valid() {
            fwd.push(it.value().to_vec());
            it.next();
        }
        assert_eq!(fwd, vec![b"a3".to_vec(), b"c1".to_vec()]);
        it.seek_to_last();
        let mut back = Vec::new();
        while it.valid() {
            back.push(it.value().to_vec());
            it.prev();
        }
        assert_eq!(back, vec![b"c1".to_vec(), b"a3".to_vec()]);
    }
}
