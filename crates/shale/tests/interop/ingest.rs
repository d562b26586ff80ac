//! SstFileWriter and ingestion: files land on the lowest level they fit with sequence number
//! 0 when nothing overlaps, or with a fresh (global) sequence number on the level above
//! what they overlap; a memtable that overlaps is flushed first (or the ingest refused
//! without `allow_blocking_flush`); snapshots keep their view; several files go in all or
//! none; `move_files` links the file and removes the source; everything survives a reopen;
//! and files cross over with RocksDB 7.8.3's `ldb write_extern_sst` / `ingest_extern_sst`,
//! and `sst_dump --command=verify` passes on Shale's external files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use shale::{ErrorKind, IngestExternalFileOptions, IteratorMode, Options, SstFileWriter, DB};
use tools::*;

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's ldb reads the database
    o
}

/// Writes an external file with `keys` (ascending) mapped to `value(key)`.
fn write_sst(path: &Path, keys: impl IntoIterator<Item = u32>, tag: &str) -> PathBuf {
    let mut o = Options::default();
    for_rocksdb7(&mut o); // format 5: RocksDB 7.8.3's sst_dump and ldb read the file
    let mut w = SstFileWriter::create(&o);
    w.open(path).expect("open");
    for k in keys {
        w.put(format!("key{k:05}"), format!("{tag}{k}")).expect("put");
    }
    w.finish().expect("finish");
    path.to_path_buf()
}

fn level_of(db: &DB, number_hint: &str) -> i32 {
    let lf = db.live_files().expect("live files");
    lf.iter().find(|f| f.name.contains(number_hint)).map(|f| f.level).unwrap_or(-1)
}

fn levels(db: &DB) -> Vec<i32> {
    let mut l: Vec<i32> = db.live_files().expect("live files").iter().map(|f| f.level).collect();
    l.sort();
    l
}

fn get(db: &DB, k: u32) -> Option<String> {
    db.get(format!("key{k:05}")).expect("get").map(|v| String::from_utf8(v).expect("utf8"))
}

#[test]
fn disjoint_file_goes_to_the_bottom_with_seqno_zero_overlapping_one_above() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    let a = write_sst(&tmp.path().join("a.sst"), 0..100, "a");
    let seq = db.latest_sequence_number();
    db.ingest_external_file(vec![&a]).expect("ingest a");
    assert_eq!(levels(&db), vec![6], "an empty database takes it on the last level");
    assert_eq!(db.latest_sequence_number(), seq, "no sequence number needed");
    assert_eq!(get(&db, 5).as_deref(), Some("a5"));
    assert!(a.exists(), "the source stays without move_files");

    // Overlapping the first: a new sequence number, on the level above it.
    let b = write_sst(&tmp.path().join("b.sst"), 50..150, "b");
    db.ingest_external_file(vec![&b]).expect("ingest b");
    assert_eq!(levels(&db), vec![5, 6]);
    assert_eq!(db.latest_sequence_number(), seq + 1);
    assert_eq!(get(&db, 10).as_deref(), Some("a10"));
    assert_eq!(get(&db, 60).as_deref(), Some("b60"), "the ingested file is newer");
    assert_eq!(get(&db, 149).as_deref(), Some("b149"));

    // Writes after the ingest are newer still, and everything survives compaction and reopen.
    db.put("key00060", "w60").expect("put");
    db.flush().expect("flush");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(get(&db, 60).as_deref(), Some("w60"));
    drop(db);
    let db = DB::open(&opts(), tmp.path().join("db")).expect("reopen");
    assert_eq!(get(&db, 60).as_deref(), Some("w60"));
    assert_eq!(get(&db, 61).as_deref(), Some("b61"));
    assert_eq!(get(&db, 1).as_deref(), Some("a1"));
    let n = db.iterator(IteratorMode::Start).count();
    assert_eq!(n, 150);
}

#[test]
fn ingested_files_keep_their_global_seqno_across_reopen_without_compaction() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    {
        let db = DB::open(&opts(), &dir).expect("open");
        db.put("key00001", "old").expect("put");
        db.flush().expect("flush");
        let f = write_sst(&tmp.path().join("f.sst"), 0..10, "new");
        db.ingest_external_file(vec![&f]).expect("ingest");
        assert_eq!(get(&db, 1).as_deref(), Some("new1"));
    }
    let db = DB::open(&opts(), &dir).expect("reopen");
    assert_eq!(get(&db, 1).as_deref(), Some("new1"), "the file's keys read with the MANIFEST's seqno");
    let it: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.expect("iter")).collect();
    assert_eq!(it.len(), 10);
}

