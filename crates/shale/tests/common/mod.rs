//! Shared by the fault-injection scenario tests: a deterministic workload over column
//! families, its model (the state after every operation), and helpers to run it on a
//! `FaultInjectionFs`, read a database's whole state back and bound waits with timeouts.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::fs::{FaultInjectionFs, FileSystem, MemFileSystem};
use shale::{IteratorMode, Options, WriteBatch, WriteOptions, DB};

pub const DB_PATH: &str = "/db";

/// Family name -> its key/value pairs.
pub type State = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

#[derive(Debug, Clone)]
pub enum Entry {
    Put(String, Vec<u8>, Vec<u8>),
    Delete(String, Vec<u8>),
    DeleteRange(String, Vec<u8>, Vec<u8>),
}

#[derive(Debug, Clone)]
pub enum Op {
    /// One write (a batch of one or more entries), synced or not.
    Write {
        entries: Vec<Entry>,
        sync: bool,
    },
    Flush,
    Compact(String),
    CreateCf(String),
    DropCf(String),
}

impl Op {
    /// Whether an acknowledged `self` must survive a crash.
    pub fn durable(&self) -> bool {
        match self {
            Op::Write { sync, .. } => *sync,
            _ => true,
        }
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:03}").into_bytes()
}

/// A deterministic mix of puts, deletes, batches, range deletions, flushes, compactions
/// and column family creation and drop.
pub fn workload(seed: u64, len: usize) -> Vec<Op> {
    workload_with_families(seed, len, 1)
}

/// `workload` that first creates families up to `families` (default included).
pub fn workload_with_families(seed: u64, len: usize, families: usize) -> Vec<Op> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut ops = Vec::new();
    let mut cfs = vec!["default".to_string()];
    let mut next_cf = 0;
    while cfs.len() < families {
        next_cf += 1;
        let name = format!("cf{next_cf}");
        cfs.push(name.clone());
        ops.push(Op::CreateCf(name));
    }
    for i in 0..len {
        let r = rng.gen_range(0..100);
        let cf = cfs[rng.gen_range(0..cfs.len())].clone();
        let sync = rng.gen_bool(0.3);
        let put = |rng: &mut SmallRng, cf: &str| {
            let v = format!("v{i}-{}", "x".repeat(rng.gen_range(0..40))).into_bytes();
            Entry::Put(cf.to_string(), key(rng.gen_range(0..60)), v)
        };
        let op = match r {
            0..=44 => Op::Write { entries: vec![put(&mut rng, &cf)], sync },
            45..=54 => Op::Write { entries: vec![Entry::Delete(cf, key(rng.gen_range(0..60)))], sync },
            55..=69 => {
                let n = rng.gen_range(2..6);
                let entries = (0..n)
                    .map(|_| {
                        let c = cfs[rng.gen_range(0..cfs.len())].clone();
                        if rng.gen_bool(0.8) {
                            put(&mut rng, &c)
                        } else {
                            Entry::Delete(c, key(rng.gen_range(0..60)))
                        }
                    })
                    .collect();
                Op::Write { entries, sync }
            }
            70..=74 => {
                let a = rng.gen_range(0..60);
                let b = a + rng.gen_range(1..10);
                Op::Write { entries: vec![Entry::DeleteRange(cf, key(a), key(b))], sync }
            }
            75..=83 => Op::Flush,
            84..=89 => Op::Compact(cf),
            90..=94 if cfs.len() < 4 => {
                next_cf += 1;
                let name = format!("cf{next_cf}");
                cfs.push(name.clone());
                Op::CreateCf(name)
            }
            _ if cfs.len() > 1 && i % 3 == 0 => Op::DropCf(cfs.remove(rng.gen_range(1..cfs.len()))),
            _ => Op::Write { entries: vec![put(&mut rng, &cf)], sync: true },
        };
        ops.push(op);
    }
    ops
}

/// The model's state after each prefix: `states[i]` follows the first `i` operations.
pub fn model_states(ops: &[Op]) -> Vec<State> {
    let mut s = State::new();
    s.insert("default".to_string(), BTreeMap::new());
    let mut out = vec![s.clone()];
    for op in ops {
        match op {
            Op::Write { entries, .. } => {
                for e in entries {
                    match e {
                        Entry::Put(cf, k, v) => {
                            s.get_mut(cf).map(|m| m.insert(k.clone(), v.clone()));
                        }
                        Entry::Delete(cf, k) => {
                            s.get_mut(cf).map(|m| m.remove(k));
                        }
                        Entry::DeleteRange(cf, a, b) => {
                            if let Some(m) = s.get_mut(cf) {
                                m.retain(|k, _| k < a || k >= b);
                            }
                        }
                    }
                }
            }
            Op::Flush | Op::Compact(_) => {}
            Op::CreateCf(n) => {
                s.insert(n.clone(), BTreeMap::new());
            }
            Op::DropCf(n) => {
                s.remove(n);
            }
        }
        out.push(s.clone());
    }
    out
}

pub fn options(fs: &Arc<FaultInjectionFs>) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_disable_auto_compactions(true); // keep the file operations deterministic
    o.set_write_buffer_size(4 << 20);
    o.set_compression_type(shale::DBCompressionType::None);
    o.set_file_system(fs.clone() as Arc<dyn FileSystem>);
    o
}

pub fn new_fault_fs() -> Arc<FaultInjectionFs> {
    Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())))
}

