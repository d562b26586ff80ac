//! Reads block-based tables (SSTs) written by Shale or by RocksDB (format_version 0..=7).
//!
//! ```text
//! open : footer (last 53 bytes) -> metaindex block -> properties, filter, range-del and
//!        compression-dictionary blocks (and, format_version >= 6, the index block's handle
//!        under "rocksdb.index"); the index block is kept in memory
//! read : index entry (separator -> data block handle) -> data block (via block cache)
//! ```
//! Index and filter blocks ([`MetaCachePolicy`], RocksDB's `cache_index_and_filter_blocks`):
//! held by the open table (the default), or kept in the block cache (role index-block /
//! filter-block, high priority with `cache_index_and_filter_blocks_with_high_priority`) and
//! looked up there at each use, read again after an eviction; or both, pinned: cached
//! (charged to the cache) and held by the table, as RocksDB's pinned handles
//! (`pin_l0_filter_and_index_blocks_in_cache`, the unpartitioned pinning tier).
//! Index keys are internal keys, or user keys when the table's
//! "rocksdb.index.key.is.user.key" property is 1; index values are delta-encoded handles
//! when "rocksdb.index.value.is.delta.encoded" is 1.
//!
//! Prefix filters (RocksDB's `BlockBasedTable::PrefixRangeMayMatch`): a table knows the
//! extractor its filter was built with from "rocksdb.prefix.extractor.name": the column
//! family's own when the names match, else a built-in one rebuilt from the name, else none.
//! `get` checks the whole key when "rocksdb.block.based.table.whole.key.filtering" is 1,
//! else the key's prefix when the table's extractor is the family's. A seek in prefix mode
//! ([`PrefixSeek`]) checks the target's prefix; with the family's extractor changed, or in
//! auto-prefix mode, only when `iterate_upper_bound` proves the seek range stays within
//! one prefix. A seek the filter excludes leaves the table iterator invalid without
//! reading a data block.
//!
//! External files (written by an SstFileWriter and ingested: the
//! "rocksdb.external_sst_file.version" property is 2) store every key with sequence number
//! 0; the number they really have (the global seqno) is the file's largest seqno in the
//! MANIFEST, or the "rocksdb.external_sst_file.global_seqno" property when that is not 0
//! (RocksDB's `GetGlobalSequenceNumber`). Reads see every key, and range tombstone, with it.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::cache::{role, BlockCache, Key, OffsetableCacheKey};
use crate::coding::decode_fixed32;
use crate::error::{Error, ErrorKind, Result};
use crate::fs::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::key::{user_key, InternalKeyComparator};
use crate::slice_transform::{SliceTransform, SliceTransformRef};
use crate::statistics::{Histogram, Statistics, StopWatch, Ticker};

use super::block::{Block, BlockIter, IndexBlockIter, IndexFormat};
use super::filter::{FilterReader, BLOOM_POLICY_NAME};
use super::format::{
    decode_raw_block, read_block_with, read_block_with_dict, read_footer, strip_prefix,
    uses_context_checksum, BlockHandle, Footer,
};
use super::hash_index::{METADATA_BLOCK, PREFIXES_BLOCK};
use super::partitioned::PartitionedIndexIter;
use super::prefetch::Readahead;
use super::properties::{
    names, parse_v7_compression_name, TableProperties, COMPRESSION_DICT_BLOCK, FULL_FILTER_PREFIX,
    INDEX_BLOCK, PARTITIONED_FILTER_PREFIX, PROPERTIES_BLOCK, PROPERTIES_BLOCK_OLD, RANGE_DEL_BLOCK,
};

/// RocksDB's `CacheEntryRole::kFilterMetaBlock`: the top-level index of a partitioned filter.
const ROLE_FILTER_META: u8 = 2;

/// How to open a table.
#[derive(Clone)]
pub struct TableReaderOptions {
    pub icmp: InternalKeyComparator,
    pub block_cache: Option<Arc<BlockCache>>,
    pub verify_checksums: bool,
    /// Named in error messages.
    pub file_name: String,
    /// This file's key base in the (possibly shared) block cache: unique to this file, see
    /// `cache::block_cache`. `OffsetableCacheKey::unique()` for a table opened outside a DB.
    pub cache_key: OffsetableCacheKey,
    /// Where block cache hits and misses, bloom filter results and block reads are counted
    /// (the database's `Options::enable_statistics`), if anywhere.
    pub statistics: Option<Arc<Statistics>>,
    /// RocksDB's `block_protection_bytes_per_key` (0, 1, 2, 4 or 8) when this reader was
    /// opened, as RocksDB's table reader takes it from the family's options at open: the
    /// data, index and metaindex blocks it parses carry that many checksum bytes per entry
    /// (`block.rs`).
    pub block_protection_bytes_per_key: u8,
    /// False for a table of a family with user-defined timestamps whose keys were written
    /// without them (the MANIFEST's `user_defined_timestamps_persisted`, RocksDB's
    /// `TableReaderOptions::user_defined_timestamps_persisted`): the table is read in the
    /// comparator's order without timestamps and every key read carries the minimum one
    /// (`ts_pad.rs`). Ignored without timestamps.
    pub timestamps_persisted: bool,
}

/// The words of a table reader's refusal of a table whose properties name another
/// comparator than the reader's (`ours`).
const COMPARATOR_MISMATCH: &str = " does not match the table's comparator ";

/// A table reader's refusal of a table written with another comparator (InvalidArgument).
pub fn comparator_mismatch(file_name: &str, ours: &str, theirs: &str) -> Error {
    Error::invalid_argument(format!("{file_name}: comparator {ours}{COMPARATOR_MISMATCH}{theirs}"))
}

/// The table's comparator name when `e` is a reader's [`comparator_mismatch`] refusal
/// (ingestion answers it with RocksDB's own words).
pub fn mismatched_table_comparator(e: &Error) -> Option<&str> {
    if e.kind() != crate::ErrorKind::InvalidArgument {
        return None;
    }
    e.as_ref().rsplit_once(COMPARATOR_MISMATCH).map(|(_, theirs)| theirs)
}

impl TableReaderOptions {
    /// A table opened outside a database (tools, tests, ingestion checks): no block cache, checksums
    /// verified, a cache key unique to this reader, no statistics, no per-entry protection, and
    /// timestamps (if the comparator has them) persisted in the keys. Change a field with struct
    /// update syntax: `TableReaderOptions { verify_checksums: false, ..TableReaderOptions::standalone(..) }`.
    pub fn standalone(icmp: InternalKeyComparator, file_name: impl Into<String>) -> Self {
        TableReaderOptions {
            icmp,
            block_cache: None,
            verify_checksums: true,
            file_name: file_name.into(),
            cache_key: OffsetableCacheKey::unique(),
            statistics: None,
            block_protection_bytes_per_key: 0,
            timestamps_persisted: true,
        }
    }
}

/// What one read asks of the data blocks it reads: the table reader's share of RocksDB's
/// `ReadOptions` (`fill_cache`, `verify_checksums`, `read_tier`, `deadline`, `io_timeout`).
/// A plain `bool` converts to the defaults with that `fill_cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockReads {
    /// Blocks read from the file are added to the block cache.
    pub fill_cache: bool,
    /// Block checksums are verified (when the table was opened with verification).
    pub verify_checksums: bool,
    /// RocksDB's `kBlockCacheTier`: a block not in the block cache is not read; the read
    /// fails with Incomplete "no blocking io", as RocksDB's `RetrieveBlock`.
    pub no_io: bool,
    /// RocksDB's `ReadOptions::deadline`, microseconds since the epoch (0: none): a file
    /// read that would start at or after it fails with TimedOut "Deadline exceeded".
    pub deadline_us: u64,
    /// RocksDB's `ReadOptions::io_timeout` in microseconds (0: none): the longest a single
    /// file read may take (with a deadline, at most the time left before it); a read that
    /// does not complete within it fails with TimedOut, as from a file system honouring
    /// `IOOptions::timeout`.
    pub io_timeout_us: u64,
    /// RocksDB's `ReadOptions::readahead_size`: an iterator reads this many bytes ahead
    /// from its first data block read; 0 (the default): implicit auto readahead after
    /// sequential reads (`prefetch.rs`). Point lookups never read ahead.
    pub readahead_size: usize,
    /// RocksDB's `is_for_compaction`: a compaction's input iterator, which reads
    /// `readahead_size` ahead (the family's `compaction_readahead_size`; 0: none) with no
    /// auto readahead, and counts no user-scan prefetch tickers.
    pub for_compaction: bool,
    /// The implicit auto readahead's settings (the family's block-based table options).
    pub auto_readahead: super::prefetch::AutoReadahead,
    /// RocksDB's `ReadOptions::async_io`: an iterator's readahead reads the next window in
    /// the background while the current one is consumed (`prefetch.rs`).
    pub async_io: bool,
}

impl From<bool> for BlockReads {
    fn from(fill_cache: bool) -> BlockReads {
        BlockReads {
            fill_cache,
            verify_checksums: true,
            no_io: false,
            deadline_us: 0,
            io_timeout_us: 0,
            readahead_size: 0,
            for_compaction: false,
            auto_readahead: super::prefetch::AutoReadahead::default(),
            async_io: false,
        }
    }
}

impl BlockReads {
    /// Now, in microseconds since the epoch (the clock RocksDB's deadline is read against).
    fn now_us() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0)
    }

    /// RocksDB's `PrepareIOFromReadOptions` before a file read: TimedOut past the deadline,
    /// else the read's timeout in microseconds (0: none).
    pub fn before_io(&self) -> Result<u64> {
        let mut timeout = 0;
        if self.deadline_us != 0 {
            let now = Self::now_us();
            if now >= self.deadline_us {
                return Err(Error::new(ErrorKind::TimedOut, "Deadline exceeded"));
            }
            timeout = self.deadline_us - now;
        }
        if self.io_timeout_us != 0 && (timeout == 0 || self.io_timeout_us < timeout) {
            timeout = self.io_timeout_us;
        }
        Ok(timeout)
    }

    /// After a file read that took `elapsed`: TimedOut when it outlasted `timeout_us`.
    pub fn after_io(timeout_us: u64, elapsed: std::time::Duration, what: &str) -> Result<()> {
        if timeout_us != 0 && elapsed.as_micros() > u128::from(timeout_us) {
            return Err(Error::new(
                ErrorKind::TimedOut,
                format!("IO timeout: {what} took {} us, more than {timeout_us} us", elapsed.as_micros()),
            ));
        }
        Ok(())
    }

    /// Runs the file read `f` under this read's deadline and timeout.
    pub fn io<T>(&self, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let timeout = self.before_io()?;
        if timeout == 0 {
            return f();
        }
        let start = std::time::Instant::now();
        let r = f()?;
        Self::after_io(timeout, start.elapsed(), what)?;
        Ok(r)
    }
}

