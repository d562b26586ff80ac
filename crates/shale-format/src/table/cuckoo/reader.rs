//! Reads cuckoo tables (layout in `table/cuckoo/mod.rs`) written by Shale or RocksDB.
//!
//! ```text
//! open : footer -> metaindex -> properties (hash parameters, key and value lengths)
//!        -> the bucket area [0, data size) read into memory once (RocksDB mmaps the file)
//! get  : probe the buckets of each hash function (see mod.rs); the empty key ends it
//! iter : as RocksDB's CuckooTableIterator: the non-empty buckets sorted by user key, built
//!        on the first seek (once per open table, shared by its iterators)
//! ```
//! Damaged properties or a bucket area shorter than the hash table give Corruption naming
//! the file and offset.

use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use crate::coding::{decode_fixed32, decode_fixed64};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::key::{
    pack_seq_and_type, parse_internal_key, trailer, user_key, InternalKeyComparator, ValueType,
};
use crate::table::format::read_exact_at;
use crate::table::meta_tail::read_raw_tail;
use crate::table::properties::TableProperties;

use super::{
    cuckoo_hash, CUCKOO_BLOCK_SIZE, EMPTY_KEY, HASH_TABLE_SIZE, IDENTITY_AS_FIRST_HASH, IS_LAST_LEVEL,
    NUM_HASH_FUNC, USER_KEY_LENGTH, USE_MODULE_HASH, VALUE_LENGTH,
};

/// An open cuckoo table.
pub struct CuckooTable {
    icmp: InternalKeyComparator,
    file_name: String,
    props: TableProperties,
    data: Vec<u8>,
    is_last_level: bool,
    identity_as_first_hash: bool,
    use_module_hash: bool,
    num_hash_func: u32,
    key_len: usize,
    user_key_len: usize,
    value_len: usize,
    bucket_len: usize,
    cuckoo_block_size: u64,
    table_size: u64,
    empty_key: Vec<u8>,
    /// Non-empty bucket numbers sorted by user key (built on the first iterator seek).
    sorted: OnceLock<Vec<u32>>,
}

