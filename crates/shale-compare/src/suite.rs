//! `--suite`: the whole benchmark table of docs/benchmarks.md, one table per workload family.
//!
//! Each family is a list of rows; a row is one `shale bench` process and one `db_bench`
//! process with the same flags. A row that reads or rewrites an existing database
//! (`--use_existing_db=1`) runs on a copy of a base database that each engine built once, at
//! the start, with the family's setup flags; a row that fills (`fillseq`, `fillrandom`) starts
//! from an empty directory. Every process gets `--histogram=1` (for P99.9) and, in round `r`,
//! `--seed=1000+r` (both engines touch the same keys in the same order). Rounds run one after
//! the other; within a round every row runs both engines back to back, the order alternating
//! row by row and round by round, so a drift of the machine's speed hits both.
//!
//! Beside ops/sec (the benchmark's own result line) each cell has the P99.9 latency (the
//! histogram after that line), and the process's peak RSS and CPU time (user + system) from
//! the kernel's accounting of the reaped child (`wait4`'s `rusage`): the whole process, open
//! and close included, so RSS and CPU compare the engines, not the benchmark loop alone.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::parse::{parse_output, parse_p999};
use crate::report::{machine, median};
use crate::Engine;

/// One row of a family's table: the flags of its process (without `--db`, `--seed`,
/// `--histogram`, which the suite adds).
pub struct Row {
    /// The benchmark whose result line is reported (the last one in `--benchmarks`).
    pub bench: String,
    /// What the row's first column says (the benchmark and what differs from the family).
    pub label: String,
    pub flags: Vec<String>,
    /// Runs on a copy of the family's base database.
    pub existing: bool,
}

