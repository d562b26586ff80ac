//! Tests of the log writer and reader together: framing, block padding, every recovery
//! mode against damaged files, recyclable records, and never panicking on any input.

use std::sync::Arc;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::format::{mask_crc, BLOCK_SIZE, HEADER_SIZE};
use super::{LogReader, LogWriter, WalRecoveryMode};
use crate::error::{ErrorKind, Result};
use crate::fs::{SequentialFile, WritableFile};

const ALL_MODES: [WalRecoveryMode; 4] = [
    WalRecoveryMode::TolerateCorruptedTailRecords,
    WalRecoveryMode::AbsoluteConsistency,
    WalRecoveryMode::PointInTime,
    WalRecoveryMode::SkipAnyCorruptedRecord,
];

/// A writable file in memory, shared so the test can look at the bytes.
#[derive(Clone, Default)]
struct MemFile(Arc<Mutex<Vec<u8>>>);

impl WritableFile for MemFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.0.lock().len() as u64
    }
}

/// A sequential file over bytes that hands out at most `chunk` bytes a read.
struct MemSeq {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
}

impl SequentialFile for MemSeq {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos).min(self.chunk);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn write_log(records: &[Vec<u8>]) -> Vec<u8> {
    let file = MemFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()), 7);
    for r in records {
        w.add_record(r).unwrap();
    }
    assert_eq!(w.file_size(), file.0.lock().len() as u64);
    let bytes = file.0.lock().clone();
    bytes
}

fn reader(data: &[u8], mode: WalRecoveryMode) -> LogReader {
    let file = MemSeq { data: data.to_vec(), pos: 0, chunk: usize::MAX };
    LogReader::new(Box::new(file), "000007.log".to_string(), 7, mode)
}

/// Reads every record; the error, if any, ends the list.
fn read_all(data: &[u8], mode: WalRecoveryMode) -> (Vec<Vec<u8>>, Option<crate::Error>, LogReader) {
    let mut r = reader(data, mode);
    let mut out = Vec::new();
    let mut rec = Vec::new();
    loop {
        match r.read_record(&mut rec) {
            Ok(true) => out.push(rec.clone()),
            Ok(false) => return (out, None, r),
            Err(e) => return (out, Some(e), r),
        }
    }
}

fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[test]
fn round_trips_records_of_every_awkward_size() {
    let mut records = vec![payload(0, 1), payload(1, 2)];
    for len in 32761..=32770 {
        records.push(payload(len, len as u8));
    }
    records.push(payload(100 * 1024, 9));
    let mut rng = SmallRng::seed_from_u64(1);
    for i in 0..3000 {
        records.push(payload(rng.gen_range(0..200), i as u8));
    }
    let data = write_log(&records);
    for mode in ALL_MODES {
        let (got, err, r) = read_all(&data, mode);
        assert!(err.is_none(), "{mode:?}: {err:?}");
        assert_eq!(got.len(), records.len());
        assert!(got == records, "{mode:?}: records differ");
        assert!(!r.stopped_at_corruption());
        assert_eq!(r.skipped_corruptions(), 0);
    }
    // Short reads from the file do not change anything.
    let file = MemSeq { data: data.clone(), pos: 0, chunk: 1000 };
    let mut r = LogReader::new(Box::new(file), "x".into(), 7, WalRecoveryMode::AbsoluteConsistency);
    let mut rec = Vec::new();
    for want in &records {
        assert!(r.read_record(&mut rec).unwrap());
        assert_eq!(&rec, want);
    }
    assert!(!r.read_record(&mut rec).unwrap());
    assert!(!r.read_record(&mut rec).unwrap(), "stays at the end");
}

#[test]
fn empty_log_reads_as_empty() {
    for mode in ALL_MODES {
        let (got, err, _) = read_all(&[], mode);
        assert!(got.is_empty() && err.is_none());
    }
}

