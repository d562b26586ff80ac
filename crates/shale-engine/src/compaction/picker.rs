//! Leveled compaction picking: a pure function of a Version, the options and what is
//! being compacted already.
//!
//! Scores as RocksDB's level style: level 0 by file count over
//! `level0_file_num_compaction_trigger`, level n by bytes over its target (see
//! [`level_targets`]: `max_bytes_for_level_base * multiplier^(n-1)`, or with
//! `level_compaction_dynamic_level_bytes` targets sized from the last level up). Levels with
//! a score of at least 1 are tried highest score first. Level 0 compacts its oldest files
//! (all of them, or as many as fit in `max_compaction_bytes` together with their overlaps)
//! into the base level (level 1, or with dynamic level bytes the highest level that needs
//! data), one such compaction at a time; a deeper level compacts one file into the next
//! level, the first free one in RocksDB's `kMinOverlappingRatio` order (the default and only
//! `compaction_pri` Shale takes): fewest bytes of the next level overlapped per byte of the
//! file, old files boosted toward their `ttl` (`picker_ttl.rs`).
//!
//! Several compactions may run at once in one family (`Busy`): a plan never reads a file
//! another compaction reads, and never writes a key range of an output level that another
//! compaction writes, so the level stays sorted and disjoint whatever finishes first.

use std::collections::HashSet;
use std::sync::Arc;

use crate::config::CfConfig;
use crate::config::{CompactionPri, CompactionStyle};
use crate::key::{user_key, ValueType};
use crate::version::edit::FileMetaData;
use crate::version::Version;
use shale_base::compression::CompressionType;

/// What one compaction reads and where it writes.
#[derive(Debug, Clone, Default)]
pub struct CompactionPlan {
    pub level: usize,
    pub output_level: usize,
    /// Files of `level`.
    pub inputs: Vec<Arc<FileMetaData>>,
    /// Files of `output_level` that overlap `inputs` (universal: all of them).
    pub next_inputs: Vec<Arc<FileMetaData>>,
    /// Universal compaction: whole levels strictly between `level` and `output_level` that are
    /// inputs too (each level once, in level order).
    pub middle: Vec<(usize, Vec<Arc<FileMetaData>>)>,
    /// No deeper level holds keys in the compaction's range: deletions can be dropped.
    pub bottommost: bool,
    /// FIFO's size and TTL compactions: the inputs are deleted, nothing is written.
    pub deletion_only: bool,
    /// A FIFO deletion picked by TTL, not by size (which ticker counts it:
    /// `rocksdb.fifo.ttl.compactions` or `rocksdb.fifo.max.size.compactions`).
    pub fifo_ttl: bool,
    /// Universal's `compression_size_percent`: the outputs are written uncompressed.
    pub disable_compression: bool,
    /// The size at which outputs are cut (None: the output level's target file size).
    pub output_file_size: Option<u64>,
    /// The inputs are always rewritten, never moved unchanged (universal without
    /// `allow_trivial_move`).
    pub rewrite: bool,
    /// Universal with `allow_trivial_move`: no two inputs overlap, so every input moves to
    /// `output_level` unchanged (RocksDB's `Compaction::is_trivial_move_`).
    pub move_all: bool,
    /// Why an automatic leveled compaction was picked, as RocksDB's EVENT_LOG_v1 names it
    /// (`compaction_started.compaction_reason`); None: "Unknown".
    pub reason: Option<&'static str>,
    /// `compaction_pri` kRoundRobin: the compact cursor the compaction records for its start
    /// level (RocksDB's `AddCompactCursor` with `GetNextCompactCursor`), installed with it.
    pub compact_cursor: Option<(u32, Vec<u8>)>,
    /// FIFO's temperature change (`file_temperature_age_thresholds`): the temperature the
    /// outputs are recorded at, instead of the family's write temperature.
    pub output_temperature: Option<u8>,
    /// FIFO's temperature change with `allow_trivial_copy_when_change_temperature`: the one
    /// input's bytes are copied to a new file, not rewritten (RocksDB's
    /// `Compaction::is_trivial_copy_compaction`).
    pub trivial_copy: bool,
    /// Universal with `incremental`: the files of the run just below the output (RocksDB's
    /// `grandparents`, taken when that run is deeper than level 1); outputs are also cut
    /// at their boundaries (`job::JobInput::grandparents`).
    pub grandparents: Vec<Arc<FileMetaData>>,
    /// RocksDB's `Compaction::max_compaction_bytes_` as output cutting reads it with
    /// grandparents (universal's `GetMaxOverlappingBytes`; None: no limit).
    pub max_grandparent_overlap: Option<u64>,
}

/// RocksDB's `GetCompressionType` and `GetCompressionOptions`: the codec and options of a
/// compaction's outputs written to `level` (`enable`: false for universal's
/// `compression_size_percent` outputs). The bottommost level (the last non-empty level of
/// `v`, or deeper) takes `bottommost_compression` (and `bottommost_compression_opts` when
/// enabled); else `compression_per_level` at `0` for level 0 and `level - base_level + 1`
/// for the others (clamped to its ends); else `compression`. The base level is where level
/// 0 compacts to under the level style, 1 otherwise (RocksDB's universal picker passes 1);
/// FIFO compactions write with `compression` (RocksDB's FIFO picker).
pub fn output_compression(
    v: &Version,
    opts: &CfConfig,
    level: usize,
    enable: bool,
) -> (CompressionType, crate::table::builder::CompressionOpts) {
    if opts.style == CompactionStyle::Fifo {
        return (opts.compression, opts.compression_opts.clone());
    }
    if !enable {
        return (CompressionType::None, opts.compression_opts.clone());
    }
    let bottommost = level + 1 >= super::picker_ttl::num_non_empty_levels(v);
    let copts = match (&opts.bottommost_compression_opts, bottommost) {
        (Some(b), true) => b.clone(),
        _ => opts.compression_opts.clone(),
    };
    if let (Some(c), true) = (opts.bottommost_compression, bottommost) {
        return (c, copts);
    }
    let per_level = &opts.compression_per_level;
    if per_level.is_empty() {
        return (opts.compression, copts);
    }
    let base = if opts.style == CompactionStyle::Level { level_targets(v, opts).base_level } else { 1 };
    let idx = if level == 0 { 0 } else { (level as i64 - base as i64 + 1).max(0) as usize };
    (per_level[idx.min(per_level.len() - 1)], copts)
}

impl CompactionPlan {
    /// One input file and nothing to merge with: the file can move down unchanged.
    pub fn is_trivial_move(&self) -> bool {
        !self.deletion_only
            && !self.rewrite
            && self.next_inputs.is_empty()
            && self.middle.is_empty()
            && self.inputs.len() == 1
    }

    /// Every input with its level: `inputs`, then `middle`, then `next_inputs`.
    pub fn all_inputs(&self) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> {
        let first = self.inputs.iter().map(move |f| (self.level, f));
        let middle = self.middle.iter().flat_map(|(l, files)| files.iter().map(move |f| (*l, f)));
        let next = self.next_inputs.iter().map(move |f| (self.output_level, f));
        first.chain(middle).chain(next)
    }

    pub fn num_input_files(&self) -> usize {
        self.all_inputs().count()
    }

    pub fn input_bytes(&self) -> u64 {
        self.all_inputs().map(|(_, f)| f.file_size).sum()
    }
}

