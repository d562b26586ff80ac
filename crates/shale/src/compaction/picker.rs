//! Leveled compaction picking: a pure function of a Version, the options and what is
//! being compacted already.
//!
//! Scores as RocksDB's level style: level 0 by file count over
//! `level0_file_num_compaction_trigger`, level n by bytes over its target
//! (`max_bytes_for_level_base * multiplier^(n-1)`). Levels with a score of at least 1 are
//! tried highest score first. Level 0 compacts its oldest files (all of them, or as many as
//! fit in `max_compaction_bytes` together with their level-1 overlaps) into level 1, one
//! such compaction at a time; a deeper level compacts one file (round robin by key, after
//! the level's compact pointer) into the next level.
//!
//! Several compactions may run at once in one family (`Busy`): a plan never reads a file
//! another compaction reads, and never writes a key range of an output level that another
//! compaction writes, so the level stays sorted and disjoint whatever finishes first.

use std::collections::HashSet;
use std::sync::Arc;

use crate::key::user_key;
use crate::options::Options;
use crate::version::edit::FileMetaData;
use crate::version::Version;

/// What one compaction reads and where it writes.
#[derive(Debug, Clone)]
pub struct CompactionPlan {
    pub level: usize,
    pub output_level: usize,
    /// Files of `level`.
    pub inputs: Vec<Arc<FileMetaData>>,
    /// Files of `output_level` that overlap `inputs`.
    pub next_inputs: Vec<Arc<FileMetaData>>,
    /// No deeper level holds keys in the compaction's range: deletions can be dropped.
    pub bottommost: bool,
}

impl CompactionPlan {
    /// One input file and nothing to merge with: the file can move down unchanged.
    pub fn is_trivial_move(&self) -> bool {
        self.next_inputs.is_empty() && self.inputs.len() == 1
    }

    pub fn input_bytes(&self) -> u64 {
        self.inputs.iter().chain(&self.next_inputs).map(|f| f.file_size).sum()
    }
}

/// Per-level scores; index = level (the last level never compacts further).
pub fn level_scores(v: &Version, opts: &Options) -> Vec<f64> {
    let n = v.num_levels();
    let mut scores = vec![0.0; n];
    if n < 2 {
        return scores;
    }
    scores[0] = v.num_files(0) as f64 / opts.level0_file_num_compaction_trigger.max(1) as f64;
    for (level, score) in scores.iter_mut().enumerate().take(n - 1).skip(1) {
        *score = v.level_bytes(level) as f64 / opts.max_bytes_for_level(level) as f64;
    }
    scores
}

/// A compaction in progress, as the picker needs to know it.
#[derive(Debug, Clone)]
pub struct RunningCompaction {
    pub level: usize,
    pub output_level: usize,
    /// The user-key range the compaction writes at `output_level`.
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

impl RunningCompaction {
    pub fn of(v: &Version, plan: &CompactionPlan) -> RunningCompaction {
        let all: Vec<Arc<FileMetaData>> = plan.inputs.iter().chain(&plan.next_inputs).cloned().collect();
        let (smallest, largest) = key_range(v, &all);
        RunningCompaction { level: plan.level, output_level: plan.output_level, smallest, largest }
    }
}

/// What a family is compacting already: files being read and ranges being written.
#[derive(Default, Clone, Copy)]
pub struct Busy<'a> {
    pub files: Option<&'a HashSet<u64>>,
    pub running: &'a [RunningCompaction],
}

impl Busy<'_> {
    fn file(&self, number: u64) -> bool {
        self.files.is_some_and(|f| f.contains(&number))
    }

    /// True when `plan` would read a busy file or write a range another compaction writes.
    fn conflicts(&self, v: &Version, plan: &CompactionPlan) -> bool {
        if plan.inputs.iter().chain(&plan.next_inputs).any(|f| self.file(f.number)) {
            return true;
        }
        let mine = RunningCompaction::of(v, plan);
        let icmp = v.icmp();
        self.running.iter().any(|r| {
            r.output_level == mine.output_level
                && icmp.compare_user(&r.smallest, &mine.largest).is_le()
                && icmp.compare_user(&mine.smallest, &r.largest).is_le()
        })
    }
}

