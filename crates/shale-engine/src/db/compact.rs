//! Running compactions (the job the scheduler's compaction threads run, see
//! `scheduler.rs`) and manual compaction (`compact_range`).

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::error_handler::BgErrorReason;
use super::scheduler::counts_as_bg_error;
use super::{DbInner, DbState};
use crate::compaction::filter::FilterContext;
use crate::compaction::job::FilterDecision;
use crate::compaction::job::{self, JobInput};
use crate::compaction::picker::{self, CompactionPlan};
use crate::config::{BottommostLevel, CompactionStyle};
use crate::error::{Error, Result};
use crate::iter::merging::MergingIterator;
use crate::iter::range_del;
use crate::iter::BoxedIterator;
use crate::version::edit::VersionEdit;

/// Whether the family has a compaction filter (its own, its factory's, or a TTL family's
/// expiry): manual compactions then never move a file unchanged and rewrite the bottommost
/// level (RocksDB's `IsTrivialMove` and `BottommostLevelCompaction::IfHaveCompactionFilter`).
/// The table path of a compaction's outputs (`paths.rs`).
fn output_path_id(cf: &CfHandle, plan: &CompactionPlan) -> u32 {
    if cf.table_dirs.len() <= 1 {
        0
    } else if cf.config().style == CompactionStyle::Universal {
        super::paths::universal_path_id(&cf.table_dirs, 1, plan.input_bytes())
    } else {
        super::paths::level_path_id(&cf.table_dirs, cf.config(), plan.output_level)
    }
}

/// Whether `plan` runs as a trivial move (RocksDB's `Compaction::IsTrivialMove`): one file
/// moved down unchanged, within its path. A compaction of a level into itself (bottommost,
/// periodic) rewrites its file.
pub fn moves_trivially(cf: &CfHandle, plan: &CompactionPlan, manual: bool) -> bool {
    if plan.move_all {
        // Universal's `allow_trivial_move`: the picker found the inputs disjoint; RocksDB
        // moves them whatever their path or codec.
        return plan.level != plan.output_level && !(manual && has_compaction_filter(cf));
    }
    plan.is_trivial_move()
        && plan.level != plan.output_level
        && !(manual && has_compaction_filter(cf))
        && plan.inputs.first().is_some_and(|f| f.path_id == output_path_id(cf, plan))
        && input_compression_matches_output(cf, plan)
        && partitioner_allows_move(cf, plan)
}

/// RocksDB's `Compaction::IsTrivialMove` asks the family's SST partitioner (when the output
/// level is not the last) whether each input file may move without being cut.
pub(super) fn partitioner_allows_move(cf: &CfHandle, plan: &CompactionPlan) -> bool {
    let Some(p) = cf.config().sst_partitioner.as_ref() else { return true };
    if plan.output_level + 1 >= cf.config().num_levels {
        return true;
    }
    plan.inputs
        .iter()
        .all(|f| p.can_do_trivial_move(crate::key::user_key(&f.smallest), crate::key::user_key(&f.largest)))
}

fn has_compaction_filter(cf: &CfHandle) -> bool {
    cf.config().has_compaction_filter()
}

impl DbInner {
    /// Runs `plan` on `cf` and installs the result. The DB mutex is released while files
    /// are written and while the MANIFEST records them; the caller has registered the plan
    /// as running (its files are busy).
    pub fn run_compaction(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        plan: &CompactionPlan,
    ) -> Result<()> {
        self.run_compaction_as(st, cf, plan, false)
    }

