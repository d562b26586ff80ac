//! `shale stress` and `shale crash-test`: a db_stress-like tool.
//!
//! Keys `0..max_key` are split among the threads; each thread owns its range, so the
//! expected state of a key changes only in program order. With `--column_families N`, key k
//! lives in family `k % N` (family 0 is "default", the others "cf1", "cf2", ...). The expected-state file holds,
//! per key, two little-endian u32s:
//!
//! ```text
//! offset 8*k : committed version (0 = absent)
//! offset 8*k+4 : pending version (NONE = no write in flight)
//! ```
//!
//! Version v (> 0) of key k has the value `value(k, v)`; a delete is a version with the
//! DELETED bit. A thread marks the pending version, writes to the database, then commits
//! the version. The file lives in the page cache, so it survives SIGKILL of the process;
//! with `--power_loss` the engine runs on `power_loss::PowerLossFs`, every write is synced,
//! and `crash-test` drops what was not synced after each kill, while the expected state (not
//! on that file system) is kept whole. After a crash, key k must read as its committed
//! version, or — if a write was pending — as the pending one: an older version (or none) is
//! a lost write, a newer one a phantom, a value of no version an invariant break.
//!
//! `--mode txn | optimistic | raftlog` run the workloads of `stress_modes.rs` with the same
//! expected-state file (one slot per thread or region).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use shale::{Options, WriteBatch, DB};
use shale_base::fs::{default_fs, FileSystemRef};

use crate::power_loss::{self, PowerLossFs};

pub(crate) const NONE: u32 = u32::MAX;
const DELETED: u32 = 1 << 31;

/// What `shale stress` runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The key-value engine (DB), keys spread over --column_families.
    Kv,
    /// A bank on TransactionDB (pessimistic), checked under snapshots.
    Txn,
    /// A bank on OptimisticTransactionDB, checked under snapshots.
    Optimistic,
    /// shale-raftlog: many regions, appends, purges and rewrites.
    Raftlog,
}

#[derive(Args, Clone)]
#[command(rename_all = "snake_case")]
pub struct StressArgs {
    /// The engine and workload.
    #[arg(long, value_enum, default_value_t = Mode::Kv)]
    pub mode: Mode,
    /// Run the engine on the power-loss journalling file system (<expected_dir>/powerloss)
    /// and sync every write: `crash-test` then drops what was not synced after each kill.
    #[arg(long, default_value_t = false)]
    pub power_loss: bool,
    /// A check of the harness, not of the engine: under --power_loss, leave writes unsynced
    /// (as --sync does not say), so that `crash-test` must find acknowledged writes lost.
    #[arg(long, default_value_t = false, hide = true)]
    pub unsynced_writes: bool,
    /// Database directory.
    #[arg(long)]
    pub db: PathBuf,
    /// Directory of the expected-state file (default: <db>.expected).
    #[arg(long)]
    pub expected_dir: Option<PathBuf>,
    /// Keys 0..max_key.
    #[arg(long, default_value_t = 10_000)]
    pub max_key: u32,
    #[arg(long, default_value_t = 4)]
    pub threads: u32,
    /// Operations per thread (0: until --duration ends).
    #[arg(long, default_value_t = 0)]
    pub ops_per_thread: u64,
    /// Seconds to run (0: until --ops_per_thread are done).
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// Memtable size; small values make flushes and compactions frequent.
    #[arg(long, default_value_t = 256 * 1024)]
    pub write_buffer_size: usize,
    /// Use sync writes.
    #[arg(long, default_value_t = false)]
    pub sync: bool,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Only verify the database against the expected state, then exit.
    #[arg(long, default_value_t = false)]
    pub verify_only: bool,
    /// Column families the keys are spread over.
    #[arg(long, default_value_t = 1)]
    pub column_families: u32,
    /// Background jobs (flushes and compactions running at once).
    #[arg(long, default_value_t = 2)]
    pub max_background_jobs: i32,
    /// Pipelined writes (`Options::set_enable_pipelined_write`): a group's WAL write overlaps
    /// the memtable inserts of the groups before it.
    #[arg(long, default_value_t = false)]
    pub enable_pipelined_write: bool,
}