/// The compaction to run next, if any level is over its target and a compaction of it does
/// not collide with `busy`.
pub fn pick(
    v: &Version,
    opts: &Options,
    compact_pointer: &[Vec<u8>],
    busy: Busy<'_>,
) -> Option<CompactionPlan> {
    if opts.disable_auto_compactions {
        return None;
    }
    let scores = level_scores(v, opts);
    let mut order: Vec<(usize, f64)> = scores.into_iter().enumerate().filter(|(_, s)| *s >= 1.0).collect();
    order.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    order.into_iter().find_map(|(level, _)| pick_level(v, opts, level, compact_pointer, busy))
}

fn pick_level(
    v: &Version,
    opts: &Options,
    level: usize,
    compact_pointer: &[Vec<u8>],
    busy: Busy<'_>,
) -> Option<CompactionPlan> {
    if level == 0 {
        if busy.running.iter().any(|r| r.level == 0) {
            return None; // one level-0 compaction at a time, as RocksDB
        }
        let inputs = oldest_l0_files(v, opts.max_compaction_bytes());
        let plan = plan_for(v, 0, inputs);
        return (!busy.conflicts(v, &plan)).then_some(plan);
    }
    let files = v.files(level);
    let after = compact_pointer.get(level).filter(|p| !p.is_empty());
    let start =
        after.map_or(0, |p| files.iter().position(|f| v.icmp().compare(&f.largest, p).is_gt()).unwrap_or(0));
    (0..files.len()).map(|i| &files[(start + i) % files.len()]).find_map(|f| {
        if busy.file(f.number) {
            return None;
        }
        let plan = plan_for(v, level, vec![f.clone()]);
        (!busy.conflicts(v, &plan)).then_some(plan)
    })
}

/// Level 0's oldest files, as many as fit in `max_bytes` together with the level-1 files
/// they overlap (at least two, when there are two).
fn oldest_l0_files(v: &Version, max_bytes: u64) -> Vec<Arc<FileMetaData>> {
    let mut inputs: Vec<Arc<FileMetaData>> = Vec::new();
    for f in v.files(0).iter().rev() {
        if inputs.len() >= 2 {
            let mut candidate = inputs.clone();
            candidate.push(f.clone());
            let (lo, hi) = key_range(v, &candidate);
            let overlap: u64 = v.overlapping_files(1, Some(&lo), Some(&hi)).iter().map(|f| f.file_size).sum();
            let total: u64 = candidate.iter().map(|f| f.file_size).sum::<u64>() + overlap;
            if total > max_bytes {
                break;
            }
        }
        inputs.push(f.clone());
    }
    inputs
}

/// RocksDB's estimate of the bytes compaction must rewrite to bring every level under its
/// target (`estimated_compaction_needed_bytes`, what the pending-compaction-bytes stall
/// limits compare with).
pub fn estimated_pending_bytes(v: &Version, opts: &Options) -> u64 {
    let n = v.num_levels();
    if n < 2 || opts.disable_auto_compactions {
        return 0;
    }
    let mut total = 0u64;
    let l0_bytes = v.level_bytes(0);
    let l0_triggered = v.num_files(0) as i32 >= opts.level0_file_num_compaction_trigger.max(1)
        || l0_bytes >= opts.max_bytes_for_level_base;
    let mut carried = 0u64;
    if l0_triggered {
        total += l0_bytes;
        carried = l0_bytes;
    }
    for level in 1..n - 1 {
        let own = v.level_bytes(level);
        if level == 1 && l0_triggered {
            total += own;
        }
        let size = own + carried;
        let target = opts.max_bytes_for_level(level);
        carried = 0;
        if size > target {
            carried = size - target;
            // Moving the excess down rewrites it and its share of the next level.
            let next = v.level_bytes(level + 1) as f64;
            let ratio = if size > 0 { next / size as f64 } else { 0.0 };
            total += (carried as f64 * (ratio + 1.0)) as u64;
        }
    }
    total
}

