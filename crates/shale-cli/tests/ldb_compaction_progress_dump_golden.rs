//! Golden: `shale ldb compaction_progress_dump --path=<file>` prints what RocksDB 11.8.1's
//! prints, on compaction progress files (the `COMPACTION_PROGRESS-<time>` files
//! `DB::OpenAndCompact(allow_resumption = true)` writes) generated here at test time.
//!
//! Where the files come from: neither 11.8.1's ldb nor its db_bench writes one (ldb's
//! `remote_compaction_worker` calls OpenAndCompact without `allow_resumption`), so the test
//! writes them with Shale's encoder of the same format (crates/shale-format/src/version/progress.rs)
//! and 11.8.1's ldb, reading them, is the judge: a record it could not read as Shale does
//! would print differently. The cases: several progress records with output files on both
//! levels, keys printed parsed, as kMaxSequenceNumber/kValueTypeForSeek and raw; an edit
//! without progress (skipped); a progress record with a critical unknown field and one cut
//! short (each `Failed to decode VersionEdit: ...` on stderr, then skipped); an empty file;
//! a missing file; no `--path`.
//!
//! Compared: exit status, stdout, and all of stderr (its first line for a lone command, where
//! ldb prints its help text, which lists each tool's own commands). What legitimately differs: a record
//! whose checksum fails is dropped silently by 11.8.1 (its reader has no reporter); Shale
//! drops it too (same stdout) and names it on stderr with the file and offset, which the
//! corrupt-file case checks on Shale alone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

use std::path::Path;

use shale_format::version::edit::{FileMetaData, VersionEdit};
use shale_format::version::progress::{LevelProgress, SubcompactionProgress};

fn ikey(user_key: &[u8], seq: u64, ty: u8) -> Vec<u8> {
    let mut k = user_key.to_vec();
    k.extend_from_slice(&((seq << 8) | ty as u64).to_le_bytes());
    k
}

fn file(number: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 1000 + number,
        smallest: ikey(b"a", 1, 1),
        largest: ikey(b"k", 9, 1),
        smallest_seqno: 1,
        largest_seqno: 9,
        oldest_ancester_time: 1_700_000_000,
        file_creation_time: 1_700_000_001,
        epoch_number: 3,
        file_checksum_func_name: "Unknown".into(),
        ..FileMetaData::default()
    }
}

fn progress_edit(p: &SubcompactionProgress) -> Vec<u8> {
    raw_progress_edit(&p.encode())
}

fn raw_progress_edit(payload: &[u8]) -> Vec<u8> {
    let e = VersionEdit { subcompaction_progress: Some(payload.to_vec()), ..VersionEdit::default() };
    let mut rec = Vec::new();
    e.encode(&mut rec);
    rec
}

/// Writes `records` as a log file (the MANIFEST's framing, log number 0), as RocksDB's
/// compaction progress writer does.
fn write_log(path: &Path, records: &[Vec<u8>]) {
    let fs = shale_format::fs::default_fs();
    let f = fs.new_writable_file(path).unwrap();
    let mut w = shale_format::wal::LogWriter::new(f, 0);
    for r in records {
        w.add_record(r).unwrap();
    }
    w.sync().unwrap();
}

