//! Tests of [`DBIter`] against a model built from the write history.

use super::*;
use crate::comparator::BytewiseComparator;
use crate::iter::range_del::RangeTombstone;
use crate::iter::{FileOpener, InternalIterator, LevelFile, LevelIterator, MergingIterator, VecIterator};
use crate::key::{bytewise_internal_comparator, make_internal_key};
use crate::ErrorKind;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Debug, Clone)]
enum Op {
    Put(u32, Vec<u8>),
    Del(u32),
    SingleDel(u32),
    Range(u32, u32),
}

fn ukey(i: u32) -> Vec<u8> {
    format!("k{i:02}").into_bytes()
}

/// A key at, or just after, key `i`.
fn probe(rng: &mut SmallRng, max: u32) -> Vec<u8> {
    let mut k = ukey(rng.gen_range(0..max));
    if rng.gen_bool(0.3) {
        k.push(b'm');
    }
    k
}

fn no_tombstones() -> Arc<FragmentedTombstones> {
    Arc::new(FragmentedTombstones::empty(Arc::new(BytewiseComparator)))
}

/// A memtable holding `entries` (point entries: no RangeDeletion). Its iterator's values
/// are pinned, so `DBIter` points at them instead of copying them when it steps back.
fn memtable_of(entries: Entries) -> BoxedIterator {
    let mem = Arc::new(crate::memtable::MemTable::new(bytewise_internal_comparator(), 1));
    for (k, v) in entries {
        let p = parse_internal_key(&k).unwrap();
        assert_ne!(p.value_type, ValueType::RangeDeletion);
        mem.add(p.sequence, p.value_type, p.user_key, &v);
    }
    mem.iter()
}

/// Spreads sorted `entries` over a random stack of iterators: one vector, several merged
/// vectors, merged vectors plus a level iterator of small files, or a memtable (pinned
/// values) merged with vectors.
fn build_inner(rng: &mut SmallRng, entries: Entries) -> BoxedIterator {
    let icmp = bytewise_internal_comparator();
    let shape = rng.gen_range(0..4);
    if shape == 0 {
        return Box::new(VecIterator::new(entries, icmp));
    }
    if shape == 3 {
        // Point entries to the memtable (all of them, or about half), the rest to a vector.
        let all = rng.gen_bool(0.3);
        let (mut mem, mut rest) = (Vec::new(), Vec::new());
        for e in entries {
            let range = parse_internal_key(&e.0).unwrap().value_type == ValueType::RangeDeletion;
            if !range && (all || rng.gen_bool(0.5)) {
                mem.push(e);
            } else {
                rest.push(e);
            }
        }
        let children =
            vec![memtable_of(mem), Box::new(VecIterator::new(rest, icmp.clone())) as BoxedIterator];
        return Box::new(MergingIterator::new(icmp, children));
    }
    let nvec = rng.gen_range(1..4);
    let mut parts: Vec<Entries> = vec![Vec::new(); nvec + 1];
    for e in entries {
        let i = if shape == 2 { rng.gen_range(0..=nvec) } else { rng.gen_range(0..nvec) };
        parts[i].push(e);
    }
    let level_part = parts.pop().unwrap_or_default();
    let mut children: Vec<BoxedIterator> =
        parts.into_iter().map(|p| Box::new(VecIterator::new(p, icmp.clone())) as BoxedIterator).collect();
    if shape == 2 {
        let mut files = Vec::new();
        let mut contents: Vec<Entries> = Vec::new();
        let mut i = 0;
        while i < level_part.len() {
            let n = rng.gen_range(1..5).min(level_part.len() - i);
            let chunk: Entries = level_part[i..i + n].to_vec();
            files.push(LevelFile {
                number: files.len() as u64,
                smallest: chunk[0].0.clone(),
                largest: chunk[n - 1].0.clone(),
            });
            contents.push(chunk);
            i += n;
        }
        let contents = Arc::new(contents);
        let i2 = icmp.clone();
        let opener: FileOpener = Arc::new(move |f: &LevelFile| {
            let c = contents.get(f.number as usize).cloned().unwrap_or_default();
            Ok(Box::new(VecIterator::new(c, i2.clone())) as BoxedIterator)
        });
        children.push(Box::new(LevelIterator::new(icmp.clone(), files, opener)));
    }
    Box::new(MergingIterator::new(icmp, children))
}

fn in_bounds(k: &[u8], lower: &Option<Vec<u8>>, upper: &Option<Vec<u8>>) -> bool {
    lower.as_ref().is_none_or(|lo| k >= lo.as_slice()) && upper.as_ref().is_none_or(|up| k < up.as_slice())
}

/// The visible (key, value) pairs at `snap`, by brute force over the history.
fn model(
    history: &[(u64, Op)],
    nkeys: u32,
    snap: u64,
    lower: &Option<Vec<u8>>,
    upper: &Option<Vec<u8>>,
) -> Entries {
    let mut out = Vec::new();
    for k in 0..nkeys {
        let newest = history.iter().rev().find(|(s, op)| {
            *s <= snap && matches!(op, Op::Put(x, _) | Op::Del(x) | Op::SingleDel(x) if *x == k)
        });
        if let Some((s, Op::Put(_, v))) = newest {
            let covered = history.iter().any(|(ts, op)| {
                matches!(op, Op::Range(a, b) if *a <= k && k < *b) && *s < *ts && *ts <= snap
            });
            if !covered && in_bounds(&ukey(k), lower, upper) {
                out.push((ukey(k), v.clone()));
            }
        }
    }
    out
}

