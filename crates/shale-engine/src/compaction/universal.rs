//! Universal compaction picking (RocksDB's `UniversalCompactionBuilder`,
//! `db/compaction/compaction_picker_universal.cc`): a pure function of a Version, the
//! options, what is being compacted already and the time.
//!
//! The data is a list of *sorted runs*, newest first: each level-0 file is one run, then each
//! non-empty level 1.. is one run. Compactions merge consecutive runs. In order:
//!
//! 1. periodic: a table older than `periodic_compaction_seconds` makes every run from the
//!    oldest up to the first busy one compact together;
//! 2. size amplification: when the runs newer than the oldest hold at least
//!    `max_size_amplification_percent`% of the oldest run's bytes, they all merge into it
//!    (leaving out some of the newest level-0 files when that keeps writes from stopping);
//!    with `incremental`, only a window of the last two runs' files of about
//!    `max_compaction_bytes` when one has a low enough fanout (`incremental_size_amp`);
//! 3. size ratio: starting from the newest run not being compacted, runs are added while the
//!    next run is at most `(100 + size_ratio)%` of what was picked so far (the total, or with
//!    the `Similar` stop style the last run); `min_merge_width`..`max_merge_width` runs;
//! 4. run count: when more than `level0_file_num_compaction_trigger` runs (RocksDB's
//!    `max_read_amp` default) are not being compacted, the newest runs merge regardless of
//!    size, enough of them to get back to that count.
//!
//! Nothing is picked until there are at least `level0_file_num_compaction_trigger` runs
//! (unless a table is due for periodic compaction). A compaction that takes the oldest run
//! writes to the last level; otherwise to the level just above the next older run (level 0
//! when that run is a level-0 file), so with `num_levels` levels the runs settle in the
//! bottom levels. `compression_size_percent`: a size-ratio compaction whose older, untouched
//! runs already hold that share of the data writes uncompressed output. Outputs below level
//! 0 are cut at the output level's target file size (RocksDB's `MaxFileSizeForLevel`), so a
//! run of level 1 or deeper is several files.

use std::sync::Arc;

use super::picker::{Busy, CompactionPlan};
use crate::config::{CfConfig, StopStyle, UniversalSettings};
use crate::key::user_key;
use crate::version::edit::FileMetaData;
use crate::version::Version;

/// One sorted run: a level-0 file, or a whole level.
#[derive(Debug, Clone)]
pub struct SortedRun {
    pub level: usize,
    /// The file, for a level-0 run.
    pub file: Option<Arc<FileMetaData>>,
    pub size: u64,
    pub being_compacted: bool,
}

/// The sorted runs of `v`, newest first.
pub fn sorted_runs(v: &Version, busy: Busy<'_>) -> Vec<SortedRun> {
    sorted_runs_to(v, busy, v.num_levels() - 1)
}

/// `sorted_runs` of the levels up to `last_level` (RocksDB's `CalculateSortedRuns`: the last
/// level kept for ingestion behind is no run).
fn sorted_runs_to(v: &Version, busy: Busy<'_>, last_level: usize) -> Vec<SortedRun> {
    let mut runs: Vec<SortedRun> = v
        .files(0)
        .iter()
        .map(|f| SortedRun {
            level: 0,
            file: Some(f.clone()),
            size: f.file_size,
            being_compacted: busy.file(f.number),
        })
        .collect();
    for level in 1..=last_level.min(v.num_levels() - 1) {
        let files = v.files(level);
        if files.is_empty() {
            continue;
        }
        runs.push(SortedRun {
            level,
            file: None,
            size: files.iter().map(|f| f.file_size).sum(),
            being_compacted: files.iter().any(|f| busy.file(f.number)),
        });
    }
    runs
}

/// The number of sorted runs (what level-0 write stalls count under universal compaction).
pub fn num_sorted_runs(v: &Version) -> usize {
    v.num_files(0) + (1..v.num_levels()).filter(|&l| v.num_files(l) > 0).count()
}

/// The universal compaction to run next, if any. `now` is the time in seconds since the
/// epoch (periodic compaction compares table creation times with it).
pub fn pick_universal(v: &Version, opts: &CfConfig, busy: Busy<'_>, now: u64) -> Option<CompactionPlan> {
    let u = &opts.universal;
    let trigger = opts.level0_file_num_compaction_trigger.max(1) as usize;
    let max_output_level = opts.max_output_level.min(v.num_levels() - 1);
    // A BOTTOM thread's repick (RocksDB's `MeetsOutputLevelRequirements`): nothing with a
    // single output level.
    if busy.require_max_output_level && max_output_level == 0 {
        return None;
    }
    let runs = sorted_runs_to(v, busy, max_output_level);
    let periodic_limit = super::offpeak::periodic_limit(now, opts.age_periodic, opts.daily_offpeak);
    let periodic = periodic_due(v, periodic_limit);
    let hot = super::picker::read_hot_files(v, opts, busy);
    if runs.is_empty() || (!periodic && hot.is_empty() && runs.len() < trigger) {
        return None;
    }
    let picker = Picker { v, opts, u, runs: &runs, busy, periodic_limit, max_output_level };
    let mut plan = if periodic { picker.periodic() } else { None };
    let by_period = plan.is_some();
    if runs.len() >= trigger {
        plan = plan
            .or_else(|| picker.size_amp())
            .or_else(|| picker.reduce_sorted_runs(u.size_ratio, u32::MAX))
            .or_else(|| {
                let max_files = picker.max_files_for_read_amp(trigger);
                if max_files == 0 {
                    return None;
                }
                picker.reduce_sorted_runs(u32::MAX, max_files)
            });
    }
    let by_read = plan.is_none() && !hot.is_empty();
    if by_read {
        plan = read_triggered(v, busy, &hot, max_output_level).map(|mut p| {
            p.reason = Some("ReadTriggered");
            p
        });
    }
    // RocksDB's PickCompaction: with `allow_trivial_move`, any pick but a periodic one moves
    // its files unchanged when no two of them overlap (`Compaction::IsTrivialMove`: not into
    // level 0, and from level 0 only while the version's level-0 files do not overlap).
    if let Some(p) = plan.as_mut() {
        p.move_all = u.allow_trivial_move
            && !by_period
            && !by_read
            && p.output_level != 0
            && p.output_level != p.level
            && (p.level != 0 || level0_non_overlapping(v))
            && inputs_non_overlapping(v, p);
    }
    plan
}

