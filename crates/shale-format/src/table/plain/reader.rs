//! Reads plain tables (layout in `table/plain/mod.rs`) written by Shale or RocksDB, in
//! either key encoding, with or without RocksDB's stored index and Bloom blocks
//! (`stored_index.rs`).
//!
//! ```text
//! open : footer -> metaindex -> properties ("rocksdb.data.size", fixed key length,
//!        encoding type) -> the data part [0, data size) read into memory once
//!        -> every record decoded: keys (internal keys, materialized) and value positions,
//!           keys checked to ascend
//!        -> a stored index block read and checked (offsets inside the data), a stored
//!           Bloom block kept
//! get  : the stored Bloom asked first (prefix hash, or user-key hash in total order;
//!        only while the family's extractor is the table's), then binary search for the
//!        first key >= the lookup key
//! iter : a position in the sorted records (seek, next, prev, first, last)
//! ```
//! Damaged data gives Corruption naming the file and the record's offset.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::coding::{decode_fixed32, decode_varint32};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::key::{pack_seq_and_type, parse_internal_key, user_key, InternalKeyComparator, ValueType};
use crate::table::format::read_exact_at;
use crate::table::meta_tail::read_raw_tail;
use crate::table::properties::TableProperties;

use super::{
    PlainEncoding, ENCODING_TYPE_PROPERTY, FULL_KEY, KEY_SUFFIX, MAX_FILE_SIZE, PREFIX_FROM_PREVIOUS_KEY,
    SIZE_INLINE_LIMIT, VALUE_TYPE_SEQ_ID_0,
};

/// An open plain table.
pub struct PlainTable {
    icmp: InternalKeyComparator,
    file_name: String,
    props: TableProperties,
    /// The data part of the file.
    data: Vec<u8>,
    /// Every internal key, one after another; `key_starts[i]..key_starts[i + 1]` is key i.
    keys: Vec<u8>,
    key_starts: Vec<u32>,
    /// Value i is `data[values[i].0..values[i].0 + values[i].1]`.
    values: Vec<(u32, u32)>,
    /// RocksDB's `full_scan_mode`: only scans from the first key are allowed.
    full_scan_mode: bool,
    /// The stored Bloom filter, with the extractor its hashes were taken by (None: whole
    /// user keys, total order); set only when the family's extractor is the table's.
    bloom: Option<(super::stored_index::PlainBloom, Option<crate::slice_transform::SliceTransformRef>)>,
    /// The stored hash index's shape, when the table has one.
    stored_index: Option<super::stored_index::IndexShape>,
}

/// Decodes records of the data part one after another.
struct RecordDecoder<'a> {
    data: &'a [u8],
    fixed_key_len: usize,
    encoding: PlainEncoding,
    /// kPrefix: the last key written in full, and the prefix length of suffix records.
    saved_user_key: Vec<u8>,
    prefix_len: usize,
    file_name: &'a str,
}

impl<'a> RecordDecoder<'a> {
    /// A prefix record needs an earlier full key at least `size` bytes long.
    fn prefix_len_unset_or_bad(&self, size: usize) -> bool {
        self.saved_user_key.is_empty() || size > self.saved_user_key.len()
    }

    fn corrupt(&self, what: &str, at: usize) -> Error {
        Error::corruption(format!("plain table: {what} in {} offset {at}", self.file_name))
    }

    fn varint32(&self, at: usize) -> Result<(u32, usize)> {
        self.data.get(at..).and_then(decode_varint32).ok_or_else(|| self.corrupt("bad varint32", at))
    }

    /// Reads a key part of `size` user-key bytes at `at`: appends the internal key (with
    /// `prefix` before the part) to `out`; returns the bytes consumed.
    fn key_part(&self, at: usize, size: usize, prefix: &[u8], out: &mut Vec<u8>) -> Result<usize> {
        let short = || self.corrupt("key runs past the data", at);
        let end = at.checked_add(size + 1).filter(|&e| e <= self.data.len()).ok_or_else(short)?;
        out.extend_from_slice(prefix);
        if self.data[end - 1] == VALUE_TYPE_SEQ_ID_0 {
            out.extend_from_slice(&self.data[at..end - 1]);
            out.extend_from_slice(&pack_seq_and_type(0, ValueType::Value).to_le_bytes());
            return Ok(size + 1);
        }
        let end = at.checked_add(size + 8).filter(|&e| e <= self.data.len()).ok_or_else(short)?;
        out.extend_from_slice(&self.data[at..end]);
        parse_internal_key(&out[out.len() - prefix.len() - size - 8..]).map_err(|e| {
            self.corrupt(&format!("bad internal key ({})", crate::table::format::strip_prefix(&e)), at)
        })?;
        Ok(size + 8)
    }

