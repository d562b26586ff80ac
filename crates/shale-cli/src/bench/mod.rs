//! `shale bench`: db_bench's workloads, flags and output against a Shale database.
//!
//! The driver follows db_bench's `Run`: open (destroying the database first unless
//! `--use_existing_db`), print the header, then for each benchmark set its parameters,
//! reopen a fresh database for the fill benchmarks, print `DB path: [...]`, run
//! `--threads` workers (plus one writer for readwhilewriting), merge their stats and
//! print the result line.

pub mod args;
pub mod db;
pub mod header;
pub mod histogram;
pub mod random;
pub mod rate;
pub mod stats;
pub mod txn;
pub mod workloads;

use std::io::{IsTerminal, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;

use indicatif::{ProgressBar, ProgressStyle};
use shale::DB;

pub use args::BenchArgs;
use random::Mt64;
use stats::{Progress, Stats};
use workloads::{Ctx, Method, ThreadState};

type Result<T> = std::result::Result<T, String>;

struct Runner<'a> {
    args: &'a BenchArgs,
    path: String,
    seed_base: u64,
    total_thread_count: u64,
    db: Option<DB>,
    /// With --transaction_db / --optimistic_transaction_db: the database instead of `db`.
    txn_db: Option<txn::TxnDb>,
    /// The options every open uses (one statistics object for the run).
    opts: shale::Options,
}

/// One benchmark's parameters (db_bench's per-benchmark sanitised copies of the flags).
struct Plan {
    method: Option<Method>,
    fresh_db: bool,
    threads: usize,
    num: i64,
    key_size: usize,
    sync: bool,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    args.validate()?;
    let benchmarks = args.benchmark_list()?;
    let seed_base = if args.seed != 0 {
        args.seed as u64
    } else {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(1);
        println!("Set seed to {now} because --seed was 0");
        now
    };
    // A temporary database unless --db names one; removed when `_tmp` drops.
    let (_tmp, path) = if args.db.is_empty() {
        if args.use_existing_db {
            return Err("--use_existing_db needs --db".into());
        }
        let t = tempfile::Builder::new().prefix("shale-bench-").tempdir().map_err(|e| e.to_string())?;
        let p = t.path().join("dbbench").to_string_lossy().into_owned();
        (Some(t), p)
    } else {
        (None, args.db.clone())
    };
    let opts = db::options(args)?;
    let mut r = Runner { args, path, seed_base, total_thread_count: 0, db: None, txn_db: None, opts };
    if !args.use_existing_db {
        db::destroy(&r.path)?;
    }
    if args.transactional() {
        r.txn_db = Some(db::open_transactional(&r.opts, args, &r.path)?);
    } else {
        r.db = Some(db::open(&r.opts, args, &r.path)?);
    }
    eprint!("{}", header::environment());
    print!("{}", header::header(args));
    for name in &benchmarks {
        r.run_one(name)?;
    }
    if args.statistics {
        // As db_bench: `STATISTICS:` then the statistics object's text (RocksDB's format).
        println!("STATISTICS:\n{}", r.opts.get_statistics().unwrap_or_default());
    }
    drop(r); // closes the database before the temporary directory goes
    Ok(())
}