/// RocksDB's `PickReadTriggeredCompaction` and `BuildCompactionToNextLevel`, asked last: the
/// first hot table (`picker::read_hot_files`; on level 0 none while a level-0 compaction
/// runs) is compacted into the first non-empty level below it (from level 0 with every
/// level below empty: the last level; from a middle level with none below: nothing),
/// with the level-0 files overlapping it; with a single level, the level-0 files
/// overlapping it are compacted together into level 0 (not a lone file).
fn read_triggered(
    v: &Version,
    busy: Busy<'_>,
    hot: &[(usize, &Arc<FileMetaData>)],
    max_output_level: usize,
) -> Option<CompactionPlan> {
    let l0_running = busy.running.iter().any(|r| r.level == 0);
    let &(level, f) = hot.iter().find(|(level, _)| *level != 0 || !l0_running)?;
    let mut inputs = super::picker::clean_cut(v, level, vec![f.clone()]);
    let (lo, hi) = super::picker::key_range(v, &inputs);
    if v.num_levels() == 1 && level == 0 {
        inputs = v.overlapping_files(0, Some(&lo), Some(&hi));
    }
    let output_level = match (level + 1..=max_output_level).find(|&l| v.num_files(l) > 0) {
        Some(l) => l,
        None if level == 0 => max_output_level,
        None => return None,
    };
    if output_level != 0 && !meets_output_level_requirements(busy, output_level, max_output_level) {
        return None;
    }
    if inputs.len() <= 1 && output_level == 0 {
        return None;
    }
    let plan = if output_level == 0 {
        // Every level-0 file holding the range is an input, and there is no other level.
        CompactionPlan { level: 0, output_level: 0, inputs, bottommost: true, ..Default::default() }
    } else {
        if level == 0 {
            inputs = v.overlapping_files(0, Some(&lo), Some(&hi));
        }
        super::picker::plan_for(v, level, output_level, inputs)
    };
    (!busy.conflicts(v, &plan)).then_some(plan)
}

/// RocksDB's `VersionStorageInfo::level0_non_overlapping`: the level-0 files of `v`, ordered
/// by smallest key, each ending before the next one starts.
fn level0_non_overlapping(v: &Version) -> bool {
    disjoint(v, v.files(0).iter().collect())
}

/// RocksDB's `IsInputFilesNonOverlapping`: ordered by smallest user key, each input file of
/// `p` ends before the next one starts.
fn inputs_non_overlapping(v: &Version, p: &CompactionPlan) -> bool {
    disjoint(v, p.all_inputs().map(|(_, f)| f).collect())
}

/// `files`, sorted by smallest key, are pairwise disjoint by user key (timestamps aside).
fn disjoint(v: &Version, mut files: Vec<&Arc<FileMetaData>>) -> bool {
    let icmp = v.icmp();
    files.sort_by(|a, b| icmp.compare(&a.smallest, &b.smallest));
    files
        .windows(2)
        .all(|w| icmp.compare_user_without_ts(user_key(&w[0].largest), user_key(&w[1].smallest)).is_lt())
}

/// RocksDB's `sstableKeyCompare` of two internal keys of file bounds: by user key without
/// timestamp; at one user key a range tombstone's end (its sentinel, which does not hold the
/// key) sorts first.
fn sst_key_compare(v: &Version, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let c = v.icmp().compare_user_without_ts(user_key(a), user_key(b));
    if c != Ordering::Equal {
        return c;
    }
    let sentinel = |k: &[u8]| {
        k.len() >= 8
            && crate::key::trailer(k)
                == (crate::key::MAX_SEQUENCE_NUMBER << 8) | crate::key::ValueType::RangeDeletion as u64
    };
    match (sentinel(a), sentinel(b)) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// RocksDB's `GetOverlappingInputs` on a level of 1 or more: its files meeting the internal
/// key range `[begin, end]` (compared as `sst_key_compare`).
fn overlapping_within(v: &Version, level: usize, begin: &[u8], end: &[u8]) -> Vec<Arc<FileMetaData>> {
    let files = v.files(level);
    let start = files.partition_point(|f| sst_key_compare(v, &f.largest, begin).is_lt());
    let stop = start + files[start..].partition_point(|f| !sst_key_compare(v, end, &f.smallest).is_lt());
    files[start..stop].to_vec()
}

/// RocksDB's `GetCleanInputsWithinInterval`: the files of `level` (1 or more) lying wholly
/// inside the internal key range `[begin, end]`, less those at either end that share a user
/// key with a neighbour left outside (so no key's versions are split).
fn clean_inputs_within(v: &Version, level: usize, begin: &[u8], end: &[u8]) -> Vec<Arc<FileMetaData>> {
    let files = v.files(level);
    let n = files.len();
    if level == 0 || n == 0 {
        return Vec::new();
    }
    let shares = |i: usize| sst_key_compare(v, &files[i - 1].largest, &files[i].smallest).is_eq();
    let mut start = files.partition_point(|f| sst_key_compare(v, &f.smallest, begin).is_lt());
    if start > 0 {
        while start < n && shares(start) {
            start += 1;
        }
    }
    let mut stop = start + files[start..].partition_point(|f| !sst_key_compare(v, end, &f.largest).is_lt());
    if stop < n {
        while stop > start && shares(stop) {
            stop -= 1;
        }
    }
    files[start..stop].to_vec()
}

/// RocksDB's `MaxFileSizeForLevel` under universal compaction (`max_file_size`): level 0's
/// outputs are never cut, a deeper level's at `target_file_size_base` times
/// `target_file_size_multiplier` per level below 1.
fn max_output_file_size(opts: &CfConfig, level: usize) -> u64 {
    if level == 0 {
        u64::MAX
    } else {
        opts.target_file_size(level)
    }
}

/// A table written (`file_creation_time`) before `limit` (`offpeak::periodic_limit`: more
/// than `periodic_compaction_seconds` ago, brought forward in the off-peak window); tables of
/// unknown age (0) are left alone.
/// RocksDB's `UniversalCompactionBuilder::MeetsOutputLevelRequirements`: without
/// `require_max_output_level` any output level; with it only the deepest one, and not 0
/// (`Compaction::OutputToNonZeroMaxOutputLevel`).
fn meets_output_level_requirements(busy: Busy<'_>, output_level: usize, max_output_level: usize) -> bool {
    !busy.require_max_output_level || (output_level > 0 && output_level == max_output_level)
}

fn periodic_due(v: &Version, limit: Option<u64>) -> bool {
    limit.is_some_and(|limit| {
        v.all_files().any(|(_, f)| f.file_creation_time > 0 && f.file_creation_time < limit)
    })
}

/// Files of one level, in key order.
type Files = Vec<Arc<FileMetaData>>;

struct Picker<'a> {
    v: &'a Version,
    opts: &'a CfConfig,
    u: &'a UniversalSettings,
    runs: &'a [SortedRun],
    busy: Busy<'a>,
    /// Tables created before this are due for periodic compaction (None: none is).
    periodic_limit: Option<u64>,
    /// The deepest level a compaction may write (`CfConfig::max_output_level`).
    max_output_level: usize,
}