fn fixture(dir: &Path) {
    let first = SubcompactionProgress {
        next_internal_key_to_compact: ikey(b"key000100", 250, 1),
        num_processed_input_records: 100,
        output_level: LevelProgress {
            num_processed_output_records: 98,
            output_files: vec![file(21), file(22)],
        },
        proximal_output_level: LevelProgress::default(),
    };
    let second = SubcompactionProgress {
        next_internal_key_to_compact: ikey(b"key\x00\xff", shale_format::key::MAX_SEQUENCE_NUMBER, 0x18),
        num_processed_input_records: 300,
        output_level: LevelProgress { num_processed_output_records: 290, output_files: vec![file(23)] },
        proximal_output_level: LevelProgress {
            num_processed_output_records: 5,
            output_files: vec![file(24)],
        },
    };
    let raw_key = SubcompactionProgress {
        next_internal_key_to_compact: b"short".to_vec(),
        num_processed_input_records: 301,
        ..SubcompactionProgress::default()
    };
    let bad_type = SubcompactionProgress {
        next_internal_key_to_compact: ikey(b"zz", 5, 0x03),
        num_processed_input_records: 302,
        ..SubcompactionProgress::default()
    };
    let no_key = SubcompactionProgress { num_processed_input_records: 0, ..SubcompactionProgress::default() };
    let other_edit = {
        let e = VersionEdit { log_number: Some(7), ..VersionEdit::default() };
        let mut rec = Vec::new();
        e.encode(&mut rec);
        rec
    };
    let good = first.encode();
    let records = vec![
        progress_edit(&first),
        other_edit,
        progress_edit(&second),
        // A critical field this version does not know (tag 9): NotSupported.
        raw_progress_edit(&[9, 1, 0, 1]),
        // Cut short: Corruption.
        raw_progress_edit(&good[..good.len() / 2]),
        progress_edit(&raw_key),
        progress_edit(&bad_type),
        progress_edit(&no_key),
    ];
    write_log(&dir.join("COMPACTION_PROGRESS-1700000000"), &records);
    write_log(&dir.join("COMPACTION_PROGRESS-empty"), &[]);
    // The same file with one record's checksum broken.
    let mut bytes = std::fs::read(dir.join("COMPACTION_PROGRESS-1700000000")).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(dir.join("COMPACTION_PROGRESS-corrupt"), bytes).unwrap();
}

fn printed_by(dir: &Path, prog: &Path, pre: &[&str], args: &[&str]) -> Printed {
    run_with_stdin(dir, prog, pre, args, "")
}

#[test]
fn compaction_progress_dump_matches_ldb() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    let d = tempfile::tempdir().unwrap();
    fixture(d.path());
    let mut rec = Recording::open("ldb_compaction_progress_dump_golden", &oracles);
    let cases: Vec<&[&str]> = vec![
        &["compaction_progress_dump", "--path=COMPACTION_PROGRESS-1700000000"],
        &["compaction_progress_dump", "--path=COMPACTION_PROGRESS-empty"],
        &["compaction_progress_dump", "--path=COMPACTION_PROGRESS-missing"],
        &["compaction_progress_dump"],
        &["compaction_progress_dump", "--path="],
        &["compaction_progress_dump", "--path=COMPACTION_PROGRESS-corrupt"],
    ];
    for args in &cases {
        let s = printed_by(d.path(), &shale(), &["ldb"], args);
        assert!(!s.stderr.contains("panicked"), "{args:?}: {}", s.stderr);
        let r = o11.map(|o| printed_by(d.path(), &o.ldb, &[], args));
        if let Some(r) = &r {
            assert_eq!(r.status, s.status, "exit status of {args:?}");
            assert_eq!(r.stdout, s.stdout, "stdout of {args:?}");
            if args.len() == 1 {
                // A lone command: ldb prints its help (Shale's lists Shale's commands).
                assert_eq!(first_line(&r.stderr), first_line(&s.stderr), "stderr of {args:?}");
            } else if !args.iter().any(|a| a.ends_with("corrupt")) {
                assert_eq!(r.stderr, s.stderr, "stderr of {args:?}");
            }
        }
        let corrupt = args.iter().any(|a| a.ends_with("corrupt"));
        if !corrupt {
            rec.check("ldb", args, r.as_ref(), &s, &exact);
        }
    }
    assert!(rec.len() >= cases.len() - 1 || o11.is_some(), "the recording covers every sound case");
    // The damaged record is named with the file and its offset.
    let s = printed_by(d.path(), &shale(), &["ldb"], cases[5]);
    assert!(
        s.stderr.contains("in COMPACTION_PROGRESS-corrupt at offset "),
        "the corruption is named: {}",
        s.stderr
    );
    // The sound file: every progress record printed, the others reported.
    let s = printed_by(d.path(), &shale(), &["ldb"], cases[0]);
    assert!(
        s.stdout.contains("Progress Record 4:\n") && s.stdout.ends_with("\nTotal records: 5\n"),
        "{}",
        s.stdout
    );
    assert_eq!(s.stderr.matches("Failed to decode VersionEdit: ").count(), 2, "{}", s.stderr);
}
