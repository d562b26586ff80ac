//! RocksDB's CuckooTable format (table/cuckoo/cuckoo_table_*.cc): a hash table of
//! fixed-size buckets, one entry per user key, for point lookups of fixed-size keys and
//! values.
//!
//! ```text
//! file    : bucket * (hash table size + cuckoo block size - 1)   ("rocksdb.data.size" bytes)
//!           | properties block | metaindex block | footer (53 bytes, format_version 1,
//!           magic 0x926789d0c5f17873)        (tail and footer: table/meta_tail.rs)
//! bucket  : key (fixed key length bytes) | value (value length bytes)
//!           key = the user key when the table is "last level" (every entry had sequence 0),
//!                 else the internal key (user key | fixed64 sequence << 8 | type);
//!           an empty bucket holds the "empty key" (a user key not in the table, as an
//!           internal key with sequence 0 and type Value unless last level) and 'a' bytes;
//!           a deletion's value is value-length 'a' bytes
//! lookup  : for hash function i in 0..num hash functions:
//!             h = CuckooHash(user key, i); look at buckets h, h+1, .. h+cuckoo block size-1;
//!             a bucket whose first user-key-length bytes equal the empty key's ends the
//!             lookup (absent); one equal to the user key is the entry
//! CuckooHash(k, i) = (i == 0 && identity_as_first_hash) ? fixed64 of k's first 8 bytes
//!                                                      : MurmurHash64A(k, seed = 816922183 * i)
//!                    then % table size (use_module_hash) or & (table size - 1) (table size a
//!                    power of two)
//! properties (raw little-endian values unless noted):
//!   "rocksdb.cuckoo.bucket.empty.key"    the empty key (fixed key length bytes)
//!   "rocksdb.cuckoo.hash.num"            u32 number of hash functions
//!   "rocksdb.cuckoo.hash.size"           u64 hash table size
//!   "rocksdb.cuckoo.value.length"        u32
//!   "rocksdb.cuckoo.file.islastlevel"    1 byte bool
//!   "rocksdb.cuckoo.hash.cuckooblocksize" u32
//!   "rocksdb.cuckoo.hash.identityfirst"  1 byte bool
//!   "rocksdb.cuckoo.hash.usemodule"      1 byte bool
//!   "rocksdb.cuckoo.hash.userkeylength"  u32
//!   and the shared ones: "rocksdb.fixed.key.length", "rocksdb.num.entries",
//!   "rocksdb.deleted.keys", "rocksdb.data.size", "rocksdb.num.data.blocks" = 1
//! ```
//! RocksDB's reader needs `allow_mmap_reads` ("File is not mmaped" otherwise) because it
//! reads the whole file as one buffer; Shale reads the whole file into memory at open
//! without mmap, so that error does not apply. See docs/cuckoo-table-format.md.

pub mod builder;
pub mod reader;

pub use builder::CuckooTableBuilder;
pub use reader::CuckooTable;

pub const EMPTY_KEY: &str = "rocksdb.cuckoo.bucket.empty.key";
pub const NUM_HASH_FUNC: &str = "rocksdb.cuckoo.hash.num";
pub const HASH_TABLE_SIZE: &str = "rocksdb.cuckoo.hash.size";
pub const VALUE_LENGTH: &str = "rocksdb.cuckoo.value.length";
pub const IS_LAST_LEVEL: &str = "rocksdb.cuckoo.file.islastlevel";
pub const CUCKOO_BLOCK_SIZE: &str = "rocksdb.cuckoo.hash.cuckooblocksize";
pub const IDENTITY_AS_FIRST_HASH: &str = "rocksdb.cuckoo.hash.identityfirst";
pub const USE_MODULE_HASH: &str = "rocksdb.cuckoo.hash.usemodule";
pub const USER_KEY_LENGTH: &str = "rocksdb.cuckoo.hash.userkeylength";

/// RocksDB's `kCuckooMurmurSeedMultiplier`.
const MURMUR_SEED_MULTIPLIER: u32 = 816_922_183;
/// RocksDB's CuckooTableFactory builds with at most 64 hash functions.
pub const MAX_NUM_HASH_FUNC: u32 = 64;

/// RocksDB's `CuckooTableOptions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CuckooOptions {
    pub hash_table_ratio: f64,
    pub max_search_depth: u32,
    pub cuckoo_block_size: u32,
    pub identity_as_first_hash: bool,
    pub use_module_hash: bool,
}

impl Default for CuckooOptions {
    fn default() -> Self {
        CuckooOptions {
            hash_table_ratio: 0.9,
            max_search_depth: 100,
            cuckoo_block_size: 5,
            identity_as_first_hash: false,
            use_module_hash: true,
        }
    }
}

/// MurmurHash64A, as RocksDB's `MurmurHash` on 64-bit x86.
pub fn murmur_hash64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = u64::from(seed) ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        let mut k = u64::from_le_bytes(b);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        for (i, &b) in rest.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// RocksDB's `CuckooHash`. With `identity_as_first_hash`, hash 0 is the key's first 8
/// bytes as a little-endian integer (RocksDB reads 8 bytes even past a shorter key;
/// Shale pads a shorter key with zero bytes).
pub fn cuckoo_hash(
    user_key: &[u8],
    hash_cnt: u32,
    use_module_hash: bool,
    table_size: u64,
    identity: bool,
) -> u64 {
    let value = if hash_cnt == 0 && identity {
        let mut b = [0u8; 8];
        let n = user_key.len().min(8);
        b[..n].copy_from_slice(&user_key[..n]);
        u64::from_le_bytes(b)
    } else {
        murmur_hash64a(user_key, MURMUR_SEED_MULTIPLIER.wrapping_mul(hash_cnt))
    };
    if use_module_hash {
        value % table_size.max(1)
    } else {
        value & table_size.wrapping_sub(1)
    }
}

#[cfg(test)]
mod tests;
