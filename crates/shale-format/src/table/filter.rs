//! RocksDB's built-in full filter ("rocksdb.BuiltinBloomFilter"), bit-exact with RocksDB 7.8.3.
//!
//! A full filter block is the raw filter bytes followed by a 5-byte metadata trailer. The
//! first trailer byte says which implementation wrote it:
//!
//! ```text
//! FastLocalBloom (format_version 5, what FilterBuilder::new writes):
//!   0            len          len+1        len+2                len+3 .. len+5
//!   | bit array  | 0xff (-1)  | 0x00       | block/probes byte  | 00 00 (reserved)
//!   len is a multiple of 64: one 512-bit cache line ("bucket") per 64 bytes. The probes byte
//!   holds num_probes in its low 5 bits (1..=30) and log2(bucket bytes) - 6 in its top 3 bits
//!   (only 0 = 64-byte buckets exists). Key hash h = hash64(key): the low 32 bits pick the
//!   bucket ((lo * buckets) >> 32), the high 32 bits the probes: bit (h2 >> 23) of the bucket,
//!   then h2 *= 0x9e3779b9, num_probes times.
//!
//! LegacyBloom (format_version < 5, FilterBuilder::new_legacy):
//!   0            len                   len+1 .. len+5
//!   | bit array  | num_probes (1..=127) | num_lines u32 LE
//!   len = num_lines * line size (64 bytes natively; another power of two if written on a
//!   machine with another cache-line size). h = bloom_hash(key) (32 bits); line h % num_lines;
//!   probe bit (h & (line_bits - 1)), then h += rotate_right(h, 17), num_probes times.
//!
//! Other trailers: first byte 0xfe (-2) = Standard128Ribbon (seed byte, 24-bit block count;
//! layout in `filter/ribbon.rs`), 0 = "zero probes" (matches everything), other negative
//! values reserved. A filter of 5 bytes or fewer holds no keys
//! and matches nothing.
//! ```
//!
//! Reading follows RocksDB: Ribbon filters (`NewRibbonFilterPolicy`; Shale builds them too) are
//! queried as RocksDB queries them; a Bloom trailer with reserved settings, or a Ribbon filter
//! of fewer than 2 blocks, is not decoded; the reader reports [`FilterKind::Unsupported`] and
//! `may_match` answers `true` for every key (reads stay correct, they are just not filtered). Geometry no RocksDB writer can
//! produce (legacy line count that does not divide the length, a FastLocalBloom array shorter
//! than one bucket) is a Corruption error.

mod hash;
mod ribbon;
mod ribbon_builder;
mod rounding;
#[cfg(test)]
mod tests;

pub use hash::{bloom_hash, hash32, hash64};
pub use rounding::FilterRounding;

use crate::coding::decode_fixed32;
use crate::{Error, Result};

/// The filter policy name stored in SST files ("fullfilter." + this is the meta block key).
pub const BLOOM_POLICY_NAME: &str = "rocksdb.BuiltinBloomFilter";
/// The table property "rocksdb.filter.policy" of RocksDB's Ribbon policy's tables.
pub const RIBBON_POLICY_PROPERTY_NAME: &str = "ribbonfilter";
/// The metaindex key of a full filter block written with the built-in policy.
pub const FULL_FILTER_META_KEY: &str = "fullfilter.rocksdb.BuiltinBloomFilter";

/// The filter policies RocksDB 11.8.1's object registry builds by id besides its Bloom and
/// Ribbon policies (`RegisterBuiltinFilterPolicies`, `table/block_based/filter_policy.cc`):
/// each internal one builds its one implementation whatever the `format_version`, the
/// read-only one builds no filter for new tables (and tables' filters are read as ever).
/// Each is written back (OPTIONS file, LOG dump, "rocksdb.filter.policy") by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternalFilterPolicy {
    /// `rocksdb.internal.LegacyBloomFilter:<bits>`: the legacy Bloom of format_version < 5.
    LegacyBloom,
    /// `rocksdb.internal.FastLocalBloomFilter:<bits>`: the cache-local Bloom of format 5+.
    FastLocalBloom,
    /// `rocksdb.internal.Standard128RibbonFilter:<bits>`: Standard128 Ribbon at every level.
    Standard128Ribbon,
    /// `rocksdb.BuiltinBloomFilter` (`ReadOnlyBuiltinFilterPolicy`): writes no filter.
    ReadOnlyBuiltin,
}

