//! Building RocksDB's Standard128Ribbon filter as RocksDB 11.8.1 builds it
//! (`Standard128RibbonBitsBuilder`, table/block_based/filter_policy.cc; util/ribbon_impl.h,
//! util/ribbon_alg.h, util/ribbon_config.cc). The bytes are laid out as `filter/ribbon.rs`
//! draws them; this module decides their size and solves for them:
//!
//! ```text
//!   n = distinct key hashes (adjacent repeats dropped), h0 = the first one
//!   one_in_fp  = 1 / CacheLocalFpRate(bits_per_key, FastLocalBloom probes, 512)
//!                (the FP rate of the Bloom filter the policy's bits per key stand for)
//!   num_slots  = slots for n keys at a 1-in-20 construction failure chance (the
//!                kOneIn20 / 128-bit / no-smash table of ribbon_config.cc, interpolated
//!                in log2), rounded up to a multiple of 128, at least 256
//!   bytes      = num_segments * 16: every block of 128 slots gets floor(log2(one_in_fp))
//!                columns, the blocks from upper_start_block on one more, where
//!                upper_start_block = (lower_portion * num_starts + bias) / 128,
//!                bias = (upper32(h0) + 0.5) / 2^32
//!   len        = bytes + 5; Bloom (FastLocalBloom, same bits per key) instead when
//!                num_slots < 1024 and the Bloom filter would be smaller, when n > 950e6,
//!                or when no seed solves
//!   seeds      = ordinal seeds lower8(h0), +1, ... (mod 256): the first whose banding
//!                (Gaussian elimination on the fly, coefficient rows starting with 1)
//!                takes every key; its ordinal goes to the trailer
//!   optimize_filters_for_memory: `filter/rounding.rs` with this filter's FP-rate estimate
//!                and 16-byte segments
//!   solution   = back substitution, block by block from the last, columns as segments
//! ```
//! A run of equal hashes is added once (as RocksDB's builder); two different keys with
//! equal hashes are solved consistently (their result rows agree), never a failure.

use super::ribbon::{hash_row, raw_seed, COEFF_BITS, SEGMENT_BYTES};
use super::rounding::{self, FilterRounding};
use super::{fast_local_num_probes, METADATA_LEN};

/// Above this many keys RocksDB builds the Bloom filter instead.
pub(super) const MAX_RIBBON_ENTRIES: usize = 950_000_000;

/// Keys a banding of 2^i slots takes with a 1-in-20 failure chance (128-bit coefficient
/// rows, no smash): RocksDB's measured table; 0 = unsupported size.
const KNOWN_TO_ADD_BY_POW2: [f64; 18] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39, 15966.6,
    31828.1, 63447.3, 126506.0,
];
const FACTOR_PER_POW2: f64 = 0.0038;

fn num_to_add_for_pow2(log2_slots: u32) -> f64 {
    let known = KNOWN_TO_ADD_BY_POW2.len() as u32;
    if log2_slots < known {
        KNOWN_TO_ADD_BY_POW2[log2_slots as usize]
    } else {
        let final_known = f64::from(1u32 << (known - 1)) / KNOWN_TO_ADD_BY_POW2[(known - 1) as usize];
        let base = final_known - f64::from(known - 1) * FACTOR_PER_POW2;
        let factor = base + f64::from(log2_slots) * FACTOR_PER_POW2;
        (1u64 << log2_slots) as f64 / factor
    }
}

/// `BandingConfigHelper1<kOneIn20, 128, false, false>::GetNumSlots`.
fn config_num_slots(num_to_add: u32) -> u32 {
    if num_to_add == 0 {
        return 0;
    }
    // RocksDB's truncated log2(e), not the exact constant: the slot count must be its.
    #[allow(clippy::approx_constant)]
    let log2_to_add = f64::from(num_to_add).ln() * 1.4426950409;
    let mut approx = (log2_to_add + 0.5) as u32;
    let mut lower = num_to_add_for_pow2(approx);
    let upper;
    if approx == 0 || lower == 0.0 {
        return 2 * COEFF_BITS;
    } else if f64::from(num_to_add) < lower {
        upper = lower;
        approx -= 1;
        lower = num_to_add_for_pow2(approx);
    } else {
        upper = num_to_add_for_pow2(approx + 1);
    }
    let upper_portion = (f64::from(num_to_add) - lower) / (upper - lower);
    let lower_slots = (1u64 << approx) as f64;
    (upper_portion * lower_slots + lower_slots + 0.999999999) as u32
}

