//! Writes a plain table (layout in `table/plain/mod.rs`) as RocksDB's PlainTableBuilder
//! does: the records, then (with `store_index_in_file` and at least one record) the Bloom
//! and hash index blocks (`stored_index.rs`), properties, metaindex and a format_version 0
//! footer.
//!
//! ```text
//! add    : record = [key size] key (| 0xFF for sequence 0 + Value) | value size | value
//! finish : [bloom block] | [index block] | properties block | metaindex block
//!          | footer (48 bytes)
//! ```

use std::cmp::Ordering;

use crate::coding::{put_fixed32, put_varint32};
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::key::{parse_internal_key, ValueType};
use crate::table::builder::{TableBuildResult, TableBuilderOptions};
use crate::table::deletion_collector::CompactOnDeletionCollector;
use crate::table::meta_tail::{write_raw_tail, PLAIN_TABLE_MAGIC};
use crate::table::properties::TableProperties;

use super::stored_index::{
    slice_hash, IndexBuilder, PlainBloom, BLOOM_BLOCK, BLOOM_VERSION_PROPERTY, INDEX_BLOCK,
    NUM_BLOOM_BLOCKS_PROPERTY,
};
use super::{
    encode_size, PlainEncoding, PlainTableOptions, ENCODING_TYPE_PROPERTY, FULL_KEY, KEY_SUFFIX,
    MAX_FILE_SIZE, PREFIX_FROM_PREVIOUS_KEY, VALUE_TYPE_SEQ_ID_0,
};
use crate::table::format::BlockHandle;

/// Builds one plain table file.
pub struct PlainTableBuilder {
    opts: TableBuilderOptions,
    popts: PlainTableOptions,
    file: Box<dyn WritableFile>,
    offset: u64,
    props: TableProperties,
    last_key: Vec<u8>,
    /// kPrefix: the prefix of the last key written in full and how many keys of it so far.
    pre_prefix: Vec<u8>,
    key_count_for_prefix: usize,
    buf: Vec<u8>,
    collectors: Vec<CompactOnDeletionCollector>,
    /// `store_index_in_file`: the hash of each record's prefix (or user key in total order)
    /// for the Bloom, and the hash index being collected.
    key_hashes: Vec<u32>,
    index: Option<IndexBuilder>,
}

impl PlainTableBuilder {
    pub fn new(opts: TableBuilderOptions, mut popts: PlainTableOptions, file: Box<dyn WritableFile>) -> Self {
        let file: Box<dyn WritableFile> = match &opts.rate_limiter {
            Some((limiter, pri)) => Box::new(crate::rate_limiter::RateLimitedFile {
                inner: file,
                limiter: limiter.clone(),
                pri: *pri,
                stats: opts.rate_limiter_stats.clone(),
            }),
            None => file,
        };
        let mut props = TableProperties {
            column_family_id: opts.column_family_id as u64,
            column_family_name: opts.column_family_name.clone(),
            orig_file_number: opts.orig_file_number,
            db_id: opts.db_id.clone(),
            db_session_id: opts.db_session_id.clone(),
            db_host_id: opts.db_host_id.clone(),
            fixed_key_len: u64::from(popts.user_key_len),
            num_data_blocks: 1,
            format_version: if popts.encoding == PlainEncoding::Plain { 0 } else { 1 },
            ..Default::default()
        };
        // RocksDB 11.8.1's `PlainTableKeyEncoder` encodes with kPlain when the family has no
        // prefix extractor, whatever encoding was asked for: the encoding property records
        // kPlain while `format_version` above still follows the encoding asked for.
        if opts.prefix_extractor.is_none() {
            popts.encoding = PlainEncoding::Plain;
        }
        let mut enc = Vec::new();
        put_fixed32(&mut enc, popts.encoding as u32);
        props.user_collected.insert(ENCODING_TYPE_PROPERTY.to_string(), enc);
        if popts.store_index_in_file {
            props.user_collected.insert(BLOOM_VERSION_PROPERTY.to_string(), b"1".to_vec());
        }
        let index = popts.store_index_in_file.then(|| IndexBuilder::new(popts.index_sparseness));
        PlainTableBuilder {
            collectors: opts.collectors.iter().filter_map(|f| f.new_collector()).collect(),
            opts,
            popts,
            file,
            offset: 0,
            props,
            last_key: Vec::new(),
            pre_prefix: Vec::new(),
            key_count_for_prefix: 0,
            buf: Vec::new(),
            key_hashes: Vec::new(),
            index,
        }
    }

