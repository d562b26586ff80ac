//! Running a compaction: merge the inputs, drop what no reader can see, write outputs.
//!
//! Visibility follows RocksDB's snapshot stripes. An entry's stripe is the oldest snapshot
//! that can see it (the smallest snapshot >= its sequence; "latest" if none). Of the
//! entries of one user key in one stripe only the newest is kept. An entry is dropped when
//! a range tombstone newer than it lies in its stripe. A deletion is dropped at the
//! bottommost level once every snapshot sees it. Range tombstones go to every output whose
//! key range they cross, clipped to it; at the bottommost level a tombstone every snapshot
//! sees is dropped.
//!
//! At the bottommost level a Put, blob index or entity every snapshot sees is written with
//! sequence number 0 (RocksDB's `CompactionIterator::PrepareOutput`; with user-defined
//! timestamps only below `full_history_ts_low`, with the minimum timestamp, see
//! `zero_sequence`).
//!
//! Outputs are cut at `target_file_size`, never inside one user key, so files of a level
//! stay disjoint by user key; with an SST partitioner (`partitioner.rs`) also before the
//! first key written after a boundary it names. Above the bottommost level the start of each
//! range tombstone is a cut candidate too, as the range-deletion sentinel keys RocksDB's
//! compaction iterator emits are (`CompactionOutputs::AddToOutput`): an output may end, or
//! open, at a tombstone's start, so a partition boundary is never crossed by a tombstone.
//!
//! Merge operands (RocksDB's `MergeHelper::MergeUntil`), the same at flush
//! (`flush_entries`) and compaction: from the newest operand of a stripe, the operands of
//! that stripe are gathered (those a range tombstone covers dropped) down to a Put or
//! deletion of the same stripe (then fully merged onto it, onto nothing when a tombstone
//! covers it: one Put at the newest operand's sequence), or, at the bottommost level when
//! the key has no older entries at all (with timestamps: below `full_history_ts_low`),
//! fully merged onto nothing. Otherwise (a snapshot boundary, or older levels or
//! memtables' tables below) they are combined by the operator's partial merge into one
//! operand at the newest sequence, or kept as they are when the operator has none or it
//! declines. A failed full merge fails the flush or compaction with Corruption naming the
//! key. Compaction filters see neither operands nor merge results (rust-rocksdb's filters
//! are RocksDB's `Filter`, whose `FilterMergeOperand` keeps every operand; RocksDB writes
//! a merge result without filtering it).
//!
//! Compaction filters (`compaction_filter.rs`) see the newest version of a key when it is
//! a Put no snapshot sees.
//!
//! BlobDB (`blob/`): a blob index is kept, dropped or shadowed as a Put is; a filter or a
//! merge that needs its value reads the blob. What is written goes through `BlobStage`:
//! with `enable_blob_files` a Put of at least `min_blob_size` goes to a new blob file (its
//! entry becomes a blob index); with garbage collection, a blob index into a file below the
//! cutoff is read and written again (to a new blob file, or inline when it no longer
//! qualifies). A wide-column entity without blob columns has each column value of at least
//! `min_blob_size` moved to the blob file (version 2, blob-index columns); one with blob
//! columns has those below the cutoff relocated the same way (RocksDB's `PrepareOutput`).
//! Blob indexes read minus those written, per blob file, entities' blob columns included,
//! are the job's `BlobFileGarbage` (RocksDB's `BlobGarbageMeter`); each output records the
//! oldest blob file it references.

use std::collections::BTreeMap;
use std::path::Path;

use crate::blob::{BlobFetcher, BlobFileBuilder, BlobIndex, BlobWriteOptions};
use crate::version::edit::{BlobFileAddition, BlobFileGarbage};
use crate::wide_columns::Relocation;

use crate::error::Result;
use crate::fs::FileSystem;
use crate::iter::range_del::{FragmentedTombstones, RangeTombstone};
use crate::iter::BoxedIterator;
use crate::key::{make_internal_key, parse_internal_key, user_key, ValueType, MAX_SEQUENCE_NUMBER};
use crate::merge::{no_merge_operator, MergeOperatorCore};
use crate::table::any::AnyTableBuilder;
use crate::table::builder::TableBuilderOptions;
use crate::version::edit::FileMetaData;
use shale_format::filename;

/// Everything a compaction job needs, handed in by the database.
/// A compaction filter on values: true removes the entry.
pub type ValueFilter = dyn Fn(&[u8]) -> bool;

/// What a compaction filter decides for one entry (the facade maps rust-rocksdb's
/// `CompactionDecision` onto it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterDecision {
    /// Keep the entry.
    Keep,
    /// Drop the entry (it becomes a deletion, so older versions stay hidden).
    Remove,
    /// Keep the key with this value instead.
    Change(&'static [u8]),
}

/// A compaction filter bound to its compaction's level: `(key, value) -> decision`.
pub type KeyFilter<'a> = dyn FnMut(&[u8], &[u8]) -> FilterDecision + 'a;

pub struct JobInput<'a> {
    pub fs: &'a dyn FileSystem,
    pub dir: &'a Path,
    /// Where new blob files go: the DB directory (`blob::blob_file_path`), not `dir`.
    pub blob_dir: &'a Path,
    /// The table path id of `dir` (RocksDB's db_paths / cf_paths), recorded in each output.
    pub path_id: u32,
    /// Merged iterator over all input files.
    pub iter: BoxedIterator,
    pub tombstones: Vec<RangeTombstone>,
    /// Live snapshots, ascending.
    pub snapshots: Vec<u64>,
    pub bottommost: bool,
    pub target_file_size: u64,
    /// RocksDB's `target_file_size_is_upper_bound`: an output is cut when its bytes plus the
    /// builder's estimate of its tail (`TableBuilder::estimated_tail_size`) reach
    /// `target_file_size`, not its bytes alone.
    pub target_file_size_is_upper_bound: bool,
    /// Builder options for a new output file number.
    pub builder_options: &'a dyn Fn(u64) -> TableBuilderOptions,
    /// Allocates an output file number.
    pub new_file_number: &'a dyn Fn() -> u64,
    /// A compaction filter on values (a TTL database's expiry, `db/ttl.rs`): true removes
    /// the entry. Asked, as RocksDB asks its filters, only for the newest Put of a key that
    /// no snapshot sees; a removed entry becomes a deletion (dropped at the bottommost
    /// level), so that older versions stay hidden.
    pub remove_value: Option<&'a ValueFilter>,
    /// The family's compaction filter (or the one its factory made for this job), already
    /// bound to the compaction's level: `(key, value) -> decision`.
    pub compaction_filter: Option<&'a mut KeyFilter<'a>>,
    /// The family's merge operator.
    pub merge_operator: Option<&'a dyn MergeOperatorCore>,
    /// `enforce_single_del_contracts` (see `KeyCompactor::single_del_meets_delete`).
    pub enforce_single_del_contracts: bool,
    /// User-defined timestamps: the family's `full_history_ts_low` (None: not set).
    pub full_history_ts_low: Option<Vec<u8>>,
    /// BlobDB: resolves blob indexes (merge bases, filters, garbage collection).
    pub blob_fetcher: Option<BlobFetcher>,
    /// BlobDB with `enable_blob_files`: where large values go.
    pub blob_write: Option<BlobWriteOptions>,
    /// BlobDB garbage collection: blobs of files numbered below this are relocated (0: none).
    pub blob_gc_cutoff: u64,
    /// `blob_compaction_readahead_size`.
    pub blob_readahead: u64,
    /// Set when the database closes: the job stops within a few thousand entries with
    /// ShutdownInProgress (its outputs are then removed by the caller), as RocksDB's
    /// compaction checks `shutting_down_`, so a close does not wait out a long compaction.
    pub cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// The database's statistics: the blob files the job writes are counted there.
    pub statistics: Option<&'a crate::statistics::Statistics>,
    /// A subcompaction's user-key range `[start, end)` (None: unbounded on that side), as
    /// RocksDB's `SubcompactionState` start and end: only entries of keys in it are read,
    /// and range tombstones are written clipped to it.
    pub range: KeyRange,
    /// Each output table's preallocation (RocksDB's `Compaction::OutputFilePreallocationSize`
    /// blocks, space reserved with `allow_fallocate`).
    pub preallocation: crate::fs::Preallocation,
    /// Hash each output's point entries as they are written (RocksDB's `OutputValidator`
    /// with its hash on: `paranoid_file_checks` or `verify_output_flags`' kVerifyIteration),
    /// into [`JobResult::output_hashes`].
    pub output_hash: bool,
    /// The family's `sst_partitioner_factory` when the output level is not 0 (RocksDB's
    /// `CompactionOutputs` makes no partitioner for level 0): an output ends before the
    /// first key it asks a boundary for (RocksDB's `ShouldStopBefore`).
    pub partitioner: Option<&'a super::partitioner::SstPartitionerFactory>,
    /// RocksDB's `Compaction::grandparents` (universal with `incremental`: the files of the
    /// run below the output's, in key order) and `max_compaction_bytes_` as its output
    /// cutting reads it: an output ends before a key that crosses a grandparent's boundary
    /// when its bytes plus the grandparent bytes it overlaps pass the limit
    /// (`CompactionOutputs::ShouldStopBefore`). Empty / u64::MAX: no such cut.
    pub grandparents: &'a [std::sync::Arc<FileMetaData>],
    pub max_grandparent_overlap: u64,
    /// `preserve_internal_time_seconds` (`db/seqno_time.rs`): the inputs' sequence-number-to-
    /// time mappings merged (each output stores its range's part), and RocksDB's
    /// `preserve_time_min_seqno`: entries from this sequence on keep their sequence numbers
    /// at the bottommost level (u64::MAX: the feature is off).
    pub seqno_time: Option<std::sync::Arc<crate::table::seqno_time::SeqnoToTimeMapping>>,
    pub preserve_time_min_seqno: u64,
    /// Per-key placement (`proximal.rs`, RocksDB's `proximal_after_seqno_`): an entry whose
    /// sequence number (after zeroing) is above this goes to the proximal level's outputs,
    /// and so does a range tombstone above it (u64::MAX: one output level).
    pub proximal_after_seqno: u64,
    /// `file_checksum_gen_factory` is the CRC32C one: each output table records its
    /// whole-file checksum (`crate::file_checksum`), as RocksDB's `CompactionOutputs`
    /// take it from the file's writer. (Blob files: `blob_write`'s own flag.)
    pub file_checksum: bool,
}

