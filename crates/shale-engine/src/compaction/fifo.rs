//! FIFO compaction picking (RocksDB's `FIFOCompactionPicker`,
//! `db/compaction/compaction_picker_fifo.cc`): a pure function of a Version, the options,
//! what is being compacted and the time. Flushes write level 0 and FIFO never moves data
//! down; in order it tries:
//!
//! 1. TTL (`ttl`, 30 days by default as RocksDB's): the oldest level-0 tables whose data is
//!    older than `ttl` (their oldest ancestor time; a table of unknown age stops the walk) are
//!    deleted, provided what remains fits in the size limit;
//! 2. size: while the family holds more than the size limit, level 0's oldest tables are
//!    deleted until the rest fit. A family that held data in deeper levels (it was leveled or
//!    universal before) deletes from its last non-empty level first, smallest keys first,
//!    until only level 0 is left;
//! 3. intra-L0 (`allow_compaction`): either the newest level-0 tables are merged into one, as
//!    many as keep the bytes rewritten per table removed falling (RocksDB's
//!    PickCostBasedIntraL0Compaction), at least `level0_file_num_compaction_trigger` of them
//!    and under 1.1 write buffers per table removed; or, with `use_kv_ratio_compaction` (and
//!    `max_data_files_size` at least `max_table_files_size`), RocksDB's
//!    PickRatioBasedIntraL0Compaction: tier boundaries `target, target/trigger, ...` (down to
//!    10 KiB), where `target` is `max_compaction_bytes` when set, else
//!    `max_data_files_size * sst/(sst+blob) / trigger`; the oldest run of at least two
//!    contiguous tables each under the smallest boundary that reaches it is merged (stopping
//!    before twice the boundary);
//! 4. temperature change (`file_temperature_age_thresholds`, single-level families only): the
//!    oldest level-0 table whose newest data is older than the first age and whose recorded
//!    temperature is not the one of the oldest age it passed is rewritten (or, with
//!    `allow_trivial_copy_when_change_temperature`, copied) to that temperature, one table at
//!    a time.
//!
//! The size limit is `max_table_files_size` over table bytes, or, when `max_data_files_size`
//! is set, `max_data_files_size` over table plus blob file bytes; then each table deleted is
//! taken to free an equal share of all the data (RocksDB's proportional estimate).
//!
//! One FIFO compaction runs at a time, as in RocksDB.

use std::sync::Arc;

use super::picker::{Busy, CompactionPlan};
use crate::config::CfConfig;
use crate::version::edit::FileMetaData;
use crate::version::Version;

/// The FIFO compaction to run next, if any. `now`: seconds since the epoch.
pub fn pick_fifo(v: &Version, opts: &CfConfig, busy: Busy<'_>, now: u64) -> Option<CompactionPlan> {
    if !busy.running.is_empty() {
        return None;
    }
    let ttl = opts.age_ttl;
    (if ttl > 0 { pick_ttl(v, opts, ttl, now) } else { None })
        .or_else(|| pick_size(v, opts, busy))
        .or_else(|| pick_intra_l0(v, opts, busy))
        .or_else(|| pick_temperature_change(v, opts, busy, now))
}

/// RocksDB's `GetBlobStats().total_file_size`: the bytes of the version's blob files.
pub fn blob_file_bytes(v: &Version) -> u64 {
    let overhead = (crate::blob::format::HEADER_SIZE + crate::blob::format::FOOTER_SIZE) as u64;
    v.blob_files().values().map(|m| m.shared.total_blob_bytes + overhead).sum()
}

fn total_table_bytes(v: &Version) -> u64 {
    (0..v.num_levels()).map(|l| v.level_bytes(l)).sum()
}

/// RocksDB's `GetEffectiveMax`: the limit FIFO keeps the family under.
fn effective_max(opts: &CfConfig) -> u64 {
    if opts.fifo_max_data_files_size > 0 {
        opts.fifo_max_data_files_size
    } else {
        opts.fifo_max_table_files_size
    }
}

