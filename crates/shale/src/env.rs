//! rust-rocksdb's `Env`: the default (POSIX) environment or an in-memory one, and the
//! background thread-pool sizes. Shale runs one flush and one compaction thread per
//! database (issue 9's scheduler will size pools), so pool sizes other than those are
//! recorded and `open` refuses them; the in-memory env maps to Shale's memory file system.

use std::sync::Arc;

use crate::error::Result;
use crate::fs::FileSystemRef;

/// An environment, as rust-rocksdb's `Env`.
#[derive(Clone)]
pub struct Env {
    pub(crate) fs: Option<FileSystemRef>,
    pub(crate) unsupported: Vec<&'static str>,
}

impl Env {
    /// The default environment (the process's file system).
    pub fn new() -> Result<Self> {
        Ok(Env { fs: None, unsupported: Vec::new() })
    }

    /// An environment whose files live in memory.
    pub fn mem_env() -> Result<Self> {
        Ok(Env { fs: Some(Arc::new(crate::fs::MemFileSystem::new())), unsupported: Vec::new() })
    }

    pub fn set_background_threads(&mut self, num_threads: i32) {
        self.unsupported_if(num_threads != 1, "Env background threads");
    }

    pub fn set_high_priority_background_threads(&mut self, n: i32) {
        self.unsupported_if(n != 1, "Env high-priority background threads");
    }

    pub fn set_low_priority_background_threads(&mut self, n: i32) {
        self.unsupported_if(n != 1, "Env low-priority background threads");
    }

    /// The bottom-priority pool is empty in RocksDB by default, and in Shale always.
    pub fn set_bottom_priority_background_threads(&mut self, n: i32) {
        self.unsupported_if(n != 0, "Env bottom-priority background threads");
    }

    /// Background threads belong to each database and end when it closes.
    pub fn join_all_threads(&mut self) {}

    pub fn lower_thread_pool_io_priority(&mut self) {
        self.unsupported.push("Env lower_thread_pool_io_priority");
    }

    pub fn lower_high_priority_thread_pool_io_priority(&mut self) {
        self.unsupported.push("Env lower_high_priority_thread_pool_io_priority");
    }

    pub fn lower_thread_pool_cpu_priority(&mut self) {
        self.unsupported.push("Env lower_thread_pool_cpu_priority");
    }

    pub fn lower_high_priority_thread_pool_cpu_priority(&mut self) {
        self.unsupported.push("Env lower_high_priority_thread_pool_cpu_priority");
    }

    fn unsupported_if(&mut self, cond: bool, name: &'static str) {
        if cond {
            self.unsupported.push(name);
        }
    }
}
