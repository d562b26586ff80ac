//! The data-block hash index (RocksDB's `kDataBlockBinaryAndHash`,
//! table/block_based/data_block_hash_index.cc): a point lookup finds the restart interval
//! of its user key in one probe instead of a binary search over the restart points.
//!
//! ```text
//! data block : entries | restarts fixed32 * num_restarts | HASH_IDX | footer fixed32
//! HASH_IDX   : bucket u8 * num_buckets | num_buckets fixed16
//! bucket     : the restart index (0..=253) of every key hashed here,
//!              254 = collision (keys of two intervals), 255 = no key
//! footer     : num_restarts | 1 << 31 (the hash-index flag)
//! ```
//! A key's bucket is `Hash(user_key, seed 397) % num_buckets` (RocksDB's 32-bit `Hash`).
//! `num_buckets` is `(u16)(keys / util_ratio) | 1` (odd: the hash spreads badly over a power
//! of two). A block with more than 254 restart intervals, or over 64 KiB, gets no hash index
//! (its footer has no flag); as RocksDB's builder, once a block has had too many intervals no
//! later block of the same table gets one either.
//!
//! Written only for data blocks of families whose comparator is bytewise or reverse
//! bytewise (RocksDB: `CanKeysWithDifferentByteContentsBeEqual() == false`).

use super::filter::hash32;

pub const NO_ENTRY: u8 = 255;
pub const COLLISION: u8 = 254;
const MAX_RESTART: usize = 253;
const DEFAULT_UTIL_RATIO: f64 = 0.75;
const SEED: u32 = 397;

/// The hash of a user key, as RocksDB's `GetSliceHash`.
pub fn key_hash(user_key: &[u8]) -> u32 {
    hash32(user_key, SEED)
}

/// Collects (hash, restart index) pairs for the block being built.
#[derive(Clone, Debug)]
pub struct HashIndexBuilder {
    buckets_per_key: f64,
    estimated_buckets: f64,
    valid: bool,
    entries: Vec<(u32, u8)>,
}

impl HashIndexBuilder {
    pub fn new(util_ratio: f64) -> Self {
        let ratio = if util_ratio > 0.0 { util_ratio } else { DEFAULT_UTIL_RATIO };
        HashIndexBuilder {
            buckets_per_key: 1.0 / ratio,
            estimated_buckets: 0.0,
            valid: true,
            entries: Vec::new(),
        }
    }

    pub fn valid(&self) -> bool {
        self.valid && self.buckets_per_key > 0.0
    }

    pub fn add(&mut self, user_key: &[u8], restart_index: usize) {
        if restart_index > MAX_RESTART {
            self.valid = false;
            return;
        }
        self.entries.push((key_hash(user_key), restart_index as u8));
        self.estimated_buckets += self.buckets_per_key;
    }

    fn num_buckets(&self) -> u16 {
        // C++'s double -> uint16_t conversion (blocks up to 64 KiB keep this in range).
        (self.estimated_buckets as u64 as u16).max(1) | 1
    }

    /// Bytes the index adds to the block.
    pub fn estimate_size(&self) -> usize {
        ((self.estimated_buckets as u64 as u16) | 1) as usize + 2
    }

    /// Appends the bucket array and `num_buckets`.
    pub fn finish(&self, out: &mut Vec<u8>) {
        let n = self.num_buckets();
        let mut buckets = vec![NO_ENTRY; n as usize];
        for &(h, r) in &self.entries {
            let b = &mut buckets[(h % n as u32) as usize];
            if *b == NO_ENTRY {
                *b = r;
            } else if *b != r {
                *b = COLLISION;
            }
        }
        out.extend_from_slice(&buckets);
        out.extend_from_slice(&n.to_le_bytes());
    }

    pub fn reset(&mut self) {
        self.estimated_buckets = 0.0;
        self.valid = true;
        self.entries.clear();
    }
}

/// The bucket of `user_key` in a block's bucket array.
pub fn lookup(buckets: &[u8], user_key: &[u8]) -> u8 {
    if buckets.is_empty() {
        return COLLISION;
    }
    buckets[(key_hash(user_key) % buckets.len() as u32) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_restart_indexes() {
        let mut b = HashIndexBuilder::new(0.75);
        let keys: Vec<Vec<u8>> = (0..40u32).map(|i| format!("key{i:04}").into_bytes()).collect();
        for (i, k) in keys.iter().enumerate() {
            b.add(k, i / 16);
        }
        let mut out = Vec::new();
        b.finish(&mut out);
        let n = u16::from_le_bytes([out[out.len() - 2], out[out.len() - 1]]) as usize;
        // 40 / 0.75 = 53.3 -> 53, odd.
        assert_eq!(n, 53);
        assert_eq!(out.len(), n + 2);
        assert_eq!(b.estimate_size(), out.len());
        let buckets = &out[..n];
        for (i, k) in keys.iter().enumerate() {
            let got = lookup(buckets, k);
            assert!(got == (i / 16) as u8 || got == COLLISION, "{i}: {got}");
        }
        assert!(buckets.contains(&NO_ENTRY));
    }

    #[test]
    fn too_many_restarts_turn_it_off() {
        let mut b = HashIndexBuilder::new(0.75);
        b.add(b"a", 253);
        assert!(b.valid());
        b.add(b"b", 254);
        assert!(!b.valid());
    }

    #[test]
    fn hash_is_rocksdbs() {
        // RocksDB's Hash("", 397) is the seed mixed with a zero length: 397.
        assert_eq!(key_hash(b""), 397);
    }
}
