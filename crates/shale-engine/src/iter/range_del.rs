//! Range tombstones (`DeleteRange`) and their fragmented form, used by reads to decide
//! whether a point entry is covered.
//!
//! A table's `rocksdb.range_del` block stores one entry per tombstone:
//! ```text
//! key   = internal key (start user key | seq << 8 | 0x0F)
//! value = end user key (exclusive)
//! ```
//! Tombstones may overlap. Fragmenting cuts them at every start and end so that the
//! pieces never overlap; each piece lists the sequence numbers of every tombstone
//! covering it, newest first:
//! ```text
//! [a, e) @5  +  [c, g) @9   =>   [a, c) {5}   [c, e) {9, 5}   [e, g) {9}
//! ```
//! An entry `(key, seq)` read at snapshot `s` is covered when some piece containing `key`
//! has a sequence number `t` with `seq < t <= s`.
//!
//! With user-defined timestamps (the comparator's `timestamp_size() > 0`) a tombstone's
//! start and end keys carry its timestamp (`start | ts`, `end | ts`). As RocksDB's
//! `FragmentedRangeTombstoneList`, the cuts use the keys with the maximal timestamp, so a
//! piece covers every version of its keys (compared without timestamps), and each piece
//! keeps the tombstones' timestamps beside their sequence numbers: a reader at timestamp
//! `r` sees only tombstones whose timestamp is `<= r` ([`FragmentedTombstones::max_covering_seq_at`]).
//! ```text
//! [a|7, e|7) @5  =>  [a|max, e|max) {5: ts 7}      covers b|9@4 at read ts >= 7
//! ```

use std::cmp::Ordering;

use crate::comparator::ComparatorRef;
use crate::error::{Error, Result};
use crate::key::{parse_internal_key, SequenceNumber};

/// One `DeleteRange(start, end)`: user keys in `[start, end)` older than `seq` are deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub seq: SequenceNumber,
}

/// A piece of the key space, `[start, end)`, with the covering tombstones' sequence
/// numbers in descending order (no duplicates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TombstoneFragment {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub seqs: Vec<SequenceNumber>,
}

/// Non-overlapping tombstone fragments in user-key order.
pub struct FragmentedTombstones {
    ucmp: ComparatorRef,
    bytewise: bool,
    fragments: Vec<TombstoneFragment>,
    /// With user-defined timestamps: per fragment, the timestamp of each tombstone in
    /// `seqs` (same order). None without timestamps (a pointer, so that the many iterators
    /// built without tombstones pay nothing for it).
    timestamps: Option<Box<[Vec<Vec<u8>>]>>,
}

