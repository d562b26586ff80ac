//! `set_db_paths` / `set_cf_paths` (RocksDB's db_paths and cf_paths): tables go to the paths
//! by level and target size (flushes to the first path, deeper levels to the next ones),
//! nothing but tables leaves the database directory, a family's `cf_paths` win over the
//! database's, tables are found when the paths are given in another order, obsolete tables
//! are deleted in every path, and `DB::destroy` empties them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::path::Path;

use shale::{ColumnFamilyDescriptor, DBPath, Options, WaitForCompactOptions, DB};

fn tables(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sst"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// 1000 bytes that do not compress, different for each key.
fn value(i: u32) -> Vec<u8> {
    let mut x = u64::from(i).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..1000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn fill(db: &DB, cf: Option<&str>, from: u32, n: u32) {
    for i in from..from + n {
        let k = format!("key{i:06}");
        let v = value(i);
        match cf {
            Some(c) => db.put_cf(db.cf_handle(c).unwrap(), k, v).unwrap(),
            None => db.put(k, v).unwrap(),
        }
    }
}

#[test]
fn tables_follow_db_paths_and_cf_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (p1, p2, cfp) = (tmp.path().join("fast"), tmp.path().join("slow"), tmp.path().join("cf1_sst"));
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.set_write_buffer_size(64 << 10);
    opts.set_max_bytes_for_level_base(256 << 10);
    opts.set_target_file_size_base(64 << 10);
    opts.set_level_zero_file_num_compaction_trigger(2);
    // The first path holds levels 0 and 1 (256 KiB each), the rest goes to the second.
    opts.set_db_paths(&[DBPath::new(&p1, 600 << 10).unwrap(), DBPath::new(&p2, 1 << 40).unwrap()]);
    let mut cf_opts = opts.clone();
    cf_opts.set_cf_paths(&[DBPath::new(&cfp, 0).unwrap()]);
    {
        let db =
            // "default" is named: unnamed, it would get Options::default() (as rust-rocksdb).
            DB::open_cf_descriptors(
                &opts,
                &dir,
                vec![
                    ColumnFamilyDescriptor::new("default", opts.clone()),
                    ColumnFamilyDescriptor::new("cf1", cf_opts.clone()),
                ],
            )
            .unwrap();
        // Several flushes; the automatic compactions push data to level 2 and below.
        for part in 0..6 {
            fill(&db, None, part * 500, 500);
            db.flush().unwrap();
        }
        db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
        fill(&db, Some("cf1"), 0, 200);
        db.flush_cf(db.cf_handle("cf1").unwrap()).unwrap();
        // A flush lands in the first path.
        fill(&db, None, 5000, 30);
        db.flush().unwrap();
        let live = db.live_files().unwrap();
        let deep = live.iter().filter(|f| f.column_family_name == "default" && f.level >= 2).count();
        assert!(deep > 0, "expected tables below level 1");
        assert_eq!(db.get(b"key000123").unwrap().unwrap(), value(123));
    }
    assert!(tables(&dir).is_empty(), "no table in the database directory: {:?}", tables(&dir));
    assert!(!tables(&p1).is_empty(), "flushes go to the first path");
    assert!(!tables(&p2).is_empty(), "deeper levels go to the second path");
    assert!(!tables(&cfp).is_empty(), "cf1's tables go to its cf_paths");
    assert!(tables(&p1).iter().chain(tables(&p2).iter()).all(|t| !tables(&cfp).contains(t)));

    // Reopen with the db_paths in the other order: every table is still found, and a full
    // compaction leaves no obsolete table behind in any path.
    let mut swapped = opts.clone();
    swapped.set_db_paths(&[DBPath::new(&p2, 1 << 40).unwrap(), DBPath::new(&p1, 600 << 10).unwrap()]);
    {
        let db = DB::open_cf_descriptors(
            &swapped,
            &dir,
            vec![
                ColumnFamilyDescriptor::new("default", swapped.clone()),
                ColumnFamilyDescriptor::new("cf1", cf_opts.clone()),
            ],
        )
        .unwrap();
        for i in (0..3000).step_by(97) {
            assert_eq!(db.get(format!("key{i:06}")).unwrap().unwrap(), value(i), "key {i}");
        }
        let live: usize = db.get_column_family_metadata().file_count;
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        let after = db.get_column_family_metadata().file_count;
        let on_disk = tables(&p1).len() + tables(&p2).len();
        assert!(after <= live);
        assert_eq!(on_disk, after, "obsolete tables left: {:?} {:?}", tables(&p1), tables(&p2));
    }
    DB::destroy(&swapped, &dir).unwrap();
    assert!(tables(&p1).is_empty() && tables(&p2).is_empty(), "destroy removes the db_paths' tables");
}
