//! DB options RocksDB 11.8.1 registers about the files the database writes that rust-rocksdb
//! has no setter for, set by name and acting as RocksDB's (`options_dbfile.rs`).
//!
//! `file_checksum_gen_factory=FileChecksumGenCrc32cFactory`: every table and blob file
//! written by a flush, a compaction or an ingestion records the CRC32C of its whole file
//! (4 bytes big-endian, "FileChecksumCrc32c") in the MANIFEST; without it, tables record the
//! empty checksum and "Unknown", blob files nothing. A compaction with kVerifyFileChecksum
//! reads its outputs back and finds one whose bytes on disk are not what was written.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use shale::fs::{FileSystem, PosixFileSystem, WritableFile};
use shale::{ErrorKind, Options, SstFileWriter, DB};
use shale_engine::version::manifest;

const CRC32C: &str = "file_checksum_gen_factory=FileChecksumGenCrc32cFactory";

fn opts(with_factory: bool) -> Options {
    let mut o = if with_factory {
        Options::default().get_options_from_string(CRC32C).unwrap()
    } else {
        Options::default()
    };
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o
}

/// Every live table and blob file the MANIFEST of `dir` lists: (path, checksum, function).
fn recorded(dir: &Path) -> (Vec<(std::path::PathBuf, Vec<u8>, String)>, usize) {
    let m = manifest::recover(&PosixFileSystem, dir).unwrap();
    let mut out = Vec::new();
    let mut blobs = 0;
    for cf in m.column_families.values() {
        for (_, f) in &cf.files {
            out.push((
                dir.join(format!("{:06}.sst", f.number)),
                f.file_checksum.clone(),
                f.file_checksum_func_name.clone(),
            ));
        }
        for (n, b) in &cf.blob_files {
            blobs += 1;
            out.push((
                dir.join(format!("{n:06}.blob")),
                b.shared.checksum_value.clone(),
                String::from_utf8(b.shared.checksum_method.clone()).unwrap(),
            ));
        }
    }
    (out, blobs)
}