#[derive(Args)]
#[command(rename_all = "snake_case")]
pub struct CrashTestArgs {
    #[command(flatten)]
    pub stress: StressArgs,
    /// How many times to kill the stress process.
    #[arg(long, default_value_t = 20)]
    pub kills: u32,
    /// Longest run before a kill, in milliseconds (each run lasts a random time up to this).
    #[arg(long, default_value_t = 2000)]
    pub max_run_ms: u64,
}

pub(crate) struct Expected {
    file: File,
}

impl Expected {
    pub(crate) fn open(dir: &Path, max_key: u32) -> Result<Expected, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        let path = dir.join("expected.state");
        if !path.exists() {
            // Written whole under another name, then renamed: a process killed while it
            // initialises the state (crash-test kills at any moment, even this early) leaves
            // no short state file behind for the next open to read past.
            let mut init = Vec::with_capacity(8 * max_key as usize);
            for _ in 0..max_key {
                init.extend_from_slice(&0u32.to_le_bytes());
                init.extend_from_slice(&NONE.to_le_bytes());
            }
            let tmp = dir.join("expected.state.tmp");
            std::fs::write(&tmp, &init).map_err(|e| format!("write {}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, &path).map_err(|e| format!("rename to {}: {e}", path.display()))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("open {}: {e}", path.display()))?;
        Ok(Expected { file })
    }

    pub(crate) fn get(&self, k: u32) -> Result<(u32, u32), String> {
        let mut b = [0u8; 8];
        self.file.read_exact_at(&mut b, 8 * k as u64).map_err(|e| format!("read expected state: {e}"))?;
        Ok((u32::from_le_bytes([b[0], b[1], b[2], b[3]]), u32::from_le_bytes([b[4], b[5], b[6], b[7]])))
    }

    pub(crate) fn set(&self, k: u32, committed: u32, pending: u32) -> Result<(), String> {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&committed.to_le_bytes());
        b[4..].copy_from_slice(&pending.to_le_bytes());
        self.file.write_all_at(&b, 8 * k as u64).map_err(|e| format!("write expected state: {e}"))
    }
}

fn key(k: u32) -> Vec<u8> {
    format!("{k:010}").into_bytes()
}

fn value(k: u32, v: u32) -> Option<Vec<u8>> {
    if v == 0 || v & DELETED != 0 {
        return None;
    }
    let mut s = format!("{k}:{v}:").into_bytes();
    s.resize(16 + (k as usize * 7 + v as usize) % 100, b'x');
    Some(s)
}

fn options(a: &StressArgs, fs: Option<FileSystemRef>) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
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

fn family_name(i: u32) -> String {
    if i == 0 {
        "default".to_string()
    } else {
        format!("cf{i}")
    }
}

fn open_db(a: &StressArgs, fs: Option<FileSystemRef>) -> Result<DB, String> {
    let names: Vec<String> = (0..a.column_families.max(1)).map(family_name).collect();
    let o = options(a, fs);
    DB::open_cf_descriptors(&o, &a.db, crate::families::descriptors(&o, names))
        .map_err(|e| format!("open: {e}"))
}

/// The family key `k` lives in.
fn family<'a>(db: &'a DB, a: &StressArgs, k: u32) -> Result<&'a shale::ColumnFamily, String> {
    let name = family_name(k % a.column_families.max(1));
    db.cf_handle(&name).ok_or_else(|| format!("no column family {name}"))
}

fn expected_dir(a: &StressArgs) -> PathBuf {
    a.expected_dir.clone().unwrap_or_else(|| {
        let mut p = a.db.clone().into_os_string();
        p.push(".expected");
        PathBuf::from(p)
    })
}

