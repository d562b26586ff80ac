//! Leveled compaction: `picker` decides what to compact (pure), `job` does it.

pub mod job;
pub mod picker;
