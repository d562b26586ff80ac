//! The `txn`, `optimistic` and `raftlog` modes of `shale stress` / `shale crash-test`.
//!
//! **Bank** (`txn`: TransactionDB, `optimistic`: OptimisticTransactionDB). `ACCOUNTS` accounts
//! start at `START`; thread t's n-th transfer is a fixed function of (t, n) (`transfer`), and
//! commits, in one transaction, the two new balances and the key `seq<t>` = n. Transfers
//! commute (balances may go negative), so the balances that go with any set of sequence
//! numbers are known ([`Ledger`]): a reader checks, under one snapshot, that the balances it
//! sees are exactly those of the sequence numbers it sees, and that the total is unchanged.
//! The expected state (see `stress.rs`) holds, per thread, the committed and pending n; after
//! a crash `seq<t>` must be one of them: lower is a lost commit, higher a phantom.
//!
//! **Raft log** (shale-raftlog). `REGIONS` regions, each owned by one thread, which appends
//! 1-8 entries at a time (entry i of region r has fixed bytes, `entry(r, i)`) with the key
//! `last` = the new last index in the same batch, and now and then compacts the region
//! (purge); another thread calls `purge_expired_files` (rewrites of old files into the
//! rewrite queue, removal of purged files) and compacts the regions it says hold it up. The expected
//! state holds, per region, the committed and pending last index; after a crash the last
//! index must be one of them, every entry from the first index to the last must read back
//! with its bytes, and `last` must equal the last index.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use shale::{
    ErrorKind, MultiThreaded, OptimisticTransactionDB, OptimisticTransactionOptions, Options, Transaction,
    TransactionDB, TransactionDBOptions, TransactionOptions, WriteBatchWithTransaction, WriteOptions,
};
use shale_base::fs::FileSystemRef;
use shale_raftlog::{Config, Engine, LogBatch, ReadableSize};

use crate::stress::{Counters, Expected, Mode, Rng, StressArgs, Tally, NONE};

pub const ACCOUNTS: u64 = 32;
const START: i64 = 1000;
pub const REGIONS: u32 = 64;

fn acct(i: u64) -> Vec<u8> {
    format!("acct{i:03}").into_bytes()
}

fn seq_key(t: u32) -> Vec<u8> {
    format!("seq{t:03}").into_bytes()
}

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Thread t's n-th transfer: (from, to, amount).
fn transfer(t: u32, n: u32) -> (u64, u64, i64) {
    let h = mix(((t as u64) << 32) | n as u64);
    let from = h % ACCOUNTS;
    let to = (from + 1 + (h >> 8) % (ACCOUNTS - 1)) % ACCOUNTS;
    (from, to, 1 + ((h >> 20) % 100) as i64)
}

fn parse_num(v: Option<Vec<u8>>, what: &str) -> Result<Option<i64>, String> {
    match v {
        None => Ok(None),
        Some(b) => std::str::from_utf8(&b)
            .ok()
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| format!("{what}: not a number: {:?}", String::from_utf8_lossy(&b))),
    }
}

/// The balances that go with a set of per-thread sequence numbers.
pub struct Ledger {
    seqs: Vec<u32>,
    bal: Vec<i64>,
}

impl Ledger {
    pub fn new(threads: u32) -> Ledger {
        Ledger { seqs: vec![0; threads as usize], bal: vec![START; ACCOUNTS as usize] }
    }

    fn advance(&mut self, seqs: &[u32]) {
        if seqs.iter().zip(&self.seqs).any(|(new, old)| new < old) {
            *self = Ledger::new(seqs.len() as u32);
        }
        for (t, (&to, from)) in seqs.iter().zip(self.seqs.iter_mut()).enumerate() {
            for n in *from + 1..=to {
                let (a, b, amount) = transfer(t as u32, n);
                self.bal[a as usize] -= amount;
                self.bal[b as usize] += amount;
            }
            *from = to;
        }
    }

