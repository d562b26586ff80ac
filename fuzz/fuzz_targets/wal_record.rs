//! Fuzzes the log reader (`wal::LogReader`, the framing of WALs and MANIFESTs) in all four
//! recovery modes, and decodes every record it returns as a `WriteBatch`.
//!
//! ```text
//! input = log number (1 byte, for recyclable records) | log file bytes
//! ```
//! Invariants checked, from the reader's documented mode table:
//! - PointInTime and SkipAnyCorruptedRecord never report Corruption (they stop or skip);
//! - a file AbsoluteConsistency reads without error reads the same in Tolerate and
//!   PointInTime (not necessarily in Skip: a recyclable record of another log number ends
//!   the log in the first three modes but is skipped over in Skip);
//! - a file TolerateCorruptedTailRecords reads without error reads the same in PointInTime;
//! - what PointInTime returns is a prefix of what SkipAnyCorruptedRecord returns.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use shale::batch::WriteBatchIterator;
use shale::wal::{LogReader, WalRecoveryMode};
use shale::{ErrorKind, WriteBatch};
use shale_fuzz::BytesSeqFile;

struct Count(usize);

impl WriteBatchIterator for Count {
    fn put(&mut self, key: Box<[u8]>, value: Box<[u8]>) {
        self.0 += key.len() + value.len() + 1;
    }
    fn delete(&mut self, key: Box<[u8]>) {
        self.0 += key.len() + 1;
    }
}

/// Reads every record in `mode`; returns them and the final error, if any.
fn read_all(
    file: &Arc<Vec<u8>>,
    log_number: u64,
    mode: WalRecoveryMode,
) -> (Vec<Vec<u8>>, Option<ErrorKind>) {
    let mut r =
        LogReader::new(Box::new(BytesSeqFile::new(file.clone())), "fuzz.log".into(), log_number, mode);
    let mut records = Vec::new();
    let mut rec = Vec::new();
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => {
                // Every record holds at least one byte of the file per fragment header.
                assert!(records.len() <= file.len(), "more records than bytes");
                assert!(r.last_record_offset() < file.len() as u64, "record offset past the end");
                records.push(rec.clone());
            }
            Ok(false) => break,
            Err(e) => {
                let mut again = Vec::new();
                assert!(matches!(r.read_record(&mut again), Ok(false)), "a read after an error must end");
                return (records, Some(e.kind()));
            }
        }
    }
    (records, None)
}

fn decode_batch(rec: &[u8]) {
    let b = WriteBatch::from_data(rec);
    let _ = (b.count(), b.sequence(), b.len(), b.has_merge());
    let mut seen = 0usize;
    let result = b.for_each(&mut |e| {
        seen += 1;
        assert!(e.key.len() + e.value.len() <= rec.len());
        Ok(())
    });
    if result.is_ok() {
        assert_eq!(seen as u32, b.count(), "for_each succeeded with a different count");
    }
    let mut c = Count(0);
    b.iterate(&mut c);
    assert!(c.0 <= rec.len() * 2);
}

fuzz_target!(|data: &[u8]| {
    let Some((&log_number, body)) = data.split_first() else { return };
    let file = Arc::new(body.to_vec());
    let log_number = log_number as u64;
    let tolerate = read_all(&file, log_number, WalRecoveryMode::TolerateCorruptedTailRecords);
    let absolute = read_all(&file, log_number, WalRecoveryMode::AbsoluteConsistency);
    let pit = read_all(&file, log_number, WalRecoveryMode::PointInTime);
    let skip = read_all(&file, log_number, WalRecoveryMode::SkipAnyCorruptedRecord);

    for (name, r) in [("PointInTime", &pit), ("SkipAnyCorruptedRecord", &skip)] {
        assert!(r.1 != Some(ErrorKind::Corruption), "{name} reported Corruption");
    }
    if absolute.1.is_none() {
        assert_eq!(tolerate, absolute, "Tolerate differs from a clean Absolute read");
        assert_eq!(pit, absolute, "PointInTime differs from a clean Absolute read");
    }
    if tolerate.1.is_none() {
        assert_eq!(pit.0, tolerate.0, "PointInTime differs from a clean Tolerate read");
    }
    if pit.1.is_none() {
        assert!(
            skip.0.len() >= pit.0.len() && skip.0[..pit.0.len()] == pit.0[..],
            "PointInTime is not a prefix of Skip"
        );
    }

    for rec in skip.0.iter().chain(&absolute.0) {
        decode_batch(rec);
    }
});