/// The size targets of a version's levels and where level 0 compacts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelTargets {
    /// The level that level 0 compacts into.
    pub base_level: usize,
    /// Target bytes per level (index = level; u64::MAX = no target: level 0, and with dynamic
    /// level bytes the empty levels above the base level).
    pub max_bytes: Vec<u64>,
}

/// RocksDB's `VersionStorageInfo::CalculateBaseBytes` for level compaction.
///
/// Static (the default): base level 1, level n's target is
/// `max_bytes_for_level_base * multiplier^(n-1)`.
///
/// Dynamic (`level_compaction_dynamic_level_bytes`): the largest level's size, divided by the
/// multiplier once per level up to the first non-empty level, tells how many levels the data
/// needs. The base level is the first non-empty level, moved up while its would-be target
/// exceeds `max_bytes_for_level_base` (never above level 1); its target is that size (at
/// least `base / multiplier + 1` when the data needs fewer levels than it has), and each
/// level below multiplies it, no target being under `max_bytes_for_level_base`. With no data
/// below level 0 the base level is the last level.
pub fn level_targets(v: &Version, opts: &CfConfig) -> LevelTargets {
    let n = v.num_levels();
    let mult = opts.max_bytes_for_level_multiplier;
    let mut max_bytes = vec![u64::MAX; n];
    if !opts.level_compaction_dynamic_level_bytes {
        for (level, t) in max_bytes.iter_mut().enumerate().skip(1) {
            *t = opts.max_bytes_for_level(level);
        }
        return LevelTargets { base_level: 1.min(n.saturating_sub(1)), max_bytes };
    }
    let sizes: Vec<u64> = (0..n).map(|l| v.level_bytes(l)).collect();
    let max_level_size = sizes.iter().skip(1).copied().max().unwrap_or(0);
    let Some(first_non_empty) = (1..n).find(|&l| sizes[l] > 0) else {
        return LevelTargets { base_level: n.saturating_sub(1), max_bytes };
    };
    let base_bytes_max = opts.max_bytes_for_level_base.max(1);
    let base_bytes_min = (base_bytes_max as f64 / mult) as u64;
    let mut cur = max_level_size;
    for _ in (first_non_empty..n - 1).rev() {
        cur = (cur as f64 / mult) as u64;
    }
    let mut base_level = first_non_empty;
    let base_level_size = if cur <= base_bytes_min {
        // A multiplier of 0 (taken by SetOptions, as RocksDB's) makes the minimum u64::MAX.
        base_bytes_min.saturating_add(1)
    } else {
        while base_level > 1 && cur > base_bytes_max {
            base_level -= 1;
            cur = (cur as f64 / mult) as u64;
        }
        if cur > base_bytes_max {
            base_bytes_max
        } else {
            cur.max(1)
        }
    };
    let mut level_size = base_level_size;
    for (level, t) in max_bytes.iter_mut().enumerate().skip(base_level) {
        if level > base_level {
            level_size = multiply_saturating(level_size, mult);
        }
        *t = level_size.max(base_bytes_max);
    }
    LevelTargets { base_level, max_bytes }
}

fn multiply_saturating(v: u64, m: f64) -> u64 {
    let x = v as f64 * m;
    if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x as u64
    }
}

/// Per-level scores; index = level (the last level never compacts further).
pub fn level_scores(v: &Version, opts: &CfConfig) -> Vec<f64> {
    let n = v.num_levels();
    let mut scores = vec![0.0; n];
    if n < 2 {
        return scores;
    }
    let targets = level_targets(v, opts);
    scores[0] = v.num_files(0) as f64 / opts.level0_file_num_compaction_trigger.max(1) as f64;
    for (level, score) in scores.iter_mut().enumerate().take(n - 1).skip(1) {
        *score = v.level_bytes(level) as f64 / targets.max_bytes[level] as f64;
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
    /// With per-key placement (`proximal.rs`): what it may write to the proximal level.
    pub proximal: Option<super::proximal::ProximalOutput>,
}

impl RunningCompaction {
    /// `plan` without per-key placement (a level refit).
    pub fn of(v: &Version, plan: &CompactionPlan) -> RunningCompaction {
        let all: Vec<Arc<FileMetaData>> = plan.all_inputs().map(|(_, f)| f.clone()).collect();
        let (smallest, largest) = key_range(v, &all);
        RunningCompaction {
            level: plan.level,
            output_level: plan.output_level,
            smallest,
            largest,
            proximal: None,
        }
    }

    /// `plan` as the family's options make it run: with its proximal output, if any.
    pub fn of_plan(v: &Version, opts: &CfConfig, plan: &CompactionPlan) -> RunningCompaction {
        RunningCompaction { proximal: super::proximal::proximal_output(v, opts, plan), ..Self::of(v, plan) }
    }

    /// RocksDB's `CompactionPicker::RangeOverlapWithCompaction` for this one: it writes
    /// `level` in a range meeting `[smallest, largest]`, or its proximal output range meets
    /// it (whatever `level`).
    fn writes_into(&self, v: &Version, level: usize, smallest: &[u8], largest: &[u8]) -> bool {
        let icmp = v.icmp();
        if self.output_level == level
            && icmp.compare_user_without_ts(smallest, &self.largest).is_le()
            && icmp.compare_user_without_ts(&self.smallest, largest).is_le()
        {
            return true;
        }
        self.proximal.as_ref().is_some_and(|p| super::proximal::overlaps(v, p, smallest, largest))
    }
}

/// What a family is compacting already: files being read and ranges being written.
#[derive(Default, Clone, Copy)]
pub struct Busy<'a> {
    pub files: Option<&'a HashSet<u64>>,
    pub running: &'a [RunningCompaction],
    /// The counts of a table's properties that kByCompensatedSize needs (None: unknown, the
    /// file counts by its size alone). Only asked with that `compaction_pri`.
    pub stats: Option<&'a StatsFn<'a>>,
    /// RocksDB's `VersionStorageInfo::oldest_snapshot_seqnum_`: the oldest snapshot held when
    /// a snapshot was last released (the last sequence then, if none was left), 0 until one
    /// is. Bottommost files whose entries are all older may be compacted in place
    /// ([`pick_bottommost_files`]).
    pub oldest_snapshot: u64,
    /// The family's options, for per-key placement's conflicts (`proximal.rs`); [`pick`]
    /// sets it.
    pub opts: Option<&'a CfConfig>,
    /// A BOTTOM thread's repick (RocksDB's `require_max_output_level`): universal picks
    /// only a compaction writing the deepest level a compaction may write, not level 0
    /// (`MeetsOutputLevelRequirements`); the leveled and FIFO pickers ignore it, as RocksDB's.
    pub require_max_output_level: bool,
}

/// How the picker learns a table's counts (`Busy::stats`).
pub type StatsFn<'a> = dyn Fn(&FileMetaData) -> Option<FileStats> + 'a;

/// The counts of a table's properties RocksDB keeps in its `FileMetaData` to compensate
/// deletions (`MaybeInitializeFileMetaData`), and its newest key time; loaded into
/// `FileMetaData::table_stats` when a Version is built (`db/file_stats.rs`).
pub type FileStats = crate::version::edit::TableStats;

