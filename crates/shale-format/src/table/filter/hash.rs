//! The two hash functions RocksDB's built-in filters are defined by.
//!
//! * [`hash64`]: RocksDB's `Hash64` / `GetSliceHash64`, used by the format_version 5
//!   FastLocalBloom filter (and Ribbon). It is **not** the released XXH3: RocksDB froze a
//!   *preview* of XXH3 (its `util/xxph3.h`, "XXPH3") with seed 0, plus one RocksDB change —
//!   the empty input hashes to a fold of the secret instead of 0. The preview differs from
//!   final XXH3 for every length (e.g. `hash64(b"") = 5999572062939766020`, final XXH3 gives
//!   `3244421341483603138`), so `xxhash_rust::xxh3` cannot be used.
//! * [`bloom_hash`]: RocksDB's 32-bit `Hash(data, n, 0xbc9f1d34)` (MurmurHash1-like), used by
//!   the legacy (format_version < 5) full filter. Tail bytes are sign-extended, as in RocksDB.
//!
//! Input is read in little-endian order everywhere.

/// The 192-byte default secret of the XXH3 preview.
const SECRET: [u8; 192] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde,
    0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79,
    0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, 0xb8, 0x08, 0x46,
    0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb,
    0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2,
    0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c,
    0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59,
    0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3,
    0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, 0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3,
    0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8,
    0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb,
    0xca, 0xbb, 0x4b, 0x40, 0x7e,
];

const P32_1: u64 = 0x9E37_79B1;
const P32_2: u64 = 0x85EB_CA77;
const P32_3: u64 = 0xC2B2_AE3D;
const P64_1: u64 = 0x9E37_79B1_85EB_CA87;
const P64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P64_3: u64 = 0x1656_67B1_9E37_79F9;
const P64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const P64_5: u64 = 0x27D4_EB2F_1656_67C5;

const STRIPE: usize = 64;
/// Secret bytes consumed per stripe.
const SECRET_STEP: usize = 8;
/// The preview's minimum secret size, used to locate the secret for a mid-size tail.
const SECRET_SIZE_MIN: usize = 136;

#[inline]
fn le32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

