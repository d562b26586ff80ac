//! A model of parallel compactions: 4 workers pick compactions from 12 families while
//! flushes keep adding level-0 files, and finish them in random order. Whatever the order,
//! no two running compactions share a file or write overlapping ranges of one level, at
//! most one level-0 compaction runs per family, and every Version that results keeps its
//! levels sorted and disjoint (`check_consistency`), with every finished compaction's inputs
//! still present when it installs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::HashSet;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale_engine::compaction::picker::{pick, Busy, CompactionPlan, RunningCompaction};
use shale_engine::config::CfConfig;
use shale_engine::key::{bytewise_internal_comparator, make_internal_key, ValueType};
use shale_engine::version::{FileMetaData, Version, VersionBuilder, VersionEdit};

const FAMILIES: usize = 12;
const WORKERS: usize = 4;

struct Family {
    version: Version,
    running: Vec<(RunningCompaction, CompactionPlan)>,
    busy: HashSet<u64>,
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn file(number: u64, lo: u32, hi: u32, seq: u64, size: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: size,
        smallest: make_internal_key(&key(lo), seq, ValueType::Value),
        largest: make_internal_key(&key(hi), seq, ValueType::Value),
        smallest_seqno: seq,
        largest_seqno: seq,
        ..Default::default()
    }
}

fn options() -> CfConfig {
    CfConfig {
        max_output_level: 4,
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 3000,
        max_bytes_for_level_multiplier: 3.0,
        max_compaction_bytes: 6000,
        ..CfConfig::default()
    }
}

fn overlaps(a: &RunningCompaction, b: &RunningCompaction) -> bool {
    a.output_level == b.output_level && a.smallest <= b.largest && b.smallest <= a.largest
}

fn run(seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let opts = options();
    let icmp = bytewise_internal_comparator();
    let mut next_number = 1u64;
    let mut seq = 1u64;
    let mut fams: Vec<Family> = (0..FAMILIES)
        .map(|_| Family {
            version: Version::new(icmp.clone(), 5, Vec::new()),
            running: Vec::new(),
            busy: HashSet::new(),
        })
        .collect();
    let mut slots_used = 0usize;
    let (mut picked, mut finished, mut max_parallel_in_family) = (0, 0, 0);
    for _step in 0..6000 {
        let r = rng.gen_range(0..100);
        if r < 30 {
            // A flush: a new level-0 file in a random family.
            let f = &mut fams[rng.gen_range(0..FAMILIES)];
            let lo = rng.gen_range(0..10_000);
            let m = file(next_number, lo, lo + rng.gen_range(0..3000), seq, rng.gen_range(500..1500));
            next_number += 1;
            seq += 1;
            let mut b = VersionBuilder::new(&f.version);
            b.apply(&VersionEdit { new_files: vec![(0, m)], ..Default::default() }).unwrap();
            f.version = b.build();
        } else if r < 70 && slots_used < WORKERS {
            // A worker picks a compaction of some family.
            let fi = rng.gen_range(0..FAMILIES);
            let f = &mut fams[fi];
            let busy = Busy {
                files: Some(&f.busy),
                running: &f.running.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
                stats: None,
                // No snapshot ever released: no bottommost-files compaction.
                oldest_snapshot: 0,
                // `pick` sets it.
                opts: None,
                // A LOW thread's pick.
                require_max_output_level: false,
            };
            let Some(plan) = pick(&f.version, &opts, busy) else { continue };
            let mine = RunningCompaction::of(&f.version, &plan);
            for (other, other_plan) in &f.running {
                assert!(
                    !overlaps(&mine, other),
                    "seed {seed}: overlapping output ranges {mine:?} / {other:?}"
                );
                assert!(!(plan.level == 0 && other_plan.level == 0), "seed {seed}: two level-0 compactions");
            }
            for input in plan.inputs.iter().chain(&plan.next_inputs) {
                assert!(f.busy.insert(input.number), "seed {seed}: file {} picked twice", input.number);
            }
            f.running.push((mine, plan));
            max_parallel_in_family = max_parallel_in_family.max(f.running.len());
            slots_used += 1;
            picked += 1;
        } else {
            // A running compaction, chosen at random, finishes and installs.
            let candidates: Vec<usize> = (0..FAMILIES).filter(|&i| !fams[i].running.is_empty()).collect();
            if candidates.is_empty() {
                continue;
            }
            let f = &mut fams[candidates[rng.gen_range(0..candidates.len())]];
            let (running, plan) = f.running.remove(rng.gen_range(0..f.running.len()));
            let mut edit = VersionEdit::default();
            for input in &plan.inputs {
                edit.deleted_files.push((plan.level as u32, input.number));
            }
            for input in &plan.next_inputs {
                edit.deleted_files.push((plan.output_level as u32, input.number));
            }
            // One output spanning what the compaction read.
            let size: u64 = plan.inputs.iter().chain(&plan.next_inputs).map(|f| f.file_size).sum();
            let out = FileMetaData {
                number: next_number,
                file_size: size,
                smallest: make_internal_key(&running.smallest, seq, ValueType::Value),
                largest: make_internal_key(&running.largest, seq, ValueType::Value),
                smallest_seqno: seq,
                largest_seqno: seq,
                ..Default::default()
            };
            next_number += 1;
            edit.new_files.push((plan.output_level as u32, out));
            let mut b = VersionBuilder::new(&f.version);
            b.apply(&edit).unwrap_or_else(|e| panic!("seed {seed}: inputs vanished before install: {e}"));
            f.version = b.build();
            f.version.check_consistency().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            for input in plan.inputs.iter().chain(&plan.next_inputs) {
                f.busy.remove(&input.number);
            }
            slots_used -= 1;
            finished += 1;
        }
    }
    assert!(picked > 200 && finished > 200, "seed {seed}: too little happened ({picked} picked)");
    assert!(max_parallel_in_family >= 2, "seed {seed}: never two compactions of one family at once");
}

#[test]
fn parallel_compactions_never_collide() {
    for seed in [1, 2, 3, 42, 2026] {
        run(seed);
    }
}