/// RocksDB's `ComputeCompensatedSizes`: a file's size, plus, when its point deletions are at
/// least half its entries, `(2 * deletions - entries) * average value size * 2`, plus its
/// `compensated_range_deletion_size`. The average value size is RocksDB's
/// `GetAverageValueSize` over the files whose counts are known (RocksDB accumulates it over
/// the files it sampled since open; Shale takes every live file of the version).
pub fn compensated_sizes(v: &Version, stats: &StatsFn<'_>) -> Vec<Vec<u64>> {
    const DELETION_WEIGHT_ON_COMPACTION: u64 = 2;
    let known: Vec<Vec<Option<FileStats>>> =
        (0..v.num_levels()).map(|l| v.files(l).iter().map(|f| stats(f)).collect()).collect();
    let (mut file_size, mut raw, mut raw_value, mut non_deletions) = (0u64, 0u64, 0u64, 0u64);
    for (l, level) in known.iter().enumerate() {
        for (f, s) in v.files(l).iter().zip(level) {
            if let Some(s) = s {
                file_size = file_size.saturating_add(f.file_size);
                raw = raw.saturating_add(s.raw_key_size).saturating_add(s.raw_value_size);
                raw_value = raw_value.saturating_add(s.raw_value_size);
                non_deletions = non_deletions.saturating_add(s.num_entries.saturating_sub(s.num_deletions));
            }
        }
    }
    let average_value_size = if non_deletions == 0 || raw == 0 {
        0
    } else {
        ((raw_value / non_deletions) as u128 * file_size as u128 / raw as u128) as u64
    };
    known
        .iter()
        .enumerate()
        .map(|(l, level)| {
            v.files(l)
                .iter()
                .zip(level)
                .map(|(f, s)| {
                    let mut size = f.file_size;
                    if let Some(s) = s {
                        let point = s.num_deletions.saturating_sub(s.num_range_deletions);
                        if point.saturating_mul(2) >= s.num_entries {
                            size = size.saturating_add(
                                (point * 2 - s.num_entries)
                                    .saturating_mul(average_value_size)
                                    .saturating_mul(DELETION_WEIGHT_ON_COMPACTION),
                            );
                        }
                    }
                    size.saturating_add(f.compensated_range_deletion_size)
                })
                .collect()
        })
        .collect()
}

impl Busy<'_> {
    pub fn file(&self, number: u64) -> bool {
        self.files.is_some_and(|f| f.contains(&number))
    }

    /// True when `plan` would read a busy file or write a range another compaction writes.
    pub fn conflicts(&self, v: &Version, plan: &CompactionPlan) -> bool {
        if plan.all_inputs().any(|(_, f)| self.file(f.number)) {
            return true;
        }
        let mine = RunningCompaction::of(v, plan);
        // Without timestamps, as RocksDB's `FilesRangeOverlapWithCompaction`: with per-key
        // placement the proximal level is checked too (universal: the whole range; leveled:
        // the range of the inputs above the output level).
        if let Some(p) = self.opts.and_then(|o| super::proximal::proximal_output(v, o, plan)) {
            let range = match self.opts.map(|o| o.style) {
                Some(CompactionStyle::Universal) => Some((mine.smallest.clone(), mine.largest.clone())),
                _ => super::proximal::range_excluding(v, plan, plan.output_level),
            };
            if let Some((lo, hi)) = range {
                if self.running.iter().any(|r| r.writes_into(v, p.level, &lo, &hi)) {
                    return true;
                }
            }
        }
        self.running.iter().any(|r| r.writes_into(v, mine.output_level, &mine.smallest, &mine.largest))
    }
}

/// RocksDB 11.8.1's `CreateIntendedCompactionForwardedToBottomPriorityPool`
/// (`compaction_options_universal.reduce_file_locking`): what a compaction handed to the
/// BOTTOM pool keeps held until a BOTTOM thread picks again. RocksDB takes the compaction's
/// last non-empty input level by its *position* in the compaction's inputs (universal:
/// `level - start level`; leveled: 0 for the start level, 1 for the output level) and makes
/// that position the intended compaction's start level; at position 0 it holds only the
/// last file, else every file there. Its output level is the picked one's. Positions are
/// kept as RocksDB has them (so an intended compaction at position 0 counts as a level-0
/// compaction, holding other level-0 compactions back while it waits, as in RocksDB).
pub fn intended_for_bottom(style: CompactionStyle, plan: &CompactionPlan) -> CompactionPlan {
    let position = |level: usize| match style {
        CompactionStyle::Universal => level - plan.level,
        _ => usize::from(level != plan.level),
    };
    let mut levels: Vec<(usize, &Vec<Arc<FileMetaData>>)> = vec![(plan.level, &plan.inputs)];
    levels.extend(plan.middle.iter().map(|(l, f)| (*l, f)));
    if plan.output_level != plan.level {
        levels.push((plan.output_level, &plan.next_inputs));
    }
    let (at, files) = levels
        .into_iter()
        .filter(|(_, f)| !f.is_empty())
        .map(|(l, f)| (position(l), f))
        .max_by_key(|(p, _)| *p)
        .unwrap_or((0, &plan.inputs));
    let inputs = if at == 0 { files.last().cloned().into_iter().collect() } else { files.clone() };
    CompactionPlan {
        level: at,
        output_level: plan.output_level,
        inputs,
        bottommost: plan.bottommost,
        reason: plan.reason,
        ..Default::default()
    }
}

/// The compaction to run next, if any level is over its target and a compaction of it does
/// not collide with `busy`.
pub fn pick(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    if opts.disable_auto_compactions {
        return None;
    }
    pick_due(v, opts, busy)
}

/// The compaction due on `v` whether or not automatic compactions are on (RocksDB's
/// `CompactionPicker::NeedsCompaction`, which `rocksdb.compaction-pending` answers from and
/// which does not look at `disable_auto_compactions`).
pub fn pick_due(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let busy = Busy { opts: Some(opts), ..busy };
    match opts.style {
        CompactionStyle::Fifo => return super::fifo::pick_fifo(v, opts, busy, unix_now()),
        CompactionStyle::Universal => {
            return super::universal::pick_universal(v, opts, busy, unix_now());
        }
        // RocksDB's NullCompactionPicker: NeedsCompaction false, PickCompaction nullptr.
        CompactionStyle::None => return None,
        CompactionStyle::Level => {}
    }
    let scores = level_scores(v, opts);
    let mut order: Vec<(usize, f64)> = scores.into_iter().enumerate().filter(|(_, s)| *s >= 1.0).collect();
    order.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    // RocksDB's CompactionReason: a score on level 0 counts files (kLevelL0FilesNum),
    // elsewhere bytes (kLevelMaxLevelSize).
    let with = |mut p: CompactionPlan, reason: &'static str| {
        p.reason = Some(reason);
        p
    };
    order
        .into_iter()
        .find_map(|(level, _)| {
            let reason = if level == 0 { "LevelL0FilesNum" } else { "LevelMaxLevelSize" };
            pick_level(v, opts, level, busy).map(|p| with(p, reason))
        })
        .or_else(|| pick_marked(v, opts, busy).map(|p| with(p, "FilesMarkedForCompaction")))
        .or_else(|| pick_bottommost_files(v, opts, busy, unix_now()).map(|p| with(p, "BottommostFiles")))
        .or_else(|| pick_by_age(v, opts, busy, unix_now()))
        .or_else(|| pick_forced_blob_gc(v, opts, busy).map(|p| with(p, "ForcedBlobGC")))
        .or_else(|| pick_read_triggered(v, opts, busy).map(|p| with(p, "ReadTriggered")))
}

