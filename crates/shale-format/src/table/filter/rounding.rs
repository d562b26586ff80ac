//! RocksDB's `optimize_filters_for_memory` for FastLocalBloom filters (on by default since
//! RocksDB 9; `BlockBasedOptions::set_optimize_filters_for_memory`).
//!
//! A filter block is kept in memory (block cache) as one allocation of its bytes plus the
//! 5-byte block trailer. Without the option a filter gets exactly the bytes its keys and
//! bits per key ask for, and the allocator's size class wastes the rest. With it, RocksDB
//! (`XXPH3FilterBitsBuilder::AllocateMaybeRounding`, filter_policy.cc) sizes each filter to
//! what the allocator hands out anyway, and keeps the false-positive (FP) rate right on
//! average instead of per filter:
//!
//! ```text
//!   target      = bytes asked for (keys * millibits / 8000, rounded up to 64) + 5 metadata
//!   balance     = sum over the policy's filters so far of (fp(chosen) - fp(target)) * 2^32
//!   1. balance < 0 (earlier filters came out better than asked): try 3/4, 13/16, 7/8, 15/16
//!      of the target (rounded down to 64 bytes); take the first whose fp is at most
//!      fp(target) - balance / 2^32
//!   2. ask malloc for chosen + 5 bytes; when malloc_usable_size gives more (but less than
//!      4/3 of the request), grow the filter into it (rounded down to 64 bytes)
//!   3. balance += (fp(chosen) - fp(target)) * 2^32; num_probes from the chosen size
//! ```
//! The balance belongs to one filter policy: every table built with one
//! `BlockBasedOptions::set_bloom_filter` call (and its clones) shares it, as RocksDB's
//! `BloomFilterPolicy::aggregate_rounding_balance_` does, so the filters' sizes depend on
//! the order they were built in. Step 2 asks the C allocator (glibc's `malloc` and
//! `malloc_usable_size`, what RocksDB's default build uses) and frees the block at once:
//! Shale's own buffers are Rust `Vec`s, but the sizes must be those RocksDB would pick
//! on the same machine. With glibc, a block below its mmap threshold (128 KiB at start)
//! has at most 15 spare bytes, never a whole 64-byte bucket, so such filters keep their
//! size and only their probe count follows the density actually reached (which already
//! differs from the option-off filter whenever rounding up to 64 bytes crosses a probe
//! step). A larger block is mmapped and page-rounded, so the filter grows and later ones
//! may shrink; glibc raises the threshold when such a block is freed, so which filters
//! grow depends on the process's history, in RocksDB as in Shale.
//! Legacy Bloom filters (format_version < 5) are never rounded, as in RocksDB.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::{fast_local_num_probes, METADATA_LEN};

/// RocksDB's block trailer (type byte and checksum), cached with the filter.
const BLOCK_TRAILER_LEN: usize = 5;
/// The largest FastLocalBloom bit array.
const MAX_LEN: usize = 0xffff_ffc0;

/// One filter policy's rounding balance (see the module comment). Clones share it.
#[derive(Clone, Debug, Default)]
pub struct FilterRounding(Arc<AtomicI64>);

impl FilterRounding {
    /// A fresh balance: what a new filter policy starts with.
    pub fn new() -> FilterRounding {
        FilterRounding::default()
    }

    /// The balance now (FP-rate surplus times 2^32; negative: better than asked).
    pub fn balance(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }

    /// The length (metadata included) of a filter of `keys` keys whose unrounded length is
    /// `target` (metadata included), and moves the balance; see the module comment.
    pub(super) fn choose_len(&self, target: usize, keys: usize) -> usize {
        self.choose_len_with(target, keys, malloc_usable)
    }

    /// [`Self::choose_len`] for another filter kind: its FP-rate estimate and its
    /// `RoundDownUsableSpace` (Ribbon: `filter/ribbon_builder.rs`).
    pub(super) fn choose_len_by(
        &self,
        target: usize,
        keys: usize,
        fp_rate: impl Fn(usize, usize) -> f64,
        round_down: impl Fn(usize) -> usize,
    ) -> usize {
        self.choose_len_general(target, keys, malloc_usable, fp_rate, round_down)
    }

