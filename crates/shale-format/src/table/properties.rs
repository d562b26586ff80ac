//! The table properties block ("rocksdb.properties").
//!
//! ```text
//! properties block : a block (see block.rs) with one restart point, entries sorted
//!                    bytewise by name:  name -> value
//!                    integer properties: varint64; string properties: raw bytes
//! ```
//! Names and the set written follow RocksDB 11.8.1 (table/meta_blocks.cc,
//! `PropertyBlockBuilder::AddTableProperty`): 7.8.3's set plus the key seqno range, newest key
//! time, tail start offset, restart intervals, uniform and compression-rejected/bypassed
//! block counts (the builder adds those to `user_collected`, raw varint64s; RocksDB 7.8.3
//! reads them as user-collected properties). Properties this module does not know are kept
//! in `user_collected`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::coding::{decode_varint64, put_varint64};
use crate::error::{Error, Result};

use super::block::{Block, BlockBuilder};

pub const PROPERTIES_BLOCK: &str = "rocksdb.properties";
/// The name very old RocksDB versions used for the properties block.
pub const PROPERTIES_BLOCK_OLD: &str = "rocksdb.stats";
pub const RANGE_DEL_BLOCK: &str = "rocksdb.range_del";
/// Meta block holding the dictionary data blocks were compressed with (if any).
pub const COMPRESSION_DICT_BLOCK: &str = "rocksdb.compression_dict";
pub const FULL_FILTER_PREFIX: &str = "fullfilter.";
/// The metaindex key prefix of a partitioned filter's top-level index (`partitioned.rs`).
pub const PARTITIONED_FILTER_PREFIX: &str = "partitionedfilter.";
/// format_version >= 6: the metaindex entry naming the index block (the footer no longer does).
pub const INDEX_BLOCK: &str = "rocksdb.index";
/// The compression manager name format_version 7 records for RocksDB's built-in codecs.
pub const BUILTIN_COMPRESSION_MANAGER: &str = "BuiltinV2";

