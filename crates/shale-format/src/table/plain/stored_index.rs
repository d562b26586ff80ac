//! The hash index and Bloom filter a plain table stores with `store_index_in_file` (RocksDB's
//! `PlainTableIndexBuilder`, `PlainTableIndex` and `PlainTableBloomV1`, written by its
//! `PlainTableBuilder::Finish`), as meta blocks without trailers.
//!
//! ```text
//! "PlainTableIndexBlock" : index_size varint32 | num_prefixes varint32
//!                          | bucket fixed32 * index_size | sub-index bytes
//!   bucket                 : 0x7FFFFFFF            no prefix hashes to this bucket
//!                          | offset (< 2^31 - 1)   the one index record of the bucket: the
//!                                                  file offset of its record
//!                          | 0x80000000 | at       several: `at` is a position in the sub-index
//!   sub-index entry at     : count varint32 | record offset fixed32 * count (file order)
//!   index_size             : 1 in total order (no prefix extractor), else
//!                            floor(num_prefixes / hash_table_ratio) + 1; a prefix's bucket is
//!                            Hash(prefix, 397) % index_size
//!   index records          : for each prefix, its first record and then every
//!                            index_sparseness-th record of it (hash, file offset)
//!
//! "kBloomBlock"          : the filter's bits, total_bits / 8 bytes
//!   total_bits             : num_entries * bloom_bits_per_key, with bloom_locality > 0 rounded
//!                            up to an odd number of 512-bit cache lines, else to a whole
//!                            byte; property "rocksdb.plain.table.bloom.numblocks" = varint32
//!                            lines (0 without locality). No block when bloom_bits_per_key is 0
//!   keys                   : Hash(prefix, 397) of every record's prefix, or Hash(user key,
//!                            397) in total order; 6 probes, delta = h rotated right 17:
//!     lines = 0            : bit h % total_bits, h += delta, 6 times
//!     lines > 0            : line (h rotated right 11) % lines; bit h & 511 within it,
//!                            then h rotated right 9, h += delta, 6 times
//! properties             : "rocksdb.plain.table.bloom.version" = "1" (with the option on),
//!                          "rocksdb.plain.table.bloom.numblocks", filter_size, index_size
//! ```

use crate::coding::{decode_fixed32, decode_varint32, put_fixed32, put_varint32};
use crate::error::{Error, Result};
use crate::table::filter::hash32;

use super::MAX_FILE_SIZE;

/// Meta block names, as RocksDB's `PlainTableIndexBuilder::kPlainTableIndexBlock` and
/// `BloomBlockBuilder::kBloomBlock`.
pub const INDEX_BLOCK: &str = "PlainTableIndexBlock";
pub const BLOOM_BLOCK: &str = "kBloomBlock";
/// Properties RocksDB's `PlainTablePropertyNames` names.
pub const BLOOM_VERSION_PROPERTY: &str = "rocksdb.plain.table.bloom.version";
pub const NUM_BLOOM_BLOCKS_PROPERTY: &str = "rocksdb.plain.table.bloom.numblocks";

/// A bucket with several records points into the sub-index.
const SUB_INDEX_MASK: u32 = 0x8000_0000;
/// RocksDB's `CACHE_LINE_SIZE` on x86-64 and aarch64 Linux: the Bloom's lines, in bits.
const CACHE_LINE_BITS: u32 = 64 * 8;
/// RocksDB's plain table factory builds its Bloom with 6 probes.
const NUM_PROBES: u32 = 6;

/// RocksDB's `GetSliceHash`.
pub fn slice_hash(s: &[u8]) -> u32 {
    hash32(s, 397)
}

/// RocksDB's `PlainTableIndexBuilder`: collects (prefix hash, record offset) records as
/// records are written, then lays out the hash index.
#[derive(Default)]
pub struct IndexBuilder {
    index_sparseness: usize,
    /// (hash, offset) of each index record, in file order.
    records: Vec<(u32, u32)>,
    prev_prefix: Option<Vec<u8>>,
    prev_hash: u32,
    due: bool,
    num_prefixes: u32,
    keys_of_prefix: usize,
}

impl IndexBuilder {
    pub fn new(index_sparseness: usize) -> Self {
        IndexBuilder { index_sparseness, ..Default::default() }
    }

    /// The record at `offset` has prefix `prefix` (empty in total order).
    pub fn add(&mut self, prefix: &[u8], offset: u32) {
        if self.prev_prefix.as_deref() != Some(prefix) {
            self.num_prefixes += 1;
            self.keys_of_prefix = 0;
            self.prev_prefix = Some(prefix.to_vec());
            self.prev_hash = slice_hash(prefix);
            self.due = true;
        }
        if self.due {
            self.records.push((self.prev_hash, offset));
            self.due = false;
        }
        self.keys_of_prefix += 1;
        if self.index_sparseness == 0 || self.keys_of_prefix.is_multiple_of(self.index_sparseness) {
            self.due = true;
        }
    }

