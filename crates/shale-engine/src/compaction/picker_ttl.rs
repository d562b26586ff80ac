//! RocksDB 11.8.1's `FileTtlBooster` (db/compaction/file_pri.h) and the file order it acts
//! in: `SortFileByOverlappingRatio` (db/version_set.cc), the order in which a level
//! compaction under RocksDB's default `compaction_pri` (kMinOverlappingRatio) tries the
//! files of a level.
//!
//! Booster, for level `level` with `ttl` > 0, `n` = the number of levels up to the last
//! non-empty one, on every level but 0 and that last one (`level < n - 1`):
//!   all_start = ttl / 2;  all_range = (ttl / 32) * 31 - all_start   (u64, wrapping)
//!   range = all_range >> min(63, n - level - 1)
//!   start = all_start + range;  step = max(range / 16, 1)
//!   score(file) = (age - start) / step + 1 when age = now - oldest_ancester_time > start,
//!                 else 1 (also when the file's time is not before `now`)
//! so that no file is boosted before half its TTL, deeper levels start later, and a level's
//! boost is 16 when the next level's starts.
//!
//! Order: each file's `overlapping bytes of level + 1 * 1024 / size / score` (integer
//! division), ascending; files marked for compaction first; ties by smallest key.
//!
//! `picker::pick_level` tries the files of every level above 0 in this order. Where Shale
//! differs from 11.8.1: RocksDB divides by the compensated file size
//! (the size plus a weight for deletions, from table properties Shale's FileMetaData does
//! not carry) where this divides by the file size; RocksDB sorts only the first 50 files
//! (`kNumberFilesToSort`, partial sort) where this sorts all; and RocksDB falls back to the
//! table's `creation_time` property when the MANIFEST has no oldest ancestor time, where
//! this takes the MANIFEST's value (0, unknown, counts as the oldest possible, as RocksDB
//! counts a file whose property is 0 too).

use std::sync::Arc;

use crate::version::edit::FileMetaData;
use crate::version::Version;

/// RocksDB's `FileTtlBooster` (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileTtlBooster {
    enabled: bool,
    current_time: u64,
    boost_age_start: u64,
    boost_step: u64,
}

impl FileTtlBooster {
    /// For the files of `level` at `current_time` (seconds), with `num_non_empty_levels`
    /// RocksDB's count (the last non-empty level + 1).
    pub fn new(current_time: u64, ttl: u64, num_non_empty_levels: usize, level: usize) -> Self {
        if ttl == 0 || level == 0 || level + 1 >= num_non_empty_levels {
            return FileTtlBooster { enabled: false, current_time, boost_age_start: 0, boost_step: 1 };
        }
        let all_boost_start_age = ttl / 2;
        // As RocksDB's uint64_t arithmetic: wraps for a TTL under 32 seconds.
        let all_boost_age_range = ((ttl / 32) * 31).wrapping_sub(all_boost_start_age);
        let shift = (num_non_empty_levels - level - 1).min(63) as u32;
        let boost_age_range = all_boost_age_range >> shift;
        const BOOST_RATIO: u64 = 16;
        FileTtlBooster {
            enabled: true,
            current_time,
            boost_age_start: all_boost_start_age.wrapping_add(boost_age_range),
            boost_step: (boost_age_range / BOOST_RATIO).max(1),
        }
    }

    /// The divisor of a file's order: 1 (no boost) or more, from its oldest ancestor time.
    pub fn boost_score(&self, oldest_ancester_time: u64) -> u64 {
        if !self.enabled || oldest_ancester_time >= self.current_time {
            return 1;
        }
        let age = self.current_time - oldest_ancester_time;
        if age > self.boost_age_start {
            (age - self.boost_age_start) / self.boost_step + 1
        } else {
            1
        }
    }
}

/// RocksDB's `num_non_empty_levels_`: the last level holding a file, plus one (0: none).
pub fn num_non_empty_levels(v: &Version) -> usize {
    (0..v.num_levels()).rev().find(|&l| v.num_files(l) > 0).map_or(0, |l| l + 1)
}