impl InternalFilterPolicy {
    /// The policy's `Name()` (its id without the bits).
    pub fn name(self) -> &'static str {
        match self {
            InternalFilterPolicy::LegacyBloom => "rocksdb.internal.LegacyBloomFilter",
            InternalFilterPolicy::FastLocalBloom => "rocksdb.internal.FastLocalBloomFilter",
            InternalFilterPolicy::Standard128Ribbon => "rocksdb.internal.Standard128RibbonFilter",
            InternalFilterPolicy::ReadOnlyBuiltin => BLOOM_POLICY_NAME,
        }
    }

    /// The policy named `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            InternalFilterPolicy::LegacyBloom,
            InternalFilterPolicy::FastLocalBloom,
            InternalFilterPolicy::Standard128Ribbon,
            InternalFilterPolicy::ReadOnlyBuiltin,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }

    /// The filter builder the policy gives a new table (RocksDB's `GetBuilderWithContext`):
    /// None for the read-only policy and for bits meaning "no filter" (below 0.5).
    /// `rounding`: the `optimize_filters_for_memory` balance (the legacy Bloom ignores it).
    pub fn builder(self, bits_per_key: f64, rounding: Option<FilterRounding>) -> Option<FilterBuilder> {
        if millibits_per_key(bits_per_key) == 0 {
            return None;
        }
        let mut b = match self {
            InternalFilterPolicy::ReadOnlyBuiltin => return None,
            InternalFilterPolicy::LegacyBloom => FilterBuilder::new_legacy(bits_per_key),
            InternalFilterPolicy::FastLocalBloom => match rounding {
                Some(r) => FilterBuilder::new_optimized_for_memory(bits_per_key, r),
                None => FilterBuilder::new(bits_per_key),
            },
            InternalFilterPolicy::Standard128Ribbon => FilterBuilder::new_ribbon(bits_per_key, rounding),
        };
        b.named = Some(self.name());
        Some(b)
    }
}

/// Length of the metadata trailer at the end of every built-in filter.
const METADATA_LEN: usize = 5;
/// Bytes per FastLocalBloom bucket (an x86 cache line).
const BUCKET_BYTES: usize = 64;
/// Native cache line size of the legacy Bloom filter, as log2 bytes.
const LEGACY_LOG2_LINE: u32 = 6;
/// The golden-ratio multiplier that derives successive FastLocalBloom probes.
const PROBE_MULT: u32 = 0x9e37_79b9;

/// RocksDB's sanitizing of `bits_per_key` into thousandths of a bit: below 0.5 means "no
/// filter" (0), below 1 is raised to 1, 100 and above (or NaN) is capped at 100.
pub fn millibits_per_key(bits_per_key: f64) -> u32 {
    let b = if bits_per_key < 0.5 {
        0.0
    } else if bits_per_key < 1.0 {
        1.0
    } else if bits_per_key < 100.0 {
        bits_per_key
    } else {
        100.0
    };
    (b * 1000.0 + 0.500001) as u32
}

/// RocksDB's text of a policy's bits per key (`GetBitsPerKeySuffix`): ":" then the
/// sanitized thousandths as a decimal without trailing zeros ("10", "9.5", "7.125").
pub fn bits_per_key_suffix(bits_per_key: f64) -> String {
    let m = millibits_per_key(bits_per_key);
    let mut s = format!(":{}", m / 1000);
    let frac = format!("{:03}", m % 1000);
    let frac = frac.trim_end_matches('0');
    if !frac.is_empty() {
        s.push('.');
        s.push_str(frac);
    }
    s
}

/// FastLocalBloom's choice of probe count for a given density (thousandths of a bit per key).
pub fn fast_local_num_probes(millibits: u32) -> u32 {
    const STEPS: [(u32, u32); 12] = [
        (2080, 1),
        (3580, 2),
        (5100, 3),
        (6640, 4),
        (8300, 5),
        (10070, 6),
        (11720, 7),
        (14001, 8),
        (16050, 9),
        (18300, 10),
        (22001, 11),
        (25501, 12),
    ];
    match STEPS.iter().find(|&&(limit, _)| millibits <= limit) {
        Some(&(_, probes)) => probes,
        None if millibits > 50000 => 24,
        None => (millibits - 1) / 2000 - 1,
    }
}

/// The legacy filter's probe count: whole bits per key times ln 2, rounded down, in 1..=30.
fn legacy_num_probes(whole_bits_per_key: u32) -> u32 {
    ((whole_bits_per_key as f64 * 0.69) as u32).clamp(1, 30)
}

