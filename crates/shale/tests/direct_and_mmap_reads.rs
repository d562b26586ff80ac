//! `use_direct_reads` and `allow_mmap_reads`: table files are opened with O_DIRECT (seen in
//! the descriptor's flags in /proc/self/fdinfo) or mapped (seen in /proc/self/maps), reads
//! return the same data, and RocksDB's refusals hold: both options together (NotSupported),
//! direct reads on a file system without direct I/O (InvalidArgument).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::path::Path;
use std::sync::Arc;

use shale::{DBCompressionType, ErrorKind, Options, DB};

/// The open flags of this process's descriptors whose target ends with `.sst`.
fn sst_fd_flags() -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(e.path()) else { continue };
        let target = target.to_string_lossy().into_owned();
        if !target.ends_with(".sst") {
            continue;
        }
        let fd = e.file_name().to_string_lossy().into_owned();
        let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else { continue };
        let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).unwrap().trim().to_string();
        out.push((target, i32::from_str_radix(&flags, 8).unwrap()));
    }
    out
}

fn fill(db: &DB) {
    for i in 0..2000u64 {
        db.put(format!("key{i:06}"), util::value(i, 300)).unwrap();
    }
    db.flush().unwrap();
}

fn check(db: &DB) {
    for i in (0..2000u64).step_by(37) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap().unwrap(), util::value(i, 300));
    }
    assert_eq!(db.iterator(shale::IteratorMode::Start).count(), 2000);
}

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_compression_type(DBCompressionType::None);
    o
}

fn test_dir() -> tempfile::TempDir {
    // The build directory: a disk file system (O_DIRECT), unlike a tmpfs /tmp may be.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn direct_reads_open_tables_with_o_direct() {
    let dir = test_dir();
    let mut o = options();
    o.set_use_direct_reads(true);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        fill(&db);
        check(&db);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    check(&db);
    let mine: Vec<_> =
        sst_fd_flags().into_iter().filter(|(t, _)| Path::new(t).starts_with(dir.path())).collect();
    assert!(!mine.is_empty(), "no table open");
    for (t, flags) in &mine {
        assert_ne!(flags & libc::O_DIRECT, 0, "{t} opened without O_DIRECT: {flags:o}");
    }
    let text = std::fs::read_to_string(shale_latest_options(dir.path())).unwrap();
    assert!(text.contains("use_direct_reads=true"), "{text}");
}

#[test]
fn plain_reads_do_not_use_o_direct() {
    let dir = test_dir();
    let db = DB::open(&options(), dir.path()).unwrap();
    fill(&db);
    check(&db);
    let mine: Vec<_> =
        sst_fd_flags().into_iter().filter(|(t, _)| Path::new(t).starts_with(dir.path())).collect();
    assert!(!mine.is_empty(), "no table open");
    for (t, flags) in &mine {
        assert_eq!(flags & libc::O_DIRECT, 0, "{t}: {flags:o}");
    }
}

#[test]
fn mmap_reads_map_the_tables() {
    let dir = test_dir();
    let mut o = options();
    o.set_allow_mmap_reads(true);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db);
    check(&db);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let dir_s = dir.path().to_string_lossy().into_owned();
    assert!(maps.lines().any(|l| l.contains(&dir_s) && l.ends_with(".sst")), "no table of {dir_s} mapped");
}

/// The `VmFlags` of each mapping in /proc/self/smaps whose file is a table of `dir`.
fn sst_mapping_flags(dir: &Path) -> Vec<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let dir_s = dir.to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut in_table = false;
    for l in smaps.lines() {
        if let Some(flags) = l.strip_prefix("VmFlags:") {
            if in_table {
                out.push(flags.trim().to_string());
            }
        } else if l.split_whitespace().next().is_some_and(|a| a.contains('-') && !a.ends_with(':')) {
            // A mapping's first line: `start-end perms offset dev inode path`.
            in_table = l.contains(&dir_s) && l.ends_with(".sst");
        }
    }
    out
}

/// `advise_random_on_open` (default true) advises each mapped table `MADV_RANDOM`, as
/// RocksDB's `PosixMmapReadableFile::Hint(kRandom)`: the kernel marks the mapping `rr` in
/// smaps. Without it the mapping keeps the kernel's read-around.
#[test]
fn mmap_reads_advise_random_as_advise_random_on_open_says() {
    for advise in [true, false] {
        let dir = test_dir();
        let mut o = options();
        o.set_allow_mmap_reads(true);
        o.set_advise_random_on_open(advise);
        let db = DB::open(&o, dir.path()).unwrap();
        fill(&db);
        check(&db);
        let flags = sst_mapping_flags(dir.path());
        assert!(!flags.is_empty(), "no table mapped");
        for f in &flags {
            assert_eq!(f.split_whitespace().any(|x| x == "rr"), advise, "advise {advise}: VmFlags {f}");
        }
    }
}

#[test]
fn rocksdbs_refusals() {
    let dir = test_dir();
    let mut o = options();
    o.set_use_direct_reads(true);
    o.set_allow_mmap_reads(true);
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("If memory mapped reads (allow_mmap_reads) are enabled"), "{e}");

    // A file system without direct I/O: RocksDB's check at open.
    let mut o = options();
    o.set_file_system(Arc::new(shale::fs::MemFileSystem::new()));
    o.set_use_direct_reads(true);
    let e = DB::open(&o, "/db").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("Direct I/O is not supported by the specified DB."), "{e}");
}

fn shale_latest_options(dir: &Path) -> std::path::PathBuf {
    let mut v = util::files_ending(dir, "");
    v.retain(|n| n.starts_with("OPTIONS-"));
    dir.join(v.last().unwrap())
}
