//! Tests of the Batch encoding: round trips of every operation, RocksDB's exact
//! bytes, and corrupt or unsupported input (rust-rocksdb's `iterate` is tested with the
//! facade's wrapper).

use super::*;
use crate::error::ErrorKind;

#[derive(Debug, PartialEq)]
struct Owned {
    cf: u32,
    t: ValueType,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn entries(b: &Batch) -> Result<Vec<Owned>> {
    let mut out = Vec::new();
    b.for_each(&mut |e| {
        out.push(Owned { cf: e.cf_id, t: e.value_type, key: e.key.to_vec(), value: e.value.to_vec() });
        Ok(())
    })?;
    Ok(out)
}

fn o(cf: u32, t: ValueType, key: &[u8], value: &[u8]) -> Owned {
    Owned { cf, t, key: key.to_vec(), value: value.to_vec() }
}

fn every_op() -> Batch {
    let cf = 3;
    let mut b = Batch::new();
    b.put(b"k1", b"v1");
    b.put_cf(cf, "k2", "v2");
    b.delete(b"k3");
    b.delete_cf(cf, b"k4");
    b.single_delete(b"k5");
    b.single_delete_cf(cf, b"k6");
    b.put_log_data(b"blob");
    b.delete_range(b"a", b"m");
    b.delete_range_cf(cf, b"n", b"z");
    b.merge(b"k7", b"+1");
    b.merge_cf(300, b"k8", b"+2");
    b.put(b"", b"");
    b
}

fn every_op_entries() -> Vec<Owned> {
    use ValueType::*;
    vec![
        o(0, Value, b"k1", b"v1"),
        o(3, Value, b"k2", b"v2"),
        o(0, Deletion, b"k3", b""),
        o(3, Deletion, b"k4", b""),
        o(0, SingleDeletion, b"k5", b""),
        o(3, SingleDeletion, b"k6", b""),
        o(0, RangeDeletion, b"a", b"m"),
        o(3, RangeDeletion, b"n", b"z"),
        o(0, Merge, b"k7", b"+1"),
        o(300, Merge, b"k8", b"+2"),
        o(0, Value, b"", b""),
    ]
}

#[test]
fn new_batch_is_an_empty_header() {
    let b = Batch::default();
    assert_eq!(b.data(), &[0u8; 12]);
    assert_eq!((b.len(), b.is_empty(), b.size_in_bytes()), (0, true, 12));
    assert_eq!(entries(&b).unwrap(), vec![]);
    assert!(!b.has_merge());
}

#[test]
fn every_operation_round_trips() {
    let mut b = every_op();
    b.set_sequence(77);
    assert_eq!(b.len(), 11, "LogData is not counted");
    assert_eq!(b.sequence(), 77);
    assert!(b.has_merge());
    assert_eq!(entries(&b).unwrap(), every_op_entries());
    let copy = Batch::from_data(b.data());
    assert_eq!(copy.data(), b.data());
    assert_eq!((copy.sequence(), copy.count()), (77, 11));
    assert_eq!(entries(&copy).unwrap(), every_op_entries());
    assert!(copy.has_merge());
    let mut plain = Batch::new();
    plain.put(b"x", b"y");
    assert!(!Batch::from_data(plain.data()).has_merge());
}

#[test]
fn encoding_matches_rocksdb_bytes() {
    // Derived from WriteBatchInternal::Put/Delete/DeleteRange/PutLogData in RocksDB's
    // db/write_batch.cc: fixed64 sequence, fixed32 count, then tag [varint cf] and
    // varint32-length-prefixed slices.
    let mut b = Batch::new();
    b.set_sequence(0x0102);
    b.put(b"ab", b"xyz");
    b.delete_cf(200, b"k");
    b.put_log_data(b"L");
    b.delete_range(b"a", b"b");
    b.single_delete(b"s");
    #[rustfmt::skip]
    let want: Vec<u8> = vec![
        0x02, 0x01, 0, 0, 0, 0, 0, 0,   // sequence 0x0102
        4, 0, 0, 0,                     // count 4
        0x01, 2, b'a', b'b', 3, b'x', b'y', b'z',
        0x04, 0xc8, 0x01, 1, b'k',      // cf 200 = varint c8 01
        0x03, 1, b'L',
        0x0f, 1, b'a', 1, b'b',
        0x07, 1, b's',
    ];
    assert_eq!(b.data(), &want[..]);
    assert_eq!(b.size_in_bytes(), want.len());
}

#[test]
fn append_concatenates_and_adds_counts() {
    let mut a = Batch::new();
    a.set_sequence(10);
    a.put(b"a", b"1");
    let mut b = Batch::new();
    b.set_sequence(99);
    b.delete(b"b");
    b.merge(b"c", b"2");
    a.append(&b);
    a.append(&Batch::new());
    assert_eq!((a.sequence(), a.count()), (10, 3));
    assert!(a.has_merge());
    use ValueType::*;
    assert_eq!(
        entries(&a).unwrap(),
        vec![o(0, Value, b"a", b"1"), o(0, Deletion, b"b", b""), o(0, Merge, b"c", b"2")]
    );
    a.clear();
    assert_eq!(a.data(), &[0u8; 12]);
    assert!(!a.has_merge());
}

#[test]
fn callback_errors_stop_for_each() {
    let b = every_op();
    let mut seen = 0;
    let err = b
        .for_each(&mut |_| {
            seen += 1;
            if seen == 2 {
                Err(Error::invalid_argument("stop"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
    assert_eq!((seen, err.kind()), (2, ErrorKind::InvalidArgument));
}

#[test]
fn corrupt_batches_are_reported() {
    let short = Batch::from_data(&[0u8; 11]);
    let err = entries(&short).unwrap_err();
    assert_eq!(err.to_string(), "Corruption: malformed WriteBatch (too small)");
    assert_eq!((short.count(), short.sequence()), (0, 0));

    let mut b = Batch::new();
    b.put(b"key", b"value");
    let data = b.data().to_vec();
    // Cut inside the value.
    let err = entries(&Batch::from_data(&data[..data.len() - 1])).unwrap_err();
    assert_eq!(err.to_string(), "Corruption: bad WriteBatch Put (tag 0x1) at offset 12");
    // Count says 2, one record present.
    let mut wrong = data.clone();
    wrong[8] = 2;
    let err = entries(&Batch::from_data(&wrong)).unwrap_err();
    assert_eq!(err.to_string(), "Corruption: WriteBatch has wrong count");
    // Unknown tag.
    let mut unknown = data.clone();
    unknown.push(0x42);
    let err = entries(&Batch::from_data(&unknown)).unwrap_err();
    assert_eq!(err.to_string(), "Corruption: unknown WriteBatch tag 0x42 at offset 23");
    // Truncated column family id.
    let mut cf = Batch::new().data().to_vec();
    cf.extend_from_slice(&[tag::CF_VALUE, 0x80]);
    let err = entries(&Batch::from_data(&cf)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    // Truncated LogData.
    let mut blob = Batch::new().data().to_vec();
    blob.extend_from_slice(&[tag::LOG_DATA, 5, b'x']);
    let err = entries(&Batch::from_data(&blob)).unwrap_err();
    assert_eq!(err.to_string(), "Corruption: bad WriteBatch Blob (tag 0x3) at offset 12");
}

#[test]
fn unsupported_tags_are_not_supported() {
    for t in [0x12u8, 0x13, 0x14] {
        let mut data = Batch::new().data().to_vec();
        data.extend_from_slice(&[t, 1, b'x', 1, b'y']);
        let err = entries(&Batch::from_data(&data)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotSupported, "tag {t:#x}");
        assert!(err.to_string().contains(&format!("{t:#x}")), "{err}");
    }
    // A Noop is skipped and not counted.
    let mut data = Batch::new().data().to_vec();
    data.push(tag::NOOP);
    assert_eq!(entries(&Batch::from_data(&data)).unwrap(), vec![]);
}

#[test]
fn two_phase_commit_markers_frame_a_prepared_batch() {
    use super::{Marker, WalRecord};
    let mut ops = Batch::new();
    ops.put(b"k", b"v");
    ops.delete(b"d");
    let mut rec = Batch::prepare_section(b"xid1", &ops);
    rec.set_sequence(7);
    // header | 0x9 | 2 records | 0xA len "xid1"
    assert_eq!(rec.data()[HEADER_SIZE], tag::BEGIN_PREPARE_XID);
    assert!(rec.data().ends_with(&[tag::END_PREPARE_XID, 4, b'x', b'i', b'd', b'1']));
    assert_eq!(rec.count(), 2);
    // Plain iteration skips the markers.
    assert_eq!(entries(&rec).unwrap().len(), 2);
    let mut seen = Vec::new();
    rec.for_each_wal_record(&mut |r| {
        seen.push(match r {
            WalRecord::Entry(e) => format!("{:?}", e.value_type),
            WalRecord::Marker(Marker::BeginPrepare) => "begin".to_string(),
            WalRecord::Marker(Marker::EndPrepare(x)) => format!("end {}", String::from_utf8_lossy(x)),
            WalRecord::Marker(m) => format!("{m:?}"),
        });
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, vec!["begin", "Value", "Deletion", "end xid1"]);
    // A commit: the WAL part is the marker alone, with count 0.
    let mut c = Batch::marker(true, b"xid1");
    c.mark_wal_termination_point();
    c.append(&ops);
    c.set_sequence(9);
    let wal = Batch::from_data(&c.wal_data());
    assert_eq!(wal.count(), 0);
    assert_eq!(wal.sequence(), 9);
    assert_eq!(&wal.data()[HEADER_SIZE..], &[tag::COMMIT_XID, 4, b'x', b'i', b'd', b'1']);
    assert_eq!(entries(&c).unwrap().len(), 2);
    // A truncated xid is Corruption.
    let mut bad = Batch::new().data().to_vec();
    bad.extend_from_slice(&[tag::ROLLBACK_XID, 9, b'x']);
    assert_eq!(entries(&Batch::from_data(&bad)).unwrap_err().kind(), ErrorKind::Corruption);
}

#[test]
fn commit_with_timestamp_is_decoded_as_rocksdb_lays_it_out() {
    use super::{Marker, WalRecord};
    // RocksDB's MarkCommitWithTimestamp: 0x15 | varint len | commit_ts | varint len | xid.
    let mut data = Batch::new().data().to_vec();
    data.extend_from_slice(&[0x15, 8, 1, 0, 0, 0, 0, 0, 0, 0, 2, b'x', b'1']);
    let b = Batch::from_data(&data);
    assert_eq!(Batch::commit_with_timestamp_marker(b"x1", &1u64.to_le_bytes()).data(), b.data());
    let mut seen = Vec::new();
    b.for_each_wal_record(&mut |r| {
        if let WalRecord::Marker(Marker::CommitWithTimestamp { xid, ts }) = r {
            seen.push((xid.to_vec(), ts.to_vec()));
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, vec![(b"x1".to_vec(), 1u64.to_le_bytes().to_vec())]);
    // Not counted: plain iteration sees no entry.
    assert_eq!(entries(&b).unwrap(), vec![]);
    // A truncated timestamp or xid is Corruption.
    for cut in [3, 11, 12] {
        let bad = Batch::from_data(&data[..HEADER_SIZE + cut]);
        let err = entries(&bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "cut {cut}: {err}");
    }
}

#[test]
fn with_commit_timestamp_stamps_keys_of_families_with_timestamps() {
    // Family 0 has no timestamps, family 2 has 8-byte ones (the prepared keys carry a
    // placeholder timestamp the commit replaces).
    let ph = [0xffu8; 8];
    let key = |k: &[u8]| [k, &ph[..]].concat();
    let mut b = Batch::new();
    b.put(b"plain", b"v0");
    b.put_cf(2, key(b"a"), b"va");
    b.delete_cf(2, key(b"b"));
    b.merge_cf(2, key(b"c"), b"m");
    b.delete_range_cf(2, &key(b"d"), &key(b"e"));
    let ts = 7u64.to_le_bytes();
    let sizes = |cf: u32| if cf == 2 { 8 } else { 0 };
    let got = entries(&b.with_commit_timestamp(&ts, &sizes).unwrap()).unwrap();
    let stamped = |k: &[u8]| [k, &ts[..]].concat();
    assert_eq!(
        got,
        vec![
            o(0, ValueType::Value, b"plain", b"v0"),
            o(2, ValueType::Value, &stamped(b"a"), b"va"),
            o(2, ValueType::Deletion, &stamped(b"b"), b""),
            o(2, ValueType::Merge, &stamped(b"c"), b"m"),
            o(2, ValueType::RangeDeletion, &stamped(b"d"), &stamped(b"e")),
        ]
    );
    // RocksDB's TimestampUpdater: a size other than the family's is InvalidArgument.
    let err = b.with_commit_timestamp(&[1, 2, 3, 4], &sizes).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("timestamp size mismatch"), "{err}");
    // A key shorter than its timestamp is Corruption, not a panic.
    let mut short = Batch::new();
    short.put_cf(2, b"abc", b"v");
    assert_eq!(short.with_commit_timestamp(&ts, &sizes).unwrap_err().kind(), ErrorKind::Corruption);
}

#[test]
fn writes_on_a_short_batch_do_not_panic() {
    let mut b = Batch::from_data(&[7]);
    b.put(b"k", b"v");
    assert_eq!(b.count(), 1);
    assert_eq!(entries(&b).unwrap(), vec![o(0, ValueType::Value, b"k", b"v")]);
}

#[test]
fn random_bytes_never_panic() {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(7);
    let good = every_op();
    for _ in 0..20_000 {
        let mut data = good.data().to_vec();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..data.len());
            data[i] = rng.gen();
        }
        data.truncate(rng.gen_range(0..=data.len()));
        let b = Batch::from_data(&data);
        let _ = entries(&b);
        let _ = b.has_merge();
        let _ = b.records().count();
    }
}

#[test]
fn ldb_decodes_our_batches() {
    use crate::fs::WritableFile;
    let Some(ldb) = shale_base::oracle::rocksdb_7_tool("ldb_decodes_our_batches", "ldb") else { return };
    struct File(std::fs::File, u64);
    impl WritableFile for File {
        fn append(&mut self, data: &[u8]) -> Result<()> {
            use std::io::Write;
            self.1 += data.len() as u64;
            self.0.write_all(data).map_err(|e| Error::io("write", e))
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn size(&self) -> u64 {
            self.1
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000012.log");
    let mut w = crate::wal::LogWriter::new(Box::new(File(std::fs::File::create(&path).unwrap(), 0)), 12);
    let mut b = every_op();
    b.set_sequence(1000);
    w.add_record(b.data()).unwrap();
    let mut b2 = Batch::new();
    b2.set_sequence(1011);
    b2.put(b"last", b"one");
    w.add_record(b2.data()).unwrap();
    w.flush().unwrap();
    drop(w);
    let out = std::process::Command::new(ldb)
        .args(["dump_wal", &format!("--walfile={}", path.display()), "--header", "--print_value"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let row = lines[1];
    assert!(row.starts_with("1000,11,"), "{row}");
    for part in [
        "PUT(0) : 0x6B31 : 0x7631",
        "PUT(3) : 0x6B32 : 0x7632",
        "DELETE(0) : 0x6B33",
        "DELETE(3) : 0x6B34",
        "SINGLE_DELETE(0) : 0x6B35",
        "SINGLE_DELETE(3) : 0x6B36",
        "DELETE_RANGE(0) : 0x61 0x6D",
        "DELETE_RANGE(3) : 0x6E 0x7A",
        "MERGE(0) : 0x6B37 : 0x2B31",
        "MERGE(300) : 0x6B38 : 0x2B32",
    ] {
        assert!(row.contains(part), "missing {part:?} in {row}");
    }
    assert!(
        lines[2].starts_with("1011,1,") && lines[2].contains("PUT(0) : 0x6C617374 : 0x6F6E65"),
        "{stdout}"
    );
}

#[test]
fn wide_column_entities_decode() {
    let mut b = Batch::new();
    b.put_entity(b"k", &[(b"b", b"2"), (b"", b"d")]).unwrap();
    let entity = crate::wide_columns::serialize(&[(b"", b"d"), (b"b", b"2")]).unwrap();
    let got = entries(&b).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(b.data()[HEADER_SIZE], tag::WIDE_COLUMN_ENTITY);
    // A CF record (0x17) with the same payload, as RocksDB writes it for family 3.
    let mut data = Batch::new().data().to_vec();
    data[8] = 1;
    data.extend_from_slice(&[tag::CF_WIDE_COLUMN_ENTITY, 3, 1, b'k', entity.len() as u8]);
    data.extend_from_slice(&entity);
    let b2 = Batch::from_data(&data);
    let mut seen = Vec::new();
    b2.for_each(&mut |e| {
        seen.push((e.cf_id, e.value_type, e.key.to_vec(), e.value.to_vec()));
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, vec![(3, ValueType::WideColumnEntity, b"k".to_vec(), entity.clone())]);
    assert!(b.clone().put_entity(b"x", &[(b"a", b"1"), (b"a", b"2")]).is_err());
}

/// `decode_entry_fast` (the write path's decoding) answers as `decode_record` does, or
/// leaves the record to it: on every record of every kind, with one-byte and longer length
/// and family varints, and on every truncation of each (where it must answer None and
/// `decode_record` gives the error).
#[test]
fn fast_decoding_agrees_with_decode_record() {
    let long_key = vec![b'k'; 200];
    let long_value = vec![b'v'; 20_000];
    let mut b = every_op();
    b.put(&long_key, &long_value);
    b.put_cf(70_000, &long_key, b"x");
    b.merge_cf(1, b"m", &long_value);
    b.delete_cf(128, &long_key);
    b.single_delete(&long_key);
    let body = &b.data()[HEADER_SIZE..];
    let mut pos = 0;
    let mut fast = 0;
    while pos < body.len() {
        let rest = &body[pos..];
        let mut input = Decoder::new(rest);
        let slow = decode_record(&mut input, HEADER_SIZE + pos).unwrap();
        let used = rest.len() - input.remaining().len();
        if let Some((e, n)) = decode_entry_fast(rest) {
            fast += 1;
            assert_eq!(n, used, "record at {pos}");
            assert!(matches!(slow, Record::Entry(s) if s == e), "record at {pos}");
        } else {
            assert!(
                matches!(
                    slow,
                    Record::LogData | Record::Entry(BatchEntry { value_type: ValueType::RangeDeletion, .. })
                ),
                "only range deletions and LogData take the slow path (record at {pos})"
            );
        }
        for cut in 0..used {
            assert_eq!(decode_entry_fast(&rest[..cut]), None, "record at {pos} cut to {cut}");
            let mut input = Decoder::new(&rest[..cut]);
            assert!(decode_record(&mut input, HEADER_SIZE + pos).is_err(), "record at {pos} cut to {cut}");
        }
        pos += used;
    }
    assert_eq!(fast, 14, "the Puts, Deletes, SingleDeletes and Merges");
    // `for_each` and `records` see the same entries.
    let all = entries(&b).unwrap();
    let mut from_records = Vec::new();
    for r in b.records() {
        if let Record::Entry(e) = r.unwrap() {
            from_records.push(o(e.cf_id, e.value_type, e.key, e.value));
        }
    }
    assert_eq!(all, from_records);
    assert_eq!(all.len(), b.len());
    // A cut batch is reported as before, through the fast path's refusal.
    let data = b.data();
    let err = entries(&Batch::from_data(&data[..data.len() - 1])).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
}

/// A dropped batch's buffer is the next batch's on the same thread (no allocation per
/// put); the new batch starts empty whatever the old one held, and a buffer too small for
/// the asked capacity, or too large to keep, is not used.
#[test]
fn a_dropped_batch_lends_its_buffer_to_the_next() {
    let mut b = Batch::with_capacity_bytes(one_record_capacity(116));
    b.put(b"key", [7u8; 100]);
    b.set_sequence(99);
    let addr = b.data().as_ptr();
    drop(b);
    let again = Batch::with_capacity_bytes(one_record_capacity(116));
    assert_eq!(again.data().as_ptr(), addr, "the spare buffer is reused");
    assert_eq!(again.data(), &[0u8; HEADER_SIZE][..], "an empty header, nothing of the old batch");
    assert_eq!((again.count(), again.sequence()), (0, 0));
    drop(again);
    let small_spare = Batch::with_capacity_bytes(4096);
    assert_ne!(small_spare.data().as_ptr(), addr, "a spare smaller than asked is not used");
    drop(small_spare);
    let mut big = Batch::new();
    big.put(b"k", vec![1u8; SPARE_REP_MAX + 1]);
    let big_addr = big.data().as_ptr();
    drop(big);
    let next = Batch::with_capacity_bytes(SPARE_REP_MAX + 10);
    assert_ne!(next.data().as_ptr(), big_addr, "a buffer above the limit is freed, not kept");
    assert!(entries(&next).unwrap().is_empty());
}