    /// `run_compaction`; a `manual` one never moves a file unchanged when the family has a
    /// compaction filter (a TTL database's), so that the filter sees every entry, as
    /// RocksDB's `Compaction::IsTrivialMove` decides.
    fn run_compaction_as(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        plan: &CompactionPlan,
        manual: bool,
    ) -> Result<()> {
        let output_path_id = output_path_id(cf, plan);
        // Per-key placement (`preclude_last_level_data_seconds`, `compaction/proximal.rs`),
        // from the version the plan was picked on; such a compaction is never a trivial move
        // (RocksDB's `Compaction::IsTrivialMove`).
        let proximal = st
            .cfs
            .get(&cf.id)
            .and_then(|c| crate::compaction::proximal::proximal_output(&c.current, cf.config(), plan));
        let trivial_move = proximal.is_none() && moves_trivially(cf, plan, manual);
        let mut edit = VersionEdit { column_family: cf.id, ..Default::default() };
        // kRoundRobin: the start level's next cursor goes in with the compaction's result.
        edit.compact_cursors.extend(plan.compact_cursor.clone());
        // RocksDB's job id; a compaction that rewrites files logs `compaction_started`
        // before it reads (`info_log.rs`).
        let job = self.info_log.new_job_id();
        let subcompactions = std::cell::Cell::new(1usize);
        for (level, f) in plan.all_inputs() {
            edit.deleted_files.push((level as u32, f.number));
        }
        let mut outputs_numbers = Vec::new();
        let mut finished: Option<FinishedCounts> = None;
        // CPU time of the subcompactions run on threads of their own (the first runs here).
        let mut subcompaction_cpu = 0u64;
        // RocksDB's per-job CompactionStats (rocksdb.cfstats), added once installed.
        let job_started = std::time::Instant::now();
        let cpu_started = super::internal_stats::thread_cpu_micros();
        let mut job_stats = super::internal_stats::CompactionStats {
            count: 1,
            num_input_files: (plan.inputs.len() + plan.next_inputs.len()) as u64,
            ..Default::default()
        };
        if plan.deletion_only {
            // FIFO: the inputs are dropped; nothing is read or written. Counted by reason
            // when the job runs, as RocksDB's BackgroundCompaction counts it.
            let t = if plan.fifo_ttl {
                crate::statistics::Ticker::FifoTtlCompactions
            } else {
                crate::statistics::Ticker::FifoMaxSizeCompactions
            };
            crate::statistics::record_tick(self.config.statistics.as_deref(), t, 1);
        } else if plan.trivial_copy {
            // FIFO's temperature change by copy (RocksDB's trivial copy): the input's bytes
            // go to a new file at the target temperature; nothing is read as entries.
            match self.trivial_copy(st, cf, plan, output_path_id, job) {
                Ok((outputs, numbers)) => {
                    edit.new_files.extend(outputs);
                    outputs_numbers = numbers;
                }
                Err(e) => {
                    self.info_log.buffer_line(format_args!("[{}] compaction failed: {e}", cf.name));
                    return Err(e);
                }
            }
        } else if trivial_move {
            // Every input moves to the output level (one file, or with universal's
            // `allow_trivial_move` all of them); those already there stay.
            edit.deleted_files.retain(|(level, _)| *level as usize != plan.output_level);
            for (_, f) in plan.all_inputs().filter(|(l, _)| *l != plan.output_level) {
                job_stats.bytes_moved += f.file_size;
                edit.new_files.push((plan.output_level as u32, (**f).clone()));
            }
        } else {
            let snapshots = self.snapshot_list()?;
            // RocksDB's `Compaction::is_full_compaction`: every file of the family is an input.
            let is_full_compaction = st.cfs.get(&cf.id).is_some_and(|c| {
                let total: usize = (0..c.current.num_levels()).map(|l| c.current.files(l).len()).sum();
                total == plan.num_input_files()
            });
            // BlobDB garbage collection: blobs in the oldest `age_cutoff` of the blob files
            // are relocated (RocksDB's `ComputeBlobGarbageCollectionCutoffFileNumber`).
            let blob_gc_cutoff = match st.cfs.get(&cf.id) {
                Some(c) if cf.config().blob_gc.enable => {
                    let blobs: Vec<u64> = c.current.blob_files().keys().copied().collect();
                    let at = (cf.config().blob_gc.age_cutoff * blobs.len() as f64) as usize;
                    blobs.get(at).copied().unwrap_or(u64::MAX)
                }
                _ => 0,
            };
            let this = self.clone();
            let created = parking_lot::Mutex::new(Vec::new());
            let started = std::time::Instant::now();
            let should_form = self.should_form_subcompactions(cf, plan, manual);
            let started_event = st
                .cfs
                .get(&cf.id)
                .map(|c| compaction_started_event(job, cf, plan, manual, &c.current, &snapshots));
            let result = super::unlocked(st, || -> Result<(job::JobResult, u64)> {
                // RocksDB's `CompactionJob::PrepareTimes`, once for the job: the inputs'
                // sequence-number-to-time mappings and the tiering cut-offs.
                let times = this.compaction_seqno_time(cf, plan);
                let earliest_snapshot = snapshots.first().copied().unwrap_or(u64::MAX);
                let proximal_after_seqno = proximal.as_ref().map_or(u64::MAX, |p| {
                    crate::compaction::proximal::proximal_after_seqno(
                        p,
                        times.preclude_min_seqno,
                        earliest_snapshot,
                    )
                });
                if let Some(mut w) = started_event {
                    if let Some(p) = &proximal {
                        // RocksDB's `preserve_seqno_after_`.
                        let preserve_after =
                            (times.preserve_time_min_seqno.max(1) - 1).min(earliest_snapshot);
                        w.field("proximal_after_seqno", proximal_after_seqno)
                            .field("preserve_seqno_after", preserve_after)
                            .field("proximal_output_level", p.level)
                            .field(
                                "proximal_output_range",
                                if p.full_range { "FullRange" } else { "NonLastRange" },
                            );
                    }
                    this.info_log.event(w);
                }
                // RocksDB's GenSubcompactionBoundaries and RunSubcompactions: the key ranges
                // [start, end) each compacted on its own thread (the first on this one).
                let boundaries = if should_form {
                    let stats = this.config.statistics.as_deref();
                    let _t = crate::statistics::StopWatch::new(
                        stats,
                        crate::statistics::Histogram::SubcompactionSetupTime,
                    );
                    this.subcompaction_boundaries(cf, plan)
                } else {
                    Vec::new()
                };
                if let Some(s) = this.config.statistics.as_deref().filter(|_| !boundaries.is_empty()) {
                    s.record_in_histogram(
                        crate::statistics::Histogram::NumSubcompactionsScheduled,
                        boundaries.len() as u64 + 1,
                    );
                }
                let mut ranges: Vec<job::KeyRange> = Vec::with_capacity(boundaries.len() + 1);
                let mut prev: Option<Vec<u8>> = None;
                for b in boundaries {
                    ranges.push((prev.take(), Some(b.clone())));
                    prev = Some(b);
                }
                ranges.push((prev, None));
                subcompactions.set(ranges.len());
                // RocksDB never cuts a compaction's level-0 outputs (CompactionOutputs::
                // ShouldStopBefore): FIFO's intra-L0 and temperature-change outputs are one file
                // each, whatever the plan's output size (its max_output_file_size).
                let target_file_size = if plan.output_level == 0 && cf.config().style == CompactionStyle::Fifo
                {
                    u64::MAX
                } else {
                    plan.output_file_size.unwrap_or_else(|| cf.config().target_file_size(plan.output_level))
                };
                let run_range = |range: job::KeyRange| -> Result<job::JobResult> {
                    let (iter, tombstones) = this.compaction_input(cf, plan)?;
                    let builder_options = this.compaction_builder_options(cf, plan);

                    let ttl_filter = super::ttl::stale_filter(cf);
                    // The family's compaction filter, or one its factory makes for this
                    // subcompaction (as RocksDB's: on its thread, dropped at its end).
                    let level = plan.level as u32;
                    let callbacks = &cf.config().callbacks;
                    let single = callbacks.compaction_filter.clone();
                    let mut made = match (&single, &callbacks.compaction_filter_factory) {
                        (None, Some(factory)) => Some(
                            factory
                                .create(FilterContext { is_full_compaction, is_manual_compaction: manual }),
                        ),
                        _ => None,
                    };
                    let has_filter = single.is_some() || made.is_some();
                    let mut filter_fn = |k: &[u8], v: &[u8]| -> FilterDecision {
                        if let Some(f) = &single {
                            f.filter(level, k, v)
                        } else if let Some(f) = made.as_mut() {
                            f.filter(level, k, v)
                        } else {
                            FilterDecision::Keep
                        }
                    };
                    let new_number = || {
                        let n = this.new_output_number();
                        created.lock().push(n);
                        n
                    };
                    let out_dir = cf.table_dir(&this.path, output_path_id);
                    job::run(JobInput {
                        fs: &*this.fs,
                        dir: out_dir,
                        blob_dir: &this.path,
                        path_id: output_path_id,
                        iter,
                        tombstones,
                        snapshots: snapshots.clone(),
                        // With the last level kept for ingestion behind, nothing is
                        // bottommost (RocksDB's CompactionIterator).
                        bottommost: plan.bottommost && !cf.config().ingest_behind,
                        target_file_size,
                        target_file_size_is_upper_bound: cf.config().target_file_size_is_upper_bound,
                        builder_options: &builder_options,
                        new_file_number: &new_number,
                        remove_value: ttl_filter.as_ref().map(|f| f as &job::ValueFilter),
                        compaction_filter: if has_filter { Some(&mut filter_fn) } else { None },
                        merge_operator: cf.config().callbacks.merge(),
                        enforce_single_del_contracts: this.config.enforce_single_del_contracts,
                        full_history_ts_low: Some(cf.full_history_ts_low()).filter(|l| !l.is_empty()),
                        blob_fetcher: Some(crate::blob::BlobFetcher {
                            cache: this.blob_cache.clone(),
                            cf_id: cf.id,
                            // Looked up, never filled (RocksDB's compactions read with
                            // fill_cache = false).
                            value_cache: cf.config().blob_cache.clone(),
                            fill_cache: false,
                            no_io: false,
                        }),
                        blob_write: super::flush::blob_write_options(
                            cf,
                            plan.output_level,
                            this.config.file_checksum_crc32c,
                        ),
                        blob_gc_cutoff,
                        blob_readahead: cf.config().blob.compaction_readahead_size,
                        cancel: Some(&this.shutting_down),
                        statistics: this.config.statistics.as_deref(),
                        range,
                        preallocation: this.output_preallocation(cf, plan, target_file_size),
                        output_hash: super::verify_output::wants_hash(cf.config()),
                        partitioner: cf.config().sst_partitioner.as_ref().filter(|_| plan.output_level != 0),
                        grandparents: if plan.output_level == 0 { &[] } else { &plan.grandparents },
                        max_grandparent_overlap: plan.max_grandparent_overlap.unwrap_or(u64::MAX),
                        seqno_time: times.mapping.clone(),
                        preserve_time_min_seqno: times.preserve_time_min_seqno,
                        proximal_after_seqno,
                        file_checksum: this.config.file_checksum_crc32c,
                    })
                };
                let mut rest = ranges.split_off(1);
                let first = ranges.pop().unwrap_or((None, None));
                // A compaction service compacts the whole job elsewhere (one input, one
                // result; no subcompactions are formed when one is set), per-key placement
                // included (`remote_compaction.rs`).
                // A compaction that writes blob files runs here, as RocksDB's primary does when
                // its service answers kUseLocal: RocksDB 11.8.1's CompactionServiceResult lists
                // table files only (`cs_result_type_info` has no blob file field), so a
                // worker's blob files could never be installed and the tables' blob references
                // would name files the primary never receives.
                let service = this
                    .compaction_service
                    .lock()
                    .clone()
                    .filter(|_| super::flush::blob_write_options(cf, plan.output_level, false).is_none());
                let local = service.is_none();
                let (r, extra_cpu) = if let Some(service) = service {
                    let new_number = || {
                        let n = this.new_output_number();
                        created.lock().push(n);
                        n
                    };
                    let out_dir = cf.table_dir(&this.path, output_path_id);
                    let r =
                        this.run_remote_compaction(cf, plan, &snapshots, &*service, &new_number, out_dir)?;
                    // RocksDB's primary puts each output the result marks
                    // `is_proximal_level_output` among the proximal level's outputs
                    // (`sub_compact->Outputs(true)`), which only a compaction with per-key
                    // placement has.
                    if proximal.is_none() && r.proximal.iter().any(|p| *p) {
                        return Err(Error::corruption(
                            "remote compaction result with proximal-level outputs for a compaction \
                             without a proximal level",
                        ));
                    }
                    (r, 0)
                } else if rest.is_empty() {
                    (run_range(first)?, 0)
                } else {
                    std::thread::scope(|s| -> Result<(job::JobResult, u64)> {
                        let run_range = &run_range;
                        let handles: Vec<_> = rest
                            .drain(..)
                            .map(|range| {
                                s.spawn(move || {
                                    let cpu = super::internal_stats::thread_cpu_micros();
                                    let r = run_range(range);
                                    (r, super::internal_stats::thread_cpu_micros().saturating_sub(cpu))
                                })
                            })
                            .collect();
                        let mut all = run_range(first);
                        let mut extra_cpu = 0;
                        for h in handles {
                            let (next, cpu) = h.join().unwrap_or_else(|_| {
                                (Err(Error::corruption("a subcompaction thread panicked")), 0)
                            });
                            extra_cpu += cpu;
                            all = match (all, next) {
                                (Ok(mut a), Ok(n)) => {
                                    a.absorb(n);
                                    Ok(a)
                                }
                                (Err(e), _) | (_, Err(e)) => Err(e),
                            };
                        }
                        Ok((all?, extra_cpu))
                    })?
                };
                // `compaction_verify_record_count` (`record_count.rs`).
                if local {
                    this.verify_input_records(cf, plan, r.entries_in)?;
                }
                // RocksDB's VerifyOutputFiles: `verify_output_flags`, and
                // `paranoid_file_checks` (`verify_output.rs`).
                this.verify_compaction_outputs(cf, &r, local)?;
                for m in &r.outputs {
                    super::info_log::log_table_created(
                        &this.info_log,
                        &this.table_cache,
                        job,
                        cf,
                        m,
                        Some(plan.output_level),
                    );
                }
                if !r.outputs.is_empty() {
                    this.fs.sync_dir(cf.table_dir(&this.path, output_path_id))?;
                }
                if !r.blob_additions.is_empty() {
                    this.fs.sync_dir(&this.path)?;
                }
                Ok((r, extra_cpu))
            });
            let result = match result {
                Ok((r, cpu)) => {
                    subcompaction_cpu = cpu;
                    r
                }
                Err(e) => {
                    // Under the DB mutex: buffered, written with the files' removal below.
                    self.info_log.buffer_line(format_args!("[{}] compaction failed: {e}", cf.name));
                    // Its partial outputs are garbage now.
                    let created = created.into_inner();
                    super::unlocked(st, || {
                        for n in &created {
                            let _ = self.fs.remove_file(&super::filename::table_file(
                                cf.table_dir(&self.path, output_path_id),
                                *n,
                            ));
                            let _ = self.fs.remove_file(&crate::blob::blob_file_path(&self.path, *n));
                            self.versions.release_output(*n);
                        }
                    });
                    return Err(e);
                }
            };
            job_stats.bytes_read_non_output_levels = plan.inputs.iter().map(|f| f.file_size).sum();
            job_stats.bytes_read_output_level = plan.next_inputs.iter().map(|f| f.file_size).sum();
            job_stats.bytes_written = result.bytes_written;
            job_stats.num_output_files = result.outputs.len() as u64;
            job_stats.num_input_records = result.entries_in;
            job_stats.num_dropped_records = result.entries_dropped;
            // The output level's counts; the proximal level's apart (RocksDB's
            // `output_level_stats` and `proximal_level_stats`).
            let on_proximal =
                |i: usize| proximal.is_some() && result.proximal.get(i).copied().unwrap_or(false);
            let (mut pl_files, mut pl_bytes) = (0usize, 0u64);
            for (i, m) in result.outputs.iter().enumerate() {
                if on_proximal(i) {
                    pl_files += 1;
                    pl_bytes += m.file_size;
                }
            }
            let records_out = result.entries_in.saturating_sub(result.entries_dropped);
            finished = Some(FinishedCounts {
                records_in: result.entries_in,
                records_out: records_out.saturating_sub(result.proximal_records),
                output_files: result.outputs.len() - pl_files,
                output_bytes: result.outputs.iter().map(|m| m.file_size).sum::<u64>() - pl_bytes,
                blob_files: result.blob_additions.len(),
                blob_bytes: result.blob_additions.iter().map(super::flush::blob_file_bytes).sum(),
                proximal: (pl_files > 0).then(|| ProximalCounts {
                    level: proximal.as_ref().map_or(0, |p| p.level),
                    files: pl_files,
                    bytes: pl_bytes,
                    records: result.proximal_records,
                }),
            });
            self.stats.compaction_bytes_read.fetch_add(plan.input_bytes(), Ordering::Relaxed);
            self.stats.compaction_bytes_written.fetch_add(result.bytes_written, Ordering::Relaxed);
            if let Some(s) = self.config.statistics.as_deref() {
                // As RocksDB's CompactionJob: input bytes read, output bytes written, the
                // job's input file count and duration (trivial moves read and write nothing).
                use crate::statistics::{Histogram, Ticker};
                s.record_tick(Ticker::CompactReadBytes, plan.input_bytes());
                s.record_tick(Ticker::CompactWriteBytes, result.bytes_written);
                // RocksDB's CompactionIterator counts, by reason of the drop.
                s.record_ticks(&[
                    (Ticker::CompactionKeyDropNewerEntry, result.drops.newer_entry),
                    (Ticker::CompactionKeyDropObsolete, result.drops.obsolete),
                    (Ticker::CompactionKeyDropRangeDel, result.drops.range_del),
                    (Ticker::CompactionKeyDropUser, result.drops.user),
                    // Its blob garbage collection (RocksDB's CompactionJob, integrated BlobDB).
                    (Ticker::BlobDbGcNumKeysRelocated, result.blobs_relocated),
                    (Ticker::BlobDbGcBytesRelocated, result.blob_bytes_relocated),
                ]);
                s.record_in_histogram(Histogram::NumFilesInSingleCompaction, plan.num_input_files() as u64);
                s.report_time(Histogram::CompactionTime, started.elapsed().as_micros() as u64);
            }
            outputs_numbers = created.into_inner();
            // RocksDB's `GetOutputTemperature(is_proximal_level)`: the proximal level's
            // outputs are not the last level's (no `last_level_temperature`).
            // The level's compaction stats (rocksdb.cfstats) count the output level's
            // outputs only: RocksDB keeps the proximal level's apart and reports them nowhere
            // but the event and LOG line below.
            let num_levels = cf.config().num_levels;
            for (i, mut m) in result.outputs.into_iter().enumerate() {
                let level = match (&proximal, result.proximal.get(i)) {
                    (Some(p), Some(true)) => {
                        job_stats.num_output_files -= 1;
                        job_stats.bytes_written -= m.file_size;
                        p.level
                    }
                    _ => plan.output_level,
                };
                // A FIFO temperature change names its output's temperature.
                m.temperature = plan
                    .output_temperature
                    .unwrap_or_else(|| cf.config().output_temperature(level, num_levels));
                edit.new_files.push((level as u32, m));
            }
            edit.blob_file_additions = result.blob_additions;
            edit.blob_file_garbages = result.blob_garbage;
            if cf.config().report_bg_io_stats {
                self.info_log.buffer_line(format_args!(
                    "[{}] compaction to L{} wrote {} bytes, write micros {}",
                    cf.name,
                    plan.output_level,
                    result.bytes_written,
                    started.elapsed().as_micros()
                ));
            }
        }
        let outputs = edit.new_files.len();
        let installed = self.log_and_apply(st, vec![edit], |_| {});
        for n in &outputs_numbers {
            self.versions.release_output(*n);
        }
        installed?;
        self.stats.compactions.fetch_add(1, Ordering::Relaxed);
        if plan.trivial_copy {
            // Counted once installed, as RocksDB's UpdateFIFOCompactionStatus (a temperature
            // change that rewrites its input is not counted there).
            crate::statistics::record_tick(
                self.config.statistics.as_deref(),
                crate::statistics::Ticker::FifoChangeTemperatureCompactions,
                1,
            );
        }
        if !plan.deletion_only && !plan.trivial_copy {
            job_stats.micros = job_started.elapsed().as_micros() as u64;
            job_stats.cpu_micros =
                super::internal_stats::thread_cpu_micros().saturating_sub(cpu_started) + subcompaction_cpu;
            cf.internal_stats.add_compaction(
                plan.output_level,
                super::internal_stats::Priority::Low,
                &job_stats,
            );
        }
        if let Some(c) = st.cfs.get(&cf.id) {
            if trivial_move {
                let mut w = super::info_log::JsonWriter::event();
                w.field("job", job)
                    .field("event", "trivial_move")
                    .field("destination_level", plan.output_level)
                    .field("files", outputs)
                    .field("total_files_size", job_stats.bytes_moved);
                self.info_log.buffer_event(w);
            } else if let Some(f) = &finished {
                if let Some(p) = &f.proximal {
                    self.info_log.buffer_line(format_args!(
                        "[{}] has Proximal Level output: {}, level {}, number of files: {}, number of records: {}",
                        cf.name, p.bytes, p.level, p.files, p.records
                    ));
                }
                self.info_log.buffer_event(compaction_finished_event(
                    job,
                    cf,
                    plan,
                    &job_stats,
                    f,
                    subcompactions.get(),
                    &c.current,
                ));
            }
        }
        st.purge_job = Some(job);
        // Under the DB mutex: buffered, written by the purge that follows the compaction.
        self.info_log.buffer_line(format_args!(
            "[{}] {} {}@{} + {}@{} files to L{} ({} outputs){}",
            cf.name,
            if plan.deletion_only { "FIFO compaction deleted" } else { "Compacted" },
            plan.num_input_files() - plan.next_inputs.len(),
            plan.level,
            plan.next_inputs.len(),
            plan.output_level,
            plan.output_level,
            outputs,
            if trivial_move { " (trivial move)" } else { "" }
        ));
        Ok(())
    }

