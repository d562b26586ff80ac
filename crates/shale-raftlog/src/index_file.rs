//! Recovery index files (Shale's own, `Config::recovery_index_files`, on by default): beside a
//! sealed log file, a copy of every batch's header and item footer, so recovery reads a
//! few hundred KiB instead of the whole file. The log files themselves keep raft-engine's
//! format byte for byte; raft-engine ignores these files (their names end neither in
//! `.raftlog`, `.rewrite` nor `.raftlog.reserved`).
//!
//! Name: the log file's name plus `.idx` (`0000000000000007.raftlog.idx`,
//! `0000000000000002.rewrite.idx`). Layout (little-endian):
//! ```text
//! +----------------------+----------------+-------------------+------------------+-----------+
//! | magic "SHRLIDX1" (8) | file_size: u64 | log version: u64  | alignment: u64   | count: u64|
//! +----------------------+----------------+-------------------+------------------+-----------+
//! count records:
//! +-------------------------+--------------------------------+-----------------+--------------+
//! | batch offset: u64       | batch header, as in the file   | footer_len: u32 | item footer, |
//! | (in the log file)       | (16 bytes)                     |                 | as in the file (checksum signed) |
//! +-------------------------+--------------------------------+-----------------+--------------+
//! +--------------------------------------------+
//! | crc32 (IEEE) of every byte before it: u32  |
//! +--------------------------------------------+
//! ```
//! When it is used: its checksum holds, `file_size` is the log file's size, the log file's
//! header decodes to the same version and alignment, and the last record's footer equals
//! the bytes at that place in the log file (so a file appended to or replaced since, by
//! raft-engine for example, is scanned instead). Each footer's own checksum is verified
//! again when decoded. Otherwise the log file is scanned as without the option.
//!
//! Written when a file is sealed (after its sync, on rotation) and, by recovery, for every
//! file it scanned to a clean end (Shale never appends to a file after reopening). It is
//! not synced: a torn one fails its checksum and the log file is scanned. Removed with its
//! log file (purge, recycling); recovery removes index files whose log file is gone.
//!
//! What the index gives up: recovery does not read a sealed file's footers from the log
//! file itself, so damage to them (not to the index) is found when the entries are read
//! (their blob checksums), not at open.
//! Implemented here; described in docs/raftlog-format.md.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale_base::fs::{FileSystem, RandomAccessFile};

use crate::format::{FileId, LogFileFormat, Version};
use crate::log_batch::{BatchHeader, LOG_BATCH_HEADER_LEN};
use crate::util::crc32;
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"SHRLIDX1";
const HEAD_LEN: usize = 8 + 8 * 4;
const SUFFIX: &str = ".idx";

/// The index file's path for log file `id`.
pub(crate) fn path_of(dir: &Path, id: FileId) -> PathBuf {
    dir.join(format!("{}{SUFFIX}", id.build_file_name()))
}

/// The log file an index file name belongs to, or None for any other name.
pub(crate) fn parse_name(name: &str) -> Option<FileId> {
    FileId::parse_file_name(name.strip_suffix(SUFFIX)?)
}

/// Appends one batch's record: `header` is the batch's first 16 bytes, `footer` its item
/// footer, both as written to the log file.
pub(crate) fn push_record(buf: &mut Vec<u8>, offset: u64, header: &[u8], footer: &[u8]) {
    buf.extend_from_slice(&offset.to_le_bytes());
    buf.extend_from_slice(&header[..LOG_BATCH_HEADER_LEN]);
    buf.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    buf.extend_from_slice(footer);
}

/// Writes the index of log file `id` (`file_size` bytes) from its `records` (not synced,
/// see the module comment). Returns an error only for the caller to drop or report.
pub(crate) fn write(
    fs: &dyn FileSystem,
    dir: &Path,
    id: FileId,
    format: LogFileFormat,
    file_size: u64,
    count: u64,
    records: &[u8],
) -> Result<()> {
    let mut head = Vec::with_capacity(HEAD_LEN);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&file_size.to_le_bytes());
    head.extend_from_slice(&(format.version as u64).to_le_bytes());
    head.extend_from_slice(&format.alignment.to_le_bytes());
    head.extend_from_slice(&count.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&head);
    h.update(records);
    let crc = h.finalize();
    let mut w = fs.new_writable_file(&path_of(dir, id))?;
    w.append(&head)?;
    w.append(records)?;
    w.append(&crc.to_le_bytes())?;
    w.flush()?;
    Ok(())
}