/// A manual compaction of `level`'s files overlapping `[begin, end]` (user keys) into the
/// next level. None when the level holds nothing in the range.
pub fn pick_manual(
    v: &Version,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Option<CompactionPlan> {
    if level + 1 >= v.num_levels() {
        return None;
    }
    let inputs = v.overlapping_files(level, begin, end);
    if inputs.is_empty() {
        return None;
    }
    Some(plan_for(v, level, inputs))
}

fn plan_for(v: &Version, level: usize, inputs: Vec<Arc<FileMetaData>>) -> CompactionPlan {
    let output_level = level + 1;
    let (lo, hi) = key_range(v, &inputs);
    let next_inputs = v.overlapping_files(output_level, Some(&lo), Some(&hi));
    let (all_lo, all_hi) = key_range(v, &inputs.iter().chain(&next_inputs).cloned().collect::<Vec<_>>());
    let bottommost = (output_level + 1..v.num_levels())
        .all(|l| v.overlapping_files(l, Some(&all_lo), Some(&all_hi)).is_empty());
    CompactionPlan { level, output_level, inputs, next_inputs, bottommost }
}

/// The smallest and largest user keys of `files`.
fn key_range(v: &Version, files: &[Arc<FileMetaData>]) -> (Vec<u8>, Vec<u8>) {
    let icmp = v.icmp();
    let mut lo: Option<&[u8]> = None;
    let mut hi: Option<&[u8]> = None;
    for f in files {
        let s = user_key(&f.smallest);
        let l = user_key(&f.largest);
        if lo.is_none_or(|x| icmp.compare_user(s, x).is_lt()) {
            lo = Some(s);
        }
        if hi.is_none_or(|x| icmp.compare_user(l, x).is_gt()) {
            hi = Some(l);
        }
    }
    (lo.unwrap_or_default().to_vec(), hi.unwrap_or_default().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};

    fn file(number: u64, lo: &str, hi: &str, size: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number,
            file_size: size,
            smallest: make_internal_key(lo.as_bytes(), number * 10, ValueType::Value),
            largest: make_internal_key(hi.as_bytes(), number * 10, ValueType::Value),
            smallest_seqno: number * 10,
            largest_seqno: number * 10,
            ..Default::default()
        })
    }

    fn version(files: Vec<(u32, Arc<FileMetaData>)>) -> Version {
        Version::new(bytewise_internal_comparator(), 4, files)
    }

    #[test]
    fn level0_trigger_picks_all_l0_and_overlaps() {
        let mut opts = Options::default();
        opts.set_level_zero_file_num_compaction_trigger(2);
        let v = version(vec![
            (0, file(5, "c", "f", 100)),
            (0, file(6, "a", "d", 100)),
            (1, file(2, "a", "b", 100)),
            (1, file(3, "e", "g", 100)),
            (1, file(4, "x", "z", 100)),
        ]);
        let p = pick(&v, &opts, &[], Busy::default()).expect("L0 over trigger");
        assert_eq!((p.level, p.output_level), (0, 1));
        assert_eq!(p.inputs.len(), 2);
        let mut next: Vec<u64> = p.next_inputs.iter().map(|f| f.number).collect();
        next.sort();
        assert_eq!(next, vec![2, 3]);
        assert!(p.bottommost);
    }

    #[test]
    fn nothing_to_do_under_targets() {
        let opts = Options::default();
        let v = version(vec![(0, file(5, "a", "b", 100)), (1, file(3, "a", "z", 1000))]);
        assert!(pick(&v, &opts, &[], Busy::default()).is_none());
    }

    #[test]
    fn deeper_level_round_robins_and_moves_trivially() {
        let mut opts = Options::default();
        opts.set_max_bytes_for_level_base(150);
        let v = version(vec![
            (1, file(3, "a", "b", 100)),
            (1, file(4, "m", "n", 100)),
            (2, file(7, "x", "z", 10)),
        ]);
        let p = pick(&v, &opts, &[], Busy::default()).unwrap();
        assert_eq!(p.inputs[0].number, 3);
        assert!(p.is_trivial_move());
        let ptr = vec![Vec::new(), v.files(1)[0].largest.clone()];
        let p = pick(&v, &opts, &ptr, Busy::default()).unwrap();
        assert_eq!(p.inputs[0].number, 4);
    }

    #[test]
    fn bottommost_only_without_deeper_overlap() {
        let v = version(vec![(1, file(3, "a", "c", 100)), (3, file(9, "b", "b", 10))]);
        let p = pick_manual(&v, 1, None, None).unwrap();
        assert!(!p.bottommost);
        let v = version(vec![(1, file(3, "a", "c", 100)), (3, file(9, "x", "y", 10))]);
        assert!(pick_manual(&v, 1, None, None).unwrap().bottommost);
    }
}