/// Flushes (with blob files), compacts and ingests into a database at `dir`.
fn fill(dir: &Path, o: &Options) {
    let mut o = o.clone();
    o.set_enable_blob_files(true);
    o.set_min_blob_size(100);
    let db = DB::open(&o, dir).unwrap();
    for round in 0..2u32 {
        for i in 0..200u32 {
            let v = if i % 3 == 0 { vec![b'b'; 300] } else { format!("v{round}-{i}").into_bytes() };
            db.put(format!("k{i:04}"), v).unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    // An external file, ingested by copy.
    let ext = dir.parent().unwrap().join("ext.sst");
    let writer_opts = Options::default();
    let mut w = SstFileWriter::create(&writer_opts);
    w.open(&ext).unwrap();
    for i in 0..50u32 {
        w.put(format!("z{i:04}"), b"external").unwrap();
    }
    w.finish().unwrap();
    db.ingest_external_file(vec![&ext]).unwrap();
    // One more flush, left at level 0.
    db.put(b"late", b"value").unwrap();
    db.flush().unwrap();
}

#[test]
fn file_checksum_gen_factory_records_each_files_crc32c_in_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    fill(&dir, &opts(true));
    let (files, blobs) = recorded(&dir);
    assert!(blobs >= 1, "blob files were written");
    assert!(files.len() >= blobs + 3, "a compaction output, an ingested table, a flushed table: {files:?}");
    for (path, checksum, func) in &files {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(func, "FileChecksumCrc32c", "{}", path.display());
        assert_eq!(checksum, &crc32c::crc32c(&bytes).to_be_bytes().to_vec(), "{}", path.display());
    }
    // The row is written to the OPTIONS file and the LOG, and read back from the OPTIONS file.
    assert!(util::latest_options_text(&dir)
        .contains("  file_checksum_gen_factory=FileChecksumGenCrc32cFactory\n"));
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(
        log.contains("Options.file_checksum_gen_factory: FileChecksumGenCrc32cFactory"),
        "the LOG shows it"
    );
    let (loaded, _) =
        Options::load_latest(&dir, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(8 << 20))
            .unwrap();
    let db = DB::open(&loaded, &dir).unwrap();
    db.put(b"after-load", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    let (files, _) = recorded(&dir);
    assert!(
        files.iter().all(|(_, _, func)| func == "FileChecksumCrc32c"),
        "the loaded options have the factory"
    );
}

#[test]
fn without_a_factory_tables_record_unknown_and_blob_files_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    fill(&dir, &opts(false));
    let (files, blobs) = recorded(&dir);
    assert!(blobs >= 1);
    for (path, checksum, func) in &files {
        assert!(checksum.is_empty(), "{}", path.display());
        let blob = path.extension().is_some_and(|e| e == "blob");
        assert_eq!(func, if blob { "" } else { "Unknown" }, "{}", path.display());
    }
    assert!(util::latest_options_text(&dir).contains("  file_checksum_gen_factory=nullptr\n"));
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    assert!(log.contains("Options.file_checksum_gen_factory: Unknown"), "RocksDB's LOG text for none");
    // A name RocksDB's registry does not hold is accepted as none, as RocksDB's default
    // `ignore_unsupported_options` has it.
    let o = Options::default().get_options_from_string("file_checksum_gen_factory=MyOwnFactory").unwrap();
    let mut o2 = o.clone();
    o2.create_if_missing(true);
    let d2 = tmp.path().join("db2");
    let db = DB::open(&o2, &d2).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    assert!(recorded(&d2).0.iter().all(|(_, c, f)| c.is_empty() && f == "Unknown"));
}

/// Flips one byte of what is written to table files once armed, so the file on disk is not
/// what its writer checksummed.
struct FlipTableBytes(Arc<AtomicBool>);

struct Flipping {
    inner: Box<dyn WritableFile>,
    armed: Arc<AtomicBool>,
    done: bool,
}

impl WritableFile for Flipping {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        if !self.done && self.armed.load(Ordering::SeqCst) && data.len() > 64 {
            self.done = true;
            let mut d = data.to_vec();
            d[10] ^= 0x5a;
            return self.inner.append(&d);
        }
        self.inner.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.inner.sync()
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl util::FsHooks for FlipTableBytes {
    fn writable(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        if path.extension().is_some_and(|e| e == "sst") {
            Box::new(Flipping { inner: file, armed: self.0.clone(), done: false })
        } else {
            file
        }
    }
}

/// Two flushed tables, then a compaction whose output's first data block is damaged on the
/// way to the disk. `flags`: the family's `verify_output_flags`.
fn compact_with_damaged_output(with_factory: bool, flags: u32) -> shale::Result<()> {
    let tmp = tempfile::tempdir().unwrap();
    let armed = Arc::new(AtomicBool::new(false));
    let fs = util::HookedFs::new(Arc::new(PosixFileSystem), FlipTableBytes(armed.clone()));
    let mut o = opts(with_factory).get_options_from_string(format!("verify_output_flags={flags}")).unwrap();
    o.set_file_system(fs as Arc<dyn FileSystem>);
    let db = DB::open(&o, tmp.path()).unwrap();
    for round in 0..2u32 {
        for i in 0..100u32 {
            db.put(format!("k{i:04}"), format!("value-{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    armed.store(true, Ordering::SeqCst);
    db.try_compact_range_cf(&db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>)
}

#[test]
fn verify_file_checksum_of_compaction_outputs_finds_bytes_not_written() {
    // kVerifyFileChecksum | kEnableForLocalCompaction: the output is read back whole and its
    // checksum compared: RocksDB's Corruption.
    let flags = (1 << 2) | (1 << 10);
    let e = compact_with_damaged_output(true, flags).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("File checksum mismatch for compaction output file"), "{e}");
    // Without a factory there is no checksum to compare (RocksDB's condition), nor without
    // the flag: the compaction installs its output unchecked.
    compact_with_damaged_output(false, flags).unwrap();
    compact_with_damaged_output(true, 0).unwrap();
}

/// Records each table file opened for reads: (file name, whether with O_DIRECT).
#[derive(Default)]
struct TableOpens(std::sync::Mutex<Vec<(String, bool)>>);

impl util::FsHooks for Arc<TableOpens> {
    fn random_access_with(
        &self,
        path: &Path,
        o: shale::fs::ReadFileOptions,
        file: Arc<dyn shale::fs::RandomAccessFile>,
    ) -> Arc<dyn shale::fs::RandomAccessFile> {
        if path.extension().is_some_and(|e| e == "sst") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            self.0.lock().unwrap().push((name, o.direct));
        }
        file
    }
    fn random_access(
        &self,
        path: &Path,
        file: Arc<dyn shale::fs::RandomAccessFile>,
    ) -> Arc<dyn shale::fs::RandomAccessFile> {
        if path.extension().is_some_and(|e| e == "sst") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            self.0.lock().unwrap().push((name, false));
        }
        file
    }
}

/// Two flushed tables read by the user, then compacted (with `use_direct_io_for_compaction_reads`
/// = `on`): the tables opened during the compaction (name, with O_DIRECT, still live after
/// it: its output), and the data reads back.
fn compaction_opens(on: bool, direct_reads: bool) -> Vec<(String, bool, bool)> {
    // The build directory: a disk file system (O_DIRECT), unlike a tmpfs /tmp may be.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let opens = Arc::new(TableOpens::default());
    let fs = util::HookedFs::new(Arc::new(PosixFileSystem), opens.clone());
    let mut o = Options::default()
        .get_options_from_string(format!("use_direct_io_for_compaction_reads={on}"))
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_use_direct_reads(direct_reads);
    o.set_file_system(fs as Arc<dyn FileSystem>);
    let db = DB::open(&o, tmp.path()).unwrap();
    for round in 0..2u32 {
        for i in 0..500u32 {
            db.put(format!("k{i:04}"), format!("value-{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    // User reads open the tables through the table cache (buffered unless use_direct_reads).
    assert_eq!(db.get(b"k0007").unwrap().unwrap(), b"value-1-7");
    let before = opens.0.lock().unwrap().len();
    db.try_compact_range_cf(&db.cf_handle("default").unwrap(), None::<&[u8]>, None::<&[u8]>).unwrap();
    let live = util::files_ending(tmp.path(), ".sst");
    let during: Vec<(String, bool, bool)> =
        opens.0.lock().unwrap()[before..].iter().map(|(n, d)| (n.clone(), *d, live.contains(n))).collect();
    for i in (0..500u32).step_by(13) {
        assert_eq!(db.get(format!("k{i:04}")).unwrap().unwrap(), format!("value-1-{i}").as_bytes());
    }
    assert!(util::latest_options_text(tmp.path())
        .contains(&format!("  use_direct_io_for_compaction_reads={on}\n")));
    let log = std::fs::read_to_string(tmp.path().join("LOG")).unwrap();
    assert!(log.contains(&format!("Options.use_direct_io_for_compaction_reads: {}", u8::from(on))));
    during
}

#[test]
fn use_direct_io_for_compaction_reads_reads_compaction_inputs_with_o_direct() {
    // On: both inputs are opened again for the compaction, with O_DIRECT (the output,
    // opened once written, is buffered as every other read).
    let on = compaction_opens(true, false);
    let mut direct: Vec<&String> = on.iter().filter(|(_, d, _)| *d).map(|(n, _, _)| n).collect();
    direct.dedup();
    assert_eq!(direct.len(), 2, "{on:?}");
    assert!(on.iter().filter(|(_, d, _)| *d).all(|(_, _, live)| !live), "only the inputs: {on:?}");
    assert!(on.iter().any(|(_, d, live)| !*d && *live), "the output opened buffered: {on:?}");
    // Off: the inputs are read through the table cache's readers, opened already.
    let off = compaction_opens(false, false);
    assert!(off.iter().all(|(_, d, _)| !*d), "{off:?}");
    assert!(off.iter().all(|(_, _, live)| *live), "no input opened again: {off:?}");
    assert!(off.len() < on.len(), "{off:?} / {on:?}");
    // With use_direct_reads it changes nothing: every table is opened direct by the file
    // system's table options (not per call), and no ephemeral reader is made.
    let both = compaction_opens(true, true);
    assert_eq!(both.len(), compaction_opens(false, true).len(), "{both:?}");
}

#[test]
fn use_direct_io_for_compaction_reads_with_mmap_reads_is_not_supported() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o =
        Options::default().get_options_from_string("use_direct_io_for_compaction_reads=true").unwrap();
    o.create_if_missing(true);
    o.set_allow_mmap_reads(true);
    let e = DB::open(&o, tmp.path()).map(|_| ()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(
        e.to_string().contains(
            "compaction-only direct I/O reads (use_direct_io_for_compaction_reads) must be disabled"
        ),
        "{e}"
    );
}

/// Writes about 3.5 MiB to two families' WALs (never flushed: 64 MiB write buffers), then
/// reopens with a 2 MiB write buffer manager, `avoid_flush_during_recovery` and
/// `enforce_write_buffer_manager_during_recovery` = `enforce`: the tables the open wrote.
fn tables_written_by_recovery(enforce: bool, with_manager: bool) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(64 << 20);
    {
        let db = DB::open_cf(&o, tmp.path(), ["a"]).unwrap();
        for i in 0..3000u32 {
            db.put(format!("k{i:05}"), vec![b'v'; 1000]).unwrap();
            db.put_cf(&db.cf_handle("a").unwrap(), format!("a{i:05}"), vec![b'w'; 100]).unwrap();
        }
    }
    assert!(util::files_ending(tmp.path(), ".sst").is_empty(), "all in the WAL");
    let mut o = Options::default()
        .get_options_from_string(format!("enforce_write_buffer_manager_during_recovery={enforce}"))
        .unwrap();
    o.set_write_buffer_size(64 << 20);
    // Memtables charge the manager by arena block (RocksDB's AllocTracker): small blocks.
    o.set_arena_block_size(64 << 10);
    o.set_avoid_flush_during_recovery(true);
    o.set_disable_auto_compactions(true);
    if with_manager {
        o.set_write_buffer_manager(&shale::WriteBufferManager::new_write_buffer_manager(2 << 20, false));
    }
    let descs = ["default", "a"].map(|n| shale::ColumnFamilyDescriptor::new(n, o.clone()));
    let db = DB::open_cf_descriptors(&o, tmp.path(), descs).unwrap();
    let tables = util::files_ending(tmp.path(), ".sst").len();
    assert_eq!(db.get(b"k02999").unwrap().unwrap(), vec![b'v'; 1000]);
    assert_eq!(db.get_cf(&db.cf_handle("a").unwrap(), b"a00000").unwrap().unwrap(), vec![b'w'; 100]);
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 3000);
    let text = util::latest_options_text(tmp.path());
    assert!(text.contains(&format!("  enforce_write_buffer_manager_during_recovery={enforce}\n")), "{text}");
    tables
}

#[test]
fn enforce_write_buffer_manager_during_recovery_flushes_when_the_manager_says_so() {
    // RocksDB's default (true): the manager's limit is passed several times during replay,
    // each time both families are flushed; the data left at the end is flushed too
    // (overriding avoid_flush_during_recovery).
    let on = tables_written_by_recovery(true, true);
    assert!((6..=40).contains(&on), "{on} tables");
    // Off: nothing fills a 64 MiB memtable, and avoid_flush_during_recovery keeps it all in
    // the memtables.
    assert_eq!(tables_written_by_recovery(false, true), 0);
    // On, without a manager (nor db_write_buffer_size): nothing asks for a flush.
    assert_eq!(tables_written_by_recovery(true, false), 0);
}