    /// RocksDB's `Compaction::ShouldFormSubcompactions`: with `max_subcompactions` above 1,
    /// a leveled compaction from level 0 or a manual one, or a universal one, into a level
    /// below 0, of tables other than plain tables. Families with user-defined timestamps run one
    /// subcompaction in Shale (their boundaries would need timestamp-free key ranges).
    fn should_form_subcompactions(&self, cf: &CfHandle, plan: &CompactionPlan, manual: bool) -> bool {
        if self.live_options.max_subcompactions() <= 1
            || self.compaction_service.lock().is_some()
            || cf.icmp.user_comparator().timestamp_size() > 0
            || matches!(cf.config().table_format, crate::table::TableFormat::Plain(_))
        {
            return false;
        }
        match cf.config().style {
            CompactionStyle::Level => (plan.level == 0 || manual) && plan.output_level > 0,
            CompactionStyle::Universal => cf.config().num_levels > 1 && plan.output_level > 0,
            CompactionStyle::Fifo | CompactionStyle::None => false,
        }
    }

    /// RocksDB's `CompactionJob::GenSubcompactionBoundaries`: each input table's key anchors
    /// (`Table::key_anchors`; the file's largest key and size when it has none), cut into up
    /// to `max_subcompactions` ranges of at least the output level's target file size
    /// (`job::subcompaction_boundaries`).
    fn subcompaction_boundaries(&self, cf: &Arc<CfHandle>, plan: &CompactionPlan) -> Vec<Vec<u8>> {
        let mut anchors = Vec::new();
        for (_, f) in plan.all_inputs() {
            let mine = self
                .table_cache
                .get(cf, f)
                .ok()
                .and_then(|e| e.table.key_anchors().ok())
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| vec![(crate::key::user_key(&f.largest).to_vec(), f.file_size)]);
            anchors.extend(mine);
        }
        // RocksDB's MaxFileSizeForLevel of the output level: the level's target file size,
        // for universal too (whose outputs are not cut by size).
        let target = cf.config().target_file_size(plan.output_level);
        job::subcompaction_boundaries(
            &**cf.icmp.user_comparator(),
            anchors,
            u64::from(self.live_options.max_subcompactions()),
            target,
        )
    }

    /// The preallocation of a compaction's output tables: RocksDB's
    /// `Compaction::OutputFilePreallocationSize` blocks, space reserved with `allow_fallocate`.
    pub fn output_preallocation(
        &self,
        cf: &CfHandle,
        plan: &crate::compaction::picker::CompactionPlan,
        max_output_file_size: u64,
    ) -> crate::fs::Preallocation {
        let input_bytes: u64 = plan.all_inputs().map(|(_, f)| f.file_size).sum();
        let capped = cf.config().style == CompactionStyle::Level || plan.output_level > 0;
        crate::fs::Preallocation {
            block_size: job::output_preallocation_size(input_bytes, max_output_file_size, capped),
            fallocate: self.config.allow_fallocate,
        }
    }

    /// What a compaction's output tables are built with, the same for a compaction run here
    /// and one a remote compaction worker runs (`remote_compaction.rs`): the family's table
    /// options (`flush::builder_options`) with the output level's target file size, low I/O
    /// priority under a rate limiter (RocksDB's compactions write at `Env::IO_LOW`), the
    /// inputs' oldest ancestor time as creation time (what `ttl` compaction goes by), the
    /// inputs' newest `rocksdb.newest.key.time` (RocksDB's `MaxInputFileNewestKeyTime`; 0
    /// where a table has none), and no compression when the plan says so. Returns the
    /// options for an output numbered `n`.
    pub fn compaction_builder_options<'a>(
        &self,
        cf: &'a CfHandle,
        plan: &'a CompactionPlan,
    ) -> impl Fn(u64) -> crate::table::builder::TableBuilderOptions + 'a {
        let ancestor = plan.all_inputs().map(|(_, f)| f.oldest_ancester_time).filter(|t| *t > 0).min();
        let newest_key_time = plan
            .all_inputs()
            .filter_map(|(_, f)| self.table_cache.get(cf, f).ok())
            .filter_map(|e| e.table.properties().raw_u64(crate::table::properties::names::NEWEST_KEY_TIME))
            .max()
            .unwrap_or(0);
        let (compression, compression_opts) = compaction_compression(cf, plan);
        // `prepopulate_block_cache` kFlushAndCompaction: the outputs' key bases differ by
        // file number only.
        let warm = self.table_cache.warm_cache(cf, 0, true);
        move |n: u64| {
            let mut b = super::flush::builder_options(cf, n);
            b.compression = compression;
            b.compression_opts = compression_opts.clone();
            // RocksDB's table builder skips the filter of a bottommost compaction's outputs.
            if cf.config().optimize_filters_for_hits && plan.bottommost {
                b.filter_bits_per_key = None;
            }
            b.target_file_size = cf.config().target_file_size(plan.output_level);
            b.filter_level = super::flush::filter_level(cf, plan.output_level as i32);
            if let Some((_, pri)) = b.rate_limiter.as_mut() {
                *pri = crate::rate_limiter::IoPriority::Low;
            }
            if let Some(t) = ancestor {
                b.creation_time = b.creation_time.min(t);
            }
            b.newest_key_time = newest_key_time;
            b.warm_cache = warm.clone().map(|w| crate::table::WarmCache { key: w.key.for_file(n), ..w });
            b
        }
    }

    /// The merged iterator over a compaction's inputs, and their range tombstones.
    pub fn compaction_input(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        plan: &CompactionPlan,
    ) -> Result<(BoxedIterator, Vec<range_del::RangeTombstone>)> {
        let mut children: Vec<BoxedIterator> = Vec::new();
        let mut tombstones = Vec::new();
        // RocksDB's compaction reads: no block cache fill, `compaction_readahead_size` ahead.
        let reads = crate::table::reader::BlockReads {
            for_compaction: true,
            readahead_size: usize::try_from(self.live_options.compaction_readahead_size())
                .unwrap_or(usize::MAX),
            ..crate::table::reader::BlockReads::from(false)
        };
        // `use_direct_io_for_compaction_reads` (without `use_direct_reads`): the inputs are
        // read through readers of their own opened with O_DIRECT, as RocksDB's
        // `open_ephemeral_table_reader`; level 0's all at once, a deeper level's one at a
        // time as its level iterator reaches them.
        let direct = (self.config.use_direct_io_for_compaction_reads && !self.config.use_direct_reads)
            .then_some(crate::fs::ReadFileOptions { direct: true, ..Default::default() });
        let mut add_level = |level: usize, files: &[Arc<crate::version::edit::FileMetaData>]| -> Result<()> {
            for f in files {
                let e = match direct {
                    Some(o) if level == 0 => self.table_cache.open_ephemeral(cf, f, Some(level), o)?,
                    _ => self.table_cache.get(cf, f)?,
                };
                tombstones.extend(range_del::from_table_entries(e.table.range_tombstones())?);
                if level == 0 {
                    children.push(e.table.iter(reads));
                }
            }
            if level > 0 && !files.is_empty() {
                children.push(match direct {
                    Some(o) => Box::new(self.ephemeral_level_iterator(cf, files, level, reads, o)),
                    None => Box::new(self.level_iterator_of(cf, files, reads)),
                });
            }
            Ok(())
        };
        add_level(plan.level, &plan.inputs)?;
        for (level, files) in &plan.middle {
            add_level(*level, files)?;
        }
        add_level(plan.output_level, &plan.next_inputs)?;
        Ok((Box::new(MergingIterator::new(cf.icmp.clone(), children)), tombstones))
    }

    /// RocksDB's CompactRange: flush, then compact each level holding keys of the range
    /// into the next, down to the deepest such level, one step at a time (`manual_step`,
    /// RocksDB's `RunManualCompaction`). `exclusive` (`CompactOptions::
    /// set_exclusive_manual_compaction`, RocksDB's `exclusive_manual_compaction`): each step
    /// first waits for every compaction of the database to end, and while it is registered
    /// no automatic compaction of any family starts; otherwise automatic compactions go on
    /// beside it on the files it does not hold, and a step whose files or output range
    /// another compaction holds waits for it. With `change_level`
    /// (`CompactOptions::set_change_level`, holding the target level) the level the
    /// compaction ended on then moves (`refit_level`).
    pub fn compact_range_impl(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
        bottommost: BottommostLevel,
        change_level: Option<i32>,
        exclusive: bool,
    ) -> Result<()> {
        // RocksDB's CompactRange: refused at once while a level refit has manual
        // compactions disabled.
        if self.lock_state().jobs.manual_paused > 0 {
            return Err(manual_compaction_paused());
        }
        if change_level.is_some() && cf.config().style == CompactionStyle::Fifo {
            return Err(Error::not_supported("FIFO compaction does not support change_level."));
        }
        self.check_writable()?;
        self.flush_memtables(true, Some(cf.id))?;
        let mut st = self.lock_state();
        let dropped = || Error::invalid_argument("column family dropped");
        st.cfs.get(&cf.id).ok_or_else(dropped)?;
        // The level the compaction ended on (RocksDB's `final_output_level`); None when it
        // found nothing to compact in the range (leveled).
        let r = (|| -> Result<Option<usize>> {
            let style = cf.config().style;
            if matches!(style, CompactionStyle::Universal | CompactionStyle::Fifo) {
                // RocksDB ignores the range under FIFO (it runs FIFO's own pick, once) and
                // under universal (every file of every level goes into the last level).
                let mut pick = |this: &DbInner, c: &super::CfState| {
                    if style == CompactionStyle::Fifo {
                        // Table properties (newest key times) for FIFO's temperature change.
                        let stats = |f: &crate::version::edit::FileMetaData| this.file_stats(cf, f);
                        let busy = picker::Busy {
                            files: Some(&c.being_compacted),
                            running: &c.running,
                            stats: Some(&stats),
                            ..Default::default()
                        };
                        crate::compaction::fifo::pick_fifo(&c.current, cf.config(), busy, picker::unix_now())
                    } else {
                        crate::compaction::universal::pick_manual_universal(&c.current, cf.config())
                    }
                };
                // Universal compacts everything into the last level (FIFO, refused a level
                // change above, stays at level 0).
                // With one level RocksDB takes the leveled path: nothing to compact, no move.
                let last = if style == CompactionStyle::Fifo { 0 } else { cf.config().max_output_level };
                if !self.manual_step(&mut st, cf, exclusive, &mut pick)? {
                    return Ok((last > 0).then_some(last));
                }
                return Ok(Some(last));
            }
            // As RocksDB's DBImpl::CompactRangeInternal (leveled): from the first level
            // holding keys of the range, compact one level down at a time. Level 0 always
            // goes down; with dynamic level sizes it goes to the base level
            // (kCompactToBaseLevel: the last level of a database with nothing below level 0)
            // and then every level moves down until the last level; otherwise the steps stop
            // at the deepest non-empty level of the family (not only of the range).
            // kCompactionStyleNone takes this path too, with its NullCompactionPicker picking
            // nothing at each step (dynamic level sizes are off there): the steps compact
            // nothing and end on the deepest non-empty level, which a level change moves.
            let null_picker = style == CompactionStyle::None;
            let num_levels = cf.config().num_levels;
            let first = {
                let c = st.cfs.get(&cf.id).ok_or_else(dropped)?;
                (0..num_levels).find(|&l| !c.current.overlapping_files(l, begin, end).is_empty())
            };
            let Some(first) = first else { return Ok(None) };
            let dynamic = cf.config().dynamic_level_bytes_in_force();
            // The tables there before this compaction: the bottommost compaction below
            // leaves the others (RocksDB's `max_file_num_to_ignore`, the next file number at
            // the start).
            let before: HashSet<u64> = {
                let c = st.cfs.get(&cf.id).ok_or_else(dropped)?;
                (0..c.current.num_levels())
                    .flat_map(|l| c.current.files(l).iter().map(|f| f.number))
                    .collect()
            };
            // The level the steps end on (the bottommost the range reaches) is then compacted
            // into itself as `CompactOptions::set_bottommost_level_compaction` says, over the
            // tables of the range there that this compaction did not write, as RocksDB
            // 11.8.1's CompactRangeInternal does: IfHaveCompactionFilter (the default) when
            // the family has a compaction filter (a TTL family's); Force and ForceOptimized
            // always (RocksDB 11 runs both with the same `max_file_num_to_ignore`); Skip never.
            let filtered = has_compaction_filter(cf);
            let mut level = first;
            loop {
                if level > 0 {
                    let c = st.cfs.get(&cf.id).ok_or_else(dropped)?;
                    let stop = if dynamic {
                        level + 1 >= num_levels
                    } else {
                        let non_empty =
                            (0..c.current.num_levels()).rev().find(|&l| c.current.num_files(l) > 0);
                        non_empty.is_none_or(|l| level + 1 > l)
                    };
                    if stop {
                        break;
                    }
                }
                // The output level as the picker sees it when the step picks (RocksDB's
                // kCompactToBaseLevel is resolved then).
                let mut output = level + 1;
                let mut pick = |_: &DbInner, c: &super::CfState| {
                    output = if dynamic && level == 0 {
                        picker::level_targets(&c.current, cf.config()).base_level.max(1)
                    } else {
                        level + 1
                    };
                    if null_picker {
                        return None;
                    }
                    picker::pick_manual_into(&c.current, level, output, begin, end)
                };
                self.manual_step(&mut st, cf, exclusive, &mut pick)?;
                if output >= num_levels {
                    break;
                }
                level = output;
            }
            let self_compact = match bottommost {
                BottommostLevel::Skip => false,
                BottommostLevel::IfHaveCompactionFilter => filtered,
                BottommostLevel::Force | BottommostLevel::ForceOptimized => true,
            };
            if self_compact && !null_picker {
                let mut pick = |_: &DbInner, c: &super::CfState| {
                    bottommost_plan(&c.current, cf, level, begin, end, &before)
                };
                self.manual_step(&mut st, cf, exclusive, &mut pick)?;
            }
            Ok(Some(level))
        })();
        // RocksDB runs ReFitLevel with manual compactions disabled (`DisableManualCompaction`:
        // the others registered or starting meanwhile fail with Incomplete, and it waits
        // until none is registered) and background work paused (`PauseBackgroundWork`: no
        // compaction starts, and it waits for every running one to end).
        let r = match (r, change_level) {
            (Ok(Some(level)), Some(target)) => {
                self.info_log
                    .buffer_line(format_args!("[RefitLevel] waiting for background threads to stop"));
                st.jobs.manual_paused += 1;
                self.done_cv.notify_all();
                let r = (|| {
                    while st.jobs.has_pending_manual() {
                        self.manual_wait_check(&st)?;
                        self.done_cv.wait_for(&mut st, std::time::Duration::from_secs(1));
                    }
                    st.jobs.compactions_paused += 1;
                    let r = (|| {
                        while st.jobs.running_compactions > 0 {
                            self.manual_wait_check(&st)?;
                            self.done_cv.wait_for(&mut st, std::time::Duration::from_secs(1));
                        }
                        self.refit_level(&mut st, cf, level, target)
                    })();
                    st.jobs.compactions_paused -= 1;
                    r
                })();
                st.jobs.manual_paused -= 1;
                r
            }
            (r, _) => r.map(|_| ()),
        };
        // An automatic compaction held back meanwhile may start now (RocksDB's
        // `MaybeScheduleFlushOrCompaction` at the end of CompactRange).
        self.schedule_compaction(&mut st, cf.id);
        self.work_cv.notify_all();
        self.done_cv.notify_all();
        r
    }

    /// Whether a manual step or a refit stops waiting: the database is closing or stopped.
    fn manual_wait_check(&self, st: &DbState) -> Result<()> {
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(Error::shutdown("Database shutdown"));
        }
        match st.errors.stop_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One step of a manual compaction (RocksDB's `RunManualCompaction`): registers it
    /// (`JobQueues::add_manual`), waits as `exclusive` says, then picks with `pick` on the
    /// family's current version and runs the plan on this thread. A pick that would read a
    /// file or write a range another compaction holds (RocksDB's `manual_conflict`, see
    /// [`manual_conflict`]) waits for a compaction to end and picks again. Ok(false):
    /// nothing to compact.
    fn manual_step(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        exclusive: bool,
        pick: &mut dyn FnMut(&DbInner, &super::CfState) -> Option<CompactionPlan>,
    ) -> Result<bool> {
        let token = st.jobs.add_manual(exclusive);
        let r = self.manual_step_registered(st, cf, token, exclusive, pick);
        st.jobs.remove_manual(token);
        self.work_cv.notify_all();
        self.done_cv.notify_all();
        r
    }

    fn manual_step_registered(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        token: u64,
        exclusive: bool,
        pick: &mut dyn FnMut(&DbInner, &super::CfState) -> Option<CompactionPlan>,
    ) -> Result<bool> {
        let dropped = || Error::invalid_argument("column family dropped");
        let wait = std::time::Duration::from_secs(1);
        if exclusive {
            while st.jobs.running_compactions > 0 {
                self.manual_wait_check(st)?;
                if st.jobs.manual_paused > 0 {
                    return Err(manual_compaction_paused());
                }
                self.info_log.buffer_line(format_args!(
                    "[{}] Manual compaction waiting for all other scheduled background compactions to finish",
                    cf.name
                ));
                self.done_cv.wait_for(st, wait);
            }
        }
        self.info_log.buffer_line(format_args!("[{}] Manual compaction starting", cf.name));
        loop {
            self.manual_wait_check(st)?;
            // A level refit disabled manual compactions (RocksDB's `manual_compaction_paused_`
            // seen by `RunManualCompaction`).
            if st.jobs.manual_paused > 0 {
                return Err(manual_compaction_paused());
            }
            // An exclusive step registered before this one, or (exclusive) any compaction
            // running; a refit's pause.
            if !st.jobs.shouldnt_run_manual(token) && st.jobs.compactions_paused == 0 {
                let c = st.cfs.get(&cf.id).ok_or_else(dropped)?;
                let Some(plan) = pick(self, c) else { return Ok(false) };
                if !manual_conflict(c, &plan) {
                    st.jobs.set_manual_in_progress(token, true);
                    let r = self.run_manual(st, cf, plan);
                    st.jobs.set_manual_in_progress(token, false);
                    return r.map(|()| true);
                }
            }
            self.done_cv.wait_for(st, wait);
        }
    }
}

