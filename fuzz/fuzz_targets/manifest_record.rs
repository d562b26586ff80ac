//! Fuzzes MANIFEST record decoding (`VersionEdit::decode`) with a round-trip property, and
//! MANIFEST replay (`version::recover`) over a log of fuzzed records.
//!
//! ```text
//! input = mode | body
//! mode bit 0 = 0 : body is one record
//! mode bit 0 = 1 : body is (varint32 length | record)*; each record is decoded, and all of
//!                  them are written as MANIFEST-000001 (log framing) with a CURRENT naming
//!                  it in an in-memory file system, then recovered
//! ```
//! Round trip: an edit that decodes re-encodes to bytes that decode to the same edit
//! (up to the encoder's normalisation: deleted files sorted and deduplicated), and
//! encoding that edit again gives the same bytes.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use shale::coding::Decoder;
use shale::fs::{FileSystem, MemFileSystem};
use shale_engine::version::{recover, set_current_file, VersionEdit};
use shale::wal::LogWriter;

fn round_trip(rec: &[u8]) {
    let Ok(edit) = VersionEdit::decode(rec) else { return };
    let bytes = edit.encoded();
    let again = VersionEdit::decode(&bytes).expect("a re-encoded edit decodes");
    let mut want = edit.clone();
    want.deleted_files.sort_unstable();
    want.deleted_files.dedup();
    assert_eq!(again, want, "decode(encode(edit)) != edit");
    assert_eq!(again.encoded(), bytes, "encoding is not stable");
}

fn replay(records: &[&[u8]]) {
    let fs = MemFileSystem::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).expect("mkdir");
    let file = fs.new_writable_file(&dir.join("MANIFEST-000001")).expect("create");
    let mut w = LogWriter::new(file, 0);
    for r in records {
        w.add_record(r).expect("append");
    }
    w.sync().expect("sync");
    set_current_file(&fs, dir, 1, 2).expect("CURRENT");
    if let Ok(m) = recover(&fs, dir) {
        // Every live file came from some record, so there cannot be more than records hold.
        let files: usize = m.column_families.values().map(|cf| cf.files.len()).sum();
        let total: usize = records.iter().map(|r| r.len()).sum();
        assert!(files <= total);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else { return };
    if mode & 1 == 0 {
        round_trip(body);
        return;
    }
    let mut d = Decoder::new(body);
    let mut records = Vec::new();
    while let Some(r) = d.length_prefixed() {
        records.push(r);
        if records.len() > 64 {
            break;
        }
    }
    for r in &records {
        round_trip(r);
    }
    replay(&records);
});
