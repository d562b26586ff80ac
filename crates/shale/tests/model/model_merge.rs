//! Model test with merge operators and a compaction filter: random puts, deletes, range
//! deletes and merges in two column families — `counters` with RocksDB's `uint64add`
//! operator, `default` with `stringappend` and a compaction filter — against a `BTreeMap`
//! model, with flushes, compactions, snapshots and reopens, tiny buffers so that operands
//! spread over memtables, level 0 and deeper levels; `counters` has `max_successive_merges`
//! 3, so some merges are written as their merged value, and a 4-byte fixed prefix extractor
//! with prefix Bloom filters (tables without whole keys, and the memtable's). Gets,
//! multi_gets, snapshot reads, iterators in both directions (with bounds and direction
//! switches) and prefix iterators (`prefix_iterator_cf`, also of absent prefixes, which the
//! filters can rule out) must match the model.
//!
//! The filter removes `drop...` values and changes `chg...` values to `changed` of the
//! `f` keys (which never receive merges). When a compaction applies it is not fixed, so
//! observations of those keys are compared after mapping both sides the same way: a
//! `drop...` value reads as absent, a `chg...` value as `changed`. An older version
//! coming back after a filtered one would still show.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{
    BlockBasedOptions, ColumnFamilyDescriptor, CompactionDecision, IteratorMode, Options, ReadOptions,
    SliceTransform, WriteBatch, DB,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const CFS: [&str; 2] = ["default", "counters"];

fn key(prefix: &str, i: u32) -> Vec<u8> {
    format!("{prefix}{i:04}").into_bytes()
}

fn base_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(16 * 1024);
    o.set_target_file_size_base(8 * 1024);
    o.set_max_bytes_for_level_base(32 * 1024);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_num_levels(4);
    o.set_compression_type(shale::DBCompressionType::None);
    o
}

fn filter(_level: u32, key: &[u8], value: &[u8]) -> CompactionDecision {
    if key.first() == Some(&b'f') && value.starts_with(b"drop") {
        CompactionDecision::Remove
    } else if key.first() == Some(&b'f') && value.starts_with(b"chg") {
        CompactionDecision::Change(b"changed")
    } else {
        CompactionDecision::Keep
    }
}

fn open(path: &std::path::Path) -> DB {
    let mut d = base_options();
    d.set_merge_operator_object(shale::merge_operators::stringappend(","));
    d.set_compaction_filter("drop-and-change", filter);
    let mut c = base_options();
    c.set_merge_operator_object(shale::merge_operators::uint64add());
    // Merges over 3 operands in the active memtable are written as values.
    c.set_max_successive_merges(3);
    // Prefixes `k000`..`k019` (ten keys each); the filters hold prefixes, not whole keys.
    c.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    c.set_memtable_prefix_bloom_ratio(0.1);
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_whole_key_filtering(false);
    c.set_block_based_table_factory(&t);
    DB::open_cf_descriptors(
        &base_options(),
        path,
        vec![ColumnFamilyDescriptor::new("default", d), ColumnFamilyDescriptor::new("counters", c)],
    )
    .unwrap()
}

/// What an observation of `k` may be compared as (see the module comment).
fn view(k: &[u8], v: Option<Vec<u8>>) -> Option<Vec<u8>> {
    match v {
        Some(v) if k.first() == Some(&b'f') && v.starts_with(b"drop") => None,
        Some(v) if k.first() == Some(&b'f') && v.starts_with(b"chg") => Some(b"changed".to_vec()),
        v => v,
    }
}