fn random_bound(rng: &mut SmallRng, nkeys: u32) -> Option<Vec<u8>> {
    rng.gen_bool(0.35).then(|| probe(rng, nkeys + 2))
}

fn run_case(rng: &mut SmallRng, case: usize) {
    let nkeys = rng.gen_range(1..25);
    let nops = rng.gen_range(0..90);
    let mut history = Vec::new();
    let mut seq = 0;
    for i in 0..nops {
        seq += rng.gen_range(1..3);
        let k = rng.gen_range(0..nkeys);
        let op = match rng.gen_range(0..20) {
            // Long values sit out of line in a memtable's arena.
            0..=5 => Op::Put(k, format!("v{i}-{}", "x".repeat(40)).into_bytes()),
            6..=10 => Op::Put(k, format!("v{i}").into_bytes()),
            11..=13 => Op::Del(k),
            14..=15 => Op::SingleDel(k),
            _ => Op::Range(k, k + rng.gen_range(1..6)),
        };
        history.push((seq, op));
    }
    let ranges_in_stream = rng.gen_bool(0.5);
    let mut entries: Entries = Vec::new();
    let mut tombstones = Vec::new();
    for (s, op) in &history {
        match op {
            Op::Put(k, v) => entries.push((make_internal_key(&ukey(*k), *s, ValueType::Value), v.clone())),
            Op::Del(k) => entries.push((make_internal_key(&ukey(*k), *s, ValueType::Deletion), Vec::new())),
            Op::SingleDel(k) => {
                entries.push((make_internal_key(&ukey(*k), *s, ValueType::SingleDeletion), Vec::new()))
            }
            Op::Range(a, b) => {
                tombstones.push(RangeTombstone { start: ukey(*a), end: ukey(*b), seq: *s });
                if ranges_in_stream {
                    entries.push((make_internal_key(&ukey(*a), *s, ValueType::RangeDeletion), ukey(*b)));
                }
            }
        }
    }
    let icmp = bytewise_internal_comparator();
    entries.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let snap = rng.gen_range(0..=seq + 1);
    let lower = random_bound(rng, nkeys);
    let upper = random_bound(rng, nkeys);
    let want = model(&history, nkeys, snap, &lower, &upper);
    let frag = Arc::new(FragmentedTombstones::new(Arc::new(BytewiseComparator), tombstones));
    let inner = build_inner(rng, entries);
    let mut it = DBIter::new(icmp, inner, frag, snap, lower.clone(), upper.clone());

    let mut pos: Option<usize> = None;
    let mut trace = Vec::new();
    for _ in 0..60 {
        let op = rng.gen_range(0..10);
        match op {
            0 => {
                it.seek_to_first();
                pos = (!want.is_empty()).then_some(0);
                trace.push("first".to_string());
            }
            1 => {
                it.seek_to_last();
                pos = want.len().checked_sub(1);
                trace.push("last".to_string());
            }
            2 => {
                let t = probe(rng, nkeys + 2);
                it.seek(&t);
                let p = want.partition_point(|(k, _)| k.as_slice() < t.as_slice());
                pos = (p < want.len()).then_some(p);
                trace.push(format!("seek {}", String::from_utf8_lossy(&t)));
            }
            3 => {
                let t = probe(rng, nkeys + 2);
                it.seek_for_prev(&t);
                let p = want.partition_point(|(k, _)| k.as_slice() <= t.as_slice());
                pos = p.checked_sub(1);
                trace.push(format!("seek_for_prev {}", String::from_utf8_lossy(&t)));
            }
            4..=6 => {
                if let Some(p) = pos {
                    it.next();
                    pos = (p + 1 < want.len()).then_some(p + 1);
                    trace.push("next".to_string());
                }
            }
            _ => {
                if let Some(p) = pos {
                    it.prev();
                    pos = p.checked_sub(1);
                    trace.push("prev".to_string());
                }
            }
        }
        let ctx = || {
            format!(
                "case {case} snap {snap} lower {lower:?} upper {upper:?}\nhistory {history:?}\nops {trace:?}"
            )
        };
        it.status().unwrap_or_else(|e| panic!("{e} {}", ctx()));
        assert_eq!(it.valid(), pos.is_some(), "{}", ctx());
        if let Some(p) = pos {
            assert_eq!(it.key(), &want[p].0[..], "{}", ctx());
            assert_eq!(it.value(), &want[p].1[..], "{}", ctx());
        }
    }
}

#[test]
fn matches_model_over_random_histories() {
    let mut rng = SmallRng::seed_from_u64(2024);
    for case in 0..4000 {
        run_case(&mut rng, case);
    }
}

fn entry(k: &str, seq: u64, t: ValueType, v: &str) -> (Vec<u8>, Vec<u8>) {
    (make_internal_key(k.as_bytes(), seq, t), v.as_bytes().to_vec())
}

#[test]
fn merges_resolve_in_both_directions() {
    let e = vec![
        entry("a", 1, ValueType::Value, "x"),
        entry("b", 5, ValueType::Merge, "m"),
        entry("b", 2, ValueType::Value, "y"),
        entry("c", 6, ValueType::Merge, "p"),
        entry("c", 4, ValueType::Deletion, ""),
        entry("c", 3, ValueType::Merge, "q"),
        entry("d", 8, ValueType::Merge, "r"),
        entry("d", 7, ValueType::Merge, "s"),
        entry("e", 20, ValueType::Merge, "late"),
    ];
    let want: Vec<(&[u8], &[u8])> = vec![(b"a", b"x"), (b"b", b"ym"), (b"c", b"p"), (b"d", b"sr")];
    // In a vector (values copied when stepping back), in a memtable (values pinned), and
    // split between the two (a pinned Put under copied operands and the reverse).
    for layout in 0..4 {
        check_merges(e.clone(), &want, layout);
    }
}