/// RocksDB's PickTTLCompaction.
fn pick_ttl(v: &Version, opts: &CfConfig, ttl: u64, now: u64) -> Option<CompactionPlan> {
    let files = v.files(0);
    let l0_bytes: u64 = files.iter().map(|f| f.file_size).sum();
    let mut remaining = l0_bytes;
    let mut inputs = Vec::new();
    if now > ttl {
        for f in files.iter().rev() {
            let t = f.oldest_ancester_time;
            if t == 0 || t >= now - ttl {
                break;
            }
            remaining -= remaining.min(f.file_size);
            inputs.push(f.clone());
        }
    }
    // With blob files counted, each table dropped frees its share of the blob bytes: what
    // remains is the tables left (all levels) plus their proportional part of the blobs.
    let mut effective_remaining = remaining;
    if opts.fifo_max_data_files_size > 0 {
        let blob = blob_file_bytes(v);
        let all_tables = total_table_bytes(v);
        let remaining_all = all_tables - (l0_bytes - remaining);
        effective_remaining = if all_tables > 0 && blob > 0 {
            remaining_all + (remaining_all as f64 / all_tables as f64 * blob as f64) as u64
        } else {
            remaining_all
        };
    }
    // As RocksDB, TTL is left to the size pick while the rest does not fit anyway.
    if inputs.is_empty() || effective_remaining > effective_max(opts) {
        return None;
    }
    Some(CompactionPlan { fifo_ttl: true, reason: Some("FIFOTtl"), ..deletion(0, inputs) })
}

/// RocksDB's PickSizeCompaction.
fn pick_size(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let max = effective_max(opts);
    let by_data = opts.fifo_max_data_files_size > 0;
    let mut total = total_table_bytes(v);
    if by_data {
        total += blob_file_bytes(v);
    }
    let last_level = (0..v.num_levels()).rev().find(|&l| v.level_bytes(l) > 0).unwrap_or(0);
    if total <= max {
        return None;
    }
    let mut remaining = total;
    let mut inputs = Vec::new();
    let files = v.files(last_level);
    // With blob files counted, every table is taken to hold an equal share of the data.
    let per_file = if by_data && !files.is_empty() { (total / files.len() as u64).max(1) } else { 0 };
    // Level 0 lists its newest file first: walk it from the back. Deeper levels go by key.
    let order: Box<dyn Iterator<Item = &Arc<FileMetaData>>> =
        if last_level == 0 { Box::new(files.iter().rev()) } else { Box::new(files.iter()) };
    for f in order {
        if busy.file(f.number) {
            continue;
        }
        remaining -= remaining.min(if by_data { per_file } else { f.file_size });
        inputs.push(f.clone());
        if remaining <= max {
            break;
        }
    }
    if inputs.is_empty() {
        return None;
    }
    Some(CompactionPlan { reason: Some("FIFOMaxSize"), ..deletion(last_level, inputs) })
}

/// RocksDB's PickIntraL0Compaction: kv-ratio tiers when asked for and possible, else the
/// cost-based merge of level 0's newest tables.
fn pick_intra_l0(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    if !opts.fifo_allow_compaction || v.files(0).is_empty() {
        return None;
    }
    // RocksDB skips the kv-ratio pick (falling back to the cost-based one) without a data
    // limit, or with one below the table limit.
    if opts.fifo_use_kv_ratio_compaction
        && opts.fifo_max_data_files_size > 0
        && opts.fifo_max_data_files_size >= opts.fifo_max_table_files_size
    {
        return pick_ratio_intra_l0(v, opts, busy);
    }
    pick_cost_intra_l0(v, opts, busy)
}

/// RocksDB's PickCostBasedIntraL0Compaction: merge level 0's newest tables.
fn pick_cost_intra_l0(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let files = v.files(0);
    let first = files.first()?;
    if busy.file(first.number) {
        return None;
    }
    let min_files = opts.level0_file_num_compaction_trigger.max(1) as usize;
    let max_per_deleted = (opts.write_buffer_size as f64 * 1.1) as u64;
    let max_bytes = opts.max_compaction_bytes;
    let mut bytes = first.file_size;
    let mut per_deleted = u64::MAX;
    let mut limit = 1;
    while limit < files.len() {
        bytes += files[limit].file_size;
        let new_per_deleted = bytes / limit as u64;
        if busy.file(files[limit].number) || new_per_deleted > per_deleted || bytes > max_bytes {
            break;
        }
        per_deleted = new_per_deleted;
        limit += 1;
    }
    if limit < min_files || per_deleted >= max_per_deleted {
        return None;
    }
    let all_of_l0 = limit == files.len();
    let deeper = (1..v.num_levels()).any(|l| v.num_files(l) > 0);
    Some(CompactionPlan {
        level: 0,
        output_level: 0,
        inputs: files[..limit].to_vec(),
        bottommost: all_of_l0 && !deeper,
        output_file_size: Some(16 << 20),
        rewrite: true,
        reason: Some("FIFOReduceNumFiles"),
        ..Default::default()
    })
}

