//! Side-by-side figures, shale-raftlog vs raft-engine 0.4.2, same data, same process:
//! recovery time with the page cache dropped for the log files (posix_fadvise DONTNEED,
//! as raft-engine's bench_recovery), heap held after recovery (a counting allocator:
//! the index, per million entries), and sync-write throughput/latency of the stress
//! workload (1 KiB entries, several regions, concurrent writers).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Errors of the benchmark driver: the engines' errors and I/O, as text.
pub type Res<T> = Result<T, String>;

fn err<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn dir_str(dir: &Path) -> Res<String> {
    dir.to_str().map(str::to_owned).ok_or_else(|| format!("{} is not UTF-8", dir.display()))
}

fn bench_tmp() -> Res<tempfile::TempDir> {
    let parent = std::env::var("BENCH_DIR").unwrap_or_else(|_| "/tmp".into());
    tempfile::tempdir_in(&parent).map_err(err("temporary directory"))
}

pub struct Counting;

static HEAP: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        HEAP.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HEAP.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: `p` came from `alloc` with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        HEAP.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

fn heap() -> isize {
    HEAP.load(Ordering::Relaxed)
}

fn drop_cache(dir: &Path) -> Res<()> {
    for e in std::fs::read_dir(dir).map_err(err("listing the log directory"))?.filter_map(|e| e.ok()) {
        if let Ok(f) = std::fs::File::open(e.path()) {
            use std::os::unix::io::AsRawFd;
            // SAFETY: a valid open descriptor; fadvise only drops cached pages.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
    Ok(())
}

/// The 1-minute load average, to print beside the figures (the machine is shared).
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn payload(i: u64) -> Vec<u8> {
    let mut s = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..1024)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u8
        })
        .collect()
}

/// Writes `mb` MiB of 1 KiB entries over `regions` regions, `k` entries a batch (one
/// region per batch).
fn fill_shale(dir: &Path, mb: u64, regions: u64, k: u64) -> Res<u64> {
    let e = shale_raftlog::Engine::open(shale_raftlog::Config {
        dir: dir_str(dir)?,
        recovery_index_files: true,
        ..Default::default()
    })
    .map_err(err("shale-raftlog open"))?;
    let n = mb * 1024 / k;
    let mut b = shale_raftlog::LogBatch::default();
    for i in 0..n {
        let r = 1 + i % regions;
        let first = 1 + (i / regions) * k;
        let es: Vec<_> = (0..k).map(|j| crate::entry(first + j, &payload(i * k + j))).collect();
        b.add_entries::<crate::ShExt>(r, &es).map_err(err("shale-raftlog add_entries"))?;
        e.write(&mut b, false).map_err(err("shale-raftlog write"))?;
    }
    e.sync().map_err(err("shale-raftlog sync"))?;
    Ok(n * k)
}

fn fill_re(dir: &Path, mb: u64, regions: u64, k: u64) -> Res<u64> {
    let e = raft_engine::Engine::open(raft_engine::Config { dir: dir_str(dir)?, ..Default::default() })
        .map_err(err("raft-engine open"))?;
    let n = mb * 1024 / k;
    let mut b = raft_engine::LogBatch::default();
    for i in 0..n {
        let r = 1 + i % regions;
        let first = 1 + (i / regions) * k;
        let es: Vec<_> = (0..k).map(|j| crate::entry(first + j, &payload(i * k + j))).collect();
        b.add_entries::<crate::ReExt>(r, &es).map_err(err("raft-engine add_entries"))?;
        e.write(&mut b, false).map_err(err("raft-engine write"))?;
    }
    e.sync().map_err(err("raft-engine sync"))?;
    Ok(n * k)
}