pub mod names {
    /// External files (SstFileWriter): 2 = keys take a global seqno (fixed32).
    pub const EXTERNAL_SST_VERSION: &str = "rocksdb.external_sst_file.version";
    /// External files: RocksDB's global seqno placeholder (fixed64, 0 = the MANIFEST's).
    pub const EXTERNAL_SST_GLOBAL_SEQNO: &str = "rocksdb.external_sst_file.global_seqno";
    pub const ORIG_FILE_NUMBER: &str = "rocksdb.original.file.number";
    pub const DATA_SIZE: &str = "rocksdb.data.size";
    pub const INDEX_SIZE: &str = "rocksdb.index.size";
    pub const INDEX_PARTITIONS: &str = "rocksdb.index.partitions";
    pub const TOP_LEVEL_INDEX_SIZE: &str = "rocksdb.top-level.index.size";
    pub const INDEX_KEY_IS_USER_KEY: &str = "rocksdb.index.key.is.user.key";
    pub const INDEX_VALUE_IS_DELTA_ENCODED: &str = "rocksdb.index.value.is.delta.encoded";
    pub const FILTER_SIZE: &str = "rocksdb.filter.size";
    pub const RAW_KEY_SIZE: &str = "rocksdb.raw.key.size";
    pub const RAW_VALUE_SIZE: &str = "rocksdb.raw.value.size";
    pub const NUM_DATA_BLOCKS: &str = "rocksdb.num.data.blocks";
    pub const NUM_ENTRIES: &str = "rocksdb.num.entries";
    pub const NUM_FILTER_ENTRIES: &str = "rocksdb.num.filter_entries";
    pub const DELETED_KEYS: &str = "rocksdb.deleted.keys";
    pub const MERGE_OPERANDS: &str = "rocksdb.merge.operands";
    pub const NUM_RANGE_DELETIONS: &str = "rocksdb.num.range-deletions";
    pub const FORMAT_VERSION: &str = "rocksdb.format.version";
    pub const FIXED_KEY_LEN: &str = "rocksdb.fixed.key.length";
    pub const COLUMN_FAMILY_ID: &str = "rocksdb.column.family.id";
    pub const CREATION_TIME: &str = "rocksdb.creation.time";
    pub const OLDEST_KEY_TIME: &str = "rocksdb.oldest.key.time";
    pub const FILE_CREATION_TIME: &str = "rocksdb.file.creation.time";
    pub const SLOW_COMPRESSION_SIZE: &str = "rocksdb.sample_for_compression.slow.data.size";
    pub const FAST_COMPRESSION_SIZE: &str = "rocksdb.sample_for_compression.fast.data.size";
    pub const DB_ID: &str = "rocksdb.creating.db.identity";
    pub const DB_SESSION_ID: &str = "rocksdb.creating.session.identity";
    pub const DB_HOST_ID: &str = "rocksdb.creating.host.identity";
    pub const FILTER_POLICY: &str = "rocksdb.filter.policy";
    pub const COMPARATOR: &str = "rocksdb.comparator";
    pub const MERGE_OPERATOR: &str = "rocksdb.merge.operator";
    pub const PREFIX_EXTRACTOR: &str = "rocksdb.prefix.extractor.name";
    pub const PROPERTY_COLLECTORS: &str = "rocksdb.property.collectors";
    pub const COLUMN_FAMILY_NAME: &str = "rocksdb.column.family.name";
    pub const COMPRESSION: &str = "rocksdb.compression";
    pub const COMPRESSION_OPTIONS: &str = "rocksdb.compression_options";
    pub const SEQNO_TIME_MAP: &str = "rocksdb.seqno.time.map";
    // Added by RocksDB 8.x to 11.x; kept in `user_collected`.
    pub const TAIL_START_OFFSET: &str = "rocksdb.tail.start.offset";
    pub const USER_DEFINED_TIMESTAMPS_PERSISTED: &str = "rocksdb.user.defined.timestamps.persisted";
    pub const KEY_LARGEST_SEQNO: &str = "rocksdb.key.largest.seqno";
    pub const KEY_SMALLEST_SEQNO: &str = "rocksdb.key.smallest.seqno";
    pub const NEWEST_KEY_TIME: &str = "rocksdb.newest.key.time";
    pub const DATA_BLOCK_RESTART_INTERVAL: &str = "rocksdb.data.block.restart.interval";
    pub const INDEX_BLOCK_RESTART_INTERVAL: &str = "rocksdb.index.block.restart.interval";
    pub const SEPARATE_KEY_VALUE_IN_DATA_BLOCK: &str = "rocksdb.separate.key.value.in.data.block";
    pub const UDI_IS_PRIMARY_INDEX: &str = "rocksdb.udi.is.primary.index";
    pub const NUM_UNIFORM_BLOCKS: &str = "rocksdb.num.uniform.blocks";
    pub const NUM_DATA_BLOCKS_COMPRESSION_REJECTED: &str = "rocksdb.num.data.blocks.compression.rejected";
    pub const NUM_DATA_BLOCKS_COMPRESSION_BYPASSED: &str = "rocksdb.num.data.blocks.compression.bypassed";
    /// Written by RocksDB's BlockBasedTablePropertiesCollector (user-collected).
    pub const INDEX_TYPE: &str = "rocksdb.block.based.table.index.type";
    pub const WHOLE_KEY_FILTERING: &str = "rocksdb.block.based.table.whole.key.filtering";
    pub const PREFIX_FILTERING: &str = "rocksdb.block.based.table.prefix.filtering";
    pub const DECOUPLED_PARTITIONED_FILTERS: &str = "rocksdb.block.based.table.decoupled.partitioned.filters";
}

/// RocksDB's "unknown column family" id (`kUnknownColumnFamily`: `i32::MAX`), what tables
/// written outside a database (SstFileWriter, sst_dump, ldb) record.
pub const UNKNOWN_COLUMN_FAMILY: u64 = i32::MAX as u64;