/// Where an open table keeps its index and filter blocks (RocksDB's
/// `cache_index_and_filter_blocks`, `..._with_high_priority` and the pinning decision
/// `BlockBasedTable::PrefetchIndexAndFilterBlocks` makes from the pinning tiers).
#[derive(Clone, Copy, Debug, Default)]
pub struct MetaCachePolicy {
    /// In the block cache (if the table has one) instead of held by the table.
    pub cache_index_and_filter_blocks: bool,
    /// Inserted with high priority.
    pub high_priority: bool,
    /// Also held by the table (pinned in the cache) for its lifetime.
    pub pin: bool,
    /// `pin` for the top level of a partitioned index or filter.
    pub pin_top_level: bool,
    /// `pin` for the partitions of a partitioned index or filter.
    pub pin_partitions: bool,
}

/// An index or filter: held by the table, or found in the block cache by its handle.
enum Meta<T> {
    Held(Arc<T>),
    Cached(BlockHandle),
}

/// The partitions of a partitioned index or filter (`partitioned.rs`): held by the table
/// (read at open, by offset), or found in the block cache at each use.
enum Partitions<T> {
    Held(HashMap<u64, Arc<T>>),
    Cached,
}

impl<T> Partitions<T> {
    fn held_bytes(&self, size: impl Fn(&T) -> usize) -> usize {
        match self {
            Partitions::Held(m) => m.values().map(|v| size(v)).sum(),
            Partitions::Cached => 0,
        }
    }
}

/// A table's filter: one full filter, or a top-level filter index and its partitions.
enum TableFilter {
    Full(Meta<FilterReader>),
    Partitioned { top: Meta<Block>, parts: Partitions<FilterReader> },
}

/// A cursor over a table's index, whose entries point at data blocks: one index block, or
/// a partitioned index (`partitioned.rs`). Errors name the file and the block's offset.
// The flat cursor, every unpartitioned table's, stays inline (no allocation per table
// iterator); the rarer partitioned one is boxed.
#[allow(clippy::large_enum_variant)]
pub(super) enum IndexIter {
    Flat(IndexBlockIter),
    Partitioned(Box<PartitionedIndexIter>),
}

impl IndexIter {
    fn valid(&self) -> bool {
        match self {
            IndexIter::Flat(i) => i.valid(),
            IndexIter::Partitioned(i) => i.valid(),
        }
    }
    fn seek_to_first(&mut self, t: &Table) {
        match self {
            IndexIter::Flat(i) => i.seek_to_first(),
            IndexIter::Partitioned(i) => i.seek_to_first(t),
        }
    }
    fn seek_to_last(&mut self, t: &Table) {
        match self {
            IndexIter::Flat(i) => i.seek_to_last(),
            IndexIter::Partitioned(i) => i.seek_to_last(t),
        }
    }
    fn seek(&mut self, t: &Table, target: &[u8]) {
        match self {
            IndexIter::Flat(i) => i.seek(target),
            IndexIter::Partitioned(i) => i.seek(t, target),
        }
    }
    fn next(&mut self, t: &Table) {
        match self {
            IndexIter::Flat(i) => i.next(),
            IndexIter::Partitioned(i) => i.next(t),
        }
    }
    fn prev(&mut self, t: &Table) {
        match self {
            IndexIter::Flat(i) => i.prev(),
            IndexIter::Partitioned(i) => i.prev(t),
        }
    }
    fn key(&self) -> &[u8] {
        match self {
            IndexIter::Flat(i) => i.key(),
            IndexIter::Partitioned(i) => i.key(),
        }
    }
    fn handle(&self) -> BlockHandle {
        match self {
            IndexIter::Flat(i) => i.handle(),
            IndexIter::Partitioned(i) => i.handle(),
        }
    }
    fn status(&self, t: &Table) -> Result<()> {
        match self {
            IndexIter::Flat(i) => {
                i.status().map_err(|e| in_file(e, &t.opts.file_name, t.footer.index_handle))
            }
            IndexIter::Partitioned(i) => i.status(),
        }
    }
}

/// How the seeks of one iterator use table prefix filters (RocksDB's prefix seek), from
/// its ReadOptions and the column family's prefix extractor.
#[derive(Clone)]
pub struct PrefixSeek {
    /// The column family's prefix extractor.
    pub extractor: SliceTransformRef,
    pub upper_bound: Option<Vec<u8>>,
    /// `auto_prefix_mode`: a filter is used only when the upper bound keeps the seek
    /// within one prefix.
    pub auto_prefix_mode: bool,
}

/// An entry a point lookup found: its internal key and value.
type Entry = (Vec<u8>, Vec<u8>);

/// What a table's filter answered for a point lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GetFilter {
    NotChecked,
    WholeKey(bool),
    Prefix(bool),
}

/// RocksDB's `IsSameLengthImmediateSuccessor` of the bytewise comparator: `t` is `s` plus
/// one, as same-length byte strings (other comparators answer false).
fn is_same_length_immediate_successor(s: &[u8], t: &[u8]) -> bool {
    if s.len() != t.len() || s.is_empty() {
        return false;
    }
    let Some(d) = s.iter().zip(t).position(|(a, b)| a != b) else { return false };
    if s[d] == 0xff || s[d] + 1 != t[d] {
        return false;
    }
    s[d + 1..].iter().all(|&b| b == 0xff) && t[d + 1..].iter().all(|&b| b == 0)
}

/// Refuses what a table's properties say it needs and Shale does not read: a user-defined
/// primary index, a compression manager other than RocksDB's built-in one (format_version
/// 7). Data blocks with keys and values stored apart are read (`block.rs`).
fn check_table_features(props: &TableProperties, format_version: u32) -> Result<()> {
    if props.raw_u64(names::UDI_IS_PRIMARY_INDEX).unwrap_or(0) != 0 {
        return Err(Error::not_supported("a user-defined index as the primary index"));
    }
    if format_version >= 7 && !props.compression_name.is_empty() {
        parse_v7_compression_name(&props.compression_name)?;
    }
    Ok(())
}

/// A value on cache lines of its own (128 bytes: a line and the one the adjacent-line
/// prefetcher pairs with it), for a counter written by every reader thread.
#[repr(align(128))]
struct OwnLine<T>(T);

/// An open table.
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    opts: TableReaderOptions,
    footer: Footer,
    props: TableProperties,
    index_block: Meta<Block>,
    index_format: IndexFormat,
    /// The index partitions when the index is partitioned (index type 2).
    index_partitions: Option<Partitions<Block>>,
    filter: Option<TableFilter>,
    filter_handle: Option<BlockHandle>,
    meta_policy: MetaCachePolicy,
    range_tombstones: Vec<(Vec<u8>, Vec<u8>)>,
    /// The timestamp size the keys are read without and padded with (see
    /// `TableReaderOptions::timestamps_persisted`); 0: keys as stored.
    pad_ts: usize,
    /// The `rocksdb.compression_dict` meta block (empty when the table has none).
    compression_dict: Vec<u8>,
    /// Counted at every data block read from the file: on a cache line of its own, so that
    /// readers on other cores keep the table's other fields (read at every Get) cached.
    data_blocks_read: OwnLine<AtomicU64>,
    /// RocksDB's `uncache_aggressiveness` of the family when the file became obsolete
    /// ([`Table::mark_obsolete`]; 0: not obsolete, or leave its blocks cached).
    uncache: std::sync::atomic::AtomicU32,
    /// The global seqno of an external file (0: none, keys as stored).
    global_seqno: u64,
    /// The column family's prefix extractor, if any.
    cf_prefix_extractor: Option<SliceTransformRef>,
    /// The extractor the table's filter was built with (see the module doc), if known.
    table_prefix_extractor: Option<SliceTransformRef>,
    /// RocksDB's `PrefixExtractorChanged`: the family has no extractor, or the table's
    /// property names another one (or none).
    prefix_extractor_changed: bool,
    /// "rocksdb.block.based.table.whole.key.filtering" (true when absent), read once at
    /// open: every point read asks.
    whole_key_filtering: bool,
    /// "rocksdb.block.based.table.prefix.filtering" (true when absent).
    prefix_filtering: bool,
    /// A kHashSearch table's prefixes (`hash_index.rs`), consulted while the family's
    /// extractor is the table's.
    hash_prefixes: Option<super::hash_index::PrefixSet>,
    /// RocksDB's `read_amp_bytes_per_bit` (0: off): each data block read from the file gets
    /// a read-amplification bitmap (`block.rs`) when statistics are on.
    read_amp_bytes_per_bit: u32,
    /// Where `async_io`'s background reads run: the database's pool, set by its table cache
    /// ([`Table::set_read_pool`]); unset, they run on the iterator's thread.
    read_pool: std::sync::OnceLock<Arc<super::read_pool::ReadPool>>,
}

/// The global seqno of an external file (0 when the table is not one or has none), from
/// its properties and the largest seqno the MANIFEST records (MAX_SEQUENCE_NUMBER: not
/// known), as RocksDB's `GetGlobalSequenceNumber`.
fn global_seqno(props: &TableProperties, largest_seqno: u64, name: &str) -> Result<u64> {
    use crate::coding::decode_fixed64;
    let version = props.user_collected.get(names::EXTERNAL_SST_VERSION);
    let seqno = props.user_collected.get(names::EXTERNAL_SST_GLOBAL_SEQNO);
    let Some(version) = version else {
        return match seqno {
            Some(_) => Err(Error::corruption(format!("{name}: a global seqno property without a version"))),
            None => Ok(0),
        };
    };
    if version.len() != 4 {
        return Err(Error::corruption(format!("{name}: external file version property is not 4 bytes")));
    }
    let version = decode_fixed32(version);
    if version < 2 {
        if seqno.is_some() || version != 1 {
            return Err(Error::corruption(format!(
                "{name}: an external sst file with version {version} has a global seqno property"
            )));
        }
        return Ok(0);
    }
    let mut g = match seqno {
        Some(v) if v.len() == 8 => decode_fixed64(v),
        Some(_) => return Err(Error::corruption(format!("{name}: global seqno property is not 8 bytes"))),
        None => 0,
    };
    if largest_seqno < crate::key::MAX_SEQUENCE_NUMBER {
        if g == 0 {
            g = largest_seqno;
        }
        if g != largest_seqno {
            return Err(Error::corruption(format!(
                "{name}: an external sst file with version {version} has global seqno property {g}, \
                 while the largest seqno in the file is {largest_seqno}"
            )));
        }
    }
    if g > crate::key::MAX_SEQUENCE_NUMBER {
        return Err(Error::corruption(format!("{name}: global seqno {g} is too large")));
    }
    Ok(g)
}

/// Reads the properties block. RocksDB writes an ingested file's global seqno into the
/// properties block in place (`write_global_seqno`) without updating the block's checksum,
/// so a mismatch is accepted when the checksum matches with that value zeroed, as RocksDB's
/// `ReadTablePropertiesHelper` accepts it.
fn read_properties_block(
    file: &dyn RandomAccessFile,
    h: BlockHandle,
    checksum: super::format::BlockChecksum,
    name: &str,
) -> Result<Vec<u8>> {
    let e = match read_block_with(file, h, checksum, true, name) {
        Ok(b) => return Ok(b),
        Err(e) if e.kind() == ErrorKind::Corruption => e,
        Err(e) => return Err(e),
    };
    let Ok(size) = usize::try_from(h.size) else { return Err(e) };
    if size > (1 << 26) {
        return Err(e);
    }
    let mut buf = vec![0u8; size + 5];
    super::format::read_exact_at(file, h.offset, &mut buf, name)?;
    if buf[size] != 0 {
        return Err(e);
    }
    let Some(off) = property_value_offset(&buf[..size], names::EXTERNAL_SST_GLOBAL_SEQNO.as_bytes()) else {
        return Err(e);
    };
    if off + 8 > size {
        return Err(e);
    }
    let mut zeroed = buf[..size].to_vec();
    zeroed[off..off + 8].fill(0);
    if checksum.compute(h.offset, &zeroed, buf[size]) != decode_fixed32(&buf[size + 1..]) {
        return Err(e);
    }
    buf.truncate(size);
    Ok(buf)
}

