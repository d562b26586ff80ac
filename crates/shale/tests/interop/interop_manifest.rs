//! MANIFEST records: Shale understands what RocksDB 7.8.3 writes and refuses what it must.
//! A MANIFEST that `db_bench` wrote (several column families, flushes and compactions) is
//! rewritten record by record (RocksDB's log framing: 32 KiB blocks, 7-byte headers with a
//! masked CRC32C) with one extra field spliced into a record:
//! - an unknown tag without the "safe to ignore" bit: Shale's open fails with Corruption
//!   naming the tag, and RocksDB's `ldb manifest_dump` refuses the same file;
//! - an unknown tag with the safe-to-ignore bit (1 << 13): both open it, Shale with the
//!   same data as before;
//! - a blob-file record (tag 400) naming a blob file no table links to: both open it (the
//!   file is dropped from the Version, RocksDB's rule), Shale with the same data; with a
//!   forward-incompatible custom field (tag 64) Shale's open fails with Corruption.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{ErrorKind, Options, DB};
use tools::*;

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;

fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The logical records of a log file (FULL, or FIRST/MIDDLE/LAST fragments).
fn read_records(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut partial: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos + HEADER <= data.len() {
        let left_in_block = BLOCK - pos % BLOCK;
        if left_in_block < HEADER {
            pos += left_in_block;
            continue;
        }
        let len = u16::from_le_bytes([data[pos + 4], data[pos + 5]]) as usize;
        let kind = data[pos + 6];
        if kind == 0 && len == 0 {
            break; // zero padding at the end of a preallocated file
        }
        let payload = &data[pos + HEADER..pos + HEADER + len];
        let stored = u32::from_le_bytes(data[pos..pos + 4].try_into().unwrap());
        let mut crc_input = vec![kind];
        crc_input.extend_from_slice(payload);
        assert_eq!(stored, mask(crc32c::crc32c(&crc_input)), "bad CRC in the original MANIFEST");
        match kind {
            1 => out.push(payload.to_vec()),
            2 => partial = payload.to_vec(),
            3 => partial.extend_from_slice(payload),
            4 => {
                partial.extend_from_slice(payload);
                out.push(std::mem::take(&mut partial));
            }
            k => panic!("unexpected record type {k} in MANIFEST"),
        }
        pos += HEADER + len;
    }
    out
}

