//! Model test: thousands of random operations against a `BTreeMap`, with tiny write
//! buffers and file sizes so that many files and levels form. Every observation — gets,
//! snapshot reads, iterators in both directions with bounds and direction switches — must
//! match the model, across flushes, compactions and reopen. It runs under leveled, universal
//! and FIFO compaction (FIFO's size bound large enough to delete nothing), and with the style
//! switched at every reopen.
//! The blob seeds run the same with integrated BlobDB (values in blob files, garbage
//! collection in compactions).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::ops::Bound;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{
    DBCompactionStyle, Direction, FifoCompactOptions, IteratorMode, Options, ReadOptions,
    UniversalCompactOptions, WriteBatch, DB,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(32 * 1024);
    o.set_target_file_size_base(16 * 1024);
    o.set_max_bytes_for_level_base(64 * 1024);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_num_levels(5);
    o.set_compression_type(shale::DBCompressionType::None);
    o
}

fn styled(base: fn() -> Options, style: DBCompactionStyle) -> Options {
    let mut o = base();
    o.set_compaction_style(style);
    match style {
        DBCompactionStyle::Universal => {
            let mut u = UniversalCompactOptions::default();
            u.set_max_size_amplification_percent(150);
            o.set_universal_compaction_options(&u);
        }
        DBCompactionStyle::Fifo => {
            let mut f = FifoCompactOptions::default();
            f.set_max_table_files_size(1 << 40);
            f.set_allow_compaction(true);
            o.set_fifo_compaction_options(&f);
        }
        DBCompactionStyle::Level => {}
    }
    o
}

fn range_of<'a>(m: &'a Model, lo: &Option<Vec<u8>>, hi: &Option<Vec<u8>>) -> Vec<(&'a Vec<u8>, &'a Vec<u8>)> {
    let lb = lo.as_ref().map_or(Bound::Unbounded, |k| Bound::Included(k.clone()));
    let ub = hi.as_ref().map_or(Bound::Unbounded, |k| Bound::Excluded(k.clone()));
    if let (Some(l), Some(h)) = (lo, hi) {
        if l >= h {
            return Vec::new();
        }
    }
    m.range((lb, ub)).collect()
}