/// Where the value of an external file's global seqno property lies in the file (RocksDB's
/// `TableProperties::external_sst_file_global_seqno_offset`, which ingestion's
/// `write_global_seqno` overwrites in place): None when the table has no such property or
/// its properties block is compressed.
pub fn external_global_seqno_offset(
    file: &dyn RandomAccessFile,
    file_size: u64,
    name: &str,
) -> Result<Option<u64>> {
    let footer = read_footer(file, file_size, name)?;
    let checksum = footer.block_checksum();
    let mh = footer.metaindex_handle;
    let metaindex = Arc::new(
        Block::new(read_block_with(file, mh, checksum, true, name)?).map_err(|e| in_file(e, name, mh))?,
    );
    let mut props = None;
    for (k, v) in metaindex.entries().map_err(|e| in_file(e, name, mh))? {
        if k == PROPERTIES_BLOCK.as_bytes() || (props.is_none() && k == PROPERTIES_BLOCK_OLD.as_bytes()) {
            props = Some(BlockHandle::decode(&v).map_err(|e| in_file(e, name, mh))?);
        }
    }
    let Some(h) = props else { return Ok(None) };
    let Ok(size) = usize::try_from(h.size) else { return Ok(None) };
    let mut buf = vec![0u8; size.saturating_add(super::format::BLOCK_TRAILER_SIZE)];
    super::format::read_exact_at(file, h.offset, &mut buf, name)?;
    if buf.get(size) != Some(&0) {
        return Ok(None);
    }
    let off = property_value_offset(&buf[..size], names::EXTERNAL_SST_GLOBAL_SEQNO.as_bytes());
    Ok(off.filter(|o| o + 8 <= size).map(|o| h.offset + o as u64))
}

/// Where the value of property `name` starts in an uncompressed properties block.
fn property_value_offset(block: &[u8], name: &[u8]) -> Option<usize> {
    use crate::coding::decode_varint64;
    if block.len() < 4 {
        return None;
    }
    let restarts = (decode_fixed32(&block[block.len() - 4..]) & 0x7FFF_FFFF) as usize;
    let end = block.len().checked_sub(4 + restarts.checked_mul(4)?)?;
    let mut p = 0;
    let mut key: Vec<u8> = Vec::new();
    while p < end {
        let mut next = || -> Option<usize> {
            let (v, n) = decode_varint64(block.get(p..end)?)?;
            p += n;
            usize::try_from(v).ok()
        };
        let (shared, non_shared, vlen) = (next()?, next()?, next()?);
        if shared > key.len() {
            return None;
        }
        key.truncate(shared);
        key.extend_from_slice(block.get(p..p.checked_add(non_shared)?)?);
        p += non_shared;
        if key == name {
            return Some(p);
        }
        p = p.checked_add(vlen)?;
    }
    None
}

/// The trailer `ikey` has with its sequence number replaced by `seqno`.
fn global_trailer(ikey: &[u8], seqno: u64) -> u64 {
    (seqno << 8) | (crate::key::trailer(ikey) & 0xff)
}

/// `ikey` with its sequence number replaced by `seqno` (type kept).
fn with_seqno(ikey: &[u8], seqno: u64, out: &mut Vec<u8>) {
    out.clear();
    if ikey.len() < 8 {
        out.extend_from_slice(ikey);
        return;
    }
    let n = ikey.len() - 8;
    out.extend_from_slice(&ikey[..n]);
    let t = crate::key::trailer(ikey) & 0xff;
    out.extend_from_slice(&((seqno << 8) | t).to_le_bytes());
}