    /// The index block, as RocksDB's `Finish` (`AllocateIndex`, `BucketizeIndexes`,
    /// `FillIndexes`); `hash_table_ratio` <= 0 or no extractor: one bucket.
    pub fn finish(&self, total_order: bool, hash_table_ratio: f64) -> Vec<u8> {
        let index_size = if total_order || hash_table_ratio <= 0.0 {
            1
        } else {
            (f64::from(self.num_prefixes) * (1.0 / hash_table_ratio)) as u32 + 1
        };
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); index_size as usize];
        for &(hash, offset) in &self.records {
            buckets[(hash % index_size) as usize].push(offset);
        }
        let mut out = Vec::new();
        put_varint32(&mut out, index_size);
        put_varint32(&mut out, self.num_prefixes);
        let mut sub = Vec::new();
        for b in &buckets {
            let v = match b.len() {
                0 => MAX_FILE_SIZE as u32,
                1 => b[0],
                n => {
                    let at = sub.len() as u32;
                    put_varint32(&mut sub, n as u32);
                    for &o in b {
                        put_fixed32(&mut sub, o);
                    }
                    at | SUB_INDEX_MASK
                }
            };
            put_fixed32(&mut out, v);
        }
        out.extend_from_slice(&sub);
        out
    }
}

/// A stored index block, checked against the data part's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexShape {
    pub index_size: u32,
    pub num_prefixes: u32,
}

/// Checks an index block as RocksDB's `InitFromRawData` reads it, and that every offset it
/// holds lies in the data part (`data_size` bytes) and every sub-index entry in the block.
/// `at`: the block's file offset, for the error.
pub fn check_index(block: &[u8], data_size: u64, file_name: &str, at: u64) -> Result<IndexShape> {
    let bad =
        |what: &str| Error::corruption(format!("plain table index block: {what} in {file_name} offset {at}"));
    let (index_size, n1) = decode_varint32(block).ok_or_else(|| bad("Couldn't read the index size!"))?;
    let (num_prefixes, n2) =
        decode_varint32(&block[n1..]).ok_or_else(|| bad("Couldn't read the index size!"))?;
    let buckets_at = n1 + n2;
    let sub_at = (index_size as usize).checked_mul(4).and_then(|n| n.checked_add(buckets_at));
    let sub_at = match sub_at {
        Some(s) if index_size > 0 && s <= block.len() => s,
        _ => return Err(bad(&format!("{index_size} buckets do not fit"))),
    };
    let sub = &block[sub_at..];
    let in_data = |o: u32| u64::from(o) < data_size;
    for i in 0..index_size as usize {
        let v = decode_fixed32(&block[buckets_at + 4 * i..]);
        if v & SUB_INDEX_MASK != 0 {
            let p = (v ^ SUB_INDEX_MASK) as usize;
            let (count, n) =
                sub.get(p..).and_then(decode_varint32).ok_or_else(|| bad("sub-index past its end"))?;
            let entries =
                sub.get(p + n..p + n + 4 * count as usize).ok_or_else(|| bad("sub-index past its end"))?;
            if entries.chunks_exact(4).any(|c| !in_data(decode_fixed32(c))) {
                return Err(bad("sub-index offset past the data"));
            }
        } else if v < MAX_FILE_SIZE as u32 && !in_data(v) {
            return Err(bad("bucket offset past the data"));
        }
    }
    Ok(IndexShape { index_size, num_prefixes })
}

/// RocksDB's `PlainTableBloomV1` (with its extra rotations, as the plain table uses it).
#[derive(Debug, Clone)]
pub struct PlainBloom {
    bits: Vec<u8>,
    /// Cache lines; 0: no locality, probes over all bits.
    lines: u32,
}

impl PlainBloom {
    /// An empty filter of about `total_bits` bits, as RocksDB's `SetTotalBits`.
    pub fn new(total_bits: u32, locality: u32) -> Self {
        let (total, lines) = if locality > 0 {
            let mut lines = total_bits.div_ceil(CACHE_LINE_BITS);
            if lines.is_multiple_of(2) {
                lines += 1;
            }
            (lines * CACHE_LINE_BITS, lines)
        } else {
            (total_bits.div_ceil(8) * 8, 0)
        };
        PlainBloom { bits: vec![0; (total / 8) as usize], lines }
    }

    /// A filter read from a file: its bytes and the number of lines the table's property says.
    pub fn from_raw(bits: Vec<u8>, lines: u32) -> Self {
        PlainBloom { bits, lines }
    }

    pub fn lines(&self) -> u32 {
        self.lines
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bits
    }

    /// The bits `h` probes: (byte index, bit mask) each, in RocksDB's probe order.
    fn probes(&self, mut h: u32) -> [(usize, u8); NUM_PROBES as usize] {
        let delta = h.rotate_right(17);
        let mut out = [(0usize, 0u8); NUM_PROBES as usize];
        if self.lines > 0 {
            let base = (h.rotate_right(11) % self.lines) as usize * (CACHE_LINE_BITS / 8) as usize;
            for o in &mut out {
                let bit = h & (CACHE_LINE_BITS - 1);
                *o = (base + (bit / 8) as usize, 1 << (bit % 8));
                h = h.rotate_right(CACHE_LINE_BITS.trailing_zeros()).wrapping_add(delta);
            }
        } else {
            let total = (self.bits.len() as u32).saturating_mul(8).max(1);
            for o in &mut out {
                let bit = h % total;
                *o = ((bit / 8) as usize, 1 << (bit % 8));
                h = h.wrapping_add(delta);
            }
        }
        out
    }

    pub fn add(&mut self, h: u32) {
        for (p, m) in self.probes(h) {
            if let Some(b) = self.bits.get_mut(p) {
                *b |= m;
            }
        }
    }

    pub fn may_contain(&self, h: u32) -> bool {
        if self.bits.is_empty() {
            return true;
        }
        self.probes(h).iter().all(|&(p, m)| self.bits.get(p).is_some_and(|b| b & m != 0))
    }
}