/// The properties RocksDB records for every table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableProperties {
    pub orig_file_number: u64,
    pub data_size: u64,
    pub index_size: u64,
    pub index_partitions: u64,
    pub top_level_index_size: u64,
    pub index_key_is_user_key: u64,
    pub index_value_is_delta_encoded: u64,
    pub filter_size: u64,
    pub raw_key_size: u64,
    pub raw_value_size: u64,
    pub num_data_blocks: u64,
    pub num_entries: u64,
    pub num_filter_entries: u64,
    pub num_deletions: u64,
    pub num_merge_operands: u64,
    pub num_range_deletions: u64,
    /// The table's format_version: RocksDB 11's block-based builder records it (7.8.3's left
    /// it 0, a plain-table property then).
    pub format_version: u64,
    pub fixed_key_len: u64,
    pub column_family_id: u64,
    pub creation_time: u64,
    pub oldest_key_time: u64,
    pub file_creation_time: u64,
    pub slow_compression_estimated_data_size: u64,
    pub fast_compression_estimated_data_size: u64,
    pub db_id: String,
    pub db_session_id: String,
    pub db_host_id: String,
    pub column_family_name: String,
    pub filter_policy_name: String,
    pub comparator_name: String,
    pub merge_operator_name: String,
    pub prefix_extractor_name: String,
    pub property_collectors_names: String,
    pub compression_name: String,
    pub compression_options: String,
    pub seqno_to_time_mapping: Vec<u8>,
    /// Every other property, raw.
    pub user_collected: BTreeMap<String, Vec<u8>>,
}

impl TableProperties {
    /// An integer property this struct keeps raw in `user_collected` (a varint64), if present.
    pub fn raw_u64(&self, name: &str) -> Option<u64> {
        self.user_collected.get(name).and_then(|v| decode_varint64(v)).map(|(x, _)| x)
    }

    /// The bytes after the data blocks that a reader prefetches at open: what the MANIFEST
    /// records as a file's tail size (RocksDB's `FileMetaData::CalculateTailSize`). 0 when the
    /// table names no tail start (RocksDB before 8.x, plain and cuckoo tables), unless it has
    /// no data blocks at all.
    pub fn tail_size(&self, file_size: u64) -> u64 {
        let start = self.raw_u64(names::TAIL_START_OFFSET).unwrap_or(0);
        let no_data_blocks = self.num_entries == 0 || self.num_entries == self.num_range_deletions;
        if (start > 0 || no_data_blocks) && start <= file_size {
            file_size - start
        } else {
            0
        }
    }
}