/// RocksDB's leveled pick of read-triggered compactions (`PickFileToCompact(..,
/// CompactToNextLevel::kYes)` over [`read_hot_files`]), asked last: the first hot table
/// that can go is compacted into
/// the next level (level 0: all of level 0 into the base level, or, when level 0 is the only
/// non-empty level, the table into level 0 again). None while a level-0 compaction runs for
/// a level-0 table.
pub fn pick_read_triggered(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let hot = read_hot_files(v, opts, busy);
    let last = (0..v.num_levels()).rev().find(|&l| v.num_files(l) > 0)?;
    for (level, f) in hot {
        let plan = if level == 0 && last == 0 {
            if busy.running.iter().any(|r| r.level == 0) {
                continue;
            }
            // On level 0 older files of the level may hold the same keys: never bottommost.
            CompactionPlan { level: 0, output_level: 0, inputs: vec![f.clone()], ..Default::default() }
        } else {
            let Some(plan) = plan_one_level_down(v, opts, busy, level, f) else {
                continue;
            };
            plan
        };
        if !busy.conflicts(v, &plan) {
            return Some(plan);
        }
    }
    None
}

/// RocksDB's `ComputeFilesMarkedForForcedBlobGC` and its pick (`CompactToNextLevel::kNo`):
/// with blob garbage collection on, an age cutoff above 0 and a force threshold under 1,
/// the oldest `age_cutoff` share of the blob files (at least one) is summed; when their
/// garbage bytes reach `force_threshold` of their total bytes, a table linked to the oldest
/// blob file (its `oldest_blob_file_number`) that is not busy is compacted into its own level
/// (on level 0, while no other level-0 compaction runs). The compaction relocates the live
/// blobs of the old files (`db/compact.rs`, the age cutoff), so the oldest file loses its
/// links and goes.
pub fn pick_forced_blob_gc(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let b = &opts.blob_gc;
    if !(b.enable && b.age_cutoff > 0.0 && b.force_threshold < 1.0) {
        return None;
    }
    let blobs = v.blob_files();
    let cutoff_count = (b.age_cutoff * blobs.len() as f64) as usize;
    if cutoff_count == 0 {
        return None;
    }
    let (mut total, mut garbage) = (0u64, 0u64);
    for m in blobs.values().take(cutoff_count) {
        total = total.saturating_add(m.shared.total_blob_bytes);
        garbage = garbage.saturating_add(m.garbage_blob_bytes);
    }
    if (garbage as f64) < b.force_threshold * total as f64 {
        return None;
    }
    let oldest = *blobs.keys().next()?;
    for level in 0..v.num_levels() {
        for f in v.files(level) {
            if f.oldest_blob_file_number != oldest || busy.file(f.number) {
                continue;
            }
            if level == 0 && busy.running.iter().any(|r| r.level == 0) {
                continue;
            }
            let inputs = clean_cut(v, level, vec![f.clone()]);
            let (lo, hi) = key_range(v, &inputs);
            // On level 0 older files of the level may hold the same keys: never bottommost.
            let bottommost = level > 0
                && (level + 1..v.num_levels())
                    .all(|l| v.overlapping_files(l, Some(&lo), Some(&hi)).is_empty());
            let plan = CompactionPlan {
                level,
                output_level: level,
                inputs,
                bottommost,
                rewrite: true,
                ..Default::default()
            };
            if !busy.conflicts(v, &plan) {
                return Some(plan);
            }
        }
    }
    None
}

/// RocksDB's `ComputeFilesMarkedForReadTriggeredCompaction`: with
/// `read_triggered_compaction_threshold` above 0 (and not FIFO), the tables, with their
/// levels, whose sampled collapsible reads per byte (`FileMetaData::sampled`) exceed it,
/// hottest first; busy tables, empty ones and those on the last non-empty level (level 0
/// excepted) are left out.
pub fn read_hot_files<'v>(
    v: &'v Version,
    opts: &CfConfig,
    busy: Busy<'_>,
) -> Vec<(usize, &'v Arc<FileMetaData>)> {
    let threshold = opts.read_triggered_compaction_threshold;
    if threshold <= 0.0 || threshold.is_nan() || opts.style == CompactionStyle::Fifo {
        return Vec::new();
    }
    let Some(last) = (0..v.num_levels()).rev().find(|&l| v.num_files(l) > 0) else {
        return Vec::new();
    };
    let mut hot: Vec<(f64, usize, &Arc<FileMetaData>)> = Vec::new();
    for level in 0..v.num_levels() {
        if level >= last && level != 0 {
            continue;
        }
        for f in v.files(level) {
            if busy.file(f.number) || f.file_size == 0 {
                continue;
            }
            let per_byte = f.sampled.collapsible() as f64 / f.file_size as f64;
            if per_byte > threshold {
                hot.push((per_byte, level, f));
            }
        }
    }
    hot.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    hot.into_iter().map(|(_, level, f)| (level, f)).collect()
}

/// Seconds since the epoch (0 if the clock is before it).
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// RocksDB's PickFilesMarkedForCompaction: a table a properties collector marked
/// (`add_compact_on_deletion_collector_factory`) is compacted into the next level (L0: all
/// of L0 into the base level), asked when no level is over its target. As RocksDB's leveled
/// style, marks on the last level (`num_levels - 1`) are not acted on.
pub fn pick_marked(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let n = v.num_levels();
    for level in 0..n.saturating_sub(1) {
        for f in v.files(level) {
            if !f.marked_for_compaction || busy.file(f.number) {
                continue;
            }
            let Some(plan) = plan_one_level_down(v, opts, busy, level, f) else {
                continue;
            };
            if !busy.conflicts(v, &plan) {
                return Some(plan);
            }
        }
    }
    None
}

/// RocksDB's bottommost-files compaction (leveled style): `GenerateBottommostFiles` (a file
/// no key of which can exist in an older sorted run: no deeper level, and on level 0 no older
/// level-0 file, overlaps it), `ComputeBottommostFilesMarkedForCompaction` (such a file not
/// being compacted, whose largest sequence is above 0 and below `busy.oldest_snapshot`, and
/// with `bottommost_file_compaction_delay` created at least that many seconds before `now`;
/// a file whose creation time is unknown qualifies) and the level picker's
/// `PickFileToCompact(.., kNo)`: the first such file, by level, with its clean cut, is
/// compacted into its own level, where its entries get sequence 0 and the deletions every
/// snapshot sees go. None with `allow_ingest_behind` (RocksDB marks nothing then) and in a
/// family with user-defined timestamps (RocksDB also requires each file's newest timestamp
/// to be below `full_history_ts_low`, which the picker does not know; not compacting is what
/// it does when that is unset).
pub fn pick_bottommost_files(
    v: &Version,
    opts: &CfConfig,
    busy: Busy<'_>,
    now: u64,
) -> Option<CompactionPlan> {
    if opts.ingest_behind || busy.oldest_snapshot == 0 || opts.table.icmp.timestamp_size() > 0 {
        return None;
    }
    let delay = u64::from(opts.bottommost_file_compaction_delay);
    // RocksDB: with a delay, a clock at or before the delay treats every file as too new.
    let created_by = if delay > 0 { Some(now.checked_sub(delay).filter(|&t| t > 0)?) } else { None };
    for (level, f) in bottommost_files(v) {
        if busy.file(f.number) || f.largest_seqno == 0 || f.largest_seqno >= busy.oldest_snapshot {
            continue;
        }
        if created_by.is_some_and(|t| f.file_creation_time != 0 && f.file_creation_time > t) {
            continue;
        }
        if level == 0 && busy.running.iter().any(|r| r.level == 0) {
            continue;
        }
        let inputs = clean_cut(v, level, vec![f.clone()]);
        if inputs.iter().any(|g| busy.file(g.number)) {
            continue;
        }
        let (lo, hi) = key_range(v, &inputs);
        let plan = CompactionPlan {
            level,
            output_level: level,
            bottommost: (level + 1..v.num_levels())
                .all(|l| v.overlapping_files(l, Some(&lo), Some(&hi)).is_empty()),
            inputs,
            rewrite: true,
            ..Default::default()
        };
        if !busy.conflicts(v, &plan) {
            return Some(plan);
        }
    }
    None
}

