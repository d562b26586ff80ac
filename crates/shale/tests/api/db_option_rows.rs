//! DB options of the option table that act at open and close as RocksDB 11.8.1's:
//! `avoid_flush_during_recovery` (replayed data stays in the memtable and its WALs stay
//! alive), `avoid_flush_during_shutdown` (writes made without the WAL are not flushed at
//! close), `write_identity_file` (no IDENTITY file; RocksDB's refusal with
//! `write_dbid_to_manifest` false too); and the rows of options RocksDB 11.8.1 marks
//! deprecated: accepted with any value, never written.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::Path;
use std::sync::Arc;

use shale::{ColumnFamilyDescriptor, ErrorKind, Options, WriteOptions, DB};

fn base() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o
}

fn wal_count(dir: &Path) -> usize {
    util::files_ending(dir, ".log").len()
}

fn sst_count(dir: &Path) -> usize {
    util::files_ending(dir, ".sst").len()
}

use util::expect_err as err;

/// Writes `n` keys starting at `from` into the default family and `other`.
fn write(db: &DB, from: u32, n: u32) {
    let other = db.cf_handle("other").unwrap();
    for i in from..from + n {
        db.put(format!("k{i:05}"), format!("v{i}")).unwrap();
        db.put_cf(&other, format!("o{i:05}"), format!("w{i}")).unwrap();
    }
}

fn check(db: &DB, n: u32) {
    let other = db.cf_handle("other").unwrap();
    for i in 0..n {
        assert_eq!(db.get(format!("k{i:05}")).unwrap().unwrap(), format!("v{i}").as_bytes());
        assert_eq!(db.get_cf(&other, format!("o{i:05}")).unwrap().unwrap(), format!("w{i}").as_bytes());
    }
}

fn open(dir: &Path, o: &Options) -> DB {
    let cfs = ["default", "other"].map(|n| ColumnFamilyDescriptor::new(n, o.clone()));
    DB::open_cf_descriptors(o, dir, cfs).unwrap()
}

#[test]
fn avoid_flush_during_recovery_keeps_replayed_data_in_memtables_and_wals() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let plain = base();
    let mut avoid = base();
    avoid.set_avoid_flush_during_recovery(true);

    drop({
        let db = open(path, &plain);
        write(&db, 0, 200);
        db
    });
    assert_eq!(sst_count(path), 0, "nothing flushed before the reopen");
    let wals_before = wal_count(path);

    // Reopened with the option: no table is written, the old WAL stays beside the new one,
    // and the data is in the memtables.
    {
        let db = open(path, &avoid);
        assert_eq!(sst_count(path), 0, "recovery wrote no level-0 table");
        assert_eq!(wal_count(path), wals_before + 1, "the replayed WAL is alive");
        assert!(util::int_prop(&db, "rocksdb.num-entries-active-mem-table") >= 200);
        check(&db, 200);
        write(&db, 200, 100);
        // The option is written to the OPTIONS file as set.
        assert!(util::latest_options_text(path).contains("avoid_flush_during_recovery=true"));
    }
    // A second open replays both WALs (the families' log numbers were kept).
    {
        let db = open(path, &avoid);
        assert_eq!(sst_count(path), 0);
        check(&db, 300);
        // A flush of every family makes the old WALs obsolete: they go.
        db.flush().unwrap();
        db.flush_cf(&db.cf_handle("other").unwrap()).unwrap();
        util::wait_until(60, "the replayed WALs deleted", || wal_count(path) == 1);
        check(&db, 300);
    }
    // Without the option, recovery flushes what it replays (as RocksDB's default).
    {
        let db = open(path, &plain);
        write(&db, 300, 10);
    }
    let tables = sst_count(path);
    let db = open(path, &plain);
    assert!(sst_count(path) > tables, "the default recovery writes level-0 tables");
    assert_eq!(util::int_prop(&db, "rocksdb.num-entries-active-mem-table"), 0);
    check(&db, 310);
}

