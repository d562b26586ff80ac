//! Table directories: RocksDB's `db_paths` and `cf_paths`.
//!
//! ```text
//! family's paths = cf_paths            (set_cf_paths on the family's options)
//!                | db_paths            (set_db_paths on the database's options)
//!                | [(db directory, u64::MAX)]
//! table file     = paths[path_id].dir / NNNNNN.sst     (path_id recorded in the MANIFEST,
//!                                                      NewFile4's kPathId field)
//! ```
//! Placement follows RocksDB:
//! - a flush writes to path 0 (FlushJob);
//! - a level compaction's output goes to the first path that still holds every level up to
//!   the output level (RocksDB's `LevelCompactionBuilder::GetPathId`): level sizes estimated
//!   from `max_bytes_for_level_base` (level 0 as level 1) times the multiplier, each path's
//!   target size shared by the levels placed in it, the last path taking what fits nowhere;
//! - a universal compaction's output goes to the first path whose target size holds the
//!   output and, with the paths before it, the files expected before it is compacted again
//!   (`UniversalCompactionBuilder::GetPathId`).
//!
//! A table not found under its path id (paths reordered or moved between opens) is looked
//! for in the family's other paths (`TableCache`); obsolete tables are deleted where they
//! are; the directory scan at open (`obsolete.rs::purge_unreferenced`) covers every path.
//! WALs, the MANIFEST, OPTIONS and LOG stay in the database directory.

use std::path::{Path, PathBuf};

/// The table directories of a family with `cf_paths` in a database at `db_dir` opened
/// with `db_paths` (RocksDB's sanitized `cf_paths`). Never empty.
pub fn table_dirs(
    db_dir: &Path,
    db_paths: &[(PathBuf, u64)],
    cf_paths: &[(PathBuf, u64)],
) -> Vec<(PathBuf, u64)> {
    if !cf_paths.is_empty() {
        cf_paths.to_vec()
    } else if !db_paths.is_empty() {
        db_paths.to_vec()
    } else {
        vec![(db_dir.to_path_buf(), u64::MAX)]
    }
}

/// The path a level compaction writes `level` to (RocksDB's `LevelCompactionBuilder::GetPathId`).
pub fn level_path_id(dirs: &[(PathBuf, u64)], o: &crate::config::CfConfig, level: usize) -> u32 {
    let mut p = 0usize;
    let mut current_path_size = dirs.first().map_or(u64::MAX, |d| d.1);
    let mut level_size = o.max_bytes_for_level_base;
    let mut cur_level = 0usize;
    while p + 1 < dirs.len() {
        if level_size <= current_path_size {
            if cur_level == level {
                return p as u32;
            }
            current_path_size -= level_size;
            if cur_level > 0 {
                level_size = (level_size as f64 * o.max_bytes_for_level_multiplier) as u64;
            }
            cur_level += 1;
            continue;
        }
        p += 1;
        current_path_size = dirs[p].1;
    }
    p as u32
}

/// The path a universal compaction writes an output of about `file_size` bytes to
/// (RocksDB's `UniversalCompactionBuilder::GetPathId`), `size_ratio` in percent.
pub fn universal_path_id(dirs: &[(PathBuf, u64)], size_ratio: u64, file_size: u64) -> u32 {
    let future_size = (file_size as u128 * 100u128.saturating_sub(size_ratio as u128) / 100) as u64;
    let mut accumulated: u64 = 0;
    let mut p = 0usize;
    while p + 1 < dirs.len() {
        let target = dirs[p].1;
        if target > file_size && accumulated.saturating_add(target - file_size) > future_size {
            return p as u32;
        }
        accumulated = accumulated.saturating_add(target);
        p += 1;
    }
    p as u32
}

/// The directory of path `path_id` (the last path for an id beyond them, as a MANIFEST
/// written with more paths than this open has).
pub fn dir_of(dirs: &[(PathBuf, u64)], path_id: u32) -> &Path {
    let i = (path_id as usize).min(dirs.len().saturating_sub(1));
    dirs.get(i).map_or(Path::new(""), |d| d.0.as_path())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(sizes: &[u64]) -> Vec<(PathBuf, u64)> {
        sizes.iter().enumerate().map(|(i, s)| (PathBuf::from(format!("/p{i}")), *s)).collect()
    }

    #[test]
    fn family_paths_fall_back_to_db_paths_then_the_db_directory() {
        let db_paths = dirs(&[10, 20]);
        let cf_paths = vec![(PathBuf::from("/cf"), 0)];
        assert_eq!(table_dirs(Path::new("/db"), &[], &[]), vec![(PathBuf::from("/db"), u64::MAX)]);
        assert_eq!(table_dirs(Path::new("/db"), &db_paths, &[]), dirs(&[10, 20]));
        assert_eq!(table_dirs(Path::new("/db"), &db_paths, &cf_paths), cf_paths);
    }

    #[test]
    fn level_placement_matches_rocksdb() {
        let o = crate::config::CfConfig {
            max_bytes_for_level_base: 10,
            max_bytes_for_level_multiplier: 10.0,
            ..Default::default()
        };
        // One path: everything there.
        assert_eq!(level_path_id(&dirs(&[0]), &o, 3), 0);
        // 20 bytes hold L0 (10) and L1 (10); L2 (100) goes to the second path (500), L3
        // (1000) does not fit what is left there (400): the last path.
        let d = dirs(&[20, 500, 1 << 40]);
        assert_eq!(level_path_id(&d, &o, 0), 0);
        assert_eq!(level_path_id(&d, &o, 1), 0);
        assert_eq!(level_path_id(&d, &o, 2), 1);
        assert_eq!(level_path_id(&d, &o, 3), 2);
        // A first path smaller than one level: everything moves on.
        assert_eq!(level_path_id(&dirs(&[5, 1 << 40]), &o, 0), 1);
    }

    #[test]
    fn universal_placement_matches_rocksdb() {
        let d = dirs(&[100, 1000, 1 << 40]);
        assert_eq!(universal_path_id(&d, 1, 10), 0);
        assert_eq!(universal_path_id(&d, 1, 100), 1);
        assert_eq!(universal_path_id(&d, 1, 5000), 2);
        assert_eq!(dir_of(&d, 7), Path::new("/p2"));
    }
}