pub struct Family {
    pub title: String,
    pub about: String,
    /// Flags of the process that builds the base database (None: every row starts empty).
    pub base: Option<Vec<String>>,
    pub rows: Vec<Row>,
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn row(label: &str, flags: &str, existing: bool) -> Row {
    let flags = words(flags);
    let bench = flags
        .iter()
        .find_map(|f| f.strip_prefix("--benchmarks="))
        .and_then(|b| b.rsplit(',').next())
        .unwrap_or("?")
        .to_string();
    let mut flags = flags;
    if existing {
        flags.push("--use_existing_db=1".into());
    }
    Row { bench, label: label.to_string(), flags, existing }
}

/// The families, with the sizes of a full run (`quick`: a few seconds per family, to try it).
pub fn families(quick: bool) -> Vec<Family> {
    // Keys of the main database, reads of the read rows, and the larger sizes.
    let (num, reads, seeks, num_big, num_small_cache, small_reads, blob_num) = if quick {
        (100_000, 50_000, 20_000, 500_000, 200_000, 20_000, 20_000)
    } else {
        (1_000_000, 500_000, 200_000, 10_000_000, 2_000_000, 200_000, 200_000)
    };
    let mut out = Vec::new();

    let n = format!("--num={num}");
    let mut rows = vec![
        row("fillseq", &format!("--benchmarks=fillseq {n}"), false),
        row("fillrandom", &format!("--benchmarks=fillrandom {n}"), false),
    ];
    for (b, extra) in [
        ("overwrite", String::new()),
        ("deleterandom", String::new()),
        ("readrandom", format!("--reads={reads}")),
        ("seekrandom", format!("--reads={seeks}")),
        ("readseq", String::new()),
        ("readreverse", String::new()),
        ("readwhilewriting", format!("--reads={seeks}")),
    ] {
        rows.push(row(b, &format!("--benchmarks={b} {n} {extra}"), true));
    }
    out.push(Family {
        title: format!("db_bench defaults ({num} keys of 16 + 100 bytes, Snappy, 32 MiB block cache)"),
        about: "db_bench 11.8.1's own defaults (a HyperClockCache of 32 MiB, Snappy, 64 MiB write \
                buffers, one thread). The rows on an existing database run on a copy of one made by `fillrandom` then \
                `waitforcompaction` (db_bench waits for background compaction to finish: both engines \
                read a settled tree)."
            .into(),
        base: Some(words(&format!("--benchmarks=fillrandom,waitforcompaction {n}"))),
        rows,
    });

    let mut rows = Vec::new();
    for t in [4, 8, 16] {
        rows.push(row(
            &format!("fillrandom, {t} threads"),
            &format!("--benchmarks=fillrandom --threads={t} --num={}", num / t),
            false,
        ));
        rows.push(row(
            &format!("readrandom, {t} threads"),
            &format!("--benchmarks=readrandom --threads={t} {n} --reads={}", reads / t),
            true,
        ));
        if t == 4 {
            // Issue 34's table has seeks at 4 threads.
            rows.push(row(
                "seekrandom, 4 threads",
                &format!("--benchmarks=seekrandom --threads=4 {n} --reads={}", seeks / 4),
                true,
            ));
        }
        rows.push(row(
            &format!("readwhilewriting, {t} threads"),
            &format!("--benchmarks=readwhilewriting --threads={t} {n} --reads={}", seeks / t),
            true,
        ));
    }
    out.push(Family {
        title: "Threads: 4, 8 and 16".into(),
        about: format!(
            "db_bench defaults with `--threads`. `--num` and `--reads` count per thread in db_bench, so they \
             are divided by the thread count: the same total work in every row (fillrandom: {num} writes \
             into a key space of {num}/threads; readrandom: {reads} Gets on the {num}-key database; \
             seekrandom (4 threads): {seeks} seeks; readwhilewriting: {seeks} Gets while one more \
             thread writes)."
        ),
        base: Some(words(&format!("--benchmarks=fillrandom,waitforcompaction {n}"))),
        rows,
    });

    let cf_flags = "--num_column_families=1000 --threads=2 --disable_wal=1 --max_write_buffer_number=2 \
                    --level0_file_num_compaction_trigger=2 --level0_slowdown_writes_trigger=2 \
                    --level0_stop_writes_trigger=3 --max_background_jobs=4";
    out.push(Family {
        title: "1000 column families".into(),
        about: format!(
            "The seed experiment: two writer threads, {num} writes each, spread over 1000 families, \
             no WAL (the peak RSS is the memtables of 1000 families)."
        ),
        base: None,
        rows: vec![row("fillrandom, 2 threads", &format!("--benchmarks=fillrandom {n} {cf_flags}"), false)],
    });

    let sc = format!(
        "--num={num_small_cache} --bloom_bits=10 --cache_size=8388608 --cache_index_and_filter_blocks=1"
    );
    out.push(Family {
        title: format!("Small cache ({num_small_cache} keys, 8 MiB cache holding index and filter blocks)"),
        about: format!(
            "About 100 MB of tables against an 8 MiB block cache that also holds the index and filter \
             blocks (`--cache_index_and_filter_blocks=1`, 10 bits/key Bloom filters); {small_reads} Gets \
             or seeks on a copy of one database made by `fillrandom` then \
                `waitforcompaction` (db_bench waits for background compaction to finish: both engines \
                read a settled tree). The `lru_cache` row uses RocksDB's \
             LRU cache instead of db_bench's default HyperClockCache (a tenth of the Gets: with 16 shards \
             of 512 KiB neither engine can keep a filter larger than a shard, and RocksDB reads it \
             again at almost every Get)."
        ),
        base: Some(words(&format!("--benchmarks=fillrandom,waitforcompaction {sc}"))),
        rows: vec![
            row("readrandom", &format!("--benchmarks=readrandom {sc} --reads={small_reads}"), true),
            row("seekrandom", &format!("--benchmarks=seekrandom {sc} --reads={small_reads}"), true),
            row(
                "readrandom, lru_cache",
                &format!("--benchmarks=readrandom {sc} --reads={} --cache_type=lru_cache", small_reads / 10),
                true,
            ),
        ],
    });

    let both_direct = "--use_direct_reads=1 --use_direct_io_for_flush_and_compaction=1";
    out.push(Family {
        title: format!("Direct I/O and mmap reads ({num} keys)"),
        about: format!(
            "db_bench's defaults with the I/O options of issue 33: `fillrandom` writing flush and \
             compaction outputs with O_DIRECT (`--use_direct_io_for_flush_and_compaction=1`), and {reads} \
             Gets on a copy of one database made by `fillrandom` then \
                `waitforcompaction` (db_bench waits for background compaction to finish: both engines \
                read a settled tree), read with O_DIRECT \
             (`--use_direct_reads=1`, the 32 MiB block cache the only cache) or through mmap \
             (`--mmap_read=1`); and both direct options at once, for `fillrandom` and for the Gets."
        ),
        base: Some(words(&format!("--benchmarks=fillrandom,waitforcompaction {n}"))),
        rows: vec![
            row(
                "fillrandom, direct I/O for flush and compaction",
                &format!("--benchmarks=fillrandom {n} --use_direct_io_for_flush_and_compaction=1"),
                false,
            ),
            row(
                "readrandom, direct reads",
                &format!("--benchmarks=readrandom {n} --reads={reads} --use_direct_reads=1"),
                true,
            ),
            row(
                "readrandom, mmap reads",
                &format!("--benchmarks=readrandom {n} --reads={reads} --mmap_read=1"),
                true,
            ),
            row(
                "fillrandom, both direct options",
                &format!("--benchmarks=fillrandom {n} {both_direct}"),
                false,
            ),
            row(
                "readrandom, both direct options",
                &format!("--benchmarks=readrandom {n} --reads={reads} {both_direct}"),
                true,
            ),
        ],
    });

    out.push(Family {
        title: format!("{num_big} keys"),
        about: format!(
            "`fillrandom` of {num_big} keys with db_bench's defaults: compaction keeps up or not."
        ),
        base: None,
        rows: vec![row("fillrandom", &format!("--benchmarks=fillrandom --num={num_big}"), false)],
    });

    let blob = format!("--num={blob_num} --value_size=4096 --enable_blob_files=1 --min_blob_size=256");
    out.push(Family {
        title: format!("BlobDB ({blob_num} keys, 4 KiB values in blob files)"),
        about: "Integrated BlobDB: values of 256 bytes and more go to blob files; overwrite and readrandom \
                run on a copy of a database made by `fillrandom` then \
                `waitforcompaction` (db_bench waits for background compaction to finish: both engines \
                read a settled tree), with blob garbage collection on."
            .into(),
        base: Some(words(&format!("--benchmarks=fillrandom,waitforcompaction {blob}"))),
        rows: vec![
            row("fillrandom", &format!("--benchmarks=fillrandom {blob}"), false),
            row(
                "overwrite",
                &format!("--benchmarks=overwrite {blob} --enable_blob_garbage_collection=1"),
                true,
            ),
            row(
                "readrandom",
                &format!("--benchmarks=readrandom {blob} --enable_blob_garbage_collection=1 --reads={seeks}"),
                true,
            ),
        ],
    });

    let uni = format!("--compaction_style=1 {n}");
    out.push(Family {
        title: format!("Universal compaction ({num} keys)"),
        about: "`--compaction_style=1`, otherwise db_bench's defaults.".into(),
        base: Some(words(&format!("--benchmarks=fillrandom,waitforcompaction {uni}"))),
        rows: vec![
            row("fillrandom", &format!("--benchmarks=fillrandom {uni}"), false),
            row("overwrite", &format!("--benchmarks=overwrite {uni}"), true),
            row("readrandom", &format!("--benchmarks=readrandom {uni} --reads={reads}"), true),
        ],
    });
    out
}

/// One measured process.
#[derive(Clone, Default)]
pub struct Measure {
    pub ops: f64,
    pub p999: Option<f64>,
    pub rss_mib: f64,
    pub cpu_s: f64,
    pub load: f64,
}

/// What one run of a process gave.
struct Proc {
    stdout: String,
    stderr_tail: String,
    ok: bool,
    rss_mib: f64,
    cpu_s: f64,
}

/// Runs `cmd` to its end, its stdout read, its stderr kept in a file, and reaps it with
/// `wait4` for the kernel's accounting of that one process (peak RSS, user + system time).
fn run_measured(mut cmd: Command, stderr_file: &Path) -> Result<Proc, String> {
    use std::io::Read;
    let err = std::fs::File::create(stderr_file).map_err(|e| format!("{}: {e}", stderr_file.display()))?;
    cmd.stdout(Stdio::piped()).stderr(Stdio::from(err)).stdin(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        let mut bytes = Vec::new();
        out.read_to_end(&mut bytes).map_err(|e| format!("reading the output: {e}"))?;
        stdout = String::from_utf8_lossy(&bytes).into_owned();
    }
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped (`child.wait()` is never called); both
    // pointers are to live locals of the right types for the call's duration.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if r != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let stderr = std::fs::read_to_string(stderr_file).unwrap_or_default();
    let stderr_tail: Vec<&str> = stderr.split(['\n', '\r']).filter(|l| !l.trim().is_empty()).collect();
    let stderr_tail = stderr_tail[stderr_tail.len().saturating_sub(8)..].join("\n");
    Ok(Proc {
        stdout,
        stderr_tail,
        ok,
        rss_mib: usage.ru_maxrss as f64 / 1024.0,
        cpu_s: tv(usage.ru_utime) + tv(usage.ru_stime),
    })
}

pub struct Tools {
    pub shale: PathBuf,
    pub db_bench: PathBuf,
    pub workdir: PathBuf,
}

impl Tools {
    fn command(&self, engine: Engine, flags: &[String], db: &Path, seed: u64) -> Command {
        let mut c = match engine {
            Engine::RocksDb => Command::new(&self.db_bench),
            Engine::Shale => {
                let mut c = Command::new(&self.shale);
                c.arg("bench");
                c
            }
        };
        c.args(flags)
            .arg("--histogram=1")
            .arg(format!("--seed={seed}"))
            .arg(format!("--db={}", db.display()));
        c
    }
}

fn load_now() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(to);
    let st = Command::new("cp").arg("-a").arg(from).arg(to).status().map_err(|e| format!("cp: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cp -a {} {} failed", from.display(), to.display()))
    }
}

