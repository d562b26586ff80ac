//! `ldb dump_wal`: one CSV-like row per WAL record, as ldb's DumpWalFile prints it:
//!
//! ```text
//! Sequence,Count,ByteSize,Physical Offset,Key(s)[ : value ]
//! 9,1,17,0,PUT(0) : 0x65 : 0x35
//! ```
//!
//! Each write batch entry adds `PUT(cf) : 0xKEY : 0xVALUE `, `DELETE(cf) : 0xKEY `,
//! `SINGLE_DELETE(cf) : 0xKEY `, `DELETE_RANGE(cf) : 0xBEGIN 0xEND ` or `MERGE(cf) : ...`
//! (values only with `--print_value`); the markers of a two-phase commit add
//! `BEGIN_PREPARE(false) `, `END_PREPARE(0xXID) `, `COMMIT(0xXID) `, `ROLLBACK(0xXID) `, and a
//! Noop `NOOP ` (ldb's `InMemoryHandler`), whatever `--print_value` says.

use std::path::Path;

use shale::WriteBatch;
use shale_format::fs::default_fs;
use shale_format::key::ValueType;
use shale_format::wal::{LogReader, WalRecoveryMode};

use super::fmt::{string_to_hex, Failure, Res};
use super::{Out, Parsed};

pub fn dump_wal(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["walfile", "header", "print_value", "write_committed", "only_print_seqno_gaps"])?;
    let Some(file) = p.opt("walfile") else {
        return Err(Failure::new("Argument walfile must be specified."));
    };
    // ldb's --only_print_seqno_gaps: only the batches whose sequence number does not follow
    // the previous batch's (its sequence plus its count), across the files dumped.
    let mut gaps: Option<Option<(u64, u64)>> = p.flag("only_print_seqno_gaps").then_some(None);
    let header = p.flag("header");
    // ldb reads --header and --print_value as flags: `--print_value=true` does not print them.
    let values = p.flags.iter().any(|f| f == "print_value");
    p.bool_opt("write_committed", true)?;
    // The column families whose keys ldb can format: with --db every family of the database
    // (ldb opens it); without, none.
    let mut known: Vec<u32> = Vec::new();
    if let Some(db) = p.opt("db") {
        let r = super::manifest::replay(&super::manifest::current_manifest(Path::new(db))?)?;
        known.extend(r.cfs.iter().map(|c| c.id));
    }
    // ldb's DumpWalFiles: a directory is dumped WAL by WAL in file number order.
    let is_dir = std::fs::read_dir(file).map(|mut d| d.next().is_some()).unwrap_or(false);
    if !is_dir {
        if std::fs::metadata(file).is_err() {
            return Err(Failure::new(format!("{file}: No such file or directory")));
        }
        if file.len() <= 4 || !file.ends_with(".log") {
            return Err(Failure::new(format!("{file}: Invalid log file name")));
        }
        return dump_wal_file_with(file, header, values, Some(&known), gaps.as_mut(), out);
    }
    let mut wals: Vec<(u64, String)> = Vec::new();
    for e in std::fs::read_dir(file).map_err(Failure::io)? {
        let name = e.map_err(Failure::io)?.file_name().to_string_lossy().into_owned();
        if let Some(super::fmt::DbFile::Wal(n)) = super::fmt::parse_db_file(&name) {
            wals.push((n, name));
        }
    }
    if wals.is_empty() {
        return Err(Failure::new(format!("{file}: No valid wal logs found")));
    }
    wals.sort();
    let sep = if file.ends_with('/') { "" } else { "/" };
    for (_, name) in wals {
        let path = format!("{file}{sep}{name}");
        out.write_all(format!("Checking wal file: {path}\n").as_bytes()).map_err(Failure::io)?;
        dump_wal_file_with(&path, header, values, Some(&known), gaps.as_mut(), out)?;
    }
    Ok(())
}

/// `dump --path=<n>.log`: ldb's DumpWalFiles on one file, header and values on, no family
/// known (no database is open).
pub fn dump_wal_path(file: &str, out: &mut Out<'_>) -> Res<()> {
    if std::fs::metadata(file).is_err() {
        return Err(Failure::new(format!("{file}: No such file or directory")));
    }
    dump_wal_file_with(file, true, true, Some(&[]), None, out)
}

