//! Model test of prefix extractors: random puts, deletes, flushes, compactions and reopens
//! against a `BTreeMap`, with a fixed-prefix extractor, table prefix Bloom filters (with and
//! without whole keys) and a memtable prefix Bloom. Every observation must match the model:
//! `get`, `prefix_iterator` of present and absent prefixes, `prefix_same_as_start` seeks in
//! both directions (they stop at the prefix end), and total-order scans.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;
use std::path::Path;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{BlockBasedOptions, Options, ReadOptions, SliceTransform, DB};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const PREFIX_LEN: usize = 2;

fn options(whole_key_filtering: bool) -> Options {
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_whole_key_filtering(whole_key_filtering);
    t.set_block_size(128);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(PREFIX_LEN));
    o.set_memtable_prefix_bloom_ratio(0.1);
    o.set_write_buffer_size(64 << 10);
    o.set_level_zero_file_num_compaction_trigger(3);
    o.set_block_based_table_factory(&t);
    o
}

/// Keys of 1 to 4 bytes over a small alphabet: prefixes repeat, some keys are shorter than
/// the prefix (outside the extractor's domain).
fn random_key(rng: &mut SmallRng) -> Vec<u8> {
    let len = rng.gen_range(1..=4);
    (0..len).map(|_| b"abcde"[rng.gen_range(0..5)]).collect()
}

fn with_prefix<'a>(
    model: &'a Model,
    prefix: &'a [u8],
) -> impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)> + 'a {
    model.range(prefix.to_vec()..).take_while(move |(k, _)| k.starts_with(prefix))
}

fn check(db: &DB, model: &Model, rng: &mut SmallRng, ctx: &str) {
    // Point reads.
    for _ in 0..40 {
        let k = random_key(rng);
        assert_eq!(db.get(&k).unwrap().as_deref(), model.get(&k).map(|v| &v[..]), "{ctx}: get {k:?}");
    }
    // Prefix iterators of every 2-byte prefix (present or not).
    for a in b"abcde" {
        for b in b"abcde" {
            let p = [*a, *b];
            let got: Vec<(Vec<u8>, Vec<u8>)> =
                db.prefix_iterator(p).map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
            let want: Vec<(Vec<u8>, Vec<u8>)> =
                with_prefix(model, &p).map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(got, want, "{ctx}: prefix_iterator {p:?}");
        }
    }
    // prefix_same_as_start seeks from a random key of the domain, forward and backward.
    for _ in 0..20 {
        let mut target = random_key(rng);
        while target.len() < PREFIX_LEN {
            target.push(b'a');
        }
        let p = target[..PREFIX_LEN].to_vec();
        let mut ro = ReadOptions::default();
        ro.set_prefix_same_as_start(true);
        let mut it = db.raw_iterator_opt(ro);
        it.seek(&target);
        let mut got = Vec::new();
        while it.valid() {
            got.push(it.key().unwrap().to_vec());
            it.next();
        }
        it.status().unwrap();
        let want: Vec<Vec<u8>> = model
            .range(target.clone()..)
            .take_while(|(k, _)| k.starts_with(&p))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(got, want, "{ctx}: forward from {target:?}");

        it.seek_for_prev(&target);
        let mut got = Vec::new();
        while it.valid() {
            got.push(it.key().unwrap().to_vec());
            it.prev();
        }
        it.status().unwrap();
        let want: Vec<Vec<u8>> = model
            .range(..=target.clone())
            .rev()
            .take_while(|(k, _)| k.starts_with(&p))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(got, want, "{ctx}: backward from {target:?}");
    }
    // A total-order scan sees everything.
    let mut ro = ReadOptions::default();
    ro.set_total_order_seek(true);
    let all: Vec<Vec<u8>> =
        db.iterator_opt(shale::IteratorMode::Start, ro).map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(all, model.keys().cloned().collect::<Vec<_>>(), "{ctx}: full scan");
}

fn run(seed: u64, whole_key_filtering: bool, dir: &Path) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let o = options(whole_key_filtering);
    let mut db = DB::open(&o, dir).unwrap();
    let mut model = Model::new();
    for step in 0..1500 {
        match rng.gen_range(0..100) {
            0..=59 => {
                let k = random_key(&mut rng);
                let v = format!("v{step}").into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            60..=79 => {
                let k = random_key(&mut rng);
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            80..=84 => db.flush().unwrap(),
            85..=86 => db.compact_range(None::<&[u8]>, None::<&[u8]>),
            87 => {
                drop(db);
                db = DB::open(&o, dir).unwrap();
            }
            _ => check(&db, &model, &mut rng, &format!("seed {seed} step {step}")),
        }
    }
    db.flush().unwrap();
    check(&db, &model, &mut rng, &format!("seed {seed} end"));
    drop(db);
    let db = DB::open(&o, dir).unwrap();
    check(&db, &model, &mut rng, &format!("seed {seed} reopened"));
}

#[test]
fn prefix_reads_match_the_model() {
    for seed in 1..=4 {
        let tmp = tempfile::tempdir().unwrap();
        run(seed, seed % 2 == 0, tmp.path());
    }
}
