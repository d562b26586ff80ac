//! RocksDB's remote compaction (docs/compaction-service.md), both sides.
//!
//! Worker (`DB::OpenAndCompact`, what ldb's `remote_compaction_worker` runs): a database
//! opened as a secondary compacts the tables a primary named in a `CompactionServiceInput`
//! into another directory and describes them in a `CompactionServiceResult`
//! (`compaction/service.rs`). It loads `OPTIONS-<options_file_number>` as RocksDB does;
//! function-valued options (compaction filters) are not rebuilt from it, as RocksDB's
//! worker rebuilds none it has not registered.
//!
//! Primary (RocksDB's `Options::compaction_service`, here `set_compaction_service`): a
//! compaction that rewrites tables calls the service instead of running its job
//! (`compact.rs`, `run_remote_compaction`); the result's tables are renamed into the
//! database under new numbers and installed as the job's own outputs would be, in one
//! VersionEdit through log_and_apply.
//!
//! As RocksDB's worker: the inputs are looked up by number in the secondary's current
//! Version (NotFound if one is not live there, InvalidArgument if the family is unknown);
//! the outputs go to `output_dir` under file numbers the secondary allocates (the primary
//! renames them); the snapshots are the primary's. Each output carries the smallest epoch
//! number of the inputs (RocksDB's `MinInputFileEpochNumber`), the table's properties, and
//! unique id 0:0 ("unknown": Shale does not compute SST unique ids, so the primary checks
//! none). A subcompaction's key range (`has_begin` / `has_end`, which RocksDB's primary
//! sends with `max_subcompactions` > 1) bounds the job as RocksDB's
//! `CompactionServiceCompactionJob::Prepare` bounds its one subcompaction: the input is read
//! from `begin` (inclusive) to `end` (exclusive), both user keys.
//!
//! Per-key placement (`preclude_last_level_data_seconds`, `compaction/proximal.rs`) goes
//! remote too, as in RocksDB 11.8.1 (`compaction_service_job.cc`): the worker decides the
//! proximal level from its own options and Version as its `Compaction` does, writes both
//! streams, marks each output `is_proximal_level_output` and fills `proximal_level_stats`
//! (`has_proximal_level_output` when it wrote any); the primary installs the marked outputs
//! on its proximal level (`sub_compact->Outputs(file.is_proximal_level_output)`) and checks
//! the records of both levels (`VerifyOutputRecordCount`).

use std::path::Path;
use std::sync::Arc;

use crate::compaction::job::{self, JobInput};
use crate::compaction::picker::CompactionPlan;
use crate::compaction::service::{
    CompactionServiceInput, CompactionServiceResult, LevelStats, ServiceOutputFile,
};
use crate::error::{Error, Result};

/// RocksDB's `CompactionReason::kManualCompaction`, the reason a CompactRange job has: its
/// index in the per-reason counts of the result's level statistics.
const MANUAL_COMPACTION_REASON: usize = 9;

