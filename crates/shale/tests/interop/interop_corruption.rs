//! Damaged files RocksDB 7.8.3 (and, for table formats 6 and 7, 11.8.1) wrote. Shale must
//! report Corruption (on open, `get` or while iterating) and never panic or return a wrong
//! value.
//! - SST, formats 6 and 7 (RocksDB 11.8.1's tools): a block copied from another table fails
//!   its context checksum, in Shale as in 11.8.1's `sst_dump --command=verify`.
//! - SST: bytes flipped in a data block make the gets of that block's keys and both scans
//!   fail with Corruption while every other answer stays right; flips anywhere else in the
//!   file (index, filter, properties, metaindex, footer) give Corruption or NotSupported.
//! - WAL: for a truncated tail, a flipped payload byte, a damaged header and random flips,
//!   every `DBRecoveryMode` recovers exactly what RocksDB itself recovers from the same
//!   file with the same mode (`ldb --try_load_options scan` with `wal_recovery_mode` set in
//!   the OPTIONS file), or fails where RocksDB fails: PointInTime keeps the prefix before
//!   the damage, AbsoluteConsistency refuses any damage, TolerateCorruptedTailRecords
//!   accepts only a cut tail, SkipAnyCorruptedRecords skips the damaged part.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{DBRecoveryMode, ErrorKind, IteratorMode, Options, DB};
use tools::*;

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn flip(file: &Path, offset: usize, mask: u8) {
    let mut b = std::fs::read(file).unwrap();
    b[offset] ^= mask;
    std::fs::write(file, b).unwrap();
}

fn is_damage(e: &shale::Error) -> bool {
    matches!(e.kind(), ErrorKind::Corruption | ErrorKind::NotSupported)
}

/// Scans in one direction; every pair before an error must be right. Returns whether an
/// error was reported.
fn scan_checked(db: &DB, mode: IteratorMode, truth: &BTreeMap<Vec<u8>, Vec<u8>>, ctx: &str) -> bool {
    let mut seen = 0usize;
    let mut last: Option<Vec<u8>> = None;
    for r in db.iterator(mode) {
        match r {
            Ok((k, v)) => {
                assert_eq!(
                    truth.get(&*k).map(|v| v.as_slice()),
                    Some(&*v),
                    "{ctx}: wrong pair while scanning"
                );
                if let Some(l) = &last {
                    let forward = matches!(mode, IteratorMode::Start);
                    assert!((l.as_slice() < &*k) == forward, "{ctx}: scan order");
                }
                last = Some(k.to_vec());
                seen += 1;
            }
            Err(e) => {
                assert!(is_damage(&e), "{ctx}: scan error kind: {e}");
                return true;
            }
        }
    }
    assert_eq!(seen, truth.len(), "{ctx}: a clean scan must return every pair");
    false
}

fn opts() -> Options {
    let mut o = Options::default();
    o.set_disable_auto_compactions(true);
    o
}

/// One table-only database (RocksDB flushed; the WAL is empty).
fn table_db(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db_bench_run(dir, "fillrandom,flush", 3000, &["--compression_type=none"]);
    assert_eq!(sst_files(dir).len(), 1);
    ldb_scan(dir, None).into_iter().collect()
}

#[test]
fn sst_data_block_flip_is_corruption_for_its_keys_only() {
    let test = "sst_data_block_flip_is_corruption_for_its_keys_only";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let truth = table_db(&src);
    let dir = tmp.path().join("bad");
    copy_dir(&src, &dir);
    let sst = sst_files(&dir)[0].clone();
    // The first data block starts at offset 0 (about 4 KiB); damage a value byte in it.
    flip(&sst, 1000, 0x40);
    let db = DB::open(&opts(), &dir).expect("open reads no data block");
    assert!(scan_checked(&db, IteratorMode::Start, &truth, "forward"), "forward scan must fail");
    assert!(scan_checked(&db, IteratorMode::End, &truth, "reverse"), "reverse scan must fail");
    let (mut bad, mut good) = (0, 0);
    for (k, v) in &truth {
        match db.get(k) {
            Ok(got) => {
                assert_eq!(got.as_deref(), Some(v.as_slice()), "wrong value for {}", encode_hex(k));
                good += 1;
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
                assert!(e.to_string().contains(".sst"), "the message names the file: {e}");
                bad += 1;
            }
        }
    }
    assert!(bad > 0 && bad < truth.len() / 5, "{bad} keys failed, {good} read");
}