/// RocksDB's smallest tier boundary of the kv-ratio pick (10 KiB).
const MIN_TIER_BOUNDARY: u64 = 10 * 1024;

/// RocksDB's PickRatioBasedIntraL0Compaction (see the module comment).
fn pick_ratio_intra_l0(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    // Only once the family holds level 0 alone (a family migrating to FIFO drains first).
    if (1..v.num_levels()).any(|l| v.num_files(l) > 0) {
        return None;
    }
    let files = v.files(0);
    let trigger = opts.level0_file_num_compaction_trigger;
    if trigger <= 1 || files.len() < trigger as usize {
        return None;
    }
    let trigger = trigger as u64;
    let target = if opts.max_compaction_bytes > 0 {
        opts.max_compaction_bytes
    } else {
        let sst: u64 = files.iter().map(|f| f.file_size).sum();
        let blob = blob_file_bytes(v);
        let data = sst + blob;
        if data == 0 || sst == 0 {
            return None;
        }
        let sst_ratio = if blob > 0 { sst as f64 / data as f64 } else { 1.0 };
        ((opts.fifo_max_data_files_size as f64 * sst_ratio) as u64) / trigger
    };
    if target == 0 {
        return None;
    }
    let mut boundaries = Vec::new();
    let mut b = target;
    while b >= MIN_TIER_BOUNDARY {
        boundaries.push(b);
        b /= trigger;
    }
    if boundaries.is_empty() {
        boundaries.push(target);
    }
    boundaries.reverse();
    let free = |f: &Arc<FileMetaData>, boundary: u64| f.file_size < boundary && !busy.file(f.number);
    for boundary in boundaries {
        // Level 0 lists its newest table first: scan from the oldest.
        let mut scan = files.len();
        while scan > 0 {
            if !free(&files[scan - 1], boundary) {
                scan -= 1;
                continue;
            }
            let mut batch = Vec::new();
            let mut accumulated = 0u64;
            let mut pos = scan;
            while pos > 0 && free(&files[pos - 1], boundary) {
                let size = files[pos - 1].file_size;
                // The output stays under twice the boundary (no skipping a tier).
                if accumulated >= boundary && accumulated + size > boundary * 2 {
                    break;
                }
                batch.push(files[pos - 1].clone());
                accumulated += size;
                pos -= 1;
            }
            if batch.len() >= 2 && accumulated >= boundary {
                // Newest first, as level 0 lists them.
                batch.reverse();
                let bottommost = l0_bottommost(v, &batch, pos + batch.len() - 1);
                return Some(CompactionPlan {
                    level: 0,
                    output_level: 0,
                    inputs: batch,
                    bottommost,
                    output_file_size: Some(boundary),
                    rewrite: true,
                    reason: Some("FIFOReduceNumFiles"),
                    ..Default::default()
                });
            }
            scan = pos;
        }
    }
    None
}

/// RocksDB's `IsBottommostLevel` for a compaction of level-0 tables into level 0: no older
/// level-0 table (after index `oldest` in the level's newest-first order) and no deeper
/// table overlaps the inputs' keys.
fn l0_bottommost(v: &Version, inputs: &[Arc<FileMetaData>], oldest: usize) -> bool {
    let icmp = v.icmp();
    let ukey = crate::key::user_key;
    let lo = inputs.iter().map(|f| ukey(&f.smallest)).min_by(|a, b| icmp.compare_user_without_ts(a, b));
    let hi = inputs.iter().map(|f| ukey(&f.largest)).max_by(|a, b| icmp.compare_user_without_ts(a, b));
    let (Some(lo), Some(hi)) = (lo, hi) else { return true };
    let overlaps = |f: &Arc<FileMetaData>| {
        icmp.compare_user_without_ts(ukey(&f.smallest), hi).is_le()
            && icmp.compare_user_without_ts(lo, ukey(&f.largest)).is_le()
    };
    let older = v.files(0).iter().skip(oldest + 1).any(overlaps);
    let deeper = (1..v.num_levels()).any(|l| v.files(l).iter().any(overlaps));
    !older && !deeper
}