fn check_merges(mut e: Entries, want: &[(&[u8], &[u8])], layout: usize) {
    let icmp = bytewise_internal_comparator();
    e.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let inner: BoxedIterator = match layout {
        0 => Box::new(VecIterator::new(e, icmp.clone())),
        1 => memtable_of(e),
        _ => {
            // Values to the memtable, merge operands (and deletions) to the vector, or
            // the other way round.
            let (mem, vec): (Entries, Entries) = e.into_iter().partition(|(k, _)| {
                (parse_internal_key(k).unwrap().value_type == ValueType::Value) == (layout == 2)
            });
            let children =
                vec![memtable_of(mem), Box::new(VecIterator::new(vec, icmp.clone())) as BoxedIterator];
            Box::new(MergingIterator::new(icmp.clone(), children))
        }
    };
    let mut it = DBIter::new(icmp, inner, no_tombstones(), 10, None, None);
    it.set_merge_operator(Some(Arc::new(crate::merge::testing::Concat::full())));
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let w: Vec<(Vec<u8>, Vec<u8>)> = want.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    assert_eq!(fwd, w);
    it.seek_to_last();
    let mut rev = Vec::new();
    while it.valid() {
        rev.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    rev.reverse();
    assert_eq!(rev, w);
    // Switching direction on a merged key.
    it.seek(b"b");
    assert_eq!(it.value(), b"ym");
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"x"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"ym"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"c"[..], &b"p"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"ym"[..]));
    it.seek_for_prev(b"c");
    assert_eq!(it.value(), b"p");
    it.next();
    assert_eq!((it.key(), it.value()), (&b"d"[..], &b"sr"[..]));
    it.status().unwrap();
}

fn iter_over(mut entries: Entries, snap: u64) -> DBIter {
    let icmp = bytewise_internal_comparator();
    entries.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let inner = Box::new(VecIterator::new(entries, icmp.clone()));
    DBIter::new(icmp, inner, no_tombstones(), snap, None, None)
}

#[test]
fn merge_without_an_operator_is_invalid_argument() {
    let e = vec![
        entry("a", 1, ValueType::Value, "x"),
        entry("b", 5, ValueType::Merge, "m"),
        entry("b", 2, ValueType::Value, "y"),
    ];
    let mut it = iter_over(e.clone(), 10);
    it.seek_to_first();
    assert_eq!(it.key(), b"a");
    it.next();
    assert!(!it.valid());
    let err = it.status().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(err.to_string(), "Invalid argument: merge_operator is not properly initialized.");
    it.seek_to_last();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::InvalidArgument);
    // A seek clears the error.
    it.seek(b"a");
    assert!(it.valid());
    it.status().unwrap();

    // Below a newer Value, or newer than the snapshot, a merge operand is harmless.
    for snap in [4, 10] {
        let mut e2 = e.clone();
        e2.push(entry("b", 7, ValueType::Value, "z"));
        let mut it = iter_over(e2, snap);
        let want: &[u8] = if snap == 4 { b"y" } else { b"z" };
        it.seek_to_last();
        assert_eq!((it.key(), it.value()), (&b"b"[..], want));
        it.seek_to_first();
        it.next();
        assert_eq!((it.key(), it.value()), (&b"b"[..], want));
        it.status().unwrap();
    }
}

#[test]
fn corrupt_key_is_reported() {
    let icmp = bytewise_internal_comparator();
    let mut e = vec![entry("a", 1, ValueType::Value, "x")];
    let mut bad = make_internal_key(b"b", 1, ValueType::Value);
    let n = bad.len();
    bad[n - 8] = 0x44; // unknown type
    e.push((bad, b"y".to_vec()));
    let inner = Box::new(VecIterator::new(e, icmp.clone()));
    let mut it = DBIter::new(icmp, inner, no_tombstones(), 10, None, None);
    it.seek_to_first();
    assert_eq!(it.key(), b"a");
    it.next();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
    it.seek_to_last();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
}

#[test]
fn inner_error_surfaces() {
    let icmp = bytewise_internal_comparator();
    let files = vec![
        LevelFile {
            number: 1,
            smallest: make_internal_key(b"a", 1, ValueType::Value),
            largest: make_internal_key(b"a", 1, ValueType::Value),
        },
        LevelFile {
            number: 2,
            smallest: make_internal_key(b"b", 1, ValueType::Value),
            largest: make_internal_key(b"b", 1, ValueType::Value),
        },
    ];
    let i2 = icmp.clone();
    let opener: FileOpener = Arc::new(move |f: &LevelFile| {
        if f.number == 2 {
            return Err(Error::corruption("bad block in 000002.sst at offset 0"));
        }
        Ok(Box::new(VecIterator::new(vec![entry("a", 1, ValueType::Value, "x")], i2.clone()))
            as BoxedIterator)
    });
    let inner = Box::new(LevelIterator::new(icmp.clone(), files, opener));
    let mut it = DBIter::new(icmp, inner, no_tombstones(), 10, None, None);
    it.seek_to_first();
    assert_eq!(it.key(), b"a");
    it.next();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
}

/// A cursor that fails on its first `prev` (a damaged block reached while walking back).
struct FailsOnPrev {
    inner: VecIterator,
    failed: bool,
}