    /// Checks balances and sequence numbers read under one view; `Err` describes a break.
    /// `Ok(false)`: the bank is not set up yet (nothing written).
    fn check(&mut self, seqs: &[Option<i64>], bal: &[Option<i64>]) -> Result<bool, String> {
        if seqs.iter().all(Option::is_none) && bal.iter().all(Option::is_none) {
            return Ok(false);
        }
        let mut s = Vec::with_capacity(seqs.len());
        for (t, v) in seqs.iter().enumerate() {
            match v {
                Some(n) if (0..=u32::MAX as i64).contains(n) => s.push(*n as u32),
                _ => return Err(format!("seq{t:03} is {v:?}")),
            }
        }
        self.advance(&s);
        let total: i64 = bal.iter().map(|b| b.unwrap_or(i64::MIN / 64)).sum();
        if total != START * ACCOUNTS as i64 {
            return Err(format!("total {total} (expected {}) at seqs {s:?}", START * ACCOUNTS as i64));
        }
        for (i, (got, want)) in bal.iter().zip(&self.bal).enumerate() {
            if *got != Some(*want) {
                return Err(format!("acct{i:03} is {got:?}, expected {want} at seqs {s:?}"));
            }
        }
        Ok(true)
    }
}

/// The two transaction kinds, for one body of code.
pub trait BankDb: Send + Sync + 'static {
    type D;
    fn begin(&self, wo: &WriteOptions) -> Transaction<'_, Self::D>;
    /// Reads `keys` under one snapshot.
    fn read_snapshot(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, String>;
    fn write(&self, b: WriteBatchWithTransaction<true>, wo: &WriteOptions) -> Result<(), String>;
    fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String>;
}

impl BankDb for TransactionDB<MultiThreaded> {
    type D = TransactionDB<MultiThreaded>;
    fn begin(&self, wo: &WriteOptions) -> Transaction<'_, Self::D> {
        let mut o = TransactionOptions::default();
        o.set_deadlock_detect(true);
        o.set_lock_timeout(30_000);
        self.transaction_opt(wo, &o)
    }
    fn read_snapshot(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, String> {
        let snap = self.snapshot();
        snap.multi_get(keys).into_iter().map(|r| r.map_err(|e| format!("snapshot get: {e}"))).collect()
    }
    fn write(&self, b: WriteBatchWithTransaction<true>, wo: &WriteOptions) -> Result<(), String> {
        self.write_opt(b, wo).map_err(|e| format!("write: {e}"))
    }
    fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
        TransactionDB::get(self, k).map_err(|e| format!("get: {e}"))
    }
}

impl BankDb for OptimisticTransactionDB<MultiThreaded> {
    type D = OptimisticTransactionDB<MultiThreaded>;
    fn begin(&self, wo: &WriteOptions) -> Transaction<'_, Self::D> {
        self.transaction_opt(wo, &OptimisticTransactionOptions::default())
    }
    fn read_snapshot(&self, keys: &[Vec<u8>]) -> Result<Vec<Option<Vec<u8>>>, String> {
        let snap = self.snapshot();
        snap.multi_get(keys).into_iter().map(|r| r.map_err(|e| format!("snapshot get: {e}"))).collect()
    }
    fn write(&self, b: WriteBatchWithTransaction<true>, wo: &WriteOptions) -> Result<(), String> {
        self.write_opt(b, wo).map_err(|e| format!("write: {e}"))
    }
    fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, String> {
        OptimisticTransactionDB::get(self, k).map_err(|e| format!("get: {e}"))
    }
}

fn bank_options(a: &StressArgs, fs: Option<FileSystemRef>) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(a.write_buffer_size);
    o.set_target_file_size_base(a.write_buffer_size as u64);
    o.set_max_bytes_for_level_base(4 * a.write_buffer_size as u64);
    o.set_max_background_jobs(a.max_background_jobs);
    o.set_enable_pipelined_write(a.enable_pipelined_write);
    if let Some(fs) = fs {
        o.set_file_system(fs);
    }
    o
}

pub fn open_txn(a: &StressArgs, fs: Option<FileSystemRef>) -> Result<TransactionDB<MultiThreaded>, String> {
    TransactionDB::open(&bank_options(a, fs), &TransactionDBOptions::default(), &a.db)
        .map_err(|e| format!("open: {e}"))
}