/// `SerializableInterleavedSolution::RoundUpNumSlots` (no smash: never one block).
fn round_up_num_slots(num_slots: u32) -> u32 {
    let corrected = num_slots.div_ceil(COEFF_BITS) * COEFF_BITS;
    if corrected == COEFF_BITS {
        2 * COEFF_BITS
    } else {
        corrected
    }
}

/// The builder's `NumEntriesToNumSlots`.
pub(super) fn num_slots_for(num_entries: u32) -> u32 {
    round_up_num_slots(config_num_slots(num_entries))
}

/// `GetBytesForOneInFpRate`: solution bytes for `num_slots` slots and a 1-in-`one_in_fp`
/// FP rate; `rounding_bias32` leans the choice between more and fewer columns.
pub(super) fn bytes_for_one_in_fp_rate(num_slots: u32, one_in_fp: f64, rounding_bias32: u32) -> usize {
    let fp = 1.0 / one_in_fp;
    if !(one_in_fp > 1.0 && fp < 1.0) {
        return SEGMENT_BYTES;
    }
    if one_in_fp > f64::from(u32::MAX) {
        return num_slots as usize * 4;
    }
    let rounded = one_in_fp as u32;
    let lower_columns = 31 - rounded.leading_zeros();
    let lower_fp = 2f64.powi(-(lower_columns as i32));
    let upper_fp = 2f64.powi(-(lower_columns as i32 + 1));
    let lower_portion = (fp - upper_fp) / (lower_fp - upper_fp);
    let bias = (f64::from(rounding_bias32) + 0.5) / 4_294_967_296.0;
    let num_starts = num_slots - COEFF_BITS + 1;
    let upper_start_block = ((lower_portion * f64::from(num_starts) + bias) / f64::from(COEFF_BITS)) as u32;
    let num_blocks = num_slots / COEFF_BITS;
    let num_segments = num_blocks * lower_columns + num_blocks.saturating_sub(upper_start_block);
    num_segments as usize * SEGMENT_BYTES
}

/// The column layout of `len` bytes over `num_blocks` blocks: (upper columns, first block
/// with the upper count, segments used), as `InternalConfigure`.
fn layout(len: usize, num_blocks: u32) -> (u32, u32, u32) {
    let num_segments = (len / SEGMENT_BYTES) as u32;
    if num_blocks == 0 {
        return (0, 0, num_segments);
    }
    let upper = num_segments.div_ceil(num_blocks);
    if upper > 32 {
        return (32, 0, num_blocks * 32);
    }
    (upper, upper * num_blocks - num_segments, num_segments)
}

/// `Standard128RibbonBitsBuilder::EstimatedFpRate` for a Ribbon filter (`len` includes the
/// metadata); what `optimize_filters_for_memory` balances.
pub(super) fn estimated_fp_rate(keys: usize, len: usize) -> f64 {
    if len <= METADATA_LEN {
        return if keys > 0 { 1.0 } else { 0.0 };
    }
    if keys > MAX_RIBBON_ENTRIES {
        return rounding::estimated_fp_rate(keys, len);
    }
    let num_blocks = num_slots_for(keys as u32) / COEFF_BITS;
    let (upper, upper_start, _) = layout(len, num_blocks);
    let num_starts = num_blocks * COEFF_BITS - COEFF_BITS + 1;
    let lower_portion = f64::from(upper_start) * f64::from(COEFF_BITS) / f64::from(num_starts);
    lower_portion * 0.5f64.powi(upper as i32 - 1) + (1.0 - lower_portion) * 0.5f64.powi(upper as i32)
}

/// RocksDB's Ribbon `RoundDownUsableSpace`: whole 16-byte segments.
pub(super) fn round_down_usable(available: usize) -> usize {
    ((available.saturating_sub(METADATA_LEN)) & !(SEGMENT_BYTES - 1)) + METADATA_LEN
}

/// The FP rate the Ribbon filter aims at: one in this many (the policy's
/// `desired_one_in_fp_rate_`, from the sanitized bits per key).
pub(super) fn desired_one_in_fp_rate(bits_per_key: f64, millibits: u32) -> f64 {
    1.0 / rounding::cache_local_fp_rate(bits_per_key, fast_local_num_probes(millibits) as i32, 512)
}

/// The FastLocalBloom length (metadata included) for `keys` keys, as its `CalculateSpace`.
fn bloom_space(keys: usize, millibits: u32) -> usize {
    let raw = (keys as u64 * u64::from(millibits)).div_ceil(8000).min(0xffff_ffc0);
    raw.next_multiple_of(64) as usize + METADATA_LEN
}

