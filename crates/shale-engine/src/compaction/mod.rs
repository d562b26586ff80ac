//! Compaction: the pickers decide what to compact (pure functions of a Version and the
//! options): `picker` (leveled, and the shared plan type), `universal`, `fifo`; `job` does it.

pub mod fifo;
pub mod filter;
pub mod job;
pub mod offpeak;
pub mod partitioner;
pub mod picker;
#[cfg(test)]
mod picker_bottommost_tests;
pub mod picker_ttl;
pub mod proximal;
pub mod service;
#[cfg(test)]
mod test_files;
pub mod trigger;
pub mod universal;