/// RocksDB's `Status::Incomplete(kManualCompactionPaused)`, what a manual compaction answers
/// while manual compactions are disabled.
fn manual_compaction_paused() -> Error {
    Error::new(crate::ErrorKind::Incomplete, "Manual compaction paused")
}

/// RocksDB's `manual_conflict` of `PickCompactionForCompactRange`: a manual compaction
/// from level 0 while a level-0 compaction runs (universal: while any compaction of the
/// family runs, every universal compaction counting as one from level 0), or one reading a
/// file another compaction reads (`AreFilesInCompaction`) or writing a range another writes
/// at its output level (`FilesRangeOverlapWithCompaction`, with per-key placement's
/// proximal level).
fn manual_conflict(c: &super::CfState, plan: &CompactionPlan) -> bool {
    let cfg = c.handle.config();
    let level0_running = match cfg.style {
        CompactionStyle::Universal => !c.running.is_empty(),
        _ => c.running.iter().any(|r| r.level == 0),
    };
    if plan.level == 0 && level0_running && cfg.style != CompactionStyle::Fifo {
        return true;
    }
    if cfg.style == CompactionStyle::Fifo {
        // FIFO's manual pick is its automatic one, which leaves busy files out already.
        return false;
    }
    let busy = picker::Busy {
        files: Some(&c.being_compacted),
        running: &c.running,
        opts: Some(cfg),
        ..Default::default()
    };
    busy.conflicts(&c.current, plan)
}