#[test]
fn avoid_flush_during_recovery_still_flushes_when_replay_fills_a_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut big = base();
    big.set_write_buffer_size(64 << 20);
    drop({
        let db = open(path, &big);
        for i in 0..300u32 {
            db.put(format!("k{i:05}"), util::value(u64::from(i), 1000)).unwrap();
        }
        db.put_cf(&db.cf_handle("other").unwrap(), "o", "w").unwrap();
        db
    });
    assert_eq!(sst_count(path), 0);
    // Replayed into memtables of 256 KiB, the 300 KB fill one.
    let mut o = base();
    o.set_write_buffer_size(256 << 10);
    let tables = sst_count(path);
    let mut avoid = o.clone();
    avoid.set_avoid_flush_during_recovery(true);
    // A memtable that fills during replay is flushed, and then every family is, "other"
    // included, as RocksDB's recovery does once it has flushed.
    let db = open(path, &avoid);
    assert!(sst_count(path) > tables);
    let other = db.cf_handle("other").unwrap();
    assert_eq!(db.property_int_value_cf(&other, "rocksdb.num-entries-active-mem-table").unwrap(), Some(0));
    assert_eq!(db.get_cf(&other, "o").unwrap().unwrap(), b"w");
    assert_eq!(wal_count(path), 1, "every replayed WAL flushed and deleted");
}

#[test]
fn avoid_flush_during_shutdown_leaves_writes_without_the_wal_unflushed() {
    let no_wal = {
        let mut w = WriteOptions::default();
        w.disable_wal(true);
        w
    };
    for avoid in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = base();
        o.set_avoid_flush_during_shutdown(avoid);
        {
            let db = DB::open(&o, dir.path()).unwrap();
            db.put_opt(b"unlogged", b"v", &no_wal).unwrap();
        }
        let db = DB::open(&o, dir.path()).unwrap();
        let got = db.get(b"unlogged").unwrap();
        if avoid {
            // RocksDB's close skips its flush: the write existed in the memtable only.
            assert_eq!(got, None);
            assert_eq!(sst_count(dir.path()), 0);
        } else {
            assert_eq!(got.as_deref(), Some(&b"v"[..]));
            assert_eq!(sst_count(dir.path()), 1);
        }
    }
}

#[test]
fn write_identity_file_false_keeps_the_id_in_the_manifest_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let id = {
        let db = DB::open(&base(), path).unwrap();
        db.get_db_identity().unwrap()
    };
    assert!(path.join("IDENTITY").exists());
    let mut o = base();
    o.set_write_identity_file(false);
    {
        let db = DB::open(&o, path).unwrap();
        // The leftover IDENTITY file is deleted once recovery succeeded; the id is kept.
        assert!(!path.join("IDENTITY").exists());
        assert_eq!(db.get_db_identity().unwrap(), id);
        assert!(util::latest_options_text(path).contains("write_identity_file=false"));
    }
    // A new database made with the option has none either.
    let fresh = tempfile::tempdir().unwrap();
    let db = DB::open(&o, fresh.path()).unwrap();
    assert!(!fresh.path().join("IDENTITY").exists());
    assert_eq!(db.get_db_identity().unwrap().len(), 36);
    drop(db);
    // Reopened with the default, the MANIFEST's id is written to IDENTITY again.
    let db = DB::open(&base(), path).unwrap();
    assert_eq!(std::fs::read_to_string(path.join("IDENTITY")).unwrap().trim_end().as_bytes(), &id[..]);
    drop(db);

    // RocksDB's ValidateOptions refuses both off.
    o.set_write_dbid_to_manifest(false);
    let e = err(DB::open(&o, tempfile::tempdir().unwrap().path()));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.to_string().contains("write_dbid_to_manifest and write_identity_file cannot both be false"),
        "{e}"
    );
}

