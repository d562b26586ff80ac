//! The corruption matrix: every kind of file a database holds (WAL; SST data blocks, index
//! block, filter block, properties block and footer; MANIFEST; CURRENT; OPTIONS) damaged
//! four ways (bits flipped, truncated, a 4 KiB page zeroed, deleted), on a Shale database
//! on the real file system. The expected outcome of each cell is RocksDB 7.8.3's:
//!
//! - SST: tables are opened at DB::Open (max_open_files = -1, paranoid_checks), so damage
//!   to the footer, index, filter or properties, a cut file and a missing file all fail
//!   the open with Corruption naming the file; a damaged data block is found only by the
//!   reads that touch it (Corruption naming the file), every other read stays right
//!   (forward and backward scans stop at the damage instead of showing older versions). A
//!   flip in the footer's zero padding changes nothing, nor does checksum type 4 (XXH3,
//!   the default) -> 0 (kNoChecksum: blocks are then read unchecked). One deliberate difference: a flipped
//!   format_version is NotSupported in Shale, Corruption in RocksDB 7.8.3.
//! - MANIFEST: any damage is Corruption naming the MANIFEST (a cut record is a dropped
//!   tail, which leaves the snapshot without its last record); a missing MANIFEST is the
//!   file system's "No such file" IO error.
//! - CURRENT: Corruption when it does not end in a newline or names no MANIFEST; when a
//!   flip turns it into the name of another (missing) MANIFEST, that IO error; a missing
//!   CURRENT is InvalidArgument "does not exist (create_if_missing is false)".
//! - OPTIONS: DB::Open never reads it, so nothing changes.
//! - WAL, per `DBRecoveryMode`: AbsoluteConsistency refuses any damage; PointInTime keeps
//!   exactly the records before the first damaged one; TolerateCorruptedTailRecords keeps
//!   the records before a cut tail and refuses any other damage; SkipAnyCorruptedRecords
//!   drops the damaged records and keeps the rest. A missing WAL loses its writes silently
//!   in every mode (the MANIFEST does not track WALs by default).
//!
//! After a successful open every key of the model is read with `get` and `multi_get`,
//! absent keys with `get`, and the whole database is scanned forwards and backwards: each
//! answer must be the model's or a Corruption error — never a wrong value, a key the model
//! lacks, or a panic. Each cell runs under `catch_unwind`; the whole matrix is printed
//! (`--nocapture`) and every failing cell is listed before the test fails.
//! `interop_corruption.rs` covers the same damage on files RocksDB wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::table::block::Block;
use shale::table::filter::BLOOM_POLICY_NAME;
use shale::table::format::{Footer, FOOTER_LEN};
use shale::table::properties::{FULL_FILTER_PREFIX, PROPERTIES_BLOCK};
use shale::{BlockBasedOptions, DBRecoveryMode, ErrorKind, IteratorMode, Options, DB};
use util::{files_ending, value};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

const PAGE: u64 = 4096;
const WAL_BLOCK: usize = 32 * 1024;
const WAL_RECORDS: usize = 300;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn options() -> Options {
    options_fv(5)
}

/// The fixture's options, writing tables of format_version `fv`.
fn options_fv(fv: i32) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let mut t = BlockBasedOptions::default();
    t.set_format_version(fv);
    t.set_block_size(256);
    t.set_bloom_filter(10.0, false);
    o.set_block_based_table_factory(&t);
    o
}

/// Options for opening a damaged copy: never create a database over it.
fn reopen_options(mode: DBRecoveryMode) -> Options {
    let mut o = options();
    o.create_if_missing(false);
    o.set_wal_recovery_mode(mode);
    o
}

/// The undamaged database and what it holds.
struct Fixture {
    _tmp: tempfile::TempDir,
    src: PathBuf,
    /// The state in the two tables.
    base: Map,
    /// One write per WAL record, each to a key no other record writes (None: a delete).
    wal: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// `base` with every WAL record applied.
    full: Map,
    /// The newer table (its keys overwrite and delete keys of the older one).
    sst: String,
    wal_file: String,
    manifest: String,
    options_file: String,
}

/// Two flushed tables (the second overwrites and deletes keys of the first), then a reopen
/// (so the MANIFEST is one snapshot) and 300 single-key writes left in the WAL.
fn build() -> Fixture {
    build_fv(5)
}