#[test]
fn overlapping_memtable_is_flushed_or_the_ingest_refused() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    db.put("key00003", "mem").expect("put");
    let f = write_sst(&tmp.path().join("f.sst"), 0..10, "f");
    let mut no_flush = IngestExternalFileOptions::default();
    no_flush.set_allow_blocking_flush(false);
    let e = db.ingest_external_file_opts(&no_flush, vec![&f]).expect_err("needs a flush");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(get(&db, 3).as_deref(), Some("mem"));
    assert!(db.live_files().expect("live").is_empty(), "nothing ingested");
    assert_eq!(sst_files(&tmp.path().join("db")).len(), 0, "the staged copy is removed");

    db.ingest_external_file(vec![&f]).expect("ingest with flush");
    assert_eq!(get(&db, 3).as_deref(), Some("f3"));
    assert_eq!(levels(&db), vec![0, 0], "the flushed memtable and the file above it");
}

#[test]
fn snapshot_taken_before_keeps_its_view() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    db.put("key00001", "before").expect("put");
    let snap = db.snapshot();
    let f = write_sst(&tmp.path().join("f.sst"), 100..110, "f");
    db.ingest_external_file(vec![&f]).expect("ingest");
    assert_eq!(snap.get("key00100").expect("get"), None, "the snapshot does not see the file");
    assert_eq!(get(&db, 100).as_deref(), Some("f100"));

    // Without global seqnos the same ingest is refused while a snapshot exists.
    let g = write_sst(&tmp.path().join("g.sst"), 200..210, "g");
    let mut o = IngestExternalFileOptions::default();
    o.set_allow_global_seqno(false);
    let e = db.ingest_external_file_opts(&o, vec![&g]).expect_err("seqno needed");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(snap);
}

#[test]
fn several_files_go_in_all_or_none() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    let db = DB::open(&opts(), &dir).expect("open");
    let a = write_sst(&tmp.path().join("a.sst"), 0..50, "a");
    let b = write_sst(&tmp.path().join("b.sst"), 50..100, "b");
    let missing = tmp.path().join("missing.sst");
    assert!(db.ingest_external_file(vec![&a, &b, &missing]).is_err());
    assert!(db.live_files().expect("live").is_empty());
    assert!(get(&db, 1).is_none());
    // A file that is not an external one (a table of a database) is refused too.
    let other = tmp.path().join("other");
    {
        let o = DB::open(&opts(), &other).expect("open other");
        o.put("x", "y").expect("put");
        o.flush().expect("flush");
    }
    let table = sst_files(&other).pop().expect("table");
    let e = db.ingest_external_file(vec![&a, &table]).expect_err("not external");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(db.live_files().expect("live").is_empty());
    assert_eq!(sst_files(&dir).len(), 0);

    db.ingest_external_file(vec![&b, &a]).expect("both");
    assert_eq!(db.live_files().expect("live").len(), 2);
    assert_eq!(get(&db, 1).as_deref(), Some("a1"));
    assert_eq!(get(&db, 99).as_deref(), Some("b99"));

    // Files overlapping each other: later ones win.
    let c = write_sst(&tmp.path().join("c.sst"), 10..20, "c");
    let d = write_sst(&tmp.path().join("d.sst"), 15..25, "d");
    db.ingest_external_file(vec![&c, &d]).expect("overlapping pair");
    assert_eq!(get(&db, 12).as_deref(), Some("c12"));
    assert_eq!(get(&db, 16).as_deref(), Some("d16"));
    assert_eq!(get(&db, 30).as_deref(), Some("a30"));
}