/// What a verification found: acknowledged writes lost, writes read back that were never
/// made (phantoms), and broken invariants (a value that matches no version of its key, a
/// bank whose balances disagree with its sequence numbers, a raft log entry missing).
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct Tally {
    pub lost: u64,
    pub phantom: u64,
    pub breaks: u64,
}

impl Tally {
    fn bad(&self) -> u64 {
        self.lost + self.phantom + self.breaks
    }
    fn add(&mut self, o: Tally) {
        self.lost += o.lost;
        self.phantom += o.phantom;
        self.breaks += o.breaks;
    }
}

/// Acknowledged operations per thread (slots 0..64) and invariant breaks the child saw
/// (slot 64), as little-endian u64s in `<expected_dir>/counters`, in the page cache like
/// the expected state.
pub(crate) struct Counters {
    file: File,
}

impl Counters {
    pub(crate) const BREAKS: u32 = 64;

    pub(crate) fn open(dir: &Path) -> Result<Counters, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        let path = dir.join("counters");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("open {}: {e}", path.display()))?;
        file.set_len(8 * 65).map_err(|e| format!("size {}: {e}", path.display()))?;
        Ok(Counters { file })
    }

    fn get(&self, slot: u32) -> Result<u64, String> {
        let mut b = [0u8; 8];
        self.file.read_exact_at(&mut b, 8 * slot as u64).map_err(|e| format!("read counters: {e}"))?;
        Ok(u64::from_le_bytes(b))
    }

    fn put(&self, slot: u32, v: u64) -> Result<(), String> {
        self.file.write_all_at(&v.to_le_bytes(), 8 * slot as u64).map_err(|e| format!("write counters: {e}"))
    }

    /// Adds one to `slot` (each slot has one writer).
    pub(crate) fn bump(&self, slot: u32) -> Result<(), String> {
        self.put(slot, self.get(slot)? + 1)
    }

    fn acked(&self) -> Result<u64, String> {
        (0..64).map(|s| self.get(s)).sum()
    }

    /// The breaks counted since the last call.
    fn take_breaks(&self) -> Result<u64, String> {
        let n = self.get(Self::BREAKS)?;
        self.put(Self::BREAKS, 0)?;
        Ok(n)
    }
}

/// The version a value of key `k` carries, if it is one of `value`'s.
fn version_of(k: u32, v: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(v).ok()?;
    let mut parts = s.splitn(3, ':');
    if parts.next()? != k.to_string() {
        return None;
    }
    parts.next()?.parse().ok()
}

/// Checks every key against the expected state, then settles it to what was read.
fn verify(db: &DB, a: &StressArgs, e: &Expected) -> Result<Tally, String> {
    let mut t = Tally::default();
    for k in 0..a.max_key {
        let (committed, pending) = e.get(k)?;
        let got = db.get_cf(family(db, a, k)?, key(k)).map_err(|e| format!("get {k}: {e}"))?;
        let ok = got == value(k, committed) || (pending != NONE && got == value(k, pending));
        let newest = (committed & !DELETED).max(if pending == NONE { 0 } else { pending & !DELETED });
        if ok {
            if pending != NONE {
                // The in-flight write either landed or not; settle the expected state.
                let now = if got == value(k, pending) { pending } else { committed };
                e.set(k, now, NONE)?;
            }
            continue;
        }
        let what = match &got {
            None => {
                t.lost += 1;
                e.set(k, newest | DELETED, NONE)?;
                "lost"
            }
            Some(v) => match version_of(k, v) {
                Some(gv) if value(k, gv).as_deref() == Some(v.as_slice()) => {
                    // Settled to what the database holds, so each loss counts once.
                    e.set(k, gv, NONE)?;
                    if gv > newest {
                        t.phantom += 1;
                        "phantom"
                    } else {
                        t.lost += 1;
                        "lost"
                    }
                }
                _ => {
                    t.breaks += 1;
                    e.set(k, newest | DELETED, NONE)?;
                    "invariant break"
                }
            },
        };
        if t.bad() <= 10 {
            eprintln!(
                "key {k} ({what}): got {:?}, expected version {committed:#x} (pending {pending:#x})",
                got.map(|v| String::from_utf8_lossy(&v).into_owned())
            );
        }
    }
    Ok(t)
}

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Sets the returned flag after `--duration` seconds (never, for 0).
fn stopper(a: &StressArgs) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    if a.duration > 0 {
        let (stop, d) = (stop.clone(), Duration::from_secs(a.duration));
        std::thread::spawn(move || {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        });
    }
    stop
}

