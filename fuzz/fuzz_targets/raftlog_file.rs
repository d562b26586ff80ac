//! Fuzzes shale-raftlog's reading of a log file (raft-engine's format): the file header,
//! batch headers, item footers (varints, lengths, counts) and entries blobs (CRC32, LZ4).
//!
//! ```text
//! input = flags (1 byte: bit 0 = file seq 1 or 2 (V2 signature), bit 1 = verify every
//!         entries blob) | log file bytes
//! ```
//! Invariants besides "no panic, no hang, no OOM":
//! - batches come at strictly increasing offsets inside the file, each within its bounds;
//! - a scan that verifies every blob returns a prefix of the batches of one that verifies
//!   only the last (it may stop earlier, never later or elsewhere);
//! - the item decoder and blob decoder run directly on the input too, without panicking.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use shale::fs::{FileSystem, MemFileSystem};
use shale_raftlog::log_batch::{decode_entries_block, decode_items, BatchHeader, CompressionType};
use shale_raftlog::recovery::scan_file;
use shale_raftlog::{FileId, LogQueue};

fn scan(data: &[u8], id: FileId, verify_all: bool) -> Vec<(u64, usize)> {
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let p = Path::new("/d/f");
    let mut w = fs.new_writable_file(p).unwrap();
    w.append(data).unwrap();
    w.sync().unwrap();
    let f = fs.new_random_access_file(p).unwrap();
    let mut out = Vec::new();
    let r = scan_file(f, id, 4096, verify_all, |b| {
        out.push((b.offset, b.header.len));
        Ok(())
    });
    if r.is_err() {
        return out;
    }
    let mut prev_end = 0u64;
    for &(off, len) in &out {
        assert!(off >= prev_end, "batch at {off} overlaps the previous one ending at {prev_end}");
        assert!(off + len as u64 <= data.len() as u64, "batch at {off} of {len} bytes runs past the file");
        prev_end = off + len as u64;
    }
    out
}

fuzz_target!(|input: &[u8]| {
    let Some((&flags, data)) = input.split_first() else { return };
    let id = FileId::new(LogQueue::Append, 1 + (flags & 1) as u64);
    let last_only = scan(data, id, false);
    let all = scan(data, id, true);
    assert!(all.len() <= last_only.len() && all[..] == last_only[..all.len()]);
    if flags & 2 != 0 {
        let _ = BatchHeader::decode(data);
        let _ = decode_items(data, None);
        let _ = decode_items(data, Some(1));
        let _ = decode_entries_block(data, CompressionType::None);
        let _ = decode_entries_block(data, CompressionType::Lz4);
    }
});
