//! `shale-compare`: runs RocksDB's `db_bench` and `shale bench` with identical flags on
//! fresh directories, alternating which goes first, N repetitions each; prints a table
//! per workload (medians of ops/sec and micros/op, Shale/RocksDB ratio, min–max spread),
//! and with `--out FILE` writes it, with the machine, flags and date, to that file.
//!
//! ```text
//! cargo build --release -p shale-cli -p shale-compare
//! target/release/shale-compare --reps 3 -- --num=1000000 --compression_type=none \
//!     --benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readwhilewriting
//! ```
//!
//! `--suite` runs instead the whole table of docs/benchmarks.md (`suite.rs`: one table per
//! workload family, with P99.9, peak RSS and CPU time) and rewrites that file;
//! `--suite --quick` runs the same rows with small sizes and only prints the tables.

mod parse;
mod report;
mod suite;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::Parser;

use parse::{parse_output, ResultLine};

#[derive(Parser)]
#[command(name = "shale-compare", about = "db_bench vs shale bench, side by side")]
#[command(rename_all = "snake_case")]
struct Cli {
    /// Repetitions per engine (interleaved).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// RocksDB's db_bench (default: $ROCKSDB_BIN/db_bench, else
    /// shared/tools/rocksdb-11.8.1/bin/db_bench in the nearest ancestor of the current
    /// directory that has it: the project's ../shared/tools).
    #[arg(long)]
    db_bench: Option<PathBuf>,
    /// The release build of `shale` (default: $CARGO_TARGET_DIR or ./target, /release/shale).
    #[arg(long)]
    shale: Option<PathBuf>,
    /// Where the databases go (each run gets a fresh directory, removed afterwards).
    #[arg(long, default_value = "/tmp/shale-compare")]
    workdir: PathBuf,
    /// The Markdown report (with --suite: default docs/benchmarks.md, "" or --quick for none;
    /// without: none unless given, so a one-off comparison never replaces the suite's table).
    #[arg(long)]
    out: Option<String>,
    /// Run the whole table of docs/benchmarks.md (every workload family) instead of `flags`.
    #[arg(long)]
    suite: bool,
    /// With --suite: small sizes, to try the script (the tables are printed, no file written).
    #[arg(long)]
    quick: bool,
    /// With --suite: rounds of every row (medians over them; 2 keep a full run near 15 minutes).
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// With --suite: only the families whose title contains one of these words (comma-separated).
    #[arg(long)]
    only: Option<String>,
    /// Flags given to both tools (after `--`), e.g. --num=1000000 --benchmarks=fillrandom,readrandom.
    #[arg(last = true)]
    flags: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Engine {
    RocksDb,
    Shale,
}

impl Engine {
    pub fn label(self) -> &'static str {
        match self {
            Engine::RocksDb => "RocksDB",
            Engine::Shale => "Shale",
        }
    }
}

/// One run's results.
pub struct Run {
    pub engine: Engine,
    pub rep: usize,
    pub results: Vec<ResultLine>,
    pub wall_seconds: f64,
    /// The tool's `WARNING: ...` lines (e.g. a build with assertions).
    pub warnings: Vec<String>,
    /// The 1-minute load average when the run started (other work on the machine).
    pub load_before: String,
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn default_shale() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("release").join("shale")
}

fn run_one(
    cli: &Cli,
    shale: &Path,
    db_bench: &Path,
    engine: Engine,
    rep: usize,
    flags: &[String],
) -> Result<Run, String> {
    let dir = cli.workdir.join(format!("{}-{rep}", engine.label().to_lowercase()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&cli.workdir).map_err(|e| format!("{}: {e}", cli.workdir.display()))?;
    let mut cmd = match engine {
        Engine::RocksDb => Command::new(db_bench),
        Engine::Shale => {
            let mut c = Command::new(shale);
            c.arg("bench");
            c
        }
    };
    cmd.args(flags).arg(format!("--db={}", dir.display()));
    let load_before = load_average();
    let started = Instant::now();
    let out = cmd.output().map_err(|e| format!("cannot run {engine:?}: {e}"))?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: String = stderr.replace('\r', "\n").lines().rev().take(10).collect::<Vec<_>>().join("\n");
        return Err(format!("{} failed ({}):\n{stdout}\n{tail}", engine.label(), out.status));
    }
    let warnings = stdout.lines().filter(|l| l.starts_with("WARNING")).map(str::to_string).collect();
    Ok(Run { engine, rep, results: parse_output(&stdout), wall_seconds, warnings, load_before })
}

