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