fn check_clean(t: Tally, when: &str) -> Result<(), String> {
    if t.bad() > 0 {
        return Err(format!(
            "verification failed {when}: {} lost, {} phantom, {} invariant breaks",
            t.lost, t.phantom, t.breaks
        ));
    }
    Ok(())
}

pub fn stress(a: &StressArgs) -> Result<(), String> {
    if a.mode != Mode::Kv && a.duration == 0 {
        return Err(format!("--mode {:?} runs for --duration seconds: give a positive one", a.mode));
    }
    if a.power_loss && a.threads > 64 {
        return Err("at most 64 threads".to_string());
    }
    let exp = expected_dir(a);
    let e = Arc::new(Expected::open(&exp, crate::stress_modes::slots(a))?);
    let counters = Arc::new(Counters::open(&exp)?);
    let journal = exp.join("powerloss");
    let plfs = if a.power_loss {
        Some(Arc::new(PowerLossFs::new(default_fs(), &journal).map_err(|e| format!("power-loss fs: {e}"))?))
    } else {
        None
    };
    let fs: Option<FileSystemRef> = plfs.clone().map(|f| f as FileSystemRef);
    use crate::stress_modes as m;
    match a.mode {
        Mode::Kv => stress_kv(a, e, counters, fs),
        Mode::Txn => {
            let db = Arc::new(m::open_txn(a, fs)?);
            check_clean(m::bank_verify(&*db, a, &e)?, "at open")?;
            if a.verify_only {
                return Ok(());
            }
            m::bank_run(db.clone(), a, e.clone(), counters, stopper(a))?;
            check_clean(m::bank_verify(&*db, a, &e)?, "after the run")
        }
        Mode::Optimistic => {
            let db = Arc::new(m::open_optimistic(a, fs)?);
            check_clean(m::bank_verify(&*db, a, &e)?, "at open")?;
            if a.verify_only {
                return Ok(());
            }
            m::bank_run(db.clone(), a, e.clone(), counters, stopper(a))?;
            check_clean(m::bank_verify(&*db, a, &e)?, "after the run")
        }
        Mode::Raftlog => match plfs {
            Some(f) => raftlog_child(a, f, e, counters),
            None => raftlog_child(a, Arc::new(shale_base::fs::PosixFileSystem::new()), e, counters),
        },
    }
}

fn raftlog_child<F: shale_raftlog::env::FileSystem>(
    a: &StressArgs,
    fs: Arc<F>,
    e: Arc<Expected>,
    counters: Arc<Counters>,
) -> Result<(), String> {
    use crate::stress_modes as m;
    let engine = Arc::new(m::open_raftlog(a, fs)?);
    check_clean(m::raftlog_verify(&engine, &e)?, "at open")?;
    if a.verify_only {
        return Ok(());
    }
    m::raftlog_run(engine.clone(), a, e.clone(), counters, stopper(a))?;
    check_clean(m::raftlog_verify(&engine, &e)?, "after the run")
}