    /// Decodes the record at `at`: appends its internal key to `keys`; returns the value's
    /// position and the offset of the next record.
    fn next(&mut self, at: usize, keys: &mut Vec<u8>) -> Result<((u32, u32), usize)> {
        let mut pos = at;
        match self.encoding {
            PlainEncoding::Plain => {
                let size = if self.fixed_key_len == 0 {
                    let (n, used) = self.varint32(pos)?;
                    pos += used;
                    n as usize
                } else {
                    self.fixed_key_len
                };
                pos += self.key_part(pos, size, &[], keys)?;
            }
            PlainEncoding::Prefix => loop {
                let b = *self.data.get(pos).ok_or_else(|| self.corrupt("record runs past the data", pos))?;
                let kind = (b & !SIZE_INLINE_LIMIT) >> 6;
                let mut size = usize::from(b & SIZE_INLINE_LIMIT);
                pos += 1;
                if size == usize::from(SIZE_INLINE_LIMIT) {
                    let (extra, used) = self.varint32(pos)?;
                    size += extra as usize;
                    pos += used;
                }
                match kind {
                    FULL_KEY => {
                        let start = keys.len();
                        pos += self.key_part(pos, size, &[], keys)?;
                        self.saved_user_key.clear();
                        self.saved_user_key.extend_from_slice(user_key(&keys[start..]));
                        break;
                    }
                    PREFIX_FROM_PREVIOUS_KEY => {
                        if self.prefix_len_unset_or_bad(size) {
                            return Err(self.corrupt("prefix longer than the previous full key", pos));
                        }
                        self.prefix_len = size;
                    }
                    KEY_SUFFIX => {
                        if self.prefix_len > self.saved_user_key.len() {
                            return Err(self.corrupt("key suffix without a prefix", pos));
                        }
                        let prefix = self.saved_user_key[..self.prefix_len].to_vec();
                        pos += self.key_part(pos, size, &prefix, keys)?;
                        break;
                    }
                    _ => return Err(self.corrupt(&format!("unknown key entry type {kind}"), pos - 1)),
                }
            },
        }
        let (vlen, used) = self.varint32(pos)?;
        pos += used;
        let end = pos.checked_add(vlen as usize).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| self.corrupt("value runs past the data", pos))?;
        Ok(((pos as u32, vlen), end))
    }
}

