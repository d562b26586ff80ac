//! rust-rocksdb's `Env`: the default (POSIX) environment or an in-memory one, and the
//! background thread-pool sizes. Each Shale database runs its own pools (`db/scheduler.rs`):
//! as RocksDB raises an Env's pools to what `max_background_jobs` needs, a database given an
//! Env runs `max(pool size, job limit)` threads per pool (LOW: compactions, HIGH: flushes),
//! and the job limits decide how many run at once. The `lower_*_priority` calls act on those
//! threads as RocksDB's do on its pools' threads (Linux): CPU priority nice 19
//! (`setpriority`), I/O priority class idle (`ioprio_set`); elsewhere they are refused at
//! open. The BOTTOM pool takes the compactions into the last level
//! (`set_bottom_priority_background_threads`). The in-memory env maps to
//! Shale's memory file system.
//!
//! Also what RocksDB's `Env` and `SystemClock` give the database: random bytes, session ids
//! (`GenerateDbSessionId`), the host name, and the clock of the stats history
//! (`SystemClock`, `MockSystemClock`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::fs::FileSystemRef;

/// An environment, as rust-rocksdb's `Env`.
#[derive(Clone)]
pub struct Env {
    pub(crate) fs: Option<FileSystemRef>,
    pub(crate) unsupported: Vec<&'static str>,
    /// Thread-pool sizes set on the Env (LOW, HIGH); None: not set.
    pub(crate) low_threads: Option<usize>,
    pub(crate) high_threads: Option<usize>,
    /// The BOTTOM pool's size (None: not set, empty).
    pub(crate) bottom_threads: Option<usize>,
    /// `lower_*_cpu_priority` / `lower_*_io_priority` asked for: (LOW pool, HIGH pool).
    pub(crate) lower_cpu: (bool, bool),
    pub(crate) lower_io: (bool, bool),
}

impl Env {
    /// The default environment (the process's file system).
    pub fn new() -> Result<Self> {
        Ok(Env { fs: None, ..Env::plain() })
    }

    /// An environment whose files live in memory.
    pub fn mem_env() -> Result<Self> {
        Ok(Env { fs: Some(Arc::new(crate::fs::MemFileSystem::new())), ..Env::plain() })
    }

    fn plain() -> Env {
        Env {
            fs: None,
            unsupported: Vec::new(),
            low_threads: None,
            high_threads: None,
            bottom_threads: None,
            lower_cpu: (false, false),
            lower_io: (false, false),
        }
    }

    /// An environment over the given file system (a Shale extension, as
    /// `Options::set_file_system`; backups use it for their directory).
    pub fn with_file_system(fs: FileSystemRef) -> Self {
        Env { fs: Some(fs), ..Env::plain() }
    }

    /// The LOW pool (compactions), as RocksDB's `SetBackgroundThreads`.
    pub fn set_background_threads(&mut self, num_threads: i32) {
        self.low_threads = Some(num_threads.max(0) as usize);
    }

    /// The HIGH pool (flushes).
    pub fn set_high_priority_background_threads(&mut self, n: i32) {
        self.high_threads = Some(n.max(0) as usize);
    }

    pub fn set_low_priority_background_threads(&mut self, n: i32) {
        self.set_background_threads(n);
    }

    /// The BOTTOM pool (empty by default, as RocksDB's): with threads in it, an automatic
    /// compaction that rewrites tables into the last level a compaction may write (the
    /// family's last level) is handed by the LOW thread that picked it to a BOTTOM thread
    /// (`shale:bottom<n>`), as RocksDB's `BackgroundCompaction` forwards it, so such long
    /// compactions do not hold the LOW threads that keep level 0 from stalling writes. Trivial
    /// moves and FIFO deletions stay in the LOW pool; manual compactions run in the caller's
    /// thread, as every manual compaction in Shale does.
    pub fn set_bottom_priority_background_threads(&mut self, n: i32) {
        self.bottom_threads = Some(n.max(0) as usize);
    }

