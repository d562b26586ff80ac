//! Model test of user-defined timestamps (docs/timestamps.md): random puts and deletes at
//! increasing u64 timestamps (RocksDB's built-in `leveldb.BytewiseComparator.u64ts`, and
//! rust-rocksdb's `set_comparator_with_ts` with the same ordering in Rust functions) against
//! a `BTreeMap` of every version. Reads at random timestamps (`get`, `multi_get`, iterators
//! in both directions with bounds, `iter_start_ts` listing every version) must match the
//! model across flushes, compactions and reopen; raising `full_history_ts_low` makes reads
//! below it fail and lets compaction collect versions no read can see any more, while reads
//! at or above it still match. Several seeds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{IteratorMode, Options, ReadOptions, U64TsComparator, DB};

/// key -> ts -> value (None: a deletion).
type Model = BTreeMap<Vec<u8>, BTreeMap<u64, Option<Vec<u8>>>>;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn options(builtin: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(16 * 1024);
    o.set_target_file_size_base(8 * 1024);
    o.set_max_bytes_for_level_base(32 * 1024);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_num_levels(4);
    o.set_compression_type(shale::DBCompressionType::None);
    if builtin {
        o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    } else {
        fn strip(k: &[u8]) -> &[u8] {
            &k[..k.len() - 8]
        }
        fn ts_of(k: &[u8]) -> u64 {
            u64::from_le_bytes(k[k.len() - 8..].try_into().unwrap())
        }
        o.set_comparator_with_ts(
            "model.U64Comparator",
            8,
            Box::new(|a: &[u8], b: &[u8]| strip(a).cmp(strip(b)).then(ts_of(b).cmp(&ts_of(a)))),
            Box::new(|a: &[u8], b: &[u8]| {
                u64::from_le_bytes(a.try_into().unwrap()).cmp(&u64::from_le_bytes(b.try_into().unwrap()))
            }),
            Box::new(|a: &[u8], a_ts: bool, b: &[u8], b_ts: bool| {
                let a = if a_ts { strip(a) } else { a };
                let b = if b_ts { strip(b) } else { b };
                a.cmp(b)
            }),
        );
    }
    o
}

/// The newest version of `k` at or before `t`: Some((ts, value)) if it is a live value.
fn model_get(m: &Model, k: &[u8], t: u64) -> Option<(u64, Vec<u8>)> {
    let versions = m.get(k)?;
    let (vt, v) = versions.range(..=t).next_back()?;
    v.clone().map(|v| (*vt, v))
}

/// What a plain iterator at `t` yields, in order: (key, ts, value).
fn model_scan(m: &Model, t: u64, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    m.keys()
        .filter(|k| lo.is_none_or(|l| k.as_slice() >= l) && hi.is_none_or(|h| k.as_slice() < h))
        .filter_map(|k| model_get(m, k, t).map(|(vt, v)| (k.clone(), vt, v)))
        .collect()
}

fn read_opts(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    ro
}

fn scan(
    db: &DB,
    t: u64,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
    reverse: bool,
) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    let mut ro = read_opts(t);
    if let Some(l) = lo {
        ro.set_iterate_lower_bound(l.to_vec());
    }
    if let Some(h) = hi {
        ro.set_iterate_upper_bound(h.to_vec());
    }
    let mut it = db.raw_iterator_opt(ro);
    let mut out = Vec::new();
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while it.valid() {
        let vt = u64::from_le_bytes(it.timestamp().unwrap().try_into().unwrap());
        out.push((it.key().unwrap().to_vec(), vt, it.value().unwrap().to_vec()));
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status().unwrap();
    if reverse {
        out.reverse();
    }
    out
}