/// RocksDB's `TryGetNewestKeyTime(prev_file)`: the table's `rocksdb.newest.key.time` when
/// known, else the oldest ancestor time of the next newer table, else 0 (unknown).
fn newest_key_time(busy: Busy<'_>, f: &FileMetaData, newer: Option<&Arc<FileMetaData>>) -> u64 {
    let own = busy.stats.and_then(|s| s(f)).map_or(0, |s| s.newest_key_time);
    if own != 0 {
        return own;
    }
    newer.map_or(0, |p| p.oldest_ancester_time)
}

/// RocksDB's PickTemperatureChangeCompaction (see the module comment).
fn pick_temperature_change(v: &Version, opts: &CfConfig, busy: Busy<'_>, now: u64) -> Option<CompactionPlan> {
    let ages = &opts.fifo_temperature_ages;
    let &(min_age, first_temp) = ages.first()?;
    if v.num_levels() > 1 {
        return None;
    }
    let files = v.files(0);
    if files.is_empty() || now <= min_age {
        return None;
    }
    let threshold = now - min_age;
    for index in (0..files.len()).rev() {
        let f = &files[index];
        if busy.file(f.number) {
            return None;
        }
        let newer = index.checked_sub(1).map(|i| &files[i]);
        let t = newest_key_time(busy, f, newer);
        // A newer table may know its newest key time.
        if t == 0 {
            continue;
        }
        if t > threshold {
            break;
        }
        let mut target = first_temp;
        for &(age, temp) in &ages[1..] {
            if now >= age && t <= now - age {
                target = temp;
            }
        }
        if f.temperature == target {
            continue;
        }
        return Some(CompactionPlan {
            level: 0,
            output_level: 0,
            inputs: vec![f.clone()],
            bottommost: l0_bottommost(v, std::slice::from_ref(f), index),
            output_file_size: Some(u64::MAX),
            rewrite: true,
            output_temperature: Some(target),
            trivial_copy: opts.fifo_trivial_copy,
            reason: Some("ChangeTemperature"),
            ..Default::default()
        });
    }
    None
}

