//! Shared by the raftlog scenario tests: an in-memory model of the engine's logical state,
//! a random workload over it, and the comparison of an engine against the model.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale_raftlog::env::FileSystem;
use shale_raftlog::{Command, Config, Engine, FilePipeLog, LogBatch, ReadableSize};

/// One region of the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelRegion {
    pub first: u64,
    pub entries: Vec<Vec<u8>>,
    pub kvs: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// The logical state: what every read must return.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    pub regions: BTreeMap<u64, ModelRegion>,
}

/// One logical operation (a batch holds one).
#[derive(Clone, Debug)]
pub enum Op {
    Append { region: u64, first: u64, entries: Vec<Vec<u8>> },
    Compact { region: u64, index: u64 },
    Put { region: u64, key: Vec<u8>, value: Vec<u8> },
    Delete { region: u64, key: Vec<u8> },
    Clean { region: u64 },
}

impl Model {
    pub fn apply(&mut self, op: &Op) {
        match op {
            Op::Append { region, first, entries } => {
                let r = self.regions.entry(*region).or_default();
                let last = r.first + r.entries.len() as u64; // one past
                if !r.entries.is_empty() && *first >= r.first && *first <= last {
                    r.entries.truncate((*first - r.first) as usize);
                } else {
                    r.entries.clear();
                    r.first = *first;
                }
                r.entries.extend(entries.iter().cloned());
            }
            Op::Compact { region, index } => {
                if let Some(r) = self.regions.get_mut(region) {
                    if *index > r.first && !r.entries.is_empty() {
                        let n = ((*index - r.first) as usize).min(r.entries.len());
                        r.entries.drain(..n);
                        r.first += n as u64;
                    }
                }
            }
            Op::Put { region, key, value } => {
                self.regions.entry(*region).or_default().kvs.insert(key.clone(), value.clone());
            }
            Op::Delete { region, key } => {
                if let Some(r) = self.regions.get_mut(region) {
                    r.kvs.remove(key);
                }
            }
            Op::Clean { region } => {
                self.regions.remove(region);
            }
        }
        self.regions.retain(|_, r| !r.entries.is_empty() || !r.kvs.is_empty());
        for r in self.regions.values_mut() {
            if r.entries.is_empty() {
                r.first = 0; // meaningless without entries; `snapshot` reads it as 0
            }
        }
    }

    pub fn last(&self, region: u64) -> Option<u64> {
        self.regions
            .get(&region)
            .filter(|r| !r.entries.is_empty())
            .map(|r| r.first + r.entries.len() as u64 - 1)
    }
}

pub fn batch_of(op: &Op) -> LogBatch {
    let mut b = LogBatch::default();
    match op {
        Op::Append { region, first, entries } => b.add_raw_entries(*region, *first, entries).unwrap(),
        Op::Compact { region, index } => b.add_command(*region, Command::Compact { index: *index }),
        Op::Put { region, key, value } => b.put(*region, key.clone(), value.clone()).unwrap(),
        Op::Delete { region, key } => b.delete(*region, key.clone()),
        Op::Clean { region } => b.add_command(*region, Command::Clean),
    }
    b
}

/// Random operations, valid against the model (no holes).
pub struct Workload {
    pub rng: SmallRng,
    pub regions: u64,
    pub max_entry: usize,
}

impl Workload {
    pub fn new(seed: u64, regions: u64) -> Workload {
        Workload { rng: SmallRng::seed_from_u64(seed), regions, max_entry: 300 }
    }

    pub fn next(&mut self, m: &Model) -> Op {
        let region = self.rng.gen_range(1..=self.regions);
        let key = format!("key{}", self.rng.gen_range(0..6)).into_bytes();
        match self.rng.gen_range(0..100) {
            0..=54 => {
                let (first, last) = match m.regions.get(&region).filter(|r| !r.entries.is_empty()) {
                    Some(r) => (r.first, r.first + r.entries.len() as u64 - 1),
                    None => {
                        let start = self.rng.gen_range(1..50);
                        return self.append_op(region, start);
                    }
                };
                // Mostly extend; sometimes overwrite a suffix.
                let at = if self.rng.gen_bool(0.8) { last + 1 } else { self.rng.gen_range(first..=last + 1) };
                self.append_op(region, at)
            }
            55..=66 => {
                let index = match m.regions.get(&region).filter(|r| !r.entries.is_empty()) {
                    Some(r) => r.first + self.rng.gen_range(0..=r.entries.len() as u64 + 1),
                    None => self.rng.gen_range(1..60),
                };
                Op::Compact { region, index }
            }
            67..=82 => {
                let n = self.rng.gen_range(1..200);
                let value: Vec<u8> = (0..n).map(|_| self.rng.gen()).collect();
                Op::Put { region, key, value }
            }
            83..=95 => Op::Delete { region, key },
            _ => Op::Clean { region },
        }
    }