/// [`build`] with tables of format_version `fv`.
fn build_fv(fv: i32) -> Fixture {
    let options = || options_fv(fv);
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let mut base = Map::new();
    {
        let db = DB::open(&options(), &src).unwrap();
        for i in 0..400 {
            let v = value(i as u64 * 10 + 1, 40);
            db.put(key(i), &v).unwrap();
            base.insert(key(i), v);
        }
        db.flush().unwrap();
        for i in 200..600 {
            let v = value(i as u64 * 10 + 2, 40);
            db.put(key(i), &v).unwrap();
            base.insert(key(i), v);
        }
        for i in 0..50 {
            db.delete(key(i)).unwrap();
            base.remove(&key(i));
        }
        db.flush().unwrap();
    }
    let mut wal = Vec::new();
    {
        let db = DB::open(&options(), &src).unwrap();
        for i in 0..WAL_RECORDS {
            let (k, v) = match i % 3 {
                0 => (key(200 + i), Some(value(i as u64 * 10 + 3, 150))),
                1 => (key(200 + i), None),
                _ => (key(1000 + i), Some(value(i as u64 * 10 + 3, 150))),
            };
            match &v {
                Some(v) => db.put(&k, v).unwrap(),
                None => db.delete(&k).unwrap(),
            }
            wal.push((k, v));
        }
    }
    let mut full = base.clone();
    for (k, v) in &wal {
        match v {
            Some(v) => full.insert(k.clone(), v.clone()),
            None => full.remove(k),
        };
    }
    let ssts = files_ending(&src, ".sst");
    assert_eq!(ssts.len(), 2, "{ssts:?}");
    let wals: Vec<String> =
        files_ending(&src, ".log").into_iter().filter(|n| file_len(&src.join(n)) > 0).collect();
    assert_eq!(wals.len(), 1, "{wals:?}");
    let manifests: Vec<String> =
        files_ending(&src, "").into_iter().filter(|n| n.starts_with("MANIFEST-")).collect();
    assert_eq!(manifests.len(), 1, "{manifests:?}");
    let options_files: Vec<String> =
        files_ending(&src, "").into_iter().filter(|n| n.starts_with("OPTIONS-")).collect();
    assert!(!options_files.is_empty());
    let f = Fixture {
        src: src.clone(),
        base,
        wal,
        full,
        sst: ssts[1].clone(),
        wal_file: wals[0].clone(),
        manifest: manifests[0].clone(),
        options_file: options_files.last().unwrap().clone(),
        _tmp: tmp,
    };
    let records = wal_records(&std::fs::read(src.join(&f.wal_file)).unwrap());
    assert_eq!(records.len(), WAL_RECORDS, "one WAL record per write");
    assert!(records.last().unwrap().1 > WAL_BLOCK, "the WAL spans two blocks");
    f
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

// ---- damage ----

#[derive(Clone, Copy, Debug)]
enum Damage {
    /// XOR one byte at the offset with the mask.
    Flip(u64, u8),
    /// Cut the file to this length.
    Truncate(u64),
    /// Zero the 4 KiB-aligned page holding this offset (the part inside the file).
    ZeroPage(u64),
    Delete,
}

impl Damage {
    fn apply(self, file: &Path) {
        match self {
            Damage::Flip(off, mask) => {
                let mut b = std::fs::read(file).unwrap();
                b[off as usize] ^= mask;
                std::fs::write(file, b).unwrap();
            }
            Damage::Truncate(len) => {
                let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
                f.set_len(len).unwrap();
            }
            Damage::ZeroPage(off) => {
                let mut b = std::fs::read(file).unwrap();
                let start = (off / PAGE * PAGE) as usize;
                let end = (start + PAGE as usize).min(b.len());
                b[start..end].fill(0);
                std::fs::write(file, b).unwrap();
            }
            Damage::Delete => std::fs::remove_file(file).unwrap(),
        }
    }

    fn label(self) -> String {
        match self {
            Damage::Flip(off, mask) => format!("flip {mask:#04x} at {off}"),
            Damage::Truncate(len) => format!("truncate to {len}"),
            Damage::ZeroPage(off) => format!("zero page {}", off / PAGE * PAGE),
            Damage::Delete => "delete".to_string(),
        }
    }

    /// The byte range the damage touches in a file of `len` bytes.
    fn range(self, len: u64) -> (u64, u64) {
        match self {
            Damage::Flip(off, _) => (off, off + 1),
            Damage::Truncate(to) => (to, len),
            Damage::ZeroPage(off) => (off / PAGE * PAGE, (off / PAGE * PAGE + PAGE).min(len)),
            Damage::Delete => (0, len),
        }
    }
}

// ---- the matrix ----

struct Row {
    kind: &'static str,
    damage: String,
    observed: String,
    failure: Option<String>,
}

#[derive(Default)]
struct Matrix {
    rows: Vec<Row>,
}

impl Matrix {
    /// Runs one cell: `f` returns what it observed, or panics on a violation.
    fn cell(&mut self, kind: &'static str, damage: String, f: impl FnOnce() -> String) {
        let r = catch_unwind(AssertUnwindSafe(f));
        let (observed, failure) = match r {
            Ok(o) => (o, None),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".to_string());
                ("FAILED".to_string(), Some(msg))
            }
        };
        self.rows.push(Row { kind, damage, observed, failure });
    }

    fn finish(self, name: &str) {
        eprintln!("\n== {name}: {} cells ==", self.rows.len());
        for r in &self.rows {
            eprintln!("{:<12} | {:<34} | {}", r.kind, r.damage, r.observed);
        }
        let failed: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| r.failure.as_ref().map(|f| format!("{} / {}: {f}", r.kind, r.damage)))
            .collect();
        assert!(failed.is_empty(), "{} cells failed:\n{}", failed.len(), failed.join("\n"));
    }
}