/// The codecs a format_version 7 "rocksdb.compression" property lists:
/// `manager name ";" hex byte per codec used ";" [future fields]`. An empty manager name means
/// compression was disabled. Corruption when malformed; NotSupported for a compression
/// manager other than RocksDB's built-in one (its codecs could be custom ones).
pub fn parse_v7_compression_name(name: &str) -> Result<Vec<u8>> {
    let bad = |m: &str| Error::corruption(format!("{m} in compression_name property {name:?}"));
    let (manager, rest) = name.split_once(';').ok_or_else(|| bad("Missing separator"))?;
    let (types, _future) = rest.split_once(';').ok_or_else(|| bad("Missing second field"))?;
    if types.len() % 2 != 0 {
        return Err(bad("Second field has odd size"));
    }
    let mut out = Vec::with_capacity(types.len() / 2);
    for i in (0..types.len()).step_by(2) {
        let t = types
            .get(i..i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .filter(|&t| t != 0 && t < 0xff)
            .ok_or_else(|| bad("Error parsing second field"))?;
        out.push(t);
    }
    match manager {
        "" | BUILTIN_COMPRESSION_MANAGER | "nullptr" => Ok(out),
        other => Err(Error::not_supported(format!(
            "compression manager {other:?} (only RocksDB's built-in {BUILTIN_COMPRESSION_MANAGER} is known)"
        ))),
    }
}

impl Default for TableProperties {
    fn default() -> Self {
        TableProperties {
            orig_file_number: 0,
            data_size: 0,
            index_size: 0,
            index_partitions: 0,
            top_level_index_size: 0,
            index_key_is_user_key: 0,
            index_value_is_delta_encoded: 0,
            filter_size: 0,
            raw_key_size: 0,
            raw_value_size: 0,
            num_data_blocks: 0,
            num_entries: 0,
            num_filter_entries: 0,
            num_deletions: 0,
            num_merge_operands: 0,
            num_range_deletions: 0,
            format_version: 0,
            fixed_key_len: 0,
            column_family_id: UNKNOWN_COLUMN_FAMILY,
            creation_time: 0,
            oldest_key_time: 0,
            file_creation_time: 0,
            slow_compression_estimated_data_size: 0,
            fast_compression_estimated_data_size: 0,
            db_id: String::new(),
            db_session_id: String::new(),
            db_host_id: String::new(),
            column_family_name: String::new(),
            filter_policy_name: String::new(),
            comparator_name: String::new(),
            merge_operator_name: String::new(),
            prefix_extractor_name: String::new(),
            property_collectors_names: String::new(),
            compression_name: String::new(),
            compression_options: String::new(),
            seqno_to_time_mapping: Vec::new(),
            user_collected: BTreeMap::new(),
        }
    }
}

impl TableProperties {
    fn u64_fields(&mut self) -> [(&'static str, &mut u64); 24] {
        use names::*;
        [
            (ORIG_FILE_NUMBER, &mut self.orig_file_number),
            (DATA_SIZE, &mut self.data_size),
            (INDEX_SIZE, &mut self.index_size),
            (INDEX_PARTITIONS, &mut self.index_partitions),
            (TOP_LEVEL_INDEX_SIZE, &mut self.top_level_index_size),
            (INDEX_KEY_IS_USER_KEY, &mut self.index_key_is_user_key),
            (INDEX_VALUE_IS_DELTA_ENCODED, &mut self.index_value_is_delta_encoded),
            (FILTER_SIZE, &mut self.filter_size),
            (RAW_KEY_SIZE, &mut self.raw_key_size),
            (RAW_VALUE_SIZE, &mut self.raw_value_size),
            (NUM_DATA_BLOCKS, &mut self.num_data_blocks),
            (NUM_ENTRIES, &mut self.num_entries),
            (NUM_FILTER_ENTRIES, &mut self.num_filter_entries),
            (DELETED_KEYS, &mut self.num_deletions),
            (MERGE_OPERANDS, &mut self.num_merge_operands),
            (NUM_RANGE_DELETIONS, &mut self.num_range_deletions),
            (FORMAT_VERSION, &mut self.format_version),
            (FIXED_KEY_LEN, &mut self.fixed_key_len),
            (COLUMN_FAMILY_ID, &mut self.column_family_id),
            (CREATION_TIME, &mut self.creation_time),
            (OLDEST_KEY_TIME, &mut self.oldest_key_time),
            (FILE_CREATION_TIME, &mut self.file_creation_time),
            (SLOW_COMPRESSION_SIZE, &mut self.slow_compression_estimated_data_size),
            (FAST_COMPRESSION_SIZE, &mut self.fast_compression_estimated_data_size),
        ]
    }

    fn string_fields(&mut self) -> [(&'static str, &mut String); 11] {
        use names::*;
        [
            (DB_ID, &mut self.db_id),
            (DB_SESSION_ID, &mut self.db_session_id),
            (DB_HOST_ID, &mut self.db_host_id),
            (COLUMN_FAMILY_NAME, &mut self.column_family_name),
            (FILTER_POLICY, &mut self.filter_policy_name),
            (COMPARATOR, &mut self.comparator_name),
            (MERGE_OPERATOR, &mut self.merge_operator_name),
            (PREFIX_EXTRACTOR, &mut self.prefix_extractor_name),
            (PROPERTY_COLLECTORS, &mut self.property_collectors_names),
            (COMPRESSION, &mut self.compression_name),
            (COMPRESSION_OPTIONS, &mut self.compression_options),
        ]
    }

    /// The name -> value map RocksDB 7.8.3 would write for these properties.
    pub fn to_map(&self) -> BTreeMap<String, Vec<u8>> {
        use names::*;
        let mut copy = self.clone();
        let mut m = BTreeMap::new();
        // Always written, unless noted.
        let optional_zero = [
            INDEX_PARTITIONS,
            TOP_LEVEL_INDEX_SIZE,
            FILE_CREATION_TIME,
            SLOW_COMPRESSION_SIZE,
            FAST_COMPRESSION_SIZE,
        ];
        for (name, v) in copy.u64_fields() {
            if *v == 0 && optional_zero.contains(&name) {
                continue;
            }
            let mut enc = Vec::new();
            put_varint64(&mut enc, *v);
            m.insert(name.to_string(), enc);
        }
        if self.index_partitions == 0 {
            m.remove(TOP_LEVEL_INDEX_SIZE);
        } else {
            let mut enc = Vec::new();
            put_varint64(&mut enc, self.top_level_index_size);
            m.insert(TOP_LEVEL_INDEX_SIZE.to_string(), enc);
        }
        for (name, v) in copy.string_fields() {
            if !v.is_empty() {
                m.insert(name.to_string(), v.as_bytes().to_vec());
            }
        }
        if !self.seqno_to_time_mapping.is_empty() {
            m.insert(SEQNO_TIME_MAP.to_string(), self.seqno_to_time_mapping.clone());
        }
        for (k, v) in &self.user_collected {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        m
    }

    /// Encodes the properties block contents (without trailer).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = BlockBuilder::new(i32::MAX as usize);
        for (k, v) in self.to_map() {
            b.add(k.as_bytes(), &v);
        }
        b.finish().to_vec()
    }

    /// Decodes a properties block. Entries must be sorted; a malformed integer is skipped
    /// (as RocksDB does).
    pub fn decode(block: Vec<u8>) -> Result<TableProperties> {
        let block = Arc::new(Block::new(block)?);
        let mut props = TableProperties::default();
        let mut last: Option<Vec<u8>> = None;
        for (k, v) in block.entries()? {
            if last.as_ref().is_some_and(|l| k <= *l) {
                return Err(Error::corruption("properties unsorted"));
            }
            last = Some(k.clone());
            let name = String::from_utf8_lossy(&k).into_owned();
            if name == names::DELETED_KEYS || name == names::MERGE_OPERANDS {
                props.user_collected.insert(name.clone(), v.clone());
            }
            if let Some((_, slot)) = props.u64_fields().into_iter().find(|(n, _)| *n == name) {
                if let Some((x, _)) = decode_varint64(&v) {
                    *slot = x;
                }
                continue;
            }
            if let Some((_, slot)) = props.string_fields().into_iter().find(|(n, _)| *n == name) {
                *slot = String::from_utf8_lossy(&v).into_owned();
                continue;
            }
            if name == names::SEQNO_TIME_MAP {
                props.seqno_to_time_mapping = v;
                continue;
            }
            props.user_collected.insert(name, v);
        }
        Ok(props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_field() {
        let mut p = TableProperties {
            orig_file_number: 12,
            data_size: 4096,
            index_size: 30,
            index_key_is_user_key: 1,
            index_value_is_delta_encoded: 1,
            filter_size: 100,
            raw_key_size: 1000,
            raw_value_size: 2000,
            num_data_blocks: 3,
            num_entries: 100,
            num_filter_entries: 99,
            num_deletions: 4,
            num_merge_operands: 5,
            num_range_deletions: 1,
            column_family_id: 0,
            creation_time: 1_700_000_000,
            oldest_key_time: 1_700_000_001,
            file_creation_time: 1_700_000_002,
            db_id: "db-id".into(),
            db_session_id: "SESSION".into(),
            column_family_name: "default".into(),
            filter_policy_name: "bloomfilter".into(),
            comparator_name: "leveldb.BytewiseComparator".into(),
            merge_operator_name: "nullptr".into(),
            prefix_extractor_name: "nullptr".into(),
            property_collectors_names: "[]".into(),
            compression_name: "Snappy".into(),
            compression_options: "window_bits=-14; ".into(),
            ..Default::default()
        };
        p.user_collected.insert("my.prop".into(), b"\x00\x01".to_vec());
        let block = p.encode();
        let mut q = TableProperties::decode(block).unwrap();
        // RocksDB also reports these two in the user-collected map.
        assert_eq!(q.user_collected.remove(names::DELETED_KEYS), Some(vec![4]));
        assert_eq!(q.user_collected.remove(names::MERGE_OPERANDS), Some(vec![5]));
        assert_eq!(q, p);
        let m = p.to_map();
        assert!(!m.contains_key(names::INDEX_PARTITIONS));
        assert!(m.contains_key(names::FORMAT_VERSION));
    }

    #[test]
    fn garbage_block_is_corruption() {
        assert!(TableProperties::decode(vec![9, 9, 9]).is_err());
        let mut b = BlockBuilder::new(1);
        b.add(b"b", b"1");
        b.add(b"a", b"1");
        assert!(TableProperties::decode(b.finish().to_vec()).is_err());
    }
}
