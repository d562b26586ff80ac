//! Options that had no row in the option table (issue 33), each shown acting as RocksDB
//! 11.8.1's:
//! - `allow_fallocate`: WALs, compaction outputs and the MANIFEST reserve disk space ahead of
//!   their writes (`fallocate(FALLOC_FL_KEEP_SIZE)`, counted by the fault-injecting file
//!   system and seen in the live WAL's allocated blocks), released at close; false: none;
//! - `force_consistency_checks`: a MANIFEST whose level 1 holds overlapping files is refused
//!   at open with RocksDB's Corruption; false opens it;
//! - `enable_thread_tracking`: kept, written to the OPTIONS file and the LOG (RocksDB's only
//!   other effect is its thread-status registry, which no API here reads).
//!
//! Each is parsed by `get_options_from_string`, written to the OPTIONS file, read back by
//! `load_latest`, refused by `set_options` as immutable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use shale::fs::{FaultInjectionFs, OpKind, PosixFileSystem};
use shale::{Cache, ErrorKind, Options, DB};

use util::create_options as base;

fn log_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("LOG")).unwrap()
}

/// Opens a database on the real file system under a counting fault-injecting one.
fn open_counted(path: &Path, allow_fallocate: bool) -> (DB, Arc<FaultInjectionFs>) {
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(PosixFileSystem)));
    let mut o = base();
    o.set_file_system(fs.clone());
    o.set_write_buffer_size(4 << 20);
    o.set_disable_auto_compactions(true);
    o.set_allow_fallocate(allow_fallocate);
    (DB::open(&o, path).unwrap(), fs)
}

fn live_wal(path: &Path) -> std::path::PathBuf {
    let wals = util::files_ending(path, ".log");
    path.join(wals.into_iter().max().unwrap())
}

#[test]
fn allow_fallocate_reserves_wal_manifest_and_compaction_space() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let (db, fs) = open_counted(path, true);
    // The WAL made at open and the MANIFEST reserved their first blocks.
    let at_open = fs.count(OpKind::Allocate);
    assert!(at_open >= 2, "WAL and MANIFEST preallocated at open: {at_open} calls");
    db.put(b"k", b"v").unwrap();
    let wal = live_wal(path);
    let m = std::fs::metadata(&wal).unwrap();
    // RocksDB's GetWalPreallocateBlockSize: 1.1 x the 4 MiB write buffer.
    let block = (4u64 << 20) + (4 << 20) / 10;
    if m.blocks() * 512 < block {
        // A file system that cannot reserve space (fallocate refused): nothing further to see.
        eprintln!("fallocate not effective here: {} blocks", m.blocks());
        return;
    }
    assert!(m.len() < 4096, "the WAL's size is what was written: {}", m.len());

    // Two overlapping tables compacted into one: the output reserves its space too.
    for round in 0..2u32 {
        for i in 0..2000u32 {
            db.put(format!("key{:06}", i * 2 + round), util::value(u64::from(i), 100)).unwrap();
        }
        db.flush().unwrap();
    }
    let before = fs.count(OpKind::Allocate);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert!(fs.count(OpKind::Allocate) > before, "the compaction output preallocated");
    assert_eq!(util::files_ending(path, ".sst").len(), 1);
    // The WAL the last flush started reserved its block too.
    db.put(b"k2", b"v").unwrap();
    let wal = live_wal(path);
    assert!(std::fs::metadata(&wal).unwrap().blocks() * 512 >= block, "the new WAL preallocated");
    drop(db);
    // Closed: what was reserved past the data is released again.
    let m = std::fs::metadata(&wal).unwrap();
    assert!(m.blocks() * 512 < 1 << 20, "released at close: {} blocks of {} bytes", m.blocks(), m.len());
    for t in util::files_ending(path, ".sst") {
        let m = std::fs::metadata(path.join(&t)).unwrap();
        assert!(m.blocks() * 512 < m.len() + (1 << 20), "{t}: {} blocks for {} bytes", m.blocks(), m.len());
    }
}