#[test]
fn option_strings_set_the_db_rows() {
    let o = Options::default()
        .get_options_from_string(
            "avoid_flush_during_recovery=true;avoid_flush_during_shutdown=1;write_identity_file=false;\
             max_write_batch_group_size_bytes=65536",
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = o;
    o.create_if_missing(true);
    drop(DB::open(&o, dir.path()).unwrap());
    let text = util::latest_options_text(dir.path());
    for line in
        ["avoid_flush_during_recovery=true", "avoid_flush_during_shutdown=true", "write_identity_file=false"]
    {
        assert!(text.contains(line), "{line} missing from the OPTIONS file");
    }
    // The LOG's DB options dump has them too, in RocksDB's spelling.
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("Options.avoid_flush_during_recovery: 1"), "LOG lacks the line");
    assert!(log.contains("Options.write_identity_file: 0"));
    assert!(log.contains("Options.max_write_batch_group_size_bytes: 65536"));
    // A bad value names the option.
    let e = err(Options::default().get_options_from_string("avoid_flush_during_shutdown=maybe"));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("avoid_flush_during_shutdown"), "{e}");
}

/// RocksDB 11.8.1's deprecated options (`kDeprecated` in its db_options.cc and
/// cf_options.cc): its parser takes any value and changes nothing, `SetOptions` takes the
/// mutable ones, and neither its OPTIONS file nor its LOG names them.
#[test]
fn deprecated_options_are_accepted_and_never_written() {
    let deprecated = [
        "allow_os_buffer=false",
        "base_background_compactions=7",
        "use_direct_writes=true",
        "disableDataSync=true",
        "skip_log_error_on_recovery=true",
        "random_access_max_buffer_size=not-a-number",
        "preserve_deletes=true",
        "seq_per_batch=true",
        "filter_deletes=true",
        "soft_rate_limit=2.5",
        "max_grandparent_overlap_factor=3",
        "memtable_prefix_bloom_bits=100",
        "bottommost_temperature=kHot",
        "purge_redundant_kvs_while_flush=false",
        "max_mem_compaction_level=2",
        "max_write_buffer_number_to_maintain=4",
    ];
    let mut o = Options::default().get_options_from_string(deprecated.join(";")).unwrap();
    o.create_if_missing(true);
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&o, dir.path()).unwrap();
    // Nothing changed: direct I/O (what rust-rocksdb's `set_allow_os_buffer(false)` sets)
    // is not on, and the OPTIONS file holds none of them.
    let text = util::latest_options_text(dir.path());
    assert!(text.contains("use_direct_reads=false"));
    for d in deprecated {
        let name = d.split('=').next().unwrap();
        assert!(!text.contains(&format!("{name}=")), "{name} written to the OPTIONS file");
    }
    // Mutable ones are taken by set_options; immutable ones are not changeable.
    db.set_options(&[("filter_deletes", "true"), ("hard_rate_limit", "1.0")]).unwrap();
    let e = err(db.set_options(&[("purge_redundant_kvs_while_flush", "true")]));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("Option not changeable: purge_redundant_kvs_while_flush"), "{e}");
    db.put(b"k", b"v").unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap(), b"v");
}