/// Maps a 32-bit hash uniformly onto `0..range` (Lemire's multiply-shift, RocksDB's FastRange32).
#[inline]
fn fast_range32(hash: u32, range: u32) -> u32 {
    (((hash as u64) * (range as u64)) >> 32) as u32
}

enum BuilderImpl {
    /// format_version 5: 64-bit hashes of the distinct keys; with `optimize_filters_for_memory`
    /// the policy's rounding balance (`filter/rounding.rs`). With `ribbon` (the FP rate
    /// aimed at, one in this many) a Standard128Ribbon filter (`filter/ribbon_builder.rs`),
    /// or this Bloom filter where RocksDB falls back to it.
    FastLocal { millibits: u32, hashes: Vec<u64>, rounding: Option<FilterRounding>, ribbon: Option<f64> },
    /// format_version < 5: 32-bit hashes, whole bits per key.
    Legacy { bits_per_key: u32, hashes: Vec<u32> },
}

/// Builds one full filter. Consecutive keys with the same hash are added once, as RocksDB
/// does (a table adds keys in sorted order, so repeats are adjacent).
///
/// With a prefix extractor a table adds each key's prefix too ([`FilterBuilder::add_key_and_alt`],
/// RocksDB's `AddKeyAndAlt`), or only the prefix when whole-key filtering is off.
pub struct FilterBuilder {
    imp: BuilderImpl,
    /// The hash of the last prefix ("alt") added with `add_key_and_alt`.
    prev_alt_hash: Option<u64>,
    /// Made for RocksDB's Ribbon policy (see [`FilterBuilder::policy_name`]).
    ribbon_policy: bool,
    /// Made for one of RocksDB's internal policies ([`InternalFilterPolicy`]): its name.
    named: Option<&'static str>,
    /// RocksDB's `detect_filter_construct_corruption` (see [`FilterBuilder::finish_checked`]):
    /// Some(running checksum of the hash entries added) when on.
    detect: Option<u64>,
}

impl FilterBuilder {
    /// A FastLocalBloom builder (what RocksDB writes with format_version 5). `bits_per_key` is
    /// sanitized as RocksDB does (see [`millibits_per_key`]); a value meaning "no filter" is
    /// raised to 1 bit per key — callers decide beforehand whether to build a filter at all.
    pub fn new(bits_per_key: f64) -> Self {
        let millibits = millibits_per_key(bits_per_key).max(1000);
        FilterBuilder {
            imp: BuilderImpl::FastLocal { millibits, hashes: Vec::new(), rounding: None, ribbon: None },
            prev_alt_hash: None,
            ribbon_policy: false,
            named: None,
            detect: None,
        }
    }

    /// A FastLocalBloom builder sized as RocksDB's `optimize_filters_for_memory` sizes it
    /// (see `filter/rounding.rs`), with the filter policy's shared balance.
    pub fn new_optimized_for_memory(bits_per_key: f64, rounding: FilterRounding) -> Self {
        let millibits = millibits_per_key(bits_per_key).max(1000);
        FilterBuilder {
            imp: BuilderImpl::FastLocal {
                millibits,
                hashes: Vec::new(),
                rounding: Some(rounding),
                ribbon: None,
            },
            prev_alt_hash: None,
            ribbon_policy: false,
            named: None,
            detect: None,
        }
    }

    /// A Standard128Ribbon builder (RocksDB's `NewRibbonFilterPolicy`) aiming at the FP
    /// rate of a FastLocalBloom filter of `bits_per_key` (sanitized as [`millibits_per_key`]);
    /// Bloom for small key sets where that is smaller, as RocksDB. `rounding`: the policy's
    /// `optimize_filters_for_memory` balance, shared with its Bloom filters.
    pub fn new_ribbon(bits_per_key: f64, rounding: Option<FilterRounding>) -> Self {
        let millibits = millibits_per_key(bits_per_key).max(1000);
        let sanitized = if bits_per_key < 1.0 {
            1.0
        } else if bits_per_key < 100.0 {
            bits_per_key
        } else {
            100.0
        };
        let one_in_fp = ribbon_builder::desired_one_in_fp_rate(sanitized, millibits);
        FilterBuilder {
            imp: BuilderImpl::FastLocal { millibits, hashes: Vec::new(), rounding, ribbon: Some(one_in_fp) },
            prev_alt_hash: None,
            ribbon_policy: false,
            named: None,
            detect: None,
        }
    }