/// The files of `level` (above level 0) in the order RocksDB's kMinOverlappingRatio tries
/// them, with `ttl` (seconds, 0: none) boosting old files at `now` (see the module comment).
pub fn min_overlapping_ratio_order(v: &Version, level: usize, ttl: u64, now: u64) -> Vec<Arc<FileMetaData>> {
    let icmp = v.icmp();
    let files = v.files(level);
    let next: &[Arc<FileMetaData>] = if level + 1 < v.num_levels() { v.files(level + 1) } else { &[] };
    let booster = FileTtlBooster::new(now, ttl, num_non_empty_levels(v), level);
    let mut it = 0;
    let mut keyed: Vec<(u64, Arc<FileMetaData>)> = Vec::with_capacity(files.len());
    for f in files {
        let mut overlapping: u64 = 0;
        while it < next.len() && icmp.compare(&next[it].largest, &f.smallest).is_lt() {
            it += 1;
        }
        while it < next.len() && icmp.compare(&next[it].smallest, &f.largest).is_lt() {
            overlapping = overlapping.saturating_add(next[it].file_size);
            if icmp.compare(&next[it].largest, &f.largest).is_gt() {
                break;
            }
            it += 1;
        }
        let score = if ttl > 0 { booster.boost_score(f.oldest_ancester_time) } else { 1 };
        let order = overlapping.saturating_mul(1024) / f.file_size.max(1) / score;
        keyed.push((order, f.clone()));
    }
    keyed.sort_by(|(oa, a), (ob, b)| {
        b.marked_for_compaction
            .cmp(&a.marked_for_compaction)
            .then(oa.cmp(ob))
            .then_with(|| icmp.compare(&a.smallest, &b.smallest))
    });
    keyed.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::bytewise_internal_comparator;

    #[test]
    fn booster_follows_rocksdb_formula() {
        // ttl 3200, four non-empty levels: all_start 1600, all_range 100 * 31 - 1600 = 1500.
        // Level 1: range 1500 >> 2 = 375, start 1975, step 375 / 16 = 23.
        let now = 1_000_000;
        let b = FileTtlBooster::new(now, 3200, 4, 1);
        assert_eq!(b.boost_score(now - 1975), 1);
        assert_eq!(b.boost_score(now - 1976), 1);
        assert_eq!(b.boost_score(now - 1997), 1);
        assert_eq!(b.boost_score(now - 1998), 2);
        assert_eq!(b.boost_score(now - 1975 - 23 * 16), 17);
        // Level 2: range 750, start 2350, step 46: it starts when level 1's boost is 17.
        let b2 = FileTtlBooster::new(now, 3200, 4, 2);
        assert_eq!(b2.boost_score(now - 2350), 1);
        assert_eq!(b2.boost_score(now - 2350 - 46), 2);
        // A time not before now, level 0, the last two levels, no TTL: no boost.
        assert_eq!(b.boost_score(now), 1);
        assert_eq!(b.boost_score(now + 5), 1);
        for (ttl, n, level) in [(3200, 4, 0), (3200, 4, 3), (3200, 3, 2), (0, 4, 1)] {
            assert_eq!(FileTtlBooster::new(now, ttl, n, level).boost_score(0), 1, "{ttl} {n} {level}");
        }
        // An unknown time (0) is as old as can be.
        assert_eq!(b.boost_score(0), (now - 1975) / 23 + 1);
        // A TTL under 32 seconds wraps as RocksDB's uint64_t: all_range = 0 - 5.
        let w = FileTtlBooster::new(now, 10, 3, 1);
        let range = 0u64.wrapping_sub(5) >> 1;
        assert_eq!(w.boost_age_start, 5u64.wrapping_add(range));
        assert_eq!(w.boost_step, range / 16);
    }

    /// A table with sequence numbers falling as `number` grows (deeper levels: older data).
    fn file(number: u64, lo: &str, hi: &str, size: u64, time: u64, marked: bool) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            oldest_ancester_time: time,
            marked_for_compaction: marked,
            ..super::super::test_files::table(number, lo, hi, 1000 - number, size)
        })
    }

    #[test]
    fn order_is_overlap_ratio_with_old_files_boosted() {
        let now = 1_000_000;
        let young = now - 10;
        let ttl = 3200;
        // Level 1 of 4 non-empty levels: boost 7 at this age (start 1975, step 23).
        let old = now - 1975 - 23 * 6;
        assert_eq!(FileTtlBooster::new(now, ttl, 4, 1).boost_score(old), 7);
        let version = |t1: u64, marked1: bool| {
            Version::new(
                bytewise_internal_comparator(),
                4,
                vec![
                    // 1 overlaps 10 and 11 (300 bytes): 300 * 1024 / 100 = 3072.
                    (1, file(1, "b", "d", 100, t1, marked1)),
                    // 2 overlaps 12 (50 bytes): 512.
                    (1, file(2, "f", "h", 100, young, false)),
                    (2, file(10, "a", "c", 150, young, false)),
                    (2, file(11, "cc", "e", 150, young, false)),
                    (2, file(12, "g", "g", 50, young, false)),
                    (3, file(20, "a", "z", 1000, young, false)),
                ],
            )
        };
        let numbers = |v: &Version, ttl: u64| -> Vec<u64> {
            min_overlapping_ratio_order(v, 1, ttl, now).iter().map(|f| f.number).collect()
        };
        assert_eq!(numbers(&version(young, false), ttl), vec![2, 1]);
        // Old: 3072 / 7 = 438 < 512.
        assert_eq!(numbers(&version(old, false), ttl), vec![1, 2]);
        assert_eq!(numbers(&version(old, false), 0), vec![2, 1], "no TTL, no boost");
        // One step younger: 3072 / 6 = 512, a tie, broken by the smaller key.
        assert_eq!(numbers(&version(old + 23, false), ttl), vec![1, 2]);
        assert_eq!(numbers(&version(old + 24, false), ttl), vec![2, 1]);
        // Marked files first.
        assert_eq!(numbers(&version(young, true), 0), vec![1, 2]);
        // The last non-empty level is never boosted.
        assert_eq!(FileTtlBooster::new(now, ttl, 4, 3).boost_score(old), 1);
    }
}
