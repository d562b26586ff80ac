//! Writes a cuckoo table (layout in `table/cuckoo/mod.rs`) as RocksDB's CuckooTableBuilder:
//! entries are gathered in memory, placed in the hash table at `finish` (cuckoo moves
//! found by a breadth-first search up to `max_search_depth`, more hash functions when
//! that fails, up to 64), then written bucket by bucket.
//!
//! ```text
//! add    : keep (key, value); values of type Value first, deletions after (RocksDB's order)
//! finish : buckets | properties block | metaindex block | footer (53 bytes)
//! ```
//! Limits, with RocksDB's errors: every user key the same size, every value the same size,
//! only Value and Deletion entries, one entry per user key, no range deletions.
//! RocksDB takes the "last level" form (user keys without sequence numbers) when the
//! first key has sequence 0; Shale takes it only when every entry is a Value with
//! sequence 0, so that a deletion never loses its type.

use std::cmp::Ordering;

use crate::coding::put_fixed64;
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::key::{pack_seq_and_type, parse_internal_key, ValueType};
use crate::table::builder::{TableBuildResult, TableBuilderOptions};
use crate::table::meta_tail::{write_raw_tail, CUCKOO_TABLE_MAGIC};
use crate::table::properties::TableProperties;

use super::{
    cuckoo_hash, CuckooOptions, CUCKOO_BLOCK_SIZE, EMPTY_KEY, HASH_TABLE_SIZE, IDENTITY_AS_FIRST_HASH,
    IS_LAST_LEVEL, MAX_NUM_HASH_FUNC, NUM_HASH_FUNC, USER_KEY_LENGTH, USE_MODULE_HASH, VALUE_LENGTH,
};

const EMPTY: u32 = i32::MAX as u32;

#[derive(Clone, Copy)]
struct Bucket {
    idx: u32,
    call_id: u32,
}

/// Builds one cuckoo table file.
pub struct CuckooTableBuilder {
    opts: TableBuilderOptions,
    copts: CuckooOptions,
    file: Box<dyn WritableFile>,
    /// (internal key, value) of Value entries, then of deletions.
    values: Vec<(Vec<u8>, Vec<u8>)>,
    deletions: Vec<Vec<u8>>,
    user_key_len: Option<usize>,
    value_len: Option<usize>,
    all_seq0: bool,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    hash_table_size: u64,
    num_hash_func: u32,
    last_key: Vec<u8>,
    user_props: Vec<(String, Vec<u8>)>,
}

impl CuckooTableBuilder {
    pub fn new(opts: TableBuilderOptions, copts: CuckooOptions, file: Box<dyn WritableFile>) -> Self {
        let file: Box<dyn WritableFile> = match &opts.rate_limiter {
            Some((limiter, pri)) => Box::new(crate::rate_limiter::RateLimitedFile {
                inner: file,
                limiter: limiter.clone(),
                pri: *pri,
                stats: opts.rate_limiter_stats.clone(),
            }),
            None => file,
        };
        CuckooTableBuilder {
            hash_table_size: if copts.use_module_hash { 0 } else { 2 },
            opts,
            copts,
            file,
            values: Vec::new(),
            deletions: Vec::new(),
            user_key_len: None,
            value_len: None,
            all_seq0: true,
            smallest: Vec::new(),
            largest: Vec::new(),
            num_hash_func: 2,
            last_key: Vec::new(),
            user_props: Vec::new(),
        }
    }

    fn num_entries_usize(&self) -> usize {
        self.values.len() + self.deletions.len()
    }