impl Runner<'_> {
    fn plan(&self, name: &str) -> Plan {
        let a = self.args;
        let mut p = Plan {
            method: None,
            fresh_db: false,
            threads: a.threads as usize,
            num: a.num,
            key_size: a.key_size as usize,
            sync: false,
        };
        match name {
            "fillseq" => (p.fresh_db, p.method) = (true, Some(Method::WriteSeq)),
            "fillrandom" => (p.fresh_db, p.method) = (true, Some(Method::WriteRandom)),
            "overwrite" => p.method = Some(Method::WriteRandom),
            "fillsync" => {
                (p.fresh_db, p.method, p.sync) = (true, Some(Method::WriteRandom), true);
                p.num /= 1000;
            }
            "readseq" => p.method = Some(Method::ReadSeq),
            "readreverse" => p.method = Some(Method::ReadReverse),
            "readrandom" => p.method = Some(Method::ReadRandom),
            "readmissing" => {
                p.key_size += 1;
                p.method = Some(Method::ReadRandom);
            }
            "seekrandom" => p.method = Some(Method::SeekRandom),
            "deleterandom" => p.method = Some(Method::DeleteRandom),
            "readwhilewriting" => {
                p.threads += 1;
                p.method = Some(Method::ReadWhileWriting);
            }
            "seekrandomwhilewriting" => {
                p.threads += 1;
                p.method = Some(Method::SeekRandomWhileWriting);
            }
            "compact" => p.method = Some(Method::Compact),
            "mergerandom" => p.method = Some(Method::MergeRandom),
            "readrandommergerandom" => p.method = Some(Method::ReadRandomMergeRandom),
            "randomtransaction" => p.method = Some(Method::RandomTransaction),
            _ => {} // flush and stats run inline
        }
        p
    }

    fn db(&self) -> Result<&DB> {
        self.db.as_ref().ok_or_else(|| "database is not open".to_string())
    }

    fn run_one(&mut self, name: &str) -> Result<()> {
        let mut plan = self.plan(name);
        match name {
            "flush" => self.flush()?,
            "waitforcompaction" => self.wait_for_compaction()?,
            // db_bench's PrintStats of rocksdb.stats, rocksdb.levelstats, rocksdb.sstables.
            "stats" | "levelstats" | "sstables" => {
                let s = self.db()?.property_value(format!("rocksdb.{name}")).ok().flatten();
                println!("\n{}", s.unwrap_or_else(|| "(failed)".into()));
            }
            _ => {}
        }
        if plan.fresh_db {
            if self.args.use_existing_db {
                println!("{name:<12} : skipped (--use_existing_db is true)");
                plan.method = None;
            } else {
                self.db = None;
                db::destroy(&self.path)?;
                self.db = Some(db::open(&self.opts, self.args, &self.path)?);
            }
        }
        if let Some(method) = plan.method {
            println!("DB path: [{}]", self.path);
            let out = if method == Method::RandomTransaction {
                self.run_random_transaction(name, &plan)?
            } else {
                self.run_benchmark(name, method, &plan)?
            };
            print!("{out}");
            let _ = std::io::stdout().flush();
            if let (Method::RandomTransaction, Some(t)) = (method, &self.txn_db) {
                // db_bench's post-process method RandomTransactionVerify.
                let mut r = Mt64::new(self.seed_base);
                match txn::verify(t, self.args.transaction_sets as u16, &mut r) {
                    Ok(()) => println!("RandomTransactionVerify Success."),
                    Err(e) => {
                        println!("{e}");
                        println!("RandomTransactionVerify FAILED!!");
                        return Err("RandomTransactionVerify failed".into());
                    }
                }
            }
        }
        Ok(())
    }

    /// randomtransaction: `--threads` threads, each running `txn.rs`'s loop on the
    /// transaction database, or batches on the plain one.
    fn run_random_transaction(&mut self, name: &str, plan: &Plan) -> Result<String> {
        let a = self.args;
        let first_thread = self.total_thread_count;
        self.total_thread_count += plan.threads as u64;
        let write_opts = db::write_options(a, plan.sync);
        let p = txn::TxnParams {
            num_keys: a.num.max(0) as u64,
            sets: a.transaction_sets as u16,
            ops: if a.reads < 0 { a.num } else { a.reads },
            duration: a.duration.max(0) as u64,
            lock_timeout_ms: a.transaction_lock_timeout.min(i64::MAX as u64) as i64,
            set_snapshot: a.transaction_set_snapshot,
            write_opts: &write_opts,
        };
        let progress = self.progress(p.ops.max(0) as u64 * plan.threads as u64);
        if let Some(Progress::Bar(b)) = &progress {
            b.set_message(name.to_string());
        }
        let mut states: Vec<ThreadState> = (0..plan.threads)
            .map(|tid| ThreadState {
                tid,
                rand: Mt64::new(self.seed_base.wrapping_add(first_thread + tid as u64 + 1)),
                stats: Stats::new(a.histogram, progress.clone()),
            })
            .collect();
        let (db, txn_db) = (self.db.as_ref(), self.txn_db.as_ref());
        let barrier = Barrier::new(plan.threads);
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let handles: Vec<_> = states
                .iter_mut()
                .map(|t| {
                    let (p, barrier) = (&p, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        t.stats.start();
                        let r = match (txn_db, db) {
                            (Some(tdb), _) => {
                                txn::random_transaction(tdb, p, t.tid, &mut t.rand, &mut t.stats)
                            }
                            (None, Some(db)) => txn::random_batches(db, p, &mut t.rand, &mut t.stats),
                            (None, None) => Err("database is not open".to_string()),
                        };
                        t.stats.stop();
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("benchmark thread panicked".into())))
                .collect()
        });
        finish_run(results, progress.as_ref(), &states, a, name)
    }

    fn flush(&self) -> Result<()> {
        let db = self.db()?;
        for i in 0..self.args.num_column_families as usize {
            if let Some(cf) = db.cf_handle(&db::cf_name(i)) {
                db.flush_cf(cf).map_err(|e| format!("Flush failed: {e}"))?;
            }
        }
        println!("flush memtable");
        Ok(())
    }

    /// db_bench's `waitforcompaction`: gives the background threads five seconds to wake,
    /// then waits (RocksDB's `WaitForCompact` with default options: no flush, no timeout)
    /// until no flush or compaction is queued or running, printing db_bench's two lines.
    fn wait_for_compaction(&self) -> Result<()> {
        std::thread::sleep(std::time::Duration::from_secs(5));
        println!("waitforcompaction({}): started", self.path);
        let _ = std::io::stdout().flush();
        let status = match self.db()?.wait_for_compact(&shale::WaitForCompactOptions::default()) {
            Ok(()) => "OK".to_string(),
            Err(e) => e.to_string(),
        };
        println!("waitforcompaction({}): finished with status ({status})", self.path);
        Ok(())
    }

    fn progress(&self, expected: u64) -> Option<Progress> {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(expected);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg:12} [{elapsed_precise}] {wide_bar} {pos}/{len} ops ({per_sec})",
            ) {
                bar.set_style(style);
            }
            Some(Progress::Bar(bar))
        } else {
            Some(Progress::Text)
        }
    }

    fn run_benchmark(&mut self, name: &str, method: Method, plan: &Plan) -> Result<String> {
        let a = self.args;
        let first_thread = self.total_thread_count;
        self.total_thread_count += plan.threads as u64;
        let db = self.db()?;
        let cfs = (0..a.num_column_families as usize)
            .map(|i| db.cf_handle(&db::cf_name(i)).ok_or_else(|| format!("column family {i} missing")))
            .collect::<Result<Vec<_>>>()?;
        let reads = if a.reads < 0 { a.num } else { a.reads };
        let ctx = Ctx {
            db,
            cfs,
            flag_num: a.num,
            num: plan.num,
            reads,
            writes: a.num,
            deletes: a.num,
            merge_keys: if a.merge_keys < 0 { a.num } else { a.merge_keys },
            mergereadpercent: a.mergereadpercent,
            key_size: plan.key_size,
            value_size: a.value_size as usize,
            compression_ratio: a.compression_ratio,
            duration: a.duration.max(0) as u64,
            seek_nexts: a.seek_nexts,
            reverse_iterator: a.reverse_iterator,
            explicit_snapshot: a.explicit_snapshot,
            auto_refresh_iterator_with_snapshot: a.auto_refresh_iterator_with_snapshot,
            use_tailing_iterator: a.use_tailing_iterator,
            write_rate_limit: a.benchmark_write_rate_limit,
            writer_key_offset: a.writer_key_offset,
            write_limiter: (a.benchmark_write_rate_limit > 0)
                .then(|| rate::WriteRateLimiter::new(a.benchmark_write_rate_limit)),
            write_opts: db::write_options(a, plan.sync),
            num_done: AtomicUsize::new(0),
            total_threads: plan.threads,
        };
        let per_thread = match method {
            Method::WriteSeq | Method::WriteRandom | Method::DeleteRandom => a.num,
            Method::ReadSeq | Method::ReadReverse => reads.min(a.num),
            Method::Compact => 1,
            _ => reads,
        };
        let with_writer = matches!(method, Method::ReadWhileWriting | Method::SeekRandomWhileWriting);
        let readers = if with_writer { plan.threads - 1 } else { plan.threads };
        let progress = self.progress(per_thread.max(0) as u64 * readers as u64);
        if let Some(Progress::Bar(b)) = &progress {
            b.set_message(name.to_string());
        }
        let mut states: Vec<ThreadState> = (0..plan.threads)
            .map(|tid| {
                let writer = with_writer && tid == 0;
                let mut stats = Stats::new(a.histogram, if writer { None } else { progress.clone() });
                stats.set_interval(tid, a.stats_interval, a.stats_interval_seconds);
                ThreadState {
                    tid,
                    rand: Mt64::new(self.seed_base.wrapping_add(first_thread + tid as u64 + 1)),
                    stats,
                }
            })
            .collect();
        let barrier = Barrier::new(plan.threads);
        let results: Vec<Result<()>> = std::thread::scope(|s| {
            let handles: Vec<_> = states
                .iter_mut()
                .map(|t| {
                    let (ctx, barrier) = (&ctx, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        t.stats.start();
                        let r = ctx.run(method, t);
                        t.stats.stop();
                        ctx.num_done.fetch_add(1, Ordering::AcqRel);
                        r
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("benchmark thread panicked".into())))
                .collect()
        });
        finish_run(results, progress.as_ref(), &states, a, name)
    }
}

/// The end of a benchmark's threads: clears the progress bar, returns the first thread's
/// error, else the threads' statistics merged into db_bench's result line.
fn finish_run(
    results: Vec<Result<()>>,
    progress: Option<&Progress>,
    states: &[ThreadState],
    a: &BenchArgs,
    name: &str,
) -> Result<String> {
    if let Some(Progress::Bar(b)) = progress {
        b.finish_and_clear();
    }
    for r in results {
        r?;
    }
    let mut merged = Stats::new(a.histogram, None);
    for t in states {
        merged.merge(&t.stats);
    }
    let mut out = merged.report(name);
    if a.report_cpu_time {
        out.push_str(&merged.cpu_line(name));
    }
    Ok(out)
}
