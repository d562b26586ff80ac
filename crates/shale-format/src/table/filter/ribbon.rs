//! Queries of RocksDB's Standard128Ribbon filter (`NewRibbonFilterPolicy`, trailer marker
//! -2), as RocksDB 11.8.1 reads it (`Standard128RibbonBitsReader`; util/ribbon_impl.h and
//! util/ribbon_alg.h). Building them: `filter/ribbon_builder.rs`.
//!
//! ```text
//!   0                                          len        len+1   len+2 .. len+4
//!   | segment 0 | segment 1 | ... (16 bytes each) | 0xfe (-2) | seed  | num_blocks u24 LE
//!
//!   segment = one u128 (little-endian): one column of one block of 128 slots.
//!   num_segments = len / 16; blocks are stored interleaved, block b's columns contiguous:
//!     upper_cols = ceil(num_segments / num_blocks), capped at 32
//!     upper_start_block = upper_cols * num_blocks - num_segments
//!     blocks below upper_start_block have upper_cols - 1 columns, the rest upper_cols
//!     first segment of block b = b * upper_cols - min(b, upper_start_block)
//!
//!   query(key): h = hash64(key)                      (XXH3, as FastLocalBloom's)
//!     raw_seed  = low 32 bits of mix(seed * 0xc78219a23eeadd03),
//!                 mix(t) = t ^ ((t & 0xf0f0f0f0f0f0f0f0) >> 4)
//!     hash      = (h ^ raw_seed) * 0x6193d459236a3a0d
//!     start     = (hash * num_starts) >> 64, num_starts = num_blocks * 128 - 127
//!     a         = hash * 0xc28f82822b650bed
//!     coeffs    = (a << 64 | (a ^ 0xc367844a6e52731d)) | 1          (u128)
//!     expected  = low 32 bits of byte_swap(a)
//!     block = start / 128, bit = start % 128, cols = the block's column count
//!     column i: parity(seg[i] & coeffs << bit) ^ parity(seg[cols + i] & coeffs >> (128 - bit))
//!               (the second term only when bit > 0) must equal bit i of expected
//! ```
//! A key that was added always matches; an absent key matches with probability about
//! 2^-cols. Fewer than 2 blocks is never written (RocksDB reads it as "may match"), and
//! neither is a segment count that leaves the last block short; such filters answer "may
//! match" for every key here too, so a strange filter costs reads, never results.

/// What a query needs besides the data: RocksDB's `StandardHasher` seed and
/// `SerializableInterleavedSolution` geometry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ribbon {
    raw_seed: u32,
    num_starts: u32,
    upper_cols: u32,
    upper_start_block: u32,
}

/// Slots per block (the coefficient row's bits).
pub(super) const COEFF_BITS: u32 = 128;
/// Bytes of one column of one block.
pub(super) const SEGMENT_BYTES: usize = 16;
const TO_RAW_SEED: u64 = 0xc782_19a2_3eea_dd03;
const SEED_MIX_MASK: u64 = 0xf0f0_f0f0_f0f0_f0f0;
const REHASH: u64 = 0x6193_d459_236a_3a0d;
const COEFF_AND_RESULT: u64 = 0xc28f_8282_2b65_0bed;
const COEFF_XOR64: u64 = 0xc367_844a_6e52_731d;

impl Ribbon {
    /// The query settings for `len` bytes of solution (trailer excluded) and the trailer's
    /// seed and block count; None when RocksDB would answer "may match" for every key.
    pub(super) fn new(len: usize, seed: u8, num_blocks: u32) -> Option<Ribbon> {
        if num_blocks < 2 {
            return None;
        }
        let num_segments = u32::try_from(len / SEGMENT_BYTES).ok()?;
        let mut upper_cols = num_segments.div_ceil(num_blocks);
        let mut upper_start_block = upper_cols * num_blocks - num_segments;
        if upper_cols > 32 {
            upper_cols = 32;
            upper_start_block = 0;
        }
        if upper_cols == 0 || num_blocks.checked_mul(upper_cols)? - upper_start_block > num_segments {
            return None;
        }
        Some(Ribbon {
            raw_seed: raw_seed(u32::from(seed)),
            num_starts: num_blocks * COEFF_BITS - COEFF_BITS + 1,
            upper_cols,
            upper_start_block,
        })
    }

    /// False only if the key whose hash64 is `key_hash` was certainly not added.
    pub(super) fn may_match(&self, data: &[u8], key_hash: u64) -> bool {
        let (start, coeffs, expected) = hash_row(key_hash, self.raw_seed, self.num_starts);
        let block = start / COEFF_BITS;
        let segment = block * self.upper_cols - block.min(self.upper_start_block);
        let cols = self.upper_cols - u32::from(block < self.upper_start_block);
        let bit = start % COEFF_BITS;
        let load = |i: u32| -> Option<u128> {
            let at = (segment + i) as usize * SEGMENT_BYTES;
            let bytes = data.get(at..at + SEGMENT_BYTES)?;
            Some(u128::from_le_bytes(bytes.try_into().ok()?))
        };
        for i in 0..cols {
            let Some(left) = load(i) else { return true };
            let mut row = left & (coeffs << bit);
            if bit > 0 {
                let Some(right) = load(cols + i) else { return true };
                row ^= right & (coeffs >> (COEFF_BITS - bit));
            }
            if row.count_ones() & 1 != (expected >> i) & 1 {
                return false;
            }
        }
        true
    }
}

/// RocksDB's `StandardHasher::SetOrdinalSeed`: the raw seed of the trailer's seed `ordinal`.
pub(super) fn raw_seed(ordinal: u32) -> u32 {
    let mut t = u64::from(ordinal).wrapping_mul(TO_RAW_SEED);
    t ^= (t & SEED_MIX_MASK) >> 4;
    t as u32
}

/// A key's row under `raw_seed` (see the drawing): its start slot among `num_starts`, its
/// coefficient row and its expected result row. The builder bands the same rows.
#[inline]
pub(super) fn hash_row(key_hash: u64, raw_seed: u32, num_starts: u32) -> (u32, u128, u32) {
    let hash = (key_hash ^ u64::from(raw_seed)).wrapping_mul(REHASH);
    let start = ((u128::from(hash) * u128::from(num_starts)) >> 64) as u32;
    let a = hash.wrapping_mul(COEFF_AND_RESULT);
    let coeffs = ((u128::from(a) << 64) ^ u128::from(a ^ COEFF_XOR64)) | 1;
    (start, coeffs, a.swap_bytes() as u32)
}