#[inline]
fn le64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Multiplies to 128 bits and xors the halves together.
#[inline]
fn mul_fold(a: u64, b: u64) -> u64 {
    let p = (a as u128) * (b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(P64_3);
    h ^ (h >> 32)
}

#[inline]
fn mix16(input: &[u8], at: usize, secret_at: usize) -> u64 {
    mul_fold(le64(input, at) ^ le64(&SECRET, secret_at), le64(input, at + 8) ^ le64(&SECRET, secret_at + 8))
}

fn hash_upto16(d: &[u8]) -> u64 {
    let len = d.len();
    if len > 8 {
        let lo = le64(d, 0) ^ le64(&SECRET, 0);
        let hi = le64(d, len - 8) ^ le64(&SECRET, 8);
        let acc = (len as u64).wrapping_add(lo.wrapping_add(hi)).wrapping_add(mul_fold(lo, hi));
        avalanche(acc)
    } else if len >= 4 {
        let joined = (le32(d, 0) as u64) | ((le32(d, len - 4) as u64) << 32);
        let keyed = joined ^ le64(&SECRET, 0);
        let mix = (len as u64).wrapping_add((keyed ^ (keyed >> 51)).wrapping_mul(P32_1));
        avalanche((mix ^ (mix >> 47)).wrapping_mul(P64_2))
    } else if len > 0 {
        let combined =
            (d[0] as u32) | ((d[len >> 1] as u32) << 8) | ((d[len - 1] as u32) << 16) | ((len as u32) << 24);
        let keyed = (combined as u64) ^ (le32(&SECRET, 0) as u64);
        avalanche(keyed.wrapping_mul(P64_1))
    } else {
        // RocksDB's change to the preview: hash the secret rather than return 0.
        mul_fold(le64(&SECRET, 0), P64_2)
    }
}

fn hash_17to128(d: &[u8]) -> u64 {
    let len = d.len();
    let mut acc = (len as u64).wrapping_mul(P64_1);
    if len > 32 {
        if len > 64 {
            if len > 96 {
                acc = acc.wrapping_add(mix16(d, 48, 96)).wrapping_add(mix16(d, len - 64, 112));
            }
            acc = acc.wrapping_add(mix16(d, 32, 64)).wrapping_add(mix16(d, len - 48, 80));
        }
        acc = acc.wrapping_add(mix16(d, 16, 32)).wrapping_add(mix16(d, len - 32, 48));
    }
    acc = acc.wrapping_add(mix16(d, 0, 0)).wrapping_add(mix16(d, len - 16, 16));
    avalanche(acc)
}

fn hash_129to240(d: &[u8]) -> u64 {
    let len = d.len();
    let mut acc = (len as u64).wrapping_mul(P64_1);
    for i in 0..8 {
        acc = acc.wrapping_add(mix16(d, 16 * i, 16 * i));
    }
    acc = avalanche(acc);
    for i in 8..len / 16 {
        acc = acc.wrapping_add(mix16(d, 16 * i, 16 * (i - 8) + 3));
    }
    acc = acc.wrapping_add(mix16(d, len - 16, SECRET_SIZE_MIN - 17));
    avalanche(acc)
}

/// One 64-byte stripe into the eight lanes (the preview adds each input word to its own lane).
#[inline]
fn accumulate_stripe(acc: &mut [u64; 8], stripe: &[u8], secret_at: usize) {
    for (i, lane) in acc.iter_mut().enumerate() {
        let v = le64(stripe, 8 * i);
        let k = v ^ le64(&SECRET, secret_at + 8 * i);
        *lane = lane.wrapping_add(v).wrapping_add((k & 0xffff_ffff).wrapping_mul(k >> 32));
    }
}

fn scramble(acc: &mut [u64; 8]) {
    let at = SECRET.len() - STRIPE;
    for (i, lane) in acc.iter_mut().enumerate() {
        let mut a = *lane;
        a ^= a >> 47;
        a ^= le64(&SECRET, at + 8 * i);
        *lane = a.wrapping_mul(P32_1);
    }
}

fn hash_long(d: &[u8]) -> u64 {
    let len = d.len();
    let mut acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1];
    let stripes_per_block = (SECRET.len() - STRIPE) / SECRET_STEP;
    let block_len = STRIPE * stripes_per_block;
    let blocks = len / block_len;
    for b in 0..blocks {
        for s in 0..stripes_per_block {
            let at = b * block_len + s * STRIPE;
            accumulate_stripe(&mut acc, &d[at..at + STRIPE], s * SECRET_STEP);
        }
        scramble(&mut acc);
    }
    let tail_stripes = (len - blocks * block_len) / STRIPE;
    for s in 0..tail_stripes {
        let at = blocks * block_len + s * STRIPE;
        accumulate_stripe(&mut acc, &d[at..at + STRIPE], s * SECRET_STEP);
    }
    if !len.is_multiple_of(STRIPE) {
        accumulate_stripe(&mut acc, &d[len - STRIPE..], SECRET.len() - STRIPE - 7);
    }
    let mut result = (len as u64).wrapping_mul(P64_1);
    for pair in 0..4 {
        let s = 11 + 16 * pair;
        result = result.wrapping_add(mul_fold(
            acc[2 * pair] ^ le64(&SECRET, s),
            acc[2 * pair + 1] ^ le64(&SECRET, s + 8),
        ));
    }
    avalanche(result)
}

/// RocksDB's `Hash64(data, n)` (= `GetSliceHash64`): the XXH3 preview with seed 0.
pub fn hash64(data: &[u8]) -> u64 {
    match data.len() {
        0..=16 => hash_upto16(data),
        17..=128 => hash_17to128(data),
        129..=240 => hash_129to240(data),
        _ => hash_long(data),
    }
}

/// RocksDB's 32-bit `Hash(data, n, seed)`.
pub fn hash32(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4_a793;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        h = h.wrapping_add(le32(w, 0)).wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        // Each tail byte is sign-extended before shifting, as RocksDB does.
        for (i, &b) in rest.iter().enumerate().rev() {
            h = h.wrapping_add(((b as i8) as i32 as u32) << (8 * i));
        }
        h = h.wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

/// RocksDB's `BloomHash`: [`hash32`] with seed 0xbc9f1d34, used by the legacy Bloom filter.
pub fn bloom_hash(key: &[u8]) -> u32 {
    hash32(key, 0xbc9f_1d34)
}