/// What a cell must show.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// DB::Open fails with this kind, naming the file (the given text).
    OpenFails(ErrorKind),
    /// Opens; at least one read reports Corruption naming the file; all else is right.
    ReadsDetect,
    /// Opens and every answer is right.
    Intact,
}

/// Copies the fixture, damages `file` and checks the outcome against the full model.
fn run_cell(fx: &Fixture, work: &Path, file: &str, damage: Damage, expect: Expect, names: &str) -> String {
    copy_dir(&fx.src, work);
    damage.apply(&work.join(file));
    let opened = DB::open(&reopen_options(DBRecoveryMode::PointInTime), work);
    match (expect, opened) {
        (Expect::OpenFails(kind), Err(e)) => {
            assert_eq!(e.kind(), kind, "open error kind: {e}");
            assert!(e.to_string().contains(names), "the message names {names}: {e}");
            format!("open: {e}")
        }
        (Expect::OpenFails(kind), Ok(db)) => {
            let errors = check_reads(&db, &fx.full, names);
            panic!("expected open to fail with {kind:?}; it opened ({errors} reads reported Corruption)")
        }
        (_, Err(e)) => panic!("expected open to succeed: {e}"),
        (Expect::ReadsDetect, Ok(db)) => {
            let errors = check_reads(&db, &fx.full, names);
            assert!(errors > 0, "no read found the damage");
            format!("opens; {errors} reads report Corruption, the rest right")
        }
        (Expect::Intact, Ok(db)) => {
            let errors = check_reads(&db, &fx.full, names);
            assert_eq!(errors, 0, "reads failed on an intact database");
            "opens; every read right".to_string()
        }
    }
}

/// Reads everything; panics on a wrong answer or a non-Corruption error. Returns the number
/// of reads that reported Corruption (each must name `names`).
fn check_reads(db: &DB, model: &Map, names: &str) -> usize {
    let mut errors = 0;
    let mut bad = |e: shale::Error, what: &str| {
        assert_eq!(e.kind(), ErrorKind::Corruption, "{what}: {e}");
        assert!(e.to_string().contains(names), "{what}: the message names {names}: {e}");
        errors += 1;
    };
    for (k, v) in model {
        match db.get(k) {
            Ok(got) => assert_eq!(got.as_deref(), Some(v.as_slice()), "get {}", show(k)),
            Err(e) => bad(e, "get"),
        }
    }
    // Keys the model lacks: deleted ones, overwritten-then-deleted ones and never-written ones.
    for i in (0..2000).step_by(7) {
        let k = key(i);
        if model.contains_key(&k) {
            continue;
        }
        match db.get(&k) {
            Ok(got) => assert_eq!(got, None, "get of absent {}", show(&k)),
            Err(e) => bad(e, "get absent"),
        }
    }
    let keys: Vec<&Vec<u8>> = model.keys().collect();
    for (k, r) in keys.iter().zip(db.multi_get(keys.iter())) {
        match r {
            Ok(got) => {
                assert_eq!(got.as_deref(), model.get(*k).map(|v| v.as_slice()), "multi_get {}", show(k))
            }
            Err(e) => bad(e, "multi_get"),
        }
    }
    for mode in [IteratorMode::Start, IteratorMode::End] {
        let forward = matches!(mode, IteratorMode::Start);
        let mut seen = 0;
        let mut last: Option<Vec<u8>> = None;
        let mut failed = false;
        for r in db.iterator(mode) {
            match r {
                Ok((k, v)) => {
                    assert_eq!(model.get(&*k).map(|v| v.as_slice()), Some(&*v), "scan pair {}", show(&k));
                    if let Some(l) = &last {
                        assert_eq!(l.as_slice() < &*k, forward, "scan order at {}", show(&k));
                    }
                    last = Some(k.to_vec());
                    seen += 1;
                }
                Err(e) => {
                    bad(e, "scan");
                    failed = true;
                    break;
                }
            }
        }
        if !failed {
            assert_eq!(seen, model.len(), "a clean scan returns every pair");
        }
    }
    errors
}

fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

// ---- SST layout ----

