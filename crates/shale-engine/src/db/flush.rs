//! Flushing immutable memtables to level-0 tables (the flush job the scheduler runs).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::error_handler::BgErrorReason;
use super::filename;
use super::{DbInner, DbState};
use crate::compaction::job::flush_entries;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::iter::range_del::RangeTombstone;
use crate::key::{parse_internal_key, MAX_SEQUENCE_NUMBER};
use crate::memtable::MemTable;
use crate::table::any::AnyTableBuilder;
use crate::table::builder::TableBuilderOptions;
use crate::version::edit::{FileMetaData, VersionEdit};

/// The level a Ribbon filter policy goes by for a table written to `level` (-1: flush),
/// as RocksDB's `RibbonFilterPolicy`: FIFO compaction counts every table as the last level.
pub fn filter_level(cf: &CfHandle, level: i32) -> i32 {
    if cf.config().style == crate::config::CompactionStyle::Fifo {
        i32::MAX - 1
    } else {
        level
    }
}

/// Table-builder options for a column family.
pub fn builder_options(cf: &CfHandle, orig_file_number: u64) -> TableBuilderOptions {
    let mut b = cf.config().table.clone();
    b.column_family_id = cf.id;
    b.column_family_name = cf.name.clone();
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    b.creation_time = now;
    b.file_creation_time = now;
    b.oldest_key_time = now;
    // A flush's (and a recovery's) newest key time is now, as RocksDB's FlushJob; a
    // compaction replaces it with its inputs' newest (`compact.rs`).
    b.newest_key_time = now;
    b.orig_file_number = orig_file_number;
    b.strip_timestamps = !cf.config().persist_user_defined_timestamps;
    b
}

/// BlobDB: where a flush or compaction of `cf` into `output_level` writes large values
/// (None: blob files off, or below `blob_file_starting_level`, where values stay in the
/// tables and blob references pass through, as RocksDB's).
/// `file_checksum`: the database's `file_checksum_gen_factory` is the CRC32C one.
pub fn blob_write_options(
    cf: &CfHandle,
    output_level: usize,
    file_checksum: bool,
) -> Option<crate::blob::BlobWriteOptions> {
    let b = &cf.config().blob;
    if i64::try_from(output_level).unwrap_or(i64::MAX) < i64::from(b.file_starting_level) {
        return None;
    }
    // With user-defined timestamps too: a blob record holds the user key with its
    // timestamp, as RocksDB's BlobFileBuilder writes it.
    b.enable_blob_files.then_some(crate::blob::BlobWriteOptions {
        min_blob_size: b.min_blob_size,
        blob_file_size: b.blob_file_size,
        compression: b.compression,
        codec: b.compression_opts,
        column_family_id: cf.id,
        file_checksum,
    })
}

/// Writes `mem` to table `number` (synced). None when the memtable holds nothing. Values
/// stay in the table even with BlobDB (atomic flush); compactions move the large ones to
/// blob files.
#[allow(clippy::too_many_arguments)]
pub fn write_level0_table(
    fs: &dyn FileSystem,
    dir: &Path,
    cf: &CfHandle,
    mem: &Arc<MemTable>,
    number: u64,
    snapshots: &[u64],
    stats: Option<&crate::statistics::Statistics>,
    checks: FlushChecks,
    warm: Option<crate::table::WarmCache>,
) -> Result<Option<FileMetaData>> {
    Ok(write_level0_table_of(
        fs,
        dir,
        cf,
        std::slice::from_ref(mem),
        number,
        snapshots,
        None,
        stats,
        checks,
        -1,
        None,
        warm,
        None,
    )?
    .map(|(m, _)| m))
}

/// The DB-wide checks of a flush (and of a table written at open): RocksDB's
/// `enforce_single_del_contracts` and `flush_verify_memtable_count`.
#[derive(Clone, Copy)]
pub struct FlushChecks {
    pub enforce_single_del_contracts: bool,
    pub verify_memtable_count: bool,
    /// `file_checksum_gen_factory` (the CRC32C one): the table and its blob files record
    /// their whole-file checksums, as RocksDB's `BuildTable`.
    pub file_checksum: bool,
}

impl FlushChecks {
    pub fn of(config: &crate::config::DbConfig) -> FlushChecks {
        FlushChecks {
            enforce_single_del_contracts: config.enforce_single_del_contracts,
            verify_memtable_count: config.flush_verify_memtable_count,
            file_checksum: config.file_checksum_crc32c,
        }
    }
}

/// RocksDB's `FlushJob::WriteLevel0Table` counts: the entries read from the memtables (point
/// entries scanned and range tombstones) against the entries they hold, then the entries
/// added to the table against its `num_entries` property (block-based and plain tables).
/// A difference is Corruption in RocksDB's words with `flush_verify_memtable_count`, and
/// passes without (RocksDB then only logs it).
fn verify_flush_counts(verify: bool, in_memtables: u64, read: u64, added: Option<(u64, u64)>) -> Result<()> {
    if !verify {
        return Ok(());
    }
    if in_memtables != read {
        return Err(crate::Error::corruption(format!(
            "Expected {in_memtables} entries in memtables, but read {read}"
        )));
    }
    if let Some((added, in_table)) = added.filter(|(a, t)| a != t) {
        return Err(crate::Error::corruption(format!(
            "Number of keys in flush output SST files does not match number of keys added to the \
             table. Expected {added} but there are {in_table} in output SST files"
        )));
    }
    Ok(())
}

/// Allocates the numbers of blob files a flush writes.
pub type BlobNumbers<'a> = &'a dyn Fn() -> u64;