impl super::DbInner {
    /// Compacts the tables `input` names into `output_dir` (which must exist) and returns
    /// what RocksDB's `OpenAndCompact` returns; `output_path` in the result is `output_dir`
    /// as given. Meant for a secondary instance; the database's own Version is not changed.
    pub fn compact_for_service(
        self: &Arc<Self>,
        input: &CompactionServiceInput,
        output_dir: &Path,
    ) -> Result<CompactionServiceResult> {
        let started = std::time::Instant::now();
        let inner = self;
        let (cf, plan, proximal) = {
            let st = inner.lock_state();
            let cfs = st.cfs.values().find(|c| c.handle.name == input.cf_name).ok_or_else(|| {
                Error::invalid_argument(format!("remote compaction: no column family {:?}", input.cf_name))
            })?;
            let v = &cfs.current;
            let out_level = usize::try_from(input.output_level)
                .ok()
                .filter(|l| *l < v.num_levels())
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "remote compaction: bad output level {}",
                        input.output_level
                    ))
                })?;
            let mut by_level: Vec<Vec<Arc<crate::version::edit::FileMetaData>>> =
                vec![Vec::new(); v.num_levels()];
            for name in &input.input_files {
                let number =
                    name.strip_suffix(".sst").and_then(|n| n.parse::<u64>().ok()).ok_or_else(|| {
                        Error::invalid_argument(format!("remote compaction: bad input file name {name:?}"))
                    })?;
                let found = (0..v.num_levels())
                    .find_map(|l| v.files(l).iter().find(|f| f.number == number).map(|f| (l, f.clone())));
                let (level, f) = found.ok_or_else(|| {
                    Error::not_found(format!(
                        "remote compaction: input file {name} is not live in the secondary"
                    ))
                })?;
                by_level[level].push(f);
            }
            for files in &mut by_level {
                files.sort_by(|a, b| cfs.handle.icmp.compare(&a.smallest, &b.smallest));
            }
            let start = by_level.iter().position(|f| !f.is_empty()).ok_or_else(|| {
                Error::invalid_argument("remote compaction: the input names no file".to_string())
            })?;
            if start > out_level {
                return Err(Error::invalid_argument(format!(
                    "remote compaction: input on L{start} below output level L{out_level}"
                )));
            }
            // Level 0 files newest first, as the picker lists them.
            by_level[0].sort_by_key(|f| std::cmp::Reverse(f.largest_seqno));
            let deeper_empty = (out_level + 1..v.num_levels()).all(|l| v.files(l).is_empty());
            let plan = CompactionPlan {
                level: start,
                output_level: out_level,
                inputs: std::mem::take(&mut by_level[start]),
                next_inputs: if out_level > start {
                    std::mem::take(&mut by_level[out_level])
                } else {
                    Vec::new()
                },
                middle: (start + 1..out_level)
                    .map(|l| (l, std::mem::take(&mut by_level[l])))
                    .filter(|(_, files)| !files.is_empty())
                    .collect(),
                bottommost: deeper_empty,
                deletion_only: false,
                fifo_ttl: false,
                disable_compression: false,
                output_file_size: None,
                rewrite: true,
                move_all: false,
                reason: None,
                compact_cursor: None,
                output_temperature: None,
                trivial_copy: false,
                grandparents: Vec::new(),
                max_grandparent_overlap: None,
            };
            // Per-key placement, decided by the worker's own options and Version as
            // RocksDB's worker builds its `Compaction` (`compaction/proximal.rs`).
            let proximal = crate::compaction::proximal::proximal_output(v, cfs.handle.config(), &plan);
            (cfs.handle.clone(), plan, proximal)
        };

        // The subcompaction's bounds (RocksDB's `InitializeReadOptionsAndBoundaries`): with
        // user-defined timestamps each bound's timestamp becomes the largest one, so the
        // range holds every version of `begin`'s key and none of `end`'s.
        let ts_sz = cf.icmp.user_comparator().timestamp_size();
        let bound = |has: bool, k: &[u8], what: &str| -> Result<Option<Vec<u8>>> {
            if !has {
                return Ok(None);
            }
            let stem = k.len().checked_sub(ts_sz).map(|n| &k[..n]).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "remote compaction: {what} key shorter than the {ts_sz}-byte timestamp"
                ))
            })?;
            let mut b = stem.to_vec();
            b.resize(stem.len() + ts_sz, 0xff);
            Ok(Some(b))
        };
        let range =
            (bound(input.has_begin, &input.begin, "begin")?, bound(input.has_end, &input.end, "end")?);
        let (iter, tombstones) = inner.compaction_input(&cf, &plan)?;
        let epoch = plan.all_inputs().map(|(_, f)| f.epoch_number).filter(|e| *e > 0).min().unwrap_or(0);
        // The compaction's own table options (`compact.rs`), as RocksDB's worker runs the
        // primary's CompactionJob.
        let builder_options = inner.compaction_builder_options(&cf, &plan);
        let times = inner.compaction_seqno_time(&cf, &plan);
        let earliest_snapshot = input.snapshots.first().copied().unwrap_or(u64::MAX);
        let proximal_after_seqno = proximal.as_ref().map_or(u64::MAX, |p| {
            crate::compaction::proximal::proximal_after_seqno(p, times.preclude_min_seqno, earliest_snapshot)
        });
        let created = parking_lot::Mutex::new(Vec::new());
        let new_number = || {
            let n = inner.new_output_number();
            created.lock().push(n);
            n
        };
        let run = job::run(JobInput {
            fs: &*inner.fs,
            dir: output_dir,
            blob_dir: output_dir,
            path_id: 0,
            iter,
            tombstones,
            snapshots: input.snapshots.clone(),
            bottommost: plan.bottommost && !cf.config().ingest_behind,
            target_file_size: cf.config().target_file_size(plan.output_level),
            target_file_size_is_upper_bound: cf.config().target_file_size_is_upper_bound,
            preallocation: inner.output_preallocation(
                &cf,
                &plan,
                cf.config().target_file_size(plan.output_level),
            ),
            builder_options: &builder_options,
            new_file_number: &new_number,
            remove_value: None,
            compaction_filter: None,
            merge_operator: cf.config().callbacks.merge(),
            enforce_single_del_contracts: inner.config.enforce_single_del_contracts,
            full_history_ts_low: Some(cf.full_history_ts_low()).filter(|l| !l.is_empty()),
            blob_fetcher: None,
            blob_write: None,
            blob_gc_cutoff: 0,
            blob_readahead: 0,
            cancel: None,
            statistics: None,
            // RocksDB's `CompactionServiceCompactionJob::Prepare`: the one subcompaction
            // spans the input's range (the whole job without one).
            range,
            output_hash: super::verify_output::wants_hash(cf.config()),
            partitioner: cf.config().sst_partitioner.as_ref().filter(|_| plan.output_level != 0),
            grandparents: &[],
            max_grandparent_overlap: u64::MAX,
            seqno_time: times.mapping,
            preserve_time_min_seqno: times.preserve_time_min_seqno,
            proximal_after_seqno,
            // The worker's own factory (RocksDB's OpenAndCompact takes the override
            // options' `file_checksum_gen_factory`).
            file_checksum: inner.config.file_checksum_crc32c,
        });
        for n in created.into_inner() {
            inner.versions.release_output(n);
        }
        let run = run?;
        if !run.outputs.is_empty() {
            inner.fs.sync_dir(output_dir)?;
        }

        let mut result = CompactionServiceResult {
            output_level: input.output_level,
            output_path: output_dir.to_string_lossy().into_owned(),
            bytes_written: run.bytes_written,
            ..Default::default()
        };
        // Per level (output, proximal): files, bytes, point records.
        let mut per_level = [(0u64, 0u64, 0u64); 2];
        for (i, m) in run.outputs.iter().enumerate() {
            let on_proximal = proximal.is_some() && run.proximal.get(i).copied().unwrap_or(false);
            let path = super::filename::table_file(output_dir, m.number);
            let file = inner.fs.new_random_access_file(&path)?;
            let table = crate::table::any::AnyTable::open(
                file,
                m.file_size,
                crate::table::TableReaderOptions {
                    timestamps_persisted: m.user_defined_timestamps_persisted,
                    icmp: cf.icmp.clone(),
                    block_cache: None,
                    verify_checksums: true,
                    file_name: path.to_string_lossy().into_owned(),
                    cache_key: crate::cache::OffsetableCacheKey::unique(),
                    statistics: None,
                    block_protection_bytes_per_key: 0,
                },
            )?;
            let props = table.properties();
            let l = &mut per_level[usize::from(on_proximal)];
            l.0 += 1;
            l.1 += m.file_size;
            l.2 += props.num_entries.saturating_sub(props.num_range_deletions);
            let mut f = ServiceOutputFile {
                file_name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                file_size: m.file_size,
                smallest_seqno: m.smallest_seqno,
                largest_seqno: m.largest_seqno,
                smallest_internal_key: m.smallest.clone(),
                largest_internal_key: m.largest.clone(),
                oldest_ancester_time: m.oldest_ancester_time,
                file_creation_time: m.file_creation_time,
                epoch_number: epoch,
                file_checksum: m.file_checksum.clone(),
                file_checksum_func_name: m.file_checksum_func_name.clone(),
                marked_for_compaction: m.marked_for_compaction,
                unique_id: m.unique_id.unwrap_or([0, 0]),
                file_temperature: "kUnknown".into(),
                // RocksDB's worker: its OutputValidator's hash (0 when not computed).
                paranoid_hash: run.output_hashes.get(i).copied().unwrap_or(0),
                is_proximal_level_output: on_proximal,
                ..Default::default()
            };
            f.set_table_properties(props);
            result.output_files.push(f);
        }
        // The proximal level's outputs first, as RocksDB's `SubcompactionState::GetOutputs`.
        result.output_files.sort_by_key(|f| !f.is_proximal_level_output);
        let [(files, _, records), (prox_files, prox_bytes, prox_records)] = per_level;
        let num_output_records = records + prox_records;
        let input_bytes: u64 = plan.all_inputs().map(|(_, f)| f.file_size).sum();
        result.bytes_read = input_bytes;
        let micros = started.elapsed().as_micros() as u64;
        let total_files = st_total_files(self, &cf);
        let stats = [
            ("elapsed_micros", micros),
            ("cpu_micros", micros),
            ("has_accurate_num_input_records", 1),
            ("num_input_records", run.entries_in),
            ("num_output_records", num_output_records),
            ("num_output_files", run.outputs.len() as u64),
            ("is_full_compaction", (total_files == plan.num_input_files()) as u64),
            ("is_manual_compaction", 1),
            ("is_remote_compaction", 1),
            ("total_output_bytes", run.bytes_written),
            ("num_records_replaced", run.drops.newer_entry),
        ];
        for (k, v) in stats {
            result.stats.insert(k.to_string(), v);
        }
        if let (Some(first), Some(last)) = (result.output_files.first(), result.output_files.last()) {
            let uk = |k: &[u8]| crate::key::user_key(k).to_vec();
            result
                .stats_prefixes
                .insert("smallest_output_key_prefix".into(), uk(&first.smallest_internal_key));
            result.stats_prefixes.insert("largest_output_key_prefix".into(), uk(&last.largest_internal_key));
        }
        // RocksDB's `AggregateCompactionOutputStats`: each level's outputs in its own stats.
        let mut ls = LevelStats::default();
        ls.set("micros", micros);
        ls.set("cpu_micros", micros);
        ls.set("bytes_written", run.bytes_written.saturating_sub(prox_bytes));
        ls.set("num_output_records", records);
        ls.set("num_output_files", files);
        ls.set("count", 1);
        ls.counts = vec![0; crate::compaction::service::COMPACTION_REASON_COUNTS];
        ls.counts[MANUAL_COMPACTION_REASON] = 1;
        let mut prox = LevelStats::default();
        prox.set("micros", micros);
        prox.set("cpu_micros", micros);
        prox.set("count", 1);
        prox.counts = ls.counts.clone();
        if prox_files > 0 {
            prox.set("bytes_written", prox_bytes);
            prox.set("num_output_records", prox_records);
            prox.set("num_output_files", prox_files);
            result.has_proximal_level_output = true;
        }
        result.output_level_stats = ls;
        result.proximal_level_stats = prox;
        Ok(result)
    }
}