/// Byte ranges [start, end) of a table's parts (blocks with their 5-byte trailers).
struct SstLayout {
    len: u64,
    data: (u64, u64),
    index: (u64, u64),
    filter: (u64, u64),
    properties: (u64, u64),
    footer: (u64, u64),
    /// The footer's zero padding after the two handles.
    padding: (u64, u64),
}

fn sst_layout(path: &Path) -> SstLayout {
    let b = std::fs::read(path).unwrap();
    let len = b.len() as u64;
    let mut footer = Footer::decode(&b[b.len() - FOOTER_LEN..], len - FOOTER_LEN as u64, "layout").unwrap();
    assert!(footer.format_version >= 1);
    let span = |h: shale::table::BlockHandle| (h.offset, h.offset + h.size + 5);
    let mh = footer.metaindex_handle;
    let meta = Arc::new(Block::new(b[mh.offset as usize..(mh.offset + mh.size) as usize].to_vec()).unwrap());
    let mut handles = BTreeMap::new();
    for (k, v) in meta.entries().unwrap() {
        handles.insert(String::from_utf8(k).unwrap(), shale::table::BlockHandle::decode(&v).unwrap());
    }
    if footer.format_version >= 6 {
        footer.index_handle = handles["rocksdb.index"];
    }
    let filter = span(handles[&format!("{FULL_FILTER_PREFIX}{BLOOM_POLICY_NAME}")]);
    let properties = span(handles[PROPERTIES_BLOCK]);
    let index = span(footer.index_handle);
    let data_end =
        handles.values().map(|h| h.offset).chain([footer.index_handle.offset, mh.offset]).min().unwrap();
    let footer_start = len - FOOTER_LEN as u64;
    // format_version >= 6 footers have no unchecked padding (their checksum covers it all).
    let handles_end = if footer.format_version >= 6 {
        len - 12
    } else {
        footer_start + 1 + (mh.encoded().len() + footer.index_handle.encoded().len()) as u64
    };
    SstLayout {
        len,
        data: (0, data_end),
        index,
        filter,
        properties,
        footer: (footer_start, len),
        padding: (handles_end, len - 12),
    }
}

/// Flips at the start, a quarter, the middle and the end of `r`, in varied bits.
fn flips_in(r: (u64, u64)) -> Vec<Damage> {
    let n = r.1 - r.0;
    vec![
        Damage::Flip(r.0, 0x01),
        Damage::Flip(r.0 + n / 4, 0x10),
        Damage::Flip(r.0 + n / 2, 0x80),
        Damage::Flip(r.1 - 1, 0x04),
    ]
}

#[test]
fn sst_matrix() {
    let fx = build();
    let work = fx._tmp.path().join("work");
    let sst_path = fx.src.join(&fx.sst);
    let l = sst_layout(&sst_path);
    assert!(l.data.1 >= 2 * PAGE, "the data blocks fill two pages ({} bytes)", l.data.1);
    let name = fx.sst.as_str();
    let corrupt = Expect::OpenFails(ErrorKind::Corruption);
    let mut m = Matrix::default();
    let parts = [
        ("sst data", l.data),
        ("sst index", l.index),
        ("sst filter", l.filter),
        ("sst props", l.properties),
        ("sst footer", l.footer),
    ];
    for (kind, r) in parts {
        let mut cells: Vec<(Damage, Expect)> = Vec::new();
        for d in flips_in(r) {
            let e = match (kind, d) {
                ("sst data", _) => Expect::ReadsDetect,
                ("sst footer", Damage::Flip(off, 0x04)) if off == l.footer.0 => Expect::Intact,
                // The footer's zero padding (between the index handle and format_version) is
                // ignored by RocksDB.
                ("sst footer", Damage::Flip(off, _)) if (l.padding.0..l.padding.1).contains(&off) => {
                    Expect::Intact
                }
                _ => corrupt,
            };
            cells.push((d, e));
        }
        if kind == "sst footer" {
            // The padding's last byte, the handles, the format_version and the magic number.
            cells.push((Damage::Flip(l.padding.1 - 1, 0x02), Expect::Intact));
            // Checksum type 4 (XXH3) -> 5 (unknown) is Corruption; -> 0 (kNoChecksum) is a
            // valid footer whose blocks are then read unchecked (they are intact).
            cells.push((Damage::Flip(l.footer.0, 0x01), corrupt));
            cells.push((Damage::Flip(l.footer.0, 0x04), Expect::Intact));
            cells.push((Damage::Flip(l.footer.0 + 2, 0x01), corrupt));
            cells.push((Damage::Flip(l.padding.0 - 1, 0x01), corrupt));
            // RocksDB 7.8.3 says "Corruption: Corrupt or unsupported format_version: 13";
            // Shale refuses a format_version it does not know as NotSupported on purpose
            // (docs/compatibility.md: format_version 6 tables from RocksDB >= 8.6).
            cells.push((Damage::Flip(l.len - 12, 0x08), Expect::OpenFails(ErrorKind::NotSupported)));
            cells.push((Damage::Flip(l.len - 3, 0x20), corrupt));
        }
        let mid = (r.0 + r.1) / 2;
        cells.push((Damage::Truncate(mid), corrupt));
        cells.push((Damage::Truncate(r.0), corrupt));
        let page = if kind == "sst data" { r.0 } else { mid };
        cells.push((Damage::ZeroPage(page), if kind == "sst data" { Expect::ReadsDetect } else { corrupt }));
        for (d, e) in cells {
            m.cell(kind, d.label(), || run_cell(&fx, &work, name, d, e, name));
        }
    }
    // Several flips at once in the data blocks, and the missing table.
    m.cell("sst data", "3 flips".to_string(), || {
        copy_dir(&fx.src, &work);
        for off in [l.data.1 / 5, l.data.1 / 2, l.data.1 * 4 / 5] {
            Damage::Flip(off, 0x40).apply(&work.join(name));
        }
        let db = DB::open(&reopen_options(DBRecoveryMode::PointInTime), &work).unwrap();
        let errors = check_reads(&db, &fx.full, name);
        assert!(errors > 0);
        format!("opens; {errors} reads report Corruption, the rest right")
    });
    m.cell("sst", Damage::Delete.label(), || run_cell(&fx, &work, name, Damage::Delete, corrupt, name));
    assert!(l.footer.0 > l.properties.1 && l.index.1 <= l.len);
    m.finish("SST");
}