/// RocksDB's `OutputValidator::Add` hash step: the running 64-bit hash of an output's point
/// entries, key then value, each hashed with the one before as its seed (xxh3, as RocksDB's
/// `NPHash64`; never persisted, compared only with a re-read of the same file).
pub fn output_hash_step(hash: u64, key: &[u8], value: &[u8]) -> u64 {
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(key, hash);
    xxhash_rust::xxh3::xxh3_64_with_seed(value, h)
}

/// RocksDB's `Compaction::OutputFilePreallocationSize`: the inputs' total size, at most
/// `max_output_file_size` when `capped` (level style, or an output level below 0), plus a
/// tenth, at most 1 GiB.
pub fn output_preallocation_size(input_bytes: u64, max_output_file_size: u64, capped: bool) -> u64 {
    let mut size = input_bytes;
    if capped && max_output_file_size != u64::MAX {
        size = size.min(max_output_file_size);
    }
    size.saturating_add(size / 10).min(1 << 30)
}

/// Entries between two looks at `JobInput::cancel`.
const CANCEL_CHECK_EVERY: u32 = 4096;

struct Output {
    builder: AnyTableBuilder,
    meta: FileMetaData,
    empty: bool,
    /// [`output_hash_step`] over the point entries written so far (0 when not asked for).
    hash: u64,
    /// The whole-file checksum being gathered (with a checksum factory).
    checksum: Option<crate::file_checksum::ChecksumTap>,
}

/// The outcome: output files (synced) and bytes read and written.
pub struct JobResult {
    pub outputs: Vec<FileMetaData>,
    pub bytes_written: u64,
    pub entries_dropped: u64,
    /// New blob files (synced) and garbage found in the input blob files.
    pub blob_additions: Vec<BlobFileAddition>,
    pub blob_garbage: Vec<BlobFileGarbage>,
    /// Entries read from the inputs (RocksDB's `num_input_records`).
    pub entries_in: u64,
    /// Entries dropped by RocksDB's reasons (its `COMPACTION_KEY_DROP_*` tickers): hidden by
    /// a newer version in the same snapshot stripe, a deletion obsolete at the bottommost
    /// level, covered by a range tombstone, removed by a compaction filter.
    pub drops: DropReasons,
    /// Blobs garbage collection moved out of old blob files (RocksDB's
    /// `num_blobs_relocated`, `total_blob_bytes_relocated`: the blob indexes' sizes).
    pub blobs_relocated: u64,
    pub blob_bytes_relocated: u64,
    /// Per output (in `outputs`' order): the hash of its point entries as written, when
    /// `JobInput::output_hash` asked for it (0 otherwise).
    pub output_hashes: Vec<u64>,
    /// Per output (in `outputs`' order): it belongs to the proximal level, not the output
    /// level (`JobInput::proximal_after_seqno`).
    pub proximal: Vec<bool>,
    /// Point entries written to the proximal level's outputs.
    pub proximal_records: u64,
}

impl JobResult {
    /// Appends the result of the next subcompaction (its outputs follow this one's in key
    /// order) and adds up its counts, as RocksDB's `CompactionJob` sums its
    /// subcompactions' stats into one job's.
    pub fn absorb(&mut self, next: JobResult) {
        self.outputs.extend(next.outputs);
        self.output_hashes.extend(next.output_hashes);
        self.proximal.extend(next.proximal);
        self.proximal_records += next.proximal_records;
        self.bytes_written += next.bytes_written;
        self.entries_dropped += next.entries_dropped;
        self.blob_additions.extend(next.blob_additions);
        for g in next.blob_garbage {
            match self.blob_garbage.iter_mut().find(|m| m.number == g.number) {
                Some(m) => {
                    m.garbage_blob_count += g.garbage_blob_count;
                    m.garbage_blob_bytes += g.garbage_blob_bytes;
                }
                None => self.blob_garbage.push(g),
            }
        }
        self.entries_in += next.entries_in;
        self.drops.newer_entry += next.drops.newer_entry;
        self.drops.obsolete += next.drops.obsolete;
        self.drops.range_del += next.drops.range_del;
        self.drops.user += next.drops.user;
        self.blobs_relocated += next.blobs_relocated;
        self.blob_bytes_relocated += next.blob_bytes_relocated;
    }
}

/// Counts of dropped entries by reason (see `JobResult::drops`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropReasons {
    pub newer_entry: u64,
    pub obsolete: u64,
    pub range_del: u64,
    pub user: u64,
}

/// Blob indexes counted per blob file: (count, bytes as RocksDB counts them:
/// record header + user key + stored value).
type BlobFlow = BTreeMap<u64, (u64, u64)>;

fn meter(flow: &mut BlobFlow, ikey: &[u8], index: &[u8]) {
    if let Ok(bi) = BlobIndex::decode(index) {
        let e = flow.entry(bi.file_number).or_default();
        e.0 += 1;
        e.1 += (crate::blob::format::RECORD_HEADER_SIZE + user_key(ikey).len()) as u64 + bi.size;
    }
}

/// The blob columns of an entity counted as blob indexes are (RocksDB's
/// `BlobGarbageMeter::ProcessEntityBlobReferences`): a blob file whose only references
/// were entity columns becomes garbage when those entities go.
fn meter_entity(flow: &mut BlobFlow, ikey: &[u8], entity: &[u8]) -> Result<()> {
    crate::wide_columns::for_each_blob_index(entity, |index| {
        meter(flow, ikey, index);
        Ok(())
    })
}

fn is_entity(ikey: &[u8]) -> bool {
    (crate::key::trailer(ikey) & 0xff) as u8 == ValueType::WideColumnEntity as u8
}

fn is_blob_index(ikey: &[u8]) -> bool {
    (crate::key::trailer(ikey) & 0xff) as u8 == ValueType::BlobIndex as u8
}

/// What a compaction does with values on their way out (see the module comment).
struct BlobStage<'a> {
    builder: Option<BlobFileBuilder<'a>>,
    fetcher: Option<BlobFetcher>,
    gc_cutoff: u64,
    readahead: u64,
    inflow: BlobFlow,
    outflow: BlobFlow,
    /// Blobs relocated by garbage collection, and their sizes in the old files.
    relocated: (u64, u64),
}

impl BlobStage<'_> {
    fn fetch(&self, k: &[u8], v: &[u8]) -> Result<Vec<u8>> {
        match &self.fetcher {
            Some(f) => f.fetch_with_readahead(user_key(k), v, self.readahead),
            None => Err(crate::error::Error::corruption("blob index met where no blob files are known")),
        }
    }

    fn process(&mut self, k: Vec<u8>, v: Vec<u8>) -> Result<(Vec<u8>, Vec<u8>)> {
        if is_blob_index(&k) {
            let bi = BlobIndex::decode(&v)?;
            if bi.file_number < self.gc_cutoff {
                let value = self.fetch(&k, &v)?;
                // As RocksDB's CompactionIterator::GarbageCollectBlobIfNeeded.
                self.relocated.0 += 1;
                self.relocated.1 += bi.size;
                return self.write_value(&k, value);
            }
            meter(&mut self.outflow, &k, &v);
            return Ok((k, v));
        }
        if (crate::key::trailer(&k) & 0xff) as u8 == ValueType::Value as u8 && self.builder.is_some() {
            return self.write_value(&k, v);
        }
        if is_entity(&k) {
            let v = self.process_entity(&k, v)?;
            meter_entity(&mut self.outflow, &k, &v)?;
            return Ok((k, v));
        }
        Ok((k, v))
    }

    /// An entity on its way out, as RocksDB's `CompactionIterator::PrepareOutput`: one
    /// without blob columns has its large column values moved to blob files
    /// (`ExtractLargeColumnValuesIfNeeded`); one with blob columns has those in files below
    /// the garbage collection cutoff read and written again, to a new blob file or inline
    /// when they no longer qualify (`GarbageCollectEntityBlobsIfNeeded`).
    fn process_entity(&mut self, k: &[u8], v: Vec<u8>) -> Result<Vec<u8>> {
        let uk = user_key(k);
        if crate::wide_columns::has_blob_columns(&v)? {
            if self.gc_cutoff == 0 {
                return Ok(v);
            }
            let BlobStage { builder, fetcher, gc_cutoff, readahead, relocated, .. } = self;
            let rewritten = crate::wide_columns::relocate_blob_columns(&v, |index| {
                let bi = BlobIndex::decode(index)?;
                if bi.file_number >= *gc_cutoff {
                    return Ok(Relocation::Keep);
                }
                let value = match fetcher {
                    Some(f) => f.fetch_with_readahead(uk, index, *readahead)?,
                    None => {
                        return Err(crate::error::Error::corruption(
                            "blob index met where no blob files are known",
                        ))
                    }
                };
                if let Some(b) = builder.as_mut() {
                    if let Some(new_index) = b.add(uk, &value)? {
                        // RocksDB's RelocateBlobValues counts the value's size here.
                        relocated.0 += 1;
                        relocated.1 += value.len() as u64;
                        return Ok(Relocation::Blob(new_index));
                    }
                }
                Ok(Relocation::Inline(value))
            })?;
            return Ok(rewritten.unwrap_or(v));
        }
        match self.builder.as_mut() {
            Some(b) => Ok(crate::wide_columns::extract_large_columns(&v, |c| b.add(uk, c))?.unwrap_or(v)),
            None => Ok(v),
        }
    }

    /// A Put of `value` at `k`'s key and sequence: to a blob file when it qualifies.
    fn write_value(&mut self, k: &[u8], value: Vec<u8>) -> Result<(Vec<u8>, Vec<u8>)> {
        let uk = user_key(k);
        let seq = crate::key::trailer(k) >> 8;
        if let Some(b) = self.builder.as_mut() {
            if let Some(index) = b.add(uk, &value)? {
                return Ok((make_internal_key(uk, seq, ValueType::BlobIndex), index));
            }
        }
        Ok((make_internal_key(uk, seq, ValueType::Value), value))
    }

    fn garbage(&self) -> Vec<BlobFileGarbage> {
        self.inflow
            .iter()
            .filter_map(|(n, (c, b))| {
                let (oc, ob) = self.outflow.get(n).copied().unwrap_or((0, 0));
                (*c > oc).then(|| BlobFileGarbage {
                    number: *n,
                    garbage_blob_count: c - oc,
                    garbage_blob_bytes: b.saturating_sub(ob),
                })
            })
            .collect()
    }
}

