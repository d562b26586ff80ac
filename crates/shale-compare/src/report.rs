//! The comparison tables (Markdown) and the docs/benchmarks.md document.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use crate::{Engine, Run};

pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Workload names in first-seen order.
fn workloads(runs: &[Run]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for l in &r.results {
            if !names.contains(&l.name) {
                names.push(l.name.clone());
            }
        }
    }
    names
}

struct Side {
    ops: Vec<f64>,
    micros: Vec<f64>,
    found: Vec<(u64, u64)>,
}

fn side(runs: &[Run], engine: Engine, name: &str) -> Side {
    let mut s = Side { ops: vec![], micros: vec![], found: vec![] };
    for r in runs.iter().filter(|r| r.engine == engine) {
        for l in r.results.iter().filter(|l| l.name == name) {
            s.ops.push(l.ops_per_sec as f64);
            s.micros.push(l.micros_per_op);
            if let Some(f) = l.found {
                s.found.push(f);
            }
        }
    }
    s
}

fn range(v: &[f64]) -> String {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    if v.is_empty() {
        "–".into()
    } else {
        format!("{min:.0}–{max:.0}")
    }
}

fn found(f: &[(u64, u64)]) -> String {
    if f.is_empty() {
        return "–".into();
    }
    f.iter().map(|(a, b)| format!("{a}/{b}")).collect::<Vec<_>>().join(", ")
}

/// The summary table (a row per workload), then a table per workload with each run.
pub fn tables(runs: &[Run]) -> String {
    let mut t = String::new();
    t.push_str(
        "| Workload | RocksDB ops/sec | Shale ops/sec | Shale/RocksDB | RocksDB µs/op | Shale µs/op | \
         RocksDB ops/sec min–max | Shale ops/sec min–max |\n",
    );
    t.push_str("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    let names = workloads(runs);
    for name in &names {
        let (r, s) = (side(runs, Engine::RocksDb, name), side(runs, Engine::Shale, name));
        let (rm, sm) = (median(&r.ops), median(&s.ops));
        let ratio = if rm > 0.0 { format!("{:.2}", sm / rm) } else { "–".into() };
        let _ = writeln!(
            t,
            "| {name} | {rm:.0} | {sm:.0} | {ratio} | {:.3} | {:.3} | {} | {} |",
            median(&r.micros),
            median(&s.micros),
            range(&r.ops),
            range(&s.ops)
        );
    }
    for name in &names {
        let (r, s) = (side(runs, Engine::RocksDb, name), side(runs, Engine::Shale, name));
        let _ = writeln!(t, "\n#### {name}\n");
        t.push_str("| | RocksDB | Shale |\n|---|---:|---:|\n");
        let _ = writeln!(t, "| median ops/sec | {:.0} | {:.0} |", median(&r.ops), median(&s.ops));
        let _ = writeln!(t, "| median µs/op | {:.3} | {:.3} |", median(&r.micros), median(&s.micros));
        let ratio = if median(&r.ops) > 0.0 { median(&s.ops) / median(&r.ops) } else { 0.0 };
        let _ = writeln!(t, "| Shale/RocksDB (ops/sec) | | {ratio:.2} |");
        let _ = writeln!(t, "| spread ops/sec (min–max) | {} | {} |", range(&r.ops), range(&s.ops));
        let runs_of = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(t, "| each run, ops/sec | {} | {} |", runs_of(&r.ops), runs_of(&s.ops));
        if !r.found.is_empty() || !s.found.is_empty() {
            let _ = writeln!(t, "| found (each run) | {} | {} |", found(&r.found), found(&s.found));
        }
    }
    t
}

fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The date and time now, UTC.
pub fn now_utc() -> String {
    sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"])
}

/// nproc, memory and CPU model of this machine.
pub fn machine() -> String {
    let nproc = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let l = m.lines().find(|l| l.starts_with("MemTotal:"))?.to_string();
            let kb: f64 = l.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!("{:.1} GiB", kb / 1048576.0))
        })
        .unwrap_or_else(|| "?".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find(|l| l.starts_with("model name"))?.split_once(':').map(|x| x.1.trim().to_string())
        })
        .unwrap_or_else(|| "?".into());
    format!("{nproc} CPUs ({cpu}), {mem} memory, kernel {}", sh("uname", &["-r"]))
}