/// RocksDB's `bottommost_files_mark_threshold_` of a version: the smallest largest sequence
/// (above 0) of its bottommost files that `oldest_snapshot` does not yet make eligible for
/// [`pick_bottommost_files`] (`u64::MAX`: none). Releasing a snapshot changes what the
/// picker may do only when the oldest snapshot left passes it.
pub fn bottommost_mark_threshold(v: &Version, opts: &CfConfig, oldest_snapshot: u64) -> u64 {
    if opts.ingest_behind || opts.table.icmp.timestamp_size() > 0 {
        return u64::MAX;
    }
    bottommost_files(v)
        .map(|(_, f)| f.largest_seqno)
        .filter(|&s| s != 0 && s >= oldest_snapshot)
        .min()
        .unwrap_or(u64::MAX)
}

/// RocksDB's `GenerateBottommostFiles`: every file (with its level, by level) no key of which
/// can exist in an older sorted run: no deeper level, and on level 0 no older level-0 file
/// (level 0 is newest first), overlaps it.
fn bottommost_files(v: &Version) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> + '_ {
    let n = v.num_levels();
    (0..n).flat_map(move |level| {
        let files = v.files(level);
        files.iter().enumerate().filter_map(move |(i, f)| {
            let (lo, hi) = (user_key(&f.smallest), user_key(&f.largest));
            let older_l0_free = level > 0 || files[i + 1..].iter().all(|g| !overlaps(v, g, lo, hi));
            let below_free = (level + 1..n).all(|l| v.overlapping_files(l, Some(lo), Some(hi)).is_empty());
            (older_l0_free && below_free).then_some((level, f))
        })
    })
}

/// Whether file `f` holds a user key in `[lo, hi]` (compared without timestamps).
fn overlaps(v: &Version, f: &FileMetaData, lo: &[u8], hi: &[u8]) -> bool {
    let icmp = v.icmp();
    icmp.compare_user_without_ts(user_key(&f.smallest), hi).is_le()
        && icmp.compare_user_without_ts(lo, user_key(&f.largest)).is_le()
}

/// The compaction of one table picked on its own merits (a mark, its age) into the next
/// level: on level 0, all of level 0 into the base level (None while a level-0 compaction
/// runs); elsewhere the table alone into `level + 1`.
fn plan_one_level_down(
    v: &Version,
    opts: &CfConfig,
    busy: Busy<'_>,
    level: usize,
    f: &Arc<FileMetaData>,
) -> Option<CompactionPlan> {
    if level == 0 {
        if busy.running.iter().any(|r| r.level == 0) {
            return None;
        }
        let base = level_targets(v, opts).base_level;
        Some(plan_for(v, 0, base, v.files(0).to_vec()))
    } else {
        Some(plan_for(v, level, level + 1, vec![f.clone()]))
    }
}

/// RocksDB's age-based compactions for leveled style, asked when no level is over its
/// target (`CfConfig::age_compaction_seconds`):
/// - `ttl`: a table above the last level whose oldest data (`oldest_ancester_time`) is older
///   than `ttl` moves down one level (RocksDB's ExpiredTtlFiles);
/// - `periodic_compaction_seconds`: a table written (`file_creation_time`) longer ago than
///   that is compacted into the next level, or into itself on the last non-empty level
///   (RocksDB's FilesMarkedForPeriodicCompaction).
///
/// A table whose time is unknown (0, written by a RocksDB that did not record it) is left
/// alone (RocksDB falls back to the file's modification time).
///
/// With `daily_offpeak_time_utc`, in the window, the periodic limit is moved on to the next
/// window's start (`offpeak::periodic_limit`).
pub fn pick_by_age(v: &Version, opts: &CfConfig, busy: Busy<'_>, now: u64) -> Option<CompactionPlan> {
    let (ttl, periodic) = (opts.age_ttl, opts.age_periodic);
    if ttl == 0 && periodic == 0 {
        return None;
    }
    let older = |t: u64, age: u64| age > 0 && t > 0 && now.saturating_sub(age) > t;
    let periodic_limit = super::offpeak::periodic_limit(now, periodic, opts.daily_offpeak);
    let n = v.num_levels();
    let last = (0..n).rev().find(|&l| v.num_files(l) > 0)?;
    for level in 0..=last {
        for f in v.files(level) {
            if busy.file(f.number) {
                continue;
            }
            let expired = level < last && older(f.oldest_ancester_time, ttl);
            let periodic_due =
                periodic_limit.is_some_and(|limit| f.file_creation_time > 0 && f.file_creation_time < limit);
            if !expired && !periodic_due {
                continue;
            }
            let plan = if level == last && level > 0 {
                CompactionPlan {
                    level,
                    output_level: level,
                    inputs: vec![f.clone()],
                    bottommost: true,
                    ..Default::default()
                }
            } else {
                let Some(plan) = plan_one_level_down(v, opts, busy, level, f) else {
                    continue;
                };
                plan
            };
            if !busy.conflicts(v, &plan) {
                return Some(plan);
            }
        }
    }
    None
}

fn pick_level(v: &Version, opts: &CfConfig, level: usize, busy: Busy<'_>) -> Option<CompactionPlan> {
    if level == 0 {
        if busy.running.iter().any(|r| r.level == 0) {
            return None; // one level-0 compaction at a time, as RocksDB
        }
        let base = level_targets(v, opts).base_level;
        let inputs = oldest_l0_files(v, base, opts.max_compaction_bytes);
        let plan = plan_for(v, 0, base, inputs);
        return (!busy.conflicts(v, &plan)).then_some(plan);
    }
    // RocksDB's LevelCompactionBuilder::PickFileToCompact over `files_by_compaction_pri_`
    // (VersionStorageInfo::UpdateFilesByCompactionPri's orders).
    let order = match opts.pri {
        CompactionPri::OldestLargestSeqFirst => {
            let mut f = v.files(level).to_vec();
            f.sort_by_key(|f| f.largest_seqno);
            f
        }
        CompactionPri::OldestSmallestSeqFirst => {
            let mut f = v.files(level).to_vec();
            f.sort_by_key(|f| f.smallest_seqno);
            f
        }
        CompactionPri::ByCompensatedSize => {
            // Largest compensated size first (RocksDB sorts the first 50 so; the order of the
            // rest is unspecified there, here it stays by size too).
            let sizes = match busy.stats {
                Some(stats) => compensated_sizes(v, stats).swap_remove(level),
                None => {
                    v.files(level).iter().map(|f| f.file_size + f.compensated_range_deletion_size).collect()
                }
            };
            let mut f: Vec<(u64, Arc<FileMetaData>)> =
                sizes.into_iter().zip(v.files(level).iter().cloned()).collect();
            f.sort_by_key(|(size, _)| std::cmp::Reverse(*size));
            f.into_iter().map(|(_, f)| f).collect()
        }
        CompactionPri::RoundRobin => return pick_round_robin(v, opts, level, busy),
        CompactionPri::MinOverlappingRatio => {
            super::picker_ttl::min_overlapping_ratio_order(v, level, opts.ttl, unix_now())
        }
    };
    order.into_iter().find_map(|f| {
        if busy.file(f.number) {
            return None;
        }
        let plan = plan_for(v, level, level + 1, vec![f]);
        (!busy.conflicts(v, &plan)).then_some(plan)
    })
}

