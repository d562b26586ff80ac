//! Block-based table options that rust-rocksdb 0.25 has no setter for but RocksDB 11.8.1's
//! `block_based_table_type_info` parses (options strings, OPTIONS files, `set_options`):
//! `block_cache` given as text, `prepopulate_block_cache`, `detect_filter_construct_corruption`. Their rows are in
//! `options_table.rs`; what each does is said at its setter.

use crate::{BlockBasedOptions, Cache, Error, Result};

/// RocksDB's `BlockBasedTableOptions::BlockSearchType` (`index_block_search_type`): how a
/// seek searches the restart points of an index block (a flat index or an index partition;
/// the top level of a partitioned index is searched binary, as RocksDB's).
#[derive(Debug, Copy, Clone, PartialEq, Eq, Default)]
pub enum BlockSearchType {
    /// `kBinary`, RocksDB's default: binary search.
    #[default]
    Binary,
    /// `kInterpolation`: interpolation search, which suits evenly spread keys; the family's
    /// comparator must be the bytewise one (InvalidArgument at open otherwise, as RocksDB's).
    Interpolation,
    /// `kAuto`: interpolation on the index blocks written with the uniform-keys flag (see
    /// `set_uniform_cv_threshold`) when the comparator is bytewise, binary search otherwise.
    Auto,
}

impl BlockSearchType {
    pub(crate) fn to_engine(self) -> crate::table::block::IndexBlockSearch {
        use crate::table::block::IndexBlockSearch as S;
        match self {
            BlockSearchType::Binary => S::Binary,
            BlockSearchType::Interpolation => S::Interpolation,
            BlockSearchType::Auto => S::Auto,
        }
    }
}

/// RocksDB's `BlockBasedTableOptions::PrepopulateBlockCache`: which newly written tables
/// put their data blocks into the block cache as they write them.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Default)]
pub enum PrepopulateBlockCache {
    /// RocksDB's default: blocks enter the cache only when read.
    #[default]
    Disable,
    /// Tables written by flushes.
    FlushOnly,
    /// Tables written by flushes and by compactions.
    FlushAndCompaction,
}

impl BlockBasedOptions {
    /// RocksDB's `prepopulate_block_cache` (a Shale extension of rust-rocksdb's API; options
    /// strings and `set_options("block_based_table_factory", ...)` set it too): the data
    /// blocks of the tables a flush (and with `FlushAndCompaction`, a compaction) writes go
    /// into the block cache uncompressed as they are written, so the first reads of fresh
    /// data hit the cache. Without a block cache it does nothing, as in RocksDB.
    pub fn set_prepopulate_block_cache(&mut self, mode: PrepopulateBlockCache) {
        self.prepopulate_block_cache = mode;
    }

    /// RocksDB's `detect_filter_construct_corruption` (default false; a Shale extension of
    /// rust-rocksdb's API): every filter (or filter partition) a table is built with is
    /// checked against the hash entries it was built from, which are themselves checked
    /// against a checksum kept as they were added; a mismatch fails the flush or compaction
    /// with Corruption ("Filter's hash entries checksum mismatched", "Corrupted filter
    /// content"). Costs a pass over the entries per filter.
    pub fn set_detect_filter_construct_corruption(&mut self, on: bool) {
        self.detect_filter_construct_corruption = on;
    }

    /// RocksDB's `uniform_cv_threshold` (default -1: off; a Shale extension of rust-rocksdb's
    /// API): an index block (or index partition) whose restart keys are spread evenly enough
    /// (the coefficient of variation of their gaps below the threshold) is written with
    /// RocksDB 11's uniform-keys flag in its footer, which RocksDB's `kAuto` index search
    /// reads as leave to use interpolation search (so does Shale's, see
    /// `set_index_block_search_type`).
    pub fn set_uniform_cv_threshold(&mut self, threshold: f64) {
        self.uniform_cv_threshold = threshold;
    }

    /// RocksDB 11's `separate_key_value_in_data_block` (default false; a Shale extension of
    /// rust-rocksdb's API): the data blocks of tables written from then on store their keys
    /// first and their values after them, each restart entry naming where its values start,
    /// and the table's properties carry `rocksdb.separate.key.value.in.data.block = 1`.
    /// RocksDB before 11 cannot read such tables.
    pub fn set_separate_key_value_in_data_block(&mut self, on: bool) {
        self.separate_key_value_in_data_block = on;
    }

    /// RocksDB's `index_block_search_type` (default `Binary`; a Shale extension of
    /// rust-rocksdb's API): how table readers opened from then on search index blocks.
    /// Results are the same whatever the choice; interpolation probes fewer restart keys on
    /// evenly spread keys.
    pub fn set_index_block_search_type(&mut self, search: BlockSearchType) {
        self.index_block_search_type = search;
    }

    /// RocksDB's `read_amp_bytes_per_bit` (default 0, off; a Shale extension of
    /// rust-rocksdb's API, as RocksDB's C API `rocksdb_block_based_options_set_read_amp_bytes_per_bit`):
    /// each data block read from a table file gets a bitmap of one bit per this many bytes
    /// (rounded down to a power of two) marking the entries read, and with statistics on,
    /// `rocksdb.read.amp.total.read.bytes` counts the blocks' bytes and
    /// `rocksdb.read.amp.estimate.useful.bytes` the bytes of the entries read from them.
    /// Their ratio is the read amplification. Costs `1 / (8 * bytes_per_bit)` of each
    /// block's size in memory. Table readers opened from then on take it.
    pub fn set_read_amp_bytes_per_bit(&mut self, bytes_per_bit: u32) {
        self.read_amp_bytes_per_bit = bytes_per_bit;
    }
}

