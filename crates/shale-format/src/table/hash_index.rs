//! RocksDB's hash index (`index_type = kHashSearch`): beside the table's ordinary
//! binary-search index, two meta blocks name, for every key prefix in the table, the run of
//! data blocks its keys occupy. RocksDB's `HashIndexBuilder` writes them and its
//! `BlockPrefixIndex` reads them into a bucket array, so a seek in prefix mode (and a point
//! lookup) whose prefix the table lacks stops at the index without reading a data block.
//!
//! ```text
//! metaindex "rocksdb.hashindex.prefixes":   the prefixes, concatenated in key order
//!   +----------+----------+-----+----------+
//!   | prefix 0 | prefix 1 | ... | prefix n |          (no lengths: the metadata has them)
//!   +----------+----------+-----+----------+
//! metaindex "rocksdb.hashindex.metadata":   one record per prefix, same order
//!   +--------------------+---------------------+--------------------+
//!   | varint32 prefix_len | varint32 first_block | varint32 num_blocks | ...
//!   +--------------------+---------------------+--------------------+
//! ```
//! `first_block` is the ordinal of the data block (= the index entry, the index restart
//! interval being 1 with a hash index) holding the prefix's first key; `num_blocks` how many
//! consecutive blocks its keys reach. A prefix is the table's prefix extractor applied to
//! the user key (timestamp included, as RocksDB's `InternalKeySliceTransform`). Keys
//! outside the extractor's domain are not recorded (RocksDB's builder does not check the
//! domain and records bytes past such a key; Shale records nothing for them, and a lookup
//! outside the domain does not consult the index). Both blocks are written like index
//! blocks (compressed with the table's codec when that pays), in name order, before the
//! index block.
//!
//! Reading, Shale keeps a sorted set of the prefixes' 64-bit hashes (8 bytes a prefix,
//! about RocksDB's bucket array) and answers only "may the table hold this prefix": a
//! seek whose prefix is present lands where the binary-search index lands, which is where
//! RocksDB's block-range search lands too; past the prefix a prefix-mode seek's result is
//! undefined in RocksDB's contract, and Shale gives the total order's.

use shale_base::coding::{put_varint32, Decoder};
use shale_base::error::{Error, Result};

/// The metaindex name of the concatenated prefixes.
pub const PREFIXES_BLOCK: &str = "rocksdb.hashindex.prefixes";
/// The metaindex name of the per-prefix records.
pub const METADATA_BLOCK: &str = "rocksdb.hashindex.metadata";

/// Collects a table's prefixes as its keys arrive (RocksDB's `HashIndexBuilder::OnKeyAdded`).
#[derive(Default)]
pub struct HashIndexBuilder {
    prefixes: Vec<u8>,
    metadata: Vec<u8>,
    /// The prefix being collected: its bytes, its first block and the blocks it spans.
    pending: Option<(Vec<u8>, u32, u32)>,
}

impl HashIndexBuilder {
    /// A key with prefix `prefix` goes into data block number `block` (0-based; blocks
    /// arrive in order).
    pub fn add_key(&mut self, prefix: &[u8], block: u32) {
        match &mut self.pending {
            Some((p, first, num)) if p.as_slice() == prefix => {
                // The same prefix again: one more block if this key opened a new one.
                if *first + *num - 1 != block {
                    *num += 1;
                }
            }
            _ => {
                self.flush_pending();
                self.pending = Some((prefix.to_vec(), block, 1));
            }
        }
    }

    fn flush_pending(&mut self) {
        if let Some((p, first, num)) = self.pending.take() {
            self.prefixes.extend_from_slice(&p);
            put_varint32(&mut self.metadata, p.len() as u32);
            put_varint32(&mut self.metadata, first);
            put_varint32(&mut self.metadata, num);
        }
    }

    /// The contents of the prefixes block and of the metadata block.
    pub fn finish(mut self) -> (Vec<u8>, Vec<u8>) {
        self.flush_pending();
        (self.prefixes, self.metadata)
    }
}

