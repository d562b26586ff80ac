//! Format interop between shale-raftlog and tikv/raft-engine 0.4.2 (crates.io), both ways,
//! in one process: one engine writes a directory (entries through `MessageExt`, commands,
//! key-values, purges with rewrites, compression), the other opens it and must read every
//! entry, command effect and key-value as an in-memory model says; then it writes on and
//! the first engine reads again. A torn tail is then opened by both engines in each
//! recovery mode, which must agree.
//!
//! Benchmarks: `cargo run --release -- bench-recovery [MiB] [regions] [reps] [entries per batch]`,
//! `cargo run --release -- bench-write [seconds] [threads] [regions]`,
//! `cargo run --release -- bench-write-one ENGINE [batches] [threads] [regions]` (see bench.rs).
//!
//! Run: `cargo run --release` in this directory (its own workspace; not part of CI's test
//! run, raft-engine pulls protobuf, rayon, prometheus and more).
//!
//! The interop checks here are a test: an unexpected engine error fails the check by
//! panicking, as an `unwrap` in a test does. The benchmarks (`bench.rs`) return errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use protobuf::well_known_types::BytesValue;

mod bench;

#[global_allocator]
static ALLOC: bench::Counting = bench::Counting;

/// An entry: its index (8 bytes LE) then a payload, carried in a protobuf `BytesValue`.
fn entry(index: u64, payload: &[u8]) -> BytesValue {
    let mut v = index.to_le_bytes().to_vec();
    v.extend_from_slice(payload);
    let mut e = BytesValue::new();
    e.set_value(v);
    e
}

fn index_of(e: &BytesValue) -> u64 {
    let v = e.get_value();
    let mut b = [0u8; 8];
    let n = v.len().min(8);
    b[..n].copy_from_slice(&v[..n]);
    u64::from_le_bytes(b)
}

struct ReExt;
impl raft_engine::MessageExt for ReExt {
    type Entry = BytesValue;
    fn index(e: &BytesValue) -> u64 {
        index_of(e)
    }
}