pub fn run(input: JobInput<'_>) -> Result<JobResult> {
    let fs = input.fs;
    // Blob files live in the DB directory whatever the tables' path (readers look there).
    let blob_dir = input.blob_dir;
    let new_file_number = input.new_file_number;
    let stats = input.statistics;
    let builder =
        input.blob_write.map(|o| BlobFileBuilder::new(fs, blob_dir, o, new_file_number).counted(stats));
    let mut stage = BlobStage {
        builder,
        fetcher: input.blob_fetcher.clone(),
        gc_cutoff: input.blob_gc_cutoff,
        readahead: input.blob_readahead,
        inflow: BlobFlow::new(),
        outflow: BlobFlow::new(),
        relocated: (0, 0),
    };
    match run_with(input, &mut stage) {
        Ok(mut r) => {
            if let Some(b) = stage.builder.as_mut() {
                if let Err(e) = b.finish() {
                    b.abandon();
                    return Err(e);
                }
                r.blob_additions = std::mem::take(&mut b.additions);
            }
            r.blob_garbage = stage.garbage();
            (r.blobs_relocated, r.blob_bytes_relocated) = stage.relocated;
            Ok(r)
        }
        Err(e) => {
            if let Some(b) = stage.builder.as_mut() {
                b.abandon();
            }
            Err(e)
        }
    }
}

fn run_with(mut input: JobInput<'_>, stage: &mut BlobStage<'_>) -> Result<JobResult> {
    let icmp = (input.builder_options)(0).icmp.clone();
    let ucmp = icmp.user_comparator().clone();
    let earliest = input.snapshots.first().copied().unwrap_or(MAX_SEQUENCE_NUMBER);
    // RocksDB's `preserve_seqno_after_`: sequence numbers above it are never zeroed.
    let zero_limit = earliest.min(input.preserve_time_min_seqno.max(1) - 1);
    let snapshots = input.snapshots.clone();
    // The range tombstones each output stream writes: [0] the output level's, [1] the
    // proximal level's (RocksDB's `keep_seqno_range`, split after `proximal_after_seqno`).
    let proximal_after = input.proximal_after_seqno;
    let split = proximal_after.saturating_add(1);
    let kept_tombstones: [Vec<RangeTombstone>; 2] = {
        // With user-defined timestamps a tombstone goes only below `full_history_ts_low`
        // (RocksDB's `CompactionOutputs::AddRangeDels`, `consider_drop`): a read at a
        // timestamp above its own still needs it.
        let ts_sz = ucmp.timestamp_size();
        let low = input.full_history_ts_low.as_deref().filter(|l| ts_sz > 0 && l.len() == ts_sz);
        let below_low = |t: &RangeTombstone| {
            ts_sz == 0
                || low.is_some_and(|l| {
                    let ts = &t.start[t.start.len().saturating_sub(ts_sz)..];
                    ucmp.compare_timestamp(ts, l).is_lt()
                })
        };
        let kept =
            input.tombstones.iter().filter(|t| !(input.bottommost && t.seq <= earliest && below_low(t)));
        let (up, down): (Vec<RangeTombstone>, Vec<RangeTombstone>) =
            kept.cloned().partition(|t| proximal_after != MAX_SEQUENCE_NUMBER && t.seq >= split);
        [down, up]
    };
    let frag = FragmentedTombstones::new(ucmp.clone(), input.tombstones.clone());

    let mut result = JobResult {
        outputs: Vec::new(),
        bytes_written: 0,
        entries_dropped: 0,
        entries_in: 0,
        drops: DropReasons::default(),
        blob_additions: Vec::new(),
        blob_garbage: Vec::new(),
        blobs_relocated: 0,
        blob_bytes_relocated: 0,
        output_hashes: Vec::new(),
        proximal: Vec::new(),
        proximal_records: 0,
    };
    // The open output of each stream ([0] output level, [1] proximal level) and where its
    // next output's range tombstones start.
    let mut outs: [Option<Output>; 2] = [None, None];
    let (range_start, range_end) = input.range.clone();
    let mut lowers: [Option<Vec<u8>>; 2] = [range_start.clone(), range_start.clone()];

    let ctx = Ctx {
        fs: input.fs,
        dir: input.dir,
        path_id: input.path_id,
        builder_options: input.builder_options,
        new_file_number: input.new_file_number,
        preallocation: input.preallocation,
        output_hash: input.output_hash,
        seqno_time: input.seqno_time.clone(),
        file_checksum: input.file_checksum,
    };
    let mut kc = KeyCompactor {
        snapshots: &snapshots,
        earliest,
        bottommost: input.bottommost,
        frag: &frag,
        remove_value: input.remove_value,
        filter: input.compaction_filter.take(),
        merge_operator: input.merge_operator,
        stats: input.statistics,
        blob: input.blob_fetcher.clone(),
        emitted: Vec::new(),
        dropped: 0,
        drops: DropReasons::default(),
        may_drop_deletions: true,
        enforce_single_del_contracts: input.enforce_single_del_contracts,
        ts_cover: None,
    };
    let ts_sz = ucmp.timestamp_size();
    let ts_low = input.full_history_ts_low.clone().filter(|l| ts_sz > 0 && l.len() == ts_sz);
    // Per stream, the user key last written to the open output (RocksDB's
    // `last_key_for_partitioner_`).
    let mut last_written: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    // The entries of one user key, newest first.
    let mut group: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let cancel = input.cancel;
    let mut until_check = CANCEL_CHECK_EVERY;
    let iter = &mut input.iter;
    match &range_start {
        Some(s) => iter.seek(&make_internal_key(s, MAX_SEQUENCE_NUMBER, crate::key::VALUE_TYPE_FOR_SEEK)),
        None => iter.seek_to_first(),
    }
    let in_range = |k: &[u8]| range_end.as_deref().is_none_or(|e| ucmp.compare(user_key(k), e).is_lt());
    let full = |o: &Output| {
        let tail = if input.target_file_size_is_upper_bound { o.builder.estimated_tail_size() } else { 0 };
        o.builder.estimated_file_size().saturating_add(tail) >= input.target_file_size
    };
    // Per stream, its range tombstones' starts inside this compaction's range, ascending:
    // RocksDB's range-deletion sentinel keys, none at the bottommost level (`AddToOutput`
    // skips them).
    let starts: [Vec<&[u8]>; 2] = std::array::from_fn(|s| {
        if input.bottommost {
            return Vec::new();
        }
        let mut v: Vec<&[u8]> = kept_tombstones[s]
            .iter()
            .map(|t| t.start.as_slice())
            .filter(|k| range_start.as_deref().is_none_or(|r| ucmp.compare(k, r).is_gt()))
            .filter(|k| range_end.as_deref().is_none_or(|e| ucmp.compare(k, e).is_lt()))
            .collect();
        v.sort_by(|a, b| ucmp.compare(a, b));
        v.dedup_by(|a, b| ucmp.compare(a, b).is_eq());
        v
    });
    let mut next_start = [0usize; 2];
    // Per stream: the grandparents (none into level 0), and whether its last output was cut
    // so that the overlap restarts at the next key it takes.
    let mut grandparents: [GrandparentCursor<'_>; 2] =
        std::array::from_fn(|_| GrandparentCursor::new(input.grandparents));
    let mut restart_overlap = [false, false];
    // Ends stream `$s`'s open output `$out` before user key `$uk` (a size, grandparent or
    // partition cut): the next output's lower bound is `$uk`, and its grandparent overlap
    // restarts at the next key the stream takes.
    macro_rules! cut_before {
        ($s:expr, $out:expr, $uk:expr) => {{
            let o = $out.take();
            finish(&ctx, o, &kept_tombstones[$s], lowers[$s].as_deref(), Some($uk), $s == 1, &mut result)?;
            lowers[$s] = Some($uk.to_vec());
            restart_overlap[$s] = true;
        }};
    }
    // A sentinel at `key` in stream `s`: the stream's open output ends before it when full or
    // when the partitioner asks; an output opens for it (its tombstone part starts there).
    let sentinel = |key: &[u8],
                    s: usize,
                    out: &mut Option<Output>,
                    lower: &mut Option<Vec<u8>>,
                    last_written: &mut Vec<u8>,
                    result: &mut JobResult|
     -> Result<()> {
        if let Some(o) = out.as_ref() {
            let cut = full(o) || input.partitioner.is_some_and(|p| p.should_partition(last_written, key));
            if cut && lower.as_deref().is_none_or(|l| ucmp.compare(l, key).is_lt()) {
                finish(&ctx, out.take(), &kept_tombstones[s], lower.as_deref(), Some(key), s == 1, result)?;
                *lower = Some(key.to_vec());
            }
        }
        if out.is_none() {
            *out = Some(open_output(&ctx)?);
        }
        if input.partitioner.is_some() {
            last_written.clear();
            last_written.extend_from_slice(key);
        }
        Ok(())
    };
    loop {
        until_check -= 1;
        if until_check == 0 {
            until_check = CANCEL_CHECK_EVERY;
            if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Acquire)) {
                return Err(crate::error::Error::shutdown("Database shutdown: compaction stopped"));
            }
        }
        let valid = iter.valid() && in_range(iter.key());
        let boundary = !group.is_empty() && (!valid || !same_key(&*ucmp, iter.key(), &group[0].0));
        if boundary {
            let uk = user_key(&group[0].0).to_vec();
            for s in 0..2 {
                while let Some(&key) = starts[s].get(next_start[s]).filter(|k| ucmp.compare(k, &uk).is_le()) {
                    next_start[s] += 1;
                    sentinel(key, s, &mut outs[s], &mut lowers[s], &mut last_written[s], &mut result)?;
                }
            }
            for (s, out) in outs.iter_mut().enumerate() {
                if out.as_ref().is_some_and(full) {
                    cut_before!(s, out, &uk);
                }
            }
            if ts_sz > 0 {
                kc.compact_ts_versions(&group, &*ucmp, ts_low.as_deref())?;
            } else {
                kc.compact_key(&group)?;
            }
            group.clear();
            let n = kc.emitted.len();
            // Whether this key has written to each stream yet.
            let mut started = [false, false];
            for (i, (k, v)) in kc.emitted.drain(..).enumerate() {
                // Only a key's last entry can have its sequence zeroed (the only one a
                // snapshot stripe leaves that low).
                let k = if input.bottommost && i + 1 == n {
                    zero_sequence(k, zero_limit, &*ucmp, ts_low.as_deref())?
                } else {
                    k
                };
                let (k, v) = stage.process(k, v)?;
                let seq = crate::key::trailer(&k) >> 8;
                let s = usize::from(seq > proximal_after);
                let out = &mut outs[s];
                if !started[s] && !input.grandparents.is_empty() {
                    // RocksDB's ShouldStopBefore: the grandparent boundaries this key crosses;
                    // past one, the output ends when it and the grandparents it overlaps
                    // pass the limit. After any cut the overlap restarts at this key.
                    let g = &mut grandparents[s];
                    let crossed = g.update(&*ucmp, &k);
                    let over = out.as_ref().is_some_and(|o| {
                        g.overlapped.saturating_add(o.builder.estimated_file_size())
                            > input.max_grandparent_overlap
                    });
                    if crossed > 0 && over {
                        cut_before!(s, out, &uk);
                    }
                }
                if let (Some(p), false) = (input.partitioner, started[s]) {
                    if out.is_some() && p.should_partition(&last_written[s], &uk) {
                        cut_before!(s, out, &uk);
                    }
                    last_written[s].clone_from(&uk);
                }
                if !started[s] && std::mem::take(&mut restart_overlap[s]) {
                    grandparents[s].overlapped = grandparents[s].overlap_at(&*ucmp, &k);
                }
                started[s] = true;
                result.proximal_records += s as u64;
                if out.is_none() {
                    *out = Some(open_output(&ctx)?);
                }
                if let Some(o) = out.as_mut() {
                    if is_blob_index(&k) {
                        if let Ok(bi) = BlobIndex::decode(&v) {
                            let oldest = &mut o.meta.oldest_blob_file_number;
                            if *oldest == 0 || bi.file_number < *oldest {
                                *oldest = bi.file_number;
                            }
                        }
                    } else if (crate::key::trailer(&k) & 0xff) as u8 == ValueType::WideColumnEntity as u8 {
                        // An entity's columns in blob files link the table to those files
                        // too (RocksDB's `FileMetaData::UpdateBoundaries`).
                        crate::version::link_entity_blob_files(&mut o.meta, &v)?;
                    }
                    o.builder.add(&k, &v)?;
                    if ctx.output_hash {
                        o.hash = output_hash_step(o.hash, &k, &v);
                    }
                    extend(&icmp, &mut o.meta, &k, o.empty);
                    o.empty = false;
                    o.meta.smallest_seqno = o.meta.smallest_seqno.min(seq);
                    o.meta.largest_seqno = o.meta.largest_seqno.max(seq);
                }
            }
        }
        if !valid {
            for s in 0..2 {
                for &key in &starts[s][next_start[s]..] {
                    sentinel(key, s, &mut outs[s], &mut lowers[s], &mut last_written[s], &mut result)?;
                }
            }
            break;
        }
        if is_blob_index(iter.key()) {
            meter(&mut stage.inflow, iter.key(), iter.value());
        } else if is_entity(iter.key()) {
            meter_entity(&mut stage.inflow, iter.key(), iter.value())?;
        }
        group.push((iter.key().to_vec(), iter.value().to_vec()));
        result.entries_in += 1;
        iter.next();
    }
    iter.status()?;
    result.entries_dropped = kc.dropped;
    result.drops = kc.drops;
    for (s, mut out) in outs.into_iter().enumerate() {
        if out.is_none()
            && overlaps_any(&ucmp, &kept_tombstones[s], lowers[s].as_deref(), range_end.as_deref())
        {
            out = Some(open_output(&ctx)?);
        }
        finish(
            &ctx,
            out,
            &kept_tombstones[s],
            lowers[s].as_deref(),
            range_end.as_deref(),
            s == 1,
            &mut result,
        )?;
    }
    Ok(result)
}