impl InternalIterator for FailsOnPrev {
    fn valid(&self) -> bool {
        !self.failed && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.failed = false;
        self.inner.seek_to_first();
    }
    fn seek_to_last(&mut self) {
        self.failed = false;
        self.inner.seek_to_last();
    }
    fn seek(&mut self, t: &[u8]) {
        self.failed = false;
        self.inner.seek(t);
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        self.failed = false;
        self.inner.seek_for_prev(t);
    }
    fn next(&mut self) {
        self.inner.next();
    }
    fn prev(&mut self) {
        self.failed = true;
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        if self.failed {
            return Err(Error::corruption("bad block in 000003.sst at offset 0"));
        }
        Ok(())
    }
}

#[test]
fn error_while_walking_back_over_a_key_is_not_an_older_value() {
    let icmp = bytewise_internal_comparator();
    let mut e = vec![entry("b", 5, ValueType::Value, "new"), entry("b", 2, ValueType::Value, "old")];
    e.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let inner = Box::new(FailsOnPrev { inner: VecIterator::new(e, icmp.clone()), failed: false });
    let mut it = DBIter::new(icmp, inner, no_tombstones(), 10, None, None);
    // Backward, the oldest entry of "b" comes first; the step to the newer one fails.
    it.seek_to_last();
    assert!(!it.valid(), "a stale value was returned");
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
}

/// Counts the inner iterator's steps.
struct Counting {
    inner: BoxedIterator,
    steps: Arc<AtomicUsize>,
}

impl InternalIterator for Counting {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }
    fn seek(&mut self, t: &[u8]) {
        self.steps.fetch_add(1, AtOrd::Relaxed);
        self.inner.seek(t)
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        self.steps.fetch_add(1, AtOrd::Relaxed);
        self.inner.seek_for_prev(t)
    }
    fn next(&mut self) {
        self.steps.fetch_add(1, AtOrd::Relaxed);
        self.inner.next()
    }
    fn prev(&mut self) {
        self.steps.fetch_add(1, AtOrd::Relaxed);
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

fn counting(entries: Entries) -> (BoxedIterator, Arc<AtomicUsize>) {
    let steps = Arc::new(AtomicUsize::new(0));
    let inner = Box::new(VecIterator::new(entries, bytewise_internal_comparator()));
    (Box::new(Counting { inner, steps: steps.clone() }), steps)
}

#[test]
fn bounds_stop_iteration_early() {
    let entries: Entries =
        (0..1000u32).map(|i| entry(&format!("k{i:04}"), 1, ValueType::Value, "v")).collect();
    let (inner, steps) = counting(entries);
    let lower = Some(b"k0500".to_vec());
    let upper = Some(b"k0510".to_vec());
    let mut it = DBIter::new(bytewise_internal_comparator(), inner, no_tombstones(), 5, lower, upper);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 10);
    assert!(steps.load(AtOrd::Relaxed) < 15, "{} steps", steps.load(AtOrd::Relaxed));
    steps.store(0, AtOrd::Relaxed);
    it.seek_to_last();
    assert_eq!(it.key(), b"k0509");
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.prev();
    }
    assert_eq!(n, 10);
    assert!(steps.load(AtOrd::Relaxed) < 15, "{} steps", steps.load(AtOrd::Relaxed));
    // Seeks outside the bounds clamp.
    it.seek(b"a");
    assert_eq!(it.key(), b"k0500");
    it.seek_for_prev(b"z");
    assert_eq!(it.key(), b"k0509");
    it.seek(b"k0510");
    assert!(!it.valid());
    it.seek_for_prev(b"k0499");
    assert!(!it.valid());
}

#[test]
fn many_versions_are_skipped_with_a_seek() {
    let mut entries: Entries = Vec::new();
    for s in 1..=1000u64 {
        entries.push(entry("a", s, ValueType::Value, &format!("a{s}")));
        entries.push(entry("b", s, ValueType::Value, &format!("b{s}")));
    }
    entries.push(entry("c", 1, ValueType::Value, "c1"));
    let icmp = bytewise_internal_comparator();
    entries.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let entries_clone = entries.clone();
    let (inner, steps) = counting(entries);
    // Old snapshot: the newer versions are invisible; new snapshot: older ones are hidden.
    let mut it = DBIter::new(icmp.clone(), inner, no_tombstones(), 3, None, None);
    it.seek_to_first();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"a3"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"b3"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"c"[..], &b"c1"[..]));
    assert!(steps.load(AtOrd::Relaxed) < 100, "{} steps", steps.load(AtOrd::Relaxed));
    // Backward, and switching direction, also jump over the versions.
    steps.store(0, AtOrd::Relaxed);
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"b3"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"a3"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"b3"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"a3"[..]));
    it.prev();
    assert!(!it.valid());
    assert!(steps.load(AtOrd::Relaxed) < 150, "{} steps", steps.load(AtOrd::Relaxed));

    let (inner, steps) = counting(entries_clone);
    let mut it = DBIter::new(icmp, inner, no_tombstones(), 1000, None, None);
    it.seek_to_last();
    assert_eq!((it.key(), it.value()), (&b"c"[..], &b"c1"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"b1000"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"a1000"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"b1000"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"c"[..], &b"c1"[..]));
    assert!(steps.load(AtOrd::Relaxed) < 150, "{} steps", steps.load(AtOrd::Relaxed));
}