impl CuckooTable {
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        icmp: InternalKeyComparator,
        file_name: &str,
    ) -> Result<Arc<CuckooTable>> {
        let tail = read_raw_tail(file.as_ref(), file_size, file_name)?;
        let props = tail.props;
        let props_at = tail.meta.values().map(|h| h.offset).min().unwrap_or(0);
        let corrupt = |what: String| {
            Error::corruption(format!("cuckoo table: {what} in {file_name} offset {props_at}"))
        };
        let ours = icmp.user_comparator().name();
        if !props.comparator_name.is_empty() && props.comparator_name != ours {
            return Err(crate::table::reader::comparator_mismatch(file_name, ours, &props.comparator_name));
        }
        let get = |name: &str, len: usize, what: &str| -> Result<Vec<u8>> {
            match props.user_collected.get(name) {
                Some(v) if v.len() >= len => Ok(v.clone()),
                Some(_) => Err(corrupt(format!("{what} malformed"))),
                None => Err(corrupt(format!("{what} not found"))),
            }
        };
        let num_hash_func = decode_fixed32(&get(NUM_HASH_FUNC, 4, "Number of hash functions")?);
        let empty_key = get(EMPTY_KEY, 0, "Empty bucket value")?;
        let key_len = usize::try_from(props.fixed_key_len).map_err(|_| corrupt("key length".into()))?;
        let user_key_len = decode_fixed32(&get(USER_KEY_LENGTH, 4, "User key length")?) as usize;
        let value_len = decode_fixed32(&get(VALUE_LENGTH, 4, "Value length")?) as usize;
        let table_size = decode_fixed64(&get(HASH_TABLE_SIZE, 8, "Hash table size")?);
        let is_last_level = get(IS_LAST_LEVEL, 1, "Is last level")?[0] != 0;
        let identity_as_first_hash = get(IDENTITY_AS_FIRST_HASH, 1, "identity as first hash")?[0] != 0;
        let use_module_hash = get(USE_MODULE_HASH, 1, "hash type")?[0] != 0;
        let cuckoo_block_size = u64::from(decode_fixed32(&get(CUCKOO_BLOCK_SIZE, 4, "Cuckoo block size")?));
        if props.num_entries > 0 {
            let want_key = if is_last_level { user_key_len } else { user_key_len + 8 };
            if key_len != want_key
                || empty_key.len() != key_len
                || num_hash_func == 0
                || cuckoo_block_size == 0
            {
                return Err(corrupt(format!(
                    "inconsistent lengths (key {key_len}, user key {user_key_len}, empty key {}, hash functions {num_hash_func}, block {cuckoo_block_size})",
                    empty_key.len()
                )));
            }
            if table_size == 0 || !use_module_hash && !table_size.is_power_of_two() {
                return Err(corrupt(format!("hash table size {table_size} not a power of two")));
            }
        }
        let bucket_len = key_len + value_len;
        let num_buckets =
            if props.num_entries > 0 { table_size.checked_add(cuckoo_block_size - 1) } else { Some(0) };
        let need = num_buckets.and_then(|n| n.checked_mul(bucket_len as u64));
        let data_end = tail.meta.values().map(|h| h.offset).min().unwrap_or(tail.footer.footer_offset);
        match need {
            Some(n) if n <= props.data_size && props.data_size <= data_end => {}
            _ => {
                return Err(corrupt(format!(
                    "hash table of {table_size} buckets of {bucket_len} bytes does not fit its data size {} (meta blocks at {data_end})",
                    props.data_size
                )))
            }
        }
        let mut data = vec![0u8; props.data_size as usize];
        read_exact_at(file.as_ref(), 0, &mut data, file_name)?;
        Ok(Arc::new(CuckooTable {
            icmp,
            file_name: file_name.to_string(),
            props,
            data,
            is_last_level,
            identity_as_first_hash,
            use_module_hash,
            num_hash_func,
            key_len,
            user_key_len,
            value_len,
            bucket_len,
            cuckoo_block_size,
            table_size,
            empty_key,
            sorted: OnceLock::new(),
        }))
    }

    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    pub fn approximate_memory_usage(&self) -> usize {
        self.data.len() + self.sorted.get().map_or(0, |s| s.len() * 4)
    }

    fn bucket(&self, b: u64) -> &[u8] {
        let at = b as usize * self.bucket_len;
        &self.data[at..at + self.bucket_len]
    }

    /// The internal key of bucket `b` into `out`.
    fn ikey_of(&self, b: u64, out: &mut Vec<u8>) {
        out.clear();
        let bk = self.bucket(b);
        if self.is_last_level {
            out.extend_from_slice(&bk[..self.user_key_len]);
            out.extend_from_slice(&pack_seq_and_type(0, ValueType::Value).to_le_bytes());
        } else {
            out.extend_from_slice(&bk[..self.key_len]);
        }
    }

    /// The entry of `lookup_ikey`'s user key, if the table has one visible at its sequence.
    pub fn get(&self, lookup_ikey: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let uk = user_key(lookup_ikey);
        if self.props.num_entries == 0 || uk.len() != self.user_key_len {
            return Ok(None);
        }
        let ucmp = self.icmp.user_comparator();
        for h in 0..self.num_hash_func {
            let first =
                cuckoo_hash(uk, h, self.use_module_hash, self.table_size, self.identity_as_first_hash);
            for b in first..first + self.cuckoo_block_size {
                let bk = self.bucket(b);
                if ucmp.compare(&self.empty_key[..uk.len()], &bk[..uk.len()]) == Ordering::Equal {
                    return Ok(None);
                }
                if ucmp.compare(uk, &bk[..uk.len()]) == Ordering::Equal {
                    let mut key = Vec::with_capacity(self.user_key_len + 8);
                    self.ikey_of(b, &mut key);
                    if !self.is_last_level {
                        parse_internal_key(&key).map_err(|e| {
                            Error::corruption(format!(
                                "cuckoo table: bad key ({}) in {} offset {}",
                                crate::table::format::strip_prefix(&e),
                                self.file_name,
                                b as usize * self.bucket_len
                            ))
                        })?;
                        if trailer(&key) >> 8 > trailer(lookup_ikey) >> 8 {
                            // Newer than the lookup's snapshot: nothing older is here.
                            return Ok(None);
                        }
                    }
                    return Ok(Some((key, bk[self.key_len..].to_vec())));
                }
            }
        }
        Ok(None)
    }

    /// The non-empty buckets sorted by user key.
    fn sorted(&self) -> &[u32] {
        self.sorted.get_or_init(|| {
            let n =
                if self.props.num_entries == 0 { 0 } else { self.table_size + self.cuckoo_block_size - 1 };
            let mut ids: Vec<u32> = (0..n)
                .filter(|&b| self.bucket(b)[..self.key_len] != self.empty_key[..])
                .map(|b| b as u32)
                .collect();
            let ucmp = self.icmp.user_comparator().clone();
            let ukl = self.user_key_len;
            ids.sort_by(|&a, &b| ucmp.compare(&self.bucket(a.into())[..ukl], &self.bucket(b.into())[..ukl]));
            ids
        })
    }

    pub fn iter(self: &Arc<Self>) -> Box<dyn InternalIterator> {
        Box::new(CuckooTableIter { table: self.clone(), pos: usize::MAX, key: Vec::new() })
    }
}

/// RocksDB's CuckooTableIterator: entries in user-key order through a sorted bucket list.
struct CuckooTableIter {
    table: Arc<CuckooTable>,
    /// usize::MAX: not valid.
    pos: usize,
    key: Vec<u8>,
}

impl CuckooTableIter {
    fn set(&mut self, i: usize) {
        let sorted = self.table.sorted();
        if i < sorted.len() {
            self.pos = i;
            let b = u64::from(sorted[i]);
            let t = self.table.clone();
            t.ikey_of(b, &mut self.key);
        } else {
            self.pos = usize::MAX;
        }
    }

    /// The index of the first entry whose internal key is >= `target`.
    fn lower_bound(&self, target: &[u8]) -> usize {
        let t = &self.table;
        let sorted = t.sorted();
        let mut buf = Vec::new();
        let (mut lo, mut hi) = (0, sorted.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            t.ikey_of(u64::from(sorted[mid]), &mut buf);
            if t.icmp.compare(&buf, target) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl InternalIterator for CuckooTableIter {
    fn valid(&self) -> bool {
        self.pos != usize::MAX
    }
    fn seek_to_first(&mut self) {
        self.set(0);
    }
    fn seek_to_last(&mut self) {
        let n = self.table.sorted().len();
        self.set(n.wrapping_sub(1));
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self.lower_bound(target);
        self.set(i);
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self.lower_bound(target);
        let t = self.table.clone();
        let sorted = t.sorted();
        if i < sorted.len() {
            let mut buf = Vec::new();
            t.ikey_of(u64::from(sorted[i]), &mut buf);
            if t.icmp.compare(&buf, target) == Ordering::Equal {
                self.set(i);
                return;
            }
        }
        self.set(i.wrapping_sub(1));
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
        &self.key
    }
    fn value(&self) -> &[u8] {
        let b = u64::from(self.table.sorted()[self.pos]);
        let t = &self.table;
        &t.bucket(b)[t.key_len..t.key_len + t.value_len]
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}