/// RocksDB's `SortFileByRoundRobin`: the files of `level` (1 or more) in key order, starting
/// from the first whose smallest key is at or after the level's compact cursor and wrapping
/// around (in key order when there is no cursor, or it is before the first file or after the
/// last).
pub fn round_robin_order(v: &Version, level: usize) -> Vec<Arc<FileMetaData>> {
    let files = v.files(level);
    let Some(cursor) = v.compact_cursor(level).filter(|_| files.len() > 1) else {
        return files.to_vec();
    };
    let icmp = v.icmp();
    let at = files.partition_point(|f| icmp.compare(cursor, &f.smallest).is_gt());
    if at == 0 || at == files.len() {
        return files.to_vec();
    }
    files[at..].iter().chain(&files[..at]).cloned().collect()
}

/// `compaction_pri` kRoundRobin on a level over its target (RocksDB's PickFileToCompact and
/// `SetupOtherFilesWithRoundRobinExpansion`): the file at the level's cursor, and nothing
/// when that file is busy (the cursor must not skip it); then, when the file overlaps the
/// next level, the files after it in key order (never wrapping, none busy) while the
/// start-level bytes stay under what the level holds over its target and all inputs under
/// `max_compaction_bytes`. The plan records the next cursor: the smallest key of the file
/// after the inputs in the rotated order (the first one again after the last).
fn pick_round_robin(v: &Version, opts: &CfConfig, level: usize, busy: Busy<'_>) -> Option<CompactionPlan> {
    let order = round_robin_order(v, level);
    let first = order.first()?.clone();
    if busy.file(first.number) {
        return None;
    }
    let mut plan = plan_for(v, level, level + 1, vec![first.clone()]);
    if busy.conflicts(v, &plan) {
        return None;
    }
    if !plan.next_inputs.is_empty() {
        let files = v.files(level);
        let target = level_targets(v, opts).max_bytes[level];
        let free: u64 = files.iter().filter(|f| !busy.file(f.number)).map(|f| f.file_size).sum();
        let max_start_bytes = free.saturating_sub(target);
        if first.file_size < max_start_bytes {
            let last =
                plan.inputs.iter().filter_map(|f| files.iter().position(|g| g.number == f.number)).max();
            for f in files.iter().skip(last.map_or(files.len(), |p| p + 1)) {
                if busy.file(f.number) {
                    break;
                }
                let mut inputs = plan.inputs.clone();
                inputs.push(f.clone());
                let candidate = plan_for(v, level, level + 1, inputs);
                if busy.conflicts(v, &candidate) {
                    break;
                }
                let start_bytes: u64 = candidate.inputs.iter().map(|f| f.file_size).sum();
                if candidate.input_bytes() > opts.max_compaction_bytes {
                    break;
                }
                plan = candidate;
                if start_bytes > max_start_bytes {
                    break;
                }
            }
        }
    }
    let n = plan.inputs.len();
    let next = order.get(n).or(order.first())?;
    plan.compact_cursor = Some((level as u32, next.smallest.clone()));
    Some(plan)
}