fn check_iterators(
    db: &DB,
    model: &Model,
    rng: &mut SmallRng,
    snap: Option<&shale::Snapshot<'_>>,
    ctx: &str,
) {
    let (lo, hi) = if rng.gen_bool(0.5) {
        let a = rng.gen_range(0..600);
        let b = rng.gen_range(a..620);
        (rng.gen_bool(0.7).then(|| key(a)), rng.gen_bool(0.7).then(|| key(b)))
    } else {
        (None, None)
    };
    let ro = || {
        let mut ro = ReadOptions::default();
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
    let expect = range_of(model, &lo, &hi);
    let fwd: Vec<(Vec<u8>, Vec<u8>)> = db
        .iterator_opt(IteratorMode::Start, ro())
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = expect.iter().map(|(k, v)| ((*k).clone(), (*v).clone())).collect();
    assert_eq!(fwd.len(), want.len(), "{ctx}: forward scan length, bounds {lo:?}..{hi:?}");
    assert_eq!(fwd, want, "{ctx}: forward scan");
    let mut rev: Vec<(Vec<u8>, Vec<u8>)> = db
        .iterator_opt(IteratorMode::End, ro())
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    rev.reverse();
    assert_eq!(rev, want, "{ctx}: reverse scan");

    // Random seeks with a walk that switches direction.
    let mut it = db.raw_iterator_opt(ro());
    for _ in 0..4 {
        let target = key(rng.gen_range(0..620));
        let forward = rng.gen_bool(0.5);
        let mut pos: Option<usize> = if forward {
            it.seek(&target);
            let p = expect.partition_point(|(k, _)| k.as_slice() < target.as_slice());
            (p < expect.len()).then_some(p)
        } else {
            it.seek_for_prev(&target);
            let p = expect.partition_point(|(k, _)| k.as_slice() <= target.as_slice());
            p.checked_sub(1)
        };
        for step in 0..8 {
            match pos {
                Some(p) => {
                    assert!(it.valid(), "{ctx}: iterator invalid, model at {:?} (step {step})", expect[p].0);
                    assert_eq!(it.key().unwrap(), expect[p].0.as_slice(), "{ctx}: key at step {step}");
                    assert_eq!(it.value().unwrap(), expect[p].1.as_slice(), "{ctx}: value at step {step}");
                }
                None => {
                    assert!(!it.valid(), "{ctx}: iterator valid at {:?}, model exhausted", it.key());
                    break;
                }
            }
            if rng.gen_bool(0.6) {
                it.next();
                pos = pos.and_then(|p| (p + 1 < expect.len()).then_some(p + 1));
            } else {
                it.prev();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
        }
        it.status().unwrap();
    }
}

fn run(seed: u64, ops: usize) {
    run_with(seed, ops, options, &[DBCompactionStyle::Level]);
}

/// Integrated BlobDB: values of 64 bytes and up go to small blob files (LZ4), garbage
/// collection relocates the older half at every compaction.
fn blob_options() -> Options {
    let mut o = options();
    o.set_enable_blob_files(true);
    o.set_min_blob_size(64);
    o.set_blob_file_size(8 * 1024);
    o.set_blob_compression_type(shale::DBCompressionType::Lz4);
    o.set_enable_blob_gc(true);
    o.set_blob_gc_age_cutoff(0.5);
    o
}

/// The model run on `base`'s options; each reopen uses the next style of `styles` (round robin).
fn run_with(seed: u64, ops: usize, base: fn() -> Options, styles: &[DBCompactionStyle]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut model = Model::new();
    let mut done = 0;
    let mut epoch = 0;
    while done < ops {
        epoch += 1;
        let db = DB::open(&styled(base, styles[(epoch - 1) % styles.len()]), &path).unwrap();
        // Everything acknowledged before the reopen is there.
        check_iterators(&db, &model, &mut rng, None, &format!("seed {seed} reopen {epoch}"));
        let mut snaps: Vec<(shale::Snapshot<'_>, Model)> = Vec::new();
        let epoch_len = rng.gen_range(200..1200);
        for _ in 0..epoch_len {
            done += 1;
            let ctx = format!("seed {seed} op {done}");
            match rng.gen_range(0..100) {
                0..=39 => {
                    let k = key(rng.gen_range(0..600));
                    let v = format!("v{done}-{}", "x".repeat(rng.gen_range(0..200))).into_bytes();
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
                40..=49 => {
                    let k = key(rng.gen_range(0..600));
                    db.delete(&k).unwrap();
                    model.remove(&k);
                }
                50..=52 => {
                    let a = rng.gen_range(0..600);
                    let b = a + rng.gen_range(1..40);
                    db.delete_range(key(a), key(b)).unwrap();
                    let doomed: Vec<Vec<u8>> = model.range(key(a)..key(b)).map(|(k, _)| k.clone()).collect();
                    for k in doomed {
                        model.remove(&k);
                    }
                }
                53..=59 => {
                    let mut b = WriteBatch::default();
                    let mut staged = model.clone();
                    for _ in 0..rng.gen_range(1..20) {
                        let k = key(rng.gen_range(0..600));
                        if rng.gen_bool(0.8) {
                            let v = format!("b{done}").into_bytes();
                            b.put(&k, &v);
                            staged.insert(k, v);
                        } else {
                            b.delete(&k);
                            staged.remove(&k);
                        }
                    }
                    db.write(b).unwrap();
                    model = staged;
                }
                60..=74 => {
                    let k = key(rng.gen_range(0..620));
                    assert_eq!(db.get(&k).unwrap(), model.get(&k).cloned(), "{ctx}: get {k:?}");
                }
                75..=77 => {
                    if snaps.len() >= 3 {
                        snaps.remove(0);
                    }
                    snaps.push((db.snapshot(), model.clone()));
                }
                78..=82 => {
                    if let Some(i) = (!snaps.is_empty()).then(|| rng.gen_range(0..snaps.len())) {
                        let (s, m) = &snaps[i];
                        let k = key(rng.gen_range(0..620));
                        assert_eq!(s.get(&k).unwrap(), m.get(&k).cloned(), "{ctx}: snapshot get {k:?}");
                        check_iterators(&db, m, &mut rng, Some(s), &format!("{ctx} snapshot"));
                    }
                }
                83..=88 => check_iterators(&db, &model, &mut rng, None, &ctx),
                89..=90 => db.flush().unwrap(),
                91 => {
                    let a = rng.gen_range(0..600);
                    let b = a + rng.gen_range(1..200);
                    db.try_compact_range_cf(db.cf_handle("default").unwrap(), Some(key(a)), Some(key(b)))
                        .unwrap();
                }
                92 => db
                    .try_compact_range_cf(db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>)
                    .unwrap(),
                _ => {
                    let mut it =
                        db.iterator(IteratorMode::From(&key(rng.gen_range(0..600)), Direction::Forward));
                    if let Some(r) = it.next() {
                        let (k, v) = r.unwrap();
                        assert_eq!(model.get(k.as_ref()).map(|v| v.as_slice()), Some(v.as_ref()), "{ctx}");
                    }
                }
            }
        }
        let files: u64 = (0..5)
            .map(|l| db.property_int_value(format!("rocksdb.num-files-at-level{l}")).unwrap().unwrap())
            .sum();
        assert!(files > 0 || model.is_empty() || done < 300, "seed {seed}: no tables formed");
        drop(snaps);
        drop(db);
    }
}

#[test]
fn model_seed_1() {
    run(1, 4000);
}

#[test]
fn model_seed_2() {
    run(2, 4000);
}

#[test]
fn model_seed_3() {
    run(3, 4000);
}

#[test]
fn model_universal_seed_1() {
    run_with(1, 4000, options, &[DBCompactionStyle::Universal]);
}

#[test]
fn model_universal_seed_4() {
    run_with(4, 4000, options, &[DBCompactionStyle::Universal]);
}

#[test]
fn model_fifo_seed_1() {
    run_with(1, 3000, options, &[DBCompactionStyle::Fifo]);
}

#[test]
fn model_fifo_seed_5() {
    run_with(5, 3000, options, &[DBCompactionStyle::Fifo]);
}

/// The style changes at every reopen: level, universal, FIFO, level... (RocksDB opens a
/// database written under any style with any other).
#[test]
fn model_styles_switched_at_reopen() {
    let all = [DBCompactionStyle::Level, DBCompactionStyle::Universal, DBCompactionStyle::Fifo];
    run_with(6, 6000, options, &all);
    run_with(7, 6000, options, &[DBCompactionStyle::Universal, DBCompactionStyle::Level]);
}

#[test]
fn model_blob_seed_1() {
    run_with(11, 4000, blob_options, &[DBCompactionStyle::Level]);
}

#[test]
fn model_blob_seed_2() {
    run_with(12, 4000, blob_options, &[DBCompactionStyle::Level]);
}

#[test]
fn model_blob_seed_3() {
    run_with(13, 4000, blob_options, &[DBCompactionStyle::Level]);
}

#[test]
fn model_many_levels_form() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(), dir.path()).unwrap();
    for i in 0..20000u32 {
        db.put(key(i % 5000), vec![b'v'; 100 + (i % 7) as usize]).unwrap();
    }
    db.flush().unwrap();
    // Let background compaction settle (however long a loaded machine takes), then check
    // that data spread over levels.
    db.wait_for_compact(&shale::WaitForCompactOptions::default()).unwrap();
    let deep: u64 = (1..5)
        .map(|l| db.property_int_value(format!("rocksdb.num-files-at-level{l}")).unwrap().unwrap())
        .sum();
    assert!(deep > 1, "expected files below level 0, stats: {:?}", db.property_value("rocksdb.stats"));
    for i in (0..5000u32).step_by(97) {
        assert_eq!(db.get(key(i)).unwrap().map(|v| v.len()), Some(100 + ((15000 + i) % 7) as usize));
    }
}