#[test]
fn allow_fallocate_false_reserves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let (db, fs) = open_counted(path, false);
    for round in 0..2u32 {
        for i in 0..2000u32 {
            db.put(format!("key{:06}", i * 2 + round), util::value(u64::from(i), 100)).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.put(b"k", b"v").unwrap();
    assert_eq!(fs.count(OpKind::Allocate), 0, "no space reserved without allow_fallocate");
    let m = std::fs::metadata(live_wal(path)).unwrap();
    assert!(m.blocks() * 512 < 1 << 20, "{} blocks", m.blocks());
    drop(db);
}

#[test]
fn allow_fallocate_and_thread_tracking_rows_round_trip() {
    let o = Options::default()
        .clone()
        .get_options_from_string("allow_fallocate=false;enable_thread_tracking=true")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = o;
    o.create_if_missing(true);
    let db = DB::open(&o, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  allow_fallocate=false\n"), "{text}");
    assert!(text.contains("  enable_thread_tracking=true\n"), "{text}");
    let log = log_text(path);
    assert!(log.contains("Options.allow_fallocate: 0"), "LOG dump");
    assert!(log.contains("Options.enable_thread_tracking: 1"), "LOG dump");
    drop(db);
    let (loaded, _) =
        Options::load_latest(path, shale::Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    let db = DB::open(&loaded, path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  allow_fallocate=false\n"), "kept through load_latest: {text}");
    assert!(text.contains("  enable_thread_tracking=true\n"), "kept through load_latest: {text}");
    drop(db);
    // Defaults, as RocksDB 11.8.1's.
    let db = DB::open(&base(), tempfile::tempdir().unwrap().path()).unwrap();
    drop(db);
    let e = match Options::default().get_options_from_string("allow_fallocate=maybe") {
        Ok(_) => panic!("a bad boolean parsed"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// Two overlapping tables at level 0, then a MANIFEST whose last edit moves both to level 1
/// unchanged (a layout RocksDB's VersionBuilder refuses).
fn overlapping_level_one(path: &Path) {
    let mut o = base();
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    for (lo, hi) in [(b'a', b'f'), (b'e', b'k')] {
        for c in lo..=hi {
            db.put([c], b"v").unwrap();
        }
        db.flush().unwrap();
    }
    drop(db);

    use shale_engine::version::{manifest, VersionEdit};
    use shale_format::wal::{reader::LogReader, writer::LogWriter, WalRecoveryMode};
    let fs = PosixFileSystem;
    let rec = manifest::recover(&fs, path).unwrap();
    let files = &rec.column_families[&0].files;
    assert_eq!(files.len(), 2, "two L0 tables");
    let mut edit = VersionEdit { next_file_number: Some(1_000_001), ..VersionEdit::default() };
    for (level, f) in files {
        edit.deleted_files.push((*level, f.number));
        edit.new_files.push((1, f.clone()));
    }
    edit.deleted_files.sort_unstable();
    let old = path.join(manifest::read_current(&fs, path).unwrap());
    let mut reader = LogReader::new(
        shale::fs::FileSystem::new_sequential_file(&fs, &old).unwrap(),
        old.display().to_string(),
        0,
        WalRecoveryMode::AbsoluteConsistency,
    );
    let number = 1_000_000;
    let new = path.join(manifest::descriptor_file_name(number));
    let mut w = LogWriter::new(shale::fs::FileSystem::new_writable_file(&fs, &new).unwrap(), 0);
    let mut rec = Vec::new();
    while reader.read_record(&mut rec).unwrap() {
        w.add_record(&rec).unwrap();
    }
    w.add_record(&edit.encoded()).unwrap();
    w.sync().unwrap();
    drop(w);
    manifest::set_current_file(&fs, path, number, 1_000_002).unwrap();
}

#[test]
fn force_consistency_checks_refuses_overlapping_level_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    overlapping_level_one(path);
    // Default true: RocksDB 11.8.1's Corruption, its words.
    let e = match DB::open(&base(), path) {
        Ok(_) => panic!("an overlapping level 1 opened with force_consistency_checks"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("force_consistency_checks: VersionBuilder: L1 has overlapping ranges: file #")
            && msg.contains("largest key: '66' seq:")
            && msg.contains("smallest key: '65' seq:"),
        "{msg}"
    );
    // False: RocksDB's release build takes the layout as it is; the data reads back.
    let mut o = base();
    o.set_force_consistency_checks(false);
    o.set_disable_auto_compactions(true);
    let db = DB::open(&o, path).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"v");
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"v");
    let text = util::latest_options_text(path);
    assert!(text.contains("  force_consistency_checks=false\n"), "{text}");
    assert!(log_text(path).contains("Options.force_consistency_checks: 0"), "LOG dump");
    // Immutable, as in RocksDB.
    let e = db.set_options(&[("force_consistency_checks", "true")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Option not changeable: force_consistency_checks"), "{e}");
    drop(db);
    // Through an options string too.
    let o = base().get_options_from_string("force_consistency_checks=false").unwrap();
    drop(DB::open(&o, path).unwrap());
}

/// `avoid_flush_during_recovery` with `track_and_verify_wals_in_manifest`: the WAL kept alive
/// by the open stays in the MANIFEST's WAL set (RocksDB records no deletion for it and carries
/// the set into its new MANIFEST), so the next open still verifies it: cut short, it is
/// RocksDB's Corruption.
#[test]
fn wals_kept_by_avoid_flush_during_recovery_stay_tracked() {
    use shale_engine::version::manifest;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.create_missing_column_families(true);
    o.set_track_and_verify_wals_in_manifest(true);
    o.set_avoid_flush_during_recovery(true);
    let db = DB::open_cf(&o, path, ["a", "b"]).unwrap();
    for i in 0..200u32 {
        db.put_cf(&db.cf_handle("a").unwrap(), format!("a{i:04}"), b"value-a").unwrap();
        db.put_cf(&db.cf_handle("b").unwrap(), format!("b{i:04}"), b"value-b").unwrap();
    }
    let wal = live_wal(path);
    let number: u64 = wal.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    // Flushing "a" closes the WAL "b" still needs: it joins the MANIFEST's WAL set.
    db.flush_cf(&db.cf_handle("a").unwrap()).unwrap();
    drop(db);
    let tracked = manifest::recover(&PosixFileSystem, path).unwrap().wals;
    assert!(tracked.contains_key(&number), "WAL {number} tracked: {tracked:?}");

    // The open keeps b's data in its memtable and the WAL alive, and the WAL tracked.
    let db = DB::open_cf(&o, path, ["a", "b"]).unwrap();
    assert!(wal.exists(), "kept alive by avoid_flush_during_recovery");
    drop(db);
    let tracked = manifest::recover(&PosixFileSystem, path).unwrap().wals;
    assert!(tracked.contains_key(&number), "still tracked after the avoid-flush open: {tracked:?}");
    let synced = tracked[&number].unwrap();

    // Cut short below its synced size: the next open refuses it, RocksDB's words.
    let f = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    f.set_len(synced - 1).unwrap();
    drop(f);
    let e = match DB::open_cf(&o, path, ["a", "b"]) {
        Ok(_) => panic!("a tracked WAL cut short opened"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains(&format!("Size mismatch: WAL (log number: {number}) in MANIFEST")), "{e}");
}

/// `disallow_memtable_writes`: RocksDB 11.8.1's SanitizeCfOptions gives such a family a
/// VectorRepFactory memtable whatever was set, and its OPTIONS file says so; the other
/// families keep theirs.
#[test]
fn disallow_memtable_writes_runs_a_vector_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = base();
    o.create_missing_column_families(true);
    let mut bulk = base();
    bulk.set_disallow_memtable_writes(true);
    let cfs = [
        shale::ColumnFamilyDescriptor::new("default", base()),
        shale::ColumnFamilyDescriptor::new("bulk", bulk),
    ];
    let db = DB::open_cf_descriptors(&o, path, cfs).unwrap();
    let text = util::latest_options_text(path);
    let section = |name: &str| {
        let at = text.find(&format!("[CFOptions \"{name}\"]")).unwrap();
        let rest = &text[at + 1..];
        rest[..rest.find("\n[").unwrap_or(rest.len())].to_string()
    };
    assert!(section("bulk").contains("  memtable_factory={id=VectorRepFactory;count=0;}\n"), "{text}");
    assert!(section("default").contains("  memtable_factory=SkipListFactory\n"), "{text}");
    drop(db);
}