    /// The builder RocksDB's Ribbon policy (`NewRibbonFilterPolicy(bits, bloom_before_level)`)
    /// gives a table of `level` (-1: flush; `i32::MAX - 1`: unknown or last): FastLocalBloom
    /// below `bloom_before_level`, Ribbon from there on, whatever the format_version.
    pub fn for_ribbon_policy(
        bits_per_key: f64,
        bloom_before_level: i32,
        level: i32,
        rounding: Option<FilterRounding>,
    ) -> Self {
        let mut b = if level < bloom_before_level {
            match rounding {
                Some(r) => FilterBuilder::new_optimized_for_memory(bits_per_key, r),
                None => FilterBuilder::new(bits_per_key),
            }
        } else {
            FilterBuilder::new_ribbon(bits_per_key, rounding)
        };
        b.ribbon_policy = true;
        b
    }

    /// The table property "rocksdb.filter.policy": the policy's name, "ribbonfilter" for
    /// RocksDB's Ribbon policy (whichever filter it built), else "bloomfilter".
    pub fn policy_name(&self) -> &'static str {
        if let Some(n) = self.named {
            n
        } else if self.ribbon_policy {
            RIBBON_POLICY_PROPERTY_NAME
        } else {
            "bloomfilter"
        }
    }

    /// A legacy Bloom builder (what RocksDB writes with format_version < 5).
    pub fn new_legacy(bits_per_key: f64) -> Self {
        let millibits = millibits_per_key(bits_per_key).max(1000);
        let bits_per_key = (millibits + 500) / 1000;
        FilterBuilder {
            imp: BuilderImpl::Legacy { bits_per_key, hashes: Vec::new() },
            prev_alt_hash: None,
            ribbon_policy: false,
            named: None,
            detect: None,
        }
    }

    pub fn add_key(&mut self, key: &[u8]) {
        match &mut self.imp {
            BuilderImpl::FastLocal { hashes, .. } => {
                let h = hash64(key);
                if hashes.last() != Some(&h) {
                    hashes.push(h);
                    if let Some(sum) = self.detect.as_mut() {
                        *sum = entry_checksum(*sum, h);
                    }
                }
            }
            BuilderImpl::Legacy { hashes, .. } => {
                let h = bloom_hash(key);
                if hashes.last() != Some(&h) {
                    hashes.push(h);
                }
            }
        }
    }

    /// Adds a key and its prefix (`alt`), as RocksDB's `AddKeyAndAlt` (RocksDB 8+): the
    /// prefix first unless it equals the previous prefix, the key or the last entry; then
    /// the key unless it equals the last entry or the previous prefix. A run of keys of one
    /// prefix adds the prefix once.
    pub fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        let prev_alt = self.prev_alt_hash;
        match &mut self.imp {
            BuilderImpl::FastLocal { hashes, .. } => {
                let (kh, ah) = (hash64(key), hash64(alt));
                let prev_key = hashes.last().copied();
                if Some(ah) != prev_alt && ah != kh && Some(ah) != prev_key {
                    hashes.push(ah);
                    if let Some(sum) = self.detect.as_mut() {
                        *sum = entry_checksum(*sum, ah);
                    }
                }
                self.prev_alt_hash = Some(ah);
                if Some(kh) != prev_key && Some(kh) != prev_alt {
                    hashes.push(kh);
                    if let Some(sum) = self.detect.as_mut() {
                        *sum = entry_checksum(*sum, kh);
                    }
                }
            }
            BuilderImpl::Legacy { hashes, .. } => {
                let (kh, ah) = (bloom_hash(key) as u64, bloom_hash(alt) as u64);
                let prev_key = hashes.last().map(|&h| h as u64);
                if Some(ah) != prev_alt && ah != kh && Some(ah) != prev_key {
                    hashes.push(ah as u32);
                }
                self.prev_alt_hash = Some(ah);
                if Some(kh) != prev_key && Some(kh) != prev_alt {
                    hashes.push(kh as u32);
                }
            }
        }
    }

    /// Number of entries the filter will hold (keys after collapsing adjacent repeats); this
    /// is the table property "rocksdb.num.filter_entries".
    pub fn num_added(&self) -> usize {
        match &self.imp {
            BuilderImpl::FastLocal { hashes, .. } => hashes.len(),
            BuilderImpl::Legacy { hashes, .. } => hashes.len(),
        }
    }

    /// An upper bound on the bytes `finish` makes of the entries added so far (RocksDB's
    /// `CurrentFilterSizeEstimate`, which compaction adds to an output's size with
    /// `target_file_size_is_upper_bound`): the Bloom size at this density in whole 64-byte
    /// buckets, a quarter more with `optimize_filters_for_memory`'s rounding, and the
    /// metadata. A Ribbon filter is smaller than the Bloom filter of its density.
    pub fn size_estimate(&self) -> usize {
        match &self.imp {
            BuilderImpl::FastLocal { millibits, hashes, rounding, .. } => {
                let bits = hashes.len() as u64 * u64::from(*millibits) / 1000;
                let bytes = (bits.div_ceil(8) as usize).div_ceil(BUCKET_BYTES) * BUCKET_BYTES;
                let slack = if rounding.is_some() { bytes / 4 + BUCKET_BYTES } else { 0 };
                bytes + slack + METADATA_LEN
            }
            BuilderImpl::Legacy { bits_per_key, hashes } => legacy_space(*bits_per_key, hashes.len()),
        }
    }

    /// How many entries a filter of `bytes` bytes (metadata included) holds at this
    /// builder's density: RocksDB's `ApproximateNumEntries`, which sizes the partitions of
    /// a partitioned filter (`table/partitioned_builder.rs`).
    pub fn approximate_num_entries(&self, bytes: usize) -> usize {
        match &self.imp {
            BuilderImpl::FastLocal { millibits, ribbon: None, .. } => {
                fast_local_approx_entries(*millibits, bytes)
            }
            BuilderImpl::FastLocal { millibits, ribbon: Some(one_in_fp), .. } => {
                ribbon_builder::approximate_num_entries(*one_in_fp, bytes, |b| {
                    fast_local_approx_entries(*millibits, b)
                })
            }
            BuilderImpl::Legacy { bits_per_key, .. } => {
                // The largest n whose filter fits (LegacyBloomBitsBuilder's search).
                let total_bits = (bytes as u64 * 8).min(0xffff_0000) as u32;
                let mut n = total_bits / (*bits_per_key).max(1) + 1;
                while n >= 1 && legacy_space(*bits_per_key, n as usize) > bytes {
                    n -= 1;
                }
                n as usize
            }
        }
    }

    /// RocksDB's `detect_filter_construct_corruption`: [`FilterBuilder::finish_checked`]
    /// checks the hash entries against the checksum kept as they were added, then every entry
    /// against the filter built. RocksDB's FastLocalBloom and Ribbon builders do; its legacy
    /// Bloom builder (format_version < 5) checks nothing, nor does this one.
    pub fn with_construct_corruption_detection(mut self, on: bool) -> Self {
        let legacy = matches!(self.imp, BuilderImpl::Legacy { .. });
        self.detect = (on && !legacy).then_some(0);
        self
    }

    /// [`FilterBuilder::finish`], checked when construction-corruption detection is on, as
    /// RocksDB's `MaybeVerifyHashEntriesChecksum` and `MaybePostVerify`: Corruption
    /// "Filter's hash entries checksum mismatched" when an entry changed in memory after it
    /// was added, "Corrupted filter content" when the filter built does not match an entry.
    pub fn finish_checked(&mut self) -> Result<Vec<u8>> {
        #[cfg(test)]
        let unchecked = |b: &mut Self| tamper::apply(b.finish());
        #[cfg(not(test))]
        let unchecked = |b: &mut Self| b.finish();
        let Some(sum) = self.detect else { return Ok(unchecked(self)) };
        let entries = match &self.imp {
            BuilderImpl::FastLocal { hashes, .. } => hashes.clone(),
            BuilderImpl::Legacy { .. } => return Ok(unchecked(self)),
        };
        self.detect = Some(0);
        if entries.iter().fold(0, |s, &h| entry_checksum(s, h)) != sum {
            self.finish();
            return Err(Error::corruption("Filter's hash entries checksum mismatched"));
        }
        let data = self.finish();
        #[cfg(test)]
        let data = tamper::apply(data);
        let reader = FilterReader::new(data)?;
        if entries.iter().any(|&h| !reader.hash_may_match(h)) {
            return Err(Error::corruption("Corrupted filter content"));
        }
        Ok(reader.data)
    }

    /// Test hook: changes the last hash entry added, as RocksDB's
    /// "XXPH3FilterBitsBuilder::Finish::TamperHashEntries" sync point.
    #[cfg(test)]
    pub(crate) fn tamper_last_entry(&mut self) {
        if let BuilderImpl::FastLocal { hashes, .. } = &mut self.imp {
            if let Some(h) = hashes.last_mut() {
                *h ^= 1;
            }
        }
    }

    /// The filter bytes, metadata trailer included. Clears the builder for reuse.
    pub fn finish(&mut self) -> Vec<u8> {
        self.prev_alt_hash = None;
        match &mut self.imp {
            BuilderImpl::FastLocal { millibits, hashes, rounding, ribbon } => {
                let out = match ribbon {
                    Some(one_in_fp) => finish_ribbon(*one_in_fp, *millibits, hashes, rounding.as_ref()),
                    None => finish_fast_local(*millibits, hashes, rounding.as_ref()),
                };
                hashes.clear();
                out
            }
            BuilderImpl::Legacy { bits_per_key, hashes } => {
                let out = finish_legacy(*bits_per_key, hashes);
                hashes.clear();
                out
            }
        }
    }
}