const ENGINES: [Engine; 2] = [Engine::Shale, Engine::RocksDb];

/// Results: `[family][row][engine]` -> one Measure per round (or the error of that run).
pub type Results = Vec<Vec<[Vec<Result<Measure, String>>; 2]>>;

fn eidx(e: Engine) -> usize {
    match e {
        Engine::Shale => 0,
        Engine::RocksDb => 1,
    }
}

/// Builds each family's base database once per engine, then runs `rounds` rounds of every row.
pub fn run(tools: &Tools, fams: &[Family], rounds: usize) -> Results {
    let mut results: Results =
        fams.iter().map(|f| f.rows.iter().map(|_| [Vec::new(), Vec::new()]).collect()).collect();
    let _ = std::fs::create_dir_all(&tools.workdir);
    let err_file = tools.workdir.join("stderr.txt");
    // Base databases: one per (engine, distinct setup flags).
    let mut bases: Vec<(Engine, Vec<String>, Result<PathBuf, String>)> = Vec::new();
    for f in fams {
        let Some(base) = &f.base else { continue };
        for e in ENGINES {
            if bases.iter().any(|(be, bf, _)| *be == e && bf == base) {
                continue;
            }
            let dir = tools.workdir.join(format!("base-{}-{}", e.label().to_lowercase(), bases.len()));
            let _ = std::fs::remove_dir_all(&dir);
            eprint!("base {:<8} {} ...", e.label(), base.join(" "));
            let started = Instant::now();
            let r = run_measured(tools.command(e, base, &dir, 1000), &err_file).and_then(|p| {
                if p.ok {
                    Ok(dir.clone())
                } else {
                    Err(format!("setup failed: {}", p.stderr_tail))
                }
            });
            eprintln!(" {:.1} s{}", started.elapsed().as_secs_f64(), if r.is_err() { " FAILED" } else { "" });
            bases.push((e, base.clone(), r));
        }
    }
    let mut turn = 0usize;
    for round in 1..=rounds {
        let seed = 1000 + round as u64;
        for (fi, f) in fams.iter().enumerate() {
            for (ri, r) in f.rows.iter().enumerate() {
                turn += 1;
                let order = if turn % 2 == 1 { ENGINES } else { [ENGINES[1], ENGINES[0]] };
                for e in order {
                    let dir = tools.workdir.join(format!("run-{}", e.label().to_lowercase()));
                    let _ = std::fs::remove_dir_all(&dir);
                    let prepared = if r.existing {
                        let base = f.base.as_ref().and_then(|b| {
                            bases.iter().find(|(be, bf, _)| *be == e && bf == b).map(|x| x.2.clone())
                        });
                        match base {
                            Some(Ok(b)) => copy_dir(&b, &dir),
                            Some(Err(m)) => Err(m),
                            None => Err("no base database".into()),
                        }
                    } else {
                        Ok(())
                    };
                    eprint!("round {round}/{rounds} {:<40} {:<8}", r.label, e.label());
                    let load = load_now();
                    let started = Instant::now();
                    let m = prepared
                        .and_then(|()| run_measured(tools.command(e, &r.flags, &dir, seed), &err_file))
                        .and_then(|p| {
                            if !p.ok {
                                return Err(format!("exit failure: {}", p.stderr_tail));
                            }
                            let res = parse_output(&p.stdout);
                            let line = res
                                .iter()
                                .find(|l| l.name == r.bench)
                                .ok_or_else(|| format!("no result line for {}", r.bench))?;
                            let p999 =
                                parse_p999(&p.stdout).into_iter().find(|(n, _)| *n == r.bench).map(|x| x.1);
                            Ok(Measure {
                                ops: line.ops_per_sec as f64,
                                p999,
                                rss_mib: p.rss_mib,
                                cpu_s: p.cpu_s,
                                load,
                            })
                        });
                    match &m {
                        Ok(m) => eprintln!(
                            " {:>9.0} ops/s {:>6.1} s (load {:.1})",
                            m.ops,
                            started.elapsed().as_secs_f64(),
                            m.load
                        ),
                        Err(e) => eprintln!(" FAILED: {e}"),
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                    results[fi][ri][eidx(e)].push(m);
                }
            }
        }
    }
    for (_, _, b) in &bases {
        if let Ok(dir) = b {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    let _ = std::fs::remove_file(&err_file);
    results
}

fn med(ms: &[Result<Measure, String>], f: impl Fn(&Measure) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = ms.iter().filter_map(|m| m.as_ref().ok()).filter_map(f).collect();
    (!v.is_empty()).then(|| median(&v))
}

fn cell(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) => format!("{x:.digits$}"),
        None => "–".into(),
    }
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "–".into(),
    }
}

