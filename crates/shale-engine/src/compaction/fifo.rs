//! FIFO compaction picking (RocksDB's `FIFOCompactionPicker`,
//! `db/compaction/compaction_picker_fifo.cc`): a pure function of a Version, the options,
//! what is being compacted and the time. Flushes write level 0 and FIFO never moves data
//! down; in order it tries:
//!
//! 1. TTL (`ttl`, 30 days by default as RocksDB's): the oldest level-0 tables whose data is
//!    older than `ttl` (their oldest ancestor time; a table of unknown age stops the walk) are
//!    deleted, provided what remains fits in `max_table_files_size`;
//! 2. size: while the family's tables hold more than `max_table_files_size`, level 0's
//!    oldest tables are deleted until the rest fit. A family that held data in deeper levels
//!    (it was leveled or universal before) deletes from its last non-empty level first,
//!    smallest keys first, until only level 0 is left;
//! 3. intra-L0 (`allow_compaction`): the newest level-0 tables are merged into one, as many
//!    as keep the bytes rewritten per table removed falling (RocksDB's
//!    PickCostBasedIntraL0Compaction), at least `level0_file_num_compaction_trigger` of them
//!    and under 1.1 write buffers per table removed.
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
}

/// RocksDB's PickTTLCompaction.
fn pick_ttl(v: &Version, opts: &CfConfig, ttl: u64, now: u64) -> Option<CompactionPlan> {
    let files = v.files(0);
    let mut remaining: u64 = files.iter().map(|f| f.file_size).sum();
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
    // As RocksDB, TTL is left to the size pick while the rest does not fit anyway.
    if inputs.is_empty() || remaining > opts.fifo_max_table_files_size {
        return None;
    }
    Some(CompactionPlan { fifo_ttl: true, ..deletion(0, inputs) })
}

/// RocksDB's PickSizeCompaction.
fn pick_size(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    let max = opts.fifo_max_table_files_size;
    let total: u64 = (0..v.num_levels()).map(|l| v.level_bytes(l)).sum();
    let last_level = (0..v.num_levels()).rev().find(|&l| v.level_bytes(l) > 0).unwrap_or(0);
    if total <= max {
        return None;
    }
    let mut remaining = total;
    let mut inputs = Vec::new();
    let files = v.files(last_level);
    // Level 0 lists its newest file first: walk it from the back. Deeper levels go by key.
    let order: Box<dyn Iterator<Item = &Arc<FileMetaData>>> =
        if last_level == 0 { Box::new(files.iter().rev()) } else { Box::new(files.iter()) };
    for f in order {
        if busy.file(f.number) {
            continue;
        }
        remaining -= remaining.min(f.file_size);
        inputs.push(f.clone());
        if remaining <= max {
            break;
        }
    }
    if inputs.is_empty() {
        return None;
    }
    Some(deletion(last_level, inputs))
}

/// RocksDB's PickIntraL0Compaction (cost-based): merge level 0's newest tables.
fn pick_intra_l0(v: &Version, opts: &CfConfig, busy: Busy<'_>) -> Option<CompactionPlan> {
    if !opts.fifo_allow_compaction {
        return None;
    }
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
        ..Default::default()
    })
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
}