/// One record of the metadata block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixRun {
    pub prefix: Vec<u8>,
    pub first_block: u32,
    pub num_blocks: u32,
}

/// Decodes the two blocks (RocksDB's `BlockPrefixIndex::Create`, with its messages).
pub fn decode(prefixes: &[u8], metadata: &[u8]) -> Result<Vec<PrefixRun>> {
    let mut runs = Vec::new();
    let mut meta = Decoder::new(metadata);
    let mut pos = 0usize;
    while !meta.is_empty() {
        let (Some(len), Some(first), Some(num)) = (meta.varint32(), meta.varint32(), meta.varint32()) else {
            return Err(Error::corruption("Corrupted prefix meta block: unable to read from it."));
        };
        let end = pos
            .checked_add(len as usize)
            .filter(|&e| e <= prefixes.len())
            .ok_or_else(|| Error::corruption("Corrupted prefix meta block: size inconsistency."))?;
        runs.push(PrefixRun { prefix: prefixes[pos..end].to_vec(), first_block: first, num_blocks: num });
        pos = end;
    }
    if pos != prefixes.len() {
        return Err(Error::corruption("Corrupted prefix meta block"));
    }
    Ok(runs)
}

/// What a reader keeps of the hash index: the prefixes' hashes, sorted.
#[derive(Debug)]
pub struct PrefixSet {
    hashes: Vec<u64>,
}

fn hash(prefix: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(prefix)
}

impl PrefixSet {
    pub fn new(runs: &[PrefixRun]) -> PrefixSet {
        let mut hashes: Vec<u64> = runs.iter().map(|r| hash(&r.prefix)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        PrefixSet { hashes }
    }

    /// False only when no key of the table has this prefix.
    pub fn may_contain(&self, prefix: &[u8]) -> bool {
        self.hashes.binary_search(&hash(prefix)).is_ok()
    }

    /// Bytes held.
    pub fn memory(&self) -> usize {
        self.hashes.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn runs_follow_blocks_and_prefixes() {
        let mut b = HashIndexBuilder::default();
        // "aa" in blocks 0 and 1, "ab" in block 1 only, "b" in blocks 1..=3 (skipping none).
        b.add_key(b"aa", 0);
        b.add_key(b"aa", 0);
        b.add_key(b"aa", 1);
        b.add_key(b"ab", 1);
        b.add_key(b"b", 1);
        b.add_key(b"b", 2);
        b.add_key(b"b", 3);
        b.add_key(b"b", 3);
        let (p, m) = b.finish();
        assert_eq!(p, b"aaabb");
        assert_eq!(m, vec![2, 0, 2, 2, 1, 1, 1, 1, 3]);
        let runs = decode(&p, &m).unwrap();
        assert_eq!(
            runs,
            vec![
                PrefixRun { prefix: b"aa".to_vec(), first_block: 0, num_blocks: 2 },
                PrefixRun { prefix: b"ab".to_vec(), first_block: 1, num_blocks: 1 },
                PrefixRun { prefix: b"b".to_vec(), first_block: 1, num_blocks: 3 },
            ]
        );
        let set = PrefixSet::new(&runs);
        assert!(set.may_contain(b"aa") && set.may_contain(b"ab") && set.may_contain(b"b"));
        assert!(!set.may_contain(b"ac") && !set.may_contain(b""));
    }

    #[test]
    fn empty_table_has_empty_blocks() {
        let (p, m) = HashIndexBuilder::default().finish();
        assert!(p.is_empty() && m.is_empty());
        assert!(decode(&p, &m).unwrap().is_empty());
    }

    #[test]
    fn damage_is_corruption_with_rocksdb_messages() {
        let e = decode(b"ab", &[2, 0]).unwrap_err();
        assert!(e.to_string().contains("unable to read from it"), "{e}");
        let e = decode(b"a", &[2, 0, 1]).unwrap_err();
        assert!(e.to_string().contains("size inconsistency"), "{e}");
        let e = decode(b"abc", &[2, 0, 1]).unwrap_err();
        assert!(e.to_string().ends_with("Corrupted prefix meta block"), "{e}");
    }
}