#[test]
fn move_files_links_and_removes_the_source() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("db");
    let db = DB::open(&opts(), &dir).expect("open");
    let a = write_sst(&tmp.path().join("a.sst"), 0..10, "a");
    let ino = std::fs::metadata(&a).expect("stat").ino();
    let mut o = IngestExternalFileOptions::default();
    o.set_move_files(true);
    db.ingest_external_file_opts(&o, vec![&a]).expect("ingest");
    assert!(!a.exists(), "the source is moved");
    let t = sst_files(&dir).pop().expect("table");
    assert_eq!(std::fs::metadata(&t).expect("stat").ino(), ino, "a hard link, not a copy");
    assert_eq!(level_of(&db, ""), 6);
    assert_eq!(get(&db, 9).as_deref(), Some("a9"));
}

#[test]
fn range_deletions_and_deletes_in_external_files() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = DB::open(&opts(), tmp.path().join("db")).expect("open");
    for i in 0..10 {
        db.put(format!("key{i:05}"), "v").expect("put");
    }
    db.flush().expect("flush");
    let o = Options::default();
    let mut w = SstFileWriter::create(&o);
    let p = tmp.path().join("del.sst");
    w.open(&p).expect("open");
    w.delete("key00001").expect("delete");
    w.delete_range("key00004", "key00007").expect("range");
    w.finish().expect("finish");
    db.ingest_external_file(vec![&p]).expect("ingest");
    let left: Vec<u32> = (0..10).filter(|i| get(&db, *i).is_some()).collect();
    assert_eq!(left, vec![0, 2, 3, 7, 8, 9]);
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let left: Vec<u32> = (0..10).filter(|i| get(&db, *i).is_some()).collect();
    assert_eq!(left, vec![0, 2, 3, 7, 8, 9]);
}

fn rocksdb_scan(dir: &Path) -> Pairs {
    ldb_scan(dir, None)
}

#[test]
fn external_files_cross_over_with_ldb() {
    if !tools_available("ingest interop", &["ldb", "sst_dump"]) {
        return;
    }
    external_files_interop();
}

#[test]
fn external_files_cross_over_with_ldb_11() {
    if !use_rocksdb_11("ingest interop (11.8.1)") {
        return;
    }
    external_files_interop();
}