fn check(db: &DB, m: &Model, rng: &mut SmallRng, now: u64, low: u64, ctx: &str) {
    for _ in 0..20 {
        let t = rng.gen_range(low..=now + 2);
        let k = key(rng.gen_range(0..130));
        let got = db.get_opt(&k, &read_opts(t)).unwrap();
        assert_eq!(got, model_get(m, &k, t).map(|(_, v)| v), "{ctx}: get {k:?} at {t}");
    }
    let t = rng.gen_range(low..=now + 2);
    let keys: Vec<Vec<u8>> = (0..8).map(|_| key(rng.gen_range(0..130))).collect();
    let got: Vec<Option<Vec<u8>>> =
        db.multi_get_opt(keys.iter(), &read_opts(t)).into_iter().map(|r| r.unwrap()).collect();
    let want: Vec<Option<Vec<u8>>> = keys.iter().map(|k| model_get(m, k, t).map(|(_, v)| v)).collect();
    assert_eq!(got, want, "{ctx}: multi_get at {t}");

    let t = rng.gen_range(low..=now + 2);
    let (lo, hi) = if rng.gen_bool(0.5) {
        let a = rng.gen_range(0..120);
        (Some(key(a)), Some(key(rng.gen_range(a..135))))
    } else {
        (None, None)
    };
    // A version below full_history_ts_low that a bottommost compaction wrote may read with
    // the minimum timestamp, 0 (RocksDB's CompactionIterator::PrepareOutput zeroes it with
    // the sequence): both sides show such versions' timestamps as 0.
    let collapse = |v: Vec<(Vec<u8>, u64, Vec<u8>)>| -> Vec<(Vec<u8>, u64, Vec<u8>)> {
        v.into_iter().map(|(k, vt, val)| (k, if vt < low { 0 } else { vt }, val)).collect()
    };
    let want = collapse(model_scan(m, t, lo.as_deref(), hi.as_deref()));
    let scan =
        |db: &DB, t, lo: Option<&[u8]>, hi: Option<&[u8]>, reverse| collapse(scan(db, t, lo, hi, reverse));
    assert_eq!(
        scan(db, t, lo.as_deref(), hi.as_deref(), false),
        want,
        "{ctx}: scan at {t} in {lo:?}..{hi:?}"
    );
    assert_eq!(scan(db, t, lo.as_deref(), hi.as_deref(), true), want, "{ctx}: reverse scan at {t}");

    // A seek, then steps both ways, against the same list.
    let target = key(rng.gen_range(0..130));
    let mut it = db.raw_iterator_opt(read_opts(t));
    it.seek(&target);
    let all = model_scan(m, t, None, None);
    let pos = all.partition_point(|(k, _, _)| k.as_slice() < target.as_slice());
    match all.get(pos) {
        Some((k, _, v)) => {
            assert_eq!((it.key(), it.value()), (Some(k.as_slice()), Some(v.as_slice())), "{ctx}: seek")
        }
        None => assert!(!it.valid(), "{ctx}: seek past the end"),
    }
    if it.valid() {
        it.prev();
        match pos.checked_sub(1).map(|p| &all[p]) {
            Some((k, _, _)) => assert_eq!(it.key(), Some(k.as_slice()), "{ctx}: prev after seek"),
            None => assert!(!it.valid(), "{ctx}: prev before the first"),
        }
    }
    let mut it = db.raw_iterator_opt(read_opts(t));
    it.seek_for_prev(&target);
    let pos = all.partition_point(|(k, _, _)| k.as_slice() <= target.as_slice());
    match pos.checked_sub(1).map(|p| &all[p]) {
        Some((k, _, _)) => {
            assert_eq!(it.key(), Some(k.as_slice()), "{ctx}: seek_for_prev");
            it.next();
            match all.get(pos) {
                Some((k, _, _)) => {
                    assert_eq!(it.key(), Some(k.as_slice()), "{ctx}: next after seek_for_prev")
                }
                None => assert!(!it.valid()),
            }
        }
        None => assert!(!it.valid(), "{ctx}: seek_for_prev before the first"),
    }

    // iter_start_ts: every version in [start, t], deletions included, key() the internal key.
    let start = rng.gen_range(low..=t);
    let mut ro = read_opts(t);
    ro.set_iter_start_ts(ts(start));
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        let ik = it.key().unwrap();
        let (uk, trailer) = ik.split_at(ik.len() - 8);
        let vt = u64::from_le_bytes(uk[uk.len() - 8..].try_into().unwrap());
        assert_eq!(it.timestamp().unwrap(), &ts(vt)[..]);
        // A deletion is stored as kTypeDeletionWithTimestamp (0x14), as RocksDB stores it.
        assert!(matches!(trailer[0], 0x1 | 0x14), "{ctx}: value type {:#x}", trailer[0]);
        let deleted = trailer[0] == 0x14;
        got.push((
            uk[..uk.len() - 8].to_vec(),
            vt,
            if deleted { None } else { Some(it.value().unwrap().to_vec()) },
        ));
        it.next();
    }
    it.status().unwrap();
    let mut want = Vec::new();
    for (k, versions) in m {
        for (vt, v) in versions.range(start..=t).rev() {
            want.push((k.clone(), *vt, v.clone()));
        }
    }
    if low == 0 {
        // Before any garbage collection every version is there.
        assert_eq!(got, want, "{ctx}: every version in [{start}, {t}]");
    } else {
        // Versions at or above full_history_ts_low are all kept.
        let keep = |(_, vt, _): &&(Vec<u8>, u64, Option<Vec<u8>>)| *vt >= low;
        let got_kept: Vec<_> = got.iter().filter(keep).collect();
        let want_kept: Vec<_> = want.iter().filter(keep).collect();
        assert_eq!(got_kept, want_kept, "{ctx}: versions in [{start}, {t}] at or above {low}");
    }
}