    /// Adds an entry; internal keys must arrive in increasing order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if self.num_entries_usize() as u64 >= u64::from(EMPTY) - 1 {
            return Err(Error::not_supported("Number of keys in a file must be < 2^32-1"));
        }
        let pk = parse_internal_key(ikey)?;
        if pk.value_type != ValueType::Deletion && pk.value_type != ValueType::Value {
            return Err(Error::not_supported(format!(
                "Unsupported key type {} in a cuckoo table",
                pk.value_type as u8
            )));
        }
        if self.num_entries_usize() > 0 && self.opts.icmp.compare(ikey, &self.last_key) != Ordering::Greater {
            return Err(Error::invalid_argument("table keys must be added in increasing internal-key order"));
        }
        let uk = pk.user_key;
        match self.user_key_len {
            None => {
                self.user_key_len = Some(uk.len());
                self.smallest = uk.to_vec();
                self.largest = uk.to_vec();
            }
            Some(n) if n != uk.len() => {
                return Err(Error::not_supported("all keys have to be the same size in a cuckoo table"))
            }
            Some(_) => {}
        }
        if pk.value_type == ValueType::Value {
            match self.value_len {
                None => self.value_len = Some(value.len()),
                Some(n) if n != value.len() => {
                    return Err(Error::not_supported("all values have to be the same size in a cuckoo table"))
                }
                Some(_) => {}
            }
            self.values.push((ikey.to_vec(), value.to_vec()));
        } else {
            self.deletions.push(ikey.to_vec());
        }
        self.all_seq0 &= pk.sequence == 0 && pk.value_type == ValueType::Value;
        if uk < self.smallest.as_slice() {
            self.smallest = uk.to_vec();
        } else if uk > self.largest.as_slice() {
            self.largest = uk.to_vec();
        }
        if !self.copts.use_module_hash {
            let n = self.num_entries_usize() as f64;
            if (self.hash_table_size as f64) < n / self.copts.hash_table_ratio {
                self.hash_table_size *= 2;
            }
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        Ok(())
    }

    /// Range tombstones cannot be stored in a cuckoo table.
    pub fn add_range_tombstone(&mut self, _start_ikey: &[u8], _end_user_key: &[u8]) -> Result<()> {
        Err(Error::not_supported("Unsupported key type 15 (range deletion) in a cuckoo table"))
    }

    pub fn set_user_property(&mut self, name: &str, value: Vec<u8>) {
        self.user_props.push((name.to_string(), value));
    }

    pub fn num_entries(&self) -> u64 {
        self.num_entries_usize() as u64
    }

    /// RocksDB's estimate of the file size before `finish` (compaction cuts outputs by it).
    pub fn file_size(&self) -> u64 {
        let n = self.num_entries_usize() as u64;
        if n == 0 {
            return 0;
        }
        let ukl = self.user_key_len.unwrap_or(0) as u64;
        let key_size = if self.all_seq0 { ukl } else { ukl + 8 };
        let bucket = key_size + self.value_len.unwrap_or(0) as u64;
        if self.copts.use_module_hash {
            (bucket as f64 * n as f64 / self.copts.hash_table_ratio) as u64
        } else {
            let mut expected = self.hash_table_size;
            if (expected as f64) < (n + 1) as f64 / self.copts.hash_table_ratio {
                expected *= 2;
            }
            (bucket * expected).saturating_sub(1)
        }
    }

    fn user_key(&self, idx: u32) -> &[u8] {
        let i = idx as usize;
        let k =
            if i < self.values.len() { &self.values[i].0 } else { &self.deletions[i - self.values.len()] };
        &k[..k.len() - 8]
    }

    fn hash(&self, uk: &[u8], i: u32) -> u64 {
        cuckoo_hash(
            uk,
            i,
            self.copts.use_module_hash,
            self.hash_table_size,
            self.copts.identity_as_first_hash,
        )
    }

    /// RocksDB's `MakeHashTable`.
    fn make_hash_table(&mut self) -> Result<Vec<Bucket>> {
        let block = u64::from(self.copts.cuckoo_block_size.max(1));
        let mut buckets =
            vec![Bucket { idx: EMPTY, call_id: 0 }; (self.hash_table_size + block - 1) as usize];
        let mut call_id = 0u32;
        let ucmp = self.opts.icmp.user_comparator().clone();
        for vidx in 0..self.num_entries_usize() as u32 {
            let uk = self.user_key(vidx).to_vec();
            let mut found = None;
            let mut hash_vals: Vec<u64> = Vec::new();
            let mut h_cnt = 0;
            while h_cnt < self.num_hash_func && found.is_none() {
                let first = self.hash(&uk, h_cnt);
                for hv in first..first + block {
                    let b = buckets[hv as usize];
                    if b.idx == EMPTY {
                        found = Some(hv);
                        break;
                    }
                    if ucmp.compare(&uk, self.user_key(b.idx)) == Ordering::Equal {
                        return Err(Error::not_supported(
                            "Same key is being inserted again in a cuckoo table",
                        ));
                    }
                    hash_vals.push(hv);
                }
                h_cnt += 1;
            }
            while found.is_none() {
                call_id += 1;
                if let Some(b) = self.make_space_for_key(&hash_vals, call_id, &mut buckets) {
                    found = Some(b);
                    break;
                }
                if self.num_hash_func >= MAX_NUM_HASH_FUNC {
                    return Err(Error::not_supported("Too many collisions. Unable to hash (cuckoo table)."));
                }
                let first = self.hash(&uk, self.num_hash_func);
                self.num_hash_func += 1;
                for hv in first..first + block {
                    if buckets[hv as usize].idx == EMPTY {
                        found = Some(hv);
                        break;
                    }
                    hash_vals.push(hv);
                }
            }
            if let Some(b) = found {
                buckets[b as usize].idx = vidx;
            }
        }
        Ok(buckets)
    }

    /// RocksDB's `MakeSpaceForKey`: a breadth-first search from the key's buckets for an
    /// empty one, then every entry on the path moves one step toward it.
    fn make_space_for_key(&self, hash_vals: &[u64], call_id: u32, buckets: &mut [Bucket]) -> Option<u64> {
        struct Node {
            bucket: u64,
            depth: u32,
            parent: usize,
        }
        let block = u64::from(self.copts.cuckoo_block_size.max(1));
        let mut tree: Vec<Node> = Vec::new();
        for &bid in hash_vals.iter().take(self.num_hash_func as usize) {
            buckets[bid as usize].call_id = call_id;
            tree.push(Node { bucket: bid, depth: 0, parent: 0 });
        }
        let mut null_found = false;
        let mut pos = 0;
        while !null_found && pos < tree.len() {
            let depth = tree[pos].depth;
            if depth >= self.copts.max_search_depth {
                break;
            }
            let cur = buckets[tree[pos].bucket as usize];
            let uk = self.user_key(cur.idx).to_vec();
            let mut h_cnt = 0;
            while h_cnt < self.num_hash_func && !null_found {
                let first = self.hash(&uk, h_cnt);
                for child in first..first + block {
                    let c = child as usize;
                    if buckets[c].call_id != call_id {
                        buckets[c].call_id = call_id;
                        tree.push(Node { bucket: child, depth: depth + 1, parent: pos });
                        if buckets[c].idx == EMPTY {
                            null_found = true;
                            break;
                        }
                    }
                }
                h_cnt += 1;
            }
            pos += 1;
        }
        if !null_found {
            return None;
        }
        let n = self.num_hash_func as usize;
        let mut at = tree.len() - 1;
        while at >= n {
            let parent = tree[at].parent;
            let from = buckets[tree[parent].bucket as usize].idx;
            buckets[tree[at].bucket as usize].idx = from;
            at = parent;
        }
        Some(tree[at].bucket)
    }

    /// Places the entries, writes buckets, properties, metaindex and footer, syncs.
    pub fn finish(mut self) -> Result<TableBuildResult> {
        let last_level = self.all_seq0;
        let num_entries = self.num_entries_usize() as u64;
        let user_key_len = self.user_key_len.unwrap_or(0);
        let key_size = if num_entries == 0 {
            0
        } else if last_level {
            user_key_len
        } else {
            user_key_len + 8
        };
        let value_size = self.value_len.unwrap_or(0);
        let mut buckets = Vec::new();
        let mut unused_bucket = Vec::new();
        if num_entries > 0 {
            if self.copts.use_module_hash {
                self.hash_table_size = (num_entries as f64 / self.copts.hash_table_ratio) as u64;
                self.hash_table_size = self.hash_table_size.max(1);
            }
            buckets = self.make_hash_table()?;
            let unused = unused_user_key(&self.smallest, &self.largest)
                .ok_or_else(|| Error::corruption("Unable to find unused key for the cuckoo table"))?;
            unused_bucket = unused;
            if !last_level {
                put_fixed64(&mut unused_bucket, pack_seq_and_type(0, ValueType::Value));
            }
        }
        let bucket_size = key_size + value_size;
        let mut empty_key = unused_bucket.clone();
        unused_bucket.resize(bucket_size, b'a');
        let filler = vec![b'a'; value_size];
        let mut out = Vec::with_capacity(buckets.len() * bucket_size);
        for b in &buckets {
            if b.idx == EMPTY {
                out.extend_from_slice(&unused_bucket);
                continue;
            }
            let i = b.idx as usize;
            let (k, v) = if i < self.values.len() {
                (&self.values[i].0, &self.values[i].1)
            } else {
                (&self.deletions[i - self.values.len()], &filler)
            };
            if last_level {
                out.extend_from_slice(&k[..k.len() - 8]);
            } else {
                out.extend_from_slice(k);
            }
            out.extend_from_slice(v);
        }
        self.file.append(&out)?;
        let offset = out.len() as u64;
        drop(out);
        empty_key.resize(key_size, b'a');

        let mut p = TableProperties {
            column_family_id: self.opts.column_family_id as u64,
            column_family_name: self.opts.column_family_name.clone(),
            orig_file_number: self.opts.orig_file_number,
            db_id: self.opts.db_id.clone(),
            db_session_id: self.opts.db_session_id.clone(),
            comparator_name: self.opts.icmp.user_comparator().name().to_string(),
            num_data_blocks: 1,
            num_entries,
            num_deletions: self.deletions.len() as u64,
            fixed_key_len: key_size as u64,
            raw_key_size: num_entries * key_size as u64,
            raw_value_size: num_entries * value_size as u64,
            data_size: offset,
            ..Default::default()
        };
        for (k, v) in self.user_props.drain(..) {
            p.user_collected.insert(k, v);
        }
        let u = &mut p.user_collected;
        u.insert(VALUE_LENGTH.to_string(), (value_size as u32).to_le_bytes().to_vec());
        u.insert(EMPTY_KEY.to_string(), empty_key);
        u.insert(NUM_HASH_FUNC.to_string(), self.num_hash_func.to_le_bytes().to_vec());
        u.insert(HASH_TABLE_SIZE.to_string(), self.hash_table_size.to_le_bytes().to_vec());
        u.insert(IS_LAST_LEVEL.to_string(), vec![u8::from(last_level)]);
        u.insert(CUCKOO_BLOCK_SIZE.to_string(), self.copts.cuckoo_block_size.max(1).to_le_bytes().to_vec());
        u.insert(IDENTITY_AS_FIRST_HASH.to_string(), vec![u8::from(self.copts.identity_as_first_hash)]);
        u.insert(USE_MODULE_HASH.to_string(), vec![u8::from(self.copts.use_module_hash)]);
        u.insert(USER_KEY_LENGTH.to_string(), (user_key_len as u32).to_le_bytes().to_vec());
        let end = write_raw_tail(self.file.as_mut(), offset, &p, Vec::new(), CUCKOO_TABLE_MAGIC, 1)?;
        self.file.flush()?;
        self.file.sync()?;
        Ok(TableBuildResult { file_size: end, properties: p, marked_for_compaction: false })
    }
}

/// RocksDB's search for a user key outside the table's range: the smallest key with bytes
/// decremented from the end until it sorts before it, else the largest incremented.
fn unused_user_key(smallest: &[u8], largest: &[u8]) -> Option<Vec<u8>> {
    let mut k = smallest.to_vec();
    for pos in (0..k.len()).rev() {
        k[pos] = k[pos].wrapping_sub(1);
        if k.as_slice() < smallest {
            return Some(k);
        }
    }
    let mut k = largest.to_vec();
    for pos in (0..k.len()).rev() {
        k[pos] = k[pos].wrapping_add(1);
        if k.as_slice() > largest {
            return Some(k);
        }
    }
    None
}