impl PlainTable {
    /// Opens the plain table `file` of `file_size` bytes; `full_scan_mode` as RocksDB's
    /// PlainTableOptions (point lookups and seeks fail with InvalidArgument).
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        icmp: InternalKeyComparator,
        file_name: &str,
        full_scan_mode: bool,
    ) -> Result<Arc<PlainTable>> {
        Self::open_for_cf(file, file_size, icmp, file_name, full_scan_mode, None)
    }

    /// `open` in a family with `prefix_extractor`: a stored Bloom filter is used when the
    /// table was built with the same extractor (by name; none and none in total order).
    pub fn open_for_cf(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        icmp: InternalKeyComparator,
        file_name: &str,
        full_scan_mode: bool,
        prefix_extractor: Option<crate::slice_transform::SliceTransformRef>,
    ) -> Result<Arc<PlainTable>> {
        if file_size > MAX_FILE_SIZE {
            return Err(Error::not_supported(format!(
                "File size {file_size} exceeds PlainTableReader max file size {MAX_FILE_SIZE}: {file_name}"
            )));
        }
        let tail = read_raw_tail(file.as_ref(), file_size, file_name)?;
        let props = tail.props;
        let props_at = tail.meta.get(crate::table::properties::PROPERTIES_BLOCK).map_or(0, |h| h.offset);
        let ours = icmp.user_comparator().name();
        if !props.comparator_name.is_empty() && props.comparator_name != ours {
            return Err(crate::table::reader::comparator_mismatch(file_name, ours, &props.comparator_name));
        }
        let encoding = match props.user_collected.get(ENCODING_TYPE_PROPERTY) {
            None => PlainEncoding::Plain,
            Some(v) if v.len() == 4 => match decode_fixed32(v) {
                0 => PlainEncoding::Plain,
                1 => PlainEncoding::Prefix,
                t => {
                    return Err(Error::corruption(format!(
                        "unknown plain table encoding type {t} in {file_name} offset {props_at}"
                    )))
                }
            },
            Some(_) => {
                return Err(Error::corruption(format!(
                    "malformed plain table encoding type in {file_name} offset {props_at}"
                )))
            }
        };
        // The data ends where the first meta block starts.
        let data_end = tail.meta.values().map(|h| h.offset).min().unwrap_or(tail.footer.footer_offset);
        if props.data_size > data_end {
            return Err(Error::corruption(format!(
                "data size {} runs into the meta blocks in {file_name} offset {data_end}",
                props.data_size
            )));
        }
        let mut data = vec![0u8; props.data_size as usize];
        read_exact_at(file.as_ref(), 0, &mut data, file_name)?;
        let fixed_key_len = usize::try_from(props.fixed_key_len).unwrap_or(usize::MAX);
        let mut keys = Vec::new();
        let mut key_starts = Vec::new();
        let mut values = Vec::new();
        {
            let mut dec = RecordDecoder {
                data: &data,
                fixed_key_len,
                encoding,
                saved_user_key: Vec::new(),
                prefix_len: usize::MAX,
                file_name,
            };
            let mut pos = 0;
            let mut prev_start = 0usize;
            while pos < data.len() {
                let start = keys.len();
                let (v, next) = dec.next(pos, &mut keys)?;
                if !key_starts.is_empty()
                    && icmp.compare(&keys[prev_start..start], &keys[start..]) != Ordering::Less
                {
                    return Err(Error::corruption(format!(
                        "plain table: keys out of order in {file_name} offset {pos}"
                    )));
                }
                key_starts.push(start as u32);
                values.push(v);
                prev_start = start;
                pos = next;
            }
        }
        key_starts.push(keys.len() as u32);
        if (values.len() as u64) != props.num_entries {
            return Err(Error::corruption(format!(
                "plain table: {} records where the properties say {} in {file_name} offset 0",
                values.len(),
                props.num_entries
            )));
        }
        // RocksDB's `PopulateIndex`: the Bloom block counts only with an index block.
        let read_block = |h: &crate::table::format::BlockHandle| -> Result<Vec<u8>> {
            let end = h.offset.checked_add(h.size).filter(|&e| e <= tail.footer.footer_offset);
            if end.is_none() {
                return Err(Error::corruption(format!(
                    "plain table meta block of {} bytes runs past the footer in {file_name} offset {}",
                    h.size, h.offset
                )));
            }
            let mut b = vec![0u8; h.size as usize];
            read_exact_at(file.as_ref(), h.offset, &mut b, file_name)?;
            Ok(b)
        };
        let mut stored_index = None;
        let mut bloom = None;
        if let Some(ih) = tail.meta.get(super::stored_index::INDEX_BLOCK) {
            let block = read_block(ih)?;
            stored_index =
                Some(super::stored_index::check_index(&block, props.data_size, file_name, ih.offset)?);
            let same_extractor = match &prefix_extractor {
                Some(t) => props.prefix_extractor_name == t.name(),
                None => matches!(props.prefix_extractor_name.as_str(), "" | "nullptr"),
            };
            if let (Some(bh), true) = (tail.meta.get(super::stored_index::BLOOM_BLOCK), same_extractor) {
                let bits = read_block(bh)?;
                if !bits.is_empty() {
                    let lines = props
                        .user_collected
                        .get(super::stored_index::NUM_BLOOM_BLOCKS_PROPERTY)
                        .and_then(|v| decode_varint32(v))
                        .map_or(0, |(n, _)| n);
                    // A line count the bits cannot hold is read as none (RocksDB would read
                    // past the block).
                    let lines = if (lines as usize) * 64 <= bits.len() { lines } else { 0 };
                    bloom = Some((super::stored_index::PlainBloom::from_raw(bits, lines), prefix_extractor));
                }
            }
        }
        Ok(Arc::new(PlainTable {
            icmp,
            file_name: file_name.to_string(),
            props,
            data,
            keys,
            key_starts,
            values,
            full_scan_mode,
            bloom,
            stored_index,
        }))
    }

    /// The stored hash index's shape (buckets, prefixes), when the table has one.
    pub fn stored_index(&self) -> Option<super::stored_index::IndexShape> {
        self.stored_index
    }

    /// Whether the stored Bloom filter (if used) may hold `user_key`, as RocksDB's
    /// `MatchBloom` in `Get` (counting the perf context's SST Bloom hits and misses).
    pub(super) fn bloom_may_match(&self, user_key: &[u8]) -> bool {
        let Some((bloom, extractor)) = &self.bloom else { return true };
        let h = match extractor {
            Some(t) => match t.transform(user_key) {
                Some(p) => super::stored_index::slice_hash(p),
                // A key outside the extractor's domain: no prefix to ask for.
                None => return true,
            },
            None => super::stored_index::slice_hash(user_key),
        };
        let may = bloom.may_contain(h);
        crate::perf::count(
            if may { crate::perf::Field::BloomSstHitCount } else { crate::perf::Field::BloomSstMissCount },
            1,
        );
        may
    }

    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn key(&self, i: usize) -> &[u8] {
        &self.keys[self.key_starts[i] as usize..self.key_starts[i + 1] as usize]
    }

    fn value(&self, i: usize) -> &[u8] {
        let (o, n) = self.values[i];
        &self.data[o as usize..o as usize + n as usize]
    }

    /// The index of the first key >= `target`.
    fn lower_bound(&self, target: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.icmp.compare(self.key(mid), target) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Memory held: the data part, the decoded keys and the record array.
    pub fn approximate_memory_usage(&self) -> usize {
        self.data.len() + self.keys.len() + self.key_starts.len() * 4 + self.values.len() * 8
    }

    /// The first entry at or after `lookup_ikey` if it has the same user key.
    pub fn get(&self, lookup_ikey: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.full_scan_mode {
            return Err(Error::invalid_argument(format!(
                "Get() is not allowed in full scan mode: {}",
                self.file_name
            )));
        }
        if !self.bloom_may_match(user_key(lookup_ikey)) {
            return Ok(None);
        }
        let i = self.lower_bound(lookup_ikey);
        if i < self.len()
            && self.icmp.compare_user_without_ts(user_key(self.key(i)), user_key(lookup_ikey))
                == Ordering::Equal
        {
            return Ok(Some((self.key(i).to_vec(), self.value(i).to_vec())));
        }
        Ok(None)
    }

    /// The approximate file offset where `ikey` would be.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let i = self.lower_bound(ikey);
        if i < self.len() {
            u64::from(self.values[i].0)
        } else {
            self.props.data_size
        }
    }

    pub fn iter(self: &Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(PlainTableIter { table: self.clone(), pos: usize::MAX, status: Ok(()) })
    }
}