pub fn open_optimistic(
    a: &StressArgs,
    fs: Option<FileSystemRef>,
) -> Result<OptimisticTransactionDB<MultiThreaded>, String> {
    OptimisticTransactionDB::open(&bank_options(a, fs), &a.db).map_err(|e| format!("open: {e}"))
}

fn bank_keys(threads: u32) -> Vec<Vec<u8>> {
    (0..threads).map(seq_key).chain((0..ACCOUNTS).map(acct)).collect()
}

/// One consistent view: (sequence numbers, balances).
type View = (Vec<Option<i64>>, Vec<Option<i64>>);

fn split_view(threads: u32, vals: Vec<Option<Vec<u8>>>) -> Result<View, String> {
    let mut seqs = Vec::new();
    let mut bal = Vec::new();
    for (i, v) in vals.into_iter().enumerate() {
        if i < threads as usize {
            seqs.push(parse_num(v, "seq")?);
        } else {
            bal.push(parse_num(v, "balance")?);
        }
    }
    Ok((seqs, bal))
}

/// The child: transfers on `threads` threads and a snapshot checker, until `stop`.
pub fn bank_run<B: BankDb>(
    db: Arc<B>,
    a: &StressArgs,
    e: Arc<Expected>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
) -> Result<(), String> {
    let threads = a.threads.max(1);
    let mut wo = WriteOptions::default();
    wo.set_sync(a.sync || (a.power_loss && !a.unsynced_writes));
    // Set up the accounts once, atomically.
    if db.get(&seq_key(0))?.is_none() && (0..threads).all(|t| e.get(t).map(|s| s.0 == 0).unwrap_or(false)) {
        let mut b = WriteBatchWithTransaction::<true>::default();
        for t in 0..threads {
            b.put(seq_key(t), "0");
        }
        for i in 0..ACCOUNTS {
            b.put(acct(i), START.to_string());
        }
        db.write(b, &wo)?;
    }
    let mut handles = Vec::new();
    for t in 0..threads {
        let (db, e, counters, stop, wo) = (db.clone(), e.clone(), counters.clone(), stop.clone(), wo.clone());
        handles.push(std::thread::spawn(move || -> Result<(), String> {
            while !stop.load(Ordering::Relaxed) {
                let (c, _) = e.get(t)?;
                let n = c + 1;
                let (from, to, amount) = transfer(t, n);
                e.set(t, c, n)?;
                loop {
                    let txn = db.begin(&wo);
                    let body = (|| -> Result<(), shale::Error> {
                        let va = txn.get_for_update(acct(from), true)?;
                        let vb = txn.get_for_update(acct(to), true)?;
                        let num = |v: Option<Vec<u8>>| {
                            parse_num(v, "balance").ok().flatten().ok_or_else(|| {
                                shale::Error::corruption("a balance is missing or not a number")
                            })
                        };
                        let (va, vb) = (num(va)?, num(vb)?);
                        txn.put(acct(from), (va - amount).to_string())?;
                        txn.put(acct(to), (vb + amount).to_string())?;
                        txn.put(seq_key(t), n.to_string())
                    })();
                    let r = body.and_then(|()| txn.commit());
                    match r {
                        Ok(()) => break,
                        Err(err)
                            if matches!(
                                err.kind(),
                                ErrorKind::Busy | ErrorKind::TimedOut | ErrorKind::TryAgain
                            ) =>
                        {
                            continue
                        }
                        Err(err) => return Err(format!("transfer {t}/{n}: {err}")),
                    }
                }
                e.set(t, n, NONE)?;
                counters.bump(t)?;
            }
            Ok(())
        }));
    }
    {
        let (db, counters, stop) = (db.clone(), counters.clone(), stop.clone());
        let keys = bank_keys(threads);
        handles.push(std::thread::spawn(move || -> Result<(), String> {
            let mut ledger = Ledger::new(threads);
            while !stop.load(Ordering::Relaxed) {
                let (seqs, bal) = split_view(threads, db.read_snapshot(&keys)?)?;
                if let Err(msg) = ledger.check(&seqs, &bal) {
                    eprintln!("invariant break under a snapshot: {msg}");
                    counters.bump(Counters::BREAKS)?;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(())
        }));
    }
    let mut first_err = None;
    for h in handles {
        let r = h.join().map_err(|_| "a bank thread panicked".to_string()).and_then(|r| r);
        if let Err(err) = r {
            stop.store(true, Ordering::Relaxed);
            first_err.get_or_insert(err);
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// The parent, after a crash: checks the reopened bank against the expected state.
pub fn bank_verify<B: BankDb>(db: &B, a: &StressArgs, e: &Expected) -> Result<Tally, String> {
    let threads = a.threads.max(1);
    let mut tally = Tally::default();
    let (seqs, bal) = split_view(threads, db.read_snapshot(&bank_keys(threads))?)?;
    for t in 0..threads {
        let (c, p) = e.get(t)?;
        let got = seqs[t as usize].unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
        if got == c || (p != NONE && got == p) {
            // settled below
        } else if got < c {
            tally.lost += 1;
            eprintln!("thread {t}: seq {got} read back, {c} was committed (pending {p:#x})");
        } else {
            tally.phantom += 1;
            eprintln!("thread {t}: seq {got} read back, only {c} committed (pending {p:#x})");
        }
        e.set(t, got, NONE)?;
    }
    if let Err(msg) = Ledger::new(threads).check(&seqs, &bal) {
        eprintln!("invariant break after reopen: {msg}");
        tally.breaks += 1;
    }
    Ok(tally)
}

fn entry(r: u64, i: u64) -> Vec<u8> {
    let mut v = format!("{r}:{i}:").into_bytes();
    v.resize(24 + (mix(r << 40 | i) % 500) as usize, b'a' + (i % 26) as u8);
    v
}

fn raft_config(a: &StressArgs) -> Config {
    Config {
        dir: a.db.to_string_lossy().into_owned(),
        target_file_size: ReadableSize(32 << 10),
        purge_threshold: ReadableSize(512 << 10),
        purge_rewrite_threshold: Some(ReadableSize(64 << 10)),
        ..Config::default()
    }
}

pub fn open_raftlog<F: shale_raftlog::env::FileSystem>(
    a: &StressArgs,
    fs: Arc<F>,
) -> Result<Engine<F>, String> {
    Engine::open_with_file_system(raft_config(a), fs).map_err(|e| format!("open raft log: {e}"))
}

/// The child: appends, compactions and rewrites until `stop`.
pub fn raftlog_run<F: shale_raftlog::env::FileSystem>(
    engine: Arc<Engine<F>>,
    a: &StressArgs,
    e: Arc<Expected>,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
) -> Result<(), String> {
    let threads = a.threads.clamp(1, REGIONS);
    let sync = a.sync || (a.power_loss && !a.unsynced_writes);
    let seed = if a.seed == 0 { (std::process::id() as u64 * 0x9E37_79B9) | 1 } else { a.seed | 1 };
    let mut handles = Vec::new();
    for t in 0..threads {
        let (engine, e, counters, stop) = (engine.clone(), e.clone(), counters.clone(), stop.clone());
        handles.push(std::thread::spawn(move || -> Result<(), String> {
            let mut rng = Rng(seed ^ ((t as u64 + 1) << 32));
            let owned = REGIONS.div_ceil(threads);
            while !stop.load(Ordering::Relaxed) {
                let r = t + threads * rng.below(owned as u64) as u32;
                if r >= REGIONS {
                    continue;
                }
                let (c, _) = e.get(r)?;
                let region = r as u64 + 1;
                if c > 8 && rng.below(4) == 0 {
                    // Purge: keep at least the last entry.
                    let to = c as u64 - rng.below(8);
                    engine.compact_to(region, to);
                    continue;
                }
                let n = 1 + rng.below(8) as u32;
                let last = c + n;
                let entries: Vec<Vec<u8>> = (c + 1..=last).map(|i| entry(region, i as u64)).collect();
                let mut b = LogBatch::default();
                b.add_raw_entries(region, c as u64 + 1, &entries).map_err(|err| format!("batch: {err}"))?;
                b.put(region, b"last".to_vec(), last.to_string().into_bytes())
                    .map_err(|err| format!("batch: {err}"))?;
                e.set(r, c, last)?;
                engine.write(&mut b, sync).map_err(|err| format!("write region {region}: {err}"))?;
                e.set(r, last, NONE)?;
                counters.bump(t)?;
            }
            Ok(())
        }));
    }
    {
        let (engine, stop) = (engine.clone(), stop.clone());
        handles.push(std::thread::spawn(move || -> Result<(), String> {
            loop {
                // The regions it names hold up the purge: compact them, as a raft store
                // does (the log keeps at least its last entry).
                let slow =
                    engine.purge_expired_files().map_err(|err| format!("purge_expired_files: {err}"))?;
                for region in slow {
                    if let Some(last) = engine.last_index(region) {
                        engine.compact_to(region, last);
                    }
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(())
        }));
    }
    let mut first_err = None;
    for h in handles {
        let r = h.join().map_err(|_| "a raft log thread panicked".to_string()).and_then(|r| r);
        if let Err(err) = r {
            stop.store(true, Ordering::Relaxed);
            first_err.get_or_insert(err);
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// The parent, after a crash: checks every region of the reopened log.
pub fn raftlog_verify<F: shale_raftlog::env::FileSystem>(
    engine: &Engine<F>,
    e: &Expected,
) -> Result<Tally, String> {
    let mut tally = Tally::default();
    for r in 0..REGIONS {
        let region = r as u64 + 1;
        let (c, p) = e.get(r)?;
        let got = engine.last_index(region).unwrap_or(0);
        let got32 = got.min(u32::MAX as u64) as u32;
        if got32 as u64 == got && (got32 == c || (p != NONE && got32 == p)) {
        } else if got < c as u64 {
            tally.lost += 1;
            eprintln!("region {region}: last index {got}, {c} was committed (pending {p:#x})");
        } else {
            tally.phantom += 1;
            eprintln!("region {region}: last index {got}, only {c} committed (pending {p:#x})");
        }
        e.set(r, got32, NONE)?;
        if got == 0 {
            continue;
        }
        let first = engine.first_index(region).unwrap_or(got + 1);
        let mut broken = false;
        for i in first..=got {
            let v =
                engine.get_raw_entry(region, i).map_err(|err| format!("get entry {region}/{i}: {err}"))?;
            if v.as_deref() != Some(entry(region, i).as_slice()) {
                eprintln!("region {region}: entry {i} (of {first}..={got}) reads {:?}", v.map(|b| b.len()));
                broken = true;
                break;
            }
        }
        let kv = engine.get(region, b"last");
        if kv.as_deref() != Some(got.to_string().as_bytes()) {
            eprintln!(
                "region {region}: key last is {:?}, last index {got}",
                kv.map(|b| String::from_utf8_lossy(&b).into_owned())
            );
            broken = true;
        }
        tally.breaks += broken as u64;
    }
    Ok(tally)
}

/// How many expected-state slots a mode needs.
pub fn slots(a: &StressArgs) -> u32 {
    match a.mode {
        Mode::Kv => a.max_key,
        Mode::Txn | Mode::Optimistic => a.threads.max(1),
        Mode::Raftlog => REGIONS,
    }
}

/// Opens the database of a mode in the parent and verifies it.
pub fn verify_mode(a: &StressArgs, e: &Expected) -> Result<Result<Tally, String>, String> {
    match a.mode {
        Mode::Kv => unreachable_kv(),
        Mode::Txn => match open_txn(a, None) {
            Ok(db) => bank_verify(&db, a, e).map(Ok),
            Err(err) => Ok(Err(err)),
        },
        Mode::Optimistic => match open_optimistic(a, None) {
            Ok(db) => bank_verify(&db, a, e).map(Ok),
            Err(err) => Ok(Err(err)),
        },
        Mode::Raftlog => match open_raftlog(a, Arc::new(shale_base::fs::PosixFileSystem::new())) {
            Ok(engine) => raftlog_verify(&engine, e).map(Ok),
            Err(err) => Ok(Err(err)),
        },
    }
}

fn unreachable_kv() -> Result<Result<Tally, String>, String> {
    Err("internal: the kv mode is verified in stress.rs".to_string())
}