impl DbInner {
    /// RocksDB 11.8.1's `DBImpl::ReFitLevel`, run by a manual compaction with
    /// `change_level` after its last step: every table of `level` (not only the ones the
    /// compaction wrote) moves to `target`, or for a negative target to the smallest level
    /// above `level` that is empty, as every level between, and whose target size holds
    /// `level`'s bytes (`FindMinimumEmptyLevelFitting`; with dynamic level bytes the levels
    /// above the base level have no target, so any empty one fits). One MANIFEST edit
    /// deletes and re-adds each table with its metadata unchanged: nothing is read or
    /// written. Refused with RocksDB's Status and texts: a target beyond the last level
    /// (InvalidArgument), a move down from level 0 or across a non-empty level or a level a
    /// running compaction writes (NotSupported), more than one table up to level 0
    /// (Aborted), a second level change at the same time (NotSupported).
    ///
    /// The caller has paused background compactions (`JobQueues::compactions_paused`), so no
    /// compaction starts; this waits for those of the family running and registers the move as a running
    /// compaction (its tables busy, its range at `target` claimed) so that no other manual
    /// compaction, DeleteFilesInRange or ingestion touches them until it is installed.
    fn refit_level(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        level: usize,
        target: i32,
    ) -> Result<()> {
        let dropped = || Error::invalid_argument("column family dropped");
        let num_levels = st.cfs.get(&cf.id).ok_or_else(dropped)?.current.num_levels();
        if target >= 0 && target as usize >= num_levels {
            return Err(Error::invalid_argument("Target level exceeds number of levels"));
        }
        while st.cfs.get(&cf.id).is_some_and(|c| !c.running.is_empty()) {
            self.done_cv.wait(st);
        }
        let c = st.cfs.get(&cf.id).ok_or_else(dropped)?;
        let v = c.current.clone();
        if v.files(level).is_empty() {
            return Ok(());
        }
        if st.refitting_level {
            self.info_log.buffer_line(format_args!("[ReFitLevel] another thread is refitting"));
            return Err(Error::not_supported("another thread is refitting"));
        }
        let to = if target < 0 { min_empty_level_fitting(&v, cf, level) } else { target as usize };
        if to == level {
            return Ok(());
        }
        let files = v.files(level).to_vec();
        let plan = CompactionPlan { level, output_level: to, inputs: files.clone(), ..Default::default() };
        let range = picker::RunningCompaction::of(&v, &plan);
        let ucmp = cf.icmp.user_comparator();
        // RocksDB's `RangeOverlapWithCompaction`: a running compaction writing `l` there.
        let written = |l: usize| {
            c.running.iter().any(|r| {
                r.output_level == l
                    && ucmp.compare(&r.smallest, &range.largest) != std::cmp::Ordering::Greater
                    && ucmp.compare(&range.smallest, &r.largest) != std::cmp::Ordering::Greater
            })
        };
        let between: Vec<usize> = if to > level {
            if level == 0 {
                return Err(Error::not_supported("Cannot change from level 0 to other levels."));
            }
            (level + 1..=to).collect()
        } else {
            if to == 0 && files.len() > 1 {
                return Err(Error::new(
                    crate::error::ErrorKind::Aborted,
                    "Moving more than 1 file from non-L0 to L0 is not allowed as it does not bring any \
                     benefit to read nor write throughput.",
                ));
            }
            (to..level).collect()
        };
        for l in between {
            if v.num_files(l) > 0 {
                return Err(Error::not_supported(
                    "Levels between source and target are not empty for a move.",
                ));
            }
            if written(l) {
                return Err(Error::not_supported(
                    "Levels between source and target will have some ongoing compaction's output.",
                ));
            }
        }
        st.refitting_level = true;
        let mut edit = VersionEdit { column_family: cf.id, ..Default::default() };
        for f in &files {
            edit.deleted_files.push((level as u32, f.number));
            edit.new_files.push((to as u32, (**f).clone()));
        }
        let running = self.start_compaction(st, cf.id, &plan);
        let installed = self.log_and_apply(st, vec![edit], |_| {});
        self.end_compaction(st, cf.id, plan, &running);
        st.refitting_level = false;
        installed?;
        self.info_log.buffer_line(format_args!(
            "[{}] ReFitLevel moved {} files from L{level} to L{to}",
            cf.name,
            files.len()
        ));
        Ok(())
    }