fn deletion(level: usize, inputs: Vec<Arc<FileMetaData>>) -> CompactionPlan {
    CompactionPlan { level, output_level: level, inputs, deletion_only: true, ..Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CfConfig, CompactionStyle};
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};

    fn file(number: u64, size: u64, age_time: u64) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number,
            file_size: size,
            smallest: make_internal_key(b"a", number * 10, ValueType::Value),
            largest: make_internal_key(b"z", number * 10, ValueType::Value),
            smallest_seqno: number * 10,
            largest_seqno: number * 10,
            oldest_ancester_time: age_time,
            ..Default::default()
        })
    }

    fn opts(max: u64) -> CfConfig {
        CfConfig {
            style: CompactionStyle::Fifo,
            fifo_max_table_files_size: max,
            ttl: 0,
            age_ttl: 0,
            ..Default::default()
        }
    }

    fn l0(files: &[(u64, u64, u64)]) -> Version {
        let files = files.iter().map(|&(n, s, t)| (0, file(n, s, t))).collect();
        Version::new(bytewise_internal_comparator(), 7, files)
    }

    fn numbers(p: &CompactionPlan) -> Vec<u64> {
        p.inputs.iter().map(|f| f.number).collect()
    }

    #[test]
    fn size_deletes_the_oldest_until_the_rest_fit() {
        let v = l0(&[(4, 100, 0), (3, 100, 0), (2, 100, 0), (1, 100, 0)]);
        assert!(pick_fifo(&v, &opts(400), Busy::default(), 0).is_none());
        let p = pick_fifo(&v, &opts(250), Busy::default(), 0).unwrap();
        assert!(p.deletion_only);
        assert!(!p.fifo_ttl, "counted as a max-size compaction");
        assert_eq!(numbers(&p), vec![1, 2]);
    }

    #[test]
    fn deeper_levels_go_first_smallest_keys_first() {
        let mut files: Vec<(u32, Arc<FileMetaData>)> = vec![(0, file(9, 100, 0))];
        files.push((6, file(3, 100, 0)));
        let v = Version::new(bytewise_internal_comparator(), 7, files);
        let p = pick_fifo(&v, &opts(150), Busy::default(), 0).unwrap();
        assert_eq!((p.level, numbers(&p)), (6, vec![3]));
    }

    #[test]
    fn ttl_deletes_expired_tables_when_the_rest_fit() {
        let mut o = opts(1000);
        o.age_ttl = 100;
        // Tables 1 and 2 expired (time 100, 200 < 1000 - 100), table 3 not (950).
        let v = l0(&[(3, 100, 950), (2, 100, 200), (1, 100, 100)]);
        let p = pick_fifo(&v, &o, Busy::default(), 1000).unwrap();
        assert!(p.deletion_only);
        assert!(p.fifo_ttl, "counted as a TTL compaction");
        assert_eq!(numbers(&p), vec![1, 2]);
        // A table of unknown age stops the walk.
        let v = l0(&[(3, 100, 950), (2, 100, 200), (1, 100, 0)]);
        assert!(pick_fifo(&v, &o, Busy::default(), 1000).is_none());
    }

    #[test]
    fn intra_l0_merges_the_newest_small_tables() {
        let mut o = opts(1 << 30);
        o.level0_file_num_compaction_trigger = 3;
        o.fifo_allow_compaction = true;
        o.write_buffer_size = 1000;
        let v = l0(&[(4, 100, 0), (3, 100, 0), (2, 100, 0), (1, 100, 0)]);
        let p = pick_fifo(&v, &o, Busy::default(), 0).unwrap();
        assert!(!p.deletion_only);
        assert_eq!((p.level, p.output_level), (0, 0));
        assert_eq!(numbers(&p), vec![4, 3, 2, 1]);
        assert!(p.bottommost);
        // Too few tables, or tables already large: nothing.
        let v = l0(&[(2, 100, 0), (1, 100, 0)]);
        assert!(pick_fifo(&v, &o, Busy::default(), 0).is_none());
        let v = l0(&[(4, 5000, 0), (3, 5000, 0), (2, 5000, 0), (1, 5000, 0)]);
        assert!(pick_fifo(&v, &o, Busy::default(), 0).is_none());
        o.fifo_allow_compaction = false;
        let v = l0(&[(4, 100, 0), (3, 100, 0), (2, 100, 0), (1, 100, 0)]);
        assert!(pick_fifo(&v, &o, Busy::default(), 0).is_none());
    }

    fn with_blobs(v: Version, blobs: &[(u64, u64)]) -> Version {
        let mut map = crate::version::blob_files::BlobFiles::new();
        for &(n, bytes) in blobs {
            let shared = Arc::new(crate::version::edit::BlobFileAddition {
                number: n,
                total_blob_count: 1,
                total_blob_bytes: bytes,
                ..Default::default()
            });
            map.insert(
                n,
                crate::version::blob_files::BlobFileMeta {
                    shared,
                    garbage_blob_count: 0,
                    garbage_blob_bytes: 0,
                },
            );
        }
        v.with_blob_files(&map)
    }

    fn l0_blob(files: &[(u64, u64, u64)]) -> Version {
        let files = files
            .iter()
            .map(|&(n, s, blob)| {
                let mut f = (*file(n, s, 0)).clone();
                f.oldest_blob_file_number = blob;
                (0, Arc::new(f))
            })
            .collect();
        Version::new(bytewise_internal_comparator(), 7, files)
    }

    #[test]
    fn max_data_files_size_counts_blob_bytes() {
        // Four tables of 100 bytes, each with a blob file of about 900 bytes.
        let overhead = (crate::blob::format::HEADER_SIZE + crate::blob::format::FOOTER_SIZE) as u64;
        let v = with_blobs(
            l0_blob(&[(4, 100, 14), (3, 100, 13), (2, 100, 12), (1, 100, 11)]),
            &[(11, 900 - overhead), (12, 900 - overhead), (13, 900 - overhead), (14, 900 - overhead)],
        );
        assert_eq!(blob_file_bytes(&v), 3600);
        // By tables alone (400 bytes) nothing is over 1000.
        assert!(pick_fifo(&v, &opts(1000), Busy::default(), 0).is_none());
        // Counting blobs (4000 bytes), each table frees a quarter: three go to fit in 1500.
        let mut o = opts(1000);
        o.fifo_max_data_files_size = 1500;
        let p = pick_fifo(&v, &o, Busy::default(), 0).unwrap();
        assert!(p.deletion_only && !p.fifo_ttl);
        assert_eq!(numbers(&p), vec![1, 2, 3]);
        // The data limit replaces the table limit: a table limit below 400 no longer counts.
        o.fifo_max_table_files_size = 10;
        o.fifo_max_data_files_size = 5000;
        assert!(pick_fifo(&v, &o, Busy::default(), 0).is_none());
    }

    #[test]
    fn ttl_with_data_limit_estimates_the_blobs_left() {
        let overhead = (crate::blob::format::HEADER_SIZE + crate::blob::format::FOOTER_SIZE) as u64;
        let mut files: Vec<(u32, Arc<FileMetaData>)> = Vec::new();
        for (n, t) in [(3u64, 950u64), (2, 200), (1, 100)] {
            let mut f = (*file(n, 100, t)).clone();
            f.oldest_blob_file_number = 10 + n;
            files.push((0, Arc::new(f)));
        }
        let v = with_blobs(
            Version::new(bytewise_internal_comparator(), 7, files),
            &[(11, 900 - overhead), (12, 900 - overhead), (13, 900 - overhead)],
        );
        let mut o = opts(1 << 30);
        o.age_ttl = 100;
        // Tables 1 and 2 expired; what stays is 100 table bytes and a third of 2700 blob bytes.
        o.fifo_max_data_files_size = 1000;
        let p = pick_fifo(&v, &o, Busy::default(), 1000).unwrap();
        assert!(p.fifo_ttl);
        assert_eq!(numbers(&p), vec![1, 2]);
        // Under 1000 it would not fit: the size pick deletes instead (by the equal share).
        o.fifo_max_data_files_size = 999;
        let p = pick_fifo(&v, &o, Busy::default(), 1000).unwrap();
        assert!(!p.fifo_ttl && p.deletion_only);
    }

    fn one_level(files: &[(u64, u64, u64, u8)]) -> Version {
        let files = files
            .iter()
            .map(|&(n, s, t, temp)| {
                let mut f = (*file(n, s, t)).clone();
                f.temperature = temp;
                (0, Arc::new(f))
            })
            .collect();
        Version::new(bytewise_internal_comparator(), 1, files)
    }

    #[test]
    fn temperature_change_picks_the_oldest_table_past_an_age() {
        let mut o = opts(1 << 30);
        o.fifo_temperature_ages = vec![(100, 0x08), (500, 0x0C)];
        let newest = |f: &FileMetaData| {
            Some(super::super::picker::FileStats { newest_key_time: f.number * 1000, ..Default::default() })
        };
        let busy = Busy { stats: Some(&newest), ..Default::default() };
        // Newest key times 1000, 2000, 3000 (table 3 the newest).
        let v = one_level(&[(3, 100, 2900, 0), (2, 100, 1900, 0), (1, 100, 900, 0)]);
        // At 1050 nothing is 100 seconds old.
        assert!(pick_fifo(&v, &o, busy, 1050).is_none());
        // At 1200 table 1 goes warm.
        let p = pick_fifo(&v, &o, busy, 1200).unwrap();
        assert_eq!((numbers(&p), p.output_temperature), (vec![1], Some(0x08)));
        assert!(!p.deletion_only && !p.trivial_copy && p.bottommost);
        // At 2600, table 1 is past 500 seconds: cold; table 2 only warm.
        let p = pick_fifo(&v, &o, busy, 2600).unwrap();
        assert_eq!((numbers(&p), p.output_temperature), (vec![1], Some(0x0C)));
        let v = one_level(&[(3, 100, 2900, 0), (2, 100, 1900, 0), (1, 100, 900, 0x0C)]);
        let p = pick_fifo(&v, &o, busy, 2400).unwrap();
        assert_eq!((numbers(&p), p.output_temperature), (vec![2], Some(0x08)));
        assert!(!p.bottommost, "table 1, older, holds the same keys");
        // With the copy asked for, the plan says so.
        o.fifo_trivial_copy = true;
        assert!(pick_fifo(&v, &o, busy, 2400).unwrap().trivial_copy);
        // Without table properties the newer table's ancestor time stands in (table 1: 1900,
        // table 2: 2900); the newest table's age is unknown and skipped.
        let v = one_level(&[(3, 100, 2900, 0), (2, 100, 1900, 0x08), (1, 100, 900, 0x0C)]);
        let p = pick_fifo(&v, &o, Busy::default(), 2100).unwrap();
        assert_eq!((numbers(&p), p.output_temperature), (vec![1], Some(0x08)), "1900 is warm at 2100");
        assert!(pick_fifo(&v, &o, Busy::default(), 2950).is_none(), "table 1 cold, table 2 too young");
        assert!(pick_fifo(&v, &o, Busy::default(), 3050).is_none(), "table 2 already warm");
        let p = pick_fifo(&v, &o, Busy::default(), 3400).unwrap();
        assert_eq!((numbers(&p), p.output_temperature), (vec![2], Some(0x0C)));
        // Families of several levels never change temperatures.
        let many = l0(&[(1, 100, 900)]);
        assert!(pick_fifo(&many, &o, busy, 5000).is_none());
    }

    #[test]
    fn kv_ratio_merges_contiguous_small_tables_in_tiers() {
        let mut o = opts(1 << 30);
        o.fifo_allow_compaction = true;
        o.fifo_use_kv_ratio_compaction = true;
        o.fifo_max_data_files_size = 1 << 30;
        o.level0_file_num_compaction_trigger = 4;
        o.max_compaction_bytes = 0;
        o.write_buffer_size = 1;
        // No blobs: target = max_data_files_size / 4 = 256 MiB; tiers 64 MiB, 16 MiB, ...
        // down to 10 KiB: 16384 * 4^k. Four 5000-byte tables: under the 16 KiB tier, 20000
        // bytes reach it.
        let v = l0(&[(4, 5000, 0), (3, 5000, 0), (2, 5000, 0), (1, 5000, 0)]);
        let p = pick_fifo(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p), vec![4, 3, 2, 1]);
        assert_eq!(p.output_file_size, Some(16 << 10));
        assert!(p.rewrite && !p.deletion_only);
        // Fewer tables than the trigger: nothing (the cost-based pick is not tried).
        let v = l0(&[(3, 5000, 0), (2, 5000, 0), (1, 5000, 0)]);
        assert!(pick_fifo(&v, &o, Busy::default(), 0).is_none());
        // A set max_compaction_bytes is the target: 40000 -> tiers 10000 and 40000... the
        // 10000 tier holds nothing under it, the 40000 tier merges until twice it.
        o.max_compaction_bytes = 40_000;
        let v = l0(&[(5, 30_000, 0), (4, 30_000, 0), (3, 30_000, 0), (2, 100_000, 0), (1, 30_000, 0)]);
        let p = pick_fifo(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!(
            numbers(&p),
            vec![4, 3],
            "table 1 alone is a run of one; 3+4 reach 40000; 5 would pass 80000"
        );
        // A data limit below the table limit: RocksDB falls back to the cost-based pick.
        o.fifo_max_data_files_size = 1 << 20;
        o.write_buffer_size = 1 << 20;
        let v = l0(&[(4, 100, 0), (3, 100, 0), (2, 100, 0), (1, 100, 0)]);
        let p = pick_fifo(&v, &o, Busy::default(), 0).unwrap();
        assert_eq!(numbers(&p), vec![4, 3, 2, 1]);
        assert_eq!(p.output_file_size, Some(16 << 20), "the cost-based pick");
    }
}
