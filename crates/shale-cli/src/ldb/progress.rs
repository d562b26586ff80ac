//! `ldb compaction_progress_dump --path=<file>`: RocksDB 11.8.1's
//! `DumpCompactionProgressFile` (tools/ldb_cmd.cc) on a `COMPACTION_PROGRESS-<time>` file
//! that `DB::OpenAndCompact(allow_resumption = true)` writes (format:
//! crates/shale-format/src/version/progress.rs, docs/compaction-progress.md).
//!
//! Like 11.8.1 it reads the file as a log (checksums verified), decodes each record as a
//! version edit, prints the SubcompactionProgress of those that carry one (numbered from 0)
//! and the total, or `No valid records found in the compaction progress file.`; an edit that
//! does not decode is reported on stderr (`Failed to decode VersionEdit: <status>`) and
//! skipped; a file that cannot be opened is reported on stderr; the exit status is 0 in
//! all of these cases, as 11.8.1's.
//!
//! One difference: where 11.8.1's log reader silently drops a damaged record (it reads
//! with no corruption reporter), Shale drops it too, so stdout is the same, and also names
//! it on stderr: `Corruption: <reason> in <file> at offset <n>`.

use std::path::Path;

use shale_format::fs::default_fs;
use shale_format::version::edit::VersionEdit;
use shale_format::version::progress::SubcompactionProgress;
use shale_format::wal::{LogReader, WalRecoveryMode};

use super::fmt::{Failure, Res};
use super::{Out, Parsed};

pub fn compaction_progress_dump(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["path"])?;
    let path = match p.opt("path") {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => {
            return Err(Failure::new("The --path option is required for compaction_progress_dump command"));
        }
    };
    let fs = default_fs();
    let file = match fs.new_sequential_file(Path::new(&path)) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("Failed to open compaction progress file {path}: {}", open_error(&path, &e));
            return Ok(());
        }
    };
    let w = |out: &mut Out<'_>, s: String| out.write_all(s.as_bytes()).map_err(Failure::io);
    w(out, format!("Compaction Progress File: {path}\n============================================\n"))?;
    let mut reader = LogReader::new(file, path.clone(), 0, WalRecoveryMode::SkipAnyCorruptedRecord);
    let mut record = Vec::new();
    let mut count = 0usize;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                // An I/O error ends the read, as it ends RocksDB's.
                eprintln!("{e}");
                break;
            }
        }
        let progress = VersionEdit::decode(&record)
            .and_then(|e| e.subcompaction_progress.map(|b| SubcompactionProgress::decode(&b)).transpose());
        match progress {
            Err(e) => eprintln!("Failed to decode VersionEdit: {e}"),
            Ok(None) => {}
            Ok(Some(p)) => {
                w(out, format!("Progress Record {count}:\n{}\n", p.debug_string()))?;
                count += 1;
            }
        }
    }
    for (reason, offset) in reader.skipped_corruption_reports() {
        eprintln!("Corruption: {reason} in {path} at offset {offset}");
    }
    if count == 0 {
        w(out, "No valid records found in the compaction progress file.\n".to_string())
    } else {
        w(out, format!("\nTotal records: {count}\n"))
    }
}

/// RocksDB's words for a file that cannot be opened for sequential reading.
fn open_error(path: &str, e: &shale::Error) -> String {
    if e.kind() == shale::ErrorKind::IOError && e.os_code() == Some(libc::ENOENT) {
        format!(
            "IO error: No such file or directory: While opening a file for sequentially reading: {path}: \
             No such file or directory"
        )
    } else {
        e.to_string()
    }
}