/// Tables of format_version 6 and 7: every block's checksum depends on its file (the footer's
/// base context checksum) and its offset, and the footer has its own checksum. The same
/// damage as `sst_matrix` is found, any flip in the footer is (except checksum type
/// XXH3 -> none, which leaves the blocks unchecked), and a data block taken from another
/// table with the very same bytes at the very same offset fails its checksum, as does the
/// table moved to another offset in its file.
#[test]
fn sst_matrix_format_6_and_7() {
    for fv in [6, 7] {
        let fx = build_fv(fv);
        // A twin: the same writes into another database, so the same table bytes apart from
        // the base context checksum (and the ids and times in the properties).
        let twin = build_fv(fv);
        let work = fx._tmp.path().join("work");
        let sst_path = fx.src.join(&fx.sst);
        let l = sst_layout(&sst_path);
        let name = fx.sst.as_str();
        let corrupt = Expect::OpenFails(ErrorKind::Corruption);
        let mut m = Matrix::default();
        let parts = [
            ("sst data", l.data),
            ("sst index", l.index),
            ("sst filter", l.filter),
            ("sst props", l.properties),
            ("sst footer", l.footer),
        ];
        for (kind, r) in parts {
            let mut cells: Vec<(Damage, Expect)> = Vec::new();
            for d in flips_in(r) {
                let e = match (kind, d) {
                    ("sst data", _) => Expect::ReadsDetect,
                    // Checksum type 4 (XXH3) -> 0: no checksums are checked at all.
                    ("sst footer", Damage::Flip(off, 0x04)) if off == l.footer.0 => Expect::Intact,
                    _ => corrupt,
                };
                cells.push((d, e));
            }
            if kind == "sst footer" {
                // Every other byte of the footer is under its checksum: the extended magic,
                // the checksum, the base context, the metaindex size, the reserved bytes.
                for off in [
                    l.footer.0 + 1,
                    l.footer.0 + 6,
                    l.footer.0 + 10,
                    l.footer.0 + 14,
                    l.footer.0 + 20,
                    l.footer.0 + 36,
                ] {
                    cells.push((Damage::Flip(off, 0x02), corrupt));
                }
                // Checksum type 4 -> 0: unchecked, intact; 4 -> 5: unknown.
                cells.push((Damage::Flip(l.footer.0, 0x04), Expect::Intact));
                cells.push((Damage::Flip(l.footer.0, 0x01), corrupt));
                // 6 <-> 7 keeps a known version: the footer checksum catches it.
                cells.push((Damage::Flip(l.len - 12, 0x01), corrupt));
                cells.push((Damage::Flip(l.len - 12, 0x08), Expect::OpenFails(ErrorKind::NotSupported)));
            }
            let mid = (r.0 + r.1) / 2;
            cells.push((Damage::Truncate(mid), corrupt));
            let page = if kind == "sst data" { r.0 } else { mid };
            cells.push((
                Damage::ZeroPage(page),
                if kind == "sst data" { Expect::ReadsDetect } else { corrupt },
            ));
            for (d, e) in cells {
                m.cell(kind, format!("v{fv} {}", d.label()), || run_cell(&fx, &work, name, d, e, name));
            }
        }
        m.cell("sst data", format!("v{fv} twin's identical blocks"), || {
            let ours = std::fs::read(&sst_path).unwrap();
            let theirs = std::fs::read(twin.src.join(&twin.sst)).unwrap();
            let lt = sst_layout(&twin.src.join(&twin.sst));
            assert_eq!(lt.data, l.data, "the twin's data blocks sit at the same offsets");
            let (a, b) = (l.data.0 as usize, l.data.1 as usize);
            // Block contents are equal; only the trailers' checksums differ.
            assert_ne!(ours[a..b], theirs[a..b], "context checksums make the trailers differ");
            copy_dir(&fx.src, &work);
            let mut spliced = ours.clone();
            spliced[a..b].copy_from_slice(&theirs[a..b]);
            std::fs::write(work.join(name), spliced).unwrap();
            let db = DB::open(&reopen_options(DBRecoveryMode::PointInTime), &work).unwrap();
            let errors = check_reads(&db, &fx.full, name);
            assert!(errors > 0, "the twin's blocks passed their checksums");
            format!("opens; {errors} reads report Corruption, the rest right")
        });
        m.cell("sst", format!("v{fv} moved 4 KiB down its file"), || {
            copy_dir(&fx.src, &work);
            let mut moved = vec![0u8; PAGE as usize];
            moved.extend_from_slice(&std::fs::read(&sst_path).unwrap());
            // The MANIFEST's size of the file no longer matters to the footer: it is read at
            // the file's end, where its checksum no longer fits its offset.
            std::fs::write(work.join(name), moved).unwrap();
            match DB::open(&reopen_options(DBRecoveryMode::PointInTime), &work) {
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
                    format!("open: {e}")
                }
                Ok(_) => panic!("a table moved to another offset opened"),
            }
        });
        m.finish(&format!("SST format_version {fv}"));
    }
}

