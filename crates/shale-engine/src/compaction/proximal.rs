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
pub fn evaluate_level(
    v: &Version,
    opts: &CfConfig,
    start_level: usize,
    output_level: usize,
) -> Option<usize> {
    if !matches!(opts.style, CompactionStyle::Level | CompactionStyle::Universal) {
        return None;
    }
    let num_levels = opts.num_levels;
    if num_levels < 3 || output_level + 1 != num_levels {
        return None;
    }
    let proximal = output_level - 1;
    if start_level + 1 == num_levels
        && (opts.style != CompactionStyle::Universal || !v.files(proximal).is_empty())
    {
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
        plan.all_inputs()
            .filter(|(l, _)| *l == plan.output_level)
            .map(|(_, f)| f.largest_seqno)
            .max()
            .unwrap_or(0)
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::key::bytewise_internal_comparator;

    fn file(number: u64, lo: &str, hi: &str, seq: u64) -> Arc<FileMetaData> {
        super::super::test_files::file(number, lo, hi, seq, 100)
    }

    fn opts(style: CompactionStyle, preclude: u64) -> CfConfig {
        CfConfig { style, num_levels: 7, preclude_last_level_data_seconds: preclude, ..CfConfig::default() }
    }

    #[test]
    fn only_compactions_into_the_last_level_place_per_key() {
        let v = Version::new(bytewise_internal_comparator(), 7, vec![(5, file(1, "a", "c", 5))]);
        let level = opts(CompactionStyle::Level, 100);
        assert_eq!(evaluate_level(&v, &level, 5, 6), Some(5));
        assert_eq!(evaluate_level(&v, &level, 0, 6), Some(5));
        assert_eq!(evaluate_level(&v, &level, 4, 5), None);
        // From the last level: never under leveled; under universal only with the proximal
        // level empty.
        assert_eq!(evaluate_level(&v, &level, 6, 6), None);
        let uni = opts(CompactionStyle::Universal, 100);
        assert_eq!(evaluate_level(&v, &uni, 6, 6), None);
        let empty = Version::new(bytewise_internal_comparator(), 7, vec![]);
        assert_eq!(evaluate_level(&empty, &uni, 6, 6), Some(5));
        assert_eq!(evaluate_level(&v, &opts(CompactionStyle::Fifo, 100), 0, 6), None);
        assert_eq!(evaluate_level(&v, &opts(CompactionStyle::Level, 0), 5, 6), None);
        let two = CfConfig { num_levels: 2, ..level };
        assert_eq!(evaluate_level(&v, &two, 0, 1), None);
    }

    #[test]
    fn the_proximal_range_and_what_stays_in_the_last_level() {
        let l5 = file(1, "c", "f", 50);
        let l6 = file(2, "a", "z", 30);
        let other5 = file(3, "x", "y", 40);
        let v = Version::new(
            bytewise_internal_comparator(),
            7,
            vec![(5, l5.clone()), (5, other5), (6, l6.clone())],
        );
        let plan = CompactionPlan {
            level: 5,
            output_level: 6,
            inputs: vec![l5],
            next_inputs: vec![l6],
            ..Default::default()
        };
        // Leveled: the range of the level-5 inputs; the last level's entries stay (through
        // its largest sequence number, 30).
        let p = proximal_output(&v, &opts(CompactionStyle::Level, 100), &plan).unwrap();
        assert_eq!(p.range, Some((b"c".to_vec(), b"f".to_vec())));
        assert!(!p.full_range);
        assert_eq!(p.keep_in_last_level_through_seqno, 30);
        assert_eq!(proximal_after_seqno(&p, 20, u64::MAX), 30);
        assert_eq!(proximal_after_seqno(&p, 45, u64::MAX), 45);
        // A snapshot older than the cut-off lowers it.
        assert_eq!(proximal_after_seqno(&p, 45, 35), 35);
        assert!(overlaps(&v, &p, b"e", b"g"));
        assert!(!overlaps(&v, &p, b"g", b"h"));
        // Universal, another level-5 file left out: the same; with every level-5 file in,
        // the whole range and nothing kept down.
        let p = proximal_output(&v, &opts(CompactionStyle::Universal, 100), &plan).unwrap();
        assert!(!p.full_range);
        let v2 = Version::new(bytewise_internal_comparator(), 7, vec![(5, plan.inputs[0].clone())]);
        let p = proximal_output(&v2, &opts(CompactionStyle::Universal, 100), &plan).unwrap();
        assert!(p.full_range);
        assert_eq!(p.range, Some((b"a".to_vec(), b"z".to_vec())));
        assert_eq!(p.keep_in_last_level_through_seqno, 0);
        // Only last-level inputs outside the full range: nothing may move up.
        let last_only = CompactionPlan {
            level: 6,
            output_level: 6,
            inputs: vec![file(9, "a", "b", 1)],
            ..Default::default()
        };
        let empty5 = Version::new(bytewise_internal_comparator(), 7, vec![(4, file(8, "q", "r", 2))]);
        let p = proximal_output(&empty5, &opts(CompactionStyle::Level, 100), &last_only);
        assert_eq!(p, None);
    }
}