/// `Standard128RibbonBitsBuilder::Finish`: Ribbon, or the FastLocalBloom filter where
/// RocksDB falls back to it (same bits per key and rounding balance).
fn finish_ribbon(
    one_in_fp: f64,
    millibits: u32,
    hashes: &[u64],
    rounding: Option<&FilterRounding>,
) -> Vec<u8> {
    if hashes.is_empty() {
        // RocksDB's "always false" filter: no bytes.
        return Vec::new();
    }
    if let Some((len, num_slots)) = ribbon_builder::space_and_slots(hashes, one_in_fp, millibits) {
        // RocksDB sizes the filter (rounding, which moves the balance) only once a seed
        // solves; the seed does not depend on the size.
        if let Some(solved) = ribbon_builder::solve(hashes, num_slots) {
            let len = match rounding {
                Some(r) => ribbon_builder::rounded_len(r, len, hashes.len()),
                None => len,
            };
            return solved.write(len);
        }
    }
    finish_fast_local(millibits, hashes, rounding)
}

fn finish_fast_local(millibits: u32, hashes: &[u64], rounding: Option<&FilterRounding>) -> Vec<u8> {
    let raw_len = (hashes.len() as u64 * millibits as u64).div_ceil(8000).min(0xffff_ffc0);
    let len = raw_len.next_multiple_of(BUCKET_BYTES as u64) as usize;
    let (len, num_probes) = match rounding {
        // RocksDB then picks the probes from the density the chosen length reaches.
        Some(r) if !hashes.is_empty() => {
            let with_metadata = r.choose_len(len + METADATA_LEN, hashes.len());
            (with_metadata - METADATA_LEN, rounding::num_probes_for(hashes.len(), with_metadata))
        }
        _ => (len, fast_local_num_probes(millibits)),
    };
    let mut data = vec![0u8; len + METADATA_LEN];
    let buckets = (len / BUCKET_BYTES) as u32;
    if buckets > 0 {
        for &h in hashes {
            let start = fast_range32(h as u32, buckets) as usize * BUCKET_BYTES;
            let bucket = &mut data[start..start + BUCKET_BYTES];
            let mut h2 = (h >> 32) as u32;
            for _ in 0..num_probes {
                let bit = (h2 >> 23) as usize;
                bucket[bit >> 3] |= 1 << (bit & 7);
                h2 = h2.wrapping_mul(PROBE_MULT);
            }
        }
    }
    data[len] = 0xff;
    data[len + 1] = 0;
    data[len + 2] = num_probes as u8;
    data
}