    fn append_op(&mut self, region: u64, first: u64) -> Op {
        let n = self.rng.gen_range(1..8);
        let entries = (0..n)
            .map(|i| {
                let len = self.rng.gen_range(1..self.max_entry);
                let mut e = format!("r{region}i{}:", first + i).into_bytes();
                e.extend((0..len).map(|_| self.rng.gen_range(b'a'..=b'z')));
                e
            })
            .collect();
        Op::Append { region, first, entries }
    }
}

/// Small files and thresholds, so rotation, rewrite and rewrite-queue purges all happen.
pub fn small_config(dir: &str) -> Config {
    Config {
        dir: dir.to_owned(),
        target_file_size: ReadableSize(4096),
        purge_threshold: ReadableSize(16 * 1024),
        purge_rewrite_threshold: Some(ReadableSize(8 * 1024)),
        purge_rewrite_garbage_ratio: 0.3,
        batch_compression_threshold: ReadableSize(512),
        recovery_threads: 3,
        ..Config::default()
    }
}

/// Checks every region of the model, and that the engine has no other region.
pub fn check<F: FileSystem>(e: &Engine<F, FilePipeLog<F>>, m: &Model, ctx: &str) {
    let want: Vec<u64> = m.regions.keys().copied().collect();
    assert_eq!(e.raft_groups(), want, "{ctx}: regions");
    for (id, r) in &m.regions {
        if r.entries.is_empty() {
            assert_eq!(e.first_index(*id), None, "{ctx}: region {id} first index");
            assert_eq!(e.last_index(*id), None, "{ctx}: region {id} last index");
        } else {
            let last = r.first + r.entries.len() as u64 - 1;
            assert_eq!(e.first_index(*id), Some(r.first), "{ctx}: region {id} first index");
            assert_eq!(e.last_index(*id), Some(last), "{ctx}: region {id} last index");
            let mut got = Vec::new();
            e.fetch_raw_entries_to(*id, r.first, last + 1, None, &mut got).unwrap();
            assert_eq!(got.len(), r.entries.len(), "{ctx}: region {id} entry count");
            for (i, (g, w)) in got.iter().zip(&r.entries).enumerate() {
                assert_eq!(g, w, "{ctx}: region {id} entry {}", r.first + i as u64);
            }
            assert_eq!(e.get_raw_entry(*id, r.first - 1).unwrap(), None, "{ctx}: region {id} below first");
            assert_eq!(e.get_raw_entry(*id, last + 1).unwrap(), None, "{ctx}: region {id} above last");
        }
        let mut kvs = BTreeMap::new();
        e.scan_raw_messages(*id, None, None, false, |k, v| {
            kvs.insert(k.to_vec(), v.to_vec());
            true
        })
        .unwrap();
        assert_eq!(&kvs, &r.kvs, "{ctx}: region {id} keys");
        for (k, v) in &r.kvs {
            assert_eq!(e.get(*id, k).as_ref(), Some(v), "{ctx}: region {id} key {k:?}");
        }
    }
}

pub fn open_on<F: FileSystem>(cfg: &Config, fs: &Arc<F>) -> Engine<F, FilePipeLog<F>> {
    Engine::open_with_file_system(cfg.clone(), fs.clone()).unwrap()
}

/// Reads the engine's whole logical state into a model.
pub fn snapshot<F: FileSystem>(e: &Engine<F, FilePipeLog<F>>) -> Model {
    let mut m = Model::default();
    for id in e.raft_groups() {
        let mut r = ModelRegion::default();
        if let (Some(first), Some(last)) = (e.first_index(id), e.last_index(id)) {
            r.first = first;
            e.fetch_raw_entries_to(id, first, last + 1, None, &mut r.entries).unwrap();
        }
        e.scan_raw_messages(id, None, None, false, |k, v| {
            r.kvs.insert(k.to_vec(), v.to_vec());
            true
        })
        .unwrap();
        m.regions.insert(id, r);
    }
    m
}

