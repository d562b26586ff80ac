//! A secondary instance (RocksDB's DBImplSecondary) follows its primary through the
//! primary's MANIFEST and WALs: writes still in the WAL, flushes, compactions and a new
//! MANIFEST are all seen after `try_catch_up_with_primary`, never before; it refuses writes
//! and writes nothing into the primary's directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::families;
use families::open_cf_all;

use std::collections::BTreeMap;
use std::path::Path;

use shale::{ColumnFamilyDescriptor, ErrorKind, IteratorMode, Options, DB};

fn contents(db: &DB, cf: &str) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let h = db.cf_handle(cf).unwrap();
    db.iterator_cf(h, IteratorMode::Start)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn secondary_follows_flushes_compactions_and_new_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let primary_path = dir.path().join("primary");
    let secondary_path = dir.path().join("secondary");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.set_disable_auto_compactions(true);
    // Small MANIFESTs: the primary starts new ones while the secondary follows.
    opts.set_max_manifest_file_size(512);
    let primary = open_cf_all(&opts, &primary_path, ["cf1"]).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let pcf = primary.cf_handle("cf1").unwrap();
    primary.put_cf(pcf, b"k000", b"v").unwrap();
    model.insert(b"k000".to_vec(), b"v".to_vec());

    let mut sopts = Options::default();
    sopts.set_max_open_files(-1);
    let secondary = DB::open_cf_descriptors_as_secondary(
        &sopts,
        &primary_path,
        &secondary_path,
        [ColumnFamilyDescriptor::new("cf1", Options::default())],
    )
    .unwrap();
    assert_eq!(contents(&secondary, "cf1"), model);
    let scf = secondary.cf_handle("cf1").unwrap();
    let e = secondary.put_cf(scf, b"x", b"y").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("Not supported operation in secondary mode."), "{e}");

    for round in 0..6u32 {
        let seen = contents(&secondary, "cf1");
        for i in 0..50u32 {
            let k = format!("k{:03}", (i * 7 + round * 13) % 200).into_bytes();
            if i % 5 == 4 {
                primary.delete_cf(pcf, &k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("v{round}-{i}").into_bytes();
                primary.put_cf(pcf, &k, &v).unwrap();
                model.insert(k, v);
            }
        }
        match round % 3 {
            0 => {}
            1 => primary.flush_cf(pcf).unwrap(),
            _ => {
                primary.flush_cf(pcf).unwrap();
                primary.compact_range_cf(pcf, None::<&[u8]>, None::<&[u8]>);
            }
        }
        // Not seen until the catch-up.
        assert_eq!(contents(&secondary, "cf1"), seen, "round {round}");
        secondary.try_catch_up_with_primary().unwrap();
        assert_eq!(contents(&secondary, "cf1"), model, "round {round}");
        assert_eq!(secondary.latest_sequence_number(), primary.latest_sequence_number());
    }
    // The secondary's own directory holds its info log only.
    assert!(names(&secondary_path).iter().all(|n| n.starts_with("LOG")), "{:?}", names(&secondary_path));
}

#[test]
fn secondary_keeps_reading_while_the_primary_deletes_files() {
    let dir = tempfile::tempdir().unwrap();
    let primary_path = dir.path().join("primary");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_disable_auto_compactions(true);
    let primary = DB::open(&opts, &primary_path).unwrap();
    for i in 0..3 {
        primary.put(format!("k{i}"), b"1").unwrap();
        primary.flush().unwrap();
    }
    let mut sopts = Options::default();
    sopts.set_max_open_files(-1);
    let secondary = DB::open_as_secondary(&sopts, &primary_path, &dir.path().join("s")).unwrap();
    // The compaction removes the three tables the secondary's view holds: with every table
    // kept open, the old view still reads them.
    primary.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(secondary.get(b"k1").unwrap().as_deref(), Some(&b"1"[..]));
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get(b"k2").unwrap().as_deref(), Some(&b"1"[..]));
    let files = secondary.live_files().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    // With dynamic level sizes the compaction writes the base level, the last one here.
    assert_eq!(files[0].level, 6);
}

/// Catch-ups while the primary writes, flushes and compacts: every view the secondary
/// shows is a prefix of the primary's writes (no key missing below the newest one seen).
#[test]
fn catch_up_during_writes_shows_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let primary_path = dir.path().join("primary");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(16 << 10);
    opts.set_level_zero_file_num_compaction_trigger(2);
    let primary = std::sync::Arc::new(DB::open(&opts, &primary_path).unwrap());
    let mut sopts = Options::default();
    sopts.set_max_open_files(-1);
    let secondary = DB::open_as_secondary(&sopts, &primary_path, &dir.path().join("s")).unwrap();
    let writer = {
        let primary = primary.clone();
        std::thread::spawn(move || {
            for i in 0..3000u32 {
                primary.put(format!("k{i:06}"), vec![b'v'; 100]).unwrap();
            }
        })
    };
    let mut catch_ups = 0;
    while !writer.is_finished() || catch_ups < 3 {
        secondary.try_catch_up_with_primary().unwrap();
        catch_ups += 1;
        let keys: Vec<Vec<u8>> =
            secondary.iterator(IteratorMode::Start).map(|r| r.unwrap().0.to_vec()).collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(k, format!("k{i:06}").as_bytes(), "catch-up {catch_ups}: a hole before {k:?}");
        }
    }
    writer.join().unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.iterator(IteratorMode::Start).count(), 3000);
}
