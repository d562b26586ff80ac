//! What is deleted stays deleted (tikv/raft-engine#141): data rewritten into the rewrite
//! queue, then deleted (key deletes, compactions, overwrites cutting entries off, Cleans),
//! then the append files holding the deletions purged, then a restart: nothing comes back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use shale_raftlog::env::MemFileSystem;
use shale_raftlog::LogQueue;
use util::{batch_of, check, open_on, small_config, Model, Op, Workload};

fn write<F: shale_raftlog::env::FileSystem>(e: &shale_raftlog::Engine<F>, m: &mut Model, op: Op) {
    e.write(&mut batch_of(&op), false).unwrap();
    m.apply(&op);
}

/// Filler on region 1000 pushes the append queue past the purge threshold, so purge
/// rewrites the other regions; then it is compacted away so its files can go.
fn churn<F: shale_raftlog::env::FileSystem>(e: &shale_raftlog::Engine<F>, m: &mut Model, w: &mut Workload) {
    for _ in 0..3 {
        for _ in 0..40 {
            let at = m.last(1000).map_or(1, |l| l + 1);
            // Random bytes: they do not compress, so files fill up.
            let entries = (0..4)
                .map(|i| {
                    let mut v = format!("filler {} ", at + i).into_bytes();
                    v.extend((0..200).map(|_| w.rng.gen::<u8>()));
                    v
                })
                .collect();
            write(e, m, Op::Append { region: 1000, first: at, entries });
        }
        let last = m.last(1000).unwrap_or(0);
        write(e, m, Op::Compact { region: 1000, index: last + 1 });
        for region in e.purge_expired_files().unwrap() {
            let idx = m.last(region).map_or(0, |l| l + 1);
            write(e, m, Op::Compact { region, index: idx });
        }
    }
}

fn run(seed: u64, rewrite_queue_purge: bool) {
    let fs = Arc::new(MemFileSystem::new());
    let mut cfg = small_config("/raft");
    if !rewrite_queue_purge {
        // Without rewriting the rewrite queue itself, the deleted data stays in the rewrite
        // files: only the deletions' own handling keeps it from coming back.
        cfg.purge_rewrite_threshold = Some(shale_raftlog::ReadableSize::gb(1));
    }
    let mut e = open_on(&cfg, &fs);
    let mut m = Model::default();
    let mut w = Workload::new(seed, 8);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ 0x5eed);
    // 1. Regions 1..=8 get entries and keys, then get rewritten.
    for region in 1..=8u64 {
        let entries = (0..20)
            .map(|i| format!("r{region} e{} {}", i + 1, "y".repeat(rng.gen_range(10..100))).into_bytes())
            .collect();
        write(&e, &mut m, Op::Append { region, first: 1, entries });
        for k in 0..4 {
            write(
                &e,
                &mut m,
                Op::Put {
                    region,
                    key: format!("k{k}").into_bytes(),
                    value: format!("v{region}.{k}").into_bytes(),
                },
            );
        }
    }
    churn(&e, &mut m, &mut w);
    let (rw_first, rw_last) = e.file_span(LogQueue::Rewrite);
    assert!(rw_last > rw_first || e.get_used_size() > 0, "rewrite queue used");
    // 2. Deletions of rewritten data, of every kind.
    for region in 1..=8u64 {
        match (region + seed) % 4 {
            0 => write(&e, &mut m, Op::Delete { region, key: b"k1".to_vec() }),
            1 => write(&e, &mut m, Op::Compact { region, index: rng.gen_range(5..25) }),
            2 => {
                // Overwrite from index 8 with two entries: 10..20 are cut off.
                let entries = vec![b"new8".to_vec(), b"new9".to_vec()];
                write(&e, &mut m, Op::Append { region, first: 8, entries });
            }
            _ => write(&e, &mut m, Op::Clean { region }),
        }
        if region % 3 == 0 {
            write(&e, &mut m, Op::Delete { region, key: b"k2".to_vec() });
        }
    }
    let deletions_in = e.file_span(LogQueue::Append).1;
    // 3. Purge until the files holding the deletions are gone.
    for _ in 0..6 {
        churn(&e, &mut m, &mut w);
        if e.file_span(LogQueue::Append).0 > deletions_in {
            break;
        }
    }
    assert!(
        e.file_span(LogQueue::Append).0 > deletions_in,
        "seed {seed}: the deletions' append file was purged"
    );
    check(&e, &m, &format!("seed {seed} before restart"));
    // 4. Restart (twice, with purges in between): nothing deleted is back.
    for round in 0..2 {
        drop(e);
        e = open_on(&cfg, &fs);
        check(&e, &m, &format!("seed {seed} after restart {round}"));
        churn(&e, &mut m, &mut w);
    }
    drop(e);
    let e = open_on(&cfg, &fs);
    check(&e, &m, &format!("seed {seed} final"));
}

#[test]
fn deleted_stays_deleted_seeds() {
    for seed in 0..8 {
        run(seed, false);
        run(seed, true);
    }
}