    /// Runs one step of a manual compaction and records its outcome.
    fn run_manual(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        plan: CompactionPlan,
    ) -> Result<()> {
        let running = self.start_compaction(st, cf.id, &plan);
        // A panic (a user's filter, merge operator or comparator, or a bug) halts the
        // database (`halt.rs`) instead of unwinding into the caller with the plan running.
        let result =
            self.catch_job_panic("manual compaction", || self.run_compaction_as(st, cf, &plan, true));
        self.note_halt(st);
        self.end_compaction(st, cf.id, plan, &running);
        if let Err(e) = result {
            if counts_as_bg_error(&e) {
                self.set_bg_error_in(st, e.clone(), BgErrorReason::Compaction);
            }
            return Err(e);
        }
        st.errors.background_job_succeeded();
        Ok(())
    }

    /// Queues the families with `ttl`, periodic, FIFO temperature-age or read-triggered
    /// compaction on, so that the
    /// picker looks at their tables' ages and reads (called by idle compaction threads, about once a second; acts
    /// once every RocksDB's `ComputeTriggerCompactionPeriod` seconds, which
    /// `max_compaction_trigger_wakeup_seconds` bounds, logging RocksDB's INFO line).
    /// How long until `schedule_aged_compactions` is next due (RocksDB's `kTriggerCompaction`
    /// period after the last run), at least a second.
    pub fn aged_trigger_wait(&self, st: &DbState) -> std::time::Duration {
        use std::sync::atomic::Ordering as AtomicOrdering;
        let period = self.aged_trigger_period(st);
        let due = self.aged_trigger_at.load(AtomicOrdering::Relaxed).saturating_add(period);
        let now = crate::compaction::picker::unix_now();
        // Whole seconds from a floor of now: never early, at most a second late.
        std::time::Duration::from_secs(due.saturating_sub(now).max(1))
    }