#[test]
fn user_comparator_orders_keys_and_bounds() {
    let icmp = InternalKeyComparator::new(Arc::new(crate::comparator::ReverseBytewiseComparator));
    let mut e = vec![
        entry("a", 1, ValueType::Value, "a"),
        entry("b", 2, ValueType::Value, "b"),
        entry("c", 3, ValueType::Value, "c"),
        entry("d", 4, ValueType::Value, "d"),
    ];
    e.sort_by(|x, y| icmp.compare(&x.0, &y.0));
    let frag = Arc::new(FragmentedTombstones::new(
        Arc::new(crate::comparator::ReverseBytewiseComparator),
        vec![RangeTombstone { start: b"c".to_vec(), end: b"b".to_vec(), seq: 9 }],
    ));
    let inner = Box::new(VecIterator::new(e, icmp.clone()));
    // Order is d, c, b, a; "c" is deleted; bounds [d, a) in that order.
    let mut it = DBIter::new(icmp, inner, frag, 10, Some(b"d".to_vec()), Some(b"a".to_vec()));
    it.seek_to_first();
    assert_eq!(it.key(), b"d");
    it.next();
    assert_eq!(it.key(), b"b");
    it.next();
    assert!(!it.valid());
    it.seek_to_last();
    assert_eq!(it.key(), b"b");
    it.seek(b"z");
    assert_eq!(it.key(), b"d");
    it.seek_for_prev(b"0");
    assert_eq!(it.key(), b"b");
}