#[test]
fn sst_random_flips_never_give_a_wrong_answer() {
    let test = "sst_random_flips_never_give_a_wrong_answer";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let truth = table_db(&src);
    let size = std::fs::metadata(&sst_files(&src)[0]).unwrap().len() as usize;
    let mut rng = SmallRng::seed_from_u64(7);
    let dir = tmp.path().join("bad");
    // Offsets all over the file, with the tail (index, meta blocks, footer) weighted.
    let mut offsets: Vec<usize> = (0..20).map(|_| rng.gen_range(0..size)).collect();
    offsets.extend((0..20).map(|_| rng.gen_range(size.saturating_sub(3000)..size)));
    let mut detected = 0;
    for off in offsets {
        copy_dir(&src, &dir);
        flip(&sst_files(&dir)[0], off, 1 << rng.gen_range(0..8));
        let ctx = format!("flip at {off} of {size}");
        let db = match DB::open(&opts(), &dir) {
            Ok(db) => db,
            Err(e) => {
                assert!(is_damage(&e), "{ctx}: open error: {e}");
                detected += 1;
                continue;
            }
        };
        let mut failed = scan_checked(&db, IteratorMode::Start, &truth, &ctx);
        failed |= scan_checked(&db, IteratorMode::End, &truth, &ctx);
        for (k, v) in truth.iter().step_by(13) {
            match db.get(k) {
                Ok(got) => assert_eq!(got.as_deref(), Some(v.as_slice()), "{ctx}: wrong value"),
                Err(e) => {
                    assert!(is_damage(&e), "{ctx}: get error: {e}");
                    failed = true;
                }
            }
        }
        detected += usize::from(failed);
    }
    // Every byte of a table is covered by a checksum or checked on open (a flip in a
    // filter may only add false positives, which change no answer).
    assert!(detected >= 30, "only {detected} of 40 flips were detected");
}

/// Format 6 and 7 tables that RocksDB 11.8.1 wrote: the first 4 KiB of one table spliced
/// over the same bytes of its twin (same keys and values, another base context checksum)
/// fail their checksums in Shale and in 11.8.1's `sst_dump --command=verify`.
#[test]
fn rocksdb_11_spliced_blocks_fail_their_checksums() {
    let test = "rocksdb_11 spliced blocks";
    if !use_rocksdb_11(test) {
        return;
    }
    for fv in [6, 7] {
        let tmp = tempfile::tempdir().unwrap();
        let flags = [format!("--format_version={fv}"), "--compression_type=none".to_string()];
        let flags: Vec<&str> = flags.iter().map(|s| s.as_str()).collect();
        let mut tables = Vec::new();
        for name in ["a", "b"] {
            let dir = tmp.path().join(name);
            db_bench_run(&dir, "fillrandom,flush", 3000, &flags);
            let t = sst_files(&dir);
            assert_eq!(t.len(), 1, "{test}: one table in {name}");
            tables.push((dir, t[0].clone()));
        }
        let a = std::fs::read(&tables[0].1).unwrap();
        let mut b = std::fs::read(&tables[1].1).unwrap();
        assert!(a.len() > 8192 && b.len() > 8192, "{test}: tables too small");
        b[..4096].copy_from_slice(&a[..4096]);
        std::fs::write(&tables[1].1, &b).unwrap();
        let (ok, out, err) =
            try_tool("sst_dump", &args(&[&format!("--file={}", tables[1].1.display()), "--command=verify"]));
        assert!(
            !ok || out.contains("Corruption") || err.contains("Corruption"),
            "{test} v{fv}: sst_dump accepted it"
        );
        let e = match DB::open(&Options::default(), &tables[1].0) {
            Err(e) => e,
            Ok(db) => db
                .iterator(IteratorMode::Start)
                .find_map(|r| r.err())
                .unwrap_or_else(|| panic!("{test} v{fv}: Shale read the spliced table without an error")),
        };
        assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
        assert!(e.to_string().contains("checksum mismatch"), "{e}");
    }
}

