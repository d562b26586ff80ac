//! `shale-compare`: runs RocksDB's `db_bench` and `shale bench` with identical flags on
//! fresh directories, alternating which goes first, N repetitions each; prints a table
//! per workload (medians of ops/sec and micros/op, Shale/RocksDB ratio, min–max spread)
//! and writes it, with the machine, flags and date, to docs/benchmarks.md.
//!
//! ```text
//! cargo build --release -p shale-cli -p shale-compare
//! target/release/shale-compare --reps 3 -- --num=1000000 --compression_type=none \
//!     --benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readwhilewriting
//! ```

mod parse;
mod report;

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
    /// RocksDB's db_bench.
    #[arg(long, default_value = "/usr/bin/db_bench")]
    db_bench: PathBuf,
    /// The release build of `shale` (default: $CARGO_TARGET_DIR or ./target, /release/shale).
    #[arg(long)]
    shale: Option<PathBuf>,
    /// Where the databases go (each run gets a fresh directory, removed afterwards).
    #[arg(long, default_value = "/tmp/shale-compare")]
    workdir: PathBuf,
    /// The Markdown report ("" to skip writing it).
    #[arg(long, default_value = "docs/benchmarks.md")]
    out: String,
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

fn run_one(cli: &Cli, shale: &Path, engine: Engine, rep: usize, flags: &[String]) -> Result<Run, String> {
    let dir = cli.workdir.join(format!("{}-{rep}", engine.label().to_lowercase()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&cli.workdir).map_err(|e| format!("{}: {e}", cli.workdir.display()))?;
    let mut cmd = match engine {
        Engine::RocksDb => Command::new(&cli.db_bench),
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let shale = cli.shale.clone().unwrap_or_else(default_shale);
    if !shale.exists() {
        eprintln!("{} not found: build it with `cargo build --release -p shale-cli`", shale.display());
        return ExitCode::FAILURE;
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
            match run_one(&cli, &shale, engine, rep, &flags) {
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
    if !cli.out.is_empty() {
        let doc = report::document(&cli.flags, cli.reps, &table, &runs, &cli.db_bench);
        if let Err(e) = std::fs::write(&cli.out, doc) {
            eprintln!("cannot write {}: {e}", cli.out);
            return ExitCode::FAILURE;
        }
        eprintln!("wrote {}", cli.out);
    }
    ExitCode::SUCCESS
}