/// FastLocalBloom's `ApproximateNumEntries`: whole 64-byte buckets below `bytes`.
fn fast_local_approx_entries(millibits: u32, bytes: usize) -> usize {
    let no_meta = if bytes >= METADATA_LEN {
        ((bytes - METADATA_LEN).min(0xffff_ffc0)) & !(BUCKET_BYTES - 1)
    } else {
        0
    };
    (8000 * no_meta as u64 / u64::from(millibits.max(1))) as usize
}

/// The legacy filter's size for `n` keys (`LegacyBloomBitsBuilder::CalculateSpace`).
fn legacy_space(bits_per_key: u32, n: usize) -> usize {
    if n == 0 {
        return METADATA_LEN;
    }
    let total_bits = (n as u64 * u64::from(bits_per_key)).min(0xffff_0000);
    let line_bits = 8u64 << LEGACY_LOG2_LINE;
    let lines = total_bits.div_ceil(line_bits) | 1;
    (lines * line_bits / 8) as usize + METADATA_LEN
}

fn finish_legacy(bits_per_key: u32, hashes: &[u32]) -> Vec<u8> {
    let num_probes = legacy_num_probes(bits_per_key);
    let line_bits = 8u64 << LEGACY_LOG2_LINE;
    let num_lines = if hashes.is_empty() {
        0
    } else {
        let total_bits = (hashes.len() as u64 * bits_per_key as u64).min(0xffff_0000);
        let lines = total_bits.div_ceil(line_bits);
        // An odd line count lets more hash bits influence the line choice.
        (lines | 1) as u32
    };
    let len = (num_lines as usize) << LEGACY_LOG2_LINE;
    let mut data = vec![0u8; len + METADATA_LEN];
    for &h in hashes {
        let start = ((h % num_lines) as usize) << LEGACY_LOG2_LINE;
        legacy_probe(h, num_probes, LEGACY_LOG2_LINE, |bit| {
            data[start + bit / 8] |= 1 << (bit % 8);
            true
        });
    }
    data[len] = num_probes as u8;
    data[len + 1..].copy_from_slice(&num_lines.to_le_bytes());
    data
}