// ---- WAL ----

const MODES: [(DBRecoveryMode, &str); 4] = [
    (DBRecoveryMode::TolerateCorruptedTailRecords, "kTolerateCorruptedTailRecords"),
    (DBRecoveryMode::AbsoluteConsistency, "kAbsoluteConsistency"),
    (DBRecoveryMode::PointInTime, "kPointInTimeRecovery"),
    (DBRecoveryMode::SkipAnyCorruptedRecord, "kSkipAnyCorruptedRecords"),
];

const HANG: &str = "ldb did not finish";

/// What RocksDB recovers from `dir` with `mode` (read-only: the directory is unchanged).
fn rocksdb_recovers(dir: &Path, mode: &str) -> Result<Pairs, String> {
    for opt in files_with_suffix(dir, "") {
        let name = opt.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("OPTIONS-") {
            let text = std::fs::read_to_string(&opt).unwrap();
            let text: String = text
                .lines()
                .map(|l| {
                    if l.trim_start().starts_with("wal_recovery_mode=") {
                        format!("  wal_recovery_mode={mode}\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            std::fs::write(&opt, text).unwrap();
        }
    }
    let a = args(&[&format!("--db={}", dir.display()), "--try_load_options", "scan", "--hex"]);
    let Some((ok, out, err)) = try_tool_timeout("ldb", &a, 8) else {
        return Err(HANG.to_string());
    };
    if !ok || out.contains("Failed:") {
        return Err(format!("{out}{err}"));
    }
    Ok(out
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            let (k, v) = l.split_once(" : ").unwrap();
            (decode_hex(k), decode_hex(v))
        })
        .collect())
}

fn shale_recovers(dir: &Path, mode: DBRecoveryMode) -> shale::Result<Pairs> {
    let mut o = opts();
    o.set_wal_recovery_mode(mode);
    let db = DB::open(&o, dir)?;
    db.iterator(IteratorMode::Start).map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec()))).collect()
}

/// Damages a copy of `src`'s WAL with `damage` and compares both engines in every mode.
/// Returns, per mode, whether recovery succeeded.
fn compare_recovery(src: &Path, work: &Path, ctx: &str, damage: &dyn Fn(&Path)) -> Vec<bool> {
    let mut outcome = Vec::new();
    for (mode, name) in MODES {
        let rdir = work.join("rocks");
        copy_dir(src, &rdir);
        damage(&wal_files(&rdir)[0]);
        let sdir = work.join("shale");
        copy_dir(&rdir, &sdir);
        let rocks = rocksdb_recovers(&rdir, name);
        let shale = shale_recovers(&sdir, mode);
        if matches!(&rocks, Err(r) if r == HANG) {
            // Nothing to compare with; Shale must still answer (it did) without panicking.
            eprintln!(
                "{ctx}, {name}: RocksDB 7.8.3 did not finish recovering; Shale: {:?}",
                shale.map(|p| p.len())
            );
            outcome.push(false);
            continue;
        }
        match (&rocks, &shale) {
            (Ok(r), Ok(s)) => assert_same_pairs(s, r, &format!("{ctx}, {name}: Shale vs RocksDB")),
            (Err(r), Err(s)) => {
                assert_eq!(s.kind(), ErrorKind::Corruption, "{ctx}, {name}: {s} (RocksDB: {r})")
            }
            (Ok(r), Err(s)) => {
                panic!("{ctx}, {name}: RocksDB recovered {} pairs, Shale failed: {s}", r.len())
            }
            (Err(r), Ok(s)) => {
                panic!("{ctx}, {name}: RocksDB failed ({r}), Shale recovered {} pairs", s.len())
            }
        }
        outcome.push(rocks.is_ok());
    }
    outcome
}