impl Table {
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
    ) -> Result<Arc<Table>> {
        Self::open_with_largest_seqno(file, file_size, opts, crate::key::MAX_SEQUENCE_NUMBER)
    }

    /// `open` for a table the MANIFEST names with `largest_seqno`, read with the column
    /// family's prefix extractor (see the module doc).
    pub fn open_for_cf(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
        largest_seqno: u64,
        prefix_extractor: Option<SliceTransformRef>,
    ) -> Result<Arc<Table>> {
        Self::open_for_cf_cached(
            file,
            file_size,
            opts,
            largest_seqno,
            prefix_extractor,
            MetaCachePolicy::default(),
        )
    }

    /// `open_for_cf` keeping the index and filter blocks as `meta` says.
    pub fn open_for_cf_cached(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
        largest_seqno: u64,
        prefix_extractor: Option<SliceTransformRef>,
        meta: MetaCachePolicy,
    ) -> Result<Arc<Table>> {
        let mut t = Self::open_inner(file, file_size, opts, largest_seqno, meta)?;
        let props_name = t.props.prefix_extractor_name.as_str();
        t.prefix_extractor_changed = match &prefix_extractor {
            None => true,
            Some(pe) => props_name.is_empty() || props_name != pe.name(),
        };
        t.table_prefix_extractor = if t.prefix_extractor_changed {
            SliceTransform::from_name(props_name).map(Arc::new)
        } else {
            prefix_extractor.clone()
        };
        t.cf_prefix_extractor = prefix_extractor;
        Ok(Arc::new(t))
    }

    /// `open` for a table the MANIFEST names with `largest_seqno` (an external file's keys
    /// take it as their global seqno).
    pub fn open_with_largest_seqno(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
        largest_seqno: u64,
    ) -> Result<Arc<Table>> {
        Self::open_inner(file, file_size, opts, largest_seqno, MetaCachePolicy::default()).map(Arc::new)
    }

    fn open_inner(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        opts: TableReaderOptions,
        largest_seqno: u64,
        meta_policy: MetaCachePolicy,
    ) -> Result<Table> {
        let mut opts = opts;
        let pad_ts = if opts.timestamps_persisted { 0 } else { opts.icmp.timestamp_size() };
        if pad_ts > 0 {
            let view = crate::comparator::TsStrippedComparator::new(opts.icmp.user_comparator().clone());
            opts.icmp = InternalKeyComparator::new(Arc::new(view));
        }
        let name = opts.file_name.clone();
        let mut footer = read_footer(file.as_ref(), file_size, &name)?;
        let checksum = footer.block_checksum();
        let read_meta = |h: BlockHandle| read_block_with(file.as_ref(), h, checksum, true, &name);
        let protection = opts.block_protection_bytes_per_key;
        let metaindex = Arc::new(
            Block::new(read_meta(footer.metaindex_handle)?)
                .and_then(|b| b.protected(protection))
                .map_err(|e| in_file(e, &name, footer.metaindex_handle))?,
        );
        let mut meta: HashMap<String, BlockHandle> = HashMap::new();
        for (k, v) in metaindex.entries().map_err(|e| in_file(e, &name, footer.metaindex_handle))? {
            let h = BlockHandle::decode(&v).map_err(|e| in_file(e, &name, footer.metaindex_handle))?;
            meta.insert(String::from_utf8_lossy(&k).into_owned(), h);
        }

        if uses_context_checksum(footer.format_version) {
            footer.index_handle = *meta.get(INDEX_BLOCK).ok_or_else(|| {
                Error::corruption(format!(
                    "{name}: format_version {} table without a \"{INDEX_BLOCK}\" metaindex entry",
                    footer.format_version
                ))
            })?;
        }

        let props = match meta.get(PROPERTIES_BLOCK).or_else(|| meta.get(PROPERTIES_BLOCK_OLD)) {
            Some(&h) => TableProperties::decode(read_properties_block(file.as_ref(), h, checksum, &name)?)
                .map_err(|e| in_file(e, &name, h))?,
            None => TableProperties::default(),
        };
        let ours = opts.icmp.user_comparator().name();
        // A table without timestamps written before the family's timestamps were enabled,
        // or before they were disabled (RocksDB allows both with
        // `persist_user_defined_timestamps = false`), names the comparator with or without
        // `.u64ts`.
        let table_cmp = props.comparator_name.as_str();
        let udt_toggled = !opts.timestamps_persisted
            && (ours.strip_suffix(".u64ts") == Some(table_cmp)
                || table_cmp.strip_suffix(".u64ts") == Some(ours));
        if !props.comparator_name.is_empty() && props.comparator_name != ours && !udt_toggled {
            return Err(comparator_mismatch(&name, ours, &props.comparator_name));
        }

        check_table_features(&props, footer.format_version)
            .map_err(|e| Error::new(e.kind(), format!("{}: {name}", strip_prefix(&e))))?;
        let global_seqno = global_seqno(&props, largest_seqno, &name)?;

        let index_type = props
            .user_collected
            .get(names::INDEX_TYPE)
            .filter(|v| v.len() == 4)
            .map(|v| decode_fixed32(v))
            .unwrap_or(0);
        // Binary search (0); hash search (1) keeps a binary-searchable index; a
        // partitioned index (2) has no first keys; binary search with first keys (3).
        let (has_first_key, partitioned_index) = match index_type {
            0 | 1 => (false, false),
            2 => (false, true),
            3 => (true, false),
            t => return Err(Error::corruption(format!("{name}: unknown index type {t}"))),
        };
        let index_format = IndexFormat {
            key_is_user_key: props.index_key_is_user_key != 0,
            value_delta_encoded: props.index_value_is_delta_encoded != 0,
            has_first_key,
            ..Default::default()
        };
        let ih = footer.index_handle;
        let index_data = read_block_with(file.as_ref(), ih, checksum, opts.verify_checksums, &name)?;
        let index_block = Arc::new(
            Block::new(index_data)
                .and_then(|b| b.protected_index(protection, index_format))
                .map_err(|e| in_file(e, &name, ih))?,
        );

        let filter_name = format!("{FULL_FILTER_PREFIX}{BLOOM_POLICY_NAME}");
        let partitioned_filter_name = format!("{PARTITIONED_FILTER_PREFIX}{BLOOM_POLICY_NAME}");
        let filter = match meta.get(&filter_name) {
            Some(&h) => match FilterReader::new(read_meta(h)?) {
                Ok(f) => Some((h, Arc::new(f))),
                Err(e) if e.kind() == ErrorKind::NotSupported => None,
                Err(e) => return Err(in_file(e, &name, h)),
            },
            None => None,
        };
        // A partitioned filter's top-level index (empty when no key was added: no filter).
        let filter_top = match meta.get(&partitioned_filter_name) {
            Some(&h) if filter.is_none() && h.size > 0 => {
                let top = Block::new(read_meta(h)?).and_then(|b| b.protected_index(protection, index_format));
                Some((h, Arc::new(top.map_err(|e| in_file(e, &name, h))?)))
            }
            _ => None,
        };
        let filter_handle = filter.as_ref().map(|(h, _)| *h).or(filter_top.as_ref().map(|(h, _)| *h));
        // Index and filter: held, or put in the block cache (and held too when pinned).
        let (index_block, filter, filter_top) =
            match opts.block_cache.as_ref().filter(|_| meta_policy.cache_index_and_filter_blocks) {
                None => (
                    Meta::Held(index_block),
                    filter.map(|(_, f)| Meta::Held(f)),
                    filter_top.map(|(_, f)| Meta::Held(f)),
                ),
                Some(cache) => {
                    let stats = opts.statistics.as_deref();
                    let hp = meta_policy.high_priority;
                    let key = |h: BlockHandle| Key::Block(opts.cache_key.with_offset(h.offset));
                    cache.insert_entry(
                        key(ih),
                        index_block.clone(),
                        index_block.size() + index_block.extra_memory(),
                        role::INDEX_BLOCK,
                        hp,
                    )?;
                    count_meta_add(stats, true, index_block.size());
                    if let Some((h, f)) = &filter {
                        cache.insert_entry(key(*h), f.clone(), f.size(), role::FILTER_BLOCK, hp)?;
                        count_meta_add(stats, false, f.size());
                    }
                    if let Some((h, f)) = &filter_top {
                        cache.insert_entry(
                            key(*h),
                            f.clone(),
                            f.size() + f.extra_memory(),
                            ROLE_FILTER_META,
                            hp,
                        )?;
                        count_meta_add(stats, false, f.size());
                    }
                    // RocksDB's pin_index / pin_filter: the top level of a partitioned
                    // index or filter by the top-level tier, else the unpartitioned one.
                    let pin_index =
                        if partitioned_index { meta_policy.pin_top_level } else { meta_policy.pin };
                    let pin_top = meta_policy.pin_top_level;
                    (
                        if pin_index { Meta::Held(index_block) } else { Meta::Cached(ih) },
                        filter.map(|(h, f)| if meta_policy.pin { Meta::Held(f) } else { Meta::Cached(h) }),
                        filter_top.map(|(h, f)| if pin_top { Meta::Held(f) } else { Meta::Cached(h) }),
                    )
                }
            };
        let filter = match (filter, filter_top) {
            (Some(f), _) => Some(TableFilter::Full(f)),
            (None, Some(top)) => Some(TableFilter::Partitioned { top, parts: Partitions::Cached }),
            (None, None) => None,
        };

        let mut range_tombstones = Vec::new();
        if let Some(&h) = meta.get(RANGE_DEL_BLOCK) {
            let b = Arc::new(Block::new(read_meta(h)?).map_err(|e| in_file(e, &name, h))?);
            range_tombstones = b.entries().map_err(|e| in_file(e, &name, h))?;
            if range_tombstones.iter().any(|(k, _)| k.len() < 8) {
                return Err(in_file(Error::corruption("range tombstone key too short"), &name, h));
            }
            if global_seqno != 0 {
                let mut buf = Vec::new();
                for (k, _) in range_tombstones.iter_mut() {
                    with_seqno(k, global_seqno, &mut buf);
                    std::mem::swap(k, &mut buf);
                }
            }
            if pad_ts > 0 {
                for (k, e) in range_tombstones.iter_mut() {
                    *k = crate::key::pad_ikey_ts(k, pad_ts, 0);
                    *e = super::ts_pad::user_key_with_min_ts(e, pad_ts);
                }
            }
        }

        let compression_dict = match meta.get(COMPRESSION_DICT_BLOCK) {
            Some(&h) => read_meta(h)?,
            None => Vec::new(),
        };

        // kHashSearch: the prefixes of the table's keys (a table without the two blocks,
        // or an old one, is searched by its binary index alone, as RocksDB's).
        let hash_prefixes = match (index_type, meta.get(PREFIXES_BLOCK), meta.get(METADATA_BLOCK)) {
            (1, Some(&ph), Some(&mh)) => {
                let prefixes = read_meta(ph)?;
                let metadata = read_meta(mh)?;
                let runs =
                    super::hash_index::decode(&prefixes, &metadata).map_err(|e| in_file(e, &name, mh))?;
                Some(super::hash_index::PrefixSet::new(&runs))
            }
            _ => None,
        };
        let prefix_filtering =
            props.user_collected.get(names::PREFIX_FILTERING).map(|v| v.as_slice() != b"0").unwrap_or(true);
        let whole_key_filtering = props
            .user_collected
            .get(names::WHOLE_KEY_FILTERING)
            .map(|v| v.as_slice() != b"0")
            .unwrap_or(true);
        let table_prefix_extractor = SliceTransform::from_name(&props.prefix_extractor_name).map(Arc::new);
        let mut table = Table {
            file,
            opts,
            footer,
            props,
            index_block,
            index_format,
            index_partitions: partitioned_index.then_some(Partitions::Cached),
            filter,
            filter_handle,
            meta_policy,
            range_tombstones,
            pad_ts,
            compression_dict,
            data_blocks_read: OwnLine(AtomicU64::new(0)),
            uncache: std::sync::atomic::AtomicU32::new(0),
            global_seqno,
            cf_prefix_extractor: None,
            table_prefix_extractor,
            prefix_extractor_changed: true,
            whole_key_filtering,
            prefix_filtering,
            hash_prefixes,
            read_amp_bytes_per_bit: 0,
            read_pool: std::sync::OnceLock::new(),
        };
        table.hold_partitions()?;
        Ok(table)
    }

    /// Runs this table's `async_io` background reads on `pool` (the database's, once).
    pub fn set_read_pool(&self, pool: Arc<super::read_pool::ReadPool>) {
        let _ = self.read_pool.set(pool);
    }

    /// Whether index and filter blocks go to the block cache.
    fn meta_in_cache(&self) -> bool {
        self.meta_policy.cache_index_and_filter_blocks && self.opts.block_cache.is_some()
    }

    /// Reads the partitions of a partitioned index and filter at open when the table holds
    /// them: always, unless index and filter blocks go to the block cache unpinned (then
    /// each use finds them there, RocksDB's unpinned partitions). Pinned partitions are
    /// put in the block cache too, charged to it, as RocksDB's `CacheDependencies`.
    fn hold_partitions(&mut self) -> Result<()> {
        if self.meta_in_cache() && !self.meta_policy.pin_partitions {
            return Ok(());
        }
        if self.index_partitions.is_some() {
            let top = self.index_block()?;
            let mut held = HashMap::new();
            for h in self.partition_handles(&top, self.footer.index_handle)? {
                held.insert(h.offset, self.read_meta_block(h, role::INDEX_BLOCK, |d| self.parse_index(d))?);
            }
            self.index_partitions = Some(Partitions::Held(held));
        }
        let top = match &self.filter {
            Some(TableFilter::Partitioned { top: Meta::Held(b), .. }) => b.clone(),
            Some(TableFilter::Partitioned { top: Meta::Cached(h), .. }) => {
                self.cached_meta(*h, ROLE_FILTER_META, |d| self.parse_index(d))?
            }
            _ => return Ok(()),
        };
        let Some(top_handle) = self.filter_handle else { return Ok(()) };
        let mut held = HashMap::new();
        for h in self.partition_handles(&top, top_handle)? {
            held.insert(h.offset, self.read_meta_block(h, role::FILTER_BLOCK, FilterReader::new)?);
        }
        if let Some(TableFilter::Partitioned { parts, .. }) = &mut self.filter {
            *parts = Partitions::Held(held);
        }
        Ok(())
    }

    /// The handles a top-level index or filter index block names, in order.
    fn partition_handles(&self, top: &Arc<Block>, top_handle: BlockHandle) -> Result<Vec<BlockHandle>> {
        let mut it = top.index_iter(&self.opts.icmp, self.index_format);
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            out.push(it.handle());
            it.next();
        }
        it.status().map_err(|e| in_file(e, &self.opts.file_name, top_handle))?;
        Ok(out)
    }

    /// An index or filter block: from the block cache when such blocks go there, else read
    /// from the file.
    fn read_meta_block<T: Send + Sync + 'static>(
        &self,
        h: BlockHandle,
        role: u8,
        parse: impl FnOnce(Vec<u8>) -> Result<T>,
    ) -> Result<Arc<T>> {
        if self.meta_in_cache() {
            return self.cached_meta(h, role, parse);
        }
        let name = &self.opts.file_name;
        let data = read_block_with(
            self.file.as_ref(),
            h,
            self.footer.block_checksum(),
            self.opts.verify_checksums,
            name,
        )?;
        Ok(Arc::new(parse(data).map_err(|e| in_file(e, name, h))?))
    }

    /// An index block (flat index, index partition, top level of a partitioned index or
    /// filter) parsed, with this reader's per-entry protection.
    fn parse_index(&self, data: Vec<u8>) -> Result<Block> {
        Block::new(data)?.protected_index(self.opts.block_protection_bytes_per_key, self.index_format)
    }

    /// The index partition at `h` (held, else from the block cache or the file).
    pub(super) fn index_partition(&self, h: BlockHandle) -> Result<Arc<Block>> {
        if let Some(Partitions::Held(m)) = &self.index_partitions {
            if let Some(b) = m.get(&h.offset) {
                return Ok(b.clone());
            }
        }
        self.read_meta_block(h, role::INDEX_BLOCK, |d| self.parse_index(d))
    }

    /// The file name errors carry.
    pub(super) fn file_name(&self) -> &str {
        &self.opts.file_name
    }

    /// Bytes this open table holds in memory besides cached data blocks: its index block,
    /// filter, compression dictionary and range tombstones (RocksDB's
    /// `ApproximateMemoryUsage`, summed by `rocksdb.estimate-table-readers-mem`).
    /// Index and filter blocks kept in the block cache are charged there, not here.
    pub fn approximate_memory_usage(&self) -> usize {
        let cached = self.meta_policy.cache_index_and_filter_blocks && self.opts.block_cache.is_some();
        let held = |size: usize| if cached { 0 } else { size };
        let block_bytes = |b: &Block| b.size() + b.extra_memory();
        let index = match &self.index_block {
            Meta::Held(b) => held(block_bytes(b)),
            Meta::Cached(_) => 0,
        } + self.index_partitions.as_ref().map_or(0, |p| held(p.held_bytes(block_bytes)));
        let filter = match &self.filter {
            Some(TableFilter::Full(Meta::Held(f))) => held(f.size()),
            Some(TableFilter::Partitioned { top, parts }) => {
                let top = match top {
                    Meta::Held(b) => b.size(),
                    Meta::Cached(_) => 0,
                };
                held(top + parts.held_bytes(FilterReader::size))
            }
            _ => 0,
        };
        index
            + filter
            + self.hash_prefixes.as_ref().map_or(0, |h| h.memory())
            + self.compression_dict.len()
            + self.range_tombstones.iter().map(|(a, b)| a.len() + b.len()).sum::<usize>()
    }

    /// RocksDB's `index_block_search_type` for this reader's index block (or index
    /// partitions): see [`IndexBlockSearch`](super::block::IndexBlockSearch).
    pub fn set_index_block_search(&mut self, search: super::block::IndexBlockSearch) {
        self.index_format.search = search;
    }

    /// RocksDB's `read_amp_bytes_per_bit` for the data blocks this reader reads from its
    /// file from now on (0: none): see [`ReadAmpBitmap`](super::block::ReadAmpBitmap).
    pub fn set_read_amp_bytes_per_bit(&mut self, bytes_per_bit: u32) {
        self.read_amp_bytes_per_bit = bytes_per_bit;
    }

    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// Range tombstones as (start internal key, end user key), sorted by start key.
    pub fn range_tombstones(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.range_tombstones
    }

    /// Data blocks read from the file (cache misses) since open.
    pub fn data_blocks_read(&self) -> u64 {
        self.data_blocks_read.0.load(AtomicOrdering::Relaxed)
    }

    /// False only when the filter proves `user_key` is absent.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        let ikey = crate::key::make_internal_key(
            user_key,
            crate::key::MAX_SEQUENCE_NUMBER,
            crate::key::VALUE_TYPE_FOR_SEEK,
        );
        !matches!(self.get_filter(&ikey, user_key), Ok(GetFilter::WholeKey(false) | GetFilter::Prefix(false)))
    }

    /// The index block: held, or from the block cache (read and cached again on a miss).
    fn index_block(&self) -> Result<Arc<Block>> {
        match &self.index_block {
            Meta::Held(b) => Ok(b.clone()),
            Meta::Cached(h) => self.cached_meta(*h, role::INDEX_BLOCK, |d| self.parse_index(d)),
        }
    }

    /// The filter for internal key `ikey`, if the table has one (held, or from the block
    /// cache): the full filter, or the partition the top-level filter index names for
    /// `ikey` (the last one when `ikey` is past them all, RocksDB's
    /// `GetFilterPartitionHandle`).
    fn filter_for(&self, ikey: &[u8]) -> Result<Option<Arc<FilterReader>>> {
        let (top, parts) = match &self.filter {
            None => return Ok(None),
            Some(TableFilter::Full(Meta::Held(f))) => return Ok(Some(f.clone())),
            Some(TableFilter::Full(Meta::Cached(h))) => {
                return self.cached_meta(*h, role::FILTER_BLOCK, FilterReader::new).map(Some)
            }
            Some(TableFilter::Partitioned { top, parts }) => (top, parts),
        };
        let top = match top {
            Meta::Held(b) => b.clone(),
            Meta::Cached(h) => self.cached_meta(*h, ROLE_FILTER_META, |d| self.parse_index(d))?,
        };
        let mut it = top.index_iter(&self.opts.icmp, self.index_format.binary());
        it.seek(ikey);
        if !it.valid() {
            it.seek_to_last();
        }
        if !it.valid() {
            let top_handle = self.filter_handle.unwrap_or_default();
            it.status().map_err(|e| in_file(e, &self.opts.file_name, top_handle))?;
            return Ok(None); // an empty filter index: every key may match
        }
        let h = it.handle();
        if h.size == 0 {
            return Ok(None);
        }
        if let Partitions::Held(m) = parts {
            if let Some(f) = m.get(&h.offset) {
                return Ok(Some(f.clone()));
            }
        }
        self.read_meta_block(h, role::FILTER_BLOCK, FilterReader::new).map(Some)
    }

    /// An index, filter or filter-index block (by cache `role`) kept in the block cache,
    /// counted as RocksDB's `RetrieveBlock` counts them.
    fn cached_meta<T: Send + Sync + 'static>(
        &self,
        h: BlockHandle,
        role: u8,
        parse: impl FnOnce(Vec<u8>) -> Result<T>,
    ) -> Result<Arc<T>> {
        let index = role == role::INDEX_BLOCK;
        let stats = self.opts.statistics.as_deref();
        let name = &self.opts.file_name;
        let Some(cache) = &self.opts.block_cache else {
            return Err(Error::corruption(format!("{name}: a cached index or filter without a block cache")));
        };
        let key = Key::Block(self.opts.cache_key.with_offset(h.offset));
        if let Some(v) = cache.lookup(&key).and_then(|v| v.downcast::<T>().ok()) {
            if let Some(s) = stats {
                s.record_tick(Ticker::BlockCacheHit, 1);
                s.record_tick(
                    if index { Ticker::BlockCacheIndexHit } else { Ticker::BlockCacheFilterHit },
                    1,
                );
            }
            return Ok(v);
        }
        if let Some(s) = stats {
            s.record_tick(Ticker::BlockCacheMiss, 1);
            s.record_tick(if index { Ticker::BlockCacheIndexMiss } else { Ticker::BlockCacheFilterMiss }, 1);
        }
        let data = read_block_with(
            self.file.as_ref(),
            h,
            self.footer.block_checksum(),
            self.opts.verify_checksums,
            name,
        )?;
        let size = data.len();
        let v = Arc::new(parse(data).map_err(|e| in_file(e, name, h))?);
        // A block's per-entry checksums are charged with it (RocksDB's
        // `Block::ApproximateMemoryUsage`).
        let extra = (&*v as &dyn std::any::Any).downcast_ref::<Block>().map_or(0, Block::extra_memory);
        match cache.fill_entry(key, v.clone(), size + extra, role, self.meta_policy.high_priority) {
            Ok(true) => count_meta_add(stats, index, size),
            // The insert gave up on a busy lock: it did not take place, which RocksDB's
            // `PutDataBlockToCache` counts as an add failure; the read goes on.
            Ok(false) => crate::statistics::record_tick(stats, Ticker::BlockCacheAddFailures, 1),
            Err(e) => {
                crate::statistics::record_tick(stats, Ticker::BlockCacheAddFailures, 1);
                return Err(e);
            }
        }
        Ok(v)
    }

    /// RocksDB's `FullFilterKeyMayMatch`: the whole key when the filter holds whole keys,
    /// else its prefix when the table's extractor is the family's and the key has one.
    /// `ikey` is the lookup's internal key (it picks a filter partition), `user_key` its
    /// user key without timestamp.
    fn get_filter(&self, ikey: &[u8], user_key: &[u8]) -> Result<GetFilter> {
        Ok(self.get_filter_with(self.filter_for(ikey)?.as_deref(), user_key))
    }

    fn get_filter_with(&self, f: Option<&FilterReader>, user_key: &[u8]) -> GetFilter {
        let Some(f) = f else { return GetFilter::NotChecked };
        if self.whole_key_filtering {
            return GetFilter::WholeKey(f.may_match(user_key));
        }
        if self.prefix_extractor_changed {
            return GetFilter::NotChecked;
        }
        match self.cf_prefix_extractor.as_deref().and_then(|t| t.transform(user_key)) {
            Some(prefix) => GetFilter::Prefix(f.may_match(prefix)),
            None => GetFilter::NotChecked,
        }
    }

    /// RocksDB's `PrefixRangeMayMatch` for a seek to `target` (a user key): None when the
    /// filter is not consulted, else whether the target's prefix may be in the table.
    /// `backward` (seek_for_prev) is checked only when no upper-bound proof is needed.
    pub fn prefix_may_match(&self, target: &[u8], seek: &PrefixSeek, backward: bool) -> Option<bool> {
        let ikey = crate::key::make_internal_key(
            target,
            crate::key::MAX_SEQUENCE_NUMBER,
            crate::key::VALUE_TYPE_FOR_SEEK,
        );
        self.prefix_may_match_at(&ikey, seek, backward)
    }

    /// `prefix_may_match` for a seek to internal key `target_ikey` (which picks the filter
    /// partition of a partitioned filter).
    fn prefix_may_match_at(&self, target_ikey: &[u8], seek: &PrefixSeek, backward: bool) -> Option<bool> {
        let target = user_key(target_ikey);
        let need_upper_bound_check =
            seek.auto_prefix_mode || self.prefix_extractor_changed_for(&seek.extractor);
        // A hash index answers first, both directions, when no upper-bound proof is needed
        // (RocksDB disables its prefix index then).
        if !need_upper_bound_check && self.hash_index_excludes(target, &seek.extractor) {
            return Some(false);
        }
        self.filter.as_ref()?;
        if need_upper_bound_check && backward {
            return None;
        }
        let extractor = match &self.table_prefix_extractor {
            Some(t) => t,
            None if need_upper_bound_check => return None,
            None => &seek.extractor,
        };
        // The filter holds prefixes of user keys without their timestamps (RocksDB's
        // `ExtractUserKeyAndStripTimestamp` in `PrefixRangeMayMatch`); the hash index above
        // keeps them, as RocksDB's does.
        let prefix = extractor.transform(self.opts.icmp.strip_ts(target))?;
        if need_upper_bound_check && !self.filter_compatible(seek.upper_bound.as_deref(), prefix) {
            return None;
        }
        // A filter that cannot be loaded (read error, cache full) is not consulted.
        let f = self.filter_for(target_ikey).ok()??;
        Some(f.may_match(prefix))
    }

    /// RocksDB's `PrefixExtractorChanged` against the extractor a read is made with (the
    /// family's in force, which `set_options` may have changed since this reader was
    /// opened; helper cfblob, issue 33): the table's property names another one, or none.
    #[inline]
    fn prefix_extractor_changed_for(&self, current: &SliceTransformRef) -> bool {
        match &self.cf_prefix_extractor {
            Some(cf) if Arc::ptr_eq(cf, current) => self.prefix_extractor_changed,
            _ => {
                let name = self.props.prefix_extractor_name.as_str();
                name.is_empty() || name != current.name()
            }
        }
    }

    /// True when the table has a hash index and no key with `user_key`'s prefix (of
    /// `extractor`, the table's own; the user key with its timestamp, as RocksDB's).
    fn hash_index_excludes(&self, user_key: &[u8], extractor: &SliceTransform) -> bool {
        // Tables without a hash index (nearly all) pay one branch, not a transform.
        let Some(set) = &self.hash_prefixes else { return false };
        extractor.transform(user_key).is_some_and(|prefix| !set.may_contain(prefix))
    }

    /// RocksDB's `IsFilterCompatible`: every key of `[target, upper)` has the prefix
    /// `prefix` of the table's extractor.
    fn filter_compatible(&self, upper: Option<&[u8]>, prefix: &[u8]) -> bool {
        let Some(upper) = upper else { return false };
        let Some(t) = self.table_prefix_extractor.as_deref().filter(|_| self.prefix_filtering) else {
            return false;
        };
        // The upper bound, as the prefix, is without a timestamp (RocksDB compares them with
        // `CompareWithoutTimestamp(.., false, .., false)`).
        let Some(upper_prefix) = t.transform(upper) else { return false };
        let same = if self.opts.icmp.timestamp_size() == 0 {
            self.opts.icmp.compare_user(prefix, upper_prefix)
        } else {
            self.opts.icmp.user_comparator().compare_without_timestamp(prefix, false, upper_prefix, false)
        };
        if same == Ordering::Equal {
            return true;
        }
        let bytewise = self.opts.icmp.user_comparator().name() == "leveldb.BytewiseComparator";
        bytewise && t.full_length() == Some(upper.len()) && is_same_length_immediate_successor(prefix, upper)
    }

    fn index_iter(&self) -> Result<IndexIter> {
        let top = self.index_block()?;
        Ok(if self.index_partitions.is_some() {
            IndexIter::Partitioned(Box::new(PartitionedIndexIter::new(
                top,
                self.footer.index_handle,
                self.opts.icmp.clone(),
                self.index_format,
            )))
        } else {
            IndexIter::Flat(top.index_iter(&self.opts.icmp, self.index_format))
        })
    }

    /// Reads (or finds in the cache) the data block at `handle`. Counts, as RocksDB's
    /// `BlockBasedTable::RetrieveBlock` for a data block: a cache hit or miss (data and
    /// total), the bytes read from the cache, and a block added to it.
    fn data_block(&self, handle: BlockHandle, reads: impl Into<BlockReads>) -> Result<Arc<Block>> {
        self.data_block_with(handle, &reads.into(), None)
    }

    /// `data_block` for an iterator, whose readahead (`prefetch.rs`) sees each block it
    /// moves to and serves the blocks it holds.
    fn data_block_with(
        &self,
        handle: BlockHandle,
        reads: &BlockReads,
        mut readahead: Option<&mut Readahead>,
    ) -> Result<Arc<Block>> {
        let fill_cache = reads.fill_cache;
        let with_trailer = handle.size.saturating_add(crate::table::format::BLOCK_TRAILER_SIZE as u64);
        if let Some(ra) = readahead.as_deref_mut() {
            ra.before_block(handle.offset, with_trailer, reads.no_io);
        }
        let stats = self.opts.statistics.as_deref();
        if let Some(cache) = &self.opts.block_cache {
            let key = self.opts.cache_key.with_offset(handle.offset);
            // A read that may not do I/O must find every cached block: it waits for the
            // cache's lock where another read would rather miss.
            let cached = if reads.no_io { cache.get_wait(&key) } else { cache.get(&key) };
            if let Some(b) = cached {
                crate::perf::count(crate::perf::Field::BlockCacheHitCount, 1);
                crate::perf::count(crate::perf::Field::BlockCacheReadByte, b.size() as u64);
                if let Some(s) = stats {
                    s.record_ticks(&[
                        (Ticker::BlockCacheHit, 1),
                        (Ticker::BlockCacheDataHit, 1),
                        (Ticker::BlockCacheBytesRead, b.size() as u64),
                    ]);
                }
                if let Some(ra) = readahead {
                    ra.on_cache_hit(handle.offset, with_trailer);
                }
                return Ok(b);
            }
            if let Some(s) = stats {
                s.record_ticks(&[(Ticker::BlockCacheMiss, 1), (Ticker::BlockCacheDataMiss, 1)]);
            }
        }
        let name = &self.opts.file_name;
        if reads.no_io {
            return Err(Error::new(ErrorKind::Incomplete, "no blocking io"));
        }
        if let Some(ra) = readahead.as_deref_mut() {
            if let Some(upper) = ra.needs_bound() {
                ra.set_bound(self.readahead_bound(&upper));
            }
        }
        let from_buffer = match (readahead, usize::try_from(with_trailer)) {
            (Some(ra), Ok(len)) => match ra.try_read(&self.file, handle.offset, len, reads, stats, name)? {
                Some(raw) => Some(
                    decode_raw_block(
                        handle,
                        (self.opts.verify_checksums
                            && reads.verify_checksums
                            && self.footer.block_checksum().kind != super::format::ChecksumType::None)
                            .then_some(self.footer.block_checksum()),
                        name,
                        &self.compression_dict,
                        raw,
                        false,
                    )?
                    .unwrap_or_default(),
                ),
                None => None,
            },
            _ => None,
        };
        // The perf context's data-block bytes (format.rs counts every block read), for
        // blocks read from the file only, as RocksDB's `BlockFetcher::ReadBlock`.
        if from_buffer.is_none() {
            crate::perf::count(crate::perf::Field::DataBlockReadByte, with_trailer);
        }
        let data = if let Some(d) = from_buffer {
            d
        } else {
            let _t = StopWatch::new(stats, Histogram::SstReadMicros);
            reads.io(name, || {
                read_block_with_dict(
                    self.file.as_ref(),
                    handle,
                    self.footer.block_checksum(),
                    self.opts.verify_checksums && reads.verify_checksums,
                    name,
                    &self.compression_dict,
                )
            })?
        };
        self.data_blocks_read.0.fetch_add(1, AtomicOrdering::Relaxed);
        let block = Arc::new(
            Block::new(data)
                .and_then(|b| b.protected(self.opts.block_protection_bytes_per_key))
                .map_err(|e| in_file(e, name, handle))?
                .with_read_amp(self.read_amp_bytes_per_bit, self.opts.statistics.as_ref()),
        );
        if fill_cache {
            if let Some(cache) = &self.opts.block_cache {
                let added = match cache.insert(self.opts.cache_key.with_offset(handle.offset), block.clone())
                {
                    Ok(added) => added,
                    Err(e) => {
                        // RocksDB's strict_capacity_limit: the read fails with MemoryLimit.
                        crate::statistics::record_tick(stats, Ticker::BlockCacheAddFailures, 1);
                        return Err(e);
                    }
                };
                if !added {
                    // The insert gave up on a busy lock and did not take place: an add
                    // failure, as RocksDB's `PutDataBlockToCache` counts a non-OK `Insert`.
                    crate::statistics::record_tick(stats, Ticker::BlockCacheAddFailures, 1);
                } else if let Some(s) = stats {
                    let n = block.size() as u64;
                    s.record_ticks(&[
                        (Ticker::BlockCacheAdd, 1),
                        (Ticker::BlockCacheDataAdd, 1),
                        (Ticker::BlockCacheDataBytesInsert, n),
                        (Ticker::BlockCacheBytesWrite, n),
                    ]);
                }
            }
        }
        Ok(block)
    }

    /// The first entry at or after `lookup_ikey` if it has the same user key.
    pub fn get(
        &self,
        lookup_ikey: &[u8],
        reads: impl Into<BlockReads>,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.pad_ts == 0 {
            return self.get_stored(lookup_ikey, reads);
        }
        // Keys stored without timestamps: looked up without, found with the minimum one.
        let target = super::ts_pad::target_without_ts(lookup_ikey, self.pad_ts, true);
        Ok(self.get_stored(&target, reads)?.map(|(k, v)| (crate::key::pad_ikey_ts(&k, self.pad_ts, 0), v)))
    }

    /// `get` of a key as the table stores it.
    fn get_stored(
        &self,
        lookup_ikey: &[u8],
        reads: impl Into<BlockReads>,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let reads: BlockReads = reads.into();
        let uk = user_key(lookup_ikey);
        let stats = self.opts.statistics.as_deref();
        // Filters hold keys without their timestamps; a lookup matches any version of its key.
        // A full filter the table holds is borrowed: a reference count taken and dropped at
        // every Get is a cache line every reader thread of the table writes.
        let check = match &self.filter {
            Some(TableFilter::Full(Meta::Held(f))) => {
                self.get_filter_with(Some(f), self.opts.icmp.strip_ts(uk))
            }
            _ => self.get_filter(lookup_ikey, self.opts.icmp.strip_ts(uk))?,
        };
        match check {
            GetFilter::WholeKey(false) => {
                crate::perf::count(crate::perf::Field::BloomSstMissCount, 1);
                // RocksDB's BLOOM_FILTER_USEFUL: the filter spared a data block read.
                crate::statistics::record_tick(stats, Ticker::BloomFilterUseful, 1);
                return Ok(None);
            }
            GetFilter::WholeKey(true) => {
                crate::perf::count(crate::perf::Field::BloomSstHitCount, 1);
                crate::statistics::record_tick(stats, Ticker::BloomFilterFullPositive, 1)
            }
            GetFilter::Prefix(may) => {
                crate::statistics::record_tick(stats, Ticker::BloomFilterPrefixChecked, 1);
                if !may {
                    crate::statistics::record_tick(stats, Ticker::BloomFilterPrefixUseful, 1);
                    return Ok(None);
                }
            }
            GetFilter::NotChecked => {}
        }
        // A hash index (with the family's extractor the table's) knows the prefix is absent.
        if let Some(t) = self.cf_prefix_extractor.as_deref().filter(|_| !self.prefix_extractor_changed) {
            if self.hash_index_excludes(uk, t) {
                return Ok(None);
            }
        }
        // An unpartitioned index is searched where it lies (held by the table, or the
        // block from the cache), without a cursor that holds a reference to it.
        if self.index_partitions.is_none() {
            let cached;
            let top: &Block = match &self.index_block {
                Meta::Held(b) => b,
                Meta::Cached(h) => {
                    cached = self.cached_meta(*h, role::INDEX_BLOCK, |d| self.parse_index(d))?;
                    &cached
                }
            };
            let mut index = top.index_iter_ref(&self.opts.icmp, self.index_format);
            index.seek(lookup_ikey);
            while index.valid() {
                if let Some(found) = self.get_in_block(index.handle(), lookup_ikey, &reads, check)? {
                    return Ok(found);
                }
                index.next();
            }
            return index
                .status()
                .map_err(|e| in_file(e, &self.opts.file_name, self.footer.index_handle))
                .map(|()| None);
        }
        let mut index = self.index_iter()?;
        index.seek(self, lookup_ikey);
        while index.valid() {
            if let Some(found) = self.get_in_block(index.handle(), lookup_ikey, &reads, check)? {
                return Ok(found);
            }
            index.next(self);
        }
        index.status(self)?;
        Ok(None)
    }

    /// `get` in the data block at `handle`: `Some(answer)` when the lookup ends there,
    /// None when the key may be in the next block.
    fn get_in_block(
        &self,
        handle: BlockHandle,
        lookup_ikey: &[u8],
        reads: &BlockReads,
        check: GetFilter,
    ) -> Result<Option<Option<Entry>>> {
        let stats = self.opts.statistics.as_deref();
        let uk = user_key(lookup_ikey);
        let block = self.data_block_with(handle, reads, None)?;
        let mut it = block.iter_ref(&self.opts.icmp);
        if !it.seek_for_get(lookup_ikey) {
            // The block's hash index: the key is neither here nor in a later block.
            it.status().map_err(|e| in_file(e, &self.opts.file_name, handle))?;
            return Ok(Some(None));
        }
        if !it.valid() {
            it.status().map_err(|e| in_file(e, &self.opts.file_name, handle))?;
            return Ok(None);
        }
        if self.opts.icmp.compare_user_without_ts(user_key(it.key()), uk) != Ordering::Equal {
            return Ok(Some(None));
        }
        match check {
            GetFilter::WholeKey(_) => {
                crate::statistics::record_tick(stats, Ticker::BloomFilterFullTruePositive, 1)
            }
            GetFilter::Prefix(_) => {
                crate::statistics::record_tick(stats, Ticker::BloomFilterPrefixTruePositive, 1)
            }
            GetFilter::NotChecked => {}
        }
        let mut key = it.key().to_vec();
        if self.global_seqno != 0 {
            // With its global seqno the entry may sort before the lookup key
            // (newer than the snapshot): then this file has nothing visible.
            if global_trailer(&key, self.global_seqno) > crate::key::trailer(lookup_ikey) {
                return Ok(Some(None));
            }
            let mut buf = Vec::new();
            with_seqno(&key, self.global_seqno, &mut buf);
            key = buf;
        }
        Ok(Some(Some((key, it.value().to_vec()))))
    }

    /// RocksDB's `BlockBasedTable::ApproximateKeyAnchors`: up to about 128 user keys that
    /// cut the table into ranges of about equal size, each with the bytes of data blocks
    /// since the previous anchor (every `num_data_blocks / 128`-th index entry; the last
    /// partial range ends at the key before the last index entry, as RocksDB's). The index
    /// separators are user keys that need not exist in the table.
    pub fn key_anchors(&self) -> Result<Vec<(Vec<u8>, u64)>> {
        let mut index = self.index_iter()?;
        let per_anchor = (self.props.num_data_blocks / 128).max(1);
        let key_is_user_key = self.index_format.key_is_user_key;
        let uk = |k: &[u8]| -> Vec<u8> {
            if key_is_user_key {
                k.to_vec()
            } else {
                user_key(k).to_vec()
            }
        };
        let mut anchors = Vec::new();
        let (mut count, mut range_size, mut prev_end) = (0u64, 0u64, 0u64);
        let mut last_key = Vec::new();
        index.seek_to_first(self);
        while index.valid() {
            let h = index.handle();
            let end = h.offset + h.size;
            range_size += end.saturating_sub(prev_end);
            prev_end = end;
            count += 1;
            if count % per_anchor == 0 {
                count = 0;
                anchors.push((uk(index.key()), range_size));
                range_size = 0;
            } else {
                last_key = uk(index.key());
            }
            index.next(self);
        }
        index.status(self)?;
        if count != 0 {
            anchors.push((last_key, range_size));
        }
        if self.pad_ts > 0 {
            for (k, _) in anchors.iter_mut() {
                *k = super::ts_pad::user_key_with_min_ts(k, self.pad_ts);
            }
        }
        Ok(anchors)
    }

    /// A kHashSearch table's prefix records as stored (None: the table has no hash index).
    pub fn hash_index_runs(&self) -> Result<Option<Vec<super::hash_index::PrefixRun>>> {
        let name = &self.opts.file_name;
        let checksum = self.footer.block_checksum();
        let read = |h: BlockHandle| read_block_with(self.file.as_ref(), h, checksum, true, name);
        let mh = self.footer.metaindex_handle;
        let metaindex = Arc::new(Block::new(read(mh)?).map_err(|e| in_file(e, name, mh))?);
        let (mut prefixes, mut metadata) = (None, None);
        for (k, v) in metaindex.entries().map_err(|e| in_file(e, name, mh))? {
            let h = BlockHandle::decode(&v).map_err(|e| in_file(e, name, mh))?;
            match k.as_slice() {
                k if k == PREFIXES_BLOCK.as_bytes() => prefixes = Some(read(h)?),
                k if k == METADATA_BLOCK.as_bytes() => metadata = Some((h, read(h)?)),
                _ => {}
            }
        }
        match (prefixes, metadata) {
            (Some(p), Some((mh, m))) => {
                super::hash_index::decode(&p, &m).map(Some).map_err(|e| in_file(e, name, mh))
            }
            _ => Ok(None),
        }
    }

    /// The prefix records a hash index of this table should hold under `extractor`,
    /// computed from its data blocks (RocksDB's HashIndexBuilder over the table's keys):
    /// `sst_dump`-style verification, and the tests' check of RocksDB's own tables.
    pub fn rebuild_hash_index_runs(
        &self,
        extractor: &SliceTransform,
    ) -> Result<Vec<super::hash_index::PrefixRun>> {
        let mut b = super::hash_index::HashIndexBuilder::default();
        let mut index = self.index_iter()?;
        index.seek_to_first(self);
        let mut block_no = 0u32;
        while index.valid() {
            let block = self.data_block(index.handle(), false)?;
            for (k, _) in block.entries().map_err(|e| in_file(e, &self.opts.file_name, index.handle()))? {
                if let Some(p) = extractor.transform(user_key(&k)) {
                    b.add_key(p, block_no);
                }
            }
            block_no += 1;
            index.next(self);
        }
        index.status(self)?;
        let (p, m) = b.finish();
        super::hash_index::decode(&p, &m)
    }

    /// The approximate file offset where `ikey` would be.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let Ok(mut index) = self.index_iter() else { return 0 };
        let stored;
        let ikey = if self.pad_ts > 0 {
            stored = super::ts_pad::target_without_ts(ikey, self.pad_ts, true);
            &stored[..]
        } else {
            ikey
        };
        index.seek(self, ikey);
        if index.valid() {
            index.handle().offset
        } else {
            // Past the last key: the end of the data blocks.
            if self.props.data_size > 0 {
                self.props.data_size
            } else {
                self.footer.metaindex_handle.offset
            }
        }
    }

    /// RocksDB's `auto_readahead_size` bound: the end (with trailer) of the first data block
    /// whose index key's user key is at or past `upper` (every later block is out of bound);
    /// None when there is none (or the index cannot be read: no trimming then).
    fn readahead_bound(&self, upper: &[u8]) -> Option<u64> {
        let mut index = self.index_iter().ok()?;
        let target = crate::key::make_internal_key(
            upper,
            crate::key::MAX_SEQUENCE_NUMBER,
            crate::key::VALUE_TYPE_FOR_SEEK,
        );
        index.seek(self, &target);
        if !index.valid() {
            return None;
        }
        let h = index.handle();
        Some(h.offset + h.size + crate::table::format::BLOCK_TRAILER_SIZE as u64)
    }

    /// A two-level iterator over every entry (range tombstones excluded).
    pub fn iter(self: &Arc<Self>, reads: impl Into<BlockReads>) -> Box<dyn InternalIterator> {
        self.iter_with(reads, None)
    }

    /// `iter` whose seeks check the prefix filter as `prefix_seek` says (None: total order).
    pub fn iter_with(
        self: &Arc<Self>,
        reads: impl Into<BlockReads>,
        prefix_seek: Option<Arc<PrefixSeek>>,
    ) -> Box<dyn InternalIterator> {
        self.iter_bounded(reads, prefix_seek, None)
    }

    /// `iter_with` for an iterator with RocksDB's `auto_readahead_size` and upper bound
    /// `readahead_upper` (a user key): its reads ahead end with the data block that holds
    /// the bound (`prefetch.rs`). Applies, as RocksDB's, only to a table with a block cache
    /// (and here not to keys with user-defined timestamps).
    pub fn iter_bounded(
        self: &Arc<Self>,
        reads: impl Into<BlockReads>,
        prefix_seek: Option<Arc<PrefixSeek>>,
        readahead_upper: Option<Arc<Vec<u8>>>,
    ) -> Box<dyn InternalIterator> {
        let reads: BlockReads = reads.into();
        let readahead_upper = readahead_upper
            .filter(|_| self.opts.block_cache.is_some() && self.opts.icmp.timestamp_size() == 0);
        let index = match self.index_iter() {
            Ok(i) => i,
            Err(e) => return Box::new(crate::iter::ErrorIterator::new(e)),
        };
        let it = Box::new(TableIter {
            index,
            table: self.clone(),
            data: None,
            data_handle: None,
            reads,
            readahead: Readahead::with_auto(
                reads.readahead_size,
                reads.for_compaction,
                reads.auto_readahead,
                readahead_upper,
            )
            .with_async_io(
                reads.async_io && !reads.for_compaction,
                self.opts.statistics.clone(),
                self.read_pool.get().cloned(),
            )
            .with_fs_prefetch(self.file.supports_prefetch()),
            status: Ok(()),
            prefix_seek,
            pins: None,
        });
        let it: Box<dyn InternalIterator> = if self.global_seqno == 0 {
            it
        } else {
            Box::new(GlobalSeqnoIter { inner: it, seqno: self.global_seqno, key: Vec::new() })
        };
        if self.pad_ts == 0 {
            return it;
        }
        Box::new(super::ts_pad::MinTsIter::new(it, self.pad_ts, super::ts_pad::MinTsMode::Pad))
    }

    /// The global seqno of an external file (0: none).
    pub fn global_seqno(&self) -> u64 {
        self.global_seqno
    }

    /// RocksDB's `BlockBasedTable::MarkObsolete`: the file left the database; when the
    /// last user lets the reader go, its blocks leave the block cache with the effort
    /// `uncache_aggressiveness` allows (see `Drop`).
    pub fn mark_obsolete(&self, uncache_aggressiveness: u32) {
        self.uncache.store(uncache_aggressiveness, AtomicOrdering::Relaxed);
    }

    /// RocksDB's uncaching of an obsolete table's data blocks: the index entries known
    /// without I/O (the index held, or found in the cache; partitions likewise, stopping at
    /// the first one not cached) name the data blocks, which are erased while
    /// [`UncacheAdvisor`] says erasing still pays.
    fn uncache_data_blocks(&self, cache: &BlockCache, aggressiveness: u32) {
        let key = |offset: u64| Key::Block(self.opts.cache_key.with_offset(offset));
        let cached = |h: BlockHandle| cache.lookup(&key(h.offset)).and_then(|v| v.downcast::<Block>().ok());
        let top = match &self.index_block {
            Meta::Held(b) => b.clone(),
            Meta::Cached(h) => match cached(*h) {
                Some(b) => b,
                None => return,
            },
        };
        let mut advisor = UncacheAdvisor::new(aggressiveness);
        let erase_entries = |index: &Arc<Block>, advisor: &mut UncacheAdvisor| -> bool {
            let mut it = index.index_iter(&self.opts.icmp, self.index_format);
            it.seek_to_first();
            while it.valid() {
                if !advisor.should_continue() {
                    return false;
                }
                advisor.report(cache.erase(&key(it.handle().offset)));
                it.next();
            }
            true
        };
        match &self.index_partitions {
            None => {
                erase_entries(&top, &mut advisor);
            }
            Some(parts) => {
                for h in self.partition_handles(&top, self.footer.index_handle).unwrap_or_default() {
                    let part = match parts {
                        Partitions::Held(m) => m.get(&h.offset).cloned(),
                        Partitions::Cached => cached(h),
                    };
                    // RocksDB's index iterator stops at a partition it cannot read without I/O.
                    let Some(part) = part else { break };
                    if !erase_entries(&part, &mut advisor) {
                        break;
                    }
                }
            }
        }
    }
}