#[test]
fn range_tombstones_hide_older_entries() {
    let icmp = bytewise_internal_comparator();
    let mut e = vec![
        entry("a", 1, ValueType::Value, "a1"),
        entry("b", 2, ValueType::Value, "b2"),
        entry("c", 3, ValueType::Value, "c3"),
        entry("c", 8, ValueType::Value, "c8"),
        entry("d", 4, ValueType::Value, "d4"),
        entry("e", 6, ValueType::Value, "e6"),
    ];
    e.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let frag = Arc::new(FragmentedTombstones::new(
        Arc::new(BytewiseComparator),
        vec![
            RangeTombstone { start: b"b".to_vec(), end: b"d".to_vec(), seq: 5 },
            // A tombstone does not cover an entry of its own sequence number.
            RangeTombstone { start: b"e".to_vec(), end: b"f".to_vec(), seq: 6 },
        ],
    ));
    let collect = |snap: u64, reverse: bool| {
        let inner = Box::new(VecIterator::new(e.clone(), icmp.clone()));
        let mut it = DBIter::new(icmp.clone(), inner, frag.clone(), snap, None, None);
        let mut out = Vec::new();
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while it.valid() {
            out.push(String::from_utf8(it.value().to_vec()).unwrap());
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        if reverse {
            out.reverse();
        }
        out
    };
    for reverse in [false, true] {
        assert_eq!(collect(10, reverse), ["a1", "c8", "d4", "e6"]);
        assert_eq!(collect(7, reverse), ["a1", "d4", "e6"]);
        assert_eq!(collect(4, reverse), ["a1", "b2", "c3", "d4"]);
    }
}

#[test]
fn reverse_steps_point_at_pinned_memtable_values() {
    let icmp = bytewise_internal_comparator();
    let long = "y".repeat(100);
    let mut e = vec![
        entry("a", 1, ValueType::Value, "short"),
        entry("b", 2, ValueType::Value, &long),
        entry("b", 3, ValueType::Value, &long[..50]),
        entry("c", 4, ValueType::Value, &long[..60]),
    ];
    e.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    let mem = Arc::new(crate::memtable::MemTable::new(icmp.clone(), 1));
    for (k, v) in &e {
        let p = parse_internal_key(k).unwrap();
        mem.add(p.sequence, p.value_type, p.user_key, v);
    }
    // Where the memtable keeps each key's newest value.
    let mut probe = mem.iter();
    let mut addr = std::collections::HashMap::new();
    probe.seek_to_last();
    while probe.valid() {
        assert!(probe.value_pinned());
        addr.insert(user_key(probe.key()).to_vec(), probe.value().as_ptr());
        probe.prev();
    }
    let mut it = DBIter::new(icmp.clone(), mem.iter(), no_tombstones(), 10, None, None);
    it.seek_to_last();
    let mut seen = Vec::new();
    while it.valid() {
        // No copy: the value is the memtable's bytes.
        assert_eq!(it.value().as_ptr(), addr[it.key()], "{:?}", it.key());
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    let want: Entries = vec![
        (b"c".to_vec(), long.as_bytes()[..60].to_vec()),
        (b"b".to_vec(), long.as_bytes()[..50].to_vec()),
        (b"a".to_vec(), b"short".to_vec()),
    ];
    assert_eq!(seen, want);
    // A vector's values are not pinned: they are copied.
    let mut it =
        DBIter::new(icmp.clone(), Box::new(VecIterator::new(e, icmp)), no_tombstones(), 10, None, None);
    it.seek_to_last();
    assert!(!it.inner.value_pinned());
    assert_eq!(it.value(), &long.as_bytes()[..60]);
}

/// Moving backward, `DBIter` points at values in data blocks instead of copying them: a
/// block the table iterator leaves is kept (pinned) until the next step, and values stay
/// right across block boundaries; forward, nothing is kept; with `pin_data`, every block
/// left is kept while the iterator lives.
#[test]
fn reverse_scans_keep_the_blocks_their_values_lie_in() {
    use crate::iter::range_del::FragmentedTombstones;
    use crate::table::{TableBuilder, TableBuilderOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pins.sst");
    let data: Vec<(Vec<u8>, Vec<u8>)> = (0..400u32)
        .map(|i| {
            let v = format!("value-{i}-").repeat(1 + (i % 7) as usize).into_bytes();
            (make_internal_key(format!("key{i:06}").as_bytes(), 10, ValueType::Value), v)
        })
        .collect();
    let mut opts = TableBuilderOptions::new(bytewise_internal_comparator());
    opts.block_size = 256;
    let f = crate::fs::default_fs().new_writable_file(&path).unwrap();
    let mut b = TableBuilder::new(opts, f);
    for (k, v) in &data {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap();
    let t = open_table(&path);
    let tombs = || Arc::new(FragmentedTombstones::empty(Arc::new(crate::comparator::BytewiseComparator)));
    let icmp = bytewise_internal_comparator();
    let mut it = DBIter::new(icmp.clone(), t.iter(false), tombs(), 100, None, None);
    it.seek_to_last();
    let mut kept_some = false;
    for (k, v) in data.iter().rev() {
        assert!(it.valid());
        assert_eq!(it.key(), crate::key::user_key(k));
        assert_eq!(it.value(), v.as_slice());
        // At most the block of the current value (the table iterator sits in the block
        // before it, or in the same one).
        assert!(it.pinned_count() <= 1, "{}", it.pinned_count());
        kept_some |= it.pinned_count() == 1;
        it.prev();
    }
    assert!(!it.valid());
    assert!(kept_some, "a reverse scan over many blocks never kept one");
    it.seek_to_first();
    for (k, v) in &data {
        assert_eq!(it.key(), crate::key::user_key(k));
        assert_eq!(it.value(), v.as_slice());
        assert_eq!(it.pinned_count(), 0);
        it.next();
    }
    // pin_data: every block left stays until the iterator goes.
    let mut it = DBIter::new(icmp, t.iter(false), tombs(), 100, None, None);
    it.set_pin_data(true);
    it.seek_to_last();
    let mut values = Vec::new();
    while it.valid() {
        values.push((it.value().as_ptr(), it.value().len()));
        it.prev();
    }
    let blocks = it.pinned_count();
    assert!(blocks > 20, "{blocks} blocks kept");
    for ((p, n), (_, v)) in values.iter().zip(data.iter().rev()) {
        // SAFETY: the iterator keeps every block it read while it lives (what this checks).
        assert_eq!(unsafe { std::slice::from_raw_parts(*p, *n) }, v.as_slice());
    }
    it.seek_to_first();
    it.next();
    assert!(it.pinned_count() >= blocks);
}

/// The table at `path`, opened as the table tests open one (checksums verified, no cache).
fn open_table(path: &std::path::Path) -> std::sync::Arc<crate::table::Table> {
    let fs = crate::fs::default_fs();
    let file = fs.new_random_access_file(path).unwrap();
    let size = fs.file_size(path).unwrap();
    crate::table::Table::open(
        file,
        size,
        crate::table::TableReaderOptions::standalone(
            bytewise_internal_comparator(),
            path.display().to_string(),
        ),
    )
    .unwrap()
}

// ---------------------------------------------------------------------------------------
// The timestamp mode, against a model of RocksDB's semantics (see `set_timestamps`).
// ---------------------------------------------------------------------------------------

mod timestamps {
    use super::*;
    use crate::comparator::{encode_u64_ts, U64TsComparator};
    use crate::key::InternalKeyComparator;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum TsOp {
        Put(u32, Vec<u8>),
        Del(u32),
        Merge(u32, Vec<u8>),
        /// An entity with a default column (or none) and one named column.
        Entity(u32, Option<Vec<u8>>, Vec<u8>),
        Range(u32, u32),
    }

    /// One step of the history: sequence, timestamp, operation.
    type Step = (u64, u64, TsOp);

    fn ts_icmp() -> InternalKeyComparator {
        InternalKeyComparator::new(Arc::new(U64TsComparator::bytewise()))
    }

    fn with_ts(k: u32, ts: u64) -> Vec<u8> {
        let mut v = ukey(k);
        v.extend_from_slice(&encode_u64_ts(ts));
        v
    }

    fn entity_of(default: &Option<Vec<u8>>, named: &[u8]) -> Vec<u8> {
        let mut cols: Vec<(&[u8], &[u8])> = Vec::new();
        if let Some(d) = default {
            cols.push((b"", d));
        }
        cols.push((b"col", named));
        crate::wide_columns::serialize(&cols).unwrap()
    }

    /// The internal entry a step writes (a range deletion's too).
    fn entry_of(s: u64, ts: u64, op: &TsOp) -> (Vec<u8>, Vec<u8>) {
        match op {
            TsOp::Put(k, v) => (make_internal_key(&with_ts(*k, ts), s, ValueType::Value), v.clone()),
            TsOp::Del(k) => {
                // RocksDB stores a deletion in such a family as kTypeDeletionWithTimestamp.
                let mut ik = make_internal_key(&with_ts(*k, ts), s, ValueType::Deletion);
                let n = ik.len();
                ik[n - 8] = crate::key::DELETION_WITH_TIMESTAMP;
                (ik, Vec::new())
            }
            TsOp::Merge(k, v) => (make_internal_key(&with_ts(*k, ts), s, ValueType::Merge), v.clone()),
            TsOp::Entity(k, d, c) => {
                (make_internal_key(&with_ts(*k, ts), s, ValueType::WideColumnEntity), entity_of(d, c))
            }
            TsOp::Range(a, b) => {
                (make_internal_key(&with_ts(*a, ts), s, ValueType::RangeDeletion), with_ts(*b, ts))
            }
        }
    }

    /// What the iterator yields: the key without timestamp (for positioning), `key()`,
    /// `timestamp()`, `value()`, `columns()`.
    #[derive(Debug, Clone, PartialEq)]
    struct Want {
        plain: Vec<u8>,
        key: Vec<u8>,
        ts: Vec<u8>,
        value: Vec<u8>,
        columns: Vec<(Vec<u8>, Vec<u8>)>,
    }

    struct Read {
        snap: u64,
        read_ts: u64,
        start_ts: Option<u64>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    }

    /// RocksDB's semantics, by brute force over the history: per key, its entries ordered
    /// newest timestamp first (then newest sequence), without those a visible range
    /// tombstone covers; then the newest visible one decides (or, with a start timestamp,
    /// every visible timestamp yields its newest entry); a merge operand merges with the
    /// entries below it down to a base or a deletion.
    fn model(history: &[Step], nkeys: u32, r: &Read) -> Vec<Want> {
        let mut out = Vec::new();
        for k in 0..nkeys {
            if !in_bounds(&ukey(k), &r.lower, &r.upper) {
                continue;
            }
            // (ts desc, seq desc) -> step
            let mut versions: BTreeMap<(std::cmp::Reverse<u64>, std::cmp::Reverse<u64>), &Step> =
                BTreeMap::new();
            for st in history {
                let (s, _, op) = st;
                let key = match op {
                    TsOp::Put(x, _) | TsOp::Del(x) | TsOp::Merge(x, _) | TsOp::Entity(x, _, _) => *x,
                    TsOp::Range(..) => continue,
                };
                let covered = history.iter().any(|(rs, rts, rop)| {
                    matches!(rop, TsOp::Range(a, b) if *a <= k && k < *b)
                        && *rs <= r.snap
                        && *rts <= r.read_ts
                        && *rs > *s
                });
                if key == k && !covered {
                    versions.insert((std::cmp::Reverse(st.1), std::cmp::Reverse(*s)), st);
                }
            }
            let list: Vec<&Step> = versions.values().copied().collect();
            let visible =
                |st: &Step| st.0 <= r.snap && st.1 <= r.read_ts && r.start_ts.is_none_or(|lo| st.1 >= lo);
            let mut last_ts = None;
            for (i, st) in list.iter().enumerate() {
                if !visible(st) {
                    continue;
                }
                if r.start_ts.is_some() {
                    if last_ts == Some(st.1) {
                        continue;
                    }
                    last_ts = Some(st.1);
                }
                let (ikey, raw) = entry_of(st.0, st.1, &st.2);
                let resolved: Option<(Vec<u8>, Option<Vec<u8>>)> = match &st.2 {
                    TsOp::Del(_) => r.start_ts.map(|_| (Vec::new(), None)),
                    TsOp::Put(_, v) => Some((v.clone(), None)),
                    TsOp::Entity(_, d, _) => Some((d.clone().unwrap_or_default(), Some(raw.clone()))),
                    TsOp::Merge(_, v) => {
                        let mut ops = vec![v.clone()];
                        let mut base: Option<(Vec<u8>, Option<Vec<u8>>)> = None;
                        for older in &list[i + 1..] {
                            match &older.2 {
                                TsOp::Merge(_, v) => ops.push(v.clone()),
                                TsOp::Del(_) => break,
                                TsOp::Put(_, v) => {
                                    base = Some((v.clone(), None));
                                    break;
                                }
                                TsOp::Entity(_, d, _) => {
                                    let e = entry_of(older.0, older.1, &older.2).1;
                                    base = Some((d.clone().unwrap_or_default(), Some(e)));
                                    break;
                                }
                                TsOp::Range(..) => {}
                            }
                        }
                        ops.reverse();
                        let mut v = base.as_ref().map(|b| b.0.clone()).unwrap_or_default();
                        for o in ops {
                            v.extend_from_slice(&o);
                        }
                        let e = base
                            .and_then(|b| b.1)
                            .map(|e| crate::wide_columns::with_default_column(&e, &v).unwrap());
                        Some((v, e))
                    }
                    TsOp::Range(..) => None,
                };
                if let Some((value, entity)) = resolved {
                    let columns = match &entity {
                        Some(e) => crate::wide_columns::owned_columns(e).unwrap(),
                        None => vec![(Vec::new(), value.clone())],
                    };
                    out.push(Want {
                        plain: ukey(k),
                        key: if r.start_ts.is_some() { ikey } else { ukey(k) },
                        ts: encode_u64_ts(st.1).to_vec(),
                        value,
                        columns,
                    });
                }
                if r.start_ts.is_none() {
                    break;
                }
            }
        }
        out
    }

    fn build(rng: &mut SmallRng, entries: Entries) -> BoxedIterator {
        let icmp = ts_icmp();
        match rng.gen_range(0..3) {
            0 => Box::new(VecIterator::new(entries, icmp)),
            1 => {
                // Point entries spread over a memtable (pinned values) and a vector.
                let mem = Arc::new(crate::memtable::MemTable::new(icmp.clone(), 1));
                let mut rest = Vec::new();
                for (k, v) in entries {
                    let p = parse_internal_key(&k).unwrap();
                    if p.value_type != ValueType::RangeDeletion
                        && k[k.len() - 8] != crate::key::DELETION_WITH_TIMESTAMP
                        && rng.gen_bool(0.5)
                    {
                        mem.add(p.sequence, p.value_type, p.user_key, &v);
                    } else {
                        rest.push((k, v));
                    }
                }
                let children =
                    vec![mem.iter(), Box::new(VecIterator::new(rest, icmp.clone())) as BoxedIterator];
                Box::new(MergingIterator::new(icmp, children))
            }
            _ => {
                let n = rng.gen_range(2..4);
                let mut parts: Vec<Entries> = vec![Vec::new(); n];
                for e in entries {
                    parts[rng.gen_range(0..n)].push(e);
                }
                let children = parts
                    .into_iter()
                    .map(|p| Box::new(VecIterator::new(p, icmp.clone())) as BoxedIterator)
                    .collect();
                Box::new(MergingIterator::new(icmp, children))
            }
        }
    }

    fn run_ts_case(rng: &mut SmallRng, case: usize) {
        let nkeys = rng.gen_range(1..12);
        let nops = rng.gen_range(0..70);
        let mut history: Vec<Step> = Vec::new();
        let (mut seq, mut ts) = (0u64, 1u64);
        for i in 0..nops {
            seq += rng.gen_range(1..3);
            // Timestamps grow with sequence numbers (RocksDB's assumption), sometimes equal.
            ts += rng.gen_range(0..3);
            let k = rng.gen_range(0..nkeys);
            let op = match rng.gen_range(0..20) {
                0..=5 => TsOp::Put(k, format!("v{i}").into_bytes()),
                6..=8 => TsOp::Del(k),
                9..=13 => TsOp::Merge(k, format!("m{i}").into_bytes()),
                14..=16 => TsOp::Entity(
                    k,
                    rng.gen_bool(0.7).then(|| format!("d{i}").into_bytes()),
                    format!("c{i}").into_bytes(),
                ),
                _ => TsOp::Range(k, k + rng.gen_range(1..4)),
            };
            history.push((seq, ts, op));
        }
        let ranges_in_stream = rng.gen_bool(0.5);
        let mut entries: Entries = Vec::new();
        let mut tombstones = Vec::new();
        for (s, t, op) in &history {
            let e = entry_of(*s, *t, op);
            if let TsOp::Range(..) = op {
                let start = parse_internal_key(&e.0).unwrap().user_key.to_vec();
                tombstones.push(RangeTombstone { start, end: e.1.clone(), seq: *s });
                if !ranges_in_stream {
                    continue;
                }
            }
            entries.push(e);
        }
        let icmp = ts_icmp();
        entries.sort_by(|a, b| icmp.compare(&a.0, &b.0));
        let r = Read {
            snap: if rng.gen_bool(0.7) { seq + 1 } else { rng.gen_range(0..=seq + 1) },
            read_ts: if rng.gen_bool(0.5) { ts + 1 } else { rng.gen_range(0..=ts + 1) },
            start_ts: rng.gen_bool(0.35).then(|| rng.gen_range(0..=ts + 1)),
            lower: random_bound(rng, nkeys),
            upper: random_bound(rng, nkeys),
        };
        let want = model(&history, nkeys, &r);
        let ucmp: crate::comparator::ComparatorRef = Arc::new(U64TsComparator::bytewise());
        let frag = Arc::new(FragmentedTombstones::new(ucmp.clone(), tombstones));
        let inner = build(rng, entries);
        let mut it = DBIter::new(icmp, inner, frag, r.snap, r.lower.clone(), r.upper.clone());
        it.set_merge_operator(Some(Arc::new(crate::merge::testing::Concat::full())));
        it.set_max_sequential_skip(rng.gen_range(1..10));
        it.set_timestamps(
            ucmp,
            encode_u64_ts(r.read_ts).to_vec(),
            r.start_ts.map(|t| encode_u64_ts(t).to_vec()),
        );

        let mut pos: Option<usize> = None;
        let mut trace = Vec::new();
        for _ in 0..60 {
            match rng.gen_range(0..10) {
                0 => {
                    it.seek_to_first();
                    pos = (!want.is_empty()).then_some(0);
                    trace.push("first".to_string());
                }
                1 => {
                    it.seek_to_last();
                    pos = want.len().checked_sub(1);
                    trace.push("last".to_string());
                }
                2 => {
                    let t = probe(rng, nkeys + 2);
                    it.seek(&t);
                    let p = want.partition_point(|w| w.plain.as_slice() < t.as_slice());
                    pos = (p < want.len()).then_some(p);
                    trace.push(format!("seek {}", String::from_utf8_lossy(&t)));
                }
                3 => {
                    let t = probe(rng, nkeys + 2);
                    it.seek_for_prev(&t);
                    let p = want.partition_point(|w| w.plain.as_slice() <= t.as_slice());
                    pos = p.checked_sub(1);
                    trace.push(format!("seek_for_prev {}", String::from_utf8_lossy(&t)));
                }
                4..=6 => {
                    if let Some(p) = pos {
                        it.next();
                        pos = (p + 1 < want.len()).then_some(p + 1);
                        trace.push("next".to_string());
                    }
                }
                _ => {
                    if let Some(p) = pos {
                        it.prev();
                        pos = p.checked_sub(1);
                        trace.push("prev".to_string());
                    }
                }
            }
            let ctx = || {
                format!(
                    "case {case} snap {} read_ts {} start_ts {:?} lower {:?} upper {:?}\nhistory {history:?}\nops {trace:?}\nwant {want:?}",
                    r.snap, r.read_ts, r.start_ts, r.lower, r.upper
                )
            };
            it.status().unwrap_or_else(|e| panic!("{e} {}", ctx()));
            assert_eq!(it.valid(), pos.is_some(), "{}", ctx());
            if let Some(p) = pos {
                let w = &want[p];
                assert_eq!(it.key(), &w.key[..], "{}", ctx());
                assert_eq!(it.timestamp(), &w.ts[..], "{}", ctx());
                assert_eq!(it.value(), &w.value[..], "{}", ctx());
                assert_eq!(it.columns().unwrap(), w.columns, "{}", ctx());
            }
        }
    }

    #[test]
    fn timestamp_mode_matches_model() {
        let mut rng = SmallRng::seed_from_u64(36);
        for case in 0..3000 {
            run_ts_case(&mut rng, case);
        }
    }
}
