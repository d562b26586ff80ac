//! `shale raftlog dump | check | stress`: tools for a Raft log directory (shale-raftlog,
//! raft-engine's format). `stress` takes raft-engine's stress tool's flags and prints its
//! report (throughput, latency percentiles, fairness, write bandwidth).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use shale_raftlog::log_batch::LogItemContent;
use shale_raftlog::recovery::{scan_file, ScanEnd};
use shale_raftlog::{Command, Config, Engine, FileId, LogBatch, ReadableSize, Version};

type Result<T> = std::result::Result<T, String>;

#[derive(Args)]
pub struct RaftlogArgs {
    #[command(subcommand)]
    command: RaftlogCommand,
}

#[derive(Subcommand)]
enum RaftlogCommand {
    /// Print every item of every log file (rewrite queue first), with file and offset.
    Dump(DumpArgs),
    /// Verify every batch (headers, item footers, entries blobs) and every live entry.
    Check(PathArgs),
    /// raft-engine's stress workload: concurrent writers (and readers, purges).
    Stress(Box<StressArgs>),
}

#[derive(Args)]
struct PathArgs {
    /// The log directory.
    #[arg(long)]
    path: PathBuf,
}

#[derive(Args)]
struct DumpArgs {
    #[arg(long)]
    path: PathBuf,
    /// Only this raft group.
    #[arg(long)]
    region: Option<u64>,
    /// Print keys and values in hex.
    #[arg(long)]
    hex: bool,
}

pub fn run(a: &RaftlogArgs) -> Result<()> {
    match &a.command {
        RaftlogCommand::Dump(d) => dump(d),
        RaftlogCommand::Check(c) => check(&c.path),
        RaftlogCommand::Stress(s) => stress(s),
    }
}

fn show(b: &[u8], hex: bool) -> String {
    if hex {
        b.iter().map(|x| format!("{x:02X}")).collect()
    } else {
        String::from_utf8_lossy(b).into_owned()
    }
}

fn dump(a: &DumpArgs) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let mut r = Engine::dump(&a.path).map_err(|e| e.to_string())?;
    while let Some(x) = r.next_with_location() {
        let (file, offset, item) = x.map_err(|e| e.to_string())?;
        if a.region.is_some_and(|g| g != item.raft_group_id) {
            continue;
        }
        let what = match &item.content {
            LogItemContent::Entries { first_index, ends, .. } => {
                let last = first_index + ends.len() as u64;
                format!("entries [{first_index}, {last})")
            }
            LogItemContent::Command(Command::Clean) => "clean".to_owned(),
            LogItemContent::Command(Command::Compact { index }) => format!("compact to {index}"),
            LogItemContent::Kv { key, value: Some(v), .. } => {
                format!("put {} : {}", show(key, a.hex), show(v, a.hex))
            }
            LogItemContent::Kv { key, .. } => format!("delete {}", show(key, a.hex)),
        };
        if let Err(e) = writeln!(out, "{file} @{offset} region {}: {what}", item.raft_group_id) {
            // A closed pipe (`| head`) ends the dump quietly.
            return if e.kind() == std::io::ErrorKind::BrokenPipe { Ok(()) } else { Err(e.to_string()) };
        }
    }
    Ok(())
}