impl Picker<'_> {
    fn max_output_level(&self) -> usize {
        self.max_output_level
    }

    /// RocksDB's GetMaxOverlappingBytes: with `incremental`, an output crossing a
    /// grandparent boundary ends once it and the grandparents it overlaps pass 1.5 target
    /// files (`target_file_size_base / 2 * 3`); without, never.
    fn max_grandparent_overlap(&self) -> Option<u64> {
        self.u.incremental.then(|| self.opts.target_file_size_base / 2 * 3)
    }

    /// RocksDB's PickPeriodicCompaction: every run from the oldest back to the first busy one.
    fn periodic(&self) -> Option<CompactionPlan> {
        let runs = self.runs;
        let mut start = runs.len();
        while start > 0 && !runs[start - 1].being_compacted {
            start -= 1;
        }
        if start == runs.len() {
            return None;
        }
        // The last run alone is recompacted only when it holds a table due itself.
        if start == runs.len() - 1 {
            let last = &runs[start];
            let files: Vec<Arc<FileMetaData>> = match &last.file {
                Some(f) => vec![f.clone()],
                None => self.v.files(last.level).to_vec(),
            };
            let due = |f: &Arc<FileMetaData>| {
                self.periodic_limit
                    .is_some_and(|limit| f.file_creation_time > 0 && f.file_creation_time < limit)
            };
            if !files.iter().any(due) {
                return None;
            }
        }
        self.plan_range(start, runs.len() - 1, true)
    }

    /// RocksDB's PickCompactionToReduceSizeAmp. With `preclude_last_level_data_seconds`
    /// (more than 2 levels, the oldest run on the last level, and another run) the last
    /// level's run is left out: the runs above it are measured against the next one
    /// (RocksDB's `ShouldSkipLastSortedRunForSizeAmpCompaction`).
    fn size_amp(&self) -> Option<CompactionPlan> {
        let runs = self.runs;
        let num_levels = self.opts.num_levels;
        let skip_last = self.opts.preclude_last_level_data_seconds > 0
            && num_levels > 2
            && runs.last().is_some_and(|r| r.level + 1 == num_levels)
            && runs.len() > 1;
        let end = runs.len() - if skip_last { 2 } else { 1 };
        if runs[end].being_compacted {
            return None;
        }
        let base = runs[end].size;
        let mut start = end;
        let mut candidate: u64 = 0;
        let mut l0 = 0usize;
        while start > 0 {
            let r = &runs[start - 1];
            if r.being_compacted {
                break;
            }
            candidate += r.size;
            l0 += usize::from(r.level == 0);
            start -= 1;
        }
        if start == end {
            return None;
        }
        self.exclude_new_l0s(l0, end, &mut start, &mut candidate);
        let ratio = u64::from(self.u.max_size_amplification_percent);
        if (candidate as u128) * 100 < (ratio as u128) * (base as u128) {
            return None;
        }
        // With `incremental`, a part of the last two runs when one is found whose fanout is
        // under 1.8 times a full compaction's (RocksDB's hard-coded 80% penalty), else all.
        if self.u.incremental {
            let fanout_threshold = base as f64 / candidate as f64 * 1.8;
            if let Some(plan) = self.incremental_size_amp(fanout_threshold) {
                return Some(plan);
            }
        }
        self.plan_range(start, end, true)
    }

    /// RocksDB's PickIncrementalForReduceSizeAmp. A window slides over the second-last run's
    /// files (a level of 1 or more; none from level 0), taking with it the last run's files
    /// it overlaps; each time the window holds more than `max_compaction_bytes / 2` (or
    /// reaches the run's end) its fanout (last-run bytes over second-last-run bytes) is
    /// measured, then it shrinks from its start until back under that size. A bottom file
    /// lying wholly in a gap between two of the window's files... more than one such file
    /// starts a new window. The window of the lowest fanout under `fanout_threshold` wins;
    /// it is cut cleanly, takes its overlapping last-run files (RocksDB's
    /// `SetupOtherInputs`, which may add second-last-run files that bring no new last-run
    /// file), and the clean cuts of the runs above within its range, going up until a
    /// level-0 run. The output goes into the last run's level. None when no window is under
    /// the threshold or its files are busy.
    fn incremental_size_amp(&self, fanout_threshold: f64) -> Option<CompactionPlan> {
        let runs = self.runs;
        let v = self.v;
        let icmp = v.icmp();
        if runs.len() < 2 {
            return None;
        }
        let second_last_level = runs[runs.len() - 2].level;
        if second_last_level == 0 {
            return None; // level 0 cannot be split
        }
        let output_level = runs[runs.len() - 1].level;
        let bottom = v.files(output_level);
        let files = v.files(second_last_level);
        if bottom.is_empty() || files.is_empty() {
            return None;
        }
        let (mut picked_start, mut picked_end, mut picked_fanout) = (0usize, 0usize, fanout_threshold);
        // Half the target: room is left for the last run's overlap, clean cuts and the
        // runs above.
        let threshold = self.opts.max_compaction_bytes / 2;
        let (mut start, mut bottom_start, mut bottom_end) = (0usize, 0usize, 0usize);
        let (mut non_bottom, mut bottom_size) = (0u64, 0u64);
        let mut end_bottom_counted = false;
        for (end, end_file) in files.iter().enumerate() {
            // The last run's files wholly before this one.
            let mut skipped = 0;
            while bottom_end < bottom.len()
                && icmp.compare(&bottom[bottom_end].largest, &end_file.smallest).is_lt()
            {
                if !end_bottom_counted {
                    bottom_size = bottom_size.wrapping_add(bottom[bottom_end].file_size);
                }
                bottom_end += 1;
                end_bottom_counted = false;
                skipped += 1;
            }
            if skipped > 1 {
                // A last-run file lies in the gap: no reason to take it, a new window starts.
                start = end;
            }
            if start == end {
                non_bottom = 0;
                bottom_size = 0;
                bottom_start = bottom_end;
                end_bottom_counted = false;
            }
            non_bottom = non_bottom.wrapping_add(end_file.file_size);
            // The last run's files overlapping this one.
            while bottom_end < bottom.len()
                && icmp.compare(&bottom[bottom_end].smallest, &end_file.largest).is_lt()
            {
                if !end_bottom_counted {
                    bottom_size = bottom_size.wrapping_add(bottom[bottom_end].file_size);
                    end_bottom_counted = true;
                }
                if icmp.compare(&bottom[bottom_end].largest, &end_file.largest).is_gt() {
                    break; // it reaches past this file: the next one may overlap it too
                }
                bottom_end += 1;
                end_bottom_counted = false;
            }
            let over = non_bottom.wrapping_add(bottom_size) > threshold;
            if (over || end == files.len() - 1) && non_bottom > 0 {
                let fanout = bottom_size as f64 / non_bottom as f64;
                if fanout < picked_fanout {
                    (picked_start, picked_end, picked_fanout) = (start, end, fanout);
                }
                while non_bottom.wrapping_add(bottom_size) > threshold && start <= end {
                    non_bottom = non_bottom.wrapping_sub(files[start].file_size);
                    start += 1;
                    if start < files.len() {
                        while bottom_start <= bottom_end
                            && bottom_start < bottom.len()
                            && icmp.compare(&bottom[bottom_start].largest, &files[start].smallest).is_lt()
                        {
                            bottom_size = bottom_size.wrapping_sub(bottom[bottom_start].file_size);
                            bottom_start += 1;
                        }
                    }
                }
            }
        }
        if picked_fanout >= fanout_threshold {
            return None;
        }
        let busy = |fs: &[Arc<FileMetaData>]| fs.iter().any(|f| self.busy.file(f.number));
        let window = files[picked_start..=picked_end].to_vec();
        if busy(&window) {
            return None;
        }
        let window = super::picker::clean_cut(v, second_last_level, window);
        if busy(&window) {
            return None;
        }
        let (second, last) = self.setup_other_inputs(second_last_level, window, output_level)?;
        // The runs above, newest last: each one's files lying cleanly within the range
        // found so far, which narrows to theirs.
        let mut smallest = second[0].smallest.clone();
        let mut largest = second[second.len() - 1].largest.clone();
        let mut upper: Vec<(usize, Vec<Arc<FileMetaData>>)> = Vec::new();
        for r in runs[..runs.len() - 2].iter().rev() {
            if r.level == 0 {
                break;
            }
            let found = clean_inputs_within(v, r.level, &smallest, &largest);
            if let (Some(first), Some(end)) = (found.first(), found.last()) {
                smallest = first.smallest.clone();
                largest = end.largest.clone();
                upper.push((r.level, found));
            }
        }
        upper.reverse();
        let mut levels = upper;
        levels.push((second_last_level, second));
        let mut levels = levels.into_iter();
        let (start_level, inputs) = levels.next()?;
        let plan = CompactionPlan {
            level: start_level,
            output_level,
            inputs,
            middle: levels.collect(),
            next_inputs: last,
            bottommost: true,
            output_file_size: Some(max_output_file_size(self.opts, output_level)),
            rewrite: true,
            max_grandparent_overlap: self.max_grandparent_overlap(),
            ..Default::default()
        };
        (!self.busy.conflicts(v, &plan)).then_some(plan)
    }

    /// RocksDB's `SetupOtherInputs` for `inputs` of `level` compacted into `output_level`
    /// (a deeper level, none between holding files): the files of `output_level` they
    /// overlap, cut cleanly; then `inputs` grow to the files of `level` within (or, when that
    /// adds no file of `output_level`, overlapping) the range of both, as long as the
    /// compaction stays under twice `max_compaction_bytes` and no file is busy. None when a
    /// file of `output_level` it needs is busy.
    fn setup_other_inputs(
        &self,
        level: usize,
        inputs: Vec<Arc<FileMetaData>>,
        output_level: usize,
    ) -> Option<(Files, Files)> {
        use super::picker::clean_cut;
        let v = self.v;
        let icmp = v.icmp();
        let busy = |fs: &[Arc<FileMetaData>]| fs.iter().any(|f| self.busy.file(f.number));
        let total = |fs: &[Arc<FileMetaData>]| fs.iter().fold(0u64, |t, f| t.saturating_add(f.file_size));
        let (first, last) = (inputs.first()?, inputs.last()?);
        let mut out = overlapping_within(v, output_level, &first.smallest, &last.largest);
        if busy(&out) {
            return None;
        }
        if out.is_empty() {
            return Some((inputs, out));
        }
        out = clean_cut(v, output_level, out);
        if busy(&out) {
            return None;
        }
        let out_size = total(&out);
        // The range of both levels' inputs (internal keys, as RocksDB's GetRange).
        let all_start = if icmp.compare(&first.smallest, &out[0].smallest).is_lt() {
            &first.smallest
        } else {
            &out[0].smallest
        };
        let out_last = &out[out.len() - 1].largest;
        let all_limit = if icmp.compare(&last.largest, out_last).is_lt() { out_last } else { &last.largest };
        let limit = self.opts.max_compaction_bytes.saturating_mul(2);
        let mut expanded: Option<Vec<Arc<FileMetaData>>> = None;
        let overlapping = overlapping_within(v, level, all_start, all_limit);
        let overlapping_size = total(&overlapping);
        let overlapping = clean_cut(v, level, overlapping);
        if !busy(&overlapping)
            && overlapping.len() > inputs.len()
            && out_size.saturating_add(overlapping_size) < limit
        {
            if let (Some(a), Some(b)) = (overlapping.first(), overlapping.last()) {
                let new_out = overlapping_within(v, output_level, &a.smallest, &b.largest);
                if !busy(&new_out) {
                    let new_out = clean_cut(v, output_level, new_out);
                    if !busy(&new_out) && new_out.len() == out.len() {
                        expanded = Some(overlapping);
                    }
                }
            }
        }
        if expanded.is_none() {
            let within = clean_inputs_within(v, level, all_start, all_limit);
            if within.len() > inputs.len()
                && !busy(&within)
                && out_size.saturating_add(total(&within)) < limit
            {
                expanded = Some(within);
            }
        }
        Some((expanded.unwrap_or(inputs), out))
    }

    /// RocksDB's MightExcludeNewL0sToReduceWriteStop: leave some of the newest level-0 files
    /// out of a size-amplification compaction, so that flushes meanwhile do not stop writes,
    /// as long as the compaction stays one (at least 90% of its size, still over the ratio).
    fn exclude_new_l0s(&self, num_l0: usize, end: usize, start: &mut usize, candidate: &mut u64) {
        if num_l0 == 0 {
            return;
        }
        let stop = self.opts.level0_stop_writes_trigger.max(1) as usize;
        let max_width = self.u.max_merge_width as usize;
        let min_width = self.u.min_merge_width as usize;
        let ratio = u64::from(self.u.max_size_amplification_percent) as u128;
        let base = self.runs[end].size as u128;
        let max_exclude = (num_l0 - 1).min(end - *start - 1);
        let extra_before_stop = stop - stop.min(end - *start + 1);
        let for_max = (max_width - max_width.min(extra_before_stop)).min(max_exclude);
        let for_min = (min_width - min_width.min(extra_before_stop)).min(max_exclude);
        let mut excluded = 0usize;
        let mut post = *candidate;
        let mut possible = for_min;
        while possible <= for_max {
            let mut current = post;
            for j in excluded..possible {
                current -= self.runs[*start + j].size;
            }
            if (current as u128) * 100 < ratio * base || (current as u128) * 10 < (*candidate as u128) * 9 {
                break;
            }
            excluded = possible;
            post = current;
            possible += 1;
        }
        *start += excluded;
        *candidate = post;
    }

    /// RocksDB's GetMaxNumFilesToCompactBasedOnMaxReadAmp: how many runs to merge to get back
    /// to the allowed number of runs (0: within it).
    fn max_files_for_read_amp(&self, trigger: usize) -> u32 {
        let mut max_runs = self.u.max_read_amp as i64;
        if max_runs < 0 {
            max_runs = trigger as i64;
        } else if max_runs == 0 {
            if self.u.stop_style == StopStyle::Total {
                let max_run_size = self.runs.iter().map(|r| r.size).max().unwrap_or(0) as f64;
                max_runs = 1;
                let mut cur = self.opts.write_buffer_size as f64;
                let mut total = 0.0;
                while cur < max_run_size {
                    total += cur;
                    cur = (100.0 + f64::from(self.u.size_ratio)) / 100.0 * total;
                    max_runs += 1;
                }
            } else {
                max_runs = trigger as i64;
            }
        }
        let not_compacted = self.runs.iter().filter(|r| !r.being_compacted).count() as i64;
        if not_compacted > max_runs {
            (not_compacted - max_runs + 1).min(u32::MAX as i64) as u32
        } else {
            0
        }
    }

    /// RocksDB's PickCompactionToReduceSortedRuns.
    fn reduce_sorted_runs(&self, ratio: u32, max_number_of_files: u32) -> Option<CompactionPlan> {
        let runs = self.runs;
        let min_width = self.u.min_merge_width.max(2) as usize;
        let max_files = self.u.max_merge_width.min(max_number_of_files) as usize;
        let mut picked: Option<(usize, usize)> = None;
        let mut lp = 0usize;
        while lp < runs.len() {
            let mut count = 0usize;
            while lp < runs.len() {
                if !runs[lp].being_compacted {
                    count = 1;
                    break;
                }
                lp += 1;
            }
            if count == 0 {
                break;
            }
            let mut candidate = runs[lp].size as f64;
            let mut i = lp + 1;
            while count < max_files && i < runs.len() {
                let next = &runs[i];
                if next.being_compacted {
                    break;
                }
                let sz = candidate * (100.0 + f64::from(ratio)) / 100.0;
                if sz < next.size as f64 {
                    break;
                }
                if self.u.stop_style == StopStyle::Similar {
                    let sz = next.size as f64 * (100.0 + f64::from(ratio)) / 100.0;
                    if sz < candidate {
                        break;
                    }
                    candidate = next.size as f64;
                } else {
                    candidate += next.size as f64;
                }
                count += 1;
                i += 1;
            }
            if count >= min_width {
                picked = Some((lp, count));
                break;
            }
            lp += 1;
        }
        let (start, count) = picked?;
        if count <= 1 {
            return None;
        }
        let first_after = start + count;
        let mut compress = true;
        if self.u.compression_size_percent >= 0 {
            let total: u128 = runs.iter().map(|r| r.size as u128).sum();
            let mut older: u128 = 0;
            for r in runs[first_after..].iter().rev() {
                older += r.size as u128;
                if older * 100 >= total * self.u.compression_size_percent as u128 {
                    compress = false;
                    break;
                }
            }
        }
        let mut plan = self.plan_range(start, first_after - 1, compress)?;
        plan.disable_compression = !compress;
        Some(plan)
    }

    /// The compaction of runs `start..=end` (RocksDB's PickCompactionWithSortedRunRange):
    /// into the last level when `end` is the oldest run, else into the level just above the
    /// next older run (level 0 when that run is a level-0 file). None when it would write a
    /// key range another compaction writes.
    fn plan_range(&self, start: usize, end: usize, compress: bool) -> Option<CompactionPlan> {
        let runs = self.runs;
        let output_level = if end == runs.len() - 1 {
            self.max_output_level()
        } else if runs[end + 1].level == 0 {
            0
        } else {
            runs[end + 1].level - 1
        };
        // A BOTTOM thread's repick takes only a compaction into the deepest level
        // (RocksDB's `MeetsOutputLevelRequirements`, asked before the range check).
        if !meets_output_level_requirements(self.busy, output_level, self.max_output_level()) {
            return None;
        }
        let start_level = runs[start].level;
        let mut l0_inputs = Vec::new();
        let mut level_inputs: Vec<(usize, Vec<Arc<FileMetaData>>)> = Vec::new();
        for r in &runs[start..=end] {
            match &r.file {
                Some(f) => l0_inputs.push(f.clone()),
                None => level_inputs.push((r.level, self.v.files(r.level).to_vec())),
            }
        }
        // With `incremental`, outputs are also cut at the next older run's file boundaries
        // when that run is deeper than level 1 (to align the runs' files for later
        // incremental picks), and may then grow to twice the target size.
        let bottommost = end == runs.len() - 1;
        let grandparents = match runs.get(end + 1) {
            Some(next) if self.u.incremental && next.level > 1 => self.v.files(next.level).to_vec(),
            _ => Vec::new(),
        };
        let mut output_file_size = max_output_file_size(self.opts, output_level);
        if !bottommost && !grandparents.is_empty() {
            output_file_size = output_file_size.saturating_mul(2);
        }
        let mut plan = CompactionPlan {
            level: start_level,
            output_level,
            bottommost,
            disable_compression: !compress,
            output_file_size: Some(output_file_size),
            rewrite: true,
            grandparents,
            max_grandparent_overlap: self.max_grandparent_overlap(),
            ..Default::default()
        };
        if start_level == 0 {
            plan.inputs = l0_inputs;
        }
        for (level, files) in level_inputs {
            if level == start_level {
                plan.inputs = files;
            } else if level == output_level {
                plan.next_inputs = files;
            } else {
                plan.middle.push((level, files));
            }
        }
        if output_level != 0 && self.busy.conflicts(self.v, &plan) {
            return None;
        }
        Some(plan)
    }
}