/// Dumps one WAL file as dump_live_files does (the database is open: every family known).
pub fn dump_wal_file(file: &str, header: bool, values: bool, out: &mut Out<'_>) -> Res<()> {
    dump_wal_file_with(file, header, values, None, None, out)
}

/// Dumps one WAL file; corrupt records are reported on stderr and skipped, as ldb's
/// StdErrReporter does. With `known` (the families ldb has comparators for), the families
/// met in the file but not known are named on a last line, as RocksDB 11 does; ldb keeps
/// them in an `unordered_set`, whose order (libstdc++: newest first) is followed here.
/// With `gaps` (`--only_print_seqno_gaps`, holding the previous batch's sequence number and
/// count) a batch that follows the previous one is skipped, and one that does not is
/// printed after the previous batch's numbers, as ldb's DumpWalFile does.
fn dump_wal_file_with(
    file: &str,
    header: bool,
    values: bool,
    known: Option<&[u32]>,
    mut gaps: Option<&mut Option<(u64, u64)>>,
    out: &mut Out<'_>,
) -> Res<()> {
    let mut encountered: Vec<u32> = Vec::new();
    let fs = default_fs();
    let f = fs
        .new_sequential_file(Path::new(file))
        .map_err(|e| Failure::new(format!("Failed to open WAL file {e}")))?;
    let base = file.rsplit('/').next().unwrap_or(file);
    let number = match super::fmt::parse_db_file(base) {
        Some(super::fmt::DbFile::Wal(n)) => n,
        _ => 0,
    };
    let mut reader = LogReader::new(f, file.to_string(), number, WalRecoveryMode::SkipAnyCorruptedRecord);
    if header {
        let mut h = b"Sequence,Count,ByteSize,Physical Offset,Key(s)".to_vec();
        if values {
            h.extend_from_slice(b" : value ");
        }
        h.push(b'\n');
        out.write_all(&h).map_err(Failure::io)?;
    }
    let mut rec = Vec::new();
    loop {
        match reader.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                eprintln!("{e}");
                break;
            }
        }
        if rec.len() < 12 {
            eprintln!("Corruption: log record too small");
            continue;
        }
        let batch = WriteBatch::from_data(&rec);
        let mut row = Vec::new();
        if let Some(prev) = gaps.as_mut() {
            let (seq, count) = (batch.sequence(), u64::from(batch.count()));
            let follows = prev.is_none_or(|(ps, pc)| ps.wrapping_add(pc) == seq);
            if let (false, Some((ps, pc))) = (follows, **prev) {
                row.extend(
                    format!("Prev batch sequence number: {ps}, prev batch count: {pc}, ").into_bytes(),
                );
            }
            **prev = Some((seq, count));
            if follows {
                continue;
            }
        }
        let mut in_batch: Vec<u32> = Vec::new();
        let _ = batch.for_each(&mut |e| {
            if !in_batch.contains(&e.cf_id) {
                in_batch.push(e.cf_id);
            }
            Ok(())
        });
        for id in in_batch.into_iter().rev() {
            if !encountered.contains(&id) {
                encountered.push(id);
            }
        }
        row.extend(
            format!("{},{},{},{},", batch.sequence(), batch.count(), rec.len(), reader.last_record_offset())
                .into_bytes(),
        );
        let r = for_each_record(&rec, &mut |r| {
            let e = match r {
                Row::Entry(e) => e,
                Row::Text(t) => {
                    row.extend(t.into_bytes());
                    return Ok(());
                }
            };
            let kind = match e.value_type {
                ValueType::Value => "PUT",
                ValueType::Merge => "MERGE",
                ValueType::Deletion => "DELETE",
                ValueType::SingleDeletion => "SINGLE_DELETE",
                ValueType::RangeDeletion => "DELETE_RANGE",
                ValueType::BlobIndex => "PUT_BLOB_INDEX",
                ValueType::WideColumnEntity => "PUT_ENTITY",
            };
            row.extend(format!("{kind}({}) : {} ", e.cf_id, string_to_hex(e.key)).into_bytes());
            match e.value_type {
                ValueType::Value | ValueType::Merge if values => {
                    row.extend(format!(": {} ", string_to_hex(e.value)).into_bytes());
                }
                ValueType::RangeDeletion => row.extend(format!("{} ", string_to_hex(e.value)).into_bytes()),
                // ldb's PutEntityCF: the columns, always in hex.
                ValueType::WideColumnEntity if values => {
                    let cols = shale_format::wide_columns::owned_columns(e.value)?;
                    row.extend_from_slice(b": ");
                    row.extend(super::fmt::dump_columns(&cols, true));
                    row.push(b' ');
                }
                _ => {}
            }
            Ok(())
        });
        if let Err(e) = r {
            row.extend(format!("error: {e}").into_bytes());
            out.write_all(&row).map_err(Failure::io)?;
            return Err(Failure::new(format!("Print write batch error: {e}")));
        }
        row.push(b'\n');
        out.write_all(&row).map_err(Failure::io)?;
    }
    if let Some(known) = known {
        let unknown: Vec<String> =
            encountered.iter().rev().filter(|id| !known.contains(id)).map(|id| id.to_string()).collect();
        if !unknown.is_empty() {
            let line = format!(
                "(Column family id: [{}] contained in WAL are not opened in DB. Applied default hex formatting \
                 for user key. Specify --db=<db_path> to open DB for better user key formatting if it contains \
                 timestamp.)\n",
                unknown.join(",")
            );
            out.write_all(line.as_bytes()).map_err(Failure::io)?;
        }
    }
    Ok(())
}