struct ShExt;
impl shale_raftlog::MessageExt for ShExt {
    type Entry = BytesValue;
    fn index(e: &BytesValue) -> u64 {
        index_of(e)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Region {
    first: u64,
    entries: Vec<Vec<u8>>,
    kvs: BTreeMap<Vec<u8>, Vec<u8>>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Model {
    regions: BTreeMap<u64, Region>,
}

#[derive(Clone, Debug)]
enum Op {
    Append(u64, u64, Vec<Vec<u8>>),
    Compact(u64, u64),
    Put(u64, Vec<u8>, Vec<u8>),
    Delete(u64, Vec<u8>),
    Clean(u64),
}

impl Model {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Append(r, first, es) => {
                let g = self.regions.entry(*r).or_default();
                let end = g.first + g.entries.len() as u64;
                if !g.entries.is_empty() && *first >= g.first && *first <= end {
                    g.entries.truncate((*first - g.first) as usize);
                } else {
                    g.entries.clear();
                    g.first = *first;
                }
                g.entries.extend(es.iter().cloned());
            }
            Op::Compact(r, idx) => {
                if let Some(g) = self.regions.get_mut(r) {
                    if *idx > g.first && !g.entries.is_empty() {
                        let n = ((*idx - g.first) as usize).min(g.entries.len());
                        g.entries.drain(..n);
                        g.first += n as u64;
                    }
                }
            }
            Op::Put(r, k, v) => {
                self.regions.entry(*r).or_default().kvs.insert(k.clone(), v.clone());
            }
            Op::Delete(r, k) => {
                if let Some(g) = self.regions.get_mut(r) {
                    g.kvs.remove(k);
                }
            }
            Op::Clean(r) => {
                self.regions.remove(r);
            }
        }
        self.regions.retain(|_, g| !g.entries.is_empty() || !g.kvs.is_empty());
        for g in self.regions.values_mut() {
            if g.entries.is_empty() {
                g.first = 0;
            }
        }
    }

    fn last(&self, r: u64) -> Option<u64> {
        self.regions.get(&r).filter(|g| !g.entries.is_empty()).map(|g| g.first + g.entries.len() as u64 - 1)
    }
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn gen_op(rng: &mut Lcg, m: &Model) -> Op {
    let r = 1 + rng.below(10);
    let key = format!("key{}", rng.below(5)).into_bytes();
    match rng.below(100) {
        0..=59 => {
            let at = match m.last(r) {
                Some(last) if rng.below(5) > 0 => last + 1,
                Some(last) => m.regions[&r].first + rng.below(last + 2 - m.regions[&r].first),
                None => 1 + rng.below(40),
            };
            Op::Append(r, at, payloads(rng, r, at))
        }
        60..=69 => {
            let idx = match m.regions.get(&r).filter(|g| !g.entries.is_empty()) {
                Some(g) => g.first + rng.below(g.entries.len() as u64 + 1),
                None => 1 + rng.below(30),
            };
            Op::Compact(r, idx)
        }
        70..=85 => Op::Put(r, key, format!("v{}", rng.next()).into_bytes()),
        86..=96 => Op::Delete(r, key),
        _ => Op::Clean(r),
    }
}

/// 1 to 6 entries' payloads for `r` from index `at`; some large, so batches cross the
/// compression threshold.
fn payloads(rng: &mut Lcg, r: u64, at: u64) -> Vec<Vec<u8>> {
    let n = 1 + rng.below(6);
    (0..n)
        .map(|i| {
            let len = if rng.below(4) == 0 { 600 + rng.below(900) } else { 10 + rng.below(200) };
            let mut p = format!("r{r}i{}:", at + i).into_bytes();
            p.extend((0..len).map(|j| b'a' + ((j * 7 + at + i) % 26) as u8));
            p
        })
        .collect()
}

/// A batch of several items, mostly ones that compact (or clean) a region and then append
/// to it in the same batch: past the last entry then after a gap (raft-engine applies the
/// items in order, so the emptied group takes any index), within then at the next index or
/// over a suffix, a Clean then anywhere; with puts and items of other regions around.
fn gen_batch(rng: &mut Lcg, m: &Model) -> Vec<Op> {
    let mut scratch = m.clone();
    let mut ops = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let r = 1 + rng.below(10);
        let group: Vec<Op> = match (rng.below(5), scratch.last(r)) {
            (0, Some(last)) => {
                let at = last + 1 + rng.below(20);
                vec![Op::Compact(r, last + 1 + rng.below(3)), Op::Append(r, at, payloads(rng, r, at))]
            }
            (1, Some(last)) => {
                let first = scratch.regions[&r].first;
                let to = first + rng.below(last + 1 - first);
                let at = if rng.below(2) == 0 { last + 1 } else { to.max(last.saturating_sub(2)).max(to) };
                vec![Op::Compact(r, to), Op::Append(r, at, payloads(rng, r, at))]
            }
            (2, _) => {
                let at = 1 + rng.below(200);
                vec![
                    Op::Clean(r),
                    Op::Append(r, at, payloads(rng, r, at)),
                    Op::Put(r, b"state".to_vec(), format!("after clean, at {at}").into_bytes()),
                ]
            }
            _ => vec![gen_op(rng, &scratch)],
        };
        for op in group {
            scratch.apply(&op);
            ops.push(op);
        }
    }
    ops
}

/// The two engines behind one interface.
trait Eng {
    fn apply(&self, op: &Op) {
        self.apply_batch(std::slice::from_ref(op));
    }
    /// Writes `ops` as one batch.
    fn apply_batch(&self, ops: &[Op]);
    fn purge(&self) -> Vec<u64>;
    fn state(&self) -> Model;
}

impl Eng for raft_engine::Engine {
    fn apply_batch(&self, ops: &[Op]) {
        let mut b = raft_engine::LogBatch::default();
        for op in ops {
            match op {
                Op::Append(r, first, es) => {
                    let v: Vec<BytesValue> =
                        es.iter().enumerate().map(|(i, p)| entry(first + i as u64, p)).collect();
                    b.add_entries::<ReExt>(*r, &v).unwrap();
                }
                Op::Compact(r, i) => b.add_command(*r, raft_engine::Command::Compact { index: *i }),
                Op::Put(r, k, v) => b.put(*r, k.clone(), v.clone()).unwrap(),
                Op::Delete(r, k) => b.delete(*r, k.clone()),
                Op::Clean(r) => b.add_command(*r, raft_engine::Command::Clean),
            }
        }
        self.write(&mut b, false).unwrap();
    }
    fn purge(&self) -> Vec<u64> {
        self.purge_expired_files().unwrap()
    }
    fn state(&self) -> Model {
        let mut m = Model::default();
        for r in self.raft_groups() {
            let mut g = Region::default();
            if let (Some(f), Some(l)) = (self.first_index(r), self.last_index(r)) {
                g.first = f;
                let mut v = Vec::new();
                self.fetch_entries_to::<ReExt>(r, f, l + 1, None, &mut v).unwrap();
                for (i, e) in v.iter().enumerate() {
                    assert_eq!(index_of(e), f + i as u64, "raft-engine region {r}: entry index");
                    g.entries.push(e.get_value()[8..].to_vec());
                }
            }
            self.scan_raw_messages(r, None, None, false, |k, v| {
                g.kvs.insert(k.to_vec(), v.to_vec());
                true
            })
            .unwrap();
            if !g.entries.is_empty() || !g.kvs.is_empty() {
                m.regions.insert(r, g);
            }
        }
        m
    }
}

impl Eng for shale_raftlog::Engine {
    fn apply_batch(&self, ops: &[Op]) {
        let mut b = shale_raftlog::LogBatch::default();
        for op in ops {
            match op {
                Op::Append(r, first, es) => {
                    let v: Vec<BytesValue> =
                        es.iter().enumerate().map(|(i, p)| entry(first + i as u64, p)).collect();
                    b.add_entries::<ShExt>(*r, &v).unwrap();
                }
                Op::Compact(r, i) => b.add_command(*r, shale_raftlog::Command::Compact { index: *i }),
                Op::Put(r, k, v) => b.put(*r, k.clone(), v.clone()).unwrap(),
                Op::Delete(r, k) => b.delete(*r, k.clone()),
                Op::Clean(r) => b.add_command(*r, shale_raftlog::Command::Clean),
            }
        }
        self.write(&mut b, false).unwrap();
    }
    fn purge(&self) -> Vec<u64> {
        self.purge_expired_files().unwrap()
    }
    fn state(&self) -> Model {
        let mut m = Model::default();
        for r in self.raft_groups() {
            let mut g = Region::default();
            if let (Some(f), Some(l)) = (self.first_index(r), self.last_index(r)) {
                g.first = f;
                let mut v = Vec::new();
                self.fetch_entries_to::<ShExt>(r, f, l + 1, None, &mut v).unwrap();
                for (i, e) in v.iter().enumerate() {
                    assert_eq!(index_of(e), f + i as u64, "shale region {r}: entry index");
                    g.entries.push(e.get_value()[8..].to_vec());
                }
            }
            self.scan_raw_messages(r, None, None, false, |k, v| {
                g.kvs.insert(k.to_vec(), v.to_vec());
                true
            })
            .unwrap();
            if !g.entries.is_empty() || !g.kvs.is_empty() {
                m.regions.insert(r, g);
            }
        }
        m
    }
}

/// Both engines prepare reserved files at open (`prefill_for_recycle`, 128 KiB: 6 files)
/// in the run that sets this.
static PREFILL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn prefill() -> bool {
    PREFILL.load(std::sync::atomic::Ordering::Relaxed)
}

/// Both engines' `compression_level` (raft-engine's LZ4 acceleration) in the runs that set
/// it; 0: unset.
static LEVEL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn level() -> Option<usize> {
    match LEVEL.load(std::sync::atomic::Ordering::Relaxed) {
        0 => None,
        l => Some(l),
    }
}

fn re_cfg(dir: &Path, v2: bool, recycle: bool, mode: raft_engine::RecoveryMode) -> raft_engine::Config {
    raft_engine::Config {
        prefill_for_recycle: prefill(),
        prefill_limit: prefill().then_some(raft_engine::ReadableSize::kb(128)),
        dir: dir.to_str().unwrap().to_owned(),
        target_file_size: raft_engine::ReadableSize::kb(32),
        purge_threshold: raft_engine::ReadableSize::kb(128),
        batch_compression_threshold: raft_engine::ReadableSize::kb(1),
        compression_level: level(),
        format_version: if v2 { raft_engine::Version::V2 } else { raft_engine::Version::V1 },
        enable_log_recycle: recycle,
        recovery_mode: mode,
        ..Default::default()
    }
}

fn sh_cfg(dir: &Path, v2: bool, recycle: bool, mode: shale_raftlog::RecoveryMode) -> shale_raftlog::Config {
    shale_raftlog::Config {
        prefill_for_recycle: prefill(),
        prefill_limit: prefill().then_some(shale_raftlog::ReadableSize::kb(128)),
        dir: dir.to_str().unwrap().to_owned(),
        target_file_size: shale_raftlog::ReadableSize::kb(32),
        purge_threshold: shale_raftlog::ReadableSize::kb(128),
        batch_compression_threshold: shale_raftlog::ReadableSize::kb(1),
        compression_level: level(),
        format_version: if v2 { shale_raftlog::Version::V2 } else { shale_raftlog::Version::V1 },
        enable_log_recycle: recycle,
        recovery_mode: mode,
        // Shale's recovery index files in two of the three runs: raft-engine must ignore
        // them, and Shale must not trust one for a file raft-engine appended to.
        recovery_index_files: recycle || !v2,
        ..Default::default()
    }
}

fn re_mode(i: usize) -> raft_engine::RecoveryMode {
    [
        raft_engine::RecoveryMode::AbsoluteConsistency,
        raft_engine::RecoveryMode::TolerateTailCorruption,
        raft_engine::RecoveryMode::TolerateAnyCorruption,
    ][i]
}

fn sh_mode(i: usize) -> shale_raftlog::RecoveryMode {
    [
        shale_raftlog::RecoveryMode::AbsoluteConsistency,
        shale_raftlog::RecoveryMode::TolerateTailCorruption,
        shale_raftlog::RecoveryMode::TolerateAnyCorruption,
    ][i]
}

/// Runs `n` ops on `e`, purging every 40 and compacting what purge asks for.
fn run(e: &dyn Eng, m: &mut Model, rng: &mut Lcg, n: usize) -> usize {
    let mut rewrites_asked = 0;
    for i in 0..n {
        let op = gen_op(rng, m);
        e.apply(&op);
        m.apply(&op);
        if i % 40 == 39 {
            for r in e.purge() {
                rewrites_asked += 1;
                let op = Op::Compact(r, m.last(r).map_or(0, |l| l + 1));
                e.apply(&op);
                m.apply(&op);
            }
        }
    }
    rewrites_asked
}

/// Runs `n` batches of [`gen_batch`] on `e`, purging every 40 and compacting what purge
/// asks for.
fn run_batches(e: &dyn Eng, m: &mut Model, rng: &mut Lcg, n: usize) {
    for i in 0..n {
        let ops = gen_batch(rng, m);
        e.apply_batch(&ops);
        for op in &ops {
            m.apply(op);
        }
        if i % 40 == 39 {
            for r in e.purge() {
                let op = Op::Compact(r, m.last(r).map_or(0, |l| l + 1));
                e.apply(&op);
                m.apply(&op);
            }
        }
    }
}

/// The `.raftlog` files of `dir` (names sorted) and their bytes.
fn log_file_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".raftlog"))
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap()))
        .collect();
    v.sort();
    v
}

