//! `ldb dump_wal`: one CSV-like row per WAL record, as ldb's DumpWalFile prints it:
//!
//! ```text
//! Sequence,Count,ByteSize,Physical Offset,Key(s)[ : value ]
//! 9,1,17,0,PUT(0) : 0x65 : 0x35
//! ```
//!
//! Each write batch entry adds `PUT(cf) : 0xKEY : 0xVALUE `, `DELETE(cf) : 0xKEY `,
//! `SINGLE_DELETE(cf) : 0xKEY `, `DELETE_RANGE(cf) : 0xBEGIN 0xEND ` or `MERGE(cf) : ...`
//! (values only with `--print_value`).

use std::path::Path;

use shale::fs::default_fs;
use shale::key::ValueType;
use shale::wal::{LogReader, WalRecoveryMode};
use shale::WriteBatch;

use super::fmt::{string_to_hex, Failure, Res};
use super::{Out, Parsed};

pub fn dump_wal(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["walfile", "header", "print_value", "write_committed"])?;
    let Some(file) = p.opt("walfile") else {
        return Err(Failure::new("Argument walfile must be specified for the dump_wal command"));
    };
    let header = p.flag("header");
    // RocksDB 7.8.3 reads --print_value as a flag: `--print_value=true` does not print them.
    let values = p.flags.iter().any(|f| f == "print_value");
    p.bool_opt("write_committed", true)?;
    dump_wal_file(file, header, values, out)
}

/// Dumps one WAL file; corrupt records are reported on stderr and skipped, as ldb's
/// StdErrReporter does.
pub fn dump_wal_file(file: &str, header: bool, values: bool, out: &mut Out<'_>) -> Res<()> {
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
        let mut row =
            format!("{},{},{},{},", batch.sequence(), batch.count(), rec.len(), reader.last_record_offset())
                .into_bytes();
        let r = batch.for_each(&mut |e| {
            let kind = match e.value_type {
                ValueType::Value => "PUT",
                ValueType::Merge => "MERGE",
                ValueType::Deletion => "DELETE",
                ValueType::SingleDeletion => "SINGLE_DELETE",
                ValueType::RangeDeletion => "DELETE_RANGE",
            };
            row.extend(format!("{kind}({}) : {} ", e.cf_id, string_to_hex(e.key)).into_bytes());
            match e.value_type {
                ValueType::Value | ValueType::Merge if values => {
                    row.extend(format!(": {} ", string_to_hex(e.value)).into_bytes());
                }
                ValueType::RangeDeletion => row.extend(format!("{} ", string_to_hex(e.value)).into_bytes()),
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
    Ok(())
}