impl FragmentedTombstones {
    pub fn new(ucmp: ComparatorRef, mut tombstones: Vec<RangeTombstone>) -> Self {
        if !tombstones.is_empty() {
            let ts_sz = ucmp.timestamp_size();
            if ts_sz > 0 {
                return Self::with_timestamps(ucmp, tombstones, ts_sz);
            }
        }
        let bytewise = ucmp.is_bytewise();
        let cmp = |a: &[u8], b: &[u8]| if bytewise { a.cmp(b) } else { ucmp.compare(a, b) };
        tombstones.retain(|t| cmp(&t.start, &t.end) == Ordering::Less);
        tombstones.sort_by(|a, b| cmp(&a.start, &b.start));

        // Every start and end is a cut point.
        let mut points: Vec<&[u8]> =
            tombstones.iter().flat_map(|t| [t.start.as_slice(), t.end.as_slice()]).collect();
        points.sort_by(|a, b| cmp(a, b));
        points.dedup_by(|a, b| cmp(a, b) == Ordering::Equal);

        let mut fragments: Vec<TombstoneFragment> = Vec::new();
        let mut active: Vec<&RangeTombstone> = Vec::new();
        let mut next = 0;
        for w in points.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            while next < tombstones.len() && cmp(&tombstones[next].start, lo) != Ordering::Greater {
                active.push(&tombstones[next]);
                next += 1;
            }
            active.retain(|t| cmp(&t.end, lo) == Ordering::Greater);
            if active.is_empty() {
                continue;
            }
            let mut seqs: Vec<SequenceNumber> = active.iter().map(|t| t.seq).collect();
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            seqs.dedup();
            // Join with the previous piece when it touches this one and has the same seqs.
            if let Some(last) = fragments.last_mut() {
                if last.seqs == seqs && cmp(&last.end, lo) == Ordering::Equal {
                    last.end = hi.to_vec();
                    continue;
                }
            }
            fragments.push(TombstoneFragment { start: lo.to_vec(), end: hi.to_vec(), seqs });
        }
        FragmentedTombstones { ucmp, bytewise, fragments, timestamps: None }
    }

    /// Fragments tombstones whose keys carry `ts_sz`-byte timestamps (see the module
    /// comment): cuts at the keys with the maximal timestamp, timestamps kept per piece.
    fn with_timestamps(ucmp: ComparatorRef, tombstones: Vec<RangeTombstone>, ts_sz: usize) -> Self {
        let max_ts = vec![0xffu8; ts_sz];
        let with_max = |k: &[u8]| {
            let mut v = k[..k.len().saturating_sub(ts_sz)].to_vec();
            v.extend_from_slice(&max_ts);
            v
        };
        // (start|max, end|max, seq, ts)
        type Cut = (Vec<u8>, Vec<u8>, SequenceNumber, Vec<u8>);
        let mut ts_of: Vec<Cut> = tombstones
            .iter()
            .map(|t| {
                let ts = t.start[t.start.len().saturating_sub(ts_sz)..].to_vec();
                (with_max(&t.start), with_max(&t.end), t.seq, ts)
            })
            .filter(|(s, e, _, _)| ucmp.compare(s, e) == Ordering::Less)
            .collect();
        ts_of.sort_by(|a, b| ucmp.compare(&a.0, &b.0));
        let mut points: Vec<&[u8]> = ts_of.iter().flat_map(|t| [t.0.as_slice(), t.1.as_slice()]).collect();
        points.sort_by(|a, b| ucmp.compare(a, b));
        points.dedup_by(|a, b| ucmp.compare(a, b) == Ordering::Equal);
        let mut fragments: Vec<TombstoneFragment> = Vec::new();
        let mut timestamps: Vec<Vec<Vec<u8>>> = Vec::new();
        let mut active: Vec<usize> = Vec::new();
        let mut next = 0;
        for w in points.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            while next < ts_of.len() && ucmp.compare(&ts_of[next].0, lo) != Ordering::Greater {
                active.push(next);
                next += 1;
            }
            active.retain(|&i| ucmp.compare(&ts_of[i].1, lo) == Ordering::Greater);
            if active.is_empty() {
                continue;
            }
            let mut pairs: Vec<(SequenceNumber, &[u8])> =
                active.iter().map(|&i| (ts_of[i].2, ts_of[i].3.as_slice())).collect();
            pairs.sort_unstable_by_key(|p| std::cmp::Reverse(p.0));
            pairs.dedup_by_key(|p| p.0);
            let seqs: Vec<SequenceNumber> = pairs.iter().map(|p| p.0).collect();
            let tss: Vec<Vec<u8>> = pairs.iter().map(|p| p.1.to_vec()).collect();
            if let (Some(last), Some(last_ts)) = (fragments.last_mut(), timestamps.last()) {
                if last.seqs == seqs && *last_ts == tss && ucmp.compare(&last.end, lo) == Ordering::Equal {
                    last.end = hi.to_vec();
                    continue;
                }
            }
            fragments.push(TombstoneFragment { start: lo.to_vec(), end: hi.to_vec(), seqs });
            timestamps.push(tss);
        }
        FragmentedTombstones {
            ucmp,
            bytewise: false,
            fragments,
            timestamps: Some(timestamps.into_boxed_slice()),
        }
    }

    /// The largest sequence number `<= upper` among tombstones containing `user_key` (a key
    /// with its timestamp) whose timestamp is `<= read_ts`; 0 if none (RocksDB's
    /// `SetMaxVisibleSeqAndTimestamp`). Without timestamps, `max_covering_seq`.
    pub fn max_covering_seq_at(
        &self,
        user_key: &[u8],
        upper: SequenceNumber,
        read_ts: &[u8],
    ) -> SequenceNumber {
        let Some(i) = self.fragment_index(user_key) else { return 0 };
        let (Some(f), Some(tss)) = (self.fragments.get(i), self.timestamps.as_ref().and_then(|t| t.get(i)))
        else {
            return self.seq_in_fragment(i, upper);
        };
        f.seqs
            .iter()
            .zip(tss)
            .find(|(s, ts)| **s <= upper && self.ucmp.compare_timestamp(ts, read_ts) != Ordering::Greater)
            .map_or(0, |(s, _)| *s)
    }

    /// No tombstones at all.
    pub fn empty(ucmp: ComparatorRef) -> Self {
        FragmentedTombstones::new(ucmp, Vec::new())
    }

    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    pub fn fragments(&self) -> &[TombstoneFragment] {
        &self.fragments
    }

    #[inline]
    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.bytewise {
            a.cmp(b)
        } else {
            self.ucmp.compare(a, b)
        }
    }

    /// The index of the fragment containing `user_key`, if any.
    pub fn fragment_index(&self, user_key: &[u8]) -> Option<usize> {
        let n = self.fragments.partition_point(|f| self.cmp(&f.start, user_key) != Ordering::Greater);
        let i = n.checked_sub(1)?;
        (self.cmp(user_key, &self.fragments[i].end) == Ordering::Less).then_some(i)
    }

    /// The largest sequence number `<= upper` of the tombstones covering fragment `index`;
    /// 0 when there is none.
    pub fn seq_in_fragment(&self, index: usize, upper: SequenceNumber) -> SequenceNumber {
        let Some(f) = self.fragments.get(index) else { return 0 };
        let j = f.seqs.partition_point(|&s| s > upper);
        f.seqs.get(j).copied().unwrap_or(0)
    }

    /// The largest sequence number `<= upper` among tombstones containing `user_key`; 0 if
    /// none. An entry of that key with a smaller sequence number is deleted.
    pub fn max_covering_seq(&self, user_key: &[u8], upper: SequenceNumber) -> SequenceNumber {
        match self.fragment_index(user_key) {
            Some(i) => self.seq_in_fragment(i, upper),
            None => 0,
        }
    }

    /// The fragment containing `user_key` and its covering sequence number at `upper`, when
    /// one covers it: every key of `[start, end)` is covered by the same sequence number.
    pub fn covering_fragment(
        &self,
        user_key: &[u8],
        upper: SequenceNumber,
    ) -> Option<(&[u8], &[u8], SequenceNumber)> {
        let i = self.fragment_index(user_key)?;
        let seq = self.seq_in_fragment(i, upper);
        if seq == 0 {
            return None;
        }
        let f = &self.fragments[i];
        Some((&f.start, &f.end, seq))
    }
}