/// A subcompaction's user-key range `[start, end)` (None: unbounded on that side).
pub type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// RocksDB's `CompactionJob::GenSubcompactionBoundaries` from the inputs' key anchors
/// (user key, bytes since the previous anchor of its table): the anchors sorted by key
/// and made unique, then cut each time their running size passes another
/// `max(total / planned, min_range)` bytes (`min_range`: the output level's target file
/// size), into at most `planned` ranges. Returns the boundary user keys, ascending (none:
/// one subcompaction).
pub fn subcompaction_boundaries(
    ucmp: &dyn crate::comparator::Comparator,
    mut anchors: Vec<(Vec<u8>, u64)>,
    planned: u64,
    min_range: u64,
) -> Vec<Vec<u8>> {
    if planned <= 1 {
        return Vec::new();
    }
    // The total counts the duplicates the dedup below removes, as RocksDB's.
    let total: u64 = anchors.iter().map(|a| a.1).sum();
    anchors.sort_by(|a, b| ucmp.compare(&a.0, &b.0));
    anchors.dedup_by(|b, a| ucmp.compare(&a.0, &b.0).is_eq());
    let target = (total / planned).max(min_range);
    if target >= total {
        return Vec::new();
    }
    let (mut next, mut cumulative, mut ranges) = (target, 0u64, 1u64);
    let mut out = Vec::new();
    for (key, size) in anchors {
        cumulative += size;
        if cumulative > next {
            next += target;
            ranges += 1;
            out.push(key);
        }
        if ranges == planned {
            break;
        }
    }
    out
}

/// RocksDB's sequence-number zeroing (`CompactionIterator::PrepareOutput`), for an entry a
/// bottommost compaction writes: a Put, blob index or entity every snapshot sees (sequence
/// at most `earliest`) is written with sequence 0. Merge operands, deletions and range
/// tombstones keep theirs.
///
/// With timestamps only a version below `full_history_ts_low` (`ts_low`; none: nothing is
/// zeroed) is, and it gets the minimum timestamp (all zero bytes) too, as RocksDB's. That
/// moves it to the end of its key's versions: the caller passes only a key's last entry,
/// and the compaction holds every version of the key the output level has (the picker
/// compares keys without timestamps, `Version::overlapping_files`), so it stays within the
/// job's outputs and the level stays disjoint.
fn zero_sequence(
    k: Vec<u8>,
    earliest: u64,
    ucmp: &dyn crate::comparator::Comparator,
    ts_low: Option<&[u8]>,
) -> Result<Vec<u8>> {
    let p = parse_internal_key(&k)?;
    if p.sequence > earliest
        || !matches!(p.value_type, ValueType::Value | ValueType::BlobIndex | ValueType::WideColumnEntity)
    {
        return Ok(k);
    }
    let ts_sz = ucmp.timestamp_size();
    if ts_sz == 0 {
        if p.sequence == 0 {
            return Ok(k);
        }
        return Ok(make_internal_key(p.user_key, 0, p.value_type));
    }
    let Some(low) = ts_low else { return Ok(k) };
    if p.user_key.len() < ts_sz {
        return Err(crate::error::Error::corruption(format!(
            "compaction: key of {} bytes is shorter than its timestamp ({ts_sz} bytes)",
            p.user_key.len()
        )));
    }
    let (key, ts) = p.user_key.split_at(p.user_key.len() - ts_sz);
    if !ucmp.compare_timestamp(ts, low).is_lt() || (p.sequence == 0 && ts.iter().all(|&b| b == 0)) {
        return Ok(k);
    }
    let mut min_ts_key = Vec::with_capacity(p.user_key.len());
    min_ts_key.extend_from_slice(key);
    min_ts_key.resize(p.user_key.len(), 0);
    Ok(make_internal_key(&min_ts_key, 0, p.value_type))
}

/// Whether internal keys `a` and `b` belong to one group of `run_with`: the same user key
/// (with timestamps, compared without them: a group is every version of a key).
fn same_key(ucmp: &dyn crate::comparator::Comparator, a: &[u8], b: &[u8]) -> bool {
    if ucmp.timestamp_size() > 0 {
        ucmp.compare_without_timestamp(user_key(a), true, user_key(b), true).is_eq()
    } else {
        ucmp.compare(user_key(a), user_key(b)).is_eq()
    }
}

/// Where `flush_entries` sends each entry it keeps: `(internal key, value)`.
pub type EmitFn<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// What a flush keeps (RocksDB's `BuildTable`, which runs a `CompactionIterator` and a
/// `MergeHelper` over the memtables): the per-key logic of a compaction that is not
/// bottommost, with no filters. Of one user key's entries in one snapshot stripe only the
/// newest is kept, and an entry a newer range tombstone of its stripe covers is dropped;
/// deletions, single deletions and range tombstones stay. Merge operands are combined with
/// `merge_operator` as a compaction combines them (`KeyCompactor::merge_until`): onto a
/// Put or deletion of their stripe into one Put, else by the partial merge; without an
/// operator a flush meeting an operand fails as RocksDB's ("merge_operator is not properly
/// initialized."). With timestamps each version keeps its own key, except below
/// `full_history_ts_low`.
///
/// `iter` yields the memtables' point entries, `tombstones` their range tombstones,
/// `snapshots` the live snapshots when the flush started (ascending). Each kept entry goes
/// to `emit`, in order. Returns (entries read, entries dropped).
/// `enforce_single_del_contracts`: as a compaction's (`KeyCompactor::single_del_meets_delete`).
#[allow(clippy::too_many_arguments)]
pub fn flush_entries(
    ucmp: &crate::comparator::ComparatorRef,
    iter: &mut dyn crate::iter::InternalIterator,
    tombstones: Vec<RangeTombstone>,
    snapshots: &[u64],
    full_history_ts_low: Option<&[u8]>,
    merge_operator: Option<&dyn MergeOperatorCore>,
    stats: Option<&crate::statistics::Statistics>,
    enforce_single_del_contracts: bool,
    blob: Option<BlobFetcher>,
    emit: &mut EmitFn<'_>,
) -> Result<(u64, u64)> {
    let frag = FragmentedTombstones::new(ucmp.clone(), tombstones);
    let mut kc = KeyCompactor {
        snapshots,
        earliest: snapshots.first().copied().unwrap_or(MAX_SEQUENCE_NUMBER),
        bottommost: false,
        frag: &frag,
        remove_value: None,
        filter: None,
        merge_operator,
        stats,
        blob,
        emitted: Vec::new(),
        dropped: 0,
        drops: DropReasons::default(),
        may_drop_deletions: true,
        enforce_single_del_contracts,
        ts_cover: None,
    };
    let ts_sz = ucmp.timestamp_size();
    let ts_low = full_history_ts_low.filter(|l| ts_sz > 0 && l.len() == ts_sz);
    let mut group: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut read = 0u64;
    iter.seek_to_first();
    loop {
        let valid = iter.valid();
        if !group.is_empty() && (!valid || !same_key(&**ucmp, iter.key(), &group[0].0)) {
            if ts_sz > 0 {
                kc.compact_ts_versions(&group, &**ucmp, ts_low)?;
            } else {
                kc.compact_key(&group)?;
            }
            group.clear();
            for (k, v) in kc.emitted.drain(..) {
                emit(&k, &v)?;
            }
        }
        if !valid {
            break;
        }
        group.push((iter.key().to_vec(), iter.value().to_vec()));
        read += 1;
        iter.next();
    }
    iter.status()?;
    Ok((read, kc.dropped))
}