/// What to build for `hashes` (non-empty): Some((length with metadata, slots)) for Ribbon,
/// None for the Bloom fallback (`CalculateSpaceAndSlots`).
pub(super) fn space_and_slots(hashes: &[u64], one_in_fp: f64, millibits: u32) -> Option<(usize, u32)> {
    if hashes.len() > MAX_RIBBON_ENTRIES {
        return None;
    }
    let entropy = hashes.first().map_or(0, |h| (h >> 32) as u32);
    let num_slots = num_slots_for(hashes.len() as u32);
    let len = bytes_for_one_in_fp_rate(num_slots, one_in_fp, entropy) + METADATA_LEN;
    if num_slots < 1024 && bloom_space(hashes.len(), millibits) < len {
        return None;
    }
    Some((len, num_slots))
}

/// The banding: one coefficient row and result row per slot (zero = empty).
struct Banding {
    coeffs: Vec<u128>,
    results: Vec<u32>,
}

impl Banding {
    /// Adds every hash with `seed`; false when some key cannot be added (`BandingAddRange`
    /// without backtracking: the banding is then thrown away).
    fn add_all(&mut self, hashes: &[u64], seed: u32, num_starts: u32) -> bool {
        let raw = raw_seed(seed);
        for &h in hashes {
            let (start, mut cr, mut rr) = hash_row(h, raw, num_starts);
            let mut i = start as usize;
            loop {
                let at = self.coeffs[i];
                if at == 0 {
                    self.coeffs[i] = cr;
                    self.results[i] = rr;
                    break;
                }
                cr ^= at;
                rr ^= self.results[i];
                if cr == 0 {
                    if rr != 0 {
                        return false;
                    }
                    break;
                }
                let tz = cr.trailing_zeros();
                i += tz as usize;
                cr >>= tz;
            }
        }
        true
    }
}

/// A banding that took every key, with the seed that made it.
pub(super) struct Solved {
    banding: Banding,
    seed: u32,
    num_blocks: u32,
}

/// Bands `hashes` into `num_slots` slots, trying ordinal seeds from the low byte of the
/// first hash on (`ResetAndFindSeedToSolve`); None when all 256 fail (RocksDB then builds
/// the Bloom filter).
pub(super) fn solve(hashes: &[u64], num_slots: u32) -> Option<Solved> {
    let start_seed = hashes.first().map_or(0, |&h| h as u32 & 255);
    let num_starts = num_slots - COEFF_BITS + 1;
    let mut banding = Banding { coeffs: Vec::new(), results: Vec::new() };
    let mut seed = start_seed;
    loop {
        banding.coeffs.clear();
        banding.coeffs.resize(num_slots as usize, 0);
        banding.results.clear();
        banding.results.resize(num_slots as usize, 0);
        if banding.add_all(hashes, seed, num_starts) {
            return Some(Solved { banding, seed, num_blocks: num_slots / COEFF_BITS });
        }
        seed = (seed + 1) & 255;
        if seed == start_seed {
            return None;
        }
    }
}

impl Solved {
    /// The filter in `len` bytes (metadata included): solution segments, then the trailer.
    pub(super) fn write(&self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len.max(METADATA_LEN)];
        let len = out.len();
        back_substitute(&self.banding, self.num_blocks, &mut out[..len - METADATA_LEN]);
        out[len - 5] = 0xfe;
        out[len - 4] = self.seed as u8;
        out[len - 3..].copy_from_slice(&self.num_blocks.to_le_bytes()[..3]);
        out
    }
}

/// `InterleavedBackSubst`: solves the banding from the last slot up, keeping for every
/// column the last 128 solution bits, and stores each block's columns as its segments.
fn back_substitute(banding: &Banding, num_blocks: u32, data: &mut [u8]) {
    let (upper, upper_start, num_segments) = layout(data.len(), num_blocks);
    if upper == 0 {
        return;
    }
    let mut state = vec![0u128; upper as usize];
    let mut segment = num_segments as usize;
    for block in (0..num_blocks).rev() {
        let cols = (upper - u32::from(block < upper_start)) as usize;
        let first = (block * COEFF_BITS) as usize;
        for i in (first..first + COEFF_BITS as usize).rev() {
            let (cr, rr) = (banding.coeffs[i], banding.results[i]);
            for (j, s) in state.iter_mut().enumerate().take(cols) {
                let tmp = *s << 1;
                let bit = ((tmp & cr).count_ones() & 1) ^ ((rr >> j) & 1);
                *s = tmp | u128::from(bit);
            }
        }
        segment -= cols;
        for (j, s) in state.iter().enumerate().take(cols) {
            let at = (segment + j) * SEGMENT_BYTES;
            data[at..at + SEGMENT_BYTES].copy_from_slice(&s.to_le_bytes());
        }
    }
}