pub fn document(flags: &[String], reps: usize, table: &str, runs: &[Run], db_bench: &Path) -> String {
    let mut d = String::new();
    d.push_str("# Shale vs RocksDB: db_bench workloads\n\n");
    d.push_str(
        "Generated by `shale-compare` (crates/shale-compare): RocksDB's `db_bench` and `shale bench` run with \
         identical flags on fresh directories, alternating which engine goes first, and the result lines \
         (`micros/op`, `ops/sec`) are parsed. Medians over the repetitions; the ratio is Shale's median ops/sec \
         over RocksDB's (above 1: Shale is faster).\n\n",
    );
    let _ = writeln!(d, "- Date: {}", sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]));
    let _ = writeln!(d, "- Machine: {}", machine());
    let _ = writeln!(d, "- RocksDB: `{}` ({})", db_bench.display(), sh("sh", &["-c", "dpkg-query -W -f '${Package} ${Version}; ' librocksdb7.8 rocksdb-tools 2>/dev/null | head -c 200"]).trim_end_matches(';'));
    let _ = writeln!(d, "- Shale: commit {} (release build)", sh("git", &["rev-parse", "--short", "HEAD"]));
    let _ = writeln!(d, "- Repetitions: {reps} per engine (interleaved; a repetition uses `--seed=1000+rep` for both engines, so both touch the same keys in the same order)");
    let _ = writeln!(d, "- Flags (both tools): `{}`", flags.join(" "));
    let mut warns: Vec<String> = Vec::new();
    for r in runs {
        for w in &r.warnings {
            let w = format!("{}: {w}", r.engine.label());
            if !warns.contains(&w) {
                warns.push(w);
            }
        }
    }
    let loads: Vec<String> =
        runs.iter().map(|r| format!("{} #{}: {}", r.engine.label(), r.rep, r.load_before)).collect();
    let _ = writeln!(
        d,
        "- Load average (1 min) at the start of each run, in run order: {} — the machine has other work; \
         the spread columns show how much that moved the numbers",
        loads.join(", ")
    );
    for w in &warns {
        let _ = writeln!(d, "- Note — {w}");
    }
    d.push_str("\nReproduce:\n\n```sh\ncargo build --release -p shale-cli -p shale-compare\n");
    let _ = writeln!(d, "target/release/shale-compare --reps {reps} -- {}\n```\n", flags.join(" "));
    d.push_str("## Results\n\n");
    d.push_str(table);
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_output;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
    }

    #[test]
    fn table_rows() {
        let line = |ops: u64| {
            format!(
                "readrandom   :       1.000 micros/op {ops} ops/sec 1.000 seconds 10 operations; (10 of 10 found)\n"
            )
        };
        let mk = |engine, rep, ops| Run {
            engine,
            rep,
            results: parse_output(&line(ops)),
            wall_seconds: 1.0,
            warnings: vec![],
            load_before: "0".into(),
        };
        let runs = vec![
            mk(Engine::RocksDb, 1, 100),
            mk(Engine::Shale, 1, 50),
            mk(Engine::RocksDb, 2, 300),
            mk(Engine::Shale, 2, 70),
        ];
        let t = tables(&runs);
        assert!(t.contains("| readrandom | 200 | 60 | 0.30 | 1.000 | 1.000 | 100–300 | 50–70 |"), "{t}");
        assert!(t.contains("| found (each run) | 10/10, 10/10 | 10/10, 10/10 |"));
    }
}