#[test]
fn header_layout_and_crc() {
    let data = write_log(&[b"hello".to_vec()]);
    assert_eq!(data.len(), HEADER_SIZE + 5);
    assert_eq!(&data[4..7], &[5, 0, 1]);
    let crc = mask_crc(crc32c::crc32c(b"\x01hello"));
    assert_eq!(&data[..4], &crc.to_le_bytes());
    assert_eq!(&data[7..], b"hello");
}

#[test]
fn pads_block_tail_shorter_than_a_header() {
    // Leaves 3 bytes in block 0: they are zero-filled and the next record starts block 1.
    let first = payload(BLOCK_SIZE - HEADER_SIZE - 3, 3);
    let data = write_log(&[first.clone(), b"next".to_vec()]);
    assert_eq!(data.len(), BLOCK_SIZE + HEADER_SIZE + 4);
    assert_eq!(&data[BLOCK_SIZE - 3..BLOCK_SIZE], &[0, 0, 0]);
    assert_eq!(data[BLOCK_SIZE + 6], 1, "FULL record at the start of block 1");
    let mut r = reader(&data, WalRecoveryMode::AbsoluteConsistency);
    let mut rec = Vec::new();
    assert!(r.read_record(&mut rec).unwrap());
    assert_eq!(rec, first);
    assert_eq!(r.last_record_offset(), 0);
    assert!(r.read_record(&mut rec).unwrap());
    assert_eq!(rec, b"next");
    assert_eq!(r.last_record_offset(), BLOCK_SIZE as u64);

    // Exactly a header's worth left: an empty FIRST fragment ends block 0, as RocksDB writes.
    let first = payload(BLOCK_SIZE - 2 * HEADER_SIZE, 4);
    let data = write_log(&[first.clone(), b"abc".to_vec()]);
    assert_eq!(&data[BLOCK_SIZE - 3..BLOCK_SIZE], &[0, 0, 2], "empty FIRST header");
    assert_eq!(data[BLOCK_SIZE + 6], 4, "LAST fragment in block 1");
    let (got, err, r) = read_all(&data, WalRecoveryMode::AbsoluteConsistency);
    assert!(err.is_none());
    assert_eq!(got, vec![first, b"abc".to_vec()]);
    assert_eq!(r.last_record_offset(), (BLOCK_SIZE - HEADER_SIZE) as u64);
}

/// Three records: A (100 bytes, offset 0), B (50000 bytes: FIRST in block 0, LAST in
/// block 1, from offset 107), C (100 bytes, after B in block 1).
fn three_records() -> (Vec<Vec<u8>>, Vec<u8>) {
    let recs = vec![payload(100, 1), payload(50_000, 2), payload(100, 3)];
    let data = write_log(&recs);
    (recs, data)
}

fn c_offset(data: &[u8]) -> usize {
    data.len() - HEADER_SIZE - 100
}

#[test]
fn truncated_tail_in_each_mode() {
    let (recs, data) = three_records();
    for (cut, reason) in
        [(c_offset(&data) + 50, "truncated record body"), (c_offset(&data) + 3, "truncated header")]
    {
        let cut_data = &data[..cut];
        let (got, err, _) = read_all(cut_data, WalRecoveryMode::AbsoluteConsistency);
        assert_eq!(got, recs[..2].to_vec());
        let err = err.expect("absolute consistency rejects a cut tail");
        assert_eq!(err.kind(), ErrorKind::Corruption);
        assert_eq!(
            err.to_string(),
            format!("Corruption: {reason} in 000007.log at offset {}", c_offset(&data))
        );

        let (got, err, r) = read_all(cut_data, WalRecoveryMode::TolerateCorruptedTailRecords);
        assert_eq!((got, err.is_none(), r.stopped_at_corruption()), (recs[..2].to_vec(), true, false));

        let (got, err, r) = read_all(cut_data, WalRecoveryMode::PointInTime);
        assert_eq!((got, err.is_none(), r.stopped_at_corruption()), (recs[..2].to_vec(), true, true));

        let (got, err, r) = read_all(cut_data, WalRecoveryMode::SkipAnyCorruptedRecord);
        assert_eq!((got, err.is_none(), r.skipped_corruptions()), (recs[..2].to_vec(), true, 0));
    }
}

