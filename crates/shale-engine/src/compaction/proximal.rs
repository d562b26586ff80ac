//! Per-key placement (RocksDB's tiered storage, `preclude_last_level_data_seconds`): a
//! compaction into the last level may write some entries to the level above it, the
//! *proximal* level, instead. Pure functions of a Version, the options and a plan, used by
//! the picker's conflict checks (`picker::Busy::conflicts`) and by the database when it runs
//! the plan (`db/compact.rs`); the per-entry split is `job.rs`'s.
//!
//! - RocksDB's `Compaction::EvaluateProximalLevel`: only level and universal styles, only a
//!   compaction whose output is the last level, the proximal level (`num_levels - 2`) must be
//!   above level 0, and a compaction that starts on the last level has one only under
//!   universal with the proximal level empty; and only with the setting above 0.
//! - RocksDB's `PopulateProximalLevelOutputRange`: the user-key range the proximal output may
//!   take is that of the inputs not on the last level (universal: of all inputs, when every
//!   file of the proximal level is an input, the "full range"). Outside the full range the
//!   entries already in the last level stay there: `keep_in_last_level_through_seqno` is the
//!   largest sequence number of the last-level inputs (0 with the full range), and only
//!   entries newer than it (so, from inputs above the last level, whose range that is) may
//!   move up.
//! - The job's threshold (RocksDB's `proximal_after_seqno_`, [`proximal_after_seqno`]): the
//!   larger of the preclude cut-off (made at most the earliest snapshot, so data snapshots see
//!   stays up too) and `keep_in_last_level_through_seqno`; an entry whose sequence number
//!   (after zeroing) is above it goes to the proximal level.

use std::sync::Arc;

use super::picker::CompactionPlan;
use crate::config::{CfConfig, CompactionStyle};
use crate::version::edit::FileMetaData;
use crate::version::Version;

/// What a compaction with per-key placement may write to its proximal level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProximalOutput {
    /// The proximal level (`num_levels - 2`).
    pub level: usize,
    /// The user-key range (inclusive) the proximal output may take; None when no input lies
    /// outside the excluded level (RocksDB's FIXME case: then nothing moves up).
    pub range: Option<(Vec<u8>, Vec<u8>)>,
    /// Every file of the proximal level is an input (universal only).
    pub full_range: bool,
    /// RocksDB's `keep_in_last_level_through_seqno_`.
    pub keep_in_last_level_through_seqno: u64,
}

/// RocksDB's `Compaction::EvaluateProximalLevel` for a compaction from `start_level` into
/// `output_level`.
pub fn evaluate_level(v: &Version, opts: &CfConfig, start_level: usize, output_level: usize) -> Option<usize> {
    if !matches!(opts.style, CompactionStyle::Level | CompactionStyle::Universal) {
        return None;
    }
    let num_levels = opts.num_levels;
    if num_levels < 3 || output_level + 1 != num_levels {
        return None;
    }
    let proximal = output_level - 1;
    if start_level + 1 == num_levels && (opts.style != CompactionStyle::Universal || !v.files(proximal).is_empty()) {
        return None;
    }
    (opts.preclude_last_level_data_seconds > 0).then_some(proximal)
}

/// The proximal output of `plan` (None: the compaction writes one level only). FIFO's
/// deletions and trivial moves have none (RocksDB never moves a per-key placement
/// compaction trivially: see `db/compact.rs`).
pub fn proximal_output(v: &Version, opts: &CfConfig, plan: &CompactionPlan) -> Option<ProximalOutput> {
    if plan.deletion_only {
        return None;
    }
    let level = evaluate_level(v, opts, plan.level, plan.output_level)?;
    let last = opts.num_levels - 1;
    let mut exclude = Some(last);
    let mut full_range = false;
    if opts.style == CompactionStyle::Universal {
        let inputs: std::collections::HashSet<u64> =
            plan.all_inputs().filter(|(l, _)| *l == level).map(|(_, f)| f.number).collect();
        if v.files(level).iter().all(|f| inputs.contains(&f.number)) {
            exclude = None;
            full_range = true;
        }
    }
    let files: Vec<Arc<FileMetaData>> =
        plan.all_inputs().filter(|(l, _)| Some(*l) != exclude).map(|(_, f)| f.clone()).collect();
    let range = (!files.is_empty()).then(|| super::picker::key_range(v, &files));
    let keep_in_last_level_through_seqno = if full_range {
        0
    } else {
        plan.all_inputs().filter(|(l, _)| *l == plan.output_level).map(|(_, f)| f.largest_seqno).max().unwrap_or(0)
    };
    Some(ProximalOutput { level, range, full_range, keep_in_last_level_through_seqno })
}

/// RocksDB's `proximal_after_seqno_` (`CompactionJob::PrepareTimes`): entries with a sequence
/// number above it go to the proximal level. `preclude_min_seqno`: the mapping's cut-off
/// (MAX: the setting is 0); `earliest_snapshot`: the oldest live snapshot (MAX: none).
pub fn proximal_after_seqno(p: &ProximalOutput, preclude_min_seqno: u64, earliest_snapshot: u64) -> u64 {
    if p.range.is_none() {
        // Nothing may move up.
        return u64::MAX;
    }
    let mut preclude = preclude_min_seqno;
    if preclude < u64::MAX && earliest_snapshot < preclude {
        preclude = earliest_snapshot;
    }
    preclude.max(p.keep_in_last_level_through_seqno)
}

/// RocksDB's `Compaction::OverlapProximalLevelOutputRange`: whether `[smallest, largest]`
/// (user keys) meets `p`'s range.
pub fn overlaps(v: &Version, p: &ProximalOutput, smallest: &[u8], largest: &[u8]) -> bool {
    let Some((lo, hi)) = &p.range else { return false };
    let icmp = v.icmp();
    icmp.compare_user_without_ts(smallest, hi).is_le() && icmp.compare_user_without_ts(largest, lo).is_ge()
}

/// The user-key range of the files of `plan` not on `level` (None: all are on it), as
/// RocksDB's `GetRange(inputs, .., level)` for the leveled conflict check.
pub fn range_excluding(v: &Version, plan: &CompactionPlan, level: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let files: Vec<Arc<FileMetaData>> =
        plan.all_inputs().filter(|(l, _)| *l != level).map(|(_, f)| f.clone()).collect();
    (!files.is_empty()).then(|| super::picker::key_range(v, &files))
}