/// The Markdown tables, one per family, with each row's commands.
pub fn tables(fams: &[Family], results: &Results) -> String {
    let mut t = String::new();
    for (fi, f) in fams.iter().enumerate() {
        let _ = writeln!(t, "## {}\n\n{}\n", f.title, f.about);
        t.push_str(
            "| workload | Shale ops/s | RocksDB ops/s | **Shale / RocksDB** | P99.9 µs Shale | P99.9 µs RocksDB | \
             peak RSS MiB Shale | peak RSS MiB RocksDB | CPU s Shale | CPU s RocksDB | load |\n",
        );
        t.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        let mut notes = Vec::new();
        for (ri, r) in f.rows.iter().enumerate() {
            let [s, k] = &results[fi][ri];
            let ops = (med(s, |m| Some(m.ops)), med(k, |m| Some(m.ops)));
            let loads: Vec<f64> =
                s.iter().chain(k.iter()).filter_map(|m| m.as_ref().ok()).map(|m| m.load).collect();
            let load = if loads.is_empty() {
                "–".into()
            } else {
                let lo = loads.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = loads.iter().copied().fold(0.0, f64::max);
                format!("{lo:.1}–{hi:.1}")
            };
            let _ = writeln!(
                t,
                "| {} | {} | {} | **{}** | {} | {} | {} | {} | {} | {} | {} |",
                r.label,
                cell(ops.0, 0),
                cell(ops.1, 0),
                ratio(ops.0, ops.1),
                cell(med(s, |m| m.p999), 1),
                cell(med(k, |m| m.p999), 1),
                cell(med(s, |m| Some(m.rss_mib)), 0),
                cell(med(k, |m| Some(m.rss_mib)), 0),
                cell(med(s, |m| Some(m.cpu_s)), 2),
                cell(med(k, |m| Some(m.cpu_s)), 2),
                load
            );
            for (e, ms) in [(Engine::Shale, s), (Engine::RocksDb, k)] {
                let fails: Vec<&String> = ms.iter().filter_map(|m| m.as_ref().err()).collect();
                if let Some(first) = fails.first() {
                    let first = first.replace('\n', " / ");
                    notes.push(format!(
                        "{} {}: {} of {} runs failed: {first}",
                        r.label,
                        e.label(),
                        fails.len(),
                        ms.len()
                    ));
                }
            }
        }
        t.push_str("\nCommands (`BENCH` is `shale bench` or `db_bench`; each run adds `--histogram=1 --seed=1000+round --db=DIR`):\n\n```sh\n");
        if let Some(b) = &f.base {
            let _ = writeln!(t, "BENCH {}   # once per engine: the base database", b.join(" "));
        }
        for r in &f.rows {
            let how = if r.existing { "   # on a copy of the base" } else { "   # empty directory" };
            let _ = writeln!(t, "BENCH {}{how}", r.flags.join(" "));
        }
        t.push_str("```\n\n");
        for n in notes {
            let _ = writeln!(t, "- Failed: {n}");
        }
        if !t.ends_with("\n\n") {
            t.push('\n');
        }
    }
    t
}

