//! RocksDB's PlainTable format (table/plain/plain_table_*.cc): records written one after
//! another in internal-key order, no blocks, no compression, no checksums.
//!
//! ```text
//! file     : record* (the data, props "rocksdb.data.size" bytes)
//!            | [bloom block] | [index block]   (only with store_index_in_file: RocksDB's
//!                                               hash index and Bloom, `stored_index.rs`)
//!            | properties block | metaindex block | footer (48 bytes, legacy plain magic)
//!            (tail and footer: table/meta_tail.rs)
//!
//! record, kPlain encoding ("rocksdb.plain.table.encoding.type" = 0, format_version 0):
//!   [key size varint32]          only when user_key_len is 0 (variable length);
//!                                the size is the user key's
//!   user key | 0xFF              when the entry has sequence 0 and type Value, else
//!   internal key                 user key | fixed64 (sequence << 8 | type)
//!   value size varint32 | value
//!
//! record, kPrefix encoding (encoding type 1, format_version 1):
//!   size entry*                  one byte: type << 6 | size (size < 0x3F), or type << 6 | 0x3F
//!                                followed by varint32 (size - 0x3F); type:
//!                                0 kFullKey: `size` is the user key's size, the key follows
//!                                1 kPrefixFromPreviousKey: `size` = prefix length; then a kKeySuffix
//!                                2 kKeySuffix: `size` = suffix size; the user key is the last
//!                                  full key's first prefix-length bytes + the suffix that follows
//!   key part | 0xFF   or   key part | fixed64 trailer   (as for kPlain)
//!   value size varint32 | value
//!   A key is written in full when its prefix differs from the previous key's, and every
//!   `index_sparseness`-th key of a prefix.
//!
//! properties: RocksDB's table properties (shared with the block-based table) with
//!   "rocksdb.fixed.key.length" = user_key_len, "rocksdb.num.data.blocks" = 1,
//!   "rocksdb.format.version" = 0 (kPlain) or 1 (kPrefix),
//!   "rocksdb.plain.table.encoding.type" = fixed32 encoding type,
//!   "rocksdb.prefix.extractor.name" = the extractor's name or "nullptr"
//! ```
//! RocksDB reads a plain table through mmap (or small read buffers) and finds keys with a
//! hash index of prefixes (built at open, or read from the index block) and a Bloom filter.
//! Shale instead reads the data part of the file into memory once at open, decodes every
//! record, checks that keys ascend, and keeps a sorted array of records: point lookups and
//! seeks are binary searches, and iterators go both ways in total order (a superset of what
//! RocksDB's prefix-mode iterator gives). A stored index block is read and checked; a stored
//! Bloom filter answers point lookups first, as RocksDB's `MatchBloom`, while the family's
//! prefix extractor is the table's. See docs/plain-table-format.md.

pub mod builder;
pub mod reader;
pub mod stored_index;

pub use builder::PlainTableBuilder;
pub use reader::PlainTable;

/// "rocksdb.plain.table.encoding.type": fixed32 0 (kPlain) or 1 (kPrefix).
pub const ENCODING_TYPE_PROPERTY: &str = "rocksdb.plain.table.encoding.type";
/// The byte after a user key that stands for "sequence 0, type Value" (RocksDB's
/// `kValueTypeSeqId0`).
pub const VALUE_TYPE_SEQ_ID_0: u8 = 0xFF;
/// Size bytes of kPrefix encoding: sizes below this are stored in the byte itself.
pub const SIZE_INLINE_LIMIT: u8 = 0x3F;
/// RocksDB's `PlainTableIndex::kMaxFileSize`: offsets are 32-bit.
pub const MAX_FILE_SIZE: u64 = (1u64 << 31) - 1;

/// Key encoding of a plain table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainEncoding {
    Plain = 0,
    Prefix = 1,
}

/// kPrefix size-entry types.
pub const FULL_KEY: u8 = 0;
pub const PREFIX_FROM_PREVIOUS_KEY: u8 = 1;
pub const KEY_SUFFIX: u8 = 2;

/// RocksDB's `PlainTableOptions`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlainTableOptions {
    /// 0: keys of any length (each record stores its key size).
    pub user_key_len: u32,
    pub bloom_bits_per_key: i32,
    pub hash_table_ratio: f64,
    pub index_sparseness: usize,
    pub huge_page_tlb_size: usize,
    pub encoding: PlainEncoding,
    pub full_scan_mode: bool,
    /// The hash index and Bloom filter are written as meta blocks (`stored_index.rs`).
    pub store_index_in_file: bool,
    /// RocksDB's `bloom_locality` (a column family option, which RocksDB's plain table
    /// builder reads): > 0 lays the stored Bloom out in cache lines.
    pub bloom_locality: u32,
}

impl Default for PlainTableOptions {
    fn default() -> Self {
        PlainTableOptions {
            user_key_len: 0,
            bloom_bits_per_key: 10,
            hash_table_ratio: 0.75,
            index_sparseness: 16,
            huge_page_tlb_size: 0,
            encoding: PlainEncoding::Plain,
            full_scan_mode: false,
            store_index_in_file: false,
            bloom_locality: 0,
        }
    }
}

/// Encodes a kPrefix size entry.
pub fn encode_size(kind: u8, size: u32, out: &mut Vec<u8>) {
    if size < u32::from(SIZE_INLINE_LIMIT) {
        out.push((kind << 6) | size as u8);
    } else {
        out.push((kind << 6) | SIZE_INLINE_LIMIT);
        crate::coding::put_varint32(out, size - u32::from(SIZE_INLINE_LIMIT));
    }
}

#[cfg(test)]
mod tests;