    /// [`Self::choose_len`] with `usable` standing for the allocator.
    fn choose_len_with(&self, target: usize, keys: usize, usable: impl Fn(usize) -> usize) -> usize {
        self.choose_len_general(target, keys, usable, estimated_fp_rate, round_down_usable)
    }

    fn choose_len_general(
        &self,
        target: usize,
        keys: usize,
        usable: impl Fn(usize) -> usize,
        estimated_fp_rate: impl Fn(usize, usize) -> f64,
        round_down_usable: impl Fn(usize) -> usize,
    ) -> usize {
        let target_fp = estimated_fp_rate(keys, target);
        let mut len = target;
        let mut fp = target_fp;
        let balance = self.0.load(Ordering::Relaxed);
        if balance < 0 {
            let for_balance_fp = -(balance as f64) / 4_294_967_296.0 + target_fp;
            let raw = (target - METADATA_LEN) as u64;
            for rough in [3 * raw / 4, 13 * raw / 16, 7 * raw / 8, 15 * raw / 16] {
                let candidate = round_down_usable(rough as usize + METADATA_LEN);
                let candidate_fp = estimated_fp_rate(keys, candidate);
                if candidate_fp <= for_balance_fp {
                    len = candidate;
                    fp = candidate_fp;
                    break;
                }
            }
        }
        let requested = len + BLOCK_TRAILER_LEN;
        let usable = usable(requested).max(requested);
        if usable - usable / 4 > requested {
            // More than 4/3 of the request: RocksDB does not use it.
        } else if usable > requested {
            len = round_down_usable(usable - BLOCK_TRAILER_LEN);
            fp = estimated_fp_rate(keys, len);
        }
        let diff = ((fp - target_fp) * 4_294_967_296.0) as i64;
        self.0.fetch_add(diff, Ordering::Relaxed);
        len
    }
}

/// What the C allocator really hands out for `n` bytes (`n` itself if it cannot say).
fn malloc_usable(n: usize) -> usize {
    // SAFETY: malloc with any size is sound; a non-null result is a live allocation that
    // malloc_usable_size may inspect, and it is freed exactly once, right after.
    unsafe {
        let p = libc::malloc(n);
        if p.is_null() {
            return n;
        }
        let usable = libc::malloc_usable_size(p);
        libc::free(p);
        usable.max(n)
    }
}

/// RocksDB's `RoundDownUsableSpace`: the largest FastLocalBloom length (metadata included)
/// that fits in `available` bytes.
pub(super) fn round_down_usable(available: usize) -> usize {
    let raw = available.saturating_sub(METADATA_LEN).min(MAX_LEN);
    (raw & !63) + METADATA_LEN
}

/// Probes for a filter of `keys` keys in `len` bytes (metadata included), as RocksDB picks
/// them with `optimize_filters_for_memory`: from the density actually reached.
pub(super) fn num_probes_for(keys: usize, len: usize) -> u32 {
    let millibits = (len.saturating_sub(METADATA_LEN) as u64) * 8000;
    // RocksDB converts to int; densities anywhere near 2^31 cannot occur.
    let per_key = (millibits / keys.max(1) as u64).min(i32::MAX as u64) as u32;
    fast_local_num_probes(per_key)
}

/// RocksDB's estimated FP rate of a FastLocalBloom filter (`FastLocalBloomImpl::EstimatedFpRate`
/// with 64-bit hashes): a cache-local Bloom filter's rate combined with hash collisions.
pub(super) fn estimated_fp_rate(keys: usize, len: usize) -> f64 {
    if len <= METADATA_LEN {
        return if keys > 0 { 1.0 } else { 0.0 };
    }
    let probes = num_probes_for(keys, len) as i32;
    let bits_per_key = 8.0 * (len - METADATA_LEN) as f64 / keys as f64;
    let filter = cache_local_fp_rate(bits_per_key, probes, 512);
    let fingerprint = fingerprint_fp_rate(keys, 64);
    filter + fingerprint - filter * fingerprint
}

/// A standard Bloom filter's FP rate at `bits_per_key` and `probes`.
fn standard_fp_rate(bits_per_key: f64, probes: i32) -> f64 {
    (1.0 - (-(probes as f64) / bits_per_key).exp()).powi(probes)
}