fn open_shale(dir: &Path, index: bool) -> Res<shale_raftlog::Engine> {
    let mut cfg =
        shale_raftlog::Config { dir: dir_str(dir)?, recovery_index_files: index, ..Default::default() };
    // SHALE_PREFILL_AHEAD=bytes (0: off) overrides the default zero prefill, for A/B runs.
    if let Ok(v) = std::env::var("SHALE_PREFILL_AHEAD") {
        let n = v.parse::<u64>().map_err(|e| format!("SHALE_PREFILL_AHEAD={v:?}: {e}"))?;
        cfg.prefill_zeros_ahead = shale_raftlog::ReadableSize(n);
        // Exclusive with the next file zeroed ahead (the default; SHALE_PREFILL_NEXT=1
        // with it is refused at open).
        cfg.prefill_next_file = false;
    }
    // SHALE_PREFILL_RECYCLE=bytes turns on `prefill_for_recycle` with that `prefill_limit`
    // (reserved files prepared at open, taken in place at rotation).
    if let Ok(v) = std::env::var("SHALE_PREFILL_RECYCLE") {
        let n = v.parse::<u64>().map_err(|e| format!("SHALE_PREFILL_RECYCLE={v:?}: {e}"))?;
        cfg.prefill_for_recycle = true;
        cfg.prefill_limit = Some(shale_raftlog::ReadableSize(n));
    }
    // SHALE_PREFILL_NEXT=1 turns on the next file zeroed ahead (`prefill_next_file`, the
    // default), SHALE_PREFILL_NEXT=0 turns it off (the defaults before session 11).
    if let Ok(v) = std::env::var("SHALE_PREFILL_NEXT") {
        cfg.prefill_next_file = v == "1";
    }
    // SHALE_PREFILL_FIRST=bytes sets `prefill_first_file_size` (134217728: every file the
    // target size, open waiting for a whole one, as before session 11).
    if let Ok(v) = std::env::var("SHALE_PREFILL_FIRST") {
        let n = v.parse::<u64>().map_err(|e| format!("SHALE_PREFILL_FIRST={v:?}: {e}"))?;
        cfg.prefill_first_file_size = shale_raftlog::ReadableSize(n);
    }
    shale_raftlog::Engine::open(cfg).map_err(err("shale-raftlog open"))
}

fn open_re(dir: &Path) -> Res<raft_engine::Engine> {
    raft_engine::Engine::open(raft_engine::Config { dir: dir_str(dir)?, ..Default::default() })
        .map_err(err("raft-engine open"))
}

pub fn recovery(mb: u64, regions: u64, reps: usize, k: u64) -> Res<()> {
    let k = k.max(1);
    let tmp = bench_tmp()?;
    let (ds, dr) = (tmp.path().join("shale"), tmp.path().join("raft-engine"));
    let t = Instant::now();
    let entries = fill_shale(&ds, mb, regions, k)?;
    println!(
        "shale-raftlog wrote {mb} MiB, {entries} entries ({k} a batch), {regions} regions in {:.1?}",
        t.elapsed()
    );
    let t = Instant::now();
    fill_re(&dr, mb, regions, k)?;
    println!("raft-engine   wrote {mb} MiB, {entries} entries, {regions} regions in {:.1?}", t.elapsed());
    let (mut ts, mut tr, mut ti) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ms, mut mr) = (0isize, 0isize);
    let mut index_bytes = (0, 0);
    println!("load before the runs: {}", loadavg());
    let check = |who: &str, got: usize| -> Res<()> {
        if got as u64 != regions {
            return Err(format!("{who} recovered {got} regions, wrote {regions}"));
        }
        Ok(())
    };
    for _ in 0..reps {
        // Interleaved: shale with its recovery index files, shale (raft-engine's format
        // alone), raft-engine; the same directory serves both shale runs (with the option
        // off the index files are not read).
        drop_cache(&ds)?;
        let t = Instant::now();
        let e = open_shale(&ds, true)?;
        ti.push(t.elapsed());
        check("shale-raftlog", e.raft_groups().len())?;
        drop(e);
        drop_cache(&ds)?;
        let h = heap();
        let t = Instant::now();
        let e = open_shale(&ds, false)?;
        ts.push(t.elapsed());
        ms = heap() - h;
        index_bytes = e.index_memory();
        check("shale-raftlog", e.raft_groups().len())?;
        drop(e);
        drop_cache(&dr)?;
        let h = heap();
        let t = Instant::now();
        let e = open_re(&dr)?;
        tr.push(t.elapsed());
        mr = heap() - h;
        check("raft-engine", e.raft_groups().len())?;
        drop(e);
        println!(
            "  rep: shale-raftlog with index files {:.2?}, shale-raftlog {:.2?}, raft-engine {:.2?} (load {})",
            ti[ti.len() - 1],
            ts[ts.len() - 1],
            tr[tr.len() - 1],
            loadavg()
        );
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    };
    let (a, b, c) = (med(&mut ts), med(&mut tr), med(&mut ti));
    println!(
        "recovery, page cache dropped, median of {reps}: shale-raftlog {a:.2?} (ratio {:.2}x), with index files {c:.2?} (ratio {:.2}x), raft-engine {b:.2?}",
        b.as_secs_f64() / a.as_secs_f64(),
        b.as_secs_f64() / c.as_secs_f64()
    );
    println!(
        "shale-raftlog entry index: {} entries, {} bytes ({:.1} bytes per entry)",
        index_bytes.0,
        index_bytes.1,
        index_bytes.1 as f64 / index_bytes.0.max(1) as f64
    );
    let per_m = |m: isize| m as f64 / (entries as f64 / 1e6) / 1e6;
    println!(
        "heap held after recovery: shale-raftlog {:.1} MB ({:.1} MB per million entries), raft-engine {:.1} MB ({:.1} MB per million entries), ratio {:.3}",
        ms as f64 / 1e6,
        per_m(ms),
        mr as f64 / 1e6,
        per_m(mr),
        ms as f64 / mr as f64
    );
    Ok(())
}

