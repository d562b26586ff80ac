//! shale-raftlog: a Raft log engine with the API and on-disk format of tikv/raft-engine
//! 0.4.2, on Shale's file-system layer.
//!
//! A program written for raft-engine switches by renaming the dependency
//! (`raft-engine = { package = "shale-raftlog", ... }`): `Engine::open(Config)`,
//! `write(&mut LogBatch, sync)`, `get_entry`, `fetch_entries_to`, `compact_to`,
//! `purge_expired_files` and the rest keep their shapes, and a directory written by either
//! engine opens in the other.
//!
//! Layout: `format` (file names and header), `log_batch` (the batch format and
//! `LogBatch`), `pipe` (files of a queue), `memtable` (the per-region index), `recovery`
//! (scanning files, parallel replay), `engine` (writes with group commit, reads, purge),
//! `config`, `tools` (dump, consistency check, fork), `perf`, `env`, `util`. The format is
//! described in docs/raftlog-format.md.

mod config;
mod engine;
pub mod env;
mod errors;
pub mod format;
mod halt;
mod index_file;
pub mod log_batch;
mod memtable;
mod perf;
mod pipe;
mod poison;
mod prefill;
pub mod recovery;
mod tools;
mod util;

pub use config::{Config, RecoveryMode};
pub use engine::{CopyDetails, Engine, FilePipeLog};
pub use errors::{Error, Result};
pub use format::{FileId, LogQueue, Version};
pub use log_batch::{Command, LogBatch, MessageExt};
pub use perf::{get_perf_context, set_perf_context, take_perf_context, PerfContext};
pub use tools::LogItemReader;
pub use util::ReadableSize;