fn view_all(items: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<(Vec<u8>, Vec<u8>)> {
    items.into_iter().filter_map(|(k, v)| view(&k, Some(v)).map(|v| (k, v))).collect()
}

fn apply_merge(cf: usize, existing: Option<&Vec<u8>>, op: &[u8]) -> Vec<u8> {
    if cf == 1 {
        let e = existing.map_or(0, |e| u64::from_le_bytes(e.as_slice().try_into().unwrap_or([0; 8])));
        let o = u64::from_le_bytes(op.try_into().unwrap());
        e.wrapping_add(o).to_le_bytes().to_vec()
    } else {
        match existing {
            Some(e) => [e.as_slice(), b",", op].concat(),
            None => op.to_vec(),
        }
    }
}

fn random_key(rng: &mut SmallRng, cf: usize) -> Vec<u8> {
    if cf == 0 && rng.gen_bool(0.2) {
        key("f", rng.gen_range(0..60))
    } else {
        key("k", rng.gen_range(0..200))
    }
}

fn check_iterators(
    db: &DB,
    cf: usize,
    model: &Model,
    rng: &mut SmallRng,
    snap: Option<&shale::Snapshot<'_>>,
    ctx: &str,
) {
    let h = db.cf_handle(CFS[cf]).unwrap();
    let (lo, hi) = if rng.gen_bool(0.5) {
        let a = rng.gen_range(0..200);
        let b = rng.gen_range(a..210);
        (rng.gen_bool(0.7).then(|| key("k", a)), rng.gen_bool(0.7).then(|| key("k", b)))
    } else {
        (None, None)
    };
    let ro = || {
        let mut ro = ReadOptions::default();
        // Scans across prefixes in the counters family: as in RocksDB, only a total-order
        // iterator is defined there once a prefix extractor is set.
        ro.set_total_order_seek(true);
        if let Some(l) = &lo {
            ro.set_iterate_lower_bound(l.clone());
        }
        if let Some(h) = &hi {
            ro.set_iterate_upper_bound(h.clone());
        }
        if let Some(s) = snap {
            ro.set_snapshot(s);
        }
        ro
    };
    let want: Vec<(Vec<u8>, Vec<u8>)> = view_all(
        model
            .iter()
            .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l) && hi.as_ref().is_none_or(|h| *k < h))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    let fwd: Vec<(Vec<u8>, Vec<u8>)> = db
        .iterator_cf_opt(&h, ro(), IteratorMode::Start)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    assert_eq!(view_all(fwd), want, "{ctx}: forward scan of {} {lo:?}..{hi:?}", CFS[cf]);
    let mut rev: Vec<(Vec<u8>, Vec<u8>)> = db
        .iterator_cf_opt(&h, ro(), IteratorMode::End)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    rev.reverse();
    assert_eq!(view_all(rev), want, "{ctx}: reverse scan of {}", CFS[cf]);

    // Seeks and walks that switch direction, over the keys the view keeps.
    let mut it = db.raw_iterator_cf_opt(&h, ro());
    for _ in 0..3 {
        let target = key("k", rng.gen_range(0..210));
        let forward = rng.gen_bool(0.5);
        let mut pos: Option<usize> = if forward {
            it.seek(&target);
            let p = want.partition_point(|(k, _)| k.as_slice() < target.as_slice());
            (p < want.len()).then_some(p)
        } else {
            it.seek_for_prev(&target);
            let p = want.partition_point(|(k, _)| k.as_slice() <= target.as_slice());
            p.checked_sub(1)
        };
        // Direction switches in the counters family; in `default`, whose filtered `f` keys
        // the view hides, walks keep the seek's direction and step over hidden entries.
        let mut dir_fwd = forward;
        for step in 0..8 {
            while it.valid() && view(it.key().unwrap(), Some(it.value().unwrap().to_vec())).is_none() {
                if dir_fwd {
                    it.next()
                } else {
                    it.prev()
                }
            }
            match pos {
                Some(p) => {
                    assert!(
                        it.valid(),
                        "{ctx}: iterator invalid, model at {:?} (step {step}): {:?}",
                        want[p].0,
                        it.status()
                    );
                    assert_eq!(it.key().unwrap(), want[p].0.as_slice(), "{ctx}: key at step {step}");
                    assert_eq!(
                        view(it.key().unwrap(), Some(it.value().unwrap().to_vec())).as_deref(),
                        Some(want[p].1.as_slice()),
                        "{ctx}: value at step {step}"
                    );
                }
                None => {
                    assert!(!it.valid(), "{ctx}: iterator valid at {:?}, model exhausted", it.key());
                    break;
                }
            }
            dir_fwd = if cf == 1 { rng.gen_bool(0.6) } else { forward };
            if dir_fwd {
                it.next();
                pos = pos.and_then(|p| (p + 1 < want.len()).then_some(p + 1));
            } else {
                it.prev();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
        }
        it.status().unwrap();
    }
}

/// A prefix iterator of the counters family over a random 4-byte prefix (present or absent,
/// `k050`.. holds no key) yields exactly the model's keys with that prefix, in order.
fn check_prefix(db: &DB, model: &Model, rng: &mut SmallRng, ctx: &str) {
    let h = db.cf_handle(CFS[1]).unwrap();
    let prefix = format!("k0{:02}", rng.gen_range(0..60)).into_bytes();
    let want: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().filter(|(k, _)| k.starts_with(&prefix)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let got: Vec<(Vec<u8>, Vec<u8>)> = db
        .prefix_iterator_cf(&h, &prefix)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .take_while(|(k, _)| k.starts_with(&prefix))
        .collect();
    assert_eq!(got, want, "{ctx}: prefix iterator of {:?}", String::from_utf8_lossy(&prefix));
}

fn run(seed: u64, ops: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut models: [Model; 2] = [Model::new(), Model::new()];
    let mut done = 0;
    let mut epoch = 0;
    while done < ops {
        epoch += 1;
        let db = open(&path);
        for (cf, model) in models.iter().enumerate() {
            check_iterators(&db, cf, model, &mut rng, None, &format!("seed {seed} reopen {epoch}"));
        }
        let mut snaps: Vec<(shale::Snapshot<'_>, [Model; 2])> = Vec::new();
        let epoch_len = rng.gen_range(300..1200);
        for _ in 0..epoch_len {
            done += 1;
            let ctx = format!("seed {seed} op {done}");
            let cf = rng.gen_range(0..2);
            let h = db.cf_handle(CFS[cf]).unwrap();
            let model = &mut models[cf];
            match rng.gen_range(0..100) {
                0..=19 => {
                    let k = random_key(&mut rng, cf);
                    let v = if cf == 1 {
                        rng.gen_range(0..1000u64).to_le_bytes().to_vec()
                    } else if k[0] == b'f' {
                        let tag = ["drop", "chg", "keep"][rng.gen_range(0..3)];
                        format!("{tag}{done}").into_bytes()
                    } else {
                        format!("p{done}").into_bytes()
                    };
                    db.put_cf(&h, &k, &v).unwrap();
                    model.insert(k, v);
                }
                20..=49 => {
                    let k = key("k", rng.gen_range(0..200));
                    let op = if cf == 1 {
                        rng.gen_range(1..100u64).to_le_bytes().to_vec()
                    } else {
                        format!("m{done}").into_bytes()
                    };
                    db.merge_cf(&h, &k, &op).unwrap();
                    let nv = apply_merge(cf, model.get(&k), &op);
                    model.insert(k, nv);
                }
                50..=55 => {
                    let k = random_key(&mut rng, cf);
                    db.delete_cf(&h, &k).unwrap();
                    model.remove(&k);
                }
                56..=57 => {
                    let a = rng.gen_range(0..200);
                    let b = a + rng.gen_range(1..20);
                    db.delete_range_cf(&h, key("k", a), key("k", b)).unwrap();
                    let doomed: Vec<Vec<u8>> =
                        model.range(key("k", a)..key("k", b)).map(|(k, _)| k.clone()).collect();
                    for k in doomed {
                        model.remove(&k);
                    }
                }
                58..=61 => {
                    // A batch mixing puts, merges and deletes.
                    let mut b = WriteBatch::default();
                    let mut staged = model.clone();
                    for _ in 0..rng.gen_range(1..10) {
                        let k = key("k", rng.gen_range(0..200));
                        let op = if cf == 1 {
                            1u64.to_le_bytes().to_vec()
                        } else {
                            format!("b{done}").into_bytes()
                        };
                        match rng.gen_range(0..3) {
                            0 => {
                                b.merge_cf(&h, &k, &op);
                                let nv = apply_merge(cf, staged.get(&k), &op);
                                staged.insert(k, nv);
                            }
                            1 => {
                                b.put_cf(&h, &k, &op);
                                staged.insert(k, op);
                            }
                            _ => {
                                b.delete_cf(&h, &k);
                                staged.remove(&k);
                            }
                        }
                    }
                    db.write(b).unwrap();
                    *model = staged;
                }
                62..=73 => {
                    let k = random_key(&mut rng, cf);
                    assert_eq!(
                        view(&k, db.get_cf(&h, &k).unwrap()),
                        view(&k, model.get(&k).cloned()),
                        "{ctx}: get {k:?} in {}",
                        CFS[cf]
                    );
                    let pinned = db.get_pinned_cf(&h, &k).unwrap().map(|p| p.to_vec());
                    assert_eq!(view(&k, pinned), view(&k, model.get(&k).cloned()), "{ctx}: get_pinned {k:?}");
                }
                74..=75 => {
                    let keys: Vec<Vec<u8>> = (0..5).map(|_| random_key(&mut rng, cf)).collect();
                    let got = db.multi_get_cf(keys.iter().map(|k| (&h, k)));
                    for (k, g) in keys.iter().zip(got) {
                        assert_eq!(
                            view(k, g.unwrap()),
                            view(k, model.get(k).cloned()),
                            "{ctx}: multi_get {k:?}"
                        );
                    }
                }
                76..=78 => {
                    if snaps.len() >= 3 {
                        snaps.remove(0);
                    }
                    snaps.push((db.snapshot(), models.clone()));
                }
                79..=83 => {
                    if let Some(i) = (!snaps.is_empty()).then(|| rng.gen_range(0..snaps.len())) {
                        let (s, m) = &snaps[i];
                        let k = random_key(&mut rng, cf);
                        let mut ro = ReadOptions::default();
                        ro.set_snapshot(s);
                        assert_eq!(
                            view(&k, db.get_cf_opt(&h, &k, &ro).unwrap()),
                            view(&k, m[cf].get(&k).cloned()),
                            "{ctx}: snapshot get {k:?} in {}",
                            CFS[cf]
                        );
                        check_iterators(&db, cf, &m[cf], &mut rng, Some(s), &format!("{ctx} snapshot"));
                    }
                }
                84..=88 => {
                    check_iterators(&db, cf, &models[cf], &mut rng, None, &ctx);
                    check_prefix(&db, &models[1], &mut rng, &ctx);
                }
                89..=91 => db.flush_cf(&h).unwrap(),
                92..=93 => {
                    let a = rng.gen_range(0..200);
                    let b = a + rng.gen_range(1..100);
                    db.try_compact_range_cf(&h, Some(key("k", a)), Some(key("k", b))).unwrap();
                }
                94..=95 => db.try_compact_range_cf(&h, None::<&[u8]>, None::<&[u8]>).unwrap(),
                _ => {
                    let k = random_key(&mut rng, cf);
                    let got = view(&k, db.get_cf(&h, &k).unwrap());
                    assert_eq!(got, view(&k, model.get(&k).cloned()), "{ctx}: get {k:?}");
                }
            }
        }
        drop(snaps);
        drop(db);
    }
    // The last state, read after a full compaction of both families and a reopen.
    let db = open(&path);
    for (cf, model) in models.iter().enumerate() {
        let h = db.cf_handle(CFS[cf]).unwrap();
        db.try_compact_range_cf(&h, None::<&[u8]>, None::<&[u8]>).unwrap();
        let all: Vec<(Vec<u8>, Vec<u8>)> = db
            .iterator_cf(&h, IteratorMode::Start)
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect();
        let want = view_all(model.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        assert_eq!(view_all(all.clone()), want, "seed {seed}: final scan of {}", CFS[cf]);
        // With no snapshot, the full compaction applied the filter to every `f` key.
        for (k, v) in &all {
            if k[0] == b'f' {
                assert!(!v.starts_with(b"drop") && !v.starts_with(b"chg"), "seed {seed}: {k:?} kept {v:?}");
            }
        }
    }
}

#[test]
fn merge_model_seed_1() {
    run(1, 3000);
}

#[test]
fn merge_model_seed_2() {
    run(2, 3000);
}

#[test]
fn merge_model_seed_3() {
    run(3, 3000);
}

#[test]
fn merge_model_seed_4() {
    run(4, 3000);
}