/// The model state equals the recovered one, or the one after one more (unacknowledged)
/// operation.
pub fn assert_acked_prefix(got: &Model, acked: &Model, pending: Option<&Op>, ctx: &str) {
    if got == acked {
        return;
    }
    if let Some(op) = pending {
        let mut next = acked.clone();
        next.apply(op);
        if *got == next {
            return;
        }
    }
    let diff: Vec<u64> = got
        .regions
        .keys()
        .chain(acked.regions.keys())
        .copied()
        .filter(|id| got.regions.get(id) != acked.regions.get(id))
        .collect();
    for id in &diff {
        let g = got.regions.get(id);
        let a = acked.regions.get(id);
        eprintln!(
            "region {id}: got first {:?} n {:?} keys {:?}",
            g.map(|r| r.first),
            g.map(|r| r.entries.len()),
            g.map(|r| r.kvs.keys().collect::<Vec<_>>())
        );
        eprintln!(
            "region {id}: ack first {:?} n {:?} keys {:?}",
            a.map(|r| r.first),
            a.map(|r| r.entries.len()),
            a.map(|r| r.kvs.keys().collect::<Vec<_>>())
        );
        if let (Some(g), Some(a)) = (g, a) {
            for (i, (x, y)) in g.entries.iter().zip(&a.entries).enumerate() {
                if x != y {
                    eprintln!(
                        "  entry {} differs: got {:?} want {:?}",
                        g.first + i as u64,
                        String::from_utf8_lossy(&x[..x.len().min(12)]),
                        String::from_utf8_lossy(&y[..y.len().min(12)])
                    );
                }
            }
            for (k, v) in &g.kvs {
                if a.kvs.get(k) != Some(v) {
                    eprintln!("  key {:?} differs", String::from_utf8_lossy(k));
                }
            }
        }
    }
    eprintln!(
        "pending: {:?}",
        pending.map(|p| {
            let s = format!("{p:?}");
            s[..s.len().min(80)].to_string()
        })
    );
    panic!("{ctx}: recovered state is neither the acknowledged one nor one op further; regions differing: {diff:?}");
}

/// The `.raftlog` files of `dir`, sorted by name (the prefill tests).
pub fn log_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "raftlog"))
        .collect();
    v.sort();
    v
}

/// Whether the file's last 64 bytes are zeros (a prefilled tail).
pub fn ends_in_zeros(p: &std::path::Path) -> bool {
    let b = std::fs::read(p).unwrap();
    b.len() >= 64 && b[b.len() - 64..].iter().all(|&x| x == 0)
}

/// Entry `i` of the prefill tests: 1000 bytes, none zero.
pub fn entry(i: u64) -> Vec<u8> {
    (0..1000u64).map(|j| (i * 31 + j * 7 % 251) as u8 | 1).collect()
}

/// raft-engine's V2 file header: its 53-byte magic, the version and the alignment (u64 each).
pub const HEADER_LEN: usize = 53 + 8 + 8;

/// Writes entry `i` of the prefill tests' workload (three regions, one entry per batch), synced.
pub fn write_entry(e: &Engine, i: u64) {
    let mut b = LogBatch::default();
    b.add_raw_entries(1 + i % 3, i.div_ceil(3), &[entry(i)]).unwrap();
    e.write(&mut b, true).unwrap();
}

/// Opens `dir` with `cfg` and checks entries 1..=n of [`write_entry`]'s workload are all
/// there; after the close, no log file keeps a zero tail.
pub fn check_entries(dir: &std::path::Path, cfg: &Config, n: u64, what: &str) {
    let e = Engine::open(Config { dir: dir.to_str().unwrap().to_owned(), ..cfg.clone() }).unwrap();
    for i in 1..=n {
        assert_eq!(e.get_raw_entry(1 + i % 3, i.div_ceil(3)).unwrap(), Some(entry(i)), "{what}: entry {i}");
    }
    assert_eq!(e.last_index(1 + n % 3), Some(n.div_ceil(3)), "{what}: last index");
    drop(e);
    for f in log_files(dir) {
        assert!(!ends_in_zeros(&f), "{what}: {} keeps a zero tail", f.display());
    }
}

/// Copies a directory's files (not LOCK): a crash image of an engine that is still open.
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}