/// `$ROCKSDB_BIN/db_bench`, else the first `shared/tools/rocksdb-11.8.1/bin/db_bench` beside
/// the current directory or one of its ancestors (the project's `../shared/tools`).
fn default_db_bench() -> PathBuf {
    const REL: &str = "shared/tools/rocksdb-11.8.1/bin/db_bench";
    if let Some(d) = std::env::var_os("ROCKSDB_BIN") {
        return PathBuf::from(d).join("db_bench");
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    cwd.ancestors()
        .map(|a| a.join(REL))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("../").join(REL))
}

fn run_suite(cli: &Cli, shale: PathBuf, db_bench: PathBuf) -> ExitCode {
    let mut fams = suite::families(cli.quick);
    if let Some(only) = &cli.only {
        let words: Vec<String> = only.split(',').map(|w| w.trim().to_lowercase()).collect();
        fams.retain(|f| words.iter().any(|w| f.title.to_lowercase().contains(w.as_str())));
    }
    let tools = suite::Tools { shale, db_bench, workdir: cli.workdir.clone() };
    let started = report::now_utc();
    let t0 = Instant::now();
    let results = suite::run(&tools, &fams, cli.rounds.max(1));
    let minutes = t0.elapsed().as_secs_f64() / 60.0;
    let tables = suite::tables(&fams, &results);
    let out =
        cli.out
            .clone()
            .unwrap_or_else(|| if cli.quick { String::new() } else { "docs/benchmarks.md".into() });
    let argv: Vec<String> = std::env::args().collect();
    let mut cmd = vec!["target/release/shale-compare".to_string()];
    cmd.extend(argv.into_iter().skip(1));
    let info =
        suite::RunInfo { quick: cli.quick, rounds: cli.rounds.max(1), argv: cmd.join(" "), started, minutes };
    let doc = suite::document(&tools, &info, &tables, &results);
    if out.is_empty() {
        print!("{doc}");
        return ExitCode::SUCCESS;
    }
    if let Err(e) = std::fs::write(&out, doc) {
        eprintln!("cannot write {out}: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("wrote {out}");
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let shale = cli.shale.clone().unwrap_or_else(default_shale);
    if !shale.exists() {
        eprintln!("{} not found: build it with `cargo build --release -p shale-cli`", shale.display());
        return ExitCode::FAILURE;
    }
    let db_bench = cli.db_bench.clone().unwrap_or_else(default_db_bench);
    if !db_bench.exists() {
        eprintln!("{} not found: give --db_bench or ROCKSDB_BIN", db_bench.display());
        return ExitCode::FAILURE;
    }
    if cli.suite {
        return run_suite(&cli, shale, db_bench);
    }
    let has_seed = cli.flags.iter().any(|f| f.starts_with("--seed"));
    let mut runs = Vec::new();
    for rep in 1..=cli.reps {
        // Same seed for both engines within a repetition: the same keys in the same order.
        let mut flags = cli.flags.clone();
        if !has_seed {
            flags.push(format!("--seed={}", 1000 + rep));
        }
        let order =
            if rep % 2 == 1 { [Engine::RocksDb, Engine::Shale] } else { [Engine::Shale, Engine::RocksDb] };
        for engine in order {
            eprint!("rep {rep}/{}: {:<8}", cli.reps, engine.label());
            match run_one(&cli, &shale, &db_bench, engine, rep, &flags) {
                Ok(run) => {
                    eprintln!(" {:7.1} s", run.wall_seconds);
                    runs.push(run);
                }
                Err(e) => {
                    eprintln!("\n{e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let table = report::tables(&runs);
    print!("{table}");
    let out = cli.out.clone().unwrap_or_default();
    if !out.is_empty() {
        let doc = report::document(&cli.flags, cli.reps, &table, &runs, &db_bench);
        if let Err(e) = std::fs::write(&out, doc) {
            eprintln!("cannot write {out}: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("wrote {out}");
    }
    ExitCode::SUCCESS
}
