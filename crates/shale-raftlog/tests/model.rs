//! Model test: random appends (with overwrites), compactions, key puts and deletes, Cleans,
//! purges and reopens against an in-memory model, on the in-memory file system.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::sync::Arc;

use shale_raftlog::env::MemFileSystem;
use util::{batch_of, check, open_on, small_config, Model, Workload};

fn run(seed: u64, steps: usize) {
    let fs = Arc::new(MemFileSystem::new());
    let cfg = small_config("/raft");
    let mut e = open_on(&cfg, &fs);
    let mut m = Model::default();
    let mut w = Workload::new(seed, 6);
    let mut purges = 0;
    for step in 0..steps {
        let op = w.next(&m);
        let mut b = batch_of(&op);
        e.write(&mut b, step % 7 == 0).unwrap();
        assert!(b.is_empty());
        m.apply(&op);
        if step % 37 == 0 {
            for region in e.purge_expired_files().unwrap() {
                // The engine asks for compaction: do it, as a Raft user would.
                let last = m.last(region).unwrap_or(0);
                let op = util::Op::Compact { region, index: last.saturating_sub(2) };
                e.write(&mut batch_of(&op), false).unwrap();
                m.apply(&op);
            }
            purges += 1;
        }
        if step % 250 == 249 {
            drop(e);
            e = open_on(&cfg, &fs);
            check(&e, &m, &format!("seed {seed} step {step} after reopen"));
        } else if step % 50 == 0 {
            check(&e, &m, &format!("seed {seed} step {step}"));
        }
    }
    assert!(purges > 0);
    let (first, last) = e.file_span(shale_raftlog::LogQueue::Append);
    assert!(last >= first);
    drop(e);
    let e = open_on(&cfg, &fs);
    check(&e, &m, &format!("seed {seed} final reopen"));
}

#[test]
fn model_seeds() {
    for seed in 1..=8 {
        run(seed, 1500);
    }
}