    /// Background threads belong to each database and end when it closes.
    pub fn join_all_threads(&mut self) {}

    /// The LOW pool's (compaction) threads get the idle I/O class.
    pub fn lower_thread_pool_io_priority(&mut self) {
        self.lower_io.0 = true;
        self.refuse_off_linux("Env lower_thread_pool_io_priority");
    }

    /// The HIGH pool's (flush) threads get the idle I/O class.
    pub fn lower_high_priority_thread_pool_io_priority(&mut self) {
        self.lower_io.1 = true;
        self.refuse_off_linux("Env lower_high_priority_thread_pool_io_priority");
    }

    /// The LOW pool's threads run at nice 19 (RocksDB's `CpuPriority::kLow`).
    pub fn lower_thread_pool_cpu_priority(&mut self) {
        self.lower_cpu.0 = true;
        self.refuse_off_linux("Env lower_thread_pool_cpu_priority");
    }

    /// The HIGH pool's threads run at nice 19.
    pub fn lower_high_priority_thread_pool_cpu_priority(&mut self) {
        self.lower_cpu.1 = true;
        self.refuse_off_linux("Env lower_high_priority_thread_pool_cpu_priority");
    }

    /// Thread priorities are set with Linux system calls; other systems refuse them at open.
    fn refuse_off_linux(&mut self, name: &'static str) {
        self.unsupported_if(!cfg!(target_os = "linux"), name);
    }

    /// The last value set wins: a refusal recorded earlier for `name` is forgotten first.
    fn unsupported_if(&mut self, cond: bool, name: &'static str) {
        self.unsupported.retain(|n| *n != name);
        if cond {
            self.unsupported.push(name);
        }
    }
}

/// A new session id, as RocksDB's `GenerateDbSessionId`: 128 random bits written as 20
/// upper-case base-36 digits (`EncodeSessionId`: 8 digits, then 12).
pub(crate) fn new_session_id() -> String {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    let hi = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    let lo = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
    const DIGITS: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let put = |out: &mut Vec<u8>, n: usize, mut v: u64| {
        let start = out.len();
        out.resize(start + n, b'0');
        for i in (0..n).rev() {
            out[start + i] = DIGITS[(v % 36) as usize];
            v /= 36;
        }
    };
    let mut out = Vec::with_capacity(20);
    put(&mut out, 8, ((hi << 2) | (lo >> 62)) % 36u64.pow(8));
    put(&mut out, 12, lo & (u64::MAX >> 2));
    String::from_utf8_lossy(&out).into_owned()
}

/// A clock in microseconds since the epoch (RocksDB's `SystemClock::NowMicros`), for the
/// stats history (`Options::set_stats_history_clock`). A Shale extension; the engine's trait.
pub use shale_engine::config::SystemClock;

/// A clock that moves only when told (RocksDB's `MockSystemClock`), for tests of the
/// periodic stats snapshots. A Shale extension.
pub struct MockSystemClock {
    micros: AtomicU64,
}

impl MockSystemClock {
    /// A clock standing at `seconds` since the epoch.
    pub fn new(seconds: u64) -> Arc<MockSystemClock> {
        Arc::new(MockSystemClock { micros: AtomicU64::new(seconds.saturating_mul(1_000_000)) })
    }

    /// Moves the clock `seconds` forward (RocksDB's `MockSleepForSeconds`).
    pub fn sleep_for_seconds(&self, seconds: u64) {
        self.micros.fetch_add(seconds.saturating_mul(1_000_000), Ordering::AcqRel);
    }

    /// The clock's time in seconds.
    pub fn now_seconds(&self) -> u64 {
        self.micros.load(Ordering::Acquire) / 1_000_000
    }
}

impl SystemClock for MockSystemClock {
    fn now_micros(&self) -> u64 {
        self.micros.load(Ordering::Acquire)
    }
}

// Random bytes, and the machine's host name (RocksDB's default `db_host_id`, "__hostname__").
pub(crate) use shale_base::sys::{fill_random, host_name};