#[test]
fn manifest_current_options_matrix() {
    let fx = build();
    let work = fx._tmp.path().join("work");
    let mut m = Matrix::default();
    let corrupt = Expect::OpenFails(ErrorKind::Corruption);

    // MANIFEST: one snapshot of three records; any damage leaves it without a complete one.
    let man = fx.manifest.as_str();
    let len = file_len(&fx.src.join(man));
    let mut cells: Vec<Damage> = flips_in((0, len));
    // The first record's checksum, length and type bytes.
    cells.extend([Damage::Flip(2, 0x01), Damage::Flip(4, 0x01), Damage::Flip(6, 0x80)]);
    cells.extend([
        Damage::Truncate(0),
        Damage::Truncate(5),
        Damage::Truncate(len / 2),
        Damage::Truncate(len - 1),
    ]);
    cells.push(Damage::ZeroPage(0));
    for d in cells {
        m.cell("MANIFEST", d.label(), || run_cell(&fx, &work, man, d, corrupt, "MANIFEST-"));
    }
    m.cell("MANIFEST", "delete".into(), || {
        let expect = Expect::OpenFails(ErrorKind::IOError);
        let out = run_cell(&fx, &work, man, Damage::Delete, expect, man);
        assert!(out.contains("No such file"), "{out}");
        out
    });

    // CURRENT: "MANIFEST-NNNNNN\n".
    let current = std::fs::read(fx.src.join("CURRENT")).unwrap();
    let clen = current.len() as u64;
    let mut cells: Vec<Damage> = (0..clen).map(|i| Damage::Flip(i, 1 << (i % 8))).collect();
    cells.push(Damage::Flip(clen - 3, 0x01)); // a digit into another digit
    cells.extend([Damage::Truncate(0), Damage::Truncate(clen / 2), Damage::Truncate(clen - 1)]);
    cells.push(Damage::ZeroPage(0));
    for d in cells {
        let (expect, names) = current_oracle(&current, d, &fx);
        m.cell("CURRENT", d.label(), || run_cell(&fx, &work, "CURRENT", d, expect, &names));
    }
    m.cell("CURRENT", "delete".into(), || {
        let e = Expect::OpenFails(ErrorKind::InvalidArgument);
        let out = run_cell(&fx, &work, "CURRENT", Damage::Delete, e, "CURRENT");
        assert!(out.contains("does not exist (create_if_missing is false)"), "{out}");
        out
    });

    // OPTIONS: DB::Open does not read it.
    let opt = fx.options_file.as_str();
    let olen = file_len(&fx.src.join(opt));
    let mut cells = flips_in((0, olen));
    cells.extend([Damage::Truncate(0), Damage::Truncate(olen / 2), Damage::ZeroPage(0), Damage::Delete]);
    for d in cells {
        m.cell("OPTIONS", d.label(), || run_cell(&fx, &work, opt, d, Expect::Intact, opt));
    }
    m.finish("MANIFEST, CURRENT, OPTIONS");
}

