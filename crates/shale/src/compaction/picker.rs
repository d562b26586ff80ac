//! Leveled compaction picking: a pure function of a Version and the options.
//!
//! Scores as RocksDB's level style: level 0 by file count over
//! `level0_file_num_compaction_trigger`, level n by bytes over its target
//! (`max_bytes_for_level_base * multiplier^(n-1)`). The highest score of at least 1 wins.
//! Level 0 compacts all its files into level 1; a deeper level compacts one file (round
//! robin by key, after the level's compact pointer) into the next level.

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

/// The compaction to run next, if any level is over its target.
pub fn pick(v: &Version, opts: &Options, compact_pointer: &[Vec<u8>]) -> Option<CompactionPlan> {
    if opts.disable_auto_compactions {
        return None;
    }
    let scores = level_scores(v, opts);
    let (level, score) =
        scores.iter().enumerate().max_by(|a, b| a.1.partial_cmp(b.1).unwrap_or(std::cmp::Ordering::Equal))?;
    if *score < 1.0 {
        return None;
    }
    let inputs = if level == 0 {
        v.files(0).to_vec()
    } else {
        let files = v.files(level);
        let after = compact_pointer.get(level).filter(|p| !p.is_empty());
        let pick = after
            .and_then(|p| files.iter().find(|f| v.icmp().compare(&f.largest, p).is_gt()))
            .or_else(|| files.first())?;
        vec![pick.clone()]
    };
    Some(plan_for(v, level, inputs))
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
        let p = pick(&v, &opts, &[]).expect("L0 over trigger");
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
        assert!(pick(&v, &opts, &[]).is_none());
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
        let p = pick(&v, &opts, &[]).unwrap();
        assert_eq!(p.inputs[0].number, 3);
        assert!(p.is_trivial_move());
        let ptr = vec![Vec::new(), v.files(1)[0].largest.clone()];
        let p = pick(&v, &opts, &ptr).unwrap();
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