/// RocksDB's `UncacheAggressivenessAdvisor`: with aggressiveness `a`, erasing goes on until
/// `min(a, 3)` attempts found nothing, and then while the estimated chance of a useful
/// erase, `(useful + 1) / (useful + not_useful - allowance + 1.5)`, stays at or above
/// `0.99^(a-1)`.
struct UncacheAdvisor {
    allowance: u32,
    threshold: f64,
    useful: u32,
    not_useful: u32,
}

impl UncacheAdvisor {
    fn new(aggressiveness: u32) -> Self {
        UncacheAdvisor {
            allowance: aggressiveness.clamp(1, 3),
            threshold: 0.99f64.powf(f64::from(aggressiveness.max(1) - 1)),
            useful: 0,
            not_useful: 0,
        }
    }

    fn report(&mut self, erased: bool) {
        if erased {
            self.useful += 1;
        } else {
            self.not_useful += 1;
        }
    }

    fn should_continue(&self) -> bool {
        if self.not_useful < self.allowance {
            return true;
        }
        let useful = f64::from(self.useful);
        (useful + 1.0) / (useful + f64::from(self.not_useful) - f64::from(self.allowance) + 1.5)
            >= self.threshold
    }
}

impl Drop for Table {
    /// Index and filter blocks this table put in the block cache go with it (RocksDB's
    /// `BlockBasedTable::Close` erases them too): no other reader can use them.
    fn drop(&mut self) {
        let aggressiveness = *self.uncache.get_mut();
        if let Some(cache) = self.opts.block_cache.as_ref().filter(|_| aggressiveness > 0) {
            self.uncache_data_blocks(cache, aggressiveness);
        }
        let Some(cache) =
            self.opts.block_cache.as_ref().filter(|_| self.meta_policy.cache_index_and_filter_blocks)
        else {
            return;
        };
        let key = |offset: u64| Key::Block(self.opts.cache_key.with_offset(offset));
        // Partitions: those the top-level blocks name (a top level no longer in the cache
        // is not read again for this).
        let cached_top = |m: &Meta<Block>| -> Option<Arc<Block>> {
            match m {
                Meta::Held(b) => Some(b.clone()),
                Meta::Cached(h) => cache.lookup(&key(h.offset)).and_then(|v| v.downcast::<Block>().ok()),
            }
        };
        if self.index_partitions.is_some() {
            if let Some(top) = cached_top(&self.index_block) {
                for h in self.partition_handles(&top, self.footer.index_handle).unwrap_or_default() {
                    cache.erase(&key(h.offset));
                }
            }
        }
        if let (Some(TableFilter::Partitioned { top, .. }), Some(th)) = (&self.filter, self.filter_handle) {
            if let Some(top) = cached_top(top) {
                for h in self.partition_handles(&top, th).unwrap_or_default() {
                    cache.erase(&key(h.offset));
                }
            }
        }
        cache.erase(&key(self.footer.index_handle.offset));
        if let Some(h) = self.filter_handle {
            cache.erase(&key(h.offset));
        }
    }
}