fn stress_kv(
    a: &StressArgs,
    e: Arc<Expected>,
    counters: Arc<Counters>,
    fs: Option<FileSystemRef>,
) -> Result<(), String> {
    let db = Arc::new(open_db(a, fs)?);
    check_clean(verify(&db, a, &e)?, "at open")?;
    println!("verified {} keys", a.max_key);
    if a.verify_only {
        return Ok(());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    let deadline = (a.duration > 0).then(|| Instant::now() + Duration::from_secs(a.duration));
    let per = a.max_key / a.threads.max(1);
    let mut handles = Vec::new();
    let seed = if a.seed == 0 { (std::process::id() as u64 * 0x9E37_79B9) | 1 } else { a.seed | 1 };
    for t in 0..a.threads.max(1) {
        let (db, e, stop, ops, a, counters) =
            (db.clone(), e.clone(), stop.clone(), ops.clone(), a.clone(), counters.clone());
        let (lo, hi) = (t * per, if t + 1 == a.threads { a.max_key } else { (t + 1) * per });
        handles.push(std::thread::spawn(move || -> Result<(), String> {
            let mut rng = Rng(seed ^ ((t as u64 + 1) << 32));
            let mut wo = shale::WriteOptions::default();
            wo.set_sync(a.sync || (a.power_loss && !a.unsynced_writes));
            let mut done = 0u64;
            while !stop.load(Ordering::Relaxed) && (a.ops_per_thread == 0 || done < a.ops_per_thread) {
                done += 1;
                ops.fetch_add(1, Ordering::Relaxed);
                let k = lo + rng.below((hi - lo) as u64) as u32;
                let (committed, _) = e.get(k)?;
                let next_version = ((committed & !DELETED) + 1) & !DELETED;
                match rng.below(100) {
                    0..=49 => {
                        e.set(k, committed, next_version)?;
                        db.put_cf_opt(
                            family(&db, &a, k)?,
                            key(k),
                            value(k, next_version).unwrap_or_default(),
                            &wo,
                        )
                        .map_err(|err| format!("put: {err}"))?;
                        counters.bump(t)?;
                        e.set(k, next_version, NONE)?;
                    }
                    50..=64 => {
                        let del = next_version | DELETED;
                        e.set(k, committed, del)?;
                        db.delete_cf_opt(family(&db, &a, k)?, key(k), &wo)
                            .map_err(|err| format!("delete: {err}"))?;
                        counters.bump(t)?;
                        e.set(k, del, NONE)?;
                    }
                    65..=74 => {
                        // An atomic batch over a few consecutive owned keys.
                        let n = 1 + rng.below(5) as u32;
                        let mut b = WriteBatch::default();
                        let mut staged = Vec::new();
                        for j in k..(k + n).min(hi) {
                            let (c, _) = e.get(j)?;
                            let v = ((c & !DELETED) + 1) & !DELETED;
                            e.set(j, c, v)?;
                            b.put_cf(family(&db, &a, j)?, key(j), value(j, v).unwrap_or_default());
                            staged.push((j, v));
                        }
                        db.write_opt(b, &wo).map_err(|err| format!("write batch: {err}"))?;
                        counters.bump(t)?;
                        for (j, v) in staged {
                            e.set(j, v, NONE)?;
                        }
                    }
                    75..=76 => {
                        let end = (k + 1 + rng.below(20) as u32).min(hi);
                        let mut staged = Vec::new();
                        for j in k..end {
                            let (c, _) = e.get(j)?;
                            let del = (((c & !DELETED) + 1) & !DELETED) | DELETED;
                            e.set(j, c, del)?;
                            staged.push((j, del));
                        }
                        // One atomic batch deleting the range in every family.
                        let mut b = WriteBatch::default();
                        for f in 0..a.column_families.max(1) {
                            let cf = db.cf_handle(&family_name(f)).ok_or("no column family")?;
                            b.delete_range_cf(cf, key(k), key(end));
                        }
                        db.write_opt(b, &wo).map_err(|err| format!("delete_range: {err}"))?;
                        counters.bump(t)?;
                        for (j, del) in staged {
                            e.set(j, del, NONE)?;
                        }
                    }
                    77 if rng.below(50) == 0 => {
                        db.flush_cf(family(&db, &a, k)?).map_err(|err| format!("flush: {err}"))?
                    }
                    _ => {
                        let got =
                            db.get_cf(family(&db, &a, k)?, key(k)).map_err(|err| format!("get: {err}"))?;
                        if got != value(k, committed) {
                            return Err(format!(
                                "key {k}: read {got:?} but version {committed:#x} was committed"
                            ));
                        }
                    }
                }
            }
            Ok(())
        }));
    }
    while deadline.is_none_or(|d| Instant::now() < d) && !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().map_err(|_| "a stress thread panicked".to_string())??;
    }
    println!("stress: {} operations", ops.load(Ordering::Relaxed));
    check_clean(verify(&db, a, &e)?, "after the run")
}