/// Level 0's oldest files, as many as fit in `max_bytes` together with the files of the
/// base level they overlap (at least two, when there are two).
fn oldest_l0_files(v: &Version, base: usize, max_bytes: u64) -> Vec<Arc<FileMetaData>> {
    let mut inputs: Vec<Arc<FileMetaData>> = Vec::new();
    for f in v.files(0).iter().rev() {
        if inputs.len() >= 2 {
            let mut candidate = inputs.clone();
            candidate.push(f.clone());
            let (lo, hi) = key_range(v, &candidate);
            let overlap: u64 =
                v.overlapping_files(base, Some(&lo), Some(&hi)).iter().map(|f| f.file_size).sum();
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
pub fn estimated_pending_bytes(v: &Version, opts: &CfConfig) -> u64 {
    let n = v.num_levels();
    // As RocksDB's EstimateCompactionBytesNeeded: only estimated for the level style.
    if n < 2 || opts.disable_auto_compactions || opts.style != CompactionStyle::Level {
        return 0;
    }
    let targets = level_targets(v, opts);
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
        if level == targets.base_level && l0_triggered {
            total += own;
        }
        if level < targets.base_level {
            continue; // empty under dynamic level bytes; level 0 goes to the base level
        }
        let size = own + carried;
        let target = targets.max_bytes[level];
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
    pick_manual_into(v, level, level + 1, begin, end)
}

/// `pick_manual` into `output_level` (RocksDB's CompactRange sends level 0 to the base level
/// under `level_compaction_dynamic_level_bytes`, its kCompactToBaseLevel).
pub fn pick_manual_into(
    v: &Version,
    level: usize,
    output_level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Option<CompactionPlan> {
    if output_level <= level || output_level >= v.num_levels() {
        return None;
    }
    let inputs = v.overlapping_files(level, begin, end);
    if inputs.is_empty() {
        return None;
    }
    Some(plan_for(v, level, output_level, inputs))
}

pub(super) fn plan_for(
    v: &Version,
    level: usize,
    output_level: usize,
    inputs: Vec<Arc<FileMetaData>>,
) -> CompactionPlan {
    let inputs = clean_cut(v, level, inputs);
    let (lo, hi) = key_range(v, &inputs);
    let next_inputs = clean_cut(v, output_level, v.overlapping_files(output_level, Some(&lo), Some(&hi)));
    let (all_lo, all_hi) = key_range(v, &inputs.iter().chain(&next_inputs).cloned().collect::<Vec<_>>());
    let bottommost = (output_level + 1..v.num_levels())
        .all(|l| v.overlapping_files(l, Some(&all_lo), Some(&all_hi)).is_empty());
    CompactionPlan { level, output_level, inputs, next_inputs, bottommost, ..Default::default() }
}

/// RocksDB's `ExpandInputsToCleanCut` on a level of 1 or more: `inputs` (files of `level`)
/// grown by their neighbours until no user key has versions both inside and outside them.
/// Two neighbours share a key when the first's largest and the second's smallest user keys
/// are equal without timestamps (RocksDB's `sstableKeyCompare`), unless the first ends at a
/// range tombstone's end (its sentinel: the key itself is not in that file). With
/// timestamps the versions of one key can lie in two files (written before Shale compared
/// without timestamps, or by a tool); a compaction that moved one file's versions down
/// would put newer versions below older ones.
pub fn clean_cut(v: &Version, level: usize, inputs: Vec<Arc<FileMetaData>>) -> Vec<Arc<FileMetaData>> {
    if level == 0 || inputs.is_empty() {
        return inputs;
    }
    let files = v.files(level);
    let pos = |f: &Arc<FileMetaData>| files.iter().position(|g| g.number == f.number);
    let (Some(lo), Some(hi)) = (inputs.iter().filter_map(pos).min(), inputs.iter().filter_map(pos).max())
    else {
        return inputs;
    };
    let (mut first, mut last) = (lo, hi);
    let icmp = v.icmp();
    let shares_key = |a: &FileMetaData, b: &FileMetaData| {
        let sentinel = crate::key::trailer(&a.largest)
            == (crate::key::MAX_SEQUENCE_NUMBER << 8) | ValueType::RangeDeletion as u64;
        !sentinel && icmp.compare_user_without_ts(user_key(&a.largest), user_key(&b.smallest)).is_eq()
    };
    while first > 0 && shares_key(&files[first - 1], &files[first]) {
        first -= 1;
    }
    while last + 1 < files.len() && shares_key(&files[last], &files[last + 1]) {
        last += 1;
    }
    if (first, last) == (lo, hi) {
        return inputs;
    }
    // Only the neighbours outside are added: the inputs themselves stay as given.
    let mut grown = files[first..lo].to_vec();
    grown.extend(inputs);
    grown.extend_from_slice(&files[hi + 1..=last]);
    grown
}

/// The smallest and largest user keys of `files`.
pub(super) fn key_range(v: &Version, files: &[Arc<FileMetaData>]) -> (Vec<u8>, Vec<u8>) {
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
        super::super::test_files::file(number, lo, hi, number * 10, size)
    }

    fn version(files: Vec<(u32, Arc<FileMetaData>)>) -> Version {
        Version::new(bytewise_internal_comparator(), 4, files)
    }

    #[test]
    fn level0_trigger_picks_all_l0_and_overlaps() {
        let opts = CfConfig { level0_file_num_compaction_trigger: 2, ..CfConfig::default() };
        let v = version(vec![
            (0, file(5, "c", "f", 100)),
            (0, file(6, "a", "d", 100)),
            (1, file(2, "a", "b", 100)),
            (1, file(3, "e", "g", 100)),
            (1, file(4, "x", "z", 100)),
        ]);
        let p = pick(&v, &opts, Busy::default()).expect("L0 over trigger");
        assert_eq!((p.level, p.output_level), (0, 1));
        assert_eq!(p.inputs.len(), 2);
        let mut next: Vec<u64> = p.next_inputs.iter().map(|f| f.number).collect();
        next.sort();
        assert_eq!(next, vec![2, 3]);
        assert!(p.bottommost);
    }

    #[test]
    fn nothing_to_do_under_targets() {
        let opts = CfConfig::default();
        let v = version(vec![(0, file(5, "a", "b", 100)), (1, file(3, "a", "z", 1000))]);
        assert!(pick(&v, &opts, Busy::default()).is_none());
    }

    #[test]
    fn deeper_level_picks_least_overlap_and_moves_trivially() {
        let opts = CfConfig {
            max_bytes_for_level_base: 150,
            // No TTL boost: these files have no ancestor time (RocksDB boosts those most).
            ttl: 0,
            age_ttl: 0,
            // "a".."b" overlaps nothing below; "m".."n" overlaps file 7: file 3 goes first, as a
            // trivial move.
            ..CfConfig::default()
        };
        let v = version(vec![
            (1, file(3, "a", "b", 100)),
            (1, file(4, "m", "n", 100)),
            (2, file(7, "m", "z", 10)),
        ]);
        let p = pick(&v, &opts, Busy::default()).unwrap();
        assert_eq!(p.inputs[0].number, 3);
        assert!(p.is_trivial_move());
        // With the overlap on the other side, the other file is picked.
        let v = version(vec![
            (1, file(3, "a", "b", 100)),
            (1, file(4, "m", "n", 100)),
            (2, file(7, "a", "c", 10)),
        ]);
        let p = pick(&v, &opts, Busy::default()).unwrap();
        assert_eq!(p.inputs[0].number, 4);
        // A file being compacted is passed over for the next in order.
        let busy_files: HashSet<u64> = [4].into_iter().collect();
        let p = pick(&v, &opts, Busy { files: Some(&busy_files), ..Default::default() }).unwrap();
        assert_eq!(p.inputs[0].number, 3);
        assert_eq!((p.inputs.len(), p.next_inputs.len()), (1, 1));
    }

    /// kOldestLargestSeqFirst / kOldestSmallestSeqFirst try the level's files by their
    /// largest / smallest sequence number, oldest first, whatever they overlap below.
    #[test]
    fn compaction_pri_orders() {
        let mut opts = CfConfig { max_bytes_for_level_base: 150, ttl: 0, age_ttl: 0, ..CfConfig::default() };
        let seqs = |n: u64, lo: &str, hi: &str, small: u64, large: u64| {
            let mut f = (*file(n, lo, hi, 100)).clone();
            f.smallest_seqno = small;
            f.largest_seqno = large;
            Arc::new(f)
        };
        // File 3 overlaps nothing below (kMinOverlappingRatio's choice); file 4 holds the
        // oldest data by its largest seqno, file 5 by its smallest.
        let v = version(vec![
            (1, seqs(3, "a", "b", 50, 60)),
            (1, seqs(4, "m", "n", 30, 40)),
            (1, seqs(5, "p", "q", 10, 70)),
            (2, file(7, "m", "z", 10)),
        ]);
        assert_eq!(pick(&v, &opts, Busy::default()).unwrap().inputs[0].number, 3);
        opts.pri = CompactionPri::OldestLargestSeqFirst;
        assert_eq!(pick(&v, &opts, Busy::default()).unwrap().inputs[0].number, 4);
        opts.pri = CompactionPri::OldestSmallestSeqFirst;
        assert_eq!(pick(&v, &opts, Busy::default()).unwrap().inputs[0].number, 5);
        opts.pri = CompactionPri::RoundRobin;
        opts.pri = CompactionPri::ByCompensatedSize;
    }

    /// kByCompensatedSize: the largest file first, a file mostly of deletions weighed up
    /// by RocksDB's ComputeCompensatedSizes.
    #[test]
    fn compensated_size_order_weighs_deletions() {
        let opts = CfConfig {
            max_bytes_for_level_base: 150,
            pri: CompactionPri::ByCompensatedSize,
            ..CfConfig::default()
        };
        let v = version(vec![
            (1, file(3, "a", "b", 100)),
            (1, file(4, "c", "d", 60)),
            (1, file(5, "e", "f", 80)),
        ]);
        assert_eq!(pick(&v, &opts, Busy::default()).unwrap().inputs[0].number, 3, "by size alone");
        // File 4 holds 10 deletions among 12 entries; the others hold values only.
        let stats = |f: &FileMetaData| {
            Some(match f.number {
                4 => FileStats { num_entries: 12, num_deletions: 10, raw_key_size: 24, ..Default::default() },
                _ => {
                    FileStats { num_entries: 10, raw_key_size: 20, raw_value_size: 100, ..Default::default() }
                }
            })
        };
        let sizes = compensated_sizes(&v, &stats);
        // Average value size (RocksDB's integer steps): 200 value bytes / 22 non-deletions
        // = 9, times 240 file bytes / 264 raw bytes = 8; file 4 gains (2 * 10 - 12) * 8 * 2.
        assert_eq!(sizes[1], vec![100, 60 + 128, 80]);
        let busy = Busy { stats: Some(&stats), ..Default::default() };
        assert_eq!(pick(&v, &opts, busy).unwrap().inputs[0].number, 4);
    }

    /// kRoundRobin: the file at the level's cursor first (in key order, wrapping), more
    /// files after it while the level stays over its target, and the next cursor recorded.
    #[test]
    fn round_robin_starts_at_the_cursor_and_records_the_next() {
        let opts =
            CfConfig { max_bytes_for_level_base: 250, pri: CompactionPri::RoundRobin, ..CfConfig::default() };
        let files = vec![
            (1, file(3, "a", "b", 100)),
            (1, file(4, "c", "d", 100)),
            (1, file(5, "e", "f", 100)),
            (1, file(6, "g", "h", 100)),
            (2, file(9, "a", "z", 100)),
        ];
        let v = version(files.clone());
        // No cursor: from the first file; 400 bytes over a 250 target: 150 to move, so a
        // second file joins (the first alone, 100, is not enough).
        let p = pick(&v, &opts, Busy::default()).unwrap();
        assert_eq!(p.inputs.iter().map(|f| f.number).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(p.compact_cursor, Some((1, file(5, "e", "f", 1).smallest.clone())));
        // With the cursor at "e": files 5 and 6, and the cursor wraps to file 3.
        let cursors = [(1u32, file(5, "e", "f", 1).smallest.clone())].into_iter().collect();
        let v = version(files.clone()).with_compact_cursors(&cursors);
        assert_eq!(round_robin_order(&v, 1).iter().map(|f| f.number).collect::<Vec<_>>(), vec![5, 6, 3, 4]);
        let p = pick(&v, &opts, Busy::default()).unwrap();
        assert_eq!(p.inputs.iter().map(|f| f.number).collect::<Vec<_>>(), vec![5, 6]);
        assert_eq!(p.compact_cursor, Some((1, file(3, "a", "b", 1).smallest.clone())));
        // The cursor's file busy: nothing is picked on the level (the cursor may not skip it).
        let busy_files: HashSet<u64> = [5].into_iter().collect();
        let busy = Busy { files: Some(&busy_files), ..Default::default() };
        assert!(pick_level(&v, &opts, 1, busy).is_none());
    }

    #[test]
    fn bottommost_only_without_deeper_overlap() {
        let v = version(vec![(1, file(3, "a", "c", 100)), (3, file(9, "b", "b", 10))]);
        let p = pick_manual(&v, 1, None, None).unwrap();
        assert!(!p.bottommost);
        let v = version(vec![(1, file(3, "a", "c", 100)), (3, file(9, "x", "y", 10))]);
        assert!(pick_manual(&v, 1, None, None).unwrap().bottommost);
    }

    fn version7(files: Vec<(u32, Arc<FileMetaData>)>) -> Version {
        Version::new(bytewise_internal_comparator(), 7, files)
    }

    fn dynamic(base: u64) -> CfConfig {
        CfConfig {
            level_compaction_dynamic_level_bytes: true,
            max_bytes_for_level_base: base,
            max_bytes_for_level_multiplier: 10.0,
            ..CfConfig::default()
        }
    }

    #[test]
    fn static_targets_start_at_level_1() {
        let o = CfConfig {
            level_compaction_dynamic_level_bytes: false,
            max_bytes_for_level_base: 100,
            ..CfConfig::default()
        };
        let t = level_targets(&version7(vec![(6, file(1, "a", "z", 5000))]), &o);
        assert_eq!(t.base_level, 1);
        assert_eq!(t.max_bytes[1..4], [100, 1000, 10_000]);
        assert_eq!(t.max_bytes[0], u64::MAX);
    }

    #[test]
    fn dynamic_targets_follow_the_last_level() {
        let o = dynamic(100);
        // Nothing below L0: L0 compacts straight into the last level.
        let t = level_targets(&version7(vec![(0, file(1, "a", "z", 50))]), &o);
        assert_eq!(t.base_level, 6);
        let mut opts = o.clone();
        opts.level0_file_num_compaction_trigger = 1;
        let p = pick(&version7(vec![(0, file(1, "a", "z", 50))]), &opts, Busy::default()).unwrap();
        assert_eq!((p.level, p.output_level), (0, 6));
        assert!(p.bottommost);

        // 1000 bytes in L6: one level above it is enough (L5 target 100, L6 1000).
        let t = level_targets(&version7(vec![(6, file(1, "a", "z", 1000))]), &o);
        assert_eq!(t.base_level, 5);
        assert_eq!(t.max_bytes[5..], [100, 1000]);
        assert!(t.max_bytes[1..5].iter().all(|&b| b == u64::MAX));

        // 10^7 bytes in L6: every level is needed, L1 = base, x10 per level.
        let t = level_targets(&version7(vec![(6, file(1, "a", "z", 10_000_000))]), &o);
        assert_eq!(t.base_level, 1);
        assert_eq!(t.max_bytes[1..], [100, 1000, 10_000, 100_000, 1_000_000, 10_000_000]);

        // Less data than the levels in use hold: the first non-empty level is the base, with a
        // target of base / multiplier + 1, and no target is below the base size.
        let t = level_targets(&version7(vec![(3, file(1, "a", "c", 5)), (6, file(2, "d", "z", 20))]), &o);
        assert_eq!(t.base_level, 3);
        assert_eq!(t.max_bytes[3..], [100, 110, 1100, 11_000]);

        // A level over its dynamic target is picked, into the next level.
        let v = version7(vec![(5, file(1, "a", "c", 300)), (6, file(2, "d", "z", 1000))]);
        let p = pick(&v, &o, Busy::default()).unwrap();
        assert_eq!((p.level, p.output_level), (5, 6));
    }

    fn ts_file(number: u64, lo: (&str, u64), hi: (&str, u64), hi_type: ValueType) -> Arc<FileMetaData> {
        let k = |(key, ts): (&str, u64)| [key.as_bytes(), &ts.to_le_bytes()].concat();
        let hi_seq = if hi_type == ValueType::RangeDeletion { crate::key::MAX_SEQUENCE_NUMBER } else { 7 };
        Arc::new(FileMetaData {
            number,
            file_size: 100,
            smallest: make_internal_key(&k(lo), 7, ValueType::Value),
            largest: make_internal_key(&k(hi), hi_seq, hi_type),
            smallest_seqno: 7,
            largest_seqno: 7,
            ..Default::default()
        })
    }

    #[test]
    fn a_key_split_over_files_by_timestamp_is_compacted_whole() {
        let icmp =
            crate::key::InternalKeyComparator::new(Arc::new(crate::comparator::U64TsComparator::bytewise()));
        let v = Version::new(
            icmp.clone(),
            4,
            vec![
                // Level 1: k's versions lie in #1 (k@5) and #2 (k@3).
                (1, ts_file(1, ("a", 9), ("k", 5), ValueType::Value)),
                (1, ts_file(2, ("k", 3), ("m", 1), ValueType::Value)),
                (1, ts_file(3, ("n", 1), ("p", 1), ValueType::Value)),
                // Level 2: #4 holds only m@0, #5 starts past m.
                (2, ts_file(4, ("m", 0), ("m", 0), ValueType::Value)),
                (2, ts_file(5, ("n", 0), ("z", 0), ValueType::Value)),
                // Level 3: k@1 is below the compaction's keys.
                (3, ts_file(6, ("k", 1), ("k", 1), ValueType::Value)),
            ],
        );
        let p = plan_for(&v, 1, 2, vec![v.files(1)[0].clone()]);
        let numbers = |fs: &[Arc<FileMetaData>]| fs.iter().map(|f| f.number).collect::<Vec<_>>();
        assert_eq!(numbers(&p.inputs), vec![1, 2]);
        assert_eq!(numbers(&p.next_inputs), vec![4]);
        // Level 3 holds an older version of k: not bottommost.
        assert!(!p.bottommost);
        // A file ending at a range tombstone's end does not hold that key: no expansion.
        let v = Version::new(
            icmp,
            3,
            vec![
                (1, ts_file(1, ("a", 9), ("k", 5), ValueType::RangeDeletion)),
                (1, ts_file(2, ("k", 3), ("m", 1), ValueType::Value)),
            ],
        );
        assert_eq!(numbers(&plan_for(&v, 1, 2, vec![v.files(1)[0].clone()]).inputs), vec![1]);
    }
}