fn sh(cmd: &Path, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let mut s = String::from_utf8_lossy(&o.stdout).trim().to_string();
            if s.is_empty() {
                s = String::from_utf8_lossy(&o.stderr).trim().to_string();
            }
            s
        })
        .unwrap_or_default()
}

/// What the document says about the run itself.
pub struct RunInfo {
    pub quick: bool,
    pub rounds: usize,
    /// The command line that made it.
    pub argv: String,
    /// When it started (UTC) and how long it took.
    pub started: String,
    pub minutes: f64,
}

/// The whole docs/benchmarks.md: how to regenerate it, the run's facts, the tables.
pub fn document(tools: &Tools, info: &RunInfo, tables: &str, results: &Results) -> String {
    let mut d = String::new();
    d.push_str("# Shale vs RocksDB 11.8.1: db_bench workloads\n\n");
    d.push_str(
        "This file is generated; do not edit it by hand (the history of earlier measurements is in git). \
         Regenerate it on a quiet machine with:\n\n```sh\ncargo build --release -p shale-cli -p shale-compare\n",
    );
    d.push_str("target/release/shale-compare --suite   # --quick to try it; --only WORD,... for some families\n```\n\n");
    d.push_str(
        "`shale-compare --suite` runs `shale bench` and RocksDB 11.8.1's release `db_bench` with the same flags, \
         interleaved (the order alternates row by row and round by round), and reports medians over the rounds: \
         ops/sec from the benchmark's result line, P99.9 latency from its histogram (`--histogram=1`), peak RSS \
         and CPU time (user + system) of the whole process from the kernel's accounting (`wait4`). \
         **Shale / RocksDB** is the ratio of the median ops/sec (above 1: Shale is faster). `load` is the range \
         of the 1-minute load average at the start of the runs of that row: above the number of CPUs, the \
         machine had other work and the figures are noise. `--suite --quick` runs the same rows with small \
         sizes, to try the script. The full run's sizes (below, in each family's commands) and its 2 rounds \
         were chosen to take about 15 minutes on 2 quiet cores: an estimate from the parts, not yet timed whole.\n\n",
    );
    let all: Vec<f64> = results
        .iter()
        .flatten()
        .flat_map(|r| r.iter().flatten())
        .filter_map(|m| m.as_ref().ok())
        .map(|m| m.load)
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    let here = Path::new("git");
    let _ = writeln!(
        d,
        "- Date: {} ({:.1} minutes){}",
        info.started,
        info.minutes,
        if info.quick { " — **quick sizes: not figures to quote**" } else { "" }
    );
    let _ = writeln!(d, "- Made by: `{}`", info.argv);
    let _ = writeln!(d, "- Shale: commit {} (release build)", sh(here, &["rev-parse", "--short", "HEAD"]));
    let _ = writeln!(
        d,
        "- RocksDB: `{}` ({})",
        tools.db_bench.display(),
        sh(&tools.db_bench, &["--version"]).lines().next().unwrap_or("?")
    );
    let _ = writeln!(d, "- Machine: {}", machine());
    let _ = writeln!(
        d,
        "- Rounds: {}; load average (1 min) at the runs' starts: {lo:.1} to {hi:.1}\n",
        info.rounds
    );
    d.push_str(tables);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_name_their_benchmark_and_use_the_base() {
        let fams = families(false);
        let d = &fams[0];
        assert_eq!(d.rows[0].bench, "fillseq");
        assert!(!d.rows[0].existing);
        let rr = d.rows.iter().find(|r| r.bench == "readrandom").unwrap();
        assert!(rr.existing && rr.flags.contains(&"--use_existing_db=1".to_string()));
        // Every family that has a row on an existing database has a base.
        for f in &fams {
            assert!(f.base.is_some() || f.rows.iter().all(|r| !r.existing), "{}", f.title);
        }
    }

    #[test]
    fn table_has_medians_and_ratio() {
        let fams = vec![Family {
            title: "t".into(),
            about: "a".into(),
            base: None,
            rows: vec![row("fillrandom", "--benchmarks=fillrandom --num=10", false)],
        }];
        let m = |ops: f64, p: f64| Ok(Measure { ops, p999: Some(p), rss_mib: 10.0, cpu_s: 1.0, load: 0.5 });
        let results: Results = vec![vec![[
            vec![m(300.0, 2.0), m(100.0, 4.0), m(200.0, 3.0)],
            vec![m(100.0, 5.0), m(100.0, 5.0), Err("x".into())],
        ]]];
        let t = tables(&fams, &results);
        assert!(
            t.contains("| fillrandom | 200 | 100 | **2.00** | 3.0 | 5.0 | 10 | 10 | 1.00 | 1.00 | 0.5–0.5 |"),
            "{t}"
        );
        assert!(t.contains("fillrandom RocksDB: 1 of 3 runs failed: x"), "{t}");
        assert!(t.contains("BENCH --benchmarks=fillrandom --num=10   # empty directory"), "{t}");
    }
}