/// A cache-local Bloom filter's FP rate: the mean of the standard rates one standard
/// deviation of bucket occupancy above and below the average.
pub(super) fn cache_local_fp_rate(bits_per_key: f64, probes: i32, line_bits: i32) -> f64 {
    if bits_per_key <= 0.0 {
        return 1.0;
    }
    let keys_per_line = line_bits as f64 / bits_per_key;
    let stddev = keys_per_line.sqrt();
    let crowded = standard_fp_rate(line_bits as f64 / (keys_per_line + stddev), probes);
    let uncrowded = standard_fp_rate(line_bits as f64 / (keys_per_line - stddev), probes);
    (crowded + uncrowded) / 2.0
}

/// The chance a new key's `bits`-bit hash equals one of `keys` stored hashes.
fn fingerprint_fp_rate(keys: usize, bits: i32) -> f64 {
    let base = keys as f64 * 0.5f64.powi(bits);
    if base > 0.0001 {
        1.0 - (-base).exp()
    } else {
        base - base * base * 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_down_keeps_whole_buckets() {
        assert_eq!(round_down_usable(5), 5);
        assert_eq!(round_down_usable(68), 5);
        assert_eq!(round_down_usable(69), 69);
        assert_eq!(round_down_usable(1300), 1285);
    }

    #[test]
    fn fp_rate_falls_with_size_and_matches_rocksdb_at_ten_bits() {
        // 10 bits per key, 6 probes: RocksDB's comment gives about 0.957% for its filter.
        let one_percent = estimated_fp_rate(1000, 1250 + METADATA_LEN);
        assert!((0.009..0.0105).contains(&one_percent), "{one_percent}");
        assert!(estimated_fp_rate(1000, 2000 + METADATA_LEN) < one_percent);
        assert_eq!(estimated_fp_rate(0, METADATA_LEN), 0.0);
        assert_eq!(estimated_fp_rate(3, METADATA_LEN), 1.0);
    }

    #[test]
    fn small_filters_keep_their_size_with_glibc() {
        let r = FilterRounding::new();
        // 10 bits per key over 1000 keys: 1280 bytes + 5. glibc has at most 15 spare
        // bytes for a block this small, so the size stays and the balance does not move.
        assert_eq!(r.choose_len(1285, 1000), 1285);
        assert_eq!(r.balance(), 0);
    }

    #[test]
    fn page_rounding_grows_filters_then_later_ones_shrink() {
        let pages = |n: usize| n.next_multiple_of(4096);
        let r = FilterRounding::new();
        // 4101 bytes asked for: the 4106-byte block comes back as 8192, which is more
        // than 4/3 of the request, so the filter stays; the balance stays at 0.
        assert_eq!(r.choose_len_with(64 * 64 + METADATA_LEN, 3000, pages), 4101);
        assert_eq!(r.balance(), 0);
        // 7 buckets short of two pages: the spare bytes become buckets, the FP rate falls.
        let asked = 64 * 121 + METADATA_LEN;
        let grown = r.choose_len_with(asked, 6000, pages);
        assert_eq!(grown, round_down_usable(8192 - BLOCK_TRAILER_LEN));
        assert!(grown > asked);
        assert!(r.balance() < 0);
        // More such filters, until 1% of FP rate is in credit (each gives about 0.17%).
        for _ in 0..20 {
            if r.balance() < -(1i64 << 32) / 100 {
                break;
            }
            assert_eq!(r.choose_len_with(asked, 6000, pages), grown);
        }
        assert!(r.balance() < -(1i64 << 32) / 100, "{}", r.balance());
        // With credit in the balance, a filter may now be built smaller than asked (3/4 of
        // it first), and its FP rate then spends the credit.
        let before = r.balance();
        let asked = 64 * 1000 + METADATA_LEN;
        let len = r.choose_len_with(asked, 51_200, |n| n);
        assert!(len < asked, "{len}");
        assert!(r.balance() > before);
        // Clones share the balance.
        assert_eq!(r.clone().balance(), r.balance());
    }
}