fn percentile(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    if v.is_empty() {
        return 0;
    }
    v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1]
}

/// One engine under the write workload. raft-engine's `Engine` is held boxed: it is
/// about 300 bytes, shale-raftlog's a pointer.
enum Writer {
    Shale(shale_raftlog::Engine),
    Re(Box<raft_engine::Engine>),
}

impl Writer {
    fn open(which: &str, dir: &Path) -> Res<Writer> {
        match which {
            "shale-raftlog" => Ok(Writer::Shale(open_shale(dir, false)?)),
            "raft-engine" => Ok(Writer::Re(Box::new(open_re(dir)?))),
            w => Err(format!("unknown engine {w:?} (shale-raftlog or raft-engine)")),
        }
    }

    fn write(&self, region: u64, es: &[protobuf::well_known_types::BytesValue]) -> Res<()> {
        match self {
            Writer::Shale(e) => {
                let mut b = shale_raftlog::LogBatch::default();
                b.add_entries::<crate::ShExt>(region, es).map_err(err("shale-raftlog add_entries"))?;
                e.write(&mut b, true).map_err(err("shale-raftlog write")).map(drop)
            }
            Writer::Re(e) => {
                let mut b = raft_engine::LogBatch::default();
                b.add_entries::<crate::ReExt>(region, es).map_err(err("raft-engine add_entries"))?;
                e.write(&mut b, true).map_err(err("raft-engine write")).map(drop)
            }
        }
    }
}