    /// RocksDB's `kTriggerCompaction` period with the options in force (seconds).
    fn aged_trigger_period(&self, st: &DbState) -> u64 {
        let live = &self.live_options;
        let settings = crate::compaction::trigger::TriggerSettings {
            max_compaction_trigger_wakeup_seconds: live.max_compaction_trigger_wakeup_seconds(),
            stats_dump_period_sec: live.stats_dump_period_sec(),
            stats_persist_period_sec: live.stats_persist_period_sec(),
        };
        crate::compaction::trigger::trigger_period(&settings, st.cfs.values().map(|c| c.handle.config()))
    }

    pub fn schedule_aged_compactions(&self, st: &mut DbState) {
        use std::sync::atomic::Ordering as AtomicOrdering;
        let now = crate::compaction::picker::unix_now();
        let period = self.aged_trigger_period(st);
        if now < self.aged_trigger_at.load(AtomicOrdering::Relaxed).saturating_add(period) {
            return;
        }
        self.aged_trigger_at.store(now, AtomicOrdering::Relaxed);
        self.info_log.buffer_line_at(
            crate::config::LogLevel::Info,
            format_args!("Running the periodic task to trigger compactions."),
        );
        let ids: Vec<u32> = st
            .cfs
            .iter()
            .filter(|(_, c)| {
                let cfg = c.handle.config();
                // A delayed bottommost file becomes eligible with time too, and a table with
                // reads (RocksDB's `read_triggered_compaction_threshold > 0.0` test).
                (cfg.age_ttl, cfg.age_periodic) != (0, 0)
                    || cfg.bottommost_file_compaction_delay > 0
                    || !cfg.fifo_temperature_ages.is_empty()
                    || cfg.read_triggered_compaction_threshold > 0.0
            })
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.schedule_compaction(st, id);
        }
    }
}