/// RocksDB's reading of a damaged CURRENT: it must end in a newline and name a MANIFEST
/// (`MANIFEST-<decimal>`); a name that parses but is not the MANIFEST there is the file
/// system's error opening it.
fn current_oracle(current: &[u8], d: Damage, fx: &Fixture) -> (Expect, String) {
    let mut b = current.to_vec();
    match d {
        Damage::Flip(off, mask) => b[off as usize] ^= mask,
        Damage::Truncate(len) => b.truncate(len as usize),
        Damage::ZeroPage(_) => b.fill(0),
        Damage::Delete => unreachable!(),
    }
    let Some(body) = b.strip_suffix(b"\n") else {
        return (Expect::OpenFails(ErrorKind::Corruption), "CURRENT".into());
    };
    let name = String::from_utf8_lossy(body).into_owned();
    let parses = name
        .strip_prefix("MANIFEST-")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) && d.parse::<u64>().is_ok());
    if !parses {
        (Expect::OpenFails(ErrorKind::Corruption), "CURRENT".into())
    } else if name == fx.manifest {
        (Expect::Intact, name)
    } else {
        (Expect::OpenFails(ErrorKind::IOError), name)
    }
}

// ---- WAL ----

/// Logical records of a log file: (offset of the first fragment's header, end of the last
/// fragment).
fn wal_records(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut first = None;
    while pos + 7 <= b.len() {
        let left = WAL_BLOCK - pos % WAL_BLOCK;
        if left < 7 {
            pos += left;
            continue;
        }
        let len = u16::from_le_bytes([b[pos + 4], b[pos + 5]]) as usize;
        let end = pos + 7 + len;
        match b[pos + 6] {
            1 => out.push((pos, end)),
            2 => first = Some(pos),
            3 => {}
            4 => out.push((first.take().expect("LAST without FIRST"), end)),
            t => panic!("record type {t} at {pos}"),
        }
        pos = end;
    }
    out
}