fn run(seed: u64, builtin: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut m: Model = BTreeMap::new();
    let mut db = DB::open(&options(builtin), dir.path()).unwrap();
    let mut now = 0u64;
    let mut low = 0u64;
    for step in 0..3000 {
        now += rng.gen_range(1..3);
        let k = key(rng.gen_range(0..128));
        if rng.gen_bool(0.2) {
            db.delete_with_ts(&k, ts(now)).unwrap();
            m.entry(k.clone()).or_default().insert(now, None);
        } else {
            let v = format!("v{now}-{}", "x".repeat(rng.gen_range(0..40))).into_bytes();
            if rng.gen_bool(0.3) {
                let mut b = shale::WriteBatch::default();
                b.put_cf_with_ts(&db.cf_handle("default").unwrap(), &k, ts(now), &v);
                db.write(b).unwrap();
            } else {
                db.put_with_ts(&k, ts(now), &v).unwrap();
            }
            m.entry(k.clone()).or_default().insert(now, Some(v));
        }
        let ctx = format!("seed {seed} builtin {builtin} step {step}");
        match rng.gen_range(0..200) {
            0..=2 => db.flush().unwrap(),
            3 => db.compact_range(None::<&[u8]>, None::<&[u8]>),
            4 => {
                drop(db);
                db = DB::open(&options(builtin), dir.path()).unwrap();
            }
            5 if step > 1500 => {
                // Raise full_history_ts_low and collect what it hides.
                low = rng.gen_range(low..=now);
                let mut co = shale::CompactOptions::default();
                co.set_full_history_ts_low(ts(low));
                db.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &co);
                assert_eq!(db.get_full_history_ts_low(&db.cf_handle("default").unwrap()).unwrap(), ts(low));
                if low > 0 {
                    let err = db.get_opt(&k, &read_opts(low - 1)).unwrap_err();
                    assert_eq!(err.kind(), shale::ErrorKind::InvalidArgument, "{ctx}: {err}");
                }
            }
            6..=9 => check(&db, &m, &mut rng, now, low, &ctx),
            _ => {}
        }
    }
    check(&db, &m, &mut rng, now, low, "end");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    check(&db, &m, &mut rng, now, low, "after full compaction");
    drop(db);
    let db = DB::open(&options(builtin), dir.path()).unwrap();
    if low > 0 {
        assert_eq!(
            db.get_full_history_ts_low(&db.cf_handle("default").unwrap()).unwrap(),
            ts(low),
            "reopened"
        );
    }
    check(&db, &m, &mut rng, now, low, "reopened");
    // Every live key's newest version, through the Rust iterator.
    let n = db.iterator_opt(IteratorMode::Start, read_opts(now)).count();
    assert_eq!(n, model_scan(&m, now, None, None).len());
}