/// An iterator over a plain table's records in key order.
struct PlainTableIter {
    table: Arc<PlainTable>,
    /// usize::MAX: not valid.
    pos: usize,
    status: Result<()>,
}

impl PlainTableIter {
    fn seek_allowed(&mut self) -> bool {
        if self.table.full_scan_mode {
            self.status = Err(Error::invalid_argument(format!(
                "Seek() is not allowed in full scan mode: {}",
                self.table.file_name
            )));
            self.pos = usize::MAX;
            return false;
        }
        true
    }

    fn set(&mut self, i: usize) {
        self.pos = if i < self.table.len() { i } else { usize::MAX };
    }
}

impl InternalIterator for PlainTableIter {
    fn valid(&self) -> bool {
        self.pos != usize::MAX
    }
    fn seek_to_first(&mut self) {
        self.status = Ok(());
        self.set(0);
    }
    fn seek_to_last(&mut self) {
        self.status = Ok(());
        if self.seek_allowed() {
            self.set(self.table.len().wrapping_sub(1));
        }
    }
    fn seek(&mut self, target: &[u8]) {
        self.status = Ok(());
        if self.seek_allowed() {
            let i = self.table.lower_bound(target);
            self.set(i);
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.status = Ok(());
        if self.seek_allowed() {
            let i = self.table.lower_bound(target);
            if i < self.table.len() && self.table.icmp.compare(self.table.key(i), target) == Ordering::Equal {
                self.set(i);
            } else {
                self.set(i.wrapping_sub(1));
            }
        }
    }
    fn next(&mut self) {
        if self.valid() {
            self.set(self.pos + 1);
        }
    }
    fn prev(&mut self) {
        if self.valid() {
            self.set(self.pos.wrapping_sub(1));
        }
    }
    fn key(&self) -> &[u8] {
        self.table.key(self.pos)
    }
    fn value(&self) -> &[u8] {
        self.table.value(self.pos)
    }
    fn status(&self) -> Result<()> {
        self.status.clone()
    }
}