/// Runs `threads` writers, each writing 10 entries of 1 KiB to one of its regions per
/// batch, sync, for `secs` seconds or (when `batches` > 0) until that many batches are
/// written in all; returns every batch's latency (µs) and the time taken.
fn run_writers(e: Writer, secs: u64, batches: u64, threads: u64, regions: u64) -> Res<(Vec<u64>, Duration)> {
    if threads == 0 || regions < threads {
        return Err(format!("need 1 <= threads <= regions (threads {threads}, regions {regions})"));
    }
    let e = Arc::new(e);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let left = Arc::new(AtomicIsize::new(if batches > 0 { batches as isize } else { isize::MAX }));
    let t0 = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (e, stop, left) = (e.clone(), stop.clone(), left.clone());
            std::thread::spawn(move || -> Res<Vec<u64>> {
                let mut lat = Vec::new();
                let mut next = vec![1u64; regions as usize];
                let mut k = 0u64;
                while !stop.load(Ordering::Relaxed) && left.fetch_sub(1, Ordering::Relaxed) > 0 {
                    let r = (k % (regions / threads)) * threads + t;
                    k += 1;
                    let first = next[r as usize];
                    next[r as usize] += 10;
                    let es: Vec<_> = (0..10).map(|j| crate::entry(first + j, &payload(first + j))).collect();
                    let start = Instant::now();
                    e.write(r + 1, &es)?;
                    lat.push(start.elapsed().as_micros() as u64);
                }
                Ok(lat)
            })
        })
        .collect();
    if batches == 0 {
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
    }
    let mut all = Vec::new();
    for h in hs {
        all.extend(h.join().map_err(|_| "a writer thread panicked".to_owned())??);
    }
    Ok((all, t0.elapsed()))
}

fn report(label: &str, mut lat: Vec<u64>, took: Duration) {
    let n = lat.len();
    let secs = took.as_secs_f64();
    println!(
        "{label}: {n} batches in {secs:.2} s, {:.0} batches/s ({:.1} MiB/s of entries), p50 {} us, p99 {} us, p99.9 {} us (load {})",
        n as f64 / secs,
        n as f64 * 10.0 * 1024.0 / secs / 1048576.0,
        percentile(&mut lat, 0.5),
        percentile(&mut lat, 0.99),
        percentile(&mut lat, 0.999),
        loadavg()
    );
}

/// Both engines in turn, two rounds, `secs` seconds each (see `run_writers`).
pub fn write(secs: u64, threads: u64, regions: u64) -> Res<()> {
    let tmp = bench_tmp()?;
    for round in 0..2 {
        for which in ["shale-raftlog", "raft-engine"] {
            let dir = tmp.path().join(format!("{which}-{round}"));
            let (lat, took) = run_writers(Writer::open(which, &dir)?, secs, 0, threads, regions)?;
            report(&format!("write round {round} {which:13}"), lat, took);
        }
    }
    Ok(())
}

/// One engine, a fixed amount of work (`batches` batches) in a fresh directory: for
/// timing whole processes, one engine per process, runs of the two interleaved.
pub fn write_one(which: &str, batches: u64, threads: u64, regions: u64) -> Res<()> {
    let tmp = bench_tmp()?;
    let (lat, took) = run_writers(Writer::open(which, tmp.path())?, 0, batches.max(1), threads, regions)?;
    report(&format!("write {which:13}"), lat, took);
    // SHALE_BENCH_LIST=1: the log files' sizes after the run (the engine closed), to see
    // where the files were sealed.
    if std::env::var("SHALE_BENCH_LIST").is_ok_and(|v| v == "1") {
        let mut v: Vec<_> = std::fs::read_dir(tmp.path())
            .map_err(err("listing the bench directory"))?
            .filter_map(|e| e.ok())
            .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), e.metadata().ok()?.len())))
            .collect();
        v.sort();
        for (name, len) in v {
            println!("  {name} {len}");
        }
    }
    Ok(())
}

/// Opens an existing shale-raftlog directory `reps` times with the page cache dropped for
/// its files (for profiling recovery alone: `perf record -- ... bench-open DIR 5 0|1`).
pub fn open_only(dir: &Path, reps: usize, index: bool) -> Res<()> {
    for _ in 0..reps {
        drop_cache(dir)?;
        let t = Instant::now();
        let e = open_shale(dir, index)?;
        println!("open: {:.2?}, {} regions (load {})", t.elapsed(), e.raft_groups().len(), loadavg());
    }
    Ok(())
}

/// Fills `dir` as `bench-recovery` does (for `bench-open`).
pub fn fill_only(dir: &Path, mb: u64, regions: u64) -> Res<()> {
    let n = fill_shale(dir, mb, regions, 16)?;
    println!("wrote {mb} MiB, {n} entries, {regions} regions into {}", dir.display());
    Ok(())
}