/// `block_based_table_factory={name=value;...}` in an options string (RocksDB's
/// `TableFactoryParseFn`): the block-based table options with the fields named changed,
/// the others kept; InvalidArgument on another table format, as RocksDB's.
pub(crate) fn apply_block_based_table_factory(o: &mut crate::Options, v: &str) -> Result<()> {
    use crate::options_table::{find, struct_fields, Section};
    let name = "block_based_table_factory";
    if o.table_format != crate::table::TableFormat::BlockBased {
        return Err(Error::invalid_argument(format!(
            "Cannot modify {} as {name}",
            o.table_format.factory_name()
        )));
    }
    let mut t = o.table.clone();
    for (k, x) in struct_fields(name, v)? {
        match find(Section::Table, k) {
            Some(r) => {
                if !r.set_table(&mut t, x)? {
                    return Err(crate::options_table::bad_value(&format!("{name}.{k}"), x));
                }
            }
            None => return Err(Error::invalid_argument(format!("Could not find option: {k}"))),
        }
    }
    o.set_block_based_table_factory(&t);
    Ok(())
}

/// RocksDB's `Cache::CreateFromString` for the `block_cache` option: `null...` none; a size
/// (`ParseSizeT`: digits with an optional k/m/g/t suffix) an LRU cache of that capacity;
/// `{capacity=..;num_shard_bits=..;strict_capacity_limit=..;high_pri_pool_ratio=..;
/// low_pri_pool_ratio=..}` an LRU cache of those options. A `scheme://` value names a
/// cache of RocksDB's object registry, which holds none by default: NotSupported, as
/// RocksDB's `LoadSharedObject` answers without a registered factory.
pub(crate) fn parse_block_cache(name: &str, v: &str) -> Result<Option<Cache>> {
    let v = v.trim();
    if v.starts_with("null") {
        return Ok(None);
    }
    if v.contains("://") {
        // RocksDB 11.8.1's `LoadSharedObject<Cache>` finds no factory for the scheme in its
        // default object registry and answers NotSupported ("Could not load Cache").
        return Err(Error::not_supported(format!("Could not load Cache: {v}")));
    }
    if !v.contains('=') {
        return Ok(Some(Cache::new_lru_cache(size_t(name, v)?)));
    }
    let mut o = crate::LruCacheOptions::default();
    for (k, x) in crate::options_table::struct_fields(name, v)? {
        match k {
            "capacity" => o.set_capacity(size_t(name, x)?),
            "num_shard_bits" => o.set_num_shard_bits(crate::options_table::number(name, x)?),
            "strict_capacity_limit" => o.set_strict_capacity_limit(crate::options_table::boolean(name, x)?),
            "high_pri_pool_ratio" => o.set_high_pri_pool_ratio(crate::options_table::number(name, x)?),
            "low_pri_pool_ratio" => o.set_low_pri_pool_ratio(crate::options_table::number(name, x)?),
            _ => return Err(Error::invalid_argument(format!("Could not find option: {k}"))),
        }
    }
    // RocksDB's `NewLRUCache` makes no cache (nullptr) of options its `MakeSharedCache`
    // rejects (ratios outside [0, 1] or summing above 1, 20 or more shard bits), and
    // `CreateFromString` answers OK with that null cache.
    if o.opts.invalid() {
        return Ok(None);
    }
    Ok(Some(Cache::new_lru_cache_opts(&o)))
}

/// RocksDB's `ParseSizeT`/`ParseUint64`: decimal digits, then optionally one of k/K, m/M,
/// g/G, t/T (times 2^10, 2^20, 2^30, 2^40).
pub(crate) fn size_t(name: &str, v: &str) -> Result<usize> {
    let v = v.trim();
    let bad = || crate::options_table::bad_value(name, v);
    let (digits, shift) = match v.as_bytes().last() {
        Some(b'k' | b'K') => (&v[..v.len() - 1], 10),
        Some(b'm' | b'M') => (&v[..v.len() - 1], 20),
        Some(b'g' | b'G') => (&v[..v.len() - 1], 30),
        Some(b't' | b'T') => (&v[..v.len() - 1], 40),
        _ => (v, 0),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let n = n.checked_mul(1u64 << shift).ok_or_else(bad)?;
    usize::try_from(n).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_rocksdb_suffixes() {
        assert_eq!(size_t("x", "4096").ok(), Some(4096));
        assert_eq!(size_t("x", "1M").ok(), Some(1 << 20));
        assert_eq!(size_t("x", "2k").ok(), Some(2048));
        assert_eq!(size_t("x", "1g").ok(), Some(1 << 30));
        assert!(size_t("x", "1Q").is_err());
        assert!(size_t("x", "").is_err());
    }

    #[test]
    fn block_cache_text_makes_an_lru_cache_of_that_capacity() -> Result<()> {
        let c = parse_block_cache("block_cache", "1M")?.ok_or_else(|| Error::corruption("no cache"))?;
        assert_eq!(c.get_capacity(), 1 << 20);
        let c =
            parse_block_cache("block_cache", "{capacity=2M;num_shard_bits=2;strict_capacity_limit=true}")?
                .ok_or_else(|| Error::corruption("no cache"))?;
        assert_eq!(c.get_capacity(), 2 << 20);
        assert!(parse_block_cache("block_cache", "nullptr")?.is_none());
        assert!(parse_block_cache("block_cache", "{capacity=1M;bogus=1}").is_err());
        Ok(())
    }
}