/// The Ribbon filter's length after `optimize_filters_for_memory` (the policy's shared
/// balance, Ribbon's FP estimate and segment size).
pub(super) fn rounded_len(r: &FilterRounding, target: usize, keys: usize) -> usize {
    r.choose_len_by(target, keys, estimated_fp_rate, round_down_usable)
}

/// `BandingConfigHelper1::GetNumToAdd`: the keys `num_slots` slots take with a 1-in-20
/// failure chance per seed.
fn num_to_add(num_slots: u32) -> u32 {
    if num_slots == 0 {
        return 0;
    }
    #[allow(clippy::approx_constant)]
    let log2 = f64::from(num_slots).ln() * 1.4426950409;
    let floor = log2 as u32;
    let known = KNOWN_TO_ADD_BY_POW2.len() as u32;
    if floor + 1 < known {
        let ceil_portion = f64::from(num_slots) / f64::from(1u32 << floor) - 1.0;
        (ceil_portion * KNOWN_TO_ADD_BY_POW2[floor as usize + 1]
            + (1.0 - ceil_portion) * KNOWN_TO_ADD_BY_POW2[floor as usize]) as u32
    } else {
        let final_known = f64::from(1u32 << (known - 1)) / KNOWN_TO_ADD_BY_POW2[(known - 1) as usize];
        let base = final_known - f64::from(known - 1) * FACTOR_PER_POW2;
        (f64::from(num_slots) / (base + log2 * FACTOR_PER_POW2)) as u32
    }
}

/// `SerializableInterleavedSolution::RoundDownNumSlots` (no smash: never one block).
fn round_down_num_slots(num_slots: u32) -> u32 {
    let corrected = num_slots / COEFF_BITS * COEFF_BITS;
    if corrected == COEFF_BITS {
        0
    } else {
        corrected
    }
}

/// `Standard128RibbonBitsBuilder::ApproximateNumEntries`: the keys a Ribbon filter of
/// `bytes` bytes (metadata included) holds at a 1-in-`one_in_fp` FP rate; for small
/// filters the Bloom fallback's count (`bloom_entries`) when larger.
pub(super) fn approximate_num_entries(
    one_in_fp: f64,
    bytes: usize,
    bloom_entries: impl Fn(usize) -> usize,
) -> usize {
    let len_no_meta = round_down_usable(bytes.max(METADATA_LEN)) - METADATA_LEN;
    // NaN counts as "no FP rate": as RocksDB's `!(x > 1.0)`.
    if one_in_fp.partial_cmp(&1.0) != Some(std::cmp::Ordering::Greater) {
        return MAX_RIBBON_ENTRIES;
    }
    let min_real_bits_per_slot = if one_in_fp >= 1.0 + f64::from(u32::MAX) {
        32.0
    } else {
        let rounded = one_in_fp as u32;
        let upper_bits = 1 + (31 - rounded.leading_zeros()) as i32;
        let fp_for_upper = 2f64.powi(-upper_bits);
        let portion_lower = (1.0 / one_in_fp - fp_for_upper) / fp_for_upper;
        f64::from(upper_bits) - portion_lower
    };
    let max_slots = len_no_meta as f64 * 8.0 / min_real_bits_per_slot;
    let max_supported = f64::from(config_num_slots(MAX_RIBBON_ENTRIES as u32));
    if max_slots.partial_cmp(&max_supported) != Some(std::cmp::Ordering::Less) {
        return MAX_RIBBON_ENTRIES;
    }
    let mut slots = round_up_num_slots(max_slots as u32);
    let mut i = 0;
    while slots > 0 {
        if bytes_for_one_in_fp_rate(slots, one_in_fp, 0) <= len_no_meta || i >= 2 {
            break;
        }
        slots = round_down_num_slots(slots - 1);
        i += 1;
    }
    let n = num_to_add(slots) as usize;
    if slots < 1024 {
        n.max(bloom_entries(bytes))
    } else {
        n.min(MAX_RIBBON_ENTRIES)
    }
}