fn wal_db(tmp: &Path) -> (PathBuf, usize) {
    let src = tmp.join("src");
    // db_bench's 64 MiB write buffer: all 3000 writes stay in one WAL of ~400 KiB.
    db_bench_run(&src, "fillrandom", 3000, &[]);
    let wal = wal_files(&src);
    assert_eq!(wal.len(), 1);
    let size = std::fs::metadata(&wal[0]).unwrap().len() as usize;
    assert!(size > 100_000);
    (src, size)
}

#[test]
fn wal_truncated_tail() {
    let test = "wal_truncated_tail";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (src, size) = wal_db(tmp.path());
    let work = tmp.path().join("work");
    // Cut inside the last record (records are about 140 bytes).
    let ok = compare_recovery(&src, &work, "cut tail", &|w| {
        let f = std::fs::OpenOptions::new().write(true).open(w).unwrap();
        f.set_len(size as u64 - 60).unwrap();
    });
    // Tolerate, PointInTime and SkipAny accept a cut tail; AbsoluteConsistency does not.
    assert_eq!(ok, vec![true, false, true, true]);
}

#[test]
fn wal_flipped_payload_byte() {
    let test = "wal_flipped_payload_byte";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (src, size) = wal_db(tmp.path());
    let work = tmp.path().join("work");
    let ok = compare_recovery(&src, &work, "flip in the middle", &|w| flip(w, size / 2, 0x10));
    // A checksum mismatch mid-log: only PointInTime (prefix) and SkipAny recover.
    assert_eq!(ok, vec![false, false, true, true]);
    // And PointInTime's prefix is strictly smaller than the whole.
    let full = ldb_scan(&src, None).len();
    let sdir = work.join("pit");
    copy_dir(&src, &sdir);
    flip(&wal_files(&sdir)[0], size / 2, 0x10);
    let prefix = shale_recovers(&sdir, DBRecoveryMode::PointInTime).unwrap();
    assert!(!prefix.is_empty() && prefix.len() < full, "prefix {} of {full}", prefix.len());
}

#[test]
fn wal_damaged_record_header() {
    let test = "wal_damaged_record_header";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (src, _) = wal_db(tmp.path());
    let work = tmp.path().join("work");
    // The first record's length field (bytes 4..6) and type byte (6).
    compare_recovery(&src, &work, "length of first record", &|w| flip(w, 5, 0x01));
    compare_recovery(&src, &work, "type of first record", &|w| flip(w, 6, 0x80));
    // Type 1 -> 6 (a "recyclable" FIRST fragment in a log that is not recycled): RocksDB
    // 7.8.3's ldb spins forever here with SkipAnyCorruptedRecords; the other modes compare.
    compare_recovery(&src, &work, "recyclable type in a plain log", &|w| flip(w, 6, 0x07));
    // A header at the start of the second 32 KiB block.
    compare_recovery(&src, &work, "header in block 2", &|w| flip(w, 32 * 1024 + 4, 0x80));
}

#[test]
fn wal_random_flips_match_rocksdb() {
    let test = "wal_random_flips_match_rocksdb";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (src, size) = wal_db(tmp.path());
    let work = tmp.path().join("work");
    let mut rng = SmallRng::seed_from_u64(11);
    for _ in 0..6 {
        let off = rng.gen_range(0..size);
        let bit = 1u8 << rng.gen_range(0..8);
        compare_recovery(&src, &work, &format!("flip {bit:#x} at {off}"), &|w| flip(w, off, bit));
    }
}