/// Visits the legacy probe sequence of `h` within one line; stops early when `visit` is false.
#[inline]
fn legacy_probe(
    mut h: u32,
    num_probes: u32,
    log2_line_bytes: u32,
    mut visit: impl FnMut(usize) -> bool,
) -> bool {
    let mask = (1u32 << (log2_line_bytes + 3)) - 1;
    let delta = h.rotate_right(17);
    for _ in 0..num_probes {
        if !visit((h & mask) as usize) {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}

/// Which filter implementation a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// format_version 5 cache-local Bloom.
    FastLocalBloom,
    /// format_version < 5 Bloom.
    LegacyBloom,
    /// No keys (5 bytes or fewer): matches nothing.
    Empty,
    /// A legacy trailer with zero probes: matches everything.
    MatchAll,
    /// Standard128Ribbon (`filter/ribbon.rs`; built by `filter/ribbon_builder.rs`).
    Ribbon,
    /// A trailer with reserved settings, or a Ribbon filter RocksDB reads as "always
    /// true": not decoded, matches everything.
    Unsupported,
}

enum ReaderImpl {
    FastLocal { buckets: u32, num_probes: u32 },
    Legacy { num_lines: u32, log2_line_bytes: u32, num_probes: u32 },
    Ribbon(ribbon::Ribbon),
    Constant(bool),
}

/// Queries a full filter block (its contents without the block trailer).
pub struct FilterReader {
    data: Vec<u8>,
    kind: FilterKind,
    imp: ReaderImpl,
}

impl FilterReader {
    /// Bytes of filter held in memory.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    pub fn new(data: Vec<u8>) -> Result<FilterReader> {
        let (kind, imp) = decode_trailer(&data)?;
        Ok(FilterReader { data, kind, imp })
    }

    pub fn kind(&self) -> FilterKind {
        self.kind
    }

    /// False only if a key of 64-bit hash `h` (`hash64`) was certainly not added: for
    /// FastLocalBloom and Ribbon filters; a legacy Bloom filter hashes keys otherwise and
    /// answers true.
    pub fn hash_may_match(&self, h: u64) -> bool {
        match self.imp {
            ReaderImpl::Constant(answer) => answer,
            ReaderImpl::FastLocal { buckets, num_probes } => {
                fast_local_may_match(&self.data, buckets, num_probes, h)
            }
            ReaderImpl::Ribbon(ref r) => r.may_match(&self.data, h),
            ReaderImpl::Legacy { .. } => true,
        }
    }

    /// False only if `key` was certainly not added to the filter.
    pub fn may_match(&self, key: &[u8]) -> bool {
        match self.imp {
            ReaderImpl::Constant(answer) => answer,
            ReaderImpl::FastLocal { buckets, num_probes } => {
                fast_local_may_match(&self.data, buckets, num_probes, hash64(key))
            }
            ReaderImpl::Ribbon(r) => r.may_match(&self.data, hash64(key)),
            ReaderImpl::Legacy { num_lines, log2_line_bytes, num_probes } => {
                let h = bloom_hash(key);
                let start = ((h % num_lines) as usize) << log2_line_bytes;
                let line = &self.data[start..start + (1usize << log2_line_bytes)];
                legacy_probe(h, num_probes, log2_line_bytes, |bit| line[bit / 8] & (1 << (bit % 8)) != 0)
            }
        }
    }
}