/// Decodes the entries of a table's range-deletion block: `(start internal key, end user
/// key)` pairs. A start key that is not a valid internal key is Corruption.
pub fn from_table_entries(entries: &[(Vec<u8>, Vec<u8>)]) -> Result<Vec<RangeTombstone>> {
    entries
        .iter()
        .enumerate()
        .map(|(i, (start, end))| {
            let p = parse_internal_key(start).map_err(|e| {
                Error::corruption(format!("range tombstone {i}: bad start key: {}", e.into_string()))
            })?;
            Ok(RangeTombstone { start: p.user_key.to_vec(), end: end.clone(), seq: p.sequence })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comparator::{BytewiseComparator, ReverseBytewiseComparator};
    use crate::key::{make_internal_key, ValueType};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::sync::Arc;

    fn t(s: &str, e: &str, seq: u64) -> RangeTombstone {
        RangeTombstone { start: s.into(), end: e.into(), seq }
    }

    #[test]
    fn fragments_overlapping_tombstones() {
        let f = FragmentedTombstones::new(Arc::new(BytewiseComparator), vec![t("c", "g", 9), t("a", "e", 5)]);
        let got: Vec<_> =
            f.fragments().iter().map(|f| (f.start.clone(), f.end.clone(), f.seqs.clone())).collect();
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), b"c".to_vec(), vec![5]),
                (b"c".to_vec(), b"e".to_vec(), vec![9, 5]),
                (b"e".to_vec(), b"g".to_vec(), vec![9]),
            ]
        );
        assert_eq!(f.max_covering_seq(b"d", 100), 9);
        assert_eq!(f.max_covering_seq(b"d", 8), 5);
        assert_eq!(f.max_covering_seq(b"d", 4), 0);
        assert_eq!(f.max_covering_seq(b"g", 100), 0);
        assert_eq!(f.max_covering_seq(b"0", 100), 0);
        assert_eq!(f.covering_fragment(b"f", 10), Some((&b"e"[..], &b"g"[..], 9)));
        assert_eq!(f.covering_fragment(b"f", 8), None);
        let empty =
            FragmentedTombstones::new(Arc::new(BytewiseComparator), vec![t("x", "x", 3), t("z", "y", 3)]);
        assert!(empty.is_empty());
        assert_eq!(empty.max_covering_seq(b"x", 10), 0);
    }

    #[test]
    fn respects_user_comparator() {
        // Reverse order: "g" sorts before "c".
        let f = FragmentedTombstones::new(Arc::new(ReverseBytewiseComparator), vec![t("g", "c", 4)]);
        assert_eq!(f.max_covering_seq(b"e", 10), 4);
        assert_eq!(f.max_covering_seq(b"c", 10), 0);
        assert_eq!(f.max_covering_seq(b"g", 10), 4);
    }

    fn key(i: u32) -> Vec<u8> {
        format!("{:02}", i).into_bytes()
    }

    #[test]
    fn matches_brute_force() {
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..1000 {
            let n = rng.gen_range(0..12);
            let ts: Vec<RangeTombstone> = (0..n)
                .map(|_| {
                    let a = rng.gen_range(0..30);
                    let b = rng.gen_range(0..30);
                    RangeTombstone { start: key(a), end: key(b), seq: rng.gen_range(1..20) }
                })
                .collect();
            let f = FragmentedTombstones::new(Arc::new(BytewiseComparator), ts.clone());
            for w in f.fragments().windows(2) {
                assert!(w[0].end <= w[1].start, "fragments overlap");
            }
            for fr in f.fragments() {
                assert!(fr.start < fr.end);
                assert!(!fr.seqs.is_empty());
                assert!(fr.seqs.windows(2).all(|w| w[0] > w[1]), "seqs not strictly descending");
            }
            // Probe the cut points and keys between them.
            let mut probes: Vec<Vec<u8>> = (0..31).map(key).collect();
            probes.extend((0..31).map(|i| {
                let mut k = key(i);
                k.push(b'x');
                k
            }));
            for p in &probes {
                for upper in 0..21 {
                    let want = ts
                        .iter()
                        .filter(|t| t.start.as_slice() <= p.as_slice() && p.as_slice() < t.end.as_slice())
                        .map(|t| t.seq)
                        .filter(|&s| s <= upper)
                        .max()
                        .unwrap_or(0);
                    assert_eq!(f.max_covering_seq(p, upper), want, "key {p:?} upper {upper}");
                    match f.covering_fragment(p, upper) {
                        Some((s, e, seq)) => {
                            assert_eq!(seq, want);
                            assert!(s <= p.as_slice() && p.as_slice() < e);
                        }
                        None => assert_eq!(want, 0),
                    }
                }
            }
        }
    }

    #[test]
    fn decodes_table_entries() {
        let entries = vec![
            (make_internal_key(b"a", 7, ValueType::RangeDeletion), b"m".to_vec()),
            (make_internal_key(b"k", 3, ValueType::RangeDeletion), b"z".to_vec()),
        ];
        let ts = from_table_entries(&entries).unwrap();
        assert_eq!(ts, vec![t("a", "m", 7), t("k", "z", 3)]);
        let bad = vec![(b"short".to_vec(), b"z".to_vec())];
        assert_eq!(from_table_entries(&bad).unwrap_err().kind(), crate::ErrorKind::Corruption);
    }

    #[test]
    fn timestamped_tombstones_cover_every_version_up_to_the_read_timestamp() {
        use crate::comparator::{encode_u64_ts, U64TsComparator};
        let k = |s: &str, ts: u64| [s.as_bytes(), &encode_u64_ts(ts)].concat();
        let ts = |t: u64| encode_u64_ts(t).to_vec();
        let f = FragmentedTombstones::new(
            Arc::new(U64TsComparator::bytewise()),
            vec![
                RangeTombstone { start: k("a", 7), end: k("c", 7), seq: 5 },
                RangeTombstone { start: k("b", 9), end: k("d", 9), seq: 8 },
            ],
        );
        // Every version of the start key, none of the end key.
        assert_eq!(f.max_covering_seq_at(&k("a", 100), 100, &ts(7)), 5);
        assert_eq!(f.max_covering_seq_at(&k("a", 0), 100, &ts(7)), 5);
        assert_eq!(f.max_covering_seq_at(&k("c", 1), 100, &ts(7)), 0);
        // A tombstone newer than the read timestamp, or the snapshot, is not seen.
        assert_eq!(f.max_covering_seq_at(&k("b", 1), 100, &ts(6)), 0);
        assert_eq!(f.max_covering_seq_at(&k("b", 1), 100, &ts(8)), 5);
        assert_eq!(f.max_covering_seq_at(&k("b", 1), 100, &ts(9)), 8);
        assert_eq!(f.max_covering_seq_at(&k("b", 1), 7, &ts(9)), 5);
        assert_eq!(f.max_covering_seq_at(&k("c", 1), 100, &ts(9)), 8);
        assert_eq!(f.max_covering_seq_at(&k("d", 1), 100, &ts(9)), 0);
    }
}
