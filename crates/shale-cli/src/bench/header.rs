//! The block db_bench prints before the benchmarks: the environment on stderr (version,
//! date, CPU from /proc/cpuinfo) and the workload description on stdout.

use std::fmt::Write as _;

use super::args::BenchArgs;
use super::db::{compression_display, compression_from_name};

/// (number of CPUs, model name, cache size) from /proc/cpuinfo, as db_bench reads it.
pub fn cpu_info() -> (usize, String, String) {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (mut n, mut model, mut cache) = (0, String::new(), String::new());
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        match k.trim() {
            "model name" => {
                n += 1;
                model = v.trim().to_string();
            }
            "cache size" => cache = v.trim().to_string(),
            _ => {}
        }
    }
    (n, model, cache)
}

/// ctime()'s format: `Sun Nov 22 03:09:42 2026` (local time).
pub fn ctime_now() -> String {
    // Rust's std has no local-time formatting; `date` with ctime's layout does it.
    std::process::Command::new("date")
        .arg("+%a %b %e %H:%M:%S %Y")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default()
}

pub fn environment() -> String {
    let (n, model, cache) = cpu_info();
    let mut s = String::new();
    let _ = writeln!(s, "Shale:      version {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s, "Date:       {}", ctime_now());
    let _ = writeln!(s, "CPU:        {n} * {model}");
    let _ = writeln!(s, "CPUCache:   {cache}");
    s
}

/// The stdout part of db_bench's PrintHeader for a fixed value size.
pub fn header(a: &BenchArgs) -> String {
    let mut s = String::new();
    let num = a.num;
    let _ = writeln!(s, "Keys:       {} bytes each (+ 0 bytes user-defined timestamp)", a.key_size);
    let _ = writeln!(
        s,
        "Values:     {} bytes each ({} bytes after compression)",
        a.value_size,
        (f64::from(a.value_size) * a.compression_ratio + 0.5) as i32
    );
    let _ = writeln!(s, "Entries:    {num}");
    let _ = writeln!(s, "Prefix:    0 bytes");
    let _ = writeln!(s, "Keys per prefix:    0");
    let _ = writeln!(
        s,
        "RawSize:    {:.1} MB (estimated)",
        (i64::from(a.key_size + a.value_size) * num) as f64 / 1048576.0
    );
    let _ = writeln!(
        s,
        "FileSize:   {:.1} MB (estimated)",
        ((f64::from(a.key_size) + f64::from(a.value_size) * a.compression_ratio) * num as f64) / 1048576.0
    );
    let _ = writeln!(s, "Write rate: {} bytes/second", a.benchmark_write_rate_limit);
    let _ = writeln!(s, "Read rate: 0 ops/second");
    let compression = compression_from_name(&a.compression_type).map(compression_display).unwrap_or("?");
    let _ = writeln!(s, "Compression: {compression}");
    let _ = writeln!(s, "Compression sampling rate: 0");
    let _ = writeln!(s, "Memtablerep: SkipListFactory");
    let _ = writeln!(s, "Perf Level: 1");
    if cfg!(debug_assertions) {
        let _ = writeln!(s, "WARNING: Optimization is disabled: benchmarks unnecessarily slow");
        let _ = writeln!(s, "WARNING: Assertions are enabled; benchmarks unnecessarily slow");
    }
    s.push_str("------------------------------------------------\n");
    s
}
