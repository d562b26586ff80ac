//! Model test of refreshing iterators (issue 13): random interleavings of iterator steps in
//! both directions, seeks, refreshes (to a new snapshot and to the latest data), writes
//! (puts, deletes, range deletions), flushes, compactions and reopens, with and without
//! `auto_refresh_iterator_with_snapshot`, against a `BTreeMap` model of what the iterator's
//! snapshot sees. Tiny write buffers and files make memtable switches, flushes and
//! background compactions (each a new SuperVersion) happen under the iterator all the time.
//! Half the runs iterate within random bounds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::ops::Bound;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{DBCompressionType, Options, ReadOptions, DB};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const KEYS: u32 = 400;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(16 * 1024);
    o.set_target_file_size_base(8 * 1024);
    o.set_max_bytes_for_level_base(32 * 1024);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_num_levels(4);
    o.set_compression_type(DBCompressionType::None);
    o
}

/// What the iterator sees: the snapshot's model within the bounds.
struct View {
    data: Model,
    lower: Option<Vec<u8>>,
}

impl View {
    fn new(model: &Model, lower: &Option<Vec<u8>>, upper: &Option<Vec<u8>>) -> View {
        let data = model
            .iter()
            .filter(|(k, _)| lower.as_ref().is_none_or(|l| *k >= l) && upper.as_ref().is_none_or(|u| *k < u))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        View { data, lower: lower.clone() }
    }

    fn first_at_or_after(&self, k: &[u8]) -> Option<Vec<u8>> {
        let k = match &self.lower {
            Some(l) if k < l.as_slice() => l.as_slice(),
            _ => k,
        };
        self.data.range::<[u8], _>((Bound::Included(k), Bound::Unbounded)).next().map(|(k, _)| k.clone())
    }

    fn last_at_or_before(&self, k: &[u8]) -> Option<Vec<u8>> {
        self.data.range::<[u8], _>((Bound::Unbounded, Bound::Included(k))).next_back().map(|(k, _)| k.clone())
    }

    fn after(&self, k: &[u8]) -> Option<Vec<u8>> {
        self.data.range::<[u8], _>((Bound::Excluded(k), Bound::Unbounded)).next().map(|(k, _)| k.clone())
    }

    fn before(&self, k: &[u8]) -> Option<Vec<u8>> {
        self.data.range::<[u8], _>((Bound::Unbounded, Bound::Excluded(k))).next_back().map(|(k, _)| k.clone())
    }
}

fn random_bounds(rng: &mut SmallRng) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    if rng.gen_bool(0.5) {
        return (None, None);
    }
    let a = rng.gen_range(0..KEYS / 2);
    let b = rng.gen_range(KEYS / 2..KEYS + 10);
    (rng.gen_bool(0.7).then(|| key(a)), rng.gen_bool(0.7).then(|| key(b)))
}

fn read_options(
    snapshot: &shale::Snapshot<'_>,
    auto: bool,
    bounds: &(Option<Vec<u8>>, Option<Vec<u8>>),
) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_snapshot(snapshot);
    ro.set_auto_refresh_iterator_with_snapshot(auto);
    if let Some(l) = &bounds.0 {
        ro.set_iterate_lower_bound(l.clone());
    }
    if let Some(u) = &bounds.1 {
        ro.set_iterate_upper_bound(u.clone());
    }
    ro
}