    /// Adds an entry; internal keys must arrive in increasing order. Range deletions are
    /// refused, as RocksDB's plain tables refuse them.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let pk = parse_internal_key(ikey)?;
        if pk.value_type == ValueType::RangeDeletion {
            return Err(Error::not_supported("Range deletion unsupported in a plain table"));
        }
        if self.props.num_entries > 0 && self.opts.icmp.compare(ikey, &self.last_key) != Ordering::Greater {
            return Err(Error::invalid_argument("table keys must be added in increasing internal-key order"));
        }
        let uk = pk.user_key;
        let fixed = self.popts.user_key_len as usize;
        if fixed != 0 && uk.len() != fixed {
            return Err(Error::invalid_argument(format!(
                "a key of {} bytes in a plain table with user_key_len {fixed}",
                uk.len()
            )));
        }
        self.buf.clear();
        let mut key_part = ikey;
        match self.popts.encoding {
            PlainEncoding::Plain => {
                if fixed == 0 {
                    put_varint32(&mut self.buf, uk.len() as u32);
                }
            }
            PlainEncoding::Prefix => {
                let prefix = match self.opts.prefix_extractor.as_deref() {
                    Some(t) => t.transform(uk).unwrap_or(uk),
                    None => {
                        return Err(Error::invalid_argument(
                            "plain table kPrefix encoding needs a prefix extractor",
                        ))
                    }
                };
                let sparseness = self.popts.index_sparseness.max(1);
                if self.key_count_for_prefix == 0
                    || prefix != self.pre_prefix.as_slice()
                    || self.key_count_for_prefix.is_multiple_of(sparseness)
                {
                    self.key_count_for_prefix = 1;
                    self.pre_prefix.clear();
                    self.pre_prefix.extend_from_slice(prefix);
                    encode_size(FULL_KEY, uk.len() as u32, &mut self.buf);
                } else {
                    self.key_count_for_prefix += 1;
                    let plen = self.pre_prefix.len();
                    if self.key_count_for_prefix == 2 {
                        encode_size(PREFIX_FROM_PREVIOUS_KEY, plen as u32, &mut self.buf);
                    }
                    encode_size(KEY_SUFFIX, (uk.len() - plen) as u32, &mut self.buf);
                    key_part = &ikey[plen..];
                }
            }
        }
        if pk.sequence == 0 && pk.value_type == ValueType::Value {
            self.buf.extend_from_slice(&key_part[..key_part.len() - 8]);
            self.buf.push(VALUE_TYPE_SEQ_ID_0);
        } else {
            self.buf.extend_from_slice(key_part);
        }
        put_varint32(&mut self.buf, value.len() as u32);
        let new_offset = self.offset + self.buf.len() as u64 + value.len() as u64;
        if new_offset > MAX_FILE_SIZE {
            return Err(Error::not_supported(format!(
                "a plain table larger than {MAX_FILE_SIZE} bytes (its offsets are 32-bit)"
            )));
        }
        if let Some(index) = self.index.as_mut() {
            // RocksDB's `GetPrefix`: the extractor's prefix, empty in total order (the Bloom
            // then takes the whole user key).
            let prefix = match self.opts.prefix_extractor.as_deref() {
                Some(t) => t.transform(uk).unwrap_or(uk),
                None => &[],
            };
            self.key_hashes.push(slice_hash(if self.opts.prefix_extractor.is_some() { prefix } else { uk }));
            index.add(prefix, self.offset as u32);
        }
        self.file.append(&self.buf)?;
        self.file.append(value)?;
        self.offset = new_offset;
        let del = matches!(pk.value_type, ValueType::Deletion | ValueType::SingleDeletion);
        for c in &mut self.collectors {
            c.add(del, self.offset);
        }
        let p = &mut self.props;
        p.num_entries += 1;
        p.raw_key_size += ikey.len() as u64;
        p.raw_value_size += value.len() as u64;
        if del {
            p.num_deletions += 1;
        } else if pk.value_type == ValueType::Merge {
            p.num_merge_operands += 1;
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        Ok(())
    }

    /// Range tombstones cannot be stored in a plain table (RocksDB's NotSupported).
    pub fn add_range_tombstone(&mut self, _start_ikey: &[u8], _end_user_key: &[u8]) -> Result<()> {
        Err(Error::not_supported("Range deletion unsupported in a plain table"))
    }

    pub fn set_user_property(&mut self, name: &str, value: Vec<u8>) {
        self.props.user_collected.insert(name.to_string(), value);
    }

    pub fn num_entries(&self) -> u64 {
        self.props.num_entries
    }

    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// Writes properties, metaindex and footer, then syncs the file.
    pub fn finish(mut self) -> Result<TableBuildResult> {
        self.props.data_size = self.offset;
        self.props.comparator_name = self.opts.icmp.user_comparator().name().to_string();
        self.props.prefix_extractor_name = match &self.opts.prefix_extractor {
            Some(t) => t.name().to_string(),
            None => "nullptr".to_string(),
        };
        let mut meta = Vec::new();
        if let (Some(index), true) = (self.index.as_ref(), self.props.num_entries > 0) {
            let bits_per_key = u32::try_from(self.popts.bloom_bits_per_key).unwrap_or(0);
            if bits_per_key > 0 {
                let total =
                    u32::try_from(self.props.num_entries).unwrap_or(u32::MAX).saturating_mul(bits_per_key);
                let mut bloom = PlainBloom::new(total, self.popts.bloom_locality);
                let mut lines = Vec::new();
                put_varint32(&mut lines, bloom.lines());
                self.props.user_collected.insert(NUM_BLOOM_BLOCKS_PROPERTY.to_string(), lines);
                for &h in &self.key_hashes {
                    bloom.add(h);
                }
                self.file.append(bloom.bytes())?;
                meta.push((
                    BLOOM_BLOCK.to_string(),
                    BlockHandle::new(self.offset, bloom.bytes().len() as u64),
                ));
                self.props.filter_size = bloom.bytes().len() as u64;
                self.offset += bloom.bytes().len() as u64;
            }
            let block = index.finish(self.opts.prefix_extractor.is_none(), self.popts.hash_table_ratio);
            self.file.append(&block)?;
            meta.push((INDEX_BLOCK.to_string(), BlockHandle::new(self.offset, block.len() as u64)));
            self.props.index_size = block.len() as u64;
            self.offset += block.len() as u64;
        }
        let end = write_raw_tail(self.file.as_mut(), self.offset, &self.props, meta, PLAIN_TABLE_MAGIC, 0)?;
        self.file.flush()?;
        self.file.sync()?;
        let mut marked_for_compaction = false;
        for c in &mut self.collectors {
            marked_for_compaction |= c.finish();
        }
        Ok(TableBuildResult { file_size: end, properties: self.props, marked_for_compaction })
    }
}
