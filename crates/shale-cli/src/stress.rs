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
//! the version. The file lives in the page cache, so it survives SIGKILL of the process
//! (not power loss, which `crash_sweep` in the engine's tests covers with a fault-injecting
//! file system). After a crash, key k must read as its committed version, or — if a write
//! was pending — as the pending one.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use shale::{Options, WriteBatch, DB};

const NONE: u32 = u32::MAX;
const DELETED: u32 = 1 << 31;

#[derive(Args, Clone)]
#[command(rename_all = "snake_case")]
pub struct StressArgs {
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

struct Expected {
    file: File,
}

impl Expected {
    fn open(dir: &Path, max_key: u32) -> Result<Expected, String> {
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

    fn get(&self, k: u32) -> Result<(u32, u32), String> {
        let mut b = [0u8; 8];
        self.file.read_exact_at(&mut b, 8 * k as u64).map_err(|e| format!("read expected state: {e}"))?;
        Ok((u32::from_le_bytes([b[0], b[1], b[2], b[3]]), u32::from_le_bytes([b[4], b[5], b[6], b[7]])))
    }

    fn set(&self, k: u32, committed: u32, pending: u32) -> Result<(), String> {
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

fn options(a: &StressArgs) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(a.write_buffer_size);
    o.set_target_file_size_base(a.write_buffer_size as u64);
    o.set_max_bytes_for_level_base(4 * a.write_buffer_size as u64);
    o.set_max_background_jobs(a.max_background_jobs);
    o
}

fn family_name(i: u32) -> String {
    if i == 0 {
        "default".to_string()
    } else {
        format!("cf{i}")
    }
}

fn open_db(a: &StressArgs) -> Result<DB, String> {
    let names: Vec<String> = (0..a.column_families.max(1)).map(family_name).collect();
    let o = options(a);
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

/// Checks every key against the expected state; returns how many disagree.
fn verify(db: &DB, a: &StressArgs, e: &Expected) -> Result<u64, String> {
    let mut bad = 0;
    for k in 0..a.max_key {
        let (committed, pending) = e.get(k)?;
        let got = db.get_cf(family(db, a, k)?, key(k)).map_err(|e| format!("get {k}: {e}"))?;
        let ok = got == value(k, committed) || (pending != NONE && got == value(k, pending));
        if !ok {
            bad += 1;
            if bad <= 10 {
                eprintln!(
                    "key {k}: got {:?}, expected version {committed:#x} (pending {pending:#x})",
                    got.map(|v| String::from_utf8_lossy(&v).into_owned())
                );
            }
        } else if pending != NONE {
            // The in-flight write either landed or not; settle the expected state.
            let now = if got == value(k, pending) { pending } else { committed };
            e.set(k, now, NONE)?;
        }
    }
    Ok(bad)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub fn stress(a: &StressArgs) -> Result<(), String> {
    let e = Arc::new(Expected::open(&expected_dir(a), a.max_key)?);
    let db = Arc::new(open_db(a)?);
    let bad = verify(&db, a, &e)?;
    if bad > 0 {
        return Err(format!("verification failed: {bad} keys disagree with the expected state"));
    }
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
        let (db, e, stop, ops, a) = (db.clone(), e.clone(), stop.clone(), ops.clone(), a.clone());
        let (lo, hi) = (t * per, if t + 1 == a.threads { a.max_key } else { (t + 1) * per });
        handles.push(std::thread::spawn(move || -> Result<(), String> {
            let mut rng = Rng(seed ^ ((t as u64 + 1) << 32));
            let mut wo = shale::WriteOptions::default();
            wo.set_sync(a.sync);
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
                        e.set(k, next_version, NONE)?;
                    }
                    50..=64 => {
                        let del = next_version | DELETED;
                        e.set(k, committed, del)?;
                        db.delete_cf_opt(family(&db, &a, k)?, key(k), &wo)
                            .map_err(|err| format!("delete: {err}"))?;
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
    let bad = verify(&db, a, &e)?;
    if bad > 0 {
        return Err(format!("verification failed after the run: {bad} keys"));
    }
    Ok(())
}

/// Runs `shale stress` as a child, kills it with SIGKILL at random moments, reopens and
/// verifies, `kills` times.
pub fn crash_test(a: &CrashTestArgs) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let s = &a.stress;
    let exp = expected_dir(s);
    let mut rng = Rng(if s.seed == 0 { std::process::id() as u64 | 1 } else { s.seed | 1 });
    let (mut lost, mut failed_opens) = (0u64, 0u64);
    for round in 1..=a.kills {
        let run_ms = 100 + rng.below(a.max_run_ms.max(101) - 100);
        let mut child = Command::new(&exe)
            .arg("stress")
            .arg("--db")
            .arg(&s.db)
            .arg("--expected_dir")
            .arg(&exp)
            .args(["--max_key", &s.max_key.to_string(), "--threads", &s.threads.to_string()])
            .args(["--write_buffer_size", &s.write_buffer_size.to_string(), "--duration", "3600"])
            .args(["--column_families", &s.column_families.to_string()])
            .args(["--max_background_jobs", &s.max_background_jobs.to_string()])
            .args(if s.sync { vec!["--sync"] } else { vec![] })
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("spawn stress: {e}"))?;
        std::thread::sleep(Duration::from_millis(run_ms));
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return Err(format!("round {round}: stress exited early ({status}): {err}"));
        }
        child.kill().map_err(|e| format!("kill: {e}"))?;
        let _ = child.wait();
        // Reopen and verify in this process.
        match open_db(s) {
            Ok(db) => {
                let e = Expected::open(&exp, s.max_key)?;
                let bad = verify(&db, s, &e)?;
                lost += bad;
                eprintln!("crash-test round {round}/{}: killed after {run_ms} ms, {bad} keys wrong", a.kills);
            }
            Err(e) => {
                failed_opens += 1;
                eprintln!("crash-test round {round}: reopen failed: {e}");
            }
        }
    }
    println!("crash-test: {} kills, {lost} acknowledged writes lost, {failed_opens} failed opens", a.kills);
    if lost > 0 || failed_opens > 0 {
        return Err(format!("crash-test failed: {lost} lost writes, {failed_opens} failed opens"));
    }
    Ok(())
}