fn run(seed: u64, auto: bool, ops: usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut model = Model::new();
    let mut done = 0usize;
    let mut super_versions_seen = 0u64;
    while done < ops {
        // One epoch: the database open, one iterator over it until a reopen.
        let db = DB::open(&options(), dir.path()).unwrap();
        let bounds = random_bounds(&mut rng);
        let mut snapshots = vec![db.snapshot()];
        let mut view = View::new(&model, &bounds.0, &bounds.1);
        let mut it = db.raw_iterator_opt(read_options(&snapshots[0], auto, &bounds));
        let mut pos: Option<Vec<u8>> = None;
        let sv_start = db.property_int_value("rocksdb.current-super-version-number").unwrap().unwrap();
        while done < ops {
            done += 1;
            let ctx = format!("seed {seed} auto {auto} op {done}");
            let roll = rng.gen_range(0..100);
            let mut moved = true;
            match roll {
                0..=29 => {
                    let k = key(rng.gen_range(0..KEYS));
                    let v = format!("v{done}-{}", "x".repeat(rng.gen_range(0..200))).into_bytes();
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                    moved = false;
                }
                30..=34 => {
                    let k = key(rng.gen_range(0..KEYS));
                    db.delete(&k).unwrap();
                    model.remove(&k);
                    moved = false;
                }
                35 => {
                    let a = rng.gen_range(0..KEYS);
                    let b = (a + rng.gen_range(1..20)).min(KEYS);
                    db.delete_range(key(a), key(b)).unwrap();
                    let dead: Vec<_> = model.range(key(a)..key(b)).map(|(k, _)| k.clone()).collect();
                    for k in dead {
                        model.remove(&k);
                    }
                    moved = false;
                }
                36..=37 => {
                    db.flush().unwrap();
                    moved = false;
                }
                38 => {
                    let a = rng.gen_range(0..KEYS);
                    let b = rng.gen_range(a..KEYS);
                    db.compact_range(Some(key(a)), Some(key(b)));
                    moved = false;
                }
                39..=61 => {
                    if pos.is_some() {
                        it.next();
                        pos = view.after(pos.as_deref().unwrap());
                    } else {
                        moved = false;
                    }
                }
                62..=84 => {
                    if pos.is_some() {
                        it.prev();
                        pos = view.before(pos.as_deref().unwrap());
                    } else {
                        moved = false;
                    }
                }
                85..=88 => {
                    let k = key(rng.gen_range(0..KEYS + 5));
                    it.seek(&k);
                    pos = view.first_at_or_after(&k);
                }
                89..=92 => {
                    let k = key(rng.gen_range(0..KEYS + 5));
                    it.seek_for_prev(&k);
                    pos = view.last_at_or_before(&k);
                }
                93 => {
                    it.seek_to_first();
                    pos = view.data.keys().next().cloned();
                }
                94 => {
                    it.seek_to_last();
                    pos = view.data.keys().next_back().cloned();
                }
                95..=96 => {
                    // Refresh to a new snapshot: the view moves to the model of now.
                    let s = db.snapshot();
                    it.refresh_with_snapshot(&s).unwrap();
                    view = View::new(&model, &bounds.0, &bounds.1);
                    if rng.gen_bool(0.5) && snapshots.len() > 1 {
                        // The older snapshot may go: the iterator no longer reads it.
                        snapshots.remove(0);
                    }
                    snapshots.push(s);
                    assert!(!it.valid(), "{ctx}: unpositioned after refresh");
                    pos = None;
                }
                97 => {
                    // Refresh to the latest data (the snapshot no longer applies; the view
                    // is the model of now, fixed from here on).
                    it.refresh().unwrap();
                    view = View::new(&model, &bounds.0, &bounds.1);
                    assert!(!it.valid(), "{ctx}: unpositioned after refresh");
                    pos = None;
                }
                98 => {
                    // Back to a fresh iterator at a new snapshot (auto-refresh again).
                    drop(it);
                    snapshots.push(db.snapshot());
                    view = View::new(&model, &bounds.0, &bounds.1);
                    it = db.raw_iterator_opt(read_options(snapshots.last().unwrap(), auto, &bounds));
                    pos = None;
                    moved = false;
                }
                _ => break,
            }
            if moved {
                it.status().unwrap_or_else(|e| panic!("{ctx}: {e}"));
                match &pos {
                    None => assert!(!it.valid(), "{ctx}: valid at {:?}, expected the end", it.key()),
                    Some(k) => {
                        assert!(it.valid(), "{ctx}: ended, expected {}", String::from_utf8_lossy(k));
                        assert_eq!(it.key(), Some(k.as_slice()), "{ctx}: key");
                        assert_eq!(it.value(), Some(view.data[k].as_slice()), "{ctx}: value");
                    }
                }
            }
        }
        let sv_end = db.property_int_value("rocksdb.current-super-version-number").unwrap().unwrap();
        super_versions_seen += sv_end - sv_start;
        drop(it);
    }
    assert!(
        super_versions_seen > 20,
        "seed {seed}: only {super_versions_seen} SuperVersions under the iterator"
    );
}

#[test]
fn model_with_auto_refresh() {
    for seed in 0..4 {
        run(seed, true, 2500);
    }
}

#[test]
fn model_without_auto_refresh() {
    for seed in 100..104 {
        run(seed, false, 2500);
    }
}