fn same(what: &str, got: &Model, want: &Model) -> bool {
    if got == want {
        let entries: usize = want.regions.values().map(|g| g.entries.len()).sum();
        let kvs: usize = want.regions.values().map(|g| g.kvs.len()).sum();
        println!("ok   {what}: {} regions, {entries} entries, {kvs} keys equal", want.regions.len());
        return true;
    }
    println!("FAIL {what}");
    for r in got.regions.keys().chain(want.regions.keys()) {
        let (a, b) = (got.regions.get(r), want.regions.get(r));
        if a != b {
            println!(
                "     region {r}: got first {:?} n {:?} keys {:?}; want first {:?} n {:?} keys {:?}",
                a.map(|g| g.first),
                a.map(|g| g.entries.len()),
                a.map(|g| g.kvs.len()),
                b.map(|g| g.first),
                b.map(|g| g.entries.len()),
                b.map(|g| g.kvs.len())
            );
        }
    }
    false
}

fn rewrite_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".rewrite"))
        .count()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Tears the newest append file holding batches: cuts `cut` bytes off its end. Newer
/// header-only files (an engine opened and closed the directory since) are removed first,
/// so the torn file is the newest, as after a crash in the middle of a write.
fn tear(dir: &Path, cut: u64) -> String {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".raftlog"))
        .collect();
    files.sort();
    // The newest non-empty one (an engine may have left an empty active file).
    for name in files.iter().rev() {
        let p = dir.join(name);
        let len = std::fs::metadata(&p).unwrap().len();
        if len <= 200 {
            std::fs::remove_file(&p).unwrap();
            continue;
        }
        {
            let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            f.set_len(len - cut).unwrap();
            return format!("{name} cut from {len} to {}", len - cut);
        }
    }
    panic!("no file to tear")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let bench =
        match args.get(1).map(|s| s.as_str()) {
            Some("bench-recovery") => {
                Some(bench::recovery(num(2, 256), num(3, 100), num(4, 3) as usize, num(5, 16)))
            }
            Some("bench-open") => Some(match args.get(2) {
                Some(dir) => bench::open_only(std::path::Path::new(dir), num(3, 3) as usize, num(4, 0) == 1),
                None => Err("usage: bench-open DIR [reps] [index 0|1]".to_owned()),
            }),
            Some("bench-fill") => Some(match args.get(2) {
                Some(dir) => bench::fill_only(std::path::Path::new(dir), num(3, 1024), num(4, 100)),
                None => Err("usage: bench-fill DIR [MiB] [regions]".to_owned()),
            }),
            Some("bench-write") => Some(bench::write(num(2, 10), num(3, 4), num(4, 100))),
            Some("bench-write-one") => Some(match args.get(2) {
                Some(which) => bench::write_one(which, num(3, 20000), num(4, 4), num(5, 100)),
                None => Err("usage: bench-write-one shale-raftlog|raft-engine [batches] [threads] [regions]"
                    .to_owned()),
            }),
            _ => None,
        };
    if let Some(r) = bench {
        if let Err(e) = r {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let mut ok = true;
    for (v2, recycle, seed, pre) in
        [(true, false, 1u64, false), (true, true, 2, false), (false, false, 3, false), (true, true, 4, true)]
    {
        PREFILL.store(pre, std::sync::atomic::Ordering::Relaxed);
        let tag = format!("format V{} recycle {recycle} prefill {pre} seed {seed}", if v2 { 2 } else { 1 });
        let tmp = tempfile::tempdir().unwrap();
        // 1. raft-engine writes; Shale reads; Shale writes on; raft-engine reads.
        let d1 = tmp.path().join("from-raft-engine");
        let mut m = Model::default();
        let mut rng = Lcg(seed);
        {
            let e = raft_engine::Engine::open(re_cfg(&d1, v2, recycle, re_mode(1))).unwrap();
            run(&e, &mut m, &mut rng, 1200);
            ok &= same(&format!("{tag}: raft-engine reads its own"), &e.state(), &m);
        }
        println!("     ({} rewrite files written by raft-engine)", rewrite_files(&d1));
        {
            let e = shale_raftlog::Engine::open(sh_cfg(&d1, v2, recycle, sh_mode(0))).unwrap();
            ok &= same(&format!("{tag}: Shale reads raft-engine's directory"), &e.state(), &m);
            run(&e, &mut m, &mut rng, 1200);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&d1, v2, recycle, re_mode(0))).unwrap();
            ok &= same(&format!("{tag}: raft-engine reads it back after Shale wrote on"), &e.state(), &m);
        }
        // 2. Shale writes; raft-engine reads; raft-engine writes on; Shale reads.
        let d2 = tmp.path().join("from-shale");
        let mut m = Model::default();
        {
            let e = shale_raftlog::Engine::open(sh_cfg(&d2, v2, recycle, sh_mode(0))).unwrap();
            run(&e, &mut m, &mut rng, 1200);
        }
        println!("     ({} rewrite files written by Shale)", rewrite_files(&d2));
        {
            let e = raft_engine::Engine::open(re_cfg(&d2, v2, recycle, re_mode(0))).unwrap();
            ok &= same(&format!("{tag}: raft-engine reads Shale's directory"), &e.state(), &m);
            run(&e, &mut m, &mut rng, 600);
        }
        {
            let e = shale_raftlog::Engine::open(sh_cfg(&d2, v2, recycle, sh_mode(0))).unwrap();
            ok &= same(&format!("{tag}: Shale reads it back after raft-engine wrote on"), &e.state(), &m);
        }
        // 3. Torn tail: each mode, both engines, same damaged bytes.
        for (src, who) in [(&d1, "raft-engine-written"), (&d2, "Shale-written")] {
            for mode in 0..3 {
                let a = tmp.path().join(format!("torn-{who}-{mode}-re"));
                let b = tmp.path().join(format!("torn-{who}-{mode}-sh"));
                copy_dir(src, &a);
                let how = tear(&a, 7);
                copy_dir(&a, &b);
                let re = raft_engine::Engine::open(re_cfg(&a, v2, recycle, re_mode(mode))).map(|e| e.state());
                let sh =
                    shale_raftlog::Engine::open(sh_cfg(&b, v2, recycle, sh_mode(mode))).map(|e| e.state());
                let what = format!("{tag}: torn tail of {who} ({how}), mode {:?}", sh_mode(mode));
                match (re, sh) {
                    (Err(a), Err(b)) => println!("ok   {what}: both refuse ({a} / {b})"),
                    (Ok(a), Ok(b)) => {
                        ok &= same(&format!("{what}: Shale's recovery equals raft-engine's"), &b, &a)
                    }
                    (a, b) => {
                        ok = false;
                        println!(
                            "FAIL {what}: raft-engine {}, Shale {}",
                            a.map_or_else(|e| format!("refuses: {e}"), |_| "opens".into()),
                            b.map_or_else(|e| format!("refuses: {e}"), |_| "opens".into())
                        );
                    }
                }
            }
        }
    }
    // 4. Shale with the next file zeroed ahead (`prefill_next_file`, the default; parts 1-3
    // use it too, with the first file the target size): raft-engine reads a
    // cleanly closed directory (and writes on, Shale reads back), and a crash image taken
    // while Shale runs (the active file ends in zeros, `prefill.raftlog.next` is there):
    // raft-engine opens it directly in TolerateTailCorruption; after Shale opened and closed
    // it once, in AbsoluteConsistency.
    PREFILL.store(false, std::sync::atomic::Ordering::Relaxed);
    for (recycle, seed) in [(false, 4u64), (true, 5)] {
        let tag = format!("prefill_next_file, recycle {recycle} seed {seed}");
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("shale-next");
        let (img_re, img_sh) = (tmp.path().join("image-re"), tmp.path().join("image-sh"));
        let mut m = Model::default();
        let mut rng = Lcg(seed);
        // The first files short and doubling (8, 16, then 32 KiB, the target size), as
        // the default's 4 MiB first file does up to 128 MiB.
        let cfg = |dir: &Path, mode: usize| shale_raftlog::Config {
            prefill_next_file: true,
            prefill_first_file_size: shale_raftlog::ReadableSize::kb(8),
            ..sh_cfg(dir, true, recycle, sh_mode(mode))
        };
        let image_model;
        {
            let e = shale_raftlog::Engine::open(cfg(&d, 0)).unwrap();
            run(&e, &mut m, &mut rng, 1200);
            e.sync().unwrap();
            copy_dir(&d, &img_re);
            copy_dir(&d, &img_sh);
            image_model = m.clone();
            let next = img_re.join("prefill.raftlog.next").exists();
            println!(
                "     (crash image taken with the next file {})",
                if next { "present" } else { "absent" }
            );
            run(&e, &mut m, &mut rng, 600);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&d, true, recycle, re_mode(0))).unwrap();
            ok &= same(&format!("{tag}: raft-engine reads Shale's directory"), &e.state(), &m);
            run(&e, &mut m, &mut rng, 600);
        }
        {
            let e = shale_raftlog::Engine::open(cfg(&d, 0)).unwrap();
            ok &= same(&format!("{tag}: Shale reads it back after raft-engine wrote on"), &e.state(), &m);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&img_re, true, recycle, re_mode(1))).unwrap();
            ok &= same(&format!("{tag}: raft-engine reads the crash image"), &e.state(), &image_model);
        }
        {
            let e = shale_raftlog::Engine::open(cfg(&img_sh, 0)).unwrap();
            ok &= same(&format!("{tag}: Shale reads the crash image"), &e.state(), &image_model);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&img_sh, true, recycle, re_mode(0))).unwrap();
            ok &= same(
                &format!("{tag}: raft-engine reads the crash image Shale recovered"),
                &e.state(),
                &image_model,
            );
        }
    }
    // 5. Batches that compact (or clean) a group and append to it in the same batch, with
    // `compression_level` set (raft-engine's LZ4 acceleration), both ways: each engine
    // writes, the other reads and writes on, the first reads back.
    for (lvl, seed) in [(3usize, 6u64), (40, 7)] {
        LEVEL.store(lvl, std::sync::atomic::Ordering::Relaxed);
        let tag = format!("compact-then-append batches, compression_level {lvl}, seed {seed}");
        let tmp = tempfile::tempdir().unwrap();
        let mut rng = Lcg(seed);
        let d1 = tmp.path().join("from-raft-engine");
        let mut m = Model::default();
        {
            let e = raft_engine::Engine::open(re_cfg(&d1, true, true, re_mode(0))).unwrap();
            run_batches(&e, &mut m, &mut rng, 800);
            ok &= same(&format!("{tag}: raft-engine reads its own"), &e.state(), &m);
        }
        {
            let e = shale_raftlog::Engine::open(sh_cfg(&d1, true, true, sh_mode(0))).unwrap();
            ok &= same(&format!("{tag}: Shale reads raft-engine's directory"), &e.state(), &m);
            run_batches(&e, &mut m, &mut rng, 800);
            ok &= same(&format!("{tag}: Shale after writing on"), &e.state(), &m);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&d1, true, true, re_mode(0))).unwrap();
            ok &= same(&format!("{tag}: raft-engine reads it back after Shale wrote on"), &e.state(), &m);
        }
        let d2 = tmp.path().join("from-shale");
        let mut m = Model::default();
        {
            let e = shale_raftlog::Engine::open(sh_cfg(&d2, true, true, sh_mode(0))).unwrap();
            run_batches(&e, &mut m, &mut rng, 800);
            ok &= same(&format!("{tag}: Shale reads its own"), &e.state(), &m);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&d2, true, true, re_mode(0))).unwrap();
            ok &= same(&format!("{tag}: raft-engine reads Shale's directory"), &e.state(), &m);
            run_batches(&e, &mut m, &mut rng, 800);
        }
        {
            let e = shale_raftlog::Engine::open(sh_cfg(&d2, true, true, sh_mode(0))).unwrap();
            ok &= same(&format!("{tag}: Shale reads it back after raft-engine wrote on"), &e.state(), &m);
        }
        // The same batches (no purge) written by each engine into a fresh directory: the
        // log files are byte for byte the same, compressed blobs included (both call
        // liblz4's LZ4_compress_fast with this acceleration).
        let (a, b) = (tmp.path().join("bytes-re"), tmp.path().join("bytes-sh"));
        let mut batches = Vec::new();
        let mut bm = Model::default();
        for _ in 0..300 {
            let ops = gen_batch(&mut rng, &bm);
            for op in &ops {
                bm.apply(op);
            }
            batches.push(ops);
        }
        {
            let e = raft_engine::Engine::open(re_cfg(&a, true, false, re_mode(0))).unwrap();
            batches.iter().for_each(|ops| e.apply_batch(ops));
        }
        {
            let cfg =
                shale_raftlog::Config { recovery_index_files: false, ..sh_cfg(&b, true, false, sh_mode(0)) };
            let e = shale_raftlog::Engine::open(cfg).unwrap();
            batches.iter().for_each(|ops| e.apply_batch(ops));
        }
        let (fa, fb) = (log_file_bytes(&a), log_file_bytes(&b));
        let total: usize = fa.iter().map(|(_, v)| v.len()).sum();
        if fa == fb {
            println!(
                "ok   {tag}: the two engines' log files are byte for byte the same ({} files, {total} bytes)",
                fa.len()
            );
        } else {
            ok = false;
            let names = |f: &[(String, Vec<u8>)]| {
                f.iter().map(|(n, v)| format!("{n} ({} bytes)", v.len())).collect::<Vec<_>>()
            };
            println!("FAIL {tag}: log files differ: raft-engine {:?}, Shale {:?}", names(&fa), names(&fb));
            for ((n, x), (_, y)) in fa.iter().zip(&fb) {
                if let Some(at) = x.iter().zip(y).position(|(p, q)| p != q) {
                    println!("     {n}: first difference at byte {at}");
                    break;
                }
            }
        }
    }
    LEVEL.store(0, std::sync::atomic::Ordering::Relaxed);
    if ok {
        println!("interop: all checks passed");
    } else {
        println!("interop: FAILURES");
        std::process::exit(1);
    }
}
