//! raft-engine's `env` module names, mapped onto Shale's file-system layer: any
//! `shale_base::fs::FileSystem` (the POSIX one, the in-memory one, the fault-injecting
//! one) serves as an engine's file system.

pub use shale_base::fs::{FaultInjectionFs, MemFileSystem, PosixFileSystem};

/// A file system the engine can run on: every Shale `FileSystem`.
pub trait FileSystem: shale_base::fs::FileSystem + 'static {}

impl<T: shale_base::fs::FileSystem + 'static> FileSystem for T {}

/// The real file system (raft-engine's `DefaultFileSystem`).
pub use shale_base::fs::PosixFileSystem as DefaultFileSystem;