#[test]
fn file_ending_inside_a_fragmented_record() {
    let (recs, data) = three_records();
    let cut = &data[..BLOCK_SIZE]; // B's FIRST fragment only
    let (got, err, _) = read_all(cut, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(got, recs[..1].to_vec());
    assert_eq!(
        err.unwrap().to_string(),
        "Corruption: error reading trailing data in 000007.log at offset 107"
    );
    let (got, err, _) = read_all(cut, WalRecoveryMode::TolerateCorruptedTailRecords);
    assert_eq!((got, err), (recs[..1].to_vec(), None));
    let (got, err, r) = read_all(cut, WalRecoveryMode::PointInTime);
    assert_eq!((got, err, r.stopped_at_corruption()), (recs[..1].to_vec(), None, true));
    let (got, err, _) = read_all(cut, WalRecoveryMode::SkipAnyCorruptedRecord);
    assert_eq!((got, err), (recs[..1].to_vec(), None));
}

#[test]
fn flipped_byte_in_middle_record_in_each_mode() {
    let (recs, mut data) = three_records();
    data[107 + HEADER_SIZE + 10] ^= 0x40; // inside B's FIRST fragment
    for mode in [WalRecoveryMode::AbsoluteConsistency, WalRecoveryMode::TolerateCorruptedTailRecords] {
        let (got, err, _) = read_all(&data, mode);
        assert_eq!(got, recs[..1].to_vec());
        let err = err.unwrap();
        assert_eq!(err.kind(), ErrorKind::Corruption);
        assert_eq!(err.to_string(), "Corruption: checksum mismatch in 000007.log at offset 107");
    }
    let (got, err, r) = read_all(&data, WalRecoveryMode::PointInTime);
    assert_eq!((got, err, r.stopped_at_corruption()), (recs[..1].to_vec(), None, true));
    // Skip drops the rest of block 0, then B's orphaned LAST fragment, and goes on to C.
    let (got, err, r) = read_all(&data, WalRecoveryMode::SkipAnyCorruptedRecord);
    assert_eq!((got, err), (vec![recs[0].clone(), recs[2].clone()], None));
    assert_eq!(r.skipped_corruptions(), 2);
    assert!(!r.stopped_at_corruption());
}

#[test]
fn bad_length_in_each_mode() {
    let (recs, mut data) = three_records();
    // A's length claims more than block 0 holds (block 0 is whole, so not a cut tail).
    data[4] = 0xff;
    data[5] = 0xff;
    for mode in [WalRecoveryMode::AbsoluteConsistency, WalRecoveryMode::TolerateCorruptedTailRecords] {
        let (got, err, _) = read_all(&data, mode);
        assert!(got.is_empty());
        assert_eq!(err.unwrap().to_string(), "Corruption: bad record length in 000007.log at offset 0");
    }
    let (got, err, r) = read_all(&data, WalRecoveryMode::PointInTime);
    assert_eq!((got.len(), err, r.stopped_at_corruption()), (0, None, true));
    let (got, err, r) = read_all(&data, WalRecoveryMode::SkipAnyCorruptedRecord);
    assert_eq!((got, err, r.skipped_corruptions()), (vec![recs[2].clone()], None, 2));

    // A bad length in the last, partial block reads as a record cut short by a crash.
    let (recs, mut data) = three_records();
    let c = c_offset(&data);
    data[c + 4] = 0xf0;
    let (got, err, _) = read_all(&data, WalRecoveryMode::TolerateCorruptedTailRecords);
    assert_eq!((got, err), (recs[..2].to_vec(), None));
    let (_, err, _) = read_all(&data, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(
        err.unwrap().to_string(),
        format!("Corruption: truncated record body in 000007.log at offset {c}")
    );
}

#[test]
fn zeroed_tail_and_unknown_types() {
    // Zero-filled preallocated space after the records: skipped without complaint.
    let (recs, mut data) = three_records();
    data.extend_from_slice(&[0u8; 500]);
    for mode in ALL_MODES {
        let (got, err, _) = read_all(&data, mode);
        assert_eq!((&got, &err), (&recs, &None), "{mode:?}");
    }
    // A record with a valid checksum but an unknown type is corruption.
    let mut data = write_log(&[b"a".to_vec()]);
    let mut bad = vec![0u8; HEADER_SIZE];
    bad[4] = 1;
    bad[6] = 42;
    bad.push(b'z');
    let crc = mask_crc(crc32c::crc32c(&[42, b'z']));
    bad[..4].copy_from_slice(&crc.to_le_bytes());
    data.extend_from_slice(&bad);
    data.extend_from_slice(&write_log(&[b"b".to_vec()]));
    let (_, err, _) = read_all(&data, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(err.unwrap().to_string(), "Corruption: unknown record type 42 in 000007.log at offset 8");
    let (got, err, r) = read_all(&data, WalRecoveryMode::SkipAnyCorruptedRecord);
    assert_eq!((got, err, r.skipped_corruptions()), (vec![b"a".to_vec(), b"b".to_vec()], None, 1));
}

#[test]
fn recyclable_records() {
    // A log written with recyclable headers reads back whole.
    let recs = vec![payload(10, 1), payload(40_000, 2), payload(0, 3), payload(5, 4)];
    let file = MemFile::default();
    let mut w = LogWriter::new_recyclable(Box::new(file.clone()), 7);
    for r in &recs {
        w.add_record(r).unwrap();
    }
    let new_log = file.0.lock().clone();
    assert_eq!(new_log[6], 5, "recyclable FULL type");
    assert_eq!(&new_log[7..11], &7u32.to_le_bytes());
    for mode in ALL_MODES {
        let (got, err, _) = read_all(&new_log, mode);
        assert_eq!((&got, &err), (&recs, &None), "{mode:?}");
    }

    // Log 7 reusing the file of log 5, whose records had the same sizes at first: log 7
    // ends where a header of log 5 follows, and that old record ends the log.
    let old = MemFile::default();
    let mut w = LogWriter::new_recyclable(Box::new(old.clone()), 5);
    for r in &recs {
        w.add_record(&vec![b'o'; r.len()]).unwrap();
    }
    for i in 0..2000 {
        w.add_record(&payload(60, i as u8)).unwrap();
    }
    let old_log = old.0.lock().clone();
    let mut recycled = old_log.clone();
    recycled[..new_log.len()].copy_from_slice(&new_log);
    for mode in ALL_MODES {
        let (got, err, r) = read_all(&recycled, mode);
        assert!(got == recs && err.is_none(), "{mode:?}: {} records, {err:?}", got.len());
        assert!(!r.stopped_at_corruption());
        assert_eq!(r.skipped_corruptions(), 0);
    }
    // Where log 7 ends inside an old record, only Skip mode (the one RocksDB 7.8.3
    // allows with recycling) reads through: the rest of that block fails its checksum and
    // is skipped, and the old record starting the next block ends the log.
    let old = MemFile::default();
    let mut w = LogWriter::new_recyclable(Box::new(old.clone()), 5);
    for i in 0..2000 {
        w.add_record(&payload(61, i as u8)).unwrap();
    }
    let mut misaligned = old.0.lock().clone();
    misaligned[..new_log.len()].copy_from_slice(&new_log);
    let (got, err, r) = read_all(&misaligned, WalRecoveryMode::SkipAnyCorruptedRecord);
    assert!(got == recs && err.is_none(), "{} records, {err:?}", got.len());
    assert_eq!(r.skipped_corruptions(), 1);
    let (got, err, _) = read_all(&misaligned, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(got.len(), recs.len());
    assert_eq!(err.unwrap().kind(), ErrorKind::Corruption);

    // In a recycled file, Tolerate treats a checksum mismatch as the end of the log.
    let mut damaged = new_log.clone();
    damaged[11 + 10 + 11 + 5] ^= 1; // inside the second record
    let (got, err, _) = read_all(&damaged, WalRecoveryMode::TolerateCorruptedTailRecords);
    assert_eq!((got, err), (recs[..1].to_vec(), None));
    let (_, err, _) = read_all(&damaged, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(err.unwrap().kind(), ErrorKind::Corruption);
}

fn write_compressed_log(records: &[Vec<u8>]) -> Vec<u8> {
    let file = MemFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()), 7);
    w.add_compression_type_record(crate::table::compression::CompressionType::Zstd).unwrap();
    assert!(w.is_compressed());
    for r in records {
        w.add_record(r).unwrap();
    }
    let bytes = file.0.lock().clone();
    bytes
}

#[test]
fn compressed_wal_round_trips() {
    // Compressible records, an empty one, and one whose frame spans several blocks.
    let mut rng = SmallRng::seed_from_u64(11);
    let noise: Vec<u8> = (0..100_000).map(|_| rng.gen()).collect();
    let recs: Vec<Vec<u8>> =
        vec![b"abc".repeat(1000), Vec::new(), noise, b"x".to_vec(), b"hello world ".repeat(20_000)];
    let data = write_compressed_log(&recs);
    // The first record is SetCompressionType (type 9) naming ZSTD (7).
    assert_eq!(&data[4..7], &[4, 0, 9]);
    assert_eq!(&data[7..11], &7u32.to_le_bytes());
    assert!(data.len() < 100_000 + 20_000, "{} bytes", data.len());
    for mode in ALL_MODES {
        let (got, err, _) = read_all(&data, mode);
        assert!(err.is_none(), "{mode:?}: {err:?}");
        assert!(got == recs, "{mode:?}");
    }
}

#[test]
fn compressed_wal_damage_is_reported() {
    let recs: Vec<Vec<u8>> = vec![b"abc".repeat(100), b"def".repeat(100)];
    let data = write_compressed_log(&recs);
    // A frame damaged inside (CRC fixed up) does not decompress: Corruption or a stop.
    let mut bad = data.clone();
    let first = HEADER_SIZE + 4; // the first data record's header
    let len = u16::from_le_bytes([bad[first + 4], bad[first + 5]]) as usize;
    bad[first + HEADER_SIZE + len / 2] ^= 0x40;
    let crc = mask_crc(crc32c::crc32c(&bad[first + 6..first + HEADER_SIZE + len]));
    bad[first..first + 4].copy_from_slice(&crc.to_le_bytes());
    let (got, err, _) = read_all(&bad, WalRecoveryMode::AbsoluteConsistency);
    assert!(got.is_empty());
    assert_eq!(err.unwrap().kind(), ErrorKind::Corruption);
    let (got, err, r) = read_all(&bad, WalRecoveryMode::PointInTime);
    assert!(got.is_empty() && err.is_none() && r.stopped_at_corruption());
    let (got, err, _) = read_all(&bad, WalRecoveryMode::SkipAnyCorruptedRecord);
    assert!(got == recs[1..] && err.is_none());

    // An unknown compression type, and a SetCompressionType record after a data record.
    let mut unknown = vec![0u8; HEADER_SIZE];
    unknown[4] = 4;
    unknown[6] = 9;
    unknown.extend_from_slice(&4u32.to_le_bytes());
    let mut crc_in = vec![9u8];
    crc_in.extend_from_slice(&4u32.to_le_bytes());
    unknown[..4].copy_from_slice(&mask_crc(crc32c::crc32c(&crc_in)).to_le_bytes());
    let (_, err, _) = read_all(&unknown, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(err.unwrap().kind(), ErrorKind::Corruption);
    let mut late = write_log(&[b"plain".to_vec()]);
    late.extend_from_slice(&data[..HEADER_SIZE + 4]);
    let (got, err, _) = read_all(&late, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(got, vec![b"plain".to_vec()]);
    assert!(err.unwrap().to_string().contains("not the first record"));

    // The record must be a new log's first.
    let file = MemFile::default();
    let mut w = LogWriter::new(Box::new(file), 7);
    w.add_record(b"x").unwrap();
    assert!(w.add_compression_type_record(crate::table::compression::CompressionType::Zstd).is_err());
}

/// Reads to the end, bounding the number of calls so a reader that never ends fails.
fn drain(data: &[u8], mode: WalRecoveryMode) {
    let mut r = reader(data, mode);
    let mut rec = Vec::new();
    for _ in 0..data.len() + 10 {
        match r.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) | Err(_) => return,
        }
    }
    panic!("reader did not end");
}

#[test]
fn never_panics_on_damaged_input() {
    let mut rng = SmallRng::seed_from_u64(42);
    let mut records = Vec::new();
    for i in 0..60 {
        records.push(payload(rng.gen_range(0..1500), i));
    }
    records.push(payload(3000, 99));
    let data = write_log(&records);
    assert!(data.len() > BLOCK_SIZE);
    for cut in 0..=data.len() {
        for mode in ALL_MODES {
            drain(&data[..cut], mode);
        }
    }
    for _ in 0..3000 {
        let mut bad = data.clone();
        for _ in 0..rng.gen_range(1..6) {
            let i = rng.gen_range(0..bad.len());
            bad[i] ^= 1 << rng.gen_range(0..8);
        }
        if rng.gen_bool(0.3) {
            bad.truncate(rng.gen_range(0..bad.len()));
        }
        for mode in ALL_MODES {
            drain(&bad, mode);
        }
    }
    // Pure noise, including recyclable type bytes and huge lengths.
    for _ in 0..200 {
        let noise: Vec<u8> = (0..rng.gen_range(0..70_000)).map(|_| rng.gen()).collect();
        for mode in ALL_MODES {
            drain(&noise, mode);
        }
    }
}

#[test]
fn ldb_reads_what_we_write() {
    let Some(ldb) = shale_base::oracle::rocksdb_7_tool("ldb_reads_what_we_write", "ldb") else { return };
    // WriteBatch payloads encoded by hand: seq fixed64 | count fixed32 | records.
    fn batch(seq: u64, puts: &[(&[u8], &[u8])], dels: &[&[u8]]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&seq.to_le_bytes());
        b.extend_from_slice(&((puts.len() + dels.len()) as u32).to_le_bytes());
        for (k, v) in puts {
            b.push(0x1);
            crate::coding::put_length_prefixed_slice(&mut b, k);
            crate::coding::put_length_prefixed_slice(&mut b, v);
        }
        for k in dels {
            b.push(0x0);
            crate::coding::put_length_prefixed_slice(&mut b, k);
        }
        b
    }
    let big = vec![b'v'; 40_000];
    let records = vec![
        batch(1, &[(b"apple", b"red"), (b"kiwi", b"green")], &[]),
        batch(3, &[(b"big", &big)], &[b"apple"]),
        batch(5, &[(b"zebra", b"stripes")], &[]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.log");
    std::fs::write(&path, write_log(&records)).unwrap();
    let out = std::process::Command::new(ldb)
        .arg("dump_wal")
        .arg(format!("--walfile={}", path.display()))
        .arg("--header")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ldb failed: {stdout} {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[1].starts_with("1,2,"), "{stdout}");
    assert!(lines[1].contains("PUT(0) : 0x6170706C65") && lines[1].contains("PUT(0) : 0x6B697769"));
    assert!(lines[2].starts_with("3,2,") && lines[2].contains("DELETE(0) : 0x6170706C65"), "{stdout}");
    assert!(lines[3].starts_with("5,1,") && lines[3].contains("PUT(0) : 0x7A65627261"), "{stdout}");
}

/// One physical record of type `ty` (legacy header; recyclable header with log number 7 when
/// the type is a recyclable one).
fn physical(ty: u8, payload: &[u8]) -> Vec<u8> {
    let recyclable = super::format::is_recyclable_type(ty);
    let mut rec = vec![0u8; 4];
    rec.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    rec.push(ty);
    if recyclable {
        rec.extend_from_slice(&7u32.to_le_bytes());
    }
    rec.extend_from_slice(payload);
    let crc = mask_crc(crc32c::crc32c(&rec[6..]));
    rec[..4].copy_from_slice(&crc.to_le_bytes());
    rec
}

#[test]
fn rocksdb_8_to_11_record_types() {
    // Timestamp sizes that are all zero, predecessor WAL info and an unknown type with the
    // safe-to-ignore bit, between two batches: skipped in every mode.
    let mut zero_ts = Vec::new();
    for cf in [0u32, 3] {
        zero_ts.extend_from_slice(&cf.to_le_bytes());
        zero_ts.extend_from_slice(&0u16.to_le_bytes());
    }
    let mut data = write_log(&[b"a".to_vec()]);
    data.extend_from_slice(&physical(10, &zero_ts));
    data.extend_from_slice(&physical(130, &[9u8; 24]));
    data.extend_from_slice(&physical(200, b"future"));
    data.extend_from_slice(&physical(1, b"b"));
    for mode in ALL_MODES {
        let (got, err, r) = read_all(&data, mode);
        assert_eq!((got, err), (vec![b"a".to_vec(), b"b".to_vec()], None), "{mode:?}");
        assert_eq!(r.skipped_corruptions(), 0);
    }
    // Their recyclable forms carry the log number in an 11-byte header.
    let mut data = physical(5, b"a");
    data.extend_from_slice(&physical(11, &zero_ts));
    data.extend_from_slice(&physical(131, &[1u8; 24]));
    data.extend_from_slice(&physical(5, b"b"));
    let (got, err, _) = read_all(&data, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!((got, err), (vec![b"a".to_vec(), b"b".to_vec()], None));
    // A column family with timestamps: the reader records its size for recovery.
    let mut ts = 2u32.to_le_bytes().to_vec();
    ts.extend_from_slice(&8u16.to_le_bytes());
    let mut data = write_log(&[b"a".to_vec()]);
    data.extend_from_slice(&physical(10, &ts));
    data.extend_from_slice(&physical(1, b"b"));
    let mut r = reader(&data, WalRecoveryMode::PointInTime);
    let mut rec = Vec::new();
    assert!(r.read_record(&mut rec).unwrap());
    assert!(r.recorded_timestamp_sizes().is_empty());
    assert!(r.read_record(&mut rec).unwrap());
    assert_eq!((rec.as_slice(), r.recorded_timestamp_sizes()), (&b"b"[..], &[(2u32, 8u16)][..]));
    // Malformed payloads are corruption.
    for (ty, payload) in [(10u8, vec![0u8; 5]), (130, vec![0u8; 23])] {
        let mut data = write_log(&[b"a".to_vec()]);
        data.extend_from_slice(&physical(ty, &payload));
        let (_, err, _) = read_all(&data, WalRecoveryMode::AbsoluteConsistency);
        assert_eq!(err.unwrap().kind(), ErrorKind::Corruption, "type {ty}");
    }
}

/// `track_and_verify_wals`: the writer notes batch sequence numbers and writes the
/// predecessor record (legacy type 130, recyclable 131) after which the log still counts as
/// empty; the reader checks it against what recovery observed, per mode.
#[test]
fn predecessor_wal_record_is_written_and_checked() {
    use super::{PredecessorCheck, PredecessorWalInfo};
    let batch = |seq: u64| {
        let mut b = seq.to_le_bytes().to_vec();
        b.extend_from_slice(&[1, 0, 0, 0, 1, 1, b'k', 1, b'v']);
        b
    };
    // The first WAL: two batches at sequences 5 and 9.
    let first = MemFile::default();
    let mut w = LogWriter::new(Box::new(first.clone()), 4).with_track_and_verify_wals(true);
    w.add_record(&batch(5)).unwrap();
    w.add_record(&batch(9)).unwrap();
    let info = w.predecessor_info();
    assert_eq!(info, PredecessorWalInfo { log_number: 4, size_bytes: first.size(), last_seqno_recorded: 9 });
    // Without tracking no sequence is noted and no record written.
    let mut off = LogWriter::new(Box::new(MemFile::default()), 4);
    off.add_record(&batch(5)).unwrap();
    assert_eq!(off.predecessor_info().last_seqno_recorded, 0);
    off.add_predecessor_wal_info(&info).unwrap();

    for recycle in [false, true] {
        let next = MemFile::default();
        let mut w = LogWriter::new(Box::new(next.clone()), 7)
            .with_track_and_verify_wals(true)
            .with_recycling(recycle);
        w.add_predecessor_wal_info(&info).unwrap();
        assert!(w.is_empty_log(), "the predecessor record is no logical record");
        let data = next.0.lock().clone();
        let (ty, header) = if recycle { (131u8, 11) } else { (130u8, 7) };
        assert_eq!(data.len(), header + 24);
        assert_eq!(data[6], ty);
        assert_eq!(&data[header..header + 8], &4u64.to_le_bytes());
        w.add_record(&batch(10)).unwrap();
        assert!(!w.is_empty_log());
        let data = next.0.lock().clone();

        let read = |check: Option<PredecessorCheck>, mode| {
            let file = MemSeq { data: data.clone(), pos: 0, chunk: usize::MAX };
            let mut r =
                LogReader::new(Box::new(file), "000007.log".into(), 7, mode).with_predecessor_check(check);
            let mut rec = Vec::new();
            let got = r.read_record(&mut rec);
            (got, r)
        };
        let check = |observed, min| Some(PredecessorCheck { observed, min_wal_number_to_keep: min });
        // Matching, or no check: the batch is read.
        for c in [None, check(Some(info), 0), check(None, 5)] {
            assert!(read(c, WalRecoveryMode::AbsoluteConsistency).0.unwrap());
        }
        // The first WAL replayed names a predecessor recovery needs: missing.
        let (got, r) = read(check(None, 4), WalRecoveryMode::AbsoluteConsistency);
        let e = got.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.to_string().contains("Missing WAL of log number 4"), "{e}");
        assert_eq!(r.corrupted_log_number(), Some(4));
        // Point in time: replay stops there; skipping mode: not checked.
        let (got, r) = read(check(None, 4), WalRecoveryMode::PointInTime);
        assert!(!got.unwrap());
        assert!(r.stopped_at_corruption());
        assert!(read(check(None, 4), WalRecoveryMode::SkipAnyCorruptedRecord).0.unwrap());
        // Each field compared, in RocksDB's order and words.
        let other = |f: fn(&mut PredecessorWalInfo)| {
            let mut o = info;
            f(&mut o);
            read(check(Some(o), 0), WalRecoveryMode::TolerateCorruptedTailRecords).0.unwrap_err().to_string()
        };
        let e = other(|o| o.log_number = 3);
        assert!(
            e.contains("Mismatched predecessor log number of WAL file 000007.log Recorded 4. Observed 3"),
            "{e}"
        );
        let e = other(|o| o.last_seqno_recorded = 8);
        assert!(e.contains("Mismatched last sequence number recorded in the WAL of log number 4. Recorded 9. Observed 8."), "{e}");
        let e = other(|o| o.size_bytes += 1);
        assert!(
            e.contains(&format!(
                "Mismatched size of the WAL of log number 4. Recorded {} bytes. Observed {} bytes.",
                info.size_bytes,
                info.size_bytes + 1
            )),
            "{e}"
        );
    }
}