/// Decides what of one user key's entries a compaction writes (RocksDB's
/// `CompactionIterator` for one key).
struct KeyCompactor<'a, 'b> {
    /// Live snapshots, ascending.
    snapshots: &'a [u64],
    earliest: u64,
    bottommost: bool,
    frag: &'a FragmentedTombstones,
    remove_value: Option<&'b ValueFilter>,
    filter: Option<&'b mut KeyFilter<'b>>,
    merge_operator: Option<&'b dyn MergeOperatorCore>,
    /// The database's statistics (a failed merge is counted there).
    stats: Option<&'b crate::statistics::Statistics>,
    /// Resolves blob indexes a filter or merge needs the value of.
    blob: Option<BlobFetcher>,
    /// What to write, in order.
    emitted: Vec<(Vec<u8>, Vec<u8>)>,
    dropped: u64,
    drops: DropReasons,
    /// A deletion every snapshot sees may go at the bottommost level. False for a version
    /// of a key with timestamps at or above `full_history_ts_low`: older versions (other
    /// user keys to this job) could show through.
    may_drop_deletions: bool,
    /// RocksDB's `enforce_single_del_contracts`.
    enforce_single_del_contracts: bool,
    /// With user-defined timestamps, which range tombstones may drop the versions being
    /// compacted (RocksDB's `CompactionRangeDelAggregator` with `ts_upper_bound` and
    /// `CompactionIterator`'s `cmp_with_history_ts_low_ < 0`): None without timestamps
    /// (every tombstone); Some(None) for a version at or above `full_history_ts_low`, or any
    /// when none is set (no tombstone: a read between its timestamp and the tombstone's
    /// still sees it); Some(Some(low)) below it (tombstones at or below `low`).
    ts_cover: Option<Option<Vec<u8>>>,
}

/// RocksDB 11.8.1's words when a SingleDelete meets a Delete of its key
/// (`CompactionIterator::NextFromInput`; 0 is `kTypeDeletion`).
pub const SINGLE_DEL_CONTRACT_MESSAGE: &str = "Found SD and type: 0 on the same key, violating the contract \
     of SingleDelete. Check your application to make sure the application does not mix \
     SingleDelete and Delete for the same key. If you are using \
     write-prepared/write-unprepared transactions, and use SingleDelete to delete certain keys, \
     then make sure TransactionDBOptions::rollback_deletion_type_callback is configured \
     properly. Mixing SD and DEL can lead to undefined behaviors";

impl KeyCompactor<'_, '_> {
    /// RocksDB's check of a SingleDelete (`CompactionIterator`, before it looks whether a
    /// newer entry hides it): when the next older entry of the key is a Delete in the same
    /// snapshot stripe, the contract of SingleDelete is broken. With
    /// `enforce_single_del_contracts` that is Corruption and the flush or compaction fails;
    /// without, RocksDB drops the SingleDelete (counted obsolete) and goes on with the Delete,
    /// which is what `Ok(true)` asks of the caller.
    fn single_del_meets_delete(&self, entries: &[(Vec<u8>, Vec<u8>)], i: usize, stripe: u64) -> Result<bool> {
        let Some((next, _)) = entries.get(i + 1) else { return Ok(false) };
        let n = parse_internal_key(next)?;
        if n.value_type != ValueType::Deletion || self.stripe_of(n.sequence) != stripe {
            return Ok(false);
        }
        if self.enforce_single_del_contracts {
            return Err(crate::error::Error::corruption(SINGLE_DEL_CONTRACT_MESSAGE));
        }
        Ok(true)
    }

    /// The oldest snapshot that sees `seq` (MAX when none does).
    fn stripe_of(&self, seq: u64) -> u64 {
        let i = self.snapshots.partition_point(|&s| s < seq);
        self.snapshots.get(i).copied().unwrap_or(MAX_SEQUENCE_NUMBER)
    }

    fn covered(&self, key: &[u8], seq: u64, stripe: u64) -> bool {
        if self.frag.is_empty() {
            return false;
        }
        match &self.ts_cover {
            None => self.frag.max_covering_seq(key, stripe) > seq,
            Some(None) => false,
            Some(Some(low)) => self.frag.max_covering_seq_at(key, stripe, low) > seq,
        }
    }

    /// User-defined timestamps (docs/timestamps.md): `entries` are every version of one key,
    /// newest timestamp first. Each version at or above `low` (all of them when it is not
    /// set) is compacted as a user key of its own, its deletions kept; the versions below
    /// `low` are compacted together as one key, so only the newest of them per snapshot
    /// stripe survives (RocksDB's garbage collection below `full_history_ts_low`) and a
    /// deletion among them that every snapshot sees goes at the bottommost level.
    fn compact_ts_versions(
        &mut self,
        entries: &[(Vec<u8>, Vec<u8>)],
        ucmp: &dyn crate::comparator::Comparator,
        low: Option<&[u8]>,
    ) -> Result<()> {
        let ts_sz = ucmp.timestamp_size();
        let mut i = 0;
        while i < entries.len() {
            let uk = user_key(&entries[i].0);
            let ts = &uk[uk.len().saturating_sub(ts_sz)..];
            let below = low.is_some_and(|l| ucmp.compare_timestamp(ts, l).is_lt());
            let j = if below {
                entries.len()
            } else {
                let mut j = i + 1;
                while j < entries.len() && ucmp.compare(user_key(&entries[j].0), uk).is_eq() {
                    j += 1;
                }
                j
            };
            self.may_drop_deletions = below;
            self.ts_cover = Some(if below { low.map(<[u8]>::to_vec) } else { None });
            let r = self.compact_key(&entries[i..j]);
            self.may_drop_deletions = true;
            self.ts_cover = None;
            r?;
            i = j;
        }
        Ok(())
    }

    fn resolve(&self, user_key: &[u8], index: &[u8]) -> Result<Vec<u8>> {
        match &self.blob {
            Some(b) => b.fetch(user_key, index),
            None => Err(crate::error::Error::corruption("blob index met where no blob files are known")),
        }
    }