/// Writes the memtables `mems` (merged) to table `number` (synced). None when they hold
/// nothing. A version no snapshot can see is dropped, as RocksDB's flush drops it
/// (`snapshots`: the sequence numbers of the live snapshots when the flush started,
/// sorted; one taken later is above every entry of `mems`); a cuckoo table also keeps one
/// entry per user key and snapshot stripe of whatever kind.
/// With `blobs` (BlobDB's `enable_blob_files`), values of at least `min_blob_size`
/// go to blob files (synced), whose additions are returned with the table; `stats` (the
/// database's statistics) counts their writes and failed merges. `level` is the level a
/// Ribbon filter policy goes by (`filter_level`): -1 for a flush, 0 for a table written
/// from the WALs at open (RocksDB's `WriteLevel0TableForRecovery` passes level 0 with
/// reason kRecovery, which its `RibbonFilterPolicy` takes as level 0, where a flush is -1).
#[allow(clippy::too_many_arguments)]
pub fn write_level0_table_of(
    fs: &dyn FileSystem,
    dir: &Path,
    cf: &CfHandle,
    mems: &[Arc<MemTable>],
    number: u64,
    snapshots: &[u64],
    blobs: Option<BlobNumbers<'_>>,
    stats: Option<&crate::statistics::Statistics>,
    checks: FlushChecks,
    level: i32,
    warm_blob_cache: Option<u64>,
    warm: Option<crate::table::WarmCache>,
    blob_fetcher: Option<crate::blob::BlobFetcher>,
) -> Result<Option<(FileMetaData, Vec<crate::version::edit::BlobFileAddition>)>> {
    // A flush (and a table written at open) goes to level 0.
    let mut blob_builder = match (blob_write_options(cf, 0, checks.file_checksum), blobs) {
        (Some(o), Some(numbers)) => {
            let b = crate::blob::BlobFileBuilder::new(fs, dir, o, numbers).counted(stats);
            // `prepopulate_blob_cache` kFlushOnly: a flush (`warm_blob_cache`: this open's
            // key base in blob caches; None at recovery) puts its blobs into the blob cache.
            let config = cf.config();
            match (&config.blob_cache, warm_blob_cache) {
                (Some(cache), Some(session)) if config.blob.prepopulate_cache => {
                    Some(b.warm_cache(cache.clone(), session))
                }
                _ => Some(b),
            }
        }
        _ => None,
    };
    let r = write_table_inner(
        fs,
        dir,
        cf,
        mems,
        number,
        snapshots,
        blob_builder.as_mut(),
        stats,
        checks,
        level,
        warm,
        blob_fetcher,
    );
    match (r, blob_builder) {
        (Ok(Some(meta)), Some(mut b)) => match b.finish() {
            Ok(()) => Ok(Some((meta, std::mem::take(&mut b.additions)))),
            Err(e) => {
                b.abandon();
                Err(e)
            }
        },
        (Ok(m), _) => Ok(m.map(|m| (m, Vec::new()))),
        (Err(e), b) => {
            if let Some(mut b) = b {
                b.abandon();
            }
            Err(e)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn write_table_inner(
    fs: &dyn FileSystem,
    dir: &Path,
    cf: &CfHandle,
    mems: &[Arc<MemTable>],
    number: u64,
    snapshots: &[u64],
    mut blobs: Option<&mut crate::blob::BlobFileBuilder<'_>>,
    stats: Option<&crate::statistics::Statistics>,
    checks: FlushChecks,
    level: i32,
    warm: Option<crate::table::WarmCache>,
    blob_fetcher: Option<crate::blob::BlobFetcher>,
) -> Result<Option<FileMetaData>> {
    let mut tombstones: Vec<(Vec<u8>, Vec<u8>)> = mems.iter().flat_map(|m| m.range_tombstones()).collect();
    if mems.iter().all(|m| m.is_empty()) && tombstones.is_empty() {
        return Ok(None);
    }
    // Timestamps not persisted: every key is flushed with the minimum timestamp (RocksDB's
    // logical strip; the table builder leaves it out), range tombstones' both ends too.
    let strip_ts = match cf.icmp.timestamp_size() {
        ts if ts > 0 && !cf.config().persist_user_defined_timestamps => ts,
        _ => 0,
    };
    if strip_ts > 0 {
        for (start, end) in tombstones.iter_mut() {
            *start = crate::key::pad_ikey_ts(&crate::key::strip_ikey_ts(start, strip_ts), strip_ts, 0);
            let keep = end.len().saturating_sub(strip_ts);
            end.truncate(keep);
            end.resize(keep + strip_ts, 0);
        }
        tombstones.sort_by(|a, b| cf.icmp.compare(&a.0, &b.0));
    }
    // A flush writes to the family's first table path (RocksDB's FlushJob: path id 0).
    let table_dir = cf.table_dir(dir, 0);
    let path = filename::table_file(table_dir, number);
    let file = fs.new_writable_file(&path)?;
    let (file, checksum) = crate::file_checksum::ChecksummedFile::wrap(file, checks.file_checksum);
    let topts = TableBuilderOptions {
        filter_level: filter_level(cf, level),
        warm_cache: warm,
        ..builder_options(cf, number)
    };
    // The table factory this flush writes with, read once (`set_options` may replace it
    // meanwhile; RocksDB's FlushJob keeps the mutable options it started with).
    let dedup = matches!(topts.table_format, crate::table::TableFormat::Cuckoo(_));
    let mut builder = AnyTableBuilder::new(topts, file);
    // RocksDB's FlushJob records `default_write_temperature` (so does a table written at
    // recovery, which the same options describe).
    let mut meta =
        FileMetaData { number, temperature: cf.config().default_write_temperature, ..Default::default() };
    let mut smallest_seq = MAX_SEQUENCE_NUMBER;
    let mut largest_seq = 0;
    let mut iter: Box<dyn crate::iter::InternalIterator> = match mems {
        [one] => one.iter(),
        _ => Box::new(crate::iter::merging::MergingIterator::new(
            cf.icmp.clone(),
            mems.iter().map(|m| m.iter()).collect(),
        )),
    };
    if strip_ts > 0 {
        use crate::table::ts_pad::{MinTsIter, MinTsMode};
        iter = Box::new(MinTsIter::new(iter, strip_ts, MinTsMode::Replace));
    }
    let mut first = true;
    let range = |meta: &mut FileMetaData, k: &[u8], first: &mut bool| {
        if *first || cf.icmp.compare(k, &meta.smallest).is_lt() {
            meta.smallest = k.to_vec();
        }
        if *first || cf.icmp.compare(k, &meta.largest).is_gt() {
            meta.largest = k.to_vec();
        }
        *first = false;
    };
    let mut last_user_key: Option<Vec<u8>> = None;
    let mut last_stripe = 0;
    // Entries handed to the table builder (`verify_flush_counts`).
    let mut added = 0u64;
    let mut emit = |k: &[u8], value: &[u8]| -> Result<()> {
        let seq = crate::key::trailer(k) >> 8;
        if dedup {
            let uk = crate::key::user_key(k);
            let stripe = snapshots.partition_point(|&s| s < seq);
            if last_user_key.as_deref() == Some(uk) && stripe == last_stripe {
                return Ok(());
            }
            last_user_key = Some(uk.to_vec());
            last_stripe = stripe;
        }
        added += 1;
        smallest_seq = smallest_seq.min(seq);
        largest_seq = largest_seq.max(seq);
        let value_type = (crate::key::trailer(k) & 0xff) as u8;
        let is_value = value_type == crate::key::ValueType::Value as u8;
        // A blob index already in the memtable (blob direct write's, or one recovered from
        // a WAL) links the table to its file, as RocksDB's FileMetaData::UpdateBoundaries.
        if value_type == crate::key::ValueType::BlobIndex as u8 {
            let bi = crate::blob::BlobIndex::decode(value)?;
            if bi.file_number != 0
                && (meta.oldest_blob_file_number == 0 || bi.file_number < meta.oldest_blob_file_number)
            {
                meta.oldest_blob_file_number = bi.file_number;
            }
        } else if value_type == crate::key::ValueType::WideColumnEntity as u8 {
            // With blob files, an entity's large column values go to them and it is written
            // as version 2 (RocksDB's flush runs the same `ExtractLargeColumnValuesIfNeeded`
            // as compaction); one that has blob columns already is kept as it is.
            let rewritten = match blobs.as_deref_mut() {
                Some(b) => {
                    crate::wide_columns::extract_large_columns(value, |c| b.add(crate::key::user_key(k), c))?
                }
                None => None,
            };
            let value = rewritten.as_deref().unwrap_or(value);
            crate::version::link_entity_blob_files(&mut meta, value)?;
            builder.add(k, value)?;
            range(&mut meta, k, &mut first);
            return Ok(());
        }
        match blobs.as_deref_mut().filter(|_| is_value) {
            Some(b) => match b.add(crate::key::user_key(k), value)? {
                Some(index) => {
                    let ik = crate::key::make_internal_key(
                        crate::key::user_key(k),
                        seq,
                        crate::key::ValueType::BlobIndex,
                    );
                    let bi = crate::blob::BlobIndex::decode(&index)?;
                    if meta.oldest_blob_file_number == 0 || bi.file_number < meta.oldest_blob_file_number {
                        meta.oldest_blob_file_number = bi.file_number;
                    }
                    builder.add(&ik, &index)?;
                    range(&mut meta, &ik, &mut first);
                }
                None => {
                    builder.add(k, value)?;
                    range(&mut meta, k, &mut first);
                }
            },
            None => {
                builder.add(k, value)?;
                range(&mut meta, k, &mut first);
            }
        }
        Ok(())
    };
    // What no snapshot can see is dropped and merge operands are combined, as RocksDB's
    // flush does: the compaction's per-key logic, not bottommost
    // (`compaction::job::flush_entries`).
    let range_dels = tombstones
        .iter()
        .map(|(start, end)| {
            let p = parse_internal_key(start)?;
            Ok(RangeTombstone { start: p.user_key.to_vec(), end: end.clone(), seq: p.sequence })
        })
        .collect::<Result<Vec<_>>>()?;
    let ts_low = cf.full_history_ts_low();
    let (read, _) = flush_entries(
        cf.icmp.user_comparator(),
        &mut *iter,
        range_dels,
        snapshots,
        Some(&ts_low[..]).filter(|l| !l.is_empty()),
        cf.config().callbacks.merge(),
        stats,
        checks.enforce_single_del_contracts,
        blob_fetcher,
        &mut emit,
    )?;
    let in_memtables: u64 = mems.iter().map(|m| m.num_entries()).sum();
    let read = read + tombstones.len() as u64;
    verify_flush_counts(checks.verify_memtable_count, in_memtables, read, None)?;
    for (start, end) in &tombstones {
        let p = parse_internal_key(start)?;
        smallest_seq = smallest_seq.min(p.sequence);
        largest_seq = largest_seq.max(p.sequence);
        builder.add_range_tombstone(start, end)?;
        range(&mut meta, start, &mut first);
        // The tombstone's exclusive end, as RocksDB's sentinel largest key.
        let sentinel =
            crate::key::make_internal_key(end, MAX_SEQUENCE_NUMBER, crate::key::ValueType::RangeDeletion);
        range(&mut meta, &sentinel, &mut first);
    }
    // The family's copy of the sequence-number-to-time mapping, for the table's range
    // (RocksDB's BuildTable; its time span is unlimited, so enforcing it at the file's
    // creation time changes nothing).
    let mapping = cf.seqno_time.lock().clone();
    if let Some(m) = mapping.filter(|_| smallest_seq <= largest_seq) {
        builder.set_seqno_time_mapping(m.encode_for_table(smallest_seq, largest_seq, None));
    }
    let result = builder.finish()?;
    // RocksDB compares the table's count for block-based and plain tables.
    let added = (!dedup).then_some((added + tombstones.len() as u64, result.properties.num_entries));
    verify_flush_counts(checks.verify_memtable_count, in_memtables, read, added)?;
    meta.file_size = result.file_size;
    meta.tail_size = result.properties.tail_size(result.file_size);
    // RocksDB's BuildTable records the family's option (with or without timestamps).
    meta.user_defined_timestamps_persisted = cf.config().persist_user_defined_timestamps;
    meta.marked_for_compaction = result.marked_for_compaction;
    meta.smallest_seqno = smallest_seq;
    meta.largest_seqno = largest_seq;
    meta.file_creation_time = result.properties.file_creation_time;
    meta.oldest_ancester_time = result.properties.creation_time;
    // RocksDB's BuildTable: the writer's whole-file checksum, or "Unknown" without a
    // factory.
    (meta.file_checksum, meta.file_checksum_func_name) = crate::file_checksum::recorded(checksum.as_ref());
    // RocksDB's BuildTable records the table's unique id (none when an id is missing).
    let p = &result.properties;
    meta.unique_id =
        crate::table::unique_id::internal_unique_id(&p.db_id, &p.db_session_id, p.orig_file_number, false);
    if table_dir != dir {
        // The callers sync the database directory; the table's is another.
        fs.sync_dir(table_dir)?;
    }
    Ok(Some(meta))
}

/// A blob file's size on disk: header, records, footer.
pub fn blob_file_bytes(b: &crate::version::edit::BlobFileAddition) -> u64 {
    b.total_blob_bytes + (crate::blob::format::HEADER_SIZE + crate::blob::format::FOOTER_SIZE) as u64
}

impl DbInner {
    /// Flushes family `id`'s immutable memtables, oldest first, each to a level-0 table,
    /// until none is left. The caller has set the family's `flush_running`; the DB mutex is
    /// released while a table is written and while the MANIFEST records it.
    pub fn flush_cf(&self, st: &mut MutexGuard<'_, DbState>, id: u32) -> Result<()> {
        if self.config.atomic_flush {
            return self.flush_atomic(st, id);
        }
        loop {
            if self.shutting_down.load(Ordering::Acquire) {
                return Ok(()); // what is left is in the WAL
            }
            let Some(cf) = st.cfs.get(&id) else { return Ok(()) };
            // With min_write_buffer_number_to_merge > 1, a background flush waits for that
            // many memtables and writes them all as one table.
            let merge_min = cf.handle.config().flush_merge_min;
            if !cf.force_flush && cf.imm.len() < merge_min {
                return Ok(());
            }
            // A MemPurge's output alone waits for the memtables switched after it.
            if !cf.imm_wants_flush() {
                return Ok(());
            }
            // Timestamps not persisted: a background flush waits while a memtable holds
            // timestamps at or above `full_history_ts_low`, unless writes would stall
            // (raising the bound, or the next switch, schedules it again).
            if !cf.force_flush && postpone_to_retain_udt(cf) {
                self.info_log.buffer_line(format_args!(
                    "FlushRequest for column family {} is re-scheduled to retain user-defined timestamps.",
                    cf.handle.name
                ));
                return Ok(());
            }
            // A flush of full write buffers may be a MemPurge instead (`mempurge.rs`): all
            // immutable memtables become one, no table is written, the log number stays.
            let threshold = cf.handle.config().experimental_mempurge_threshold;
            if threshold > 0.0 && !cf.force_flush && !self.config.atomic_flush && !cf.imm.is_empty() {
                let mems: Vec<Arc<MemTable>> = cf.imm.iter().map(|(m, _)| m.clone()).collect();
                let handle = cf.handle.clone();
                let snapshots = self.snapshot_list()?;
                let purged = super::unlocked(st, || {
                    super::mempurge::mempurge(
                        &handle,
                        &mems,
                        &snapshots,
                        threshold,
                        self.config.statistics.as_deref(),
                        self.config.enforce_single_del_contracts,
                    )
                });
                match purged {
                    Ok(Some(purged)) => {
                        let Some(cf) = st.cfs.get_mut(&id) else { return Ok(()) };
                        let n = mems.len().min(cf.imm.len());
                        let next_log = cf.imm[n - 1].1;
                        let bytes = purged.approximate_memory_usage();
                        cf.imm.splice(..n, std::iter::once((purged, next_log)));
                        // The merged memtable, now the oldest, stands for the n switched.
                        cf.imm_front_merged += n as u64 - 1;
                        cf.imm_front_purged = true;
                        cf.install_super_version();
                        self.stall_changed(st, id);
                        // Made under the DB mutex, written without it before the waiters
                        // are woken.
                        self.info_log.buffer_line(format_args!(
                            "[{}] Mempurge of {n} memtables into one of {bytes} bytes",
                            handle.name
                        ));
                        super::unlocked(st, || self.info_log.flush_buffered());
                        self.done_cv.notify_all();
                        return Ok(());
                    }
                    Ok(None) => {}
                    Err(e) => {
                        // Written by the flush that follows (its purge).
                        self.info_log
                            .buffer_line(format_args!("[{}] Mempurge process failed: {e}", handle.name));
                    }
                }
            }
            // With more than one family or 2PC, the closed WALs are synced first, and only
            // memtables whose data lies below the WAL current then are taken (RocksDB's
            // SyncClosedWals and max_memtable_id; `wal_sync.rs`).
            let synced_below = if self.flush_syncs_closed_wals(st) {
                match super::unlocked(st, || self.sync_closed_wals()) {
                    Ok(w) => {
                        self.take_synced_wal_additions(st);
                        Some(w)
                    }
                    Err(e) => {
                        self.set_bg_error_in(st, e.clone(), BgErrorReason::Flush);
                        return Err(e);
                    }
                }
            } else {
                None
            };
            let Some(cf) = st.cfs.get(&id) else { return Ok(()) };
            let mut take = if merge_min > 1 { cf.imm.len() } else { 1 };
            if let Some(w) = synced_below {
                take = take.min(cf.imm.iter().take_while(|(_, next)| *next <= w).count());
                if take == 0 {
                    return Ok(());
                }
            }
            let Some((_, next_log)) = cf.imm.get(take.wrapping_sub(1)).cloned() else { return Ok(()) };
            let mems: Vec<Arc<MemTable>> = cf.imm[..take].iter().map(|(m, _)| m.clone()).collect();
            let handle = cf.handle.clone();
            let snapshots = self.snapshot_list()?;
            let number = self.versions.new_output_number();
            // Build the table without the lock.
            let started = std::time::Instant::now();
            let cpu_started = super::internal_stats::thread_cpu_micros();
            let records: u64 = mems.iter().map(|m| m.num_entries()).sum();
            let blob_numbers = parking_lot::Mutex::new(Vec::new());
            let new_blob_number = || {
                let n = self.versions.new_output_number();
                blob_numbers.lock().push(n);
                n
            };
            let job = self.info_log.new_job_id();
            let result = super::unlocked(st, || {
                self.info_log.event(flush_started_event(job, &mems));
                write_level0_table_of(
                    &*self.fs,
                    &self.path,
                    &handle,
                    &mems,
                    number,
                    &snapshots,
                    Some(&new_blob_number),
                    self.config.statistics.as_deref(),
                    FlushChecks::of(&self.config),
                    -1,
                    Some(self.blob_cache.session()),
                    self.table_cache.warm_cache(&handle, number, false),
                    // A merge onto a blob value or an entity with blob columns in the
                    // memtable (blob direct write's) reads the blob, as RocksDB's flush
                    // (BuildTable sets its CompactionIterator's blob fetcher; compaction
                    // reads with fill_cache off).
                    Some(crate::blob::BlobFetcher {
                        cache: self.blob_cache.clone(),
                        cf_id: handle.id,
                        value_cache: handle.config().blob_cache.clone(),
                        fill_cache: false,
                        no_io: false,
                    }),
                )
                .and_then(|m| match m {
                    // Blob direct write: the memtables' blob files are sealed and added with
                    // the table (`blob_direct.rs`).
                    Some((meta, mut blobs)) => {
                        blobs.extend(self.seal_direct_blobs(&mems)?);
                        Ok(Some((meta, blobs)))
                    }
                    None => Ok(None),
                })
                .and_then(|m| {
                    if let Some((meta, _)) = m.as_ref().filter(|_| handle.config().paranoid_file_checks) {
                        self.verify_new_table(&handle, meta)?;
                    }
                    if let Some((meta, _)) = m.as_ref() {
                        super::info_log::log_table_created(
                            &self.info_log,
                            &self.table_cache,
                            job,
                            &handle,
                            meta,
                            Some(0),
                        );
                    }
                    if m.is_some() {
                        self.fs.sync_dir(&self.path).map(|_| m)
                    } else {
                        Ok(m)
                    }
                })
            });
            let write_micros = started.elapsed().as_micros();
            let blob_numbers = blob_numbers.into_inner();
            let meta = match result {
                Ok(m) => m,
                Err(e) => {
                    for n in &blob_numbers {
                        self.versions.release_output(*n);
                    }
                    self.versions.release_output(number);
                    let _ =
                        self.fs.remove_file(&filename::table_file(handle.table_dir(&self.path, 0), number));
                    self.set_bg_error_in(st, e.clone(), BgErrorReason::Flush);
                    return Err(e);
                }
            };
            let bytes =
                meta.as_ref().map_or(0, |(m, b)| m.file_size + b.iter().map(blob_file_bytes).sum::<u64>());
            let mut edit =
                VersionEdit { column_family: id, log_number: Some(next_log), ..Default::default() };
            if let Some((m, blobs)) = meta {
                edit.new_files.push((0, m));
                edit.blob_file_additions = blobs;
            }
            let r = self.log_and_apply(st, vec![edit], |st| {
                if let Some(cf) = st.cfs.get_mut(&id) {
                    let flushed: Vec<_> = cf.imm.drain(..take.min(cf.imm.len())).map(|(m, _)| m).collect();
                    cf.retire_flushed(flushed);
                    cf.log_number = next_log;
                    // The oldest memtable taken may stand for several (a MemPurge's).
                    cf.mems_flushed += take as u64 + std::mem::take(&mut cf.imm_front_merged);
                    cf.imm_front_purged = false;
                    if cf.imm.is_empty() {
                        cf.force_flush = false;
                    }
                }
            });
            self.versions.release_output(number);
            for n in &blob_numbers {
                self.versions.release_output(*n);
            }
            // On failure the table stays: the MANIFEST may name it after all. Once a new
            // MANIFEST is written without it, the next open removes it.
            r?;
            self.raise_ts_low_above_flushed(st, &handle, &mems)?;
            // The flushed memtables go before anyone waiting for the flush can look (the
            // purge below may release the DB mutex).
            drop(mems);
            self.stats.flushes.fetch_add(1, Ordering::Relaxed);
            self.stats.flush_bytes.fetch_add(bytes, Ordering::Relaxed);
            handle.internal_stats.add_flush(
                bytes,
                write_micros as u64,
                super::internal_stats::thread_cpu_micros().saturating_sub(cpu_started),
                records,
            );
            if let Some(s) = self.config.statistics.as_deref() {
                // As RocksDB's FlushJob: bytes written, and the flush's duration.
                s.record_tick(crate::statistics::Ticker::FlushWriteBytes, bytes);
                s.report_time(crate::statistics::Histogram::FlushTime, started.elapsed().as_micros() as u64);
            }
            // Under the DB mutex: buffered, written by the purge below.
            if handle.config().report_bg_io_stats {
                self.info_log.buffer_line(format_args!(
                    "[{}] Flushed memtable to table #{number} ({bytes} bytes), write micros {write_micros}",
                    handle.name
                ));
            } else {
                self.info_log.buffer_line(format_args!(
                    "[{}] Flushed memtable to table #{number} ({bytes} bytes)",
                    handle.name
                ));
            }
            if let Some(cf) = st.cfs.get(&id) {
                self.info_log.buffer_event(flush_finished_event(job, &handle, cf));
            }
            self.done_cv.notify_all();
            st.purge_job = Some(job);
            self.purge_obsolete_files(st);
        }
    }
}

/// RocksDB's `ColumnFamilyData::ShouldPostponeFlushToRetainUDT` with the write-stall
/// exception of `DBImpl::ShouldRescheduleFlushRequestToRetainUDT`: a family whose timestamps
/// are not persisted, with `full_history_ts_low` set, keeps immutable memtables holding
/// timestamps at or above it, unless their number would stall writes. RocksDB puts such a
/// request back on the queue at once; here it is not queued (`schedule_flush`) until one of
/// the events that can change the answer: the bound rising, a memtable switch, a manual
/// flush.
pub(super) fn postpone_to_retain_udt(cf: &super::CfState) -> bool {
    let c = cf.handle.config();
    if cf.handle.icmp.timestamp_size() == 0 || c.persist_user_defined_timestamps {
        return false;
    }
    let low = cf.handle.full_history_ts_low();
    if low.is_empty() {
        return false;
    }
    let low = crate::comparator::decode_u64_ts(&low);
    if !cf.imm.iter().any(|(m, _)| m.newest_udt().is_some_and(|t| t >= low)) {
        return false;
    }
    // RocksDB's GetWriteStallConditionAndCause on the unflushed memtables alone.
    let unflushed = cf.imm.len() + usize::from(!cf.mem.is_empty());
    let max = usize::try_from(c.max_write_buffer_number).unwrap_or(0);
    let stalls = unflushed >= max || (max > 3 && unflushed + 1 >= max);
    !stalls
}

impl DbInner {
    /// RocksDB's `FlushJob::MaybeIncreaseFullHistoryTsLowToAboveCutoffUDT`: after a flush of
    /// a family whose timestamps are not persisted, `full_history_ts_low` rises to just above
    /// the newest timestamp the flushed memtables held (the history the flush collapsed),
    /// recorded in the MANIFEST by an edit of its own.
    fn raise_ts_low_above_flushed(
        &self,
        st: &mut MutexGuard<'_, DbState>,
        handle: &Arc<CfHandle>,
        mems: &[Arc<MemTable>],
    ) -> Result<()> {
        if handle.icmp.timestamp_size() == 0 || handle.config().persist_user_defined_timestamps {
            return Ok(());
        }
        let Some(cutoff) = mems.iter().filter_map(|m| m.newest_udt()).max() else { return Ok(()) };
        let low = handle.full_history_ts_low();
        if !low.is_empty() && cutoff < crate::comparator::decode_u64_ts(&low) {
            return Ok(());
        }
        let new_low = crate::comparator::encode_u64_ts(cutoff.saturating_add(1)).to_vec();
        let edit = VersionEdit {
            column_family: handle.id,
            full_history_ts_low: Some(new_low.clone()),
            ..Default::default()
        };
        let h = handle.clone();
        self.log_and_apply(st, vec![edit], move |_| {
            *h.full_history_ts_low.lock() = new_low;
        })
    }
}

/// `flush_started` (RocksDB's FlushJob::WriteLevel0Table), for the memtables `mems`.
fn flush_started_event(job: i32, mems: &[Arc<MemTable>]) -> super::info_log::JsonWriter {
    let sum = |f: &dyn Fn(&MemTable) -> u64| -> u64 { mems.iter().map(|m| f(m)).sum() };
    let mut w = super::info_log::JsonWriter::event();
    w.field("job", job)
        .field("event", "flush_started")
        .field("num_memtables", mems.len())
        .field("total_num_input_entries", sum(&|m| m.num_entries()))
        .field("num_deletes", sum(&|m| m.num_deletes()))
        .field("total_data_size", sum(&|m| m.data_size()))
        .field("memory_usage", sum(&|m| m.approximate_memory_usage() as u64))
        .field("num_range_deletes", sum(&|m| m.num_range_deletes()))
        .field("flush_reason", "Other Reasons");
    w
}

/// `flush_finished` (RocksDB's FlushJob::Run), once the flush of job `job` is installed in
/// family `cf` (DB mutex held: the caller buffers it).
fn flush_finished_event(job: i32, handle: &CfHandle, cf: &super::cf::CfState) -> super::info_log::JsonWriter {
    let mut w = super::info_log::JsonWriter::event();
    w.field("job", job)
        .field("event", "flush_finished")
        .field("output_compression", handle.config().flush_compression.name());
    w.array("lsm_state", super::info_log::lsm_state(&cf.current));
    let blobs = cf.current.blob_files();
    if let (Some(head), Some(tail)) = (blobs.keys().next(), blobs.keys().next_back()) {
        w.field("blob_file_head", *head).field("blob_file_tail", *tail);
    }
    w.field("immutable_memtables", cf.imm.len());
    w
}

/// One family of an atomic flush: its handle, the immutable memtables taken, the log number
/// after them.
type GroupMember = (Arc<CfHandle>, Vec<Arc<MemTable>>, u64);

/// Atomic flush (`Options::set_atomic_flush`), as RocksDB's: the families flushed together
/// have their memtables switched at once (one WAL roll) and their new tables installed by
/// one MANIFEST write, an atomic group (`VersionEdit::is_in_atomic_group`, each record
/// counting the ones after it). Recovery applies a group only when all of it was read, so a
/// crash keeps every family's flush or none. One group is written at a time
/// (`DbState::atomic_flush_busy`).
impl DbInner {
    /// With atomic flush, a memtable switch covers every non-empty family.
    pub fn widen_for_atomic_flush(&self, st: &DbState, switch: &mut Vec<u32>) {
        if !self.config.atomic_flush || switch.is_empty() {
            return;
        }
        for (id, cf) in &st.cfs {
            if !cf.mem.is_empty() && !cf.dropping && !switch.contains(id) {
                switch.push(*id);
            }
        }
    }

    /// Switches the non-empty memtables of `ids` together and (with `wait`) waits until
    /// they are flushed.
    pub fn flush_families_atomically(&self, ids: &[u32], wait: bool) -> Result<()> {
        self.check_writable()?;
        let targets = self.exclusive_write(|| -> Result<Vec<(u32, u64)>> {
            let mut st = self.lock_state();
            if let Some(e) = st.errors.stop_error() {
                return Err(e);
            }
            let switch: Vec<u32> =
                ids.iter().copied().filter(|id| st.cfs.get(id).is_some_and(|c| !c.mem.is_empty())).collect();
            if !switch.is_empty() {
                self.switch_memtables(&mut st, &switch, false)?;
            }
            Ok(ids.iter().filter_map(|id| st.cfs.get(id).map(|c| (*id, c.mems_switched))).collect())
        })?;
        self.force_flushes(&targets);
        // Writes made before are durable once their flush is, as with any flush.
        self.sync_wal()?;
        if !wait {
            return Ok(());
        }
        self.wait_for_flushes(&targets)
    }

    /// Waits until each `(family, count)` of `targets` has flushed that many memtables (a
    /// dropped family counts as done), the background error stops the database, or it shuts
    /// down.
    pub fn wait_for_flushes(&self, targets: &[(u32, u64)]) -> Result<()> {
        let mut st = self.lock_state();
        loop {
            if let Some(e) = st.errors.stop_error() {
                return Err(e);
            }
            if targets.iter().all(|(id, n)| st.cfs.get(id).is_none_or(|c| c.mems_flushed >= *n)) {
                // The flushes' LOG lines, buffered under the DB mutex, are written before the
                // caller goes on (`info_log.rs`).
                drop(st);
                self.info_log.flush_buffered();
                return Ok(());
            }
            if self.shutting_down.load(Ordering::Acquire) {
                return Err(crate::error::Error::shutdown("Database shutdown"));
            }
            self.done_cv.wait_for(&mut st, std::time::Duration::from_millis(100));
        }
    }

    /// The flush job with atomic flush: family `id` (its `flush_running` set by the caller)
    /// and every other family with immutable memtables that no flush holds, in one group.
    fn flush_atomic(&self, st: &mut MutexGuard<'_, DbState>, id: u32) -> Result<()> {
        loop {
            while st.atomic_flush_busy {
                self.done_cv.wait(st);
            }
            if self.shutting_down.load(Ordering::Acquire) {
                return Ok(()); // what is left is in the WAL
            }
            st.atomic_flush_busy = true;
            // The closed WALs are synced first; memtables switched meanwhile (backed by WALs
            // not synced) wait for the next group (RocksDB's AtomicFlushMemTablesToOutputFiles
            // with SyncClosedWals; `wal_sync.rs`).
            let synced_below = match super::unlocked(st, || self.sync_closed_wals()) {
                Ok(w) => {
                    self.take_synced_wal_additions(st);
                    w
                }
                Err(e) => {
                    st.atomic_flush_busy = false;
                    self.done_cv.notify_all();
                    self.set_bg_error_in(st, e.clone(), BgErrorReason::Flush);
                    return Err(e);
                }
            };
            // Per family: its handle, the immutable memtables taken, the log number after them.
            let mut group: Vec<GroupMember> = Vec::new();
            let mut marked = Vec::new();
            for (cid, cf) in st.cfs.iter_mut() {
                let n = cf.imm.iter().take_while(|(_, next)| *next <= synced_below).count();
                if n == 0 || cf.dropping || (*cid != id && cf.flush_running) {
                    continue;
                }
                if *cid != id {
                    cf.flush_running = true;
                    marked.push(*cid);
                }
                let mems = cf.imm[..n].iter().map(|(m, _)| m.clone()).collect();
                let next_log = cf.imm[n - 1].1;
                group.push((cf.handle.clone(), mems, next_log));
            }
            if group.is_empty() {
                st.atomic_flush_busy = false;
                self.done_cv.notify_all();
                return Ok(());
            }
            let r = self.write_atomic_group(st, &group);
            // The flushed memtables go before the DB mutex is next released (`flush_cf`).
            drop(group);
            st.atomic_flush_busy = false;
            for cid in marked {
                if let Some(cf) = st.cfs.get_mut(&cid) {
                    cf.flush_running = false;
                }
                self.schedule_flush(st, cid);
            }
            self.done_cv.notify_all();
            r?;
            self.purge_obsolete_files(st);
        }
    }

    fn write_atomic_group(&self, st: &mut MutexGuard<'_, DbState>, group: &[GroupMember]) -> Result<()> {
        let mut numbers: Vec<(u64, std::path::PathBuf)> = Vec::new();
        let snapshots = self.snapshot_list()?;
        // One job id for the group, as RocksDB's atomic flush gives its flush jobs.
        let job = self.info_log.new_job_id();
        type Written = (Vec<FileMetaData>, Vec<crate::version::edit::BlobFileAddition>);
        let written = super::unlocked(st, || -> Result<Vec<Written>> {
            let mut out = Vec::with_capacity(group.len());
            for (handle, mems, _) in group.iter() {
                self.info_log.event(flush_started_event(job, mems));
                let mut metas = Vec::new();
                for mem in mems {
                    let number = self.versions.new_output_number();
                    numbers.push((number, filename::table_file(handle.table_dir(&self.path, 0), number)));
                    if let Some(meta) = write_level0_table(
                        &*self.fs,
                        &self.path,
                        handle,
                        mem,
                        number,
                        &snapshots,
                        self.config.statistics.as_deref(),
                        FlushChecks::of(&self.config),
                        self.table_cache.warm_cache(handle, number, false),
                    )? {
                        if handle.config().paranoid_file_checks {
                            self.verify_new_table(handle, &meta)?;
                        }
                        super::info_log::log_table_created(
                            &self.info_log,
                            &self.table_cache,
                            job,
                            handle,
                            &meta,
                            Some(0),
                        );
                        metas.push(meta);
                    }
                }
                // Blob direct write: the memtables' blob files go with their tables.
                let blobs = if metas.is_empty() { Vec::new() } else { self.seal_direct_blobs(mems)? };
                out.push((metas, blobs));
            }
            self.fs.sync_dir(&self.path)?;
            Ok(out)
        });
        let tables = match written {
            Ok(t) => t,
            Err(e) => {
                super::unlocked(st, || {
                    for (n, p) in &numbers {
                        self.versions.release_output(*n);
                        let _ = self.fs.remove_file(p);
                    }
                });
                self.set_bg_error_in(st, e.clone(), BgErrorReason::Flush);
                return Err(e);
            }
        };
        let count = group.len();
        let edits: Vec<VersionEdit> = group
            .iter()
            .zip(&tables)
            .enumerate()
            .map(|(i, ((handle, _, next_log), (metas, blobs)))| VersionEdit {
                column_family: handle.id,
                log_number: Some(*next_log),
                new_files: metas.iter().map(|m| (0, m.clone())).collect(),
                blob_file_additions: blobs.clone(),
                is_in_atomic_group: count > 1,
                remaining_entries: if count > 1 { (count - 1 - i) as u32 } else { 0 },
                ..Default::default()
            })
            .collect();
        let bytes: u64 = tables.iter().flat_map(|(m, _)| m).map(|m| m.file_size).sum();
        let r = self.log_and_apply(st, edits, |st| {
            for (handle, mems, next_log) in group {
                if let Some(cf) = st.cfs.get_mut(&handle.id) {
                    let flushed: Vec<_> =
                        cf.imm.drain(..mems.len().min(cf.imm.len())).map(|(m, _)| m).collect();
                    cf.retire_flushed(flushed);
                    cf.log_number = *next_log;
                    cf.mems_flushed += mems.len() as u64;
                    if cf.imm.is_empty() {
                        cf.force_flush = false;
                    }
                }
            }
        });
        for (n, _) in &numbers {
            self.versions.release_output(*n);
        }
        r?;
        for (handle, _, _) in group {
            if let Some(cf) = st.cfs.get(&handle.id) {
                self.info_log.buffer_event(flush_finished_event(job, handle, cf));
            }
        }
        st.purge_job = Some(job);
        self.stats.flushes.fetch_add(count as u64, Ordering::Relaxed);
        self.stats.flush_bytes.fetch_add(bytes, Ordering::Relaxed);
        let names: Vec<&str> = group.iter().map(|(h, _, _)| h.name.as_str()).collect();
        // Under the DB mutex: buffered, written by the purge that follows the flush.
        self.info_log.buffer_line(format_args!(
            "Atomic flush of [{}]: {} tables ({bytes} bytes) in one MANIFEST write",
            names.join(", "),
            tables.iter().map(|(m, _)| m.len()).sum::<usize>()
        ));
        Ok(())
    }
}

impl DbInner {
    /// `paranoid_file_checks`: reads table `meta` of `cf` back whole (every block's checksum,
    /// strictly ascending internal keys, as many point entries as its properties say). A
    /// flush's table, so opened at level 0 (RocksDB's `level_at_creation`).
    pub fn verify_new_table(&self, cf: &CfHandle, meta: &crate::version::edit::FileMetaData) -> Result<()> {
        let t = self.table_cache.get_at(cf, meta, Some(0))?;
        let props = t.table.properties();
        let expected = props.num_entries.saturating_sub(props.num_range_deletions);
        let mut it = t.table.iter(false);
        it.seek_to_first();
        let mut count = 0u64;
        let mut prev: Vec<u8> = Vec::new();
        while it.valid() {
            if count > 0 && !cf.icmp.compare(&prev, it.key()).is_lt() {
                return Err(Error::corruption(format!(
                    "paranoid_file_checks: keys out of order in table #{} after entry {count}",
                    meta.number
                )));
            }
            prev.clear();
            prev.extend_from_slice(it.key());
            count += 1;
            it.next();
        }
        it.status()?;
        if count != expected {
            return Err(Error::corruption(format!(
                "paranoid_file_checks: table #{} holds {count} entries, its properties say {expected}",
                meta.number
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod count_tests {
    use super::verify_flush_counts;

    #[test]
    fn flush_counts_that_differ_are_corruption_only_when_verified() {
        assert!(verify_flush_counts(true, 10, 10, Some((7, 7))).is_ok());
        let e = verify_flush_counts(true, 10, 9, None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("Corruption") && e.contains("Expected 10 entries in memtables, but read 9"),
            "{e}"
        );
        let e =
            verify_flush_counts(true, 10, 10, Some((7, 6))).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("Expected 7 but there are 6 in output SST files"), "{e}");
        assert!(verify_flush_counts(false, 10, 9, Some((7, 6))).is_ok(), "off: RocksDB only logs it");
    }
}