/// Which WAL records a recovered database holds (each record writes its own key). Panics
/// on a value that is neither the table's nor the record's, or on any other wrong key.
fn applied_records(db: &DB, fx: &Fixture) -> Vec<bool> {
    let mut state = Map::new();
    for r in db.iterator(IteratorMode::Start) {
        let (k, v) = r.expect("the tables are intact: a clean scan");
        state.insert(k.to_vec(), v.to_vec());
    }
    let mut applied = Vec::new();
    for (k, v) in &fx.wal {
        let now = state.get(k);
        let was = fx.base.get(k);
        assert_ne!(was, v.as_ref(), "the fixture changes every key it writes");
        if now == v.as_ref() {
            applied.push(true);
        } else if now == was {
            applied.push(false);
        } else {
            panic!("{}: a value neither the table's nor the WAL's", show(k));
        }
        assert_eq!(db.get(k).unwrap().as_ref(), now, "get agrees with the scan for {}", show(k));
    }
    // Everything the WAL does not touch is the tables'.
    let touched: std::collections::BTreeSet<&Vec<u8>> = fx.wal.iter().map(|(k, _)| k).collect();
    let rest: Map = state.into_iter().filter(|(k, _)| !touched.contains(k)).collect();
    let base_rest: Map =
        fx.base.iter().filter(|(k, _)| !touched.contains(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    assert!(rest == base_rest, "keys the WAL does not write keep the tables' values");
    applied
}

/// What a recovery mode must give for one damage.
enum WalExpect {
    Fails,
    /// Exactly these records.
    Exactly(Vec<bool>),
}

const MODES: [(DBRecoveryMode, &str); 4] = [
    (DBRecoveryMode::TolerateCorruptedTailRecords, "Tolerate"),
    (DBRecoveryMode::AbsoluteConsistency, "Absolute"),
    (DBRecoveryMode::PointInTime, "PointInTime"),
    (DBRecoveryMode::SkipAnyCorruptedRecord, "SkipAny"),
];

fn count(v: &[bool]) -> usize {
    v.iter().filter(|&&b| b).count()
}

#[test]
fn wal_matrix() {
    let fx = build();
    let work = fx._tmp.path().join("work");
    let wal_path = fx.src.join(&fx.wal_file);
    let bytes = std::fs::read(&wal_path).unwrap();
    let len = bytes.len() as u64;
    let recs = wal_records(&bytes);
    let n = recs.len();
    let mid = recs[n / 2];
    let last = recs[n - 1];
    // A record that spans two blocks.
    let spanning = recs.iter().position(|r| r.0 / WAL_BLOCK != (r.1 - 1) / WAL_BLOCK).unwrap();
    // A page whose first byte is inside a payload (not a header), in the second block.
    let page = (WAL_BLOCK as u64 / PAGE + 1..)
        .map(|p| p * PAGE)
        .find(|&p| recs.iter().all(|r| r.0 as u64 != p) && p % WAL_BLOCK as u64 != 0)
        .unwrap();
    let damages = [
        ("payload flip", Damage::Flip(mid.0 as u64 + 7 + 20, 0x10)),
        ("checksum flip", Damage::Flip(mid.0 as u64 + 1, 0x01)),
        ("length flip", Damage::Flip(mid.0 as u64 + 4, 0x02)),
        ("type flip", Damage::Flip(mid.0 as u64 + 6, 0x80)),
        ("flip in 2-block record", Damage::Flip(recs[spanning].1 as u64 - 3, 0x01)),
        ("flip in last record", Damage::Flip(last.1 as u64 - 5, 0x08)),
        ("cut mid-log", Damage::Truncate(mid.0 as u64 + 30)),
        ("cut in a header", Damage::Truncate(last.0 as u64 + 3)),
        ("cut last payload", Damage::Truncate(len - 2)),
        ("cut 2-block record", Damage::Truncate(recs[spanning].1 as u64 - 10)),
        ("zero page", Damage::ZeroPage(page)),
        ("delete", Damage::Delete),
    ];
    let mut m = Matrix::default();
    for (what, d) in damages {
        let (lo, hi) = d.range(len);
        // Records touched by the damage, and the first of them.
        let hit: Vec<bool> = recs.iter().map(|r| (r.0 as u64) < hi && (r.1 as u64) > lo).collect();
        let first = hit.iter().position(|&h| h).unwrap_or(n);
        let before: Vec<bool> = (0..n).map(|i| i < first).collect();
        for (mode, mode_name) in MODES {
            let expect = match (d, mode) {
                (Damage::Delete, _) => WalExpect::Exactly(vec![false; n]),
                (Damage::Truncate(_), DBRecoveryMode::AbsoluteConsistency) => WalExpect::Fails,
                (Damage::Truncate(_), _) => WalExpect::Exactly(before.clone()),
                (_, DBRecoveryMode::AbsoluteConsistency | DBRecoveryMode::TolerateCorruptedTailRecords) => {
                    WalExpect::Fails
                }
                (_, DBRecoveryMode::PointInTime) => WalExpect::Exactly(before.clone()),
                // SkipAny: a bad checksum or length makes the reader drop the rest of the
                // 32 KiB block (the length itself may be wrong; zeroed headers end the
                // block too); it resumes with the first record starting in the next block.
                _ => {
                    let resume = (lo as usize / WAL_BLOCK + 1) * WAL_BLOCK;
                    WalExpect::Exactly(
                        recs.iter().enumerate().map(|(i, r)| i < first || r.0 >= resume).collect(),
                    )
                }
            };
            let label = format!("{what} ({}) / {mode_name}", d.label());
            m.cell("WAL", label, || {
                copy_dir(&fx.src, &work);
                d.apply(&work.join(&fx.wal_file));
                let opened = DB::open(&reopen_options(mode), &work);
                match (expect, opened) {
                    (WalExpect::Fails, Err(e)) => {
                        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
                        assert!(e.to_string().contains(&fx.wal_file), "the message names the WAL: {e}");
                        format!("open: {e}")
                    }
                    (WalExpect::Fails, Ok(db)) => {
                        panic!(
                            "expected Corruption; opened with {} of {n} records",
                            count(&applied_records(&db, &fx))
                        )
                    }
                    (_, Err(e)) => panic!("expected open to succeed: {e}"),
                    (WalExpect::Exactly(want), Ok(db)) => {
                        let got = applied_records(&db, &fx);
                        assert!(got == want, "records {}, expected {}", show_set(&got), show_set(&want));
                        assert_eq!(
                            check_reads(&db, &model_with(&fx, &got), "?"),
                            0,
                            "reads of intact tables"
                        );
                        format!("opens; records {}", show_set(&got))
                    }
                }
            });
        }
    }
    m.finish("WAL");
}

/// The base state with the given records applied.
fn model_with(fx: &Fixture, applied: &[bool]) -> Map {
    let mut m = fx.base.clone();
    for ((k, v), &a) in fx.wal.iter().zip(applied) {
        if a {
            match v {
                Some(v) => m.insert(k.clone(), v.clone()),
                None => m.remove(k),
            };
        }
    }
    m
}

/// "0..150, 151..300 of 300" style summary of the applied records.
fn show_set(v: &[bool]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        if v[i] {
            let s = i;
            while i < v.len() && v[i] {
                i += 1;
            }
            parts.push(format!("{s}..{i}"));
        } else {
            i += 1;
        }
    }
    if parts.is_empty() {
        parts.push("none".to_string());
    }
    format!("{} of {}", parts.join(","), v.len())
}