/// One record of a loaded index.
pub(crate) struct Record<'a> {
    pub offset: u64,
    pub header: BatchHeader,
    pub footer: &'a [u8],
}

/// A loaded, checked index.
pub(crate) struct Loaded {
    pub format: LogFileFormat,
    bytes: Vec<u8>,
    count: u64,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

impl Loaded {
    /// The records, in file order; Err only for bytes that do not decode (the checksum
    /// held, so only a writer bug gets there).
    pub fn records(&self) -> impl Iterator<Item = Result<Record<'_>>> {
        let body = &self.bytes[HEAD_LEN..self.bytes.len() - 4];
        let mut at = 0usize;
        (0..self.count).map(move |_| {
            let bad = || Error::corruption("recovery index record truncated");
            if at + 8 + LOG_BATCH_HEADER_LEN + 4 > body.len() {
                return Err(bad());
            }
            let offset = u64_at(body, at);
            let header = BatchHeader::decode(&body[at + 8..at + 8 + LOG_BATCH_HEADER_LEN])?;
            let l = at + 8 + LOG_BATCH_HEADER_LEN;
            let flen = u32::from_le_bytes([body[l], body[l + 1], body[l + 2], body[l + 3]]) as usize;
            let f = l + 4;
            if f + flen > body.len() || flen != header.len - header.footer_offset {
                return Err(bad());
            }
            at = f + flen;
            Ok(Record { offset, header, footer: &body[f..f + flen] })
        })
    }
}

/// Loads the index of log file `id` if it exists and describes `file` as it is now (see
/// the module comment); None means: scan the log file.
pub(crate) fn load(
    fs: &dyn FileSystem,
    dir: &Path,
    id: FileId,
    file: &Arc<dyn RandomAccessFile>,
) -> Option<Loaded> {
    let path = path_of(dir, id);
    if !fs.file_exists(&path) {
        return None;
    }
    let r = fs.new_random_access_file(&path).ok()?;
    let n = r.size().ok()? as usize;
    if n < HEAD_LEN + 4 {
        return None;
    }
    let mut bytes = vec![0u8; n];
    if r.read_at(0, &mut bytes).ok()? != n {
        return None;
    }
    let (body, tail) = bytes.split_at(n - 4);
    if &body[..8] != MAGIC || crc32(body) != u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) {
        return None;
    }
    let file_size = u64_at(body, 8);
    let version = Version::from_u64(u64_at(body, 16))?;
    let alignment = u64_at(body, 24);
    let count = u64_at(body, 32);
    if file.size().ok()? != file_size {
        return None;
    }
    // The log file's own header must say the same.
    let mut fh = vec![0u8; LogFileFormat::max_encoded_len().min(file_size as usize)];
    let got = file.read_at(0, &mut fh).ok()?;
    let format = LogFileFormat::decode(&fh[..got]).ok()?;
    if format.version != version || format.alignment != alignment {
        return None;
    }
    let loaded = Loaded { format, bytes, count };
    // The last record must match the log file's bytes and end where the file does.
    let mut last = None;
    for rec in loaded.records() {
        last = Some(rec.ok()?);
    }
    match last {
        None => {
            if file_size != LogFileFormat::encoded_len(version) as u64 {
                return None;
            }
        }
        Some(rec) => {
            if rec.offset + rec.header.len as u64 != file_size {
                return None;
            }
            let mut on_disk = vec![0u8; rec.footer.len()];
            let at = rec.offset + rec.header.footer_offset as u64;
            if file.read_at(at, &mut on_disk).ok()? != on_disk.len() || on_disk != rec.footer {
                return None;
            }
        }
    }
    Some(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_not_log_files() {
        let id = FileId::new(crate::format::LogQueue::Append, 7);
        let p = path_of(Path::new("/d"), id);
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        assert_eq!(name, "0000000000000007.raftlog.idx");
        assert_eq!(parse_name(&name), Some(id));
        assert_eq!(FileId::parse_file_name(&name), None);
        assert_eq!(crate::format::parse_reserved_file_name(&name), None);
    }
}