/// `disallow_memtable_writes`: a family filled by ingestion only, as RocksDB 11.8.1's.
#[test]
fn disallow_memtable_writes_refuses_writes_but_not_ingestion() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let plain = base();
    let mut ingest_only = base();
    ingest_only.set_disallow_memtable_writes(true);
    let descs = |ingest: &Options| {
        vec![
            ColumnFamilyDescriptor::new("default", plain.clone()),
            ColumnFamilyDescriptor::new("bulk", ingest.clone()),
        ]
    };
    {
        let db = DB::open_cf_descriptors(&plain, &path, descs(&ingest_only)).unwrap();
        let bulk = db.cf_handle("bulk").unwrap();
        let e = err(db.put_cf(&bulk, b"k", b"v"));
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("This column family has disallow_memtable_writes=true"), "{e}");
        // A batch naming it fails whole: its other records are not applied either.
        let mut b = shale::WriteBatch::default();
        b.put(b"d", b"x");
        b.delete_cf(&bulk, b"k");
        assert_eq!(err(db.write(b)).kind(), ErrorKind::InvalidArgument);
        assert_eq!(db.get(b"d").unwrap(), None);
        db.put(b"d", b"y").unwrap();
        // Ingestion fills it.
        let sst = dir.path().join("in.sst");
        let mut w = shale::SstFileWriter::create(&ingest_only);
        w.open(&sst).unwrap();
        w.put(b"a", b"1").unwrap();
        w.put(b"b", b"2").unwrap();
        w.finish().unwrap();
        db.ingest_external_file_cf(&bulk, vec![&sst]).unwrap();
        assert_eq!(db.get_cf(&bulk, b"b").unwrap().unwrap(), b"2");
        // Not changeable while open, as RocksDB's immutable options.
        let e = err(db.set_options_cf(&bulk, &[("disallow_memtable_writes", "false")]));
        assert!(e.to_string().contains("Option not changeable: disallow_memtable_writes"), "{e}");
        assert!(util::latest_options_text(&path).contains("disallow_memtable_writes=true"));
    }
    // Writes made while it was off and still in the WAL fail an open that sets it.
    {
        let db = DB::open_cf_descriptors(&plain, &path, descs(&plain)).unwrap();
        db.put_cf(&db.cf_handle("bulk").unwrap(), b"c", b"3").unwrap();
    }
    let e = err(DB::open_cf_descriptors(&plain, &path, descs(&ingest_only)));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("disallow_memtable_writes=true"), "{e}");
    // Once flushed, it opens with it again.
    {
        let db = DB::open_cf_descriptors(&plain, &path, descs(&plain)).unwrap();
        db.flush_cf(&db.cf_handle("bulk").unwrap()).unwrap();
    }
    let db = DB::open_cf_descriptors(&plain, &path, descs(&ingest_only)).unwrap();
    assert_eq!(db.get_cf(&db.cf_handle("bulk").unwrap(), b"c").unwrap().unwrap(), b"3");
    drop(db);
    // Not on the default family (RocksDB's ValidateOptions).
    let e = err(DB::open(&ingest_only, &path));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("Default column family cannot use disallow_memtable_writes=true"), "{e}");
}

/// `log_readahead_size`: the open's WAL replay (and MANIFEST read) make read calls of that
/// size (RocksDB's `ReadaheadSequentialFile`), counted by the fault-injecting file system;
/// the data recovered is the same.
#[test]
fn log_readahead_size_reads_the_wal_in_larger_calls() {
    use shale::fs::{FaultInjectionFs, MemFileSystem, OpKind};
    let fs = Arc::new(FaultInjectionFs::new(Arc::new(MemFileSystem::new())));
    let mut o = base();
    o.set_file_system(fs.clone());
    o.set_write_buffer_size(64 << 20);
    // Two databases holding the same 2 MB in their WALs.
    for db in ["/a", "/b"] {
        let d = DB::open(&o, db).unwrap();
        for i in 0..2000u32 {
            d.put(format!("k{i:05}"), util::value(u64::from(i), 1000)).unwrap();
        }
    }
    let mut reads = Vec::new();
    for (db, readahead) in [("/a", 0usize), ("/b", 1 << 20)] {
        let mut ro = o.clone();
        ro.set_log_readahead_size(readahead);
        let before = fs.count(OpKind::Read);
        let d = DB::open(&ro, db).unwrap();
        reads.push(fs.count(OpKind::Read) - before);
        assert_eq!(d.get("k01999").unwrap().unwrap(), util::value(1999, 1000));
    }
    // The log reader asks for 32 KiB blocks: some 64 calls for the WAL without readahead,
    // three with 1 MiB.
    assert!(reads[0] >= reads[1] + 50, "reads without and with readahead: {reads:?}");
}