/// Counts an index or filter block added to the block cache.
fn count_meta_add(stats: Option<&Statistics>, index: bool, bytes: usize) {
    if let Some(s) = stats {
        let n = bytes as u64;
        s.record_tick(Ticker::BlockCacheAdd, 1);
        s.record_tick(Ticker::BlockCacheBytesWrite, n);
        if index {
            s.record_tick(Ticker::BlockCacheIndexAdd, 1);
            s.record_tick(Ticker::BlockCacheIndexBytesInsert, n);
        } else {
            s.record_tick(Ticker::BlockCacheFilterAdd, 1);
            s.record_tick(Ticker::BlockCacheFilterBytesInsert, n);
        }
    }
}

/// Adds the file name and block offset to an error from a block.
pub(super) fn in_file(e: Error, file: &str, h: BlockHandle) -> Error {
    Error::new(e.kind(), format!("{} in {file} block at offset {}", strip_prefix(&e), h.offset))
}

struct TableIter {
    table: Arc<Table>,
    index: IndexIter,
    data: Option<BlockIter>,
    data_handle: Option<BlockHandle>,
    reads: BlockReads,
    /// RocksDB's `BlockPrefetcher` of this iterator (`prefetch.rs`).
    readahead: Readahead,
    status: Result<()>,
    /// Seeks check the table's prefix filter (RocksDB's prefix seek).
    prefix_seek: Option<Arc<PrefixSeek>>,
    /// While pinning is on, a data block this iterator leaves goes here (values handed
    /// out may lie in it); see `crate::iter::PinnedData`.
    pins: Option<crate::iter::PinRef>,
}