/// A manual compaction under universal style (RocksDB's CompactRange with
/// `kCompactAllLevels`): every file of every level into the last level (up to
/// `CfConfig::max_output_level`), whatever range was asked for, its outputs cut at that
/// level's `max_output_file_size`. None when the family is empty.
pub fn pick_manual_universal(v: &Version, opts: &CfConfig) -> Option<CompactionPlan> {
    let last = opts.max_output_level.min(v.num_levels() - 1);
    let start = (0..=last).find(|&l| v.num_files(l) > 0)?;
    let mut plan = CompactionPlan {
        level: start,
        output_level: last,
        inputs: v.files(start).to_vec(),
        bottommost: true,
        output_file_size: Some(max_output_file_size(opts, last)),
        rewrite: true,
        ..Default::default()
    };
    for level in start + 1..=last {
        if v.num_files(level) == 0 {
            continue;
        }
        if level == last {
            plan.next_inputs = v.files(level).to_vec();
        } else {
            plan.middle.push((level, v.files(level).to_vec()));
        }
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CfConfig, CompactionStyle};
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
    use std::collections::HashSet;

    fn file(number: u64, size: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number,
            file_size: size,
            smallest: make_internal_key(b"a", number * 10, ValueType::Value),
            largest: make_internal_key(b"z", number * 10, ValueType::Value),
            smallest_seqno: number * 10,
            largest_seqno: number * 10,
            ..Default::default()
        })
    }

    /// Level-0 files given newest first as (number, size); deeper levels as (level, size).
    fn version(l0: &[(u64, u64)], levels: &[(u32, u64)]) -> Version {
        let mut files: Vec<(u32, Arc<FileMetaData>)> = l0.iter().map(|&(n, s)| (0, file(n, s))).collect();
        for (i, &(l, s)) in levels.iter().enumerate() {
            files.push((l, file(i as u64 + 1, s)));
        }
        Version::new(bytewise_internal_comparator(), 7, files)
    }

    fn opts() -> CfConfig {
        CfConfig {
            style: CompactionStyle::Universal,
            level0_file_num_compaction_trigger: 4,
            age_periodic: 30 * 24 * 60 * 60,
            ..Default::default()
        }
    }

    fn numbers(files: &[Arc<FileMetaData>]) -> Vec<u64> {
        files.iter().map(|f| f.number).collect()
    }

    /// The running-compaction view of `plan` registered: its files busy, its range taken.
    fn registered(
        v: &Version,
        plan: &CompactionPlan,
    ) -> (HashSet<u64>, Vec<super::super::picker::RunningCompaction>) {
        let files = plan.all_inputs().map(|(_, f)| f.number).collect();
        (files, vec![super::super::picker::RunningCompaction::of(v, plan)])
    }

    #[test]
    fn reduce_file_locking_frees_all_but_the_last_file_of_a_bottom_bound_compaction() {
        // Eight level-0 runs: everything goes into the last level (a BOTTOM pool compaction).
        let l0: Vec<(u64, u64)> = (101..=108).rev().map(|n| (n, 10)).collect();
        let v = version(&l0, &[]);
        let o = opts();
        let picked = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!((picked.level, picked.output_level), (0, 6));
        assert_eq!(picked.inputs.len(), 8);
        // reduce_file_locking=false: the picked compaction waits holding all eight; a LOW
        // thread finds nothing to pick meanwhile.
        let (files, running) = registered(&v, &picked);
        let busy = Busy { files: Some(&files), running: &running, ..Default::default() };
        assert!(pick_universal(&v, &o, busy, 0).is_none());
        // reduce_file_locking=true: only the last (oldest) level-0 file stays held, by the
        // intended compaction into level 6; the seven newer runs compact into level 0 now.
        let intended = super::super::picker::intended_for_bottom(CompactionStyle::Universal, &picked);
        assert_eq!((intended.level, intended.output_level), (0, 6));
        assert_eq!(numbers(&intended.inputs), vec![101]);
        let (files, running) = registered(&v, &intended);
        let busy = Busy { files: Some(&files), running: &running, ..Default::default() };
        let low = pick_universal(&v, &o, busy, 0).unwrap();
        assert_eq!(numbers(&low.inputs), vec![108, 107, 106, 105, 104, 103, 102]);
        assert_eq!(low.output_level, 0);
        // The BOTTOM thread's repick while that runs: only compactions into level 6 count,
        // and the one free run cannot make one.
        let (files, running) = registered(&v, &low);
        let busy = Busy {
            files: Some(&files),
            running: &running,
            require_max_output_level: true,
            ..Default::default()
        };
        assert!(pick_universal(&v, &o, busy, 0).is_none());
        // Once it is done, the repick takes everything into level 6 again.
        let busy = Busy { require_max_output_level: true, ..Default::default() };
        assert_eq!(pick_universal(&v, &o, busy, 0).unwrap().output_level, 6);
    }

    #[test]
    fn a_bottom_repick_takes_only_compactions_into_the_last_level() {
        // The three new runs would go above the big old run (level 5), not into level 6.
        let v = version(&[(104, 10), (103, 10), (102, 10)], &[(6, 10_000)]);
        assert_eq!(pick_universal(&v, &opts(), Busy::default(), 0).unwrap().output_level, 5);
        let busy = Busy { require_max_output_level: true, ..Default::default() };
        assert!(pick_universal(&v, &opts(), busy, 0).is_none());
    }

    #[test]
    fn the_intended_compaction_takes_the_last_input_position_as_rocksdb() {
        // Universal from level 4: the last position with files is level 6's (position 2),
        // all of whose files stay held, the intended compaction starting at "level" 2.
        let v = version(&[], &[(4, 10), (5, 10), (6, 10), (6, 10)]);
        let p = CompactionPlan {
            level: 4,
            output_level: 6,
            inputs: v.files(4).to_vec(),
            middle: vec![(5, v.files(5).to_vec())],
            next_inputs: v.files(6).to_vec(),
            ..Default::default()
        };
        let i = super::super::picker::intended_for_bottom(CompactionStyle::Universal, &p);
        assert_eq!((i.level, i.output_level, i.inputs.len()), (2, 6, 2));
        // Leveled 5 -> 6 with files in level 6: position 1, every level-6 input.
        let p = CompactionPlan {
            level: 5,
            output_level: 6,
            inputs: v.files(5).to_vec(),
            next_inputs: v.files(6).to_vec(),
            ..Default::default()
        };
        let i = super::super::picker::intended_for_bottom(CompactionStyle::Level, &p);
        assert_eq!((i.level, i.inputs.len()), (1, 2));
        // Without level-6 inputs: position 0, only the last input file.
        let p =
            CompactionPlan { level: 5, output_level: 6, inputs: v.files(6).to_vec(), ..Default::default() };
        let i = super::super::picker::intended_for_bottom(CompactionStyle::Level, &p);
        assert_eq!((i.level, numbers(&i.inputs)), (0, vec![v.files(6)[1].number]));
    }

    #[test]
    fn nothing_below_the_trigger() {
        let v = version(&[(103, 10), (102, 10), (101, 10)], &[]);
        assert!(pick_universal(&v, &opts(), Busy::default(), 0).is_none());
    }

    #[test]
    fn first_compaction_goes_to_the_last_level() {
        let v = version(&[(104, 10), (103, 10), (102, 10), (101, 10)], &[]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!((p.level, p.output_level), (0, 6));
        assert_eq!(numbers(&p.inputs), vec![104, 103, 102, 101]);
        assert!(p.bottommost);
        assert!(!p.is_trivial_move());
    }

    #[test]
    fn size_amplification_merges_everything_into_the_oldest_run() {
        // 4 runs of 100 over a base of 100: 300% > 200%.
        let v = version(&[(104, 100), (103, 100), (102, 100)], &[(6, 100)]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!((p.level, p.output_level), (0, 6));
        assert_eq!(p.inputs.len(), 3);
        assert_eq!(p.next_inputs.len(), 1);
        assert!(p.bottommost);
    }

    #[test]
    fn size_amplification_leaves_the_last_level_out_with_preclude() {
        // Runs 100, 100 over level 5's 50 over the last level's 100: measured against level
        // 5's run (200 > 200% of 50) and merged into it, the last level's run left alone.
        let v = version(&[(104, 100), (103, 100)], &[(5, 50), (6, 100)]);
        let mut o = opts();
        o.universal.size_ratio = 0;
        o.universal.min_merge_width = 10;
        o.preclude_last_level_data_seconds = 100;
        let p = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!((p.level, p.output_level), (0, 5));
        assert_eq!(p.next_inputs.len(), 1);
        // Without it, the size amplification over the last level (250 < 200% of 100 is
        // false: 250 > 200) merges everything into level 6.
        o.preclude_last_level_data_seconds = 0;
        let p = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!(p.output_level, 6);
    }

    #[test]
    fn size_ratio_picks_the_small_new_runs_above_the_big_one() {
        // Base 10000: no size amp (30 < 200%); the three new files are similar, the old run is not.
        let v = version(&[(104, 10), (103, 10), (102, 10)], &[(6, 10_000)]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p.inputs), vec![104, 103, 102]);
        assert_eq!(p.output_level, 5, "the level just above the next older run");
        assert!(p.next_inputs.is_empty() && p.middle.is_empty());
        assert!(!p.bottommost);
    }

    #[test]
    fn runs_stop_at_a_busy_run_and_output_to_level_0() {
        let v = version(&[(105, 10), (104, 10), (103, 10), (102, 10), (101, 10)], &[(6, 10_000)]);
        let busy_files: HashSet<u64> = [102].into_iter().collect();
        let busy = Busy { files: Some(&busy_files), ..Default::default() };
        let p = pick_universal(&v, &opts(), busy, 0).unwrap();
        assert_eq!(numbers(&p.inputs), vec![105, 104, 103]);
        assert_eq!(p.output_level, 0, "the next older run is a level-0 file");
    }

    #[test]
    fn similar_stop_style_and_merge_widths() {
        let mut o = opts();
        o.universal.stop_style = StopStyle::Similar;
        // 10, 10, 20 would be taken by Total (20 <= 1.01*20); Similar stops at 20 > 1.01*10.
        let v = version(&[(104, 10), (103, 10), (102, 20)], &[(6, 100_000)]);
        let p = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p.inputs), vec![104, 103]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p.inputs), vec![104, 103, 102]);
        let mut o = opts();
        o.universal.max_merge_width = 2;
        let p = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!(p.inputs.len(), 2);
        let mut o = opts();
        o.universal.min_merge_width = 4;
        // No size-ratio pick of 4; the run count (4 runs, trigger 4) is within bounds.
        assert!(pick_universal(&v, &o, Busy::default(), 0).is_none());
    }

    #[test]
    fn run_count_merges_regardless_of_size() {
        // Sizes grow fast: no ratio pick; 6 runs over a trigger of 4 -> merge 3 newest.
        let v = version(&[(105, 1), (104, 10), (103, 100)], &[(3, 1000), (4, 10_000), (6, 100_000)]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p.inputs), vec![105, 104, 103]);
        assert_eq!(p.output_level, 2);
        let v = version(&[(105, 1), (104, 10)], &[(2, 100), (3, 1000), (4, 10_000), (6, 100_000)]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p.inputs), vec![105, 104]);
        assert_eq!(p.next_inputs.len(), 1, "level 2 is merged into itself");
        assert_eq!(p.output_level, 2);
    }

    #[test]
    fn compression_size_percent_leaves_young_data_uncompressed() {
        let mut o = opts();
        o.universal.compression_size_percent = 50;
        let v = version(&[(104, 10), (103, 10), (102, 10)], &[(6, 10_000)]);
        let p = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert!(p.disable_compression, "the untouched oldest run holds > 50%");
        o.universal.compression_size_percent = -1;
        assert!(!pick_universal(&v, &o, Busy::default(), 0).unwrap().disable_compression);
    }

    #[test]
    fn periodic_compaction_takes_every_run() {
        let mut o = opts();
        o.age_periodic = 100;
        let old = Arc::new(FileMetaData { file_creation_time: 500, ..(*file(9, 10)).clone() });
        let v = Version::new(bytewise_internal_comparator(), 7, vec![(0, file(101, 10)), (6, old)]);
        let p = pick_universal(&v, &o, Busy::default(), 1000).unwrap();
        assert_eq!((p.level, p.output_level), (0, 6));
        assert_eq!((p.inputs.len(), p.next_inputs.len()), (1, 1));
        assert!(pick_universal(&v, &o, Busy::default(), 550).is_none(), "not due yet, 2 runs < trigger");
    }

    #[test]
    fn manual_takes_every_level() {
        let v = version(&[(104, 10)], &[(3, 100), (5, 100), (6, 1000)]);
        let p = pick_manual_universal(&v, &CfConfig { max_output_level: 6, ..opts() }).unwrap();
        assert_eq!((p.level, p.output_level), (0, 6));
        assert_eq!(p.middle.iter().map(|(l, _)| *l).collect::<Vec<_>>(), vec![3, 5]);
        assert_eq!(p.next_inputs.len(), 1);
        assert_eq!(p.all_inputs().count(), 4);
    }

    #[test]
    fn sorted_runs_counts_levels() {
        let v = version(&[(104, 10), (103, 10)], &[(3, 100), (6, 1000)]);
        assert_eq!(num_sorted_runs(&v), 4);
        let runs = sorted_runs(&v, Busy::default());
        assert_eq!(runs.iter().map(|r| r.level).collect::<Vec<_>>(), vec![0, 0, 3, 6]);
    }

    /// A file of `level` holding user keys `lo..=hi` (3-digit numbers).
    fn ranged(number: u64, lo: u32, hi: u32, size: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number,
            file_size: size,
            smallest: make_internal_key(format!("{lo:03}").as_bytes(), number * 10, ValueType::Value),
            largest: make_internal_key(format!("{hi:03}").as_bytes(), number * 10, ValueType::Value),
            smallest_seqno: number * 10,
            largest_seqno: number * 10,
            ..Default::default()
        })
    }

    /// Level 5: six files of 10 bytes, `i*10+1..=i*10+5` (numbers 51..56); level 6: six
    /// files `i*10..=i*10+9` (numbers 61..66) of the given sizes; `more` added.
    fn two_runs(bottom_sizes: [u64; 6], more: Vec<(u32, Arc<FileMetaData>)>) -> Version {
        let mut files = more;
        for i in 0..6u32 {
            files.push((5, ranged(51 + u64::from(i), i * 10 + 1, i * 10 + 5, 10)));
            files.push((6, ranged(61 + u64::from(i), i * 10, i * 10 + 9, bottom_sizes[i as usize])));
        }
        Version::new(bytewise_internal_comparator(), 7, files)
    }

    fn incremental_opts(max_compaction_bytes: u64) -> CfConfig {
        let mut o = opts();
        o.level0_file_num_compaction_trigger = 2;
        o.universal.max_size_amplification_percent = 10;
        o.universal.incremental = true;
        o.max_compaction_bytes = max_compaction_bytes;
        o
    }

    /// RocksDB's PickIncrementalForReduceSizeAmp, worked by hand: with max_compaction_bytes
    /// 100 the window grows past 50 bytes and is measured. Over level 6's sizes 100, 100, 5,
    /// 5, 100, 100 the windows measured are {51} (fanout 10), {52} (10), {53, 54, 55}
    /// (110 / 30) and {56} (10): the third wins (under 1.8 * 410 / 60), with the level-6
    /// files it overlaps.
    #[test]
    fn incremental_takes_the_window_of_lowest_fanout() {
        let v = two_runs([100, 100, 5, 5, 100, 100], Vec::new());
        let p = pick_universal(&v, &incremental_opts(100), Busy::default(), 0).unwrap();
        assert_eq!((p.level, p.output_level), (5, 6));
        assert_eq!(numbers(&p.inputs), vec![53, 54, 55]);
        assert_eq!(numbers(&p.next_inputs), vec![63, 64, 65]);
        assert!(p.middle.is_empty() && p.bottommost);
        assert_eq!(p.input_bytes(), 140);
        // Without `incremental`: both runs whole.
        let mut o = incremental_opts(100);
        o.universal.incremental = false;
        let p = pick_universal(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!((p.inputs.len(), p.next_inputs.len()), (6, 6));
        assert_eq!(p.input_bytes(), 470);
    }

    /// Even sizes: every window has the same fanout; the first over the size wins. With a
    /// larger max_compaction_bytes the window is wider.
    #[test]
    fn incremental_window_follows_max_compaction_bytes() {
        let v = two_runs([100; 6], Vec::new());
        let p = pick_universal(&v, &incremental_opts(100), Busy::default(), 0).unwrap();
        assert_eq!((numbers(&p.inputs), numbers(&p.next_inputs)), (vec![51], vec![61]));
        let p = pick_universal(&v, &incremental_opts(600), Busy::default(), 0).unwrap();
        assert_eq!((numbers(&p.inputs), numbers(&p.next_inputs)), (vec![51, 52, 53], vec![61, 62, 63]));
        assert!(p.input_bytes() <= 600);
    }

    /// The runs above the second-last one give their files lying within the range (up to a
    /// level-0 run, which is never split); the start level is then the highest.
    #[test]
    fn incremental_takes_upper_runs_within_the_range() {
        let more = vec![(0, ranged(90, 0, 59, 1)), (4, ranged(41, 22, 28, 1)), (4, ranged(42, 52, 58, 1))];
        let v = two_runs([100, 100, 5, 5, 100, 100], more);
        let p = pick_universal(&v, &incremental_opts(100), Busy::default(), 0).unwrap();
        assert_eq!((p.level, p.output_level), (4, 6));
        assert_eq!(numbers(&p.inputs), vec![41]);
        assert_eq!(p.middle.len(), 1);
        assert_eq!((p.middle[0].0, numbers(&p.middle[0].1)), (5, vec![53, 54, 55]));
        assert_eq!(numbers(&p.next_inputs), vec![63, 64, 65]);
    }

    /// No window under 1.8 times the full compaction's fanout, or a second-last run in level
    /// 0: the whole runs, as without `incremental`.
    #[test]
    fn incremental_falls_back_to_the_whole_runs() {
        // Level 0 as the second-last run.
        let v = Version::new(
            bytewise_internal_comparator(),
            7,
            vec![(0, ranged(90, 0, 59, 100)), (6, ranged(61, 0, 29, 300)), (6, ranged(62, 30, 59, 300))],
        );
        let p = pick_universal(&v, &incremental_opts(100), Busy::default(), 0).unwrap();
        assert_eq!((p.inputs.len(), p.next_inputs.len()), (1, 2));
        // A big level-0 run makes the threshold 1.8 * 200 / 1020: every window's fanout (10)
        // is over it.
        let v = Version::new(
            bytewise_internal_comparator(),
            7,
            vec![
                (0, ranged(90, 0, 59, 1000)),
                (5, ranged(51, 1, 5, 10)),
                (5, ranged(52, 31, 35, 10)),
                (6, ranged(61, 0, 29, 100)),
                (6, ranged(62, 30, 59, 100)),
            ],
        );
        let p = pick_universal(&v, &incremental_opts(100), Busy::default(), 0).unwrap();
        assert_eq!((p.level, numbers(&p.inputs)), (0, vec![90]));
        assert_eq!((p.middle[0].0, numbers(&p.middle[0].1)), (5, vec![51, 52]));
        assert_eq!(numbers(&p.next_inputs), vec![61, 62]);
    }

    /// RocksDB's SetupOtherInputs: the second-last run's inputs grow to the files within
    /// the range of what they take below, when that adds no file below and stays under twice
    /// max_compaction_bytes.
    #[test]
    fn setup_other_inputs_grows_within_the_output_range() {
        let files = vec![
            (5, ranged(51, 21, 25, 10)),
            (5, ranged(52, 31, 35, 10)),
            (5, ranged(53, 45, 47, 10)),
            (6, ranged(61, 20, 39, 100)),
            (6, ranged(62, 40, 49, 100)),
        ];
        let v = Version::new(bytewise_internal_comparator(), 7, files);
        let o = incremental_opts(1000);
        let runs = sorted_runs(&v, Busy::default());
        let picker = Picker {
            v: &v,
            opts: &o,
            u: &o.universal,
            runs: &runs,
            busy: Busy::default(),
            periodic_limit: None,
            max_output_level: 6,
        };
        let (ins, out) = picker.setup_other_inputs(5, vec![v.files(5)[0].clone()], 6).unwrap();
        assert_eq!((numbers(&ins), numbers(&out)), (vec![51, 52], vec![61]));
        // Over the limit (2 * 50 <= 100 + 20): not grown.
        let o = incremental_opts(50);
        let picker = Picker { opts: &o, u: &o.universal, ..picker };
        let (ins, _) = picker.setup_other_inputs(5, vec![v.files(5)[0].clone()], 6).unwrap();
        assert_eq!(numbers(&ins), vec![51]);
        // A busy file below: no compaction.
        let busy_files: HashSet<u64> = [61].into_iter().collect();
        let picker = Picker { busy: Busy { files: Some(&busy_files), ..Default::default() }, ..picker };
        assert!(picker.setup_other_inputs(5, vec![v.files(5)[0].clone()], 6).is_none());
    }

    /// RocksDB's GetCleanInputsWithinInterval: files wholly inside, less those sharing a
    /// user key with a neighbour left out.
    #[test]
    fn clean_inputs_within_drops_split_keys() {
        let v = Version::new(
            bytewise_internal_comparator(),
            7,
            vec![
                (3, ranged(31, 0, 9, 1)),
                (3, ranged(32, 10, 19, 1)),
                (3, ranged(33, 19, 29, 1)),
                (3, ranged(34, 30, 39, 1)),
            ],
        );
        let k = |n: u32| make_internal_key(format!("{n:03}").as_bytes(), 0, ValueType::Value);
        assert_eq!(numbers(&clean_inputs_within(&v, 3, &k(0), &k(39))), vec![31, 32, 33, 34]);
        // 32 and 33 share key 19: taking 32 without 33 would split it.
        assert_eq!(numbers(&clean_inputs_within(&v, 3, &k(0), &k(25))), vec![31]);
        assert_eq!(numbers(&clean_inputs_within(&v, 3, &k(15), &k(39))), vec![34]);
        assert_eq!(numbers(&clean_inputs_within(&v, 3, &k(5), &k(35))), vec![32, 33]);
    }

    #[test]
    fn outputs_are_cut_at_the_target_file_size_below_level_0() {
        let v = version(&[(104, 10), (103, 10), (102, 10), (101, 10)], &[]);
        let p = pick_universal(&v, &opts(), Busy::default(), 0).unwrap();
        assert_eq!(p.output_file_size, Some(opts().target_file_size(6)));
        let mut o = opts();
        o.num_levels = 1;
        o.max_output_level = 0;
        let v1 = Version::new(
            bytewise_internal_comparator(),
            1,
            v.files(0).iter().map(|f| (0, f.clone())).collect(),
        );
        let p = pick_universal(&v1, &o, Busy::default(), 0).unwrap();
        assert_eq!((p.output_level, p.output_file_size), (0, Some(u64::MAX)));
    }
}
