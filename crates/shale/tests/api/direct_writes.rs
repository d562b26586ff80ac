//! `use_direct_io_for_flush_and_compaction`: the table and blob files flushes and compactions
//! write are opened with O_DIRECT (the open flags of the descriptor, read from
//! /proc/self/fdinfo as the file is created), WALs and the MANIFEST are not; every table
//! ends at its real size (the padded tail cut off); the data reads back before and after a
//! reopen; `allow_os_buffer(false)` does the same; RocksDB's refusals hold. RocksDB reading
//! such tables is `interop/direct_writes.rs`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use shale::fs::WritableFile;
use shale::{DBCompressionType, ErrorKind, Options, DB};

use crate::util::{self, FsHooks, HookedFs};

/// The open flags of each file created for writing, by file name.
#[derive(Default, Clone)]
pub struct OpenFlags(pub Arc<Mutex<Vec<(String, i32)>>>);

/// The flags of this process's descriptor open on `path` (the newest one).
pub fn fd_flags(path: &Path) -> Option<i32> {
    let mut found = None;
    for e in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        if std::fs::read_link(e.path()).ok().as_deref() == Some(path) {
            let fd = e.file_name().to_string_lossy().into_owned();
            let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else { continue };
            let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?.trim().to_string();
            found = i32::from_str_radix(&flags, 8).ok();
        }
    }
    found
}

impl FsHooks for OpenFlags {
    fn writable(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let flags = fd_flags(path).unwrap_or_else(|| panic!("no descriptor open on {}", path.display()));
        self.0.lock().unwrap().push((name, flags));
        file
    }
}

/// A directory on the disk the build is on: O_DIRECT needs a file system that has it.
pub fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn options(flags: &OpenFlags) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(256 << 10);
    o.set_target_file_size_base(300 << 10);
    o.set_file_system(HookedFs::new(shale::fs::default_fs(), flags.clone()));
    o
}

fn fill(db: &DB, model: &mut util::Model, round: u64) {
    for i in 0..3000u64 {
        let k = format!("key{:06}", (i * 7919 + round) % 5000).into_bytes();
        let v = util::value(i + round * 10_000, 100 + (i % 300) as usize);
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
}

fn tables(dir: &Path) -> Vec<PathBuf> {
    util::files_ending(dir, ".sst").into_iter().map(|n| dir.join(n)).collect()
}

/// The database's direct-written files: every .sst and .blob created had O_DIRECT, every
/// WAL and MANIFEST had not; each table's size on disk is the size the database recorded.
fn check_flags(flags: &OpenFlags, db: &DB, dir: &Path) {
    let got = flags.0.lock().unwrap().clone();
    let direct = |suffix: &'static str| -> Vec<(String, bool)> {
        got.iter()
            .filter(|(n, _)| n.ends_with(suffix))
            .map(|(n, f)| (n.clone(), f & libc::O_DIRECT != 0))
            .collect()
    };
    let sst = direct(".sst");
    assert!(sst.len() >= 3, "flushes and a compaction wrote tables: {got:?}");
    assert!(sst.iter().all(|(_, d)| *d), "a table without O_DIRECT: {sst:?}");
    let logs = direct(".log");
    assert!(!logs.is_empty() && logs.iter().all(|(_, d)| !d), "WALs: {logs:?}");
    let manifests: Vec<_> = got.iter().filter(|(n, _)| n.starts_with("MANIFEST-")).collect();
    assert!(!manifests.is_empty() && manifests.iter().all(|(_, f)| f & libc::O_DIRECT == 0), "{manifests:?}");
    for f in db.live_files().unwrap() {
        let path = dir.join(f.name.trim_start_matches('/'));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), f.size as u64, "{}", path.display());
    }
}