impl TableIter {
    /// Lets go of the current data block: to the pinned data while pinning is on.
    #[inline]
    fn pin_block(&self) {
        if let (Some(p), Some(d)) = (&self.pins, &self.data) {
            if p.enabled() {
                p.pin(d.block().clone());
            }
        }
    }

    /// Drops the data cursor (its block pinned while pinning is on).
    fn drop_data(&mut self) {
        self.pin_block();
        self.data = None;
        self.data_handle = None;
    }

    /// RocksDB's `CheckPrefixMayMatch`: false (and the iterator left invalid, no block
    /// read) when the filter excludes the seek target's prefix.
    fn prefix_may_match(&mut self, target: &[u8], backward: bool) -> bool {
        let Some(ps) = &self.prefix_seek else { return true };
        if target.len() < 8 {
            return true;
        }
        if self.table.prefix_may_match_at(target, ps, backward) == Some(false) {
            self.drop_data();
            return false;
        }
        true
    }

    /// Loads the data block the index points at (if not loaded already).
    fn init_data_block(&mut self) -> bool {
        if !self.index.valid() {
            self.drop_data();
            if let Err(e) = self.index.status(&self.table) {
                self.status = Err(e);
            }
            return false;
        }
        let h = self.index.handle();
        if self.data_handle == Some(h) && self.data.is_some() {
            return true;
        }
        match self.table.data_block_with(h, &self.reads, Some(&mut self.readahead)) {
            Ok(b) => {
                self.pin_block();
                match self.data.as_mut() {
                    Some(d) => d.reset_block(b),
                    None => self.data = Some(b.iter(&self.table.opts.icmp)),
                }
                self.data_handle = Some(h);
                true
            }
            Err(e) => {
                self.status = Err(e);
                self.drop_data();
                false
            }
        }
    }