/// Runs `shale stress` as a child, kills it with SIGKILL at random moments, reopens and
/// verifies, `kills` times. With `--power_loss`, after each kill the directory is first
/// brought to what a power loss at that moment would leave (`power_loss::drop_unsynced`;
/// every other round also keeps a random part of the unsynced bytes, a torn write).
/// Prints one summary line.
pub fn crash_test(a: &CrashTestArgs) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let s = &a.stress;
    if s.threads == 0 || s.threads > 64 {
        return Err("--threads must be 1 to 64".to_string());
    }
    let exp = expected_dir(s);
    // A database without a CURRENT file is new: an expected state an earlier run left beside
    // its path describes another database, and every key of it would read as lost.
    if !s.db.join("CURRENT").exists() && exp.exists() {
        std::fs::remove_dir_all(&exp).map_err(|e| format!("remove stale {}: {e}", exp.display()))?;
    }
    let journal = exp.join("powerloss");
    // Whatever is on disk now is durable: no journal of an earlier run applies.
    power_loss::reset(&journal)?;
    let counters = Counters::open(&exp)?;
    let acked_before = counters.acked()?;
    counters.take_breaks()?;
    let mut rng = Rng(if s.seed == 0 { std::process::id() as u64 | 1 } else { s.seed | 1 });
    let mut tally = Tally::default();
    let mut failed_opens = 0u64;
    // Rounds a full disk stopped (the machine's, not the engine's doing): counted apart, so a
    // write failing with ENOSPC is not taken for an invariant break or an engine that cannot
    // open; the run still fails, since those rounds checked less.
    let mut disk_full = 0u64;
    let mode = format!("{:?}", s.mode).to_lowercase();
    for round in 1..=a.kills {
        let run_ms = 100 + rng.below(a.max_run_ms.max(101) - 100);
        let mut child = Command::new(&exe)
            .arg("stress")
            .arg("--db")
            .arg(&s.db)
            .arg("--expected_dir")
            .arg(&exp)
            .args(["--mode", &mode])
            .args(["--max_key", &s.max_key.to_string(), "--threads", &s.threads.to_string()])
            .args(["--write_buffer_size", &s.write_buffer_size.to_string(), "--duration", "3600"])
            .args(["--column_families", &s.column_families.to_string()])
            .args(["--max_background_jobs", &s.max_background_jobs.to_string()])
            .args(["--seed", &(rng.next() | 1).to_string()])
            .args(if s.sync { vec!["--sync"] } else { vec![] })
            .args(if s.enable_pipelined_write { vec!["--enable_pipelined_write"] } else { vec![] })
            .args(if s.power_loss { vec!["--power_loss"] } else { vec![] })
            .args(if s.unsynced_writes { vec!["--unsynced_writes"] } else { vec![] })
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn stress: {e}"))?;
        let stderr = child.stderr.take();
        // Read the child's messages as they come, so a full pipe never blocks it.
        let reader = std::thread::spawn(move || {
            let mut err = String::new();
            if let Some(mut e) = stderr {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            err
        });
        std::thread::sleep(Duration::from_millis(run_ms));
        let early = child.try_wait().map_err(|e| e.to_string())?;
        if early.is_none() {
            child.kill().map_err(|e| format!("kill: {e}"))?;
        }
        let _ = child.wait();
        let err = reader.join().unwrap_or_default();
        if let Some(status) = early {
            // The child stopped by itself: it failed a check of its own (a read that
            // disagreed with what it had committed) or could not open the database.
            eprintln!("crash-test round {round}: stress exited early ({status}): {err}");
            if is_disk_full(&err) {
                disk_full += 1;
            } else if err.contains("open") {
                failed_opens += 1;
            } else {
                tally.breaks += 1;
            }
        } else if !err.is_empty() {
            eprint!("{err}");
        }
        let dropped = if s.power_loss {
            let torn = (round % 2 == 0).then(|| rng.next());
            Some(power_loss::drop_unsynced(&journal, torn)?)
        } else {
            None
        };
        // Reopen and verify in this process.
        let e = Expected::open(&exp, crate::stress_modes::slots(s))?;
        let result = match s.mode {
            Mode::Kv => match open_db(s, None) {
                Ok(db) => Ok(verify(&db, s, &e)?),
                Err(err) => Err(err),
            },
            _ => crate::stress_modes::verify_mode(s, &e)?,
        };
        let breaks = counters.take_breaks()?;
        tally.breaks += breaks;
        match result {
            Ok(t) => {
                tally.add(t);
                eprintln!(
                    "crash-test round {round}/{}: killed after {run_ms} ms{}, {} lost, {} phantom, {} invariant breaks",
                    a.kills,
                    dropped.map_or(String::new(), |d| format!(
                        " (power loss: {} files cut, {} bytes dropped, {} names restored)",
                        d.files_cut, d.bytes_dropped, d.names_restored
                    )),
                    t.lost,
                    t.phantom,
                    t.breaks + breaks
                );
            }
            Err(err) => {
                if is_disk_full(&err.to_string()) {
                    disk_full += 1;
                } else {
                    failed_opens += 1;
                }
                eprintln!("crash-test round {round}: reopen failed: {err}");
            }
        }
    }
    let acked = counters.acked()? - acked_before;
    let full =
        if disk_full > 0 { format!(", {disk_full} rounds stopped by a full disk") } else { String::new() };
    println!(
        "crash-test mode={mode}{}: {} kills, {acked} operations acknowledged, {} lost, {} phantom, {} invariant breaks, {failed_opens} failed opens{full}",
        if s.power_loss { " power_loss" } else { "" },
        a.kills,
        tally.lost,
        tally.phantom,
        tally.breaks
    );
    if tally.bad() > 0 || failed_opens > 0 || disk_full > 0 {
        return Err(format!(
            "crash-test failed: {} lost, {} phantom, {} invariant breaks, {failed_opens} failed opens{full}",
            tally.lost, tally.phantom, tally.breaks
        ));
    }
    Ok(())
}

/// An error the machine's full disk caused (ENOSPC), as the engine and stress report it.
fn is_disk_full(msg: &str) -> bool {
    msg.contains("No space left on device") || msg.contains("(os error 28)")
}

#[cfg(test)]
mod disk_full_tests {
    use super::is_disk_full;

    #[test]
    fn a_full_disk_is_told_apart_from_an_engine_failure() {
        // As a 1000-kill run on a shared machine printed them.
        assert!(is_disk_full(
            "Failed: write batch: IO error: While appending to file: db/005721.log: No space left on device (os error 28)"
        ));
        assert!(is_disk_full(
            "open: IO error: While appending to file: db/006261.sst: No space left on device (os error 28)"
        ));
        assert!(!is_disk_full("Failed: open: Corruption: bad block in 000012.sst at offset 4096"));
        assert!(!is_disk_full("Failed: key 17 read 5, expected 6"));
    }
}