#[test]
fn flush_and_compaction_outputs_are_written_with_o_direct() {
    let tmp = disk_dir();
    let dir = tmp.path().join("db");
    let flags = OpenFlags::default();
    let mut o = options(&flags);
    o.set_use_direct_io_for_flush_and_compaction(true);
    // A small buffer: tables span many buffer fills and end mid-block.
    o.set_writable_file_max_buffer_size(12_000);
    let mut model = util::Model::new();
    {
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..3 {
            fill(&db, &mut model, round);
            db.flush().unwrap();
        }
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
        util::wait_for_background(&db);
        util::check_model(&db, &model, "after compaction");
        check_flags(&flags, &db, &dir);
        assert!(
            tables(&dir).iter().any(|t| std::fs::metadata(t).unwrap().len() % 4096 != 0),
            "some table ends mid-block"
        );
    }
    let text = std::fs::read_to_string(shale_latest_options(&dir)).unwrap();
    assert!(text.contains("use_direct_io_for_flush_and_compaction=true"), "{text}");
    let db = DB::open(&o, &dir).unwrap();
    util::check_model(&db, &model, "after reopen");
}

#[test]
fn blob_files_and_allow_os_buffer_false() {
    let tmp = disk_dir();
    let dir = tmp.path().join("db");
    let flags = OpenFlags::default();
    let mut o = options(&flags);
    o.set_allow_os_buffer(false); // direct reads and direct writes, as rust-rocksdb's
    o.set_enable_blob_files(true);
    o.set_min_blob_size(200);
    let mut model = util::Model::new();
    {
        let db = DB::open(&o, &dir).unwrap();
        for round in 0..2 {
            fill(&db, &mut model, round);
            db.flush().unwrap();
        }
        util::check_model(&db, &model, "blob files");
        let got = flags.0.lock().unwrap().clone();
        let blobs: Vec<_> = got.iter().filter(|(n, _)| n.ends_with(".blob")).collect();
        assert!(!blobs.is_empty(), "{got:?}");
        assert!(blobs.iter().all(|(_, f)| f & libc::O_DIRECT != 0), "{blobs:?}");
    }
    let db = DB::open(&o, &dir).unwrap();
    util::check_model(&db, &model, "blob files after reopen");
}

#[test]
fn plain_writes_do_not_use_o_direct() {
    let tmp = disk_dir();
    let dir = tmp.path().join("db");
    let flags = OpenFlags::default();
    let db = DB::open(&options(&flags), &dir).unwrap();
    let mut model = util::Model::new();
    fill(&db, &mut model, 0);
    db.flush().unwrap();
    let got = flags.0.lock().unwrap().clone();
    let sst: Vec<_> = got.iter().filter(|(n, _)| n.ends_with(".sst")).collect();
    assert!(!sst.is_empty() && sst.iter().all(|(_, f)| f & libc::O_DIRECT == 0), "{sst:?}");
}

#[test]
fn rocksdbs_refusals_of_direct_writes() {
    let tmp = disk_dir();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_use_direct_io_for_flush_and_compaction(true);
    o.set_writable_file_max_buffer_size(0);
    let e = DB::open(&o, tmp.path().join("a")).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("writes in direct IO require writable_file_max_buffer_size > 0"), "{e}");

    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_use_direct_io_for_flush_and_compaction(true);
    o.set_allow_mmap_writes(true);
    let e = DB::open(&o, tmp.path().join("b")).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("allow_mmap_writes"), "{e}");

    // A file system without direct I/O: RocksDB's check at open (CURRENT opened direct).
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_file_system(Arc::new(shale::fs::MemFileSystem::new()));
    o.set_use_direct_io_for_flush_and_compaction(true);
    let e = DB::open(&o, "/db").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Direct I/O is not supported by the specified DB."), "{e}");
}

fn shale_latest_options(dir: &Path) -> PathBuf {
    let mut v = util::files_ending(dir, "");
    v.retain(|n| n.starts_with("OPTIONS-"));
    dir.join(v.last().unwrap())
}