/// Opens the database on `fs` with every family it has.
pub fn open_all(fs: &Arc<FaultInjectionFs>) -> shale::Result<DB> {
    open_all_with(fs, options(fs))
}

/// `open_all` with the given options.
pub fn open_all_with(fs: &Arc<FaultInjectionFs>, opts: Options) -> shale::Result<DB> {
    let names = if db_exists(fs) { DB::list_cf(&opts, DB_PATH)? } else { Vec::new() };
    // Every family gets `opts` (`open_cf` would give the named ones `Options::default()`).
    let mut descs: Vec<shale::ColumnFamilyDescriptor> =
        names.iter().map(|n| shale::ColumnFamilyDescriptor::new(n, opts.clone())).collect();
    if !names.iter().any(|n| n == "default") {
        descs.insert(0, shale::ColumnFamilyDescriptor::new("default", opts.clone()));
    }
    DB::open_cf_descriptors(&opts, DB_PATH, descs)
}

/// Applies one operation to the database.
pub fn apply(db: &mut DB, op: &Op) -> shale::Result<()> {
    apply_with(db, op, &db_options_for_cf())
}

/// `apply`, creating families with `cf_opts`.
pub fn apply_with(db: &mut DB, op: &Op, cf_opts: &Options) -> shale::Result<()> {
    match op {
        Op::Write { entries, sync } => {
            let mut wo = WriteOptions::default();
            wo.set_sync(*sync);
            let mut b = WriteBatch::default();
            for e in entries {
                let name = match e {
                    Entry::Put(c, ..) | Entry::Delete(c, ..) | Entry::DeleteRange(c, ..) => c,
                };
                let cf = db.cf_handle(name).expect("workload names only live families");
                match e {
                    Entry::Put(_, k, v) => b.put_cf(cf, k, v),
                    Entry::Delete(_, k) => b.delete_cf(cf, k),
                    Entry::DeleteRange(_, a, c) => b.delete_range_cf(cf, a, c),
                }
            }
            db.write_opt(b, &wo)
        }
        Op::Flush => db.flush(),
        Op::Compact(name) => {
            let cf = db.cf_handle(name).expect("live family");
            db.try_compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>)
        }
        Op::CreateCf(name) => db.create_cf(name, cf_opts),
        Op::DropCf(name) => db.drop_cf(name),
    }
}

fn db_options_for_cf() -> Options {
    let mut o = Options::default();
    o.set_disable_auto_compactions(true);
    o.set_write_buffer_size(4 << 20);
    o.set_compression_type(shale::DBCompressionType::None);
    o
}

/// Everything the database holds, family by family.
pub fn read_state(db: &DB) -> shale::Result<State> {
    let mut s = State::new();
    for name in db_family_names(db) {
        let cf = db.cf_handle(&name).expect("open family");
        let mut m = BTreeMap::new();
        for item in db.iterator_cf(cf, IteratorMode::Start) {
            let (k, v) = item?;
            m.insert(k.to_vec(), v.to_vec());
        }
        s.insert(name, m);
    }
    Ok(s)
}

/// The open families (the workload names them cf1, cf2, ...).
fn db_family_names(db: &DB) -> Vec<String> {
    let mut names = vec!["default".to_string()];
    for i in 1..64 {
        let n = format!("cf{i}");
        if db.cf_handle(&n).is_some() {
            names.push(n);
        }
    }
    names
}

/// Index of the model state equal to `got` within `lo..=hi`, or a description of the
/// mismatch.
pub fn match_prefix(got: &State, states: &[State], lo: usize, hi: usize) -> Result<usize, String> {
    let hi = hi.min(states.len() - 1);
    if let Some(j) = (lo..=hi).rev().find(|&j| states[j] == *got) {
        return Ok(j);
    }
    let other = (0..states.len()).find(|&j| states[j] == *got);
    Err(format!(
        "recovered state matches no model state in {lo}..={hi} (matches state {other:?}); \
         got {}, want at least {}; differences from state {lo}: {}; from state {hi}: {}",
        describe(got),
        describe(&states[lo]),
        diff(got, &states[lo]),
        diff(got, &states[hi])
    ))
}

/// The first few differences between two states.
fn diff(got: &State, want: &State) -> String {
    let mut out = Vec::new();
    for name in got.keys().chain(want.keys()).collect::<std::collections::BTreeSet<_>>() {
        let (g, w) = (got.get(name), want.get(name));
        let (Some(g), Some(w)) = (g, w) else {
            out.push(format!("family {name}: got {}, want {}", g.is_some(), w.is_some()));
            continue;
        };
        for k in g.keys().chain(w.keys()).collect::<std::collections::BTreeSet<_>>() {
            let (a, b) = (g.get(k), w.get(k));
            if a != b {
                let show = |v: Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned());
                out.push(format!(
                    "{name}/{}: got {:?}, want {:?}",
                    String::from_utf8_lossy(k),
                    show(a),
                    show(b)
                ));
            }
        }
    }
    out.truncate(6);
    out.join("; ")
}

fn describe(s: &State) -> String {
    s.iter().map(|(n, m)| format!("{n}:{} keys", m.len())).collect::<Vec<_>>().join(", ")
}

/// Runs `f` on a thread; panics if it takes longer than `secs` (a hang) or panicked.
pub fn with_timeout<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer within {secs} s (hang?)"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

pub fn db_exists(fs: &FaultInjectionFs) -> bool {
    fs.file_exists(&Path::new(DB_PATH).join("CURRENT"))
}