/// FastLocalBloom's probe of hash `h` in `data` (`buckets` 64-byte buckets).
#[inline]
fn fast_local_may_match(data: &[u8], buckets: u32, num_probes: u32, h: u64) -> bool {
    let start = fast_range32(h as u32, buckets) as usize * BUCKET_BYTES;
    let bucket = &data[start..start + BUCKET_BYTES];
    let mut h2 = (h >> 32) as u32;
    for _ in 0..num_probes {
        let bit = (h2 >> 23) as usize;
        if bucket[bit >> 3] & (1 << (bit & 7)) == 0 {
            return false;
        }
        h2 = h2.wrapping_mul(PROBE_MULT);
    }
    true
}

/// The running checksum of a filter's hash entries (`detect_filter_construct_corruption`;
/// RocksDB keeps an XXH3 of them, any order-sensitive mix serves): a multiply-rotate step.
fn entry_checksum(sum: u64, h: u64) -> u64 {
    (sum ^ h).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::corruption(format!("bad filter block: {what}"))
}

/// Reads the metadata trailer and checks that the geometry it describes fits the data.
fn decode_trailer(data: &[u8]) -> Result<(FilterKind, ReaderImpl)> {
    if data.len() <= METADATA_LEN {
        return Ok((FilterKind::Empty, ReaderImpl::Constant(false)));
    }
    if data.len() > u32::MAX as usize {
        return Err(corrupt(format!("{} bytes is too large", data.len())));
    }
    let len = data.len() - METADATA_LEN;
    let meta = &data[len..];
    let marker = meta[0] as i8;
    match marker {
        0 => Ok((FilterKind::MatchAll, ReaderImpl::Constant(true))),
        -1 => decode_fast_local(len, meta),
        -2 => {
            let num_blocks = u32::from_le_bytes([meta[2], meta[3], meta[4], 0]);
            Ok(match ribbon::Ribbon::new(len, meta[1], num_blocks) {
                Some(r) => (FilterKind::Ribbon, ReaderImpl::Ribbon(r)),
                None => (FilterKind::Unsupported, ReaderImpl::Constant(true)),
            })
        }
        m if m < 0 => Ok((FilterKind::Unsupported, ReaderImpl::Constant(true))),
        probes => {
            let num_lines = decode_fixed32(&meta[1..]);
            if num_lines == 0 || !len.is_multiple_of(num_lines as usize) {
                return Err(corrupt(format!("{num_lines} lines do not divide {len} bytes")));
            }
            let line_bytes = len / num_lines as usize;
            if !line_bytes.is_power_of_two() {
                return Err(corrupt(format!("line size {line_bytes} is not a power of two")));
            }
            let log2_line_bytes = line_bytes.trailing_zeros();
            if log2_line_bytes > 28 {
                return Err(corrupt(format!("line size {line_bytes} is too large")));
            }
            let imp = ReaderImpl::Legacy { num_lines, log2_line_bytes, num_probes: probes as u32 };
            Ok((FilterKind::LegacyBloom, imp))
        }
    }
}

fn decode_fast_local(len: usize, meta: &[u8]) -> Result<(FilterKind, ReaderImpl)> {
    let sub_impl = meta[1];
    let block_and_probes = meta[2];
    let reserved = u16::from_le_bytes([meta[3], meta[4]]);
    let num_probes = (block_and_probes & 31) as u32;
    let log2_block = (block_and_probes >> 5) as u32 + 6;
    if !(1..=30).contains(&num_probes) || reserved != 0 || sub_impl != 0 || log2_block != 6 {
        // Settings reserved for future writers: RocksDB answers "may match" for every key.
        return Ok((FilterKind::Unsupported, ReaderImpl::Constant(true)));
    }
    let buckets = (len / BUCKET_BYTES) as u32;
    if buckets == 0 {
        return Err(corrupt(format!("{len} bytes of bloom data is less than one 64-byte bucket")));
    }
    Ok((FilterKind::FastLocalBloom, ReaderImpl::FastLocal { buckets, num_probes }))
}

/// Test hook of [`FilterBuilder::finish_checked`]: flips the bytes of the next filter built,
/// as a corrupted construction would leave them.
#[cfg(test)]
pub(crate) mod tamper {
    use std::cell::Cell;

    thread_local! {
        static NEXT: Cell<bool> = const { Cell::new(false) };
    }

    /// Zeroes the next filter built on this thread (its metadata kept).
    pub(crate) fn next_filter() {
        NEXT.with(|n| n.set(true));
    }

    pub(super) fn apply(mut data: Vec<u8>) -> Vec<u8> {
        if NEXT.with(|n| n.replace(false)) {
            let body = data.len().saturating_sub(super::METADATA_LEN);
            data[..body].fill(0);
        }
        data
    }
}