    /// `entries`: every entry of one user key, newest first.
    fn compact_key(&mut self, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<()> {
        let mut last_stripe: Option<u64> = None;
        let mut i = 0;
        while i < entries.len() {
            let (k, v) = &entries[i];
            let p = parse_internal_key(k)?;
            let stripe = self.stripe_of(p.sequence);
            if p.value_type == ValueType::SingleDeletion
                && self.single_del_meets_delete(entries, i, stripe)?
            {
                self.drops.obsolete += 1;
                self.dropped += 1;
                i += 1;
                continue;
            }
            let newer = last_stripe == Some(stripe);
            if newer || self.covered(p.user_key, p.sequence, stripe) {
                if newer {
                    self.drops.newer_entry += 1;
                } else {
                    self.drops.range_del += 1;
                }
                last_stripe = Some(stripe);
                self.dropped += 1;
                i += 1;
                continue;
            }
            last_stripe = Some(stripe);
            match p.value_type {
                ValueType::Deletion | ValueType::SingleDeletion | ValueType::RangeDeletion => {
                    if self.bottommost && p.sequence <= self.earliest && self.may_drop_deletions {
                        self.drops.obsolete += 1;
                        self.dropped += 1;
                    } else {
                        self.emitted.push((k.clone(), v.clone()));
                    }
                }
                ValueType::Value | ValueType::BlobIndex => {
                    // Filters see the newest version of a key, when no snapshot sees it.
                    let mut decision = FilterDecision::Keep;
                    if i == 0
                        && stripe == MAX_SEQUENCE_NUMBER
                        && (self.remove_value.is_some() || self.filter.is_some())
                    {
                        let resolved;
                        let value: &[u8] = if p.value_type == ValueType::BlobIndex {
                            resolved = self.resolve(p.user_key, v)?;
                            &resolved
                        } else {
                            v
                        };
                        if self.remove_value.is_some_and(|f| f(value)) {
                            decision = FilterDecision::Remove;
                        } else if let Some(f) = self.filter.as_mut() {
                            decision = f(p.user_key, value);
                        }
                    }
                    match decision {
                        FilterDecision::Keep => self.emitted.push((k.clone(), v.clone())),
                        FilterDecision::Change(nv) => self
                            .emitted
                            .push((make_internal_key(p.user_key, p.sequence, ValueType::Value), nv.to_vec())),
                        FilterDecision::Remove => {
                            self.drops.user += 1;
                            if self.bottommost && p.sequence <= self.earliest && self.may_drop_deletions {
                                self.dropped += 1;
                            } else {
                                // A deletion, so that older versions stay hidden.
                                self.emitted.push((
                                    make_internal_key(p.user_key, p.sequence, ValueType::Deletion),
                                    Vec::new(),
                                ));
                            }
                        }
                    }
                }
                // RocksDB's compaction filters keep entities unless they are column-aware
                // (FilterV3's default), and rust-rocksdb's filters are not.
                ValueType::WideColumnEntity => self.emitted.push((k.clone(), v.clone())),
                ValueType::Merge => {
                    i = self.merge_until(entries, i, stripe)?;
                    continue;
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// RocksDB's `MergeHelper::MergeUntil`, from the merge operand `entries[i]` (the newest
    /// entry of its stripe, not covered by a range tombstone): gathers the stripe's operands,
    /// dropping those a range tombstone of the stripe covers, down to
    /// - a Put, blob index, wide-column entity or deletion of the stripe (the base; as no base
    ///   when a tombstone covers it): full merge onto it, one Put (one entity onto an
    ///   entity) at the newest operand's sequence in place of the operands and the base;
    /// - the end of the key's history at the bottommost level (and, with timestamps, below
    ///   `full_history_ts_low`): full merge onto nothing;
    /// - otherwise (the stripe ends, or older levels may hold the key): the operator's partial
    ///   merge of two or more operands, one operand at the newest sequence; the operands as
    ///   they are when it has none or it declines.
    ///
    /// A failed full merge is Corruption naming the key (and fails the flush or compaction).
    /// Returns the index of the first entry not consumed.
    fn merge_until(&mut self, entries: &[(Vec<u8>, Vec<u8>)], i: usize, stripe: u64) -> Result<usize> {
        let first = parse_internal_key(&entries[i].0)?;
        let key = first.user_key;
        let Some(op) = self.merge_operator else {
            return Err(no_merge_operator());
        };
        // The operands kept (not covered), newest first, and their entries.
        let mut operands: Vec<Vec<u8>> = Vec::new();
        let mut kept: Vec<usize> = Vec::new();
        // The base when one was reached: Some(None) for a deletion or a covered entry.
        let mut base: Option<Option<&[u8]>> = None;
        // A wide-column base: the operands merge onto its default column and the result
        // is the entity with that column replaced (RocksDB's MergeHelper).
        let mut entity_base: Option<&[u8]> = None;
        let resolved: Vec<u8>;
        // The entity base with its columns in blob files read inline (RocksDB's
        // `ResolveEntityForMerge`): the merge result carries them as values.
        let resolved_entity: Vec<u8>;
        let mut covered = 0u64;
        let mut reached_base = false;
        let mut j = i;
        while j < entries.len() {
            let p = parse_internal_key(&entries[j].0)?;
            if self.stripe_of(p.sequence) != stripe {
                break;
            }
            let is_covered = self.covered(key, p.sequence, stripe);
            if p.value_type == ValueType::Merge {
                if is_covered {
                    covered += 1;
                } else {
                    operands.push(entries[j].1.clone());
                    kept.push(j);
                }
                j += 1;
                continue;
            }
            if operands.is_empty() {
                // Every operand was covered: the entry below is the compaction's again.
                break;
            }
            base = Some(None);
            reached_base = true;
            if !is_covered {
                match p.value_type {
                    ValueType::Value => base = Some(Some(&entries[j].1)),
                    ValueType::BlobIndex => {
                        resolved = self.resolve(key, &entries[j].1)?;
                        base = Some(Some(&resolved));
                    }
                    ValueType::WideColumnEntity => {
                        let raw = &entries[j].1;
                        resolved_entity =
                            crate::wide_columns::resolve_blob_columns(raw, |i| self.resolve(key, i))?
                                .unwrap_or_else(|| raw.clone());
                        entity_base = Some(&resolved_entity);
                        base = Some(Some(crate::wide_columns::default_column_value(&resolved_entity)?));
                    }
                    _ => {}
                }
            }
            j += 1;
            break;
        }
        self.dropped += covered;
        self.drops.range_del += covered;
        if operands.is_empty() {
            return Ok(j);
        }
        // At the bottom, with nothing older left anywhere, there is no base.
        if base.is_none() && self.bottommost && self.may_drop_deletions && j == entries.len() {
            base = Some(None);
        }
        operands.reverse();
        match base {
            Some(b) => {
                let n = operands.len() as u64 + u64::from(reached_base);
                let merged = op.full_merge(key, b, operands, self.stats)?;
                // The operands and the base (if any) become one Put (one entity onto an
                // entity).
                self.dropped += n - 1;
                let out = match entity_base {
                    Some(e) => (
                        make_internal_key(key, first.sequence, ValueType::WideColumnEntity),
                        crate::wide_columns::with_default_column(e, &merged)?,
                    ),
                    None => (make_internal_key(key, first.sequence, ValueType::Value), merged),
                };
                self.emitted.push(out);
            }
            None => match op.partial_merge(key, &operands)? {
                Some(v) => {
                    self.dropped += operands.len() as u64 - 1;
                    self.emitted.push((make_internal_key(key, first.sequence, ValueType::Merge), v));
                }
                None => {
                    for &k in &kept {
                        self.emitted.push(entries[k].clone());
                    }
                }
            },
        }
        Ok(j)
    }
}

struct Ctx<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    path_id: u32,
    builder_options: &'a dyn Fn(u64) -> TableBuilderOptions,
    new_file_number: &'a dyn Fn() -> u64,
    preallocation: crate::fs::Preallocation,
    output_hash: bool,
    seqno_time: Option<std::sync::Arc<crate::table::seqno_time::SeqnoToTimeMapping>>,
    file_checksum: bool,
}

/// RocksDB's `sstableKeyCompare` of internal keys: by user key without timestamp; at one
/// user key a range tombstone's end (its sentinel) sorts first.
fn sst_key_compare(
    ucmp: &dyn shale_format::comparator::Comparator,
    a: &[u8],
    b: &[u8],
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let c = ucmp.compare_without_timestamp(user_key(a), true, user_key(b), true);
    if c != Ordering::Equal {
        return c;
    }
    let sentinel = |k: &[u8]| {
        k.len() >= 8 && crate::key::trailer(k) == (MAX_SEQUENCE_NUMBER << 8) | ValueType::RangeDeletion as u64
    };
    match (sentinel(a), sentinel(b)) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// Where one output stream stands among the grandparents (RocksDB's `CompactionOutputs`
/// `grandparent_index_`, `being_grandparent_gap_`, `grandparent_overlapped_bytes_`,
/// `seen_key_`).
struct GrandparentCursor<'g> {
    files: &'g [std::sync::Arc<FileMetaData>],
    index: usize,
    in_gap: bool,
    /// The grandparent bytes the open output overlaps.
    overlapped: u64,
    seen_key: bool,
}

impl<'g> GrandparentCursor<'g> {
    fn new(files: &'g [std::sync::Arc<FileMetaData>]) -> Self {
        GrandparentCursor { files, index: 0, in_gap: true, overlapped: 0, seen_key: false }
    }

    /// RocksDB's `UpdateGrandparentBoundaryInfo`: moves to the file holding `ikey` (the last
    /// one when several do) and returns how many grandparent boundaries that crossed.
    fn update(&mut self, ucmp: &dyn shale_format::comparator::Comparator, ikey: &[u8]) -> usize {
        let mut crossed = 0;
        if self.files.is_empty() {
            return crossed;
        }
        while self.index < self.files.len() {
            let f = &self.files[self.index];
            if self.in_gap {
                if sst_key_compare(ucmp, ikey, &f.smallest).is_lt() {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                    self.overlapped = self.overlapped.saturating_add(f.file_size);
                }
                self.in_gap = false;
            } else {
                let c = sst_key_compare(ucmp, ikey, &f.largest);
                let last_holding = c.is_eq()
                    && self
                        .files
                        .get(self.index + 1)
                        .is_none_or(|next| sst_key_compare(ucmp, ikey, &next.smallest).is_lt());
                if c.is_lt() || last_holding {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                }
                self.in_gap = true;
                self.index += 1;
            }
        }
        if !self.seen_key && !self.in_gap {
            self.overlapped = self.overlap_at(ucmp, ikey);
        }
        self.seen_key = true;
        crossed
    }

    /// RocksDB's `GetCurrentKeyGrandparentOverlappedBytes`: the bytes of the grandparents
    /// holding `ikey` (0 in a gap).
    fn overlap_at(&self, ucmp: &dyn shale_format::comparator::Comparator, ikey: &[u8]) -> u64 {
        if self.in_gap || self.index >= self.files.len() {
            return 0;
        }
        let mut bytes = self.files[self.index].file_size;
        let mut i = self.index;
        while i > 0 && sst_key_compare(ucmp, ikey, &self.files[i - 1].largest).is_eq() {
            i -= 1;
            bytes = bytes.saturating_add(self.files[i].file_size);
        }
        bytes
    }
}

fn open_output(ctx: &Ctx<'_>) -> Result<Output> {
    let number = (ctx.new_file_number)();
    let file = ctx.fs.new_writable_file(&filename::table_file(ctx.dir, number))?;
    let file = crate::fs::Preallocating::wrap(file, ctx.preallocation);
    let (file, checksum) = crate::file_checksum::ChecksummedFile::wrap(file, ctx.file_checksum);
    let builder = AnyTableBuilder::new((ctx.builder_options)(number), file);
    let meta = FileMetaData {
        number,
        path_id: ctx.path_id,
        smallest_seqno: MAX_SEQUENCE_NUMBER,
        largest_seqno: 0,
        ..Default::default()
    };
    Ok(Output { builder, meta, empty: true, hash: 0, checksum })
}

fn extend(icmp: &crate::key::InternalKeyComparator, meta: &mut FileMetaData, k: &[u8], empty: bool) {
    if empty || icmp.compare(k, &meta.smallest).is_lt() {
        meta.smallest = k.to_vec();
    }
    if empty || icmp.compare(k, &meta.largest).is_gt() {
        meta.largest = k.to_vec();
    }
}

fn overlaps_any(
    ucmp: &crate::comparator::ComparatorRef,
    ts: &[RangeTombstone],
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> bool {
    ts.iter().any(|t| clip(ucmp, t, lower, upper).is_some())
}

/// `t` clipped to `[lower, upper)`, if anything is left.
fn clip<'a>(
    ucmp: &crate::comparator::ComparatorRef,
    t: &'a RangeTombstone,
    lower: Option<&'a [u8]>,
    upper: Option<&'a [u8]>,
) -> Option<(&'a [u8], &'a [u8])> {
    let s: &[u8] = match lower {
        Some(l) if ucmp.compare(l, &t.start).is_gt() => l,
        _ => &t.start,
    };
    let e: &[u8] = match upper {
        Some(u) if ucmp.compare(u, &t.end).is_lt() => u,
        _ => &t.end,
    };
    ucmp.compare(s, e).is_lt().then_some((s, e))
}

fn finish(
    ctx: &Ctx<'_>,
    out: Option<Output>,
    tombstones: &[RangeTombstone],
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
    proximal: bool,
    result: &mut JobResult,
) -> Result<()> {
    let Some(mut o) = out else { return Ok(()) };
    let icmp = (ctx.builder_options)(0).icmp.clone();
    let ucmp = icmp.user_comparator().clone();
    let mut clipped: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for t in tombstones {
        if let Some((s, e)) = clip(&ucmp, t, lower, upper) {
            let start = make_internal_key(s, t.seq, ValueType::RangeDeletion);
            let sentinel = make_internal_key(e, MAX_SEQUENCE_NUMBER, ValueType::RangeDeletion);
            extend(&icmp, &mut o.meta, &start, o.empty);
            o.empty = false;
            extend(&icmp, &mut o.meta, &sentinel, false);
            o.meta.smallest_seqno = o.meta.smallest_seqno.min(t.seq);
            o.meta.largest_seqno = o.meta.largest_seqno.max(t.seq);
            clipped.push((start, e.to_vec()));
        }
    }
    clipped.sort_by(|a, b| icmp.compare(&a.0, &b.0));
    for (start, end) in &clipped {
        o.builder.add_range_tombstone(start, end)?;
    }
    if o.empty {
        let number = o.meta.number;
        drop(o);
        let _ = ctx.fs.remove_file(&filename::table_file(ctx.dir, number));
        return Ok(());
    }
    // RocksDB's `CompactionOutputs::Finish`: the output's part of the mapping.
    if let Some(m) = ctx.seqno_time.as_deref() {
        let (lo, hi) = (o.meta.smallest_seqno, o.meta.largest_seqno);
        if lo <= hi {
            o.builder.set_seqno_time_mapping(m.encode_for_table(lo, hi, None));
        }
    }
    let built = o.builder.finish()?;
    o.meta.file_size = built.file_size;
    o.meta.tail_size = built.properties.tail_size(built.file_size);
    // RocksDB's CompactionOutputs: the table's own property says it.
    o.meta.user_defined_timestamps_persisted =
        built.properties.raw_u64(crate::table::properties::names::USER_DEFINED_TIMESTAMPS_PERSISTED)
            != Some(0);
    o.meta.marked_for_compaction = built.marked_for_compaction;
    o.meta.file_creation_time = built.properties.file_creation_time;
    o.meta.oldest_ancester_time = built.properties.creation_time;
    // The writer's whole-file checksum, or "Unknown" without a factory.
    (o.meta.file_checksum, o.meta.file_checksum_func_name) =
        crate::file_checksum::recorded(o.checksum.as_ref());
    // RocksDB's CompactionJob records the output's unique id from the database's and the
    // session's ids and the file number (`table::unique_id`).
    let p = &built.properties;
    o.meta.unique_id =
        crate::table::unique_id::internal_unique_id(&p.db_id, &p.db_session_id, p.orig_file_number, false);
    result.bytes_written += built.file_size;
    result.outputs.push(o.meta);
    result.output_hashes.push(o.hash);
    result.proximal.push(proximal);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::key::bytewise_internal_comparator;
    use crate::memtable::MemTable;
    use crate::merge::testing::Concat;

    /// Full and partial merge both concatenate (rust-rocksdb's associative operator).
    fn associative() -> Concat {
        Concat { partial: true, fails: false }
    }

    /// Kept entries: (user key, sequence, type, value).
    type Kept = Vec<(Vec<u8>, u64, u8, Vec<u8>)>;

    /// What `flush_entries` keeps of `m` under `snapshots`.
    fn flushed(
        m: &std::sync::Arc<MemTable>,
        tombstones: Vec<RangeTombstone>,
        snapshots: &[u64],
        op: Option<&dyn MergeOperatorCore>,
    ) -> Result<Kept> {
        flushed_with(m, tombstones, snapshots, op, true)
    }

    /// `flushed` with `enforce_single_del_contracts` given.
    fn flushed_with(
        m: &std::sync::Arc<MemTable>,
        tombstones: Vec<RangeTombstone>,
        snapshots: &[u64],
        op: Option<&dyn MergeOperatorCore>,
        enforce_single_del: bool,
    ) -> Result<Kept> {
        let icmp = bytewise_internal_comparator();
        let mut out = Vec::new();
        let mut iter = m.iter();
        let (read, dropped) = flush_entries(
            icmp.user_comparator(),
            &mut *iter,
            tombstones,
            snapshots,
            None,
            op,
            None,
            enforce_single_del,
            None,
            &mut |k, v| {
                let t = crate::key::trailer(k);
                out.push((user_key(k).to_vec(), t >> 8, (t & 0xff) as u8, v.to_vec()));
                Ok(())
            },
        )?;
        assert_eq!(read, m.num_entries());
        assert_eq!(read - dropped, out.len() as u64);
        Ok(out)
    }

    /// What `flush_entries` keeps of `m` under `snapshots`: (user key, sequence, type).
    fn kept(
        m: &std::sync::Arc<MemTable>,
        tombstones: Vec<RangeTombstone>,
        snapshots: &[u64],
    ) -> Vec<(Vec<u8>, u64, u8)> {
        let op = Concat::full();
        flushed(m, tombstones, snapshots, Some(&op))
            .unwrap()
            .into_iter()
            .map(|(k, s, t, _)| (k, s, t))
            .collect()
    }

    const V: u8 = ValueType::Value as u8;
    const MRG: u8 = ValueType::Merge as u8;

    #[test]
    fn flush_keeps_the_newest_entry_per_stripe_and_merges_operands_onto_their_base() {
        let m = std::sync::Arc::new(MemTable::new(bytewise_internal_comparator(), 1));
        m.add(1, ValueType::Value, b"a", b"1");
        m.add(2, ValueType::Value, b"a", b"2");
        m.add(3, ValueType::Value, b"a", b"3");
        m.add(4, ValueType::Deletion, b"a", b"");
        m.add(5, ValueType::Value, b"b", b"x");
        m.add(6, ValueType::Value, b"b", b"base");
        m.add(7, ValueType::Merge, b"b", b"m1");
        m.add(8, ValueType::Merge, b"b", b"m2");
        m.add(9, ValueType::Value, b"c", b"1");
        m.add(10, ValueType::SingleDeletion, b"c", b"");
        m.add(11, ValueType::Value, b"d", b"1");
        let v = V;
        let del = ValueType::Deletion as u8;
        let sd = ValueType::SingleDeletion as u8;
        // No snapshot: one entry per key, operands merged onto the Put below them into one
        // Put at the newest operand's sequence.
        let want: Vec<(Vec<u8>, u64, u8)> = vec![
            (b"a".to_vec(), 4, del),
            (b"b".to_vec(), 8, v),
            (b"c".to_vec(), 10, sd),
            (b"d".to_vec(), 11, v),
        ];
        assert_eq!(kept(&m, Vec::new(), &[]), want);
        let all = flushed(&m, Vec::new(), &[], Some(&associative())).unwrap();
        assert_eq!(all[1].3, b"basem1m2");
        // Snapshots at 1 and 2: a's 1 and 2 are the versions they see; b's 5 (seen by
        // neither: its stripe is 6..=MAX) goes. A tombstone over d newer than it drops it.
        let want: Vec<(Vec<u8>, u64, u8)> = vec![
            (b"a".to_vec(), 4, del),
            (b"a".to_vec(), 2, v),
            (b"a".to_vec(), 1, v),
            (b"b".to_vec(), 8, v),
            (b"c".to_vec(), 10, sd),
        ];
        let t = RangeTombstone { start: b"d".to_vec(), end: b"e".to_vec(), seq: 12 };
        assert_eq!(kept(&m, vec![t.clone()], &[1, 2]), want);
        // A snapshot between the tombstone and d keeps d.
        assert!(kept(&m, vec![t], &[11]).contains(&(b"d".to_vec(), 11, v)));
    }

    #[test]
    fn flush_merges_within_snapshot_stripes_only() {
        let m = std::sync::Arc::new(MemTable::new(bytewise_internal_comparator(), 1));
        m.add(1, ValueType::Merge, b"k", b"1");
        m.add(2, ValueType::Merge, b"k", b"2");
        m.add(3, ValueType::Merge, b"k", b"3");
        m.add(4, ValueType::Merge, b"k", b"4");
        m.add(5, ValueType::Merge, b"k", b"5");
        let k = |s: u64, t: u8, v: &[u8]| (b"k".to_vec(), s, t, v.to_vec());
        // Snapshot at 3: stripes 4..=5 and 1..=3; no base in either (older tables may hold
        // one): partial merges, one operand per stripe.
        let got = flushed(&m, Vec::new(), &[3], Some(&associative())).unwrap();
        assert_eq!(got, vec![k(5, MRG, b"45"), k(3, MRG, b"123")]);
        // Without a partial merge the operands stay as they are.
        let plain = Concat::full();
        assert_eq!(flushed(&m, Vec::new(), &[3], Some(&plain)).unwrap().len(), 5);
        // A Put in the older stripe: that stripe becomes one Put, the newer stays operands.
        m.add(0, ValueType::Value, b"k", b"p");
        let got = flushed(&m, Vec::new(), &[3], Some(&associative())).unwrap();
        assert_eq!(got, vec![k(5, MRG, b"45"), k(3, V, b"p123")]);
        // Without an operator a flush meeting an operand fails as RocksDB's.
        let e = flushed(&m, Vec::new(), &[], None).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        // A failing operator is Corruption, "Merge operator failed".
        let failing = Concat { partial: false, fails: true };
        let e = flushed(&m, Vec::new(), &[], Some(&failing)).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        assert!(e.to_string().contains("Merge operator failed"), "{e}");
    }

    #[test]
    fn covered_operands_are_dropped_and_a_covered_base_is_no_base() {
        let m = std::sync::Arc::new(MemTable::new(bytewise_internal_comparator(), 1));
        m.add(1, ValueType::Value, b"k", b"p");
        m.add(2, ValueType::Merge, b"k", b"2");
        m.add(4, ValueType::Merge, b"k", b"4");
        m.add(5, ValueType::Merge, b"k", b"5");
        let k = |s: u64, t: u8, v: &[u8]| (b"k".to_vec(), s, t, v.to_vec());
        // A tombstone at 3 covers 2 and the Put: the rest merge onto nothing.
        let t = RangeTombstone { start: b"k".to_vec(), end: b"l".to_vec(), seq: 3 };
        let got = flushed(&m, vec![t.clone()], &[], Some(&associative())).unwrap();
        assert_eq!(got, vec![k(5, V, b"45")]);
        // A snapshot at 1 keeps the Put; the covered operand 2 goes, 4 and 5 (no base left
        // in their stripe) are partially merged.
        let got = flushed(&m, vec![t], &[1], Some(&associative())).unwrap();
        assert_eq!(got, vec![k(5, MRG, b"45"), k(1, V, b"p")]);
    }

    /// A compactor over a one-key group, as `run_with` makes it.
    fn compact(entries: &[(Vec<u8>, Vec<u8>)], bottommost: bool, whole_history: bool) -> Kept {
        let frag =
            FragmentedTombstones::new(bytewise_internal_comparator().user_comparator().clone(), Vec::new());
        let op = associative();
        let mut kc = KeyCompactor {
            snapshots: &[],
            earliest: MAX_SEQUENCE_NUMBER,
            bottommost,
            frag: &frag,
            remove_value: None,
            filter: None,
            merge_operator: Some(&op),
            stats: None,
            blob: None,
            emitted: Vec::new(),
            dropped: 0,
            drops: DropReasons::default(),
            may_drop_deletions: whole_history,
            enforce_single_del_contracts: true,
            ts_cover: None,
        };
        kc.compact_key(entries).unwrap();
        kc.emitted
            .into_iter()
            .map(|(k, v)| {
                let t = crate::key::trailer(&k);
                (user_key(&k).to_vec(), t >> 8, (t & 0xff) as u8, v)
            })
            .collect()
    }

    #[test]
    fn a_single_delete_meeting_a_delete_of_its_stripe_breaks_the_contract() {
        let m = std::sync::Arc::new(MemTable::new(bytewise_internal_comparator(), 1));
        m.add(1, ValueType::Value, b"a", b"1");
        m.add(2, ValueType::Deletion, b"k", b"");
        m.add(3, ValueType::SingleDeletion, b"k", b"");
        m.add(4, ValueType::Value, b"z", b"1");
        // Enforced (RocksDB 11's default): Corruption in RocksDB's words.
        let e = flushed_with(&m, Vec::new(), &[], None, true).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        assert!(e.to_string().contains("Found SD and type: 0 on the same key"), "{e}");
        assert!(e.to_string().contains("Mixing SD and DEL can lead to undefined behaviors"), "{e}");
        // Not enforced: the SingleDelete goes and the Delete stays, as RocksDB's.
        let del = ValueType::Deletion as u8;
        let kept: Vec<(Vec<u8>, u64, u8)> = flushed_with(&m, Vec::new(), &[], None, false)
            .unwrap()
            .into_iter()
            .map(|(k, s, t, _)| (k, s, t))
            .collect();
        assert_eq!(kept, vec![(b"a".to_vec(), 1, V), (b"k".to_vec(), 2, del), (b"z".to_vec(), 4, V)]);
        // A snapshot between them puts them in different stripes: no contract is broken and
        // both stay.
        let sd = ValueType::SingleDeletion as u8;
        let kept: Vec<(Vec<u8>, u64, u8)> = flushed_with(&m, Vec::new(), &[2], None, true)
            .unwrap()
            .into_iter()
            .map(|(k, s, t, _)| (k, s, t))
            .collect();
        assert_eq!(
            kept,
            vec![
                (b"a".to_vec(), 1, V),
                (b"k".to_vec(), 3, sd),
                (b"k".to_vec(), 2, del),
                (b"z".to_vec(), 4, V)
            ]
        );
        // A SingleDelete over a Put is its contract kept.
        let m = std::sync::Arc::new(MemTable::new(bytewise_internal_comparator(), 1));
        m.add(1, ValueType::Value, b"k", b"1");
        m.add(2, ValueType::SingleDeletion, b"k", b"");
        assert!(flushed_with(&m, Vec::new(), &[], None, true).is_ok());
    }

    #[test]
    fn subcompaction_boundaries_cut_sorted_unique_anchors_by_size() {
        let icmp = bytewise_internal_comparator();
        let ucmp = &**icmp.user_comparator();
        let a = |k: &str, n: u64| (k.as_bytes().to_vec(), n);
        // RocksDB's example: two files' anchors sorted together; 6400 bytes in two ranges
        // of 3200: the running size passes 3200 at b1.
        let anchors =
            vec![a("a1", 1000), a("b1", 1200), a("c1", 1100), a("a2", 1100), a("b2", 1000), a("c2", 1000)];
        assert_eq!(subcompaction_boundaries(ucmp, anchors.clone(), 2, 0), vec![b"b1".to_vec()]);
        // Four planned: ranges of 1600 bytes, at most three cuts.
        let want: Vec<Vec<u8>> = vec![b"a2".to_vec(), b"b1".to_vec(), b"c1".to_vec()];
        assert_eq!(subcompaction_boundaries(ucmp, anchors.clone(), 4, 0), want);
        // A range never smaller than the target file size; none when that covers it all.
        assert_eq!(subcompaction_boundaries(ucmp, anchors.clone(), 4, 3000).len(), 2);
        assert!(subcompaction_boundaries(ucmp, anchors.clone(), 4, 6400).is_empty());
        assert!(subcompaction_boundaries(ucmp, anchors, 1, 0).is_empty());
        // Equal keys count once as a cut.
        let dup = vec![a("k", 10), a("k", 10), a("m", 10), a("z", 10)];
        assert_eq!(subcompaction_boundaries(ucmp, dup, 4, 0), vec![b"m".to_vec(), b"z".to_vec()]);
    }

    #[test]
    fn bottommost_entries_every_snapshot_sees_get_sequence_zero() {
        let plain = crate::comparator::BytewiseComparator;
        let z = |uk: &[u8], seq: u64, t: ValueType, earliest: u64| {
            let k = zero_sequence(make_internal_key(uk, seq, t), earliest, &plain, None).unwrap();
            let p = parse_internal_key(&k).unwrap();
            (p.user_key.to_vec(), p.sequence, p.value_type)
        };
        for t in [ValueType::Value, ValueType::BlobIndex, ValueType::WideColumnEntity] {
            assert_eq!(z(b"k", 5, t, MAX_SEQUENCE_NUMBER), (b"k".to_vec(), 0, t));
            // At the earliest snapshot: it sees the entry. Above it: kept.
            assert_eq!(z(b"k", 5, t, 5), (b"k".to_vec(), 0, t));
            assert_eq!(z(b"k", 6, t, 5), (b"k".to_vec(), 6, t));
        }
        for t in [ValueType::Merge, ValueType::Deletion, ValueType::SingleDeletion, ValueType::RangeDeletion]
        {
            assert_eq!(z(b"k", 5, t, MAX_SEQUENCE_NUMBER), (b"k".to_vec(), 5, t));
        }
        // Timestamps: only below full_history_ts_low, and the timestamp becomes the minimum.
        let ts = crate::comparator::U64TsComparator::bytewise();
        let at = |t: u64, seq: u64, vt: ValueType| {
            make_internal_key(&[b"k".as_slice(), &t.to_le_bytes()].concat(), seq, vt)
        };
        let low = 4u64.to_le_bytes();
        let zt =
            |k: Vec<u8>, earliest: u64, low: Option<&[u8]>| zero_sequence(k, earliest, &ts, low).unwrap();
        assert_eq!(
            zt(at(3, 5, ValueType::Value), MAX_SEQUENCE_NUMBER, Some(&low)),
            at(0, 0, ValueType::Value)
        );
        assert_eq!(zt(at(3, 5, ValueType::BlobIndex), 5, Some(&low)), at(0, 0, ValueType::BlobIndex));
        // At or above the mark, with no mark, above the earliest snapshot, or a merge: kept.
        assert_eq!(
            zt(at(4, 5, ValueType::Value), MAX_SEQUENCE_NUMBER, Some(&low)),
            at(4, 5, ValueType::Value)
        );
        assert_eq!(zt(at(3, 5, ValueType::Value), MAX_SEQUENCE_NUMBER, None), at(3, 5, ValueType::Value));
        assert_eq!(zt(at(3, 6, ValueType::Value), 5, Some(&low)), at(3, 6, ValueType::Value));
        assert_eq!(
            zt(at(3, 5, ValueType::Merge), MAX_SEQUENCE_NUMBER, Some(&low)),
            at(3, 5, ValueType::Merge)
        );
        // Sequence 0 with another timestamp: the timestamp still goes to the minimum.
        assert_eq!(
            zt(at(2, 0, ValueType::Value), MAX_SEQUENCE_NUMBER, Some(&low)),
            at(0, 0, ValueType::Value)
        );
        // A key shorter than its timestamp is corruption, not a panic.
        let short = make_internal_key(b"k", 5, ValueType::Value);
        assert!(zero_sequence(short, MAX_SEQUENCE_NUMBER, &ts, Some(&low)).is_err());
    }

    #[test]
    fn operands_merge_onto_nothing_only_where_the_whole_history_is_seen() {
        let e = vec![
            (make_internal_key(b"k", 2, ValueType::Merge), b"2".to_vec()),
            (make_internal_key(b"k", 1, ValueType::Merge), b"1".to_vec()),
        ];
        let k = |s: u64, t: u8, v: &[u8]| (b"k".to_vec(), s, t, v.to_vec());
        assert_eq!(compact(&e, true, true), vec![k(2, V, b"12")]);
        // Not bottommost, or a version with a timestamp at or above full_history_ts_low
        // (older versions may lie below it): a partial merge, still an operand.
        assert_eq!(compact(&e, false, true), vec![k(2, MRG, b"12")]);
        assert_eq!(compact(&e, true, false), vec![k(2, MRG, b"12")]);
    }

    /// RocksDB's grandparent tracking: boundaries crossed (a file's start and its end are
    /// one each), the overlapped bytes growing as files are entered, a first key inside a
    /// file counting that file.
    #[test]
    fn grandparent_cursor_counts_boundaries_and_overlap() {
        let ucmp = crate::key::bytewise_internal_comparator().user_comparator().clone();
        let ik = |k: u32| make_internal_key(format!("{k:03}").as_bytes(), 5, ValueType::Value);
        let gp = |n: u64, lo: u32, hi: u32| {
            std::sync::Arc::new(FileMetaData {
                number: n,
                file_size: 100,
                smallest: ik(lo),
                largest: ik(hi),
                ..Default::default()
            })
        };
        let files = vec![gp(1, 10, 19), gp(2, 20, 29), gp(3, 40, 49)];
        let mut g = GrandparentCursor::new(&files);
        assert_eq!((g.update(&*ucmp, &ik(5)), g.overlapped), (0, 0));
        assert_eq!((g.update(&*ucmp, &ik(12)), g.overlapped), (1, 100));
        assert_eq!((g.update(&*ucmp, &ik(25)), g.overlapped), (2, 200));
        assert_eq!((g.update(&*ucmp, &ik(35)), g.overlapped), (1, 200));
        assert_eq!(g.overlap_at(&*ucmp, &ik(35)), 0, "in a gap");
        assert_eq!((g.update(&*ucmp, &ik(45)), g.overlapped), (1, 300));
        assert_eq!(g.overlap_at(&*ucmp, &ik(45)), 100);
        let mut g = GrandparentCursor::new(&files);
        assert_eq!((g.update(&*ucmp, &ik(15)), g.overlapped), (0, 100), "the first key's file counts");
        assert_eq!(GrandparentCursor::new(&[]).update(&*ucmp, &ik(15)), 0);
    }
}