/// With this thread's tools (7.8.3, or 11.8.1 after `use_rocksdb_11`).
fn external_files_interop() {
    let tmp = tempfile::tempdir().expect("tmp");
    // ldb write_extern_sst -> Shale ingests.
    let scratch = tmp.path().join("rocks_scratch");
    let ldb_sst = tmp.path().join("from_ldb.sst");
    let input: String = (0..200).map(|i| format!("key{i:05} ==> r{i}\n")).collect();
    let mut child = tool_command("ldb")
        .args([
            format!("--db={}", scratch.display()),
            "--create_if_missing".into(),
            "write_extern_sst".into(),
            ldb_sst.display().to_string(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("ldb");
    use std::io::Write;
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let db_dir = tmp.path().join("shale");
    {
        let db = DB::open(&opts(), &db_dir).expect("open");
        db.put("key00005", "mem").expect("put");
        db.ingest_external_file(vec![&ldb_sst]).expect("ingest ldb's file");
        assert_eq!(get(&db, 5).as_deref(), Some("r5"));
        assert_eq!(get(&db, 199).as_deref(), Some("r199"));
    }
    // ...and RocksDB reads the Shale database holding it (global seqno from the MANIFEST).
    let scan = rocksdb_scan(&db_dir);
    assert_eq!(scan.len(), 200);
    assert!(scan.contains(&(b"key00005".to_vec(), b"r5".to_vec())));

    // Shale's SstFileWriter -> sst_dump verify -> ldb ingest_extern_sst.
    let ours = write_sst(&tmp.path().join("ours.sst"), 0..300, "s");
    run_tool("sst_dump", &[format!("--file={}", ours.display()), "--command=verify".into()]);
    let props = run_tool("sst_dump", &[format!("--file={}", ours.display()), "--show_properties".into()]);
    assert!(props.contains("rocksdb.external_sst_file.version"), "{props}");
    let rocks = tmp.path().join("rocks");
    run_tool(
        "ldb",
        &[
            format!("--db={}", rocks.display()),
            "--create_if_missing".into(),
            "put".into(),
            "key00010".into(),
            "old".into(),
        ],
    );
    run_tool(
        "ldb",
        &[format!("--db={}", rocks.display()), "ingest_extern_sst".into(), ours.display().to_string()],
    );
    assert_eq!(ldb_get(&rocks, None, b"key00010").as_deref(), Some(&b"s10"[..]));
    assert_eq!(rocksdb_scan(&rocks).len(), 300);
    // And Shale opens what RocksDB made of it.
    let db = DB::open(&opts(), &rocks).expect("open rocks");
    assert_eq!(get(&db, 10).as_deref(), Some("s10"));
    assert_eq!(get(&db, 299).as_deref(), Some("s299"));
}

/// `IngestExternalFileOptions::set_write_global_seqno` (RocksDB's deprecated
/// `write_global_seqno`; rust-rocksdb 0.25 has no setter, Shale's facade has): a file that
/// needs a sequence number gets it written into its "rocksdb.external_sst_file.global_seqno"
/// property in place, which RocksDB 11.8.1's `sst_dump --show_properties` reads; with the
/// CRC32C checksum factory the MANIFEST's checksum is the rewritten file's (11.8.1's `ldb
/// file_checksum_dump`); the copied source keeps 0; Shale (also after a reopen) and 11.8.1's
/// ldb read the data. Without the option the file keeps 0.
#[test]
fn write_global_seqno_writes_the_number_into_the_file() {
    const TEST: &str = "interop ingest write_global_seqno";
    for write in [true, false] {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("db");
        let mut o = opts()
            .get_options_from_string("file_checksum_gen_factory=FileChecksumGenCrc32cFactory")
            .expect("options");
        o.create_if_missing(true);
        let a = write_sst(&tmp.path().join("a.sst"), 0..100, "a");
        let before: Vec<PathBuf>;
        let seq;
        {
            let db = DB::open(&o, &dir).expect("open");
            db.put("key00005", "old").expect("put");
            db.flush().expect("flush");
            before = tools::sst_files(&dir);
            seq = db.latest_sequence_number() + 1;
            let mut io = IngestExternalFileOptions::default();
            io.set_write_global_seqno(write);
            db.ingest_external_file_opts(&io, vec![&a]).expect("ingest");
            assert_eq!(db.latest_sequence_number(), seq, "the file takes a sequence number");
            assert_eq!(get(&db, 5).as_deref(), Some("a5"));
        }
        let db = DB::open(&o, &dir).expect("reopen");
        assert_eq!(get(&db, 5).as_deref(), Some("a5"));
        assert_eq!(get(&db, 99).as_deref(), Some("a99"));
        if !tools::use_rocksdb_11(TEST) {
            continue;
        }
        let ingested: Vec<PathBuf> =
            tools::sst_files(&dir).into_iter().filter(|p| !before.contains(p)).collect();
        assert_eq!(ingested.len(), 1, "{ingested:?}");
        let property = |p: &Path| {
            let out = run_tool("sst_dump", &args(&[&format!("--file={}", p.display()), "--show_properties"]));
            out.lines()
                .find(|l| l.contains("rocksdb.external_sst_file.global_seqno"))
                .map(|l| l.trim().to_string())
                .unwrap_or_else(|| panic!("{}: no global seqno property\n{out}", p.display()))
        };
        let want = encode_hex(&(if write { seq } else { 0 }).to_le_bytes());
        assert_eq!(
            property(&ingested[0]).to_ascii_uppercase(),
            format!("# rocksdb.external_sst_file.global_seqno: {want}").to_ascii_uppercase(),
            "write_global_seqno={write}"
        );
        assert!(property(&a).to_ascii_uppercase().ends_with("0X0000000000000000"), "the source is a copy's");
        // The MANIFEST's checksum is the file's as it now is.
        let out = run_tool(
            "ldb",
            &[format!("--db={}", dir.display()), "file_checksum_dump".into(), "--hex".into()],
        );
        let name = ingested[0].file_stem().unwrap().to_string_lossy().trim_start_matches('0').to_string();
        let line = out.lines().find(|l| l.starts_with(&format!("{name}, "))).expect("listed");
        let file = std::fs::read(&ingested[0]).unwrap();
        let crc = encode_hex(&crc32c::crc32c(&file).to_be_bytes());
        assert!(line.to_ascii_uppercase().ends_with(&crc.to_ascii_uppercase()), "{line} / {crc}");
        rocksdb_reads(&dir, &db, TEST);
    }
}