#[test]
fn builtin_u64ts_comparator_matches_the_model() {
    for seed in [1, 2, 3] {
        run(seed, true);
    }
}

#[test]
fn rust_comparator_with_ts_matches_the_model() {
    for seed in [11, 12] {
        run(seed, false);
    }
}

#[test]
fn misuse_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&options(true), dir.path()).unwrap();
    // A family with timestamps takes only timestamped writes of its size.
    assert_eq!(db.put(b"k", b"v").unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    assert_eq!(db.put_with_ts(b"k", [1u8; 4], b"v").unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    // Reads need a read timestamp of its size.
    assert_eq!(db.get(b"k").unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    let mut ro = ReadOptions::default();
    ro.set_timestamp([0u8; 3]);
    assert_eq!(db.get_opt(b"k", &ro).unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    // Merges and range deletions without a timestamp: InvalidArgument (RocksDB's
    // FailIfCfHasTs), nothing written; with one they are written (tests/api/timestamps_gaps.rs).
    let mut o = options(true);
    o.set_merge_operator_associative("concat", |_k, e, ops| {
        let mut v = e.map(<[u8]>::to_vec).unwrap_or_default();
        ops.iter().for_each(|x| v.extend_from_slice(x));
        Some(v)
    });
    drop(db);
    let db = DB::open(&o, dir.path()).unwrap();
    assert_eq!(db.merge(b"k", b"v").unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    assert_eq!(db.delete_range(b"a", b"z").unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    db.put_with_ts(b"k", ts(5), b"v5").unwrap();
    assert_eq!(db.get_opt(b"k", &read_opts(9)).unwrap(), Some(b"v5".to_vec()));
    assert_eq!(db.get_opt(b"k", &read_opts(4)).unwrap(), None);
    // full_history_ts_low only rises.
    let cf = db.cf_handle("default").unwrap();
    db.increase_full_history_ts_low(&cf, ts(3)).unwrap();
    let err = db.increase_full_history_ts_low(&cf, ts(2)).unwrap_err();
    assert_eq!(err.kind(), shale::ErrorKind::InvalidArgument);
    drop(db);
    // A family without timestamps refuses them.
    let dir2 = tempfile::tempdir().unwrap();
    let mut plain = Options::default();
    plain.create_if_missing(true);
    let db = DB::open(&plain, dir2.path()).unwrap();
    assert_eq!(db.put_with_ts(b"k", ts(1), b"v").unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    assert_eq!(db.get_opt(b"k", &read_opts(1)).unwrap_err().kind(), shale::ErrorKind::InvalidArgument);
    // The comparator's name is recorded: reopening with a plain comparator is refused, in
    // RocksDB 11.8.1's words (`ValidateUserDefinedTimestampsOptions`: turning timestamps off
    // needs persist_user_defined_timestamps=false, which this family does not have).
    drop(db);
    let err = DB::open(&plain, dir.path()).err().unwrap();
    assert_eq!(err.kind(), shale::ErrorKind::InvalidArgument, "{err}");
    assert!(
        err.to_string().contains(
            "Cannot open a column family and disable user-defined timestamps feature if its existing persist_user_defined_timestamps flag is not false."
        ),
        "{err}"
    );
}