/// Frames `records` as a log file.
fn write_records(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        let mut rest: &[u8] = r;
        let mut first = true;
        loop {
            let left = BLOCK - out.len() % BLOCK;
            if left < HEADER {
                out.resize(out.len() + left, 0);
                continue;
            }
            let n = rest.len().min(left - HEADER);
            let last = n == rest.len();
            let kind: u8 = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let mut crc_input = vec![kind];
            crc_input.extend_from_slice(&rest[..n]);
            out.extend_from_slice(&mask(crc32c::crc32c(&crc_input)).to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.push(kind);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A copy of `src` whose MANIFEST has `extra` appended to its last record.
fn spliced_copy(src: &Path, dst: &Path, extra: &[u8]) {
    copy_dir(src, dst);
    let manifest = current_manifest(dst);
    let mut records = read_records(&std::fs::read(&manifest).unwrap());
    assert!(records.len() >= 3, "expected a few MANIFEST records");
    records.last_mut().unwrap().extend_from_slice(extra);
    std::fs::write(&manifest, write_records(&records)).unwrap();
}

fn open_shale(dir: &Path) -> shale::Result<DB> {
    let cfs = DB::list_cf(&Options::default(), dir)?;
    DB::open_cf(&Options::default(), dir, cfs)
}

fn ldb_manifest_dump(dir: &Path) -> (bool, String) {
    let (ok, out, err) =
        try_tool("ldb", &args(&["manifest_dump", &format!("--path={}", current_manifest(dir).display())]));
    // manifest_dump reports a bad MANIFEST in its output ("Error in processing file ...
    // Corruption: ...") and may still exit 0.
    let all = format!("{out}{err}");
    (ok && !all.contains("Error in processing") && !all.contains("Corruption"), all)
}

fn source_db(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("src");
    db_bench_fill(
        &dir,
        6000,
        &["--write_buffer_size=65536", "--target_file_size_base=131072", "--num_column_families=2"],
    );
    dir
}

#[test]
fn rewritten_manifest_is_unchanged_for_both() {
    let test = "rewritten_manifest_is_unchanged_for_both";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = source_db(tmp.path());
    let original = std::fs::read(current_manifest(&src)).unwrap();
    // The framing helpers reproduce RocksDB's bytes exactly.
    assert_eq!(write_records(&read_records(&original)), original);
    let want = ldb_scan(&src, None);
    let db = open_shale(&src).expect("Shale opens RocksDB's MANIFEST");
    assert_same_pairs(&shale_scan(&db, "default"), &want, test);
}

#[test]
fn unknown_tag_without_ignore_bit_is_corruption() {
    let test = "unknown_tag_without_ignore_bit_is_corruption";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = source_db(tmp.path());
    let dst = tmp.path().join("bad");
    let mut extra = Vec::new();
    varint(50, &mut extra); // no such tag in 7.8.3
    varint(7, &mut extra);
    spliced_copy(&src, &dst, &extra);
    let (ok, out) = ldb_manifest_dump(&dst);
    assert!(!ok, "RocksDB itself should refuse the MANIFEST:\n{out}");
    let e = open_shale(&dst).expect_err("Shale must refuse an unknown MANIFEST tag");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("unknown tag 50"), "{e}");
    assert!(out.contains("unknown tag"), "RocksDB's reason: {out}");
}

#[test]
fn unknown_tag_with_ignore_bit_is_skipped() {
    let test = "unknown_tag_with_ignore_bit_is_skipped";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = source_db(tmp.path());
    let want = ldb_scan(&src, None);
    let dst = tmp.path().join("ignorable");
    let mut extra = Vec::new();
    varint((1 << 13) | 77, &mut extra);
    varint(5, &mut extra);
    extra.extend_from_slice(b"hello");
    spliced_copy(&src, &dst, &extra);
    let (ok, out) = ldb_manifest_dump(&dst);
    assert!(ok, "RocksDB skips a safe-to-ignore tag:\n{out}");
    let db = open_shale(&dst).unwrap_or_else(|e| panic!("Shale must skip a safe-to-ignore tag: {e}"));
    assert_same_pairs(&shale_scan(&db, "default"), &want, test);
}

#[test]
fn blob_file_record_without_tables_is_dropped() {
    let test = "blob_file_record_without_tables_is_dropped";
    if !tools_available(test, &["db_bench", "ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = source_db(tmp.path());
    let dst = tmp.path().join("blob");
    // BlobFileAddition: number, total count, total bytes, checksum method, checksum value.
    let mut extra = Vec::new();
    varint(400, &mut extra);
    for v in [9999u64, 1, 100] {
        varint(v, &mut extra);
    }
    extra.extend_from_slice(&[0, 0]);
    let mut incompatible = extra.clone();
    extra.push(0); // no custom field: the end marker
    spliced_copy(&src, &dst, &extra);
    let want = ldb_scan(&src, None);
    let (ok, out) = ldb_manifest_dump(&dst);
    assert!(ok, "RocksDB reads the blob file record:\n{out}");
    let db = open_shale(&dst).unwrap_or_else(|e| panic!("Shale reads a blob file record: {e}"));
    assert_same_pairs(&shale_scan(&db, "default"), &want, test);
    drop(db);
    // A custom field Shale (and RocksDB) must understand but does not.
    let dst2 = tmp.path().join("blob-incompatible");
    incompatible.extend_from_slice(&[64, 1, 7, 0]);
    spliced_copy(&src, &dst2, &incompatible);
    let e = open_shale(&dst2).expect_err("a forward-incompatible field must be refused");
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("Forward incompatible"), "{e}");
}