    /// Checks the data iterator's status; false (and records it) on error.
    fn data_ok(&mut self) -> bool {
        if let (Some(d), Some(h)) = (&self.data, self.data_handle) {
            if let Err(e) = d.status() {
                self.status = Err(in_file(e, &self.table.opts.file_name, h));
                self.drop_data();
                return false;
            }
        }
        self.status.is_ok()
    }

    fn skip_forward(&mut self) {
        while self.data_ok() && !self.data.as_ref().is_some_and(|d| d.valid()) {
            if !self.index.valid() {
                self.drop_data();
                return;
            }
            self.index.next(&self.table);
            if !self.init_data_block() {
                return;
            }
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self) {
        while self.data_ok() && !self.data.as_ref().is_some_and(|d| d.valid()) {
            if !self.index.valid() {
                self.drop_data();
                return;
            }
            self.index.prev(&self.table);
            if !self.init_data_block() {
                return;
            }
            if let Some(d) = self.data.as_mut() {
                d.seek_to_last();
            }
        }
    }

    fn reset(&mut self) {
        self.status = Ok(());
    }
}

impl InternalIterator for TableIter {
    fn valid(&self) -> bool {
        self.status.is_ok() && self.data.as_ref().is_some_and(|d| d.valid())
    }
    fn seek_to_first(&mut self) {
        self.reset();
        self.index.seek_to_first(&self.table);
        if self.init_data_block() {
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
        self.skip_forward();
    }
    fn seek_to_last(&mut self) {
        self.reset();
        self.index.seek_to_last(&self.table);
        if self.init_data_block() {
            if let Some(d) = self.data.as_mut() {
                d.seek_to_last();
            }
        }
        self.skip_backward();
    }
    fn seek(&mut self, target: &[u8]) {
        self.reset();
        if !self.prefix_may_match(target, false) {
            return;
        }
        self.index.seek(&self.table, target);
        if self.init_data_block() {
            if let Some(d) = self.data.as_mut() {
                d.seek(target);
            }
        }
        self.skip_forward();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.reset();
        if !self.prefix_may_match(target, true) {
            return;
        }
        self.index.seek(&self.table, target);
        if !self.index.valid() && self.index.status(&self.table).is_ok() {
            self.index.seek_to_last(&self.table);
        }
        if self.init_data_block() {
            if let Some(d) = self.data.as_mut() {
                d.seek_for_prev(target);
            }
        }
        self.skip_backward();
    }
    fn next(&mut self) {
        if let Some(d) = self.data.as_mut() {
            d.next();
            if d.valid() {
                return;
            }
        }
        self.skip_forward();
    }
    fn prev(&mut self) {
        if let Some(d) = self.data.as_mut() {
            d.prev();
            if d.valid() {
                return;
            }
        }
        self.skip_backward();
    }
    fn key(&self) -> &[u8] {
        self.data.as_ref().map(|d| d.key()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.data.as_ref().map(|d| d.value()).unwrap_or(&[])
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
    /// A value lies in the current data block, which goes to the pinned data when this
    /// iterator leaves it while pinning is on.
    #[inline]
    fn value_pinned(&self) -> bool {
        self.pins.as_ref().is_some_and(|p| p.enabled())
    }
    #[inline]
    fn value_if_pinned(&self) -> Option<&[u8]> {
        match (&self.pins, &self.data) {
            (Some(p), Some(d)) if p.enabled() => Some(d.value()),
            _ => None,
        }
    }
    fn set_pinned_data(&mut self, pins: &crate::iter::PinRef) {
        self.pins = Some(pins.clone());
    }
}

/// An external file's entries with the global seqno in every key.
struct GlobalSeqnoIter {
    inner: Box<TableIter>,
    seqno: u64,
    key: Vec<u8>,
}

impl GlobalSeqnoIter {
    fn fix(&mut self) {
        if self.inner.valid() {
            with_seqno(self.inner.key(), self.seqno, &mut self.key);
        }
    }
}

impl InternalIterator for GlobalSeqnoIter {
    crate::forward_iter_values!(inner);
    crate::forward_iter_moves!(inner, fix, fix);
    // The file holds each user key once, so the order with global seqnos differs from the
    // stored order only against a target of the same user key: an entry whose global
    // trailer is above the target's sorts before it (RocksDB's block iterators compare
    // with the global seqno applied).
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        if self.inner.valid()
            && target.len() >= 8
            && self.inner.table.opts.icmp.compare_user(user_key(self.inner.key()), user_key(target))
                == Ordering::Equal
            && global_trailer(self.inner.key(), self.seqno) > crate::key::trailer(target)
        {
            self.inner.next();
        }
        self.fix();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if !self.inner.valid() {
            if self.inner.status().is_ok() {
                self.inner.seek_to_last();
            }
        } else if self.key.as_slice() != target {
            self.inner.prev();
        }
        self.fix();
    }
    fn key(&self) -> &[u8] {
        &self.key
    }
}

#[cfg(test)]
mod uncache_advisor_tests {
    use super::UncacheAdvisor;

    /// How many misses in a row (no hits) each aggressiveness tolerates, and that hits keep
    /// a moderate one going.
    #[test]
    fn advisor_stops_as_rocksdb_documents() {
        let misses_tolerated = |a: u32| {
            let mut adv = UncacheAdvisor::new(a);
            let mut n = 0;
            while adv.should_continue() && n < 100_000 {
                adv.report(false);
                n += 1;
            }
            n
        };
        assert_eq!(misses_tolerated(1), 1, "1: stop at the first block not cached");
        assert_eq!(misses_tolerated(2), 2);
        assert!(misses_tolerated(300) >= 3);
        assert_eq!(misses_tolerated(10_000), 100_000, "10000: always, for all practical purposes");
        // 69: go on while about half the erases are useful; 60% keeps it going, 40% stops it.
        let mut adv = UncacheAdvisor::new(69);
        for i in 0..1000 {
            assert!(adv.should_continue(), "60% of the erases useful: go on ({i})");
            adv.report(i % 5 < 3);
        }
        let mut adv = UncacheAdvisor::new(69);
        let mut n = 0;
        while adv.should_continue() && n < 1000 {
            adv.report(n % 5 < 2);
            n += 1;
        }
        assert!(n < 1000, "40% useful: stops");
    }
}