fn st_total_files(db: &super::DbInner, cf: &super::CfHandle) -> usize {
    let st = db.lock_state();
    st.cfs.get(&cf.id).map_or(0, |c| (0..c.current.num_levels()).map(|l| c.current.files(l).len()).sum())
}

/// Where a primary hands out its compactions (RocksDB's `CompactionService`, its Schedule
/// and Wait in one call): given a serialized `CompactionServiceInput`, returns the
/// serialized `CompactionServiceResult` once a worker produced it. Called without the DB
/// mutex, on the thread that runs the compaction.
pub trait CompactionService: Send + Sync {
    fn compact(&self, input: &[u8]) -> Result<Vec<u8>>;
}

impl super::DbInner {
    /// Runs `plan` through `service` (RocksDB's
    /// `CompactionJob::ProcessKeyValueCompactionWithCompactionService`): the input names the
    /// plan's tables, the primary's snapshots, the database's id and latest OPTIONS file;
    /// each output the result lists is renamed from the result's `output_path` into
    /// `out_dir` under a new file number and described by the result's metadata. The caller
    /// installs them as it installs its own outputs (one VersionEdit through log_and_apply);
    /// `JobResult::proximal` marks the outputs the result puts on the proximal level.
    pub fn run_remote_compaction(
        &self,
        cf: &super::CfHandle,
        plan: &CompactionPlan,
        snapshots: &[u64],
        service: &dyn CompactionService,
        new_number: &dyn Fn() -> u64,
        out_dir: &Path,
    ) -> Result<job::JobResult> {
        let options_file_number = crate::options_file::latest_options_file(&*self.fs, &self.path)?
            .map(|(n, _)| n)
            .ok_or_else(|| Error::not_found("remote compaction: the database has no OPTIONS file"))?;
        // The id open settled on (no IDENTITY file with `write_identity_file` false).
        let db_id = match &self.config.table_ids {
            Some(ids) => ids.db_id.clone(),
            None => String::from_utf8(crate::fs::read_file(&*self.fs, &self.path.join("IDENTITY"))?)
                .map_err(|_| Error::corruption("IDENTITY is not UTF-8"))?,
        };
        let input = CompactionServiceInput {
            cf_name: cf.name.clone(),
            snapshots: snapshots.to_vec(),
            input_files: plan.all_inputs().map(|(_, f)| format!("{:06}.sst", f.number)).collect(),
            output_level: plan.output_level as i32,
            db_id: db_id.trim().to_string(),
            options_file_number,
            ..Default::default()
        };
        self.info_log.log(format_args!(
            "[{}] Starting remote compaction (output level: {}): {}",
            cf.name,
            plan.output_level,
            input.input_files.join(", ")
        ));
        let result = CompactionServiceResult::decode(&service.compact(&input.encode())?)?;
        if result.status.code != 0 {
            return Err(Error::io_msg(format!(
                "remote compaction failed (status code {}, subcode {}): {}",
                result.status.code, result.status.subcode, result.status.message
            )));
        }
        let mut outputs = Vec::new();
        let mut output_hashes = Vec::new();
        let mut output_records = 0u64;
        let mut proximal = Vec::new();
        let mut proximal_records = 0u64;
        for f in &result.output_files {
            let number = new_number();
            let src = Path::new(&result.output_path).join(&f.file_name);
            let dst = super::filename::table_file(out_dir, number);
            self.fs.rename(&src, &dst)?;
            let file_size = if f.file_size == 0 { self.fs.file_size(&dst)? } else { f.file_size };
            let entries = f.table_property_u64("num_entries");
            let range_dels = f.table_property_u64("num_range_deletions");
            output_records += entries.saturating_sub(range_dels);
            proximal.push(f.is_proximal_level_output);
            if f.is_proximal_level_output {
                proximal_records += entries.saturating_sub(range_dels);
            }
            let start = f.table_property_u64("tail_start_offset");
            let no_data_blocks = entries == 0 || entries == range_dels;
            let tail_size =
                if (start > 0 || no_data_blocks) && start <= file_size { file_size - start } else { 0 };
            outputs.push(crate::version::edit::FileMetaData {
                number,
                file_size,
                smallest: f.smallest_internal_key.clone(),
                largest: f.largest_internal_key.clone(),
                smallest_seqno: f.smallest_seqno,
                largest_seqno: f.largest_seqno,
                marked_for_compaction: f.marked_for_compaction,
                oldest_ancester_time: f.oldest_ancester_time,
                file_creation_time: f.file_creation_time,
                file_checksum: f.file_checksum.clone(),
                file_checksum_func_name: f.file_checksum_func_name.clone(),
                unique_id: Some(f.unique_id).filter(|u| *u != [0, 0]),
                epoch_number: f.epoch_number,
                tail_size,
                // Whether the worker's table holds timestamps, from its properties (a
                // family with `persist_user_defined_timestamps=false` gets tables without
                // them). RocksDB 11.8.1's CompactionServiceCompactionJob leaves its
                // FileMetaData default (true) here, so its primary reads such an output as
                // if it held timestamps; Shale records what the table says, as a local
                // compaction does (docs/timestamps.md).
                user_defined_timestamps_persisted: f
                    .table_properties
                    .get("user_defined_timestamps_persisted")
                    .is_none_or(|v| v != "0"),
                ..Default::default()
            });
            output_hashes.push(f.paranoid_hash);
        }
        // RocksDB's VerifyOutputRecordCount: the records the worker says it wrote are those
        // its tables hold.
        let said = result.output_level_stats.get("num_output_records")
            + result.proximal_level_stats.get("num_output_records");
        if said != output_records {
            return Err(Error::corruption(format!(
                "Number of keys in compaction output SST files does not match number of keys added. \
                 Expected {said} but there are {output_records} in output SST files"
            )));
        }
        let entries_in = result.stat("num_input_records");
        Ok(job::JobResult {
            outputs,
            bytes_written: result.bytes_written,
            entries_dropped: entries_in.saturating_sub(output_records),
            blob_additions: Vec::new(),
            blob_garbage: Vec::new(),
            entries_in,
            drops: Default::default(),
            blobs_relocated: 0,
            blob_bytes_relocated: 0,
            proximal,
            proximal_records,
            output_hashes,
        })
    }
}