/// A manual compaction of `level` (the one CompactRange's steps ended on) into itself,
/// over the files holding keys of `[begin, end]` that are numbered in `only`.
fn bottommost_plan(
    v: &crate::version::Version,
    cf: &CfHandle,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    only: &HashSet<u64>,
) -> Option<CompactionPlan> {
    let mut inputs = v.overlapping_files(level, begin, end);
    inputs.retain(|f| only.contains(&f.number));
    // Every table holding a version of the inputs' boundary keys (timestamps: a key's
    // versions may span two tables), so the level stays disjoint once rewritten.
    let inputs = picker::clean_cut(v, level, inputs);
    let ucmp = cf.icmp.user_comparator();
    let lo = inputs.iter().map(|f| crate::key::user_key(&f.smallest)).min_by(|a, b| ucmp.compare(a, b))?;
    let hi = inputs.iter().map(|f| crate::key::user_key(&f.largest)).max_by(|a, b| ucmp.compare(a, b))?;
    let bottommost =
        (level + 1..v.num_levels()).all(|l| v.overlapping_files(l, Some(lo), Some(hi)).is_empty());
    Some(CompactionPlan { level, output_level: level, inputs, bottommost, ..Default::default() })
}

/// RocksDB's `DBImpl::FindMinimumEmptyLevelFitting`: going up from `level`, the last level
/// (above level 0) that is empty, with every level between, and whose target size is at
/// least `level`'s bytes; `level` itself if there is none.
fn min_empty_level_fitting(v: &crate::version::Version, cf: &CfHandle, level: usize) -> usize {
    let bytes = v.level_bytes(level);
    // Target sizes as the Version's (RocksDB's `MaxBytesForLevel`): dynamic level bytes
    // only under leveled compaction (RocksDB's options sanitizing turns it off otherwise).
    let targets =
        cf.config().dynamic_level_bytes_in_force().then(|| picker::level_targets(v, cf.config()).max_bytes);
    let max_bytes = |l: usize| match &targets {
        Some(t) => t.get(l).copied().unwrap_or(u64::MAX),
        None => cf.config().max_bytes_for_level(l),
    };
    let mut minimum = level;
    for l in (1..level).rev() {
        if v.num_files(l) > 0 || max_bytes(l) < bytes {
            break;
        }
        minimum = l;
    }
    minimum
}

/// What `compaction_finished` reports of a compaction that wrote files.
struct FinishedCounts {
    records_in: u64,
    records_out: u64,
    output_files: usize,
    output_bytes: u64,
    blob_files: usize,
    blob_bytes: u64,
    /// What went to the proximal level (per-key placement), if anything.
    proximal: Option<ProximalCounts>,
}

/// RocksDB's `proximal_level_stats` as its event and LOG line give them.
struct ProximalCounts {
    level: usize,
    files: usize,
    bytes: u64,
    records: u64,
}

/// The codec and options the outputs of `plan` are written with, from the family's current
/// version (`compaction/picker.rs::output_compression`).
fn compaction_compression(
    cf: &CfHandle,
    plan: &CompactionPlan,
) -> (shale_base::compression::CompressionType, crate::table::builder::CompressionOpts) {
    let sv = cf.super_version();
    crate::compaction::picker::output_compression(
        &sv.current,
        cf.config(),
        plan.output_level,
        !plan.disable_compression,
    )
}

/// RocksDB's `Compaction::InputCompressionMatchesOutput`: a table moves to another level
/// unchanged only when its level's codec is the output level's (per-level compression);
/// universal compaction's trivial moves do not ask (RocksDB returns before the check).
fn input_compression_matches_output(cf: &CfHandle, plan: &CompactionPlan) -> bool {
    if cf.config().style == CompactionStyle::Universal {
        return true;
    }
    let sv = cf.super_version();
    let input = crate::compaction::picker::output_compression(&sv.current, cf.config(), plan.level, true).0;
    input == compaction_compression(cf, plan).0
}

/// The name of the codec the outputs of `plan` are written with.
fn output_compression(cf: &CfHandle, plan: &CompactionPlan) -> &'static str {
    compaction_compression(cf, plan).0.name()
}

/// `compaction_started` (RocksDB's `CompactionJob::LogCompaction`) for `plan` on `cf`
/// whose current version is `v`; `snapshots` sorted. The values Shale lacks are in
/// `info_log.rs`.
fn compaction_started_event(
    job: i32,
    cf: &CfHandle,
    plan: &CompactionPlan,
    manual: bool,
    v: &crate::version::Version,
    snapshots: &[u64],
) -> super::info_log::JsonWriter {
    let reason = if manual {
        "ManualCompaction"
    } else if plan.deletion_only && plan.fifo_ttl {
        "FIFOTtl"
    } else if plan.deletion_only {
        "FIFOMaxSize"
    } else {
        plan.reason.unwrap_or("Unknown")
    };
    let mut w = super::info_log::JsonWriter::event();
    w.field("job", job).field("event", "compaction_started").field("cf_name", cf.name.as_str());
    w.field("compaction_reason", reason);
    w.array(&format!("files_L{}", plan.level), plan.inputs.iter().map(|f| f.number));
    for (level, files) in &plan.middle {
        w.array(&format!("files_L{level}"), files.iter().map(|f| f.number));
    }
    if !plan.next_inputs.is_empty() && plan.output_level != plan.level {
        w.array(&format!("files_L{}", plan.output_level), plan.next_inputs.iter().map(|f| f.number));
    }
    let score = if !manual && cf.config().style == CompactionStyle::Level {
        picker::level_scores(v, cf.config()).get(plan.level).copied().unwrap_or(-1.0)
    } else {
        -1.0
    };
    w.field("score", score).field("input_data_size", plan.input_bytes());
    w.field("oldest_snapshot_seqno", snapshots.first().map_or(-1, |s| *s as i64));
    w
}

/// `compaction_finished` (RocksDB's `CompactionJob::Install`), once installed (DB mutex
/// held: the caller buffers it); `v` the family's version then.
fn compaction_finished_event(
    job: i32,
    cf: &CfHandle,
    plan: &CompactionPlan,
    stats: &super::internal_stats::CompactionStats,
    f: &FinishedCounts,
    subcompactions: usize,
    v: &crate::version::Version,
) -> super::info_log::JsonWriter {
    let mut w = super::info_log::JsonWriter::event();
    w.field("job", job)
        .field("event", "compaction_finished")
        .field("compaction_time_micros", stats.micros)
        .field("compaction_time_cpu_micros", stats.cpu_micros)
        .field("output_level", plan.output_level)
        .field("num_output_files", f.output_files)
        .field("total_output_size", f.output_bytes);
    if f.blob_files > 0 {
        w.field("num_blob_output_files", f.blob_files).field("total_blob_output_size", f.blob_bytes);
    }
    w.field("num_input_records", f.records_in)
        .field("num_output_records", f.records_out)
        .field("num_subcompactions", subcompactions)
        .field("output_compression", output_compression(cf, plan))
        // Not counted by Shale's compaction (`info_log.rs`).
        .field("num_single_delete_mismatches", 0u64)
        .field("num_single_delete_fallthrough", 0u64);
    w.array("lsm_state", super::info_log::lsm_state(v));
    let blobs = v.blob_files();
    if let (Some(head), Some(tail)) = (blobs.keys().next(), blobs.keys().next_back()) {
        w.field("blob_file_head", *head).field("blob_file_tail", *tail);
    }
    if let Some(p) = &f.proximal {
        w.field("proximal_level_num_output_files", p.files)
            .field("proximal_level_bytes_written", p.bytes)
            .field("proximal_level_num_output_records", p.records)
            .field("proximal_level_num_output_files_blob", 0u64)
            .field("proximal_level_bytes_written_blob", 0u64);
    }
    w
}