/// What a batch's record adds to its row: an entry, or the text of a marker.
enum Row<'a> {
    Entry(shale_engine::batch::BatchEntry<'a>),
    Text(String),
}

/// ldb's `InMemoryHandler` over a WAL record's batch: every entry and, in their place, the
/// markers of a two-phase commit (`BEGIN_PREPARE(false) `, `END_PREPARE(0xXID) `,
/// `COMMIT(0xXID) `, `COMMIT_WITH_TIMESTAMP(0xXID, 0xTS) `, `ROLLBACK(0xXID) `) and Noop
/// (`NOOP `); LogData prints nothing. The header's count is checked at the end, as
/// `WriteBatch::Iterate` does.
fn for_each_record(rec: &[u8], f: &mut dyn FnMut(Row<'_>) -> shale::Result<()>) -> shale::Result<()> {
    use shale_engine::batch::{Batch, Marker, Record};
    let batch = Batch::from_data(rec);
    let mut found = 0u32;
    for r in batch.records() {
        match r? {
            Record::Entry(e) => {
                found = found.wrapping_add(1);
                f(Row::Entry(e))?;
            }
            Record::Marker(m) => f(Row::Text(match m {
                Marker::BeginPrepare => "BEGIN_PREPARE(false) ".to_string(),
                Marker::EndPrepare(xid) => format!("END_PREPARE({}) ", string_to_hex(xid)),
                Marker::Commit(xid) => format!("COMMIT({}) ", string_to_hex(xid)),
                Marker::CommitWithTimestamp { xid, ts } => {
                    format!("COMMIT_WITH_TIMESTAMP({}, {}) ", string_to_hex(xid), string_to_hex(ts))
                }
                Marker::Rollback(xid) => format!("ROLLBACK({}) ", string_to_hex(xid)),
            }))?,
            Record::Noop => f(Row::Text("NOOP ".to_string()))?,
            Record::LogData => {}
        }
    }
    if found != batch.count() {
        return Err(shale::Error::new(shale::ErrorKind::Corruption, "WriteBatch has wrong count"));
    }
    Ok(())
}

/// Whether the WAL holds at least one record: RocksDB's GetSortedWalFiles leaves out a WAL
/// whose first record is missing (an empty file), and so does ldb's dump_live_files.
pub fn has_record(file: &str) -> bool {
    let Ok(f) = default_fs().new_sequential_file(Path::new(file)) else {
        return false;
    };
    let mut reader = LogReader::new(f, file.to_string(), 0, WalRecoveryMode::SkipAnyCorruptedRecord);
    let mut rec = Vec::new();
    matches!(reader.read_record(&mut rec), Ok(true))
}
