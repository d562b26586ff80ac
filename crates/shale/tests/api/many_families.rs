//! Many column families under the background scheduler: parallel compactions across and
//! within families keep every family equal to a model (and its levels consistent across a
//! reopen), and a family that needs a compaction gets one even while another family always
//! has work (the queues are first in, first out, not by family id).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{IteratorMode, Options, DB};

fn name(i: usize) -> String {
    format!("cf{i:03}")
}

fn busy_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(32 << 10);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_level_zero_slowdown_writes_trigger(4);
    o.set_level_zero_stop_writes_trigger(12);
    o.set_target_file_size_base(16 << 10);
    o.set_max_bytes_for_level_base(64 << 10);
    o.set_max_background_jobs(4);
    o.set_compression_type(shale::DBCompressionType::None);
    o
}

type Model = Vec<Mutex<BTreeMap<Vec<u8>, Vec<u8>>>>;

fn check(db: &DB, model: &Model, families: usize, ctx: &str) {
    for (i, m) in model.iter().enumerate().take(families) {
        let cf = db.cf_handle(&name(i)).unwrap();
        let got: BTreeMap<Vec<u8>, Vec<u8>> = db
            .iterator_cf(cf, IteratorMode::Start)
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(got == *m.lock().unwrap(), "{ctx}: family {} differs from the model", name(i));
    }
}

#[test]
fn parallel_compactions_across_16_families_match_the_model() {
    const FAMILIES: usize = 16;
    const THREADS: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..FAMILIES).map(name).collect();
    let db = Arc::new(open_cf_all(&busy_options(), dir.path(), &names).unwrap());
    let model: Arc<Model> = Arc::new((0..FAMILIES).map(|_| Mutex::new(BTreeMap::new())).collect());
    let peak = Arc::new(Mutex::new(0u64));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (db, peak, stop) = (db.clone(), peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                let n = db.property_int_value("rocksdb.num-running-compactions").unwrap().unwrap_or(0);
                let mut p = peak.lock().unwrap();
                *p = (*p).max(n);
                drop(p);
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, model) = (db.clone(), model.clone());
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(t as u64 + 1);
                for i in 0..12_000u32 {
                    let f = rng.gen_range(0..FAMILIES);
                    let cf = db.cf_handle(&name(f)).unwrap();
                    // Each thread owns its keys, so the model's order is the database's.
                    let k = format!("t{t}-{:05}", rng.gen_range(0..3000)).into_bytes();
                    if rng.gen_bool(0.1) {
                        db.delete_cf(cf, &k).unwrap();
                        model[f].lock().unwrap().remove(&k);
                    } else {
                        let v = format!("{i}-{}", "v".repeat(rng.gen_range(20..200))).into_bytes();
                        db.put_cf(cf, &k, &v).unwrap();
                        model[f].lock().unwrap().insert(k, v);
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    check(&db, &model, FAMILIES, "while compactions run");
    stop.store(true, std::sync::atomic::Ordering::Release);
    sampler.join().unwrap();
    eprintln!("peak running compactions observed: {}", peak.lock().unwrap());
    let db = Arc::try_unwrap(db).expect("no other handle");
    drop(db);
    // Reopen: every family's Version passes the consistency check (levels 1+ disjoint).
    let db = open_cf_all(&busy_options(), dir.path(), &names).unwrap();
    check(&db, &model, FAMILIES, "after reopen");
    for i in 0..FAMILIES {
        db.compact_range_cf(db.cf_handle(&name(i)).unwrap(), None::<&[u8]>, None::<&[u8]>);
    }
    check(&db, &model, FAMILIES, "after manual compaction");
}

#[test]
fn no_family_starves_while_another_always_has_work() {
    const FAMILIES: usize = 120;
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_level_zero_file_num_compaction_trigger(2);
    o.set_max_background_jobs(2);
    let names: Vec<String> = (0..FAMILIES).map(name).collect();
    let db = Arc::new(open_cf_all(&o, dir.path(), &names).unwrap());
    // The lowest family keeps making level-0 files, so it always wants compaction.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hot = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let cf = db.cf_handle(&name(0)).unwrap();
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                for _ in 0..200 {
                    db.put_cf(cf, format!("hot{i:08}"), vec![b'h'; 100]).unwrap();
                    i += 1;
                }
                db.flush_cf(cf).unwrap();
            }
        })
    };
    // Every other family gets two level-0 files: each needs one compaction.
    for i in 1..FAMILIES {
        let cf = db.cf_handle(&name(i)).unwrap();
        for round in 0..2 {
            db.put_cf(cf, format!("k{round}"), b"v").unwrap();
            db.flush_cf(cf).unwrap();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let waiting = || {
        (1..FAMILIES)
            .filter(|&i| {
                let cf = db.cf_handle(&name(i)).unwrap();
                db.property_int_value_cf(cf, "rocksdb.num-files-at-level0").unwrap().unwrap() >= 2
            })
            .count()
    };
    let mut left = waiting();
    while left > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = waiting();
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    hot.join().unwrap();
    assert_eq!(left, 0, "{left} families never got their compaction while family 0 kept busy");
    for i in 1..FAMILIES {
        let cf = db.cf_handle(&name(i)).unwrap();
        assert_eq!(db.get_cf(cf, b"k1").unwrap().as_deref(), Some(&b"v"[..]));
    }
}