fn check(path: &Path) -> Result<()> {
    let mut names: Vec<FileId> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(FileId::parse_file_name))
        .collect();
    names.sort();
    let fs = shale_raftlog::env::DefaultFileSystem;
    let mut problems = 0;
    let mut batches = 0u64;
    for id in &names {
        let p = id.build_file_path(path);
        let f = shale_base::fs::FileSystem::new_random_access_file(&fs, &p).map_err(|e| e.to_string())?;
        let (_, end) = scan_file(f, *id, 1 << 20, true, |_| {
            batches += 1;
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        match end {
            ScanEnd::Clean | ScanEnd::ZeroTail { .. } => {}
            ScanEnd::Damaged { offset, error } => {
                problems += 1;
                println!("{}: damaged at offset {offset}: {error}", p.display());
            }
            ScanEnd::BadHeader(e) => {
                problems += 1;
                println!("{}: bad file header: {e}", p.display());
            }
        }
    }
    let damaged = Engine::consistency_check(path).map_err(|e| e.to_string())?;
    for (region, index) in &damaged {
        problems += 1;
        println!("region {region}: entries damaged from index {index}");
    }
    if problems > 0 {
        return Err(format!("{problems} problem(s) in {}", path.display()));
    }
    println!("OK: {} files, {batches} batches", names.len());
    Ok(())
}

#[derive(Args, Clone)]
struct StressArgs {
    /// Directory of the log files.
    #[arg(long, default_value = "/tmp/shale-raftlog-stress")]
    path: String,
    /// Seconds to run.
    #[arg(long, default_value_t = 60)]
    time: u64,
    #[arg(long, default_value_t = 5)]
    regions: u64,
    /// Seconds between purges (0: no purge).
    #[arg(long = "purge-interval", default_value_t = 10)]
    purge_interval: u64,
    /// Keep this many entries per region, compacting the rest (0: never compact).
    #[arg(long = "compact-count", default_value_t = 0)]
    compact_count: u64,
    /// Purge asks to compact a region: keep this fraction of its entries.
    #[arg(long = "force-compact-factor", default_value_t = 0.5)]
    force_compact_factor: f64,
    #[arg(long = "write-threads", default_value_t = 1)]
    write_threads: u64,
    /// Writes per second per thread (0: as fast as possible).
    #[arg(long = "write-ops-per-thread", default_value_t = 0)]
    write_ops_per_thread: u64,
    #[arg(long = "read-threads", default_value_t = 0)]
    read_threads: u64,
    #[arg(long = "read-ops-per-thread", default_value_t = 0)]
    read_ops_per_thread: u64,
    /// Bytes per entry.
    #[arg(long = "entry-size", default_value_t = 1024)]
    entry_size: usize,
    /// Entries per region per write.
    #[arg(long = "write-entry-count", default_value_t = 10)]
    write_entry_count: u64,
    /// Regions per write.
    #[arg(long = "write-region-count", default_value_t = 5)]
    write_region_count: u64,
    #[arg(long = "write-without-sync")]
    write_without_sync: bool,
    #[arg(long = "reuse-data")]
    reuse_data: bool,
    #[arg(long = "target-file-size", default_value = "128MB")]
    target_file_size: String,
    #[arg(long = "purge-threshold", default_value = "10GB")]
    purge_threshold: String,
    #[arg(long = "purge-rewrite-threshold", default_value = "1GB")]
    purge_rewrite_threshold: String,
    #[arg(long = "purge-rewrite-garbage-ratio", default_value_t = 0.6)]
    purge_rewrite_garbage_ratio: f64,
    #[arg(long = "compression-threshold", default_value = "8KB")]
    compression_threshold: String,
    #[arg(long = "format-version", default_value_t = 1)]
    format_version: u64,
    #[arg(long = "enable-log-recycle")]
    enable_log_recycle: bool,
}

fn size(s: &str) -> Result<ReadableSize> {
    s.parse::<ReadableSize>()
}

/// Latencies of one thread, in microseconds.
struct ThreadSummary {
    lat: Vec<u64>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl ThreadSummary {
    fn new() -> ThreadSummary {
        ThreadSummary { lat: Vec::new(), first: None, last: None }
    }

    fn record(&mut self, start: Instant, end: Instant) {
        self.lat.push(end.saturating_duration_since(start).as_micros() as u64);
        self.first.get_or_insert(start);
        self.last = Some(end);
    }

    fn qps(&self) -> f64 {
        match (self.first, self.last) {
            (Some(f), Some(l)) if l > f && self.lat.len() > 1 => {
                (self.lat.len() as f64 - 1.0) / l.duration_since(f).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

fn print_summary(name: &str, threads: &[ThreadSummary]) {
    if threads.is_empty() {
        return;
    }
    let qps: Vec<f64> = threads.iter().map(|t| t.qps()).collect();
    let mut all: Vec<u64> = threads.iter().flat_map(|t| t.lat.iter().copied()).collect();
    if all.is_empty() {
        return;
    }
    all.sort_unstable();
    let q = |p: f64| all[((all.len() as f64 * p).ceil() as usize).clamp(1, all.len()) - 1];
    let avg = all.iter().sum::<u64>() as f64 / all.len() as f64;
    println!("[{name}]");
    println!("Throughput(QPS) = {:.02}", qps.iter().sum::<f64>());
    println!(
        "Latency(μs) min = {}, avg = {:.02}, p50 = {}, p90 = {}, p95 = {}, p99 = {}, p99.9 = {}, max = {}",
        all[0],
        avg,
        q(0.5),
        q(0.9),
        q(0.95),
        q(0.99),
        q(0.999),
        all[all.len() - 1]
    );
    let fairness = if qps.len() > 2 {
        let mut s = qps.clone();
        s.sort_by(|a, b| a.total_cmp(b));
        let median = s[s.len() / 2];
        let mean = qps.iter().sum::<f64>() / qps.len() as f64;
        let var = qps.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (qps.len() as f64 - 1.0);
        var.sqrt() / median
    } else {
        let (f, l) = (qps[0], qps[qps.len() - 1]);
        if f + l > 0.0 {
            (f - l).abs() / (f + l)
        } else {
            0.0
        }
    };
    println!("Fairness = {:.01}%", 100.0 - fairness * 100.0);
}

/// A tiny xorshift generator (no dependency): entry bytes and region picks.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn wait_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

fn stress(a: &StressArgs) -> Result<()> {
    if a.regions == 0 || a.write_threads == 0 && a.read_threads == 0 {
        return Err("--regions and at least one of --write-threads/--read-threads must be positive".into());
    }
    if a.write_threads > a.regions || a.read_threads > a.regions {
        return Err("more threads than regions".into());
    }
    let cfg = Config {
        dir: a.path.clone(),
        target_file_size: size(&a.target_file_size)?,
        purge_threshold: size(&a.purge_threshold)?,
        purge_rewrite_threshold: Some(size(&a.purge_rewrite_threshold)?),
        purge_rewrite_garbage_ratio: a.purge_rewrite_garbage_ratio,
        batch_compression_threshold: size(&a.compression_threshold)?,
        enable_log_recycle: a.enable_log_recycle,
        format_version: Version::from_u64(a.format_version)
            .ok_or_else(|| format!("bad --format-version {}", a.format_version))?,
        ..Config::default()
    };
    if !a.reuse_data {
        let _ = std::fs::remove_dir_all(&cfg.dir);
    }
    let engine = Arc::new(Engine::open(cfg).map_err(|e| e.to_string())?);
    let shutdown = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for index in 0..a.write_threads {
        let (engine, shutdown, written, a) = (engine.clone(), shutdown.clone(), written.clone(), a.clone());
        writers.push(std::thread::spawn(move || {
            let mut s = ThreadSummary::new();
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (index + 1));
            let entry: Vec<u8> = (0..a.entry_size).map(|_| rng.next() as u8).collect();
            let entries: Vec<&[u8]> = (0..a.write_entry_count).map(|_| entry.as_slice()).collect();
            let interval = (a.write_ops_per_thread > 0)
                .then(|| Duration::from_secs_f64(1.0 / a.write_ops_per_thread as f64));
            let mut b = LogBatch::default();
            while !shutdown.load(Ordering::Relaxed) {
                let mut rid = (rng.next() % (a.regions / a.write_threads)) * a.write_threads + index;
                for _ in 0..a.write_region_count {
                    let first = engine.first_index(rid).unwrap_or(0);
                    let last = engine.last_index(rid).unwrap_or(0);
                    if let Err(e) = b.add_raw_entries(rid, last + 1, &entries) {
                        println!("write error {e:?} in thread {index}");
                    }
                    if a.compact_count > 0 && last - first + 1 > a.compact_count {
                        b.add_command(rid, Command::Compact { index: last - a.compact_count + 1 });
                    }
                    rid += a.write_threads;
                }
                if let (Some(i), Some(l)) = (interval, s.last) {
                    wait_until(l + i);
                }
                let start = Instant::now();
                match engine.write(&mut b, !a.write_without_sync) {
                    Ok(n) => {
                        written.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) => println!("write error {e:?} in thread {index}"),
                }
                s.record(start, Instant::now());
            }
            s
        }));
    }
    let mut readers = Vec::new();
    for index in 0..a.read_threads {
        let (engine, shutdown, a) = (engine.clone(), shutdown.clone(), a.clone());
        readers.push(std::thread::spawn(move || {
            let mut s = ThreadSummary::new();
            let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (index + 1));
            let interval = (a.read_ops_per_thread > 0)
                .then(|| Duration::from_secs_f64(1.0 / a.read_ops_per_thread as f64));
            let mut out = Vec::new();
            while !shutdown.load(Ordering::Relaxed) {
                let rid = (rng.next() % (a.regions / a.read_threads)) * a.read_threads + index;
                if let (Some(i), Some(l)) = (interval, s.last) {
                    wait_until(l + i);
                }
                let start = Instant::now();
                if let (Some(f), Some(l)) = (engine.first_index(rid), engine.last_index(rid)) {
                    out.clear();
                    let from = f + rng.next() % (l - f + 1);
                    if let Err(e) =
                        engine.fetch_raw_entries_to(rid, from, (from + 10).min(l + 1), None, &mut out)
                    {
                        println!("read error {e:?} in thread {index}");
                    }
                }
                s.record(start, Instant::now());
            }
            s
        }));
    }
    let mut misc = Vec::new();
    if a.purge_interval > 0 {
        let (engine, shutdown, a) = (engine.clone(), shutdown.clone(), a.clone());
        misc.push(std::thread::spawn(move || {
            let mut next = Instant::now() + Duration::from_secs(a.purge_interval);
            while !shutdown.load(Ordering::Relaxed) {
                if Instant::now() < next {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                next += Duration::from_secs(a.purge_interval);
                match engine.purge_expired_files() {
                    Ok(regions) => {
                        for r in regions {
                            if let (Some(f), Some(l)) = (engine.first_index(r), engine.last_index(r)) {
                                let keep = ((l - f + 1) as f64 * a.force_compact_factor) as u64;
                                engine.compact_to(r, l + 1 - keep);
                            }
                        }
                    }
                    Err(e) => println!("purge error {e:?} in thread 0"),
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_secs(a.time));
    shutdown.store(true, Ordering::Relaxed);
    let w: Vec<ThreadSummary> = writers.into_iter().filter_map(|t| t.join().ok()).collect();
    let r: Vec<ThreadSummary> = readers.into_iter().filter_map(|t| t.join().ok()).collect();
    for t in misc {
        let _ = t.join();
    }
    print_summary("write", &w);
    print_summary("read", &r);
    let secs = a.time.max(1);
    println!("Write Bandwidth = {}/s", ReadableSize(written.load(Ordering::Relaxed) / secs));
    let (entries, bytes) = engine.index_memory();
    println!("Index memory = {bytes} bytes for {entries} live entries");
    Ok(())
}
