use super::*;
use crate::coding::put_fixed32;
use crate::error::ErrorKind;
use crate::key::{make_internal_key, ValueType};
use rand::{Rng, RngCore, SeedableRng};

fn file(number: u64, small: &[u8], large: &[u8], seqs: (u64, u64)) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 1000 + number,
        smallest: make_internal_key(small, seqs.0, ValueType::Value),
        largest: make_internal_key(large, seqs.1, ValueType::Deletion),
        smallest_seqno: seqs.0,
        largest_seqno: seqs.1,
        oldest_ancester_time: 1_700_000_000,
        file_creation_time: 1_700_000_123,
        ..FileMetaData::default()
    }
}

fn full_edit() -> VersionEdit {
    let mut rich = file(9, b"a", b"m", (3, 40));
    rich.path_id = 2;
    rich.temperature = 8;
    rich.marked_for_compaction = true;
    rich.oldest_blob_file_number = 0;
    rich.file_checksum = vec![1, 2, 3, 4];
    rich.file_checksum_func_name = "FileChecksumCrc32c".into();
    rich.unique_id = Some([0x1122334455667788, 0x99aabbccddeeff00]);
    rich.epoch_number = 17;
    rich.compensated_range_deletion_size = 4321;
    rich.tail_size = 777;
    rich.user_defined_timestamps_persisted = false;
    rich.min_timestamp = vec![0, 0, 0, 0, 0, 0, 0, 1];
    rich.max_timestamp = vec![0, 0, 0, 0, 0, 0, 0, 9];
    rich.file_open_metadata = b"opaque".to_vec();
    VersionEdit {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(12),
        prev_log_number: Some(0),
        next_file_number: Some(200),
        last_sequence: Some(1 << 40),
        max_column_family: Some(3),
        min_log_number_to_keep: Some(11),
        column_family: 2,
        column_family_add: None,
        is_column_family_drop: false,
        deleted_files: vec![(1, 5), (0, 7)],
        new_files: vec![(0, file(8, b"b", b"c", (41, 50))), (3, rich)],
        db_id: Some("6f2c1a44-0b7e-4b53-9b1f-1b6c1d2e3f40".into()),
        is_in_atomic_group: true,
        remaining_entries: 2,
        compact_cursors: vec![(2, make_internal_key(b"k", 5, ValueType::Value))],
        wal_additions: vec![
            WalAddition { number: 14, synced_size: Some(4096) },
            WalAddition { number: 15, synced_size: None },
        ],
        wal_deletion: None,
        full_history_ts_low: Some(vec![0, 0, 0, 1]),
        persist_user_defined_timestamps: Some(true),
        subcompaction_progress: None,
        last_compacted_manifest_file_size: Some(123_456),
        blob_file_additions: vec![BlobFileAddition {
            number: 30,
            total_blob_count: 4,
            total_blob_bytes: 9000,
            ..Default::default()
        }],
        blob_file_garbages: vec![BlobFileGarbage {
            number: 30,
            garbage_blob_count: 1,
            garbage_blob_bytes: 2000,
        }],
    }
}

#[test]
fn round_trips_every_field() {
    let e = full_edit();
    let d = VersionEdit::decode(&e.encoded()).unwrap();
    let mut want = e.clone();
    want.deleted_files.sort();
    assert_eq!(d, want);

    let e = VersionEdit {
        column_family: 5,
        column_family_add: Some("cf-five".into()),
        wal_deletion: Some(77),
        ..VersionEdit::default()
    };
    assert_eq!(VersionEdit::decode(&e.encoded()).unwrap(), e);
    let e = VersionEdit { column_family: 5, is_column_family_drop: true, ..VersionEdit::default() };
    assert_eq!(VersionEdit::decode(&e.encoded()).unwrap(), e);
    assert_eq!(VersionEdit::decode(&[]).unwrap(), VersionEdit::default());
}

#[test]
fn encodes_the_bytes_rocksdb_writes() {
    // What RocksDB's NewDB writes: log 0, next file 2, last sequence 0.
    let e = VersionEdit {
        log_number: Some(0),
        next_file_number: Some(2),
        last_sequence: Some(0),
        ..VersionEdit::default()
    };
    assert_eq!(e.encoded(), vec![2, 0, 3, 2, 4, 0]);

    // A flush edit in column family 1 with one L0 file.
    let f = FileMetaData {
        number: 10,
        file_size: 300,
        smallest: make_internal_key(b"a", 1, ValueType::Value),
        largest: make_internal_key(b"z", 9, ValueType::Value),
        smallest_seqno: 1,
        largest_seqno: 9,
        oldest_ancester_time: 5,
        file_creation_time: 6,
        ..FileMetaData::default()
    };
    let e = VersionEdit {
        log_number: Some(4),
        min_log_number_to_keep: Some(4),
        column_family: 1,
        new_files: vec![(0, f)],
        ..VersionEdit::default()
    };
    let mut want = vec![2, 4, 10, 4, 103, 0, 10, 0xac, 0x02];
    want.extend_from_slice(&[9, b'a', 1, 1, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[9, b'z', 1, 9, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[1, 9]);
    want.extend_from_slice(&[5, 1, 5, 6, 1, 6, 7, 0, 8, 7]);
    want.extend_from_slice(b"Unknown");
    want.extend_from_slice(&[3, 8, 4, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[1, 0xc8, 0x01, 1]);
    assert_eq!(e.encoded(), want);
    // The min-log hack field is read back too.
    let d = VersionEdit::decode(&want).unwrap();
    assert_eq!(d.min_log_number_to_keep, Some(4));
}

#[test]
fn min_log_hack_alone_sets_min_log_number() {
    let mut e = VersionEdit { min_log_number_to_keep: Some(33), ..VersionEdit::default() };
    e.new_files.push((1, file(3, b"a", b"b", (1, 2))));
    let mut bytes = e.encoded();
    // Strip the plain tag-10 field (bytes [10, 33]) and keep only the hack inside NewFile4.
    assert_eq!(&bytes[..2], &[10, 33]);
    bytes.drain(..2);
    assert_eq!(VersionEdit::decode(&bytes).unwrap().min_log_number_to_keep, Some(33));
}

#[test]
fn unknown_tags() {
    // A safe-to-ignore tag from the future, with a length-prefixed value.
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_LOG_NUMBER);
    put_varint64(&mut b, 7);
    put_varint32(&mut b, TAG_SAFE_IGNORE_MASK + 100);
    put_length_prefixed_slice(&mut b, b"whatever");
    put_varint32(&mut b, TAG_LAST_SEQUENCE);
    put_varint64(&mut b, 9);
    let e = VersionEdit::decode(&b).unwrap();
    assert_eq!((e.log_number, e.last_sequence), (Some(7), Some(9)));

    // Its length running past the end is corruption.
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_SAFE_IGNORE_MASK + 100);
    put_varint32(&mut b, 50);
    b.extend_from_slice(b"short");
    assert_eq!(VersionEdit::decode(&b).unwrap_err().kind(), ErrorKind::Corruption);

    // An unknown tag without the bit is refused, naming the tag.
    let mut b = Vec::new();
    put_varint32(&mut b, 77);
    put_varint64(&mut b, 1);
    let err = VersionEdit::decode(&b).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("unknown tag 77"), "{err}");
}

#[test]
fn blob_records_round_trip_and_truncation_is_corruption() {
    let e = VersionEdit {
        blob_file_additions: vec![BlobFileAddition {
            number: 12,
            total_blob_count: 3,
            total_blob_bytes: 4000,
            checksum_method: b"crc32c".to_vec(),
            checksum_value: vec![1, 2, 3, 4],
        }],
        blob_file_garbages: vec![BlobFileGarbage {
            number: 9,
            garbage_blob_count: 2,
            garbage_blob_bytes: 300,
        }],
        ..VersionEdit::default()
    };
    let b = e.encoded();
    assert_eq!(VersionEdit::decode(&b).unwrap(), e);
    // RocksDB's bytes: tag 400, then the fields and the end marker.
    assert_eq!(&b[..2], &[0x90, 0x03]);
    // Cut anywhere but between the two records: Corruption.
    let first = VersionEdit { blob_file_additions: e.blob_file_additions.clone(), ..VersionEdit::default() };
    let boundary = first.encoded().len();
    for cut in (1..b.len()).filter(|c| *c != boundary) {
        let err = VersionEdit::decode(&b[..cut]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "cut at {cut}");
    }
    // Old tags (8194, 8195) read the same; forward-incompatible custom fields are refused.
    let mut old = Vec::new();
    put_varint32(&mut old, TAG_BLOB_FILE_GARBAGE_OLD);
    put_varint64(&mut old, 9);
    put_varint64(&mut old, 1);
    put_varint64(&mut old, 2);
    put_varint32(&mut old, 5);
    put_varint32(&mut old, 1);
    old.push(7);
    put_varint32(&mut old, 0);
    assert_eq!(VersionEdit::decode(&old).unwrap().blob_file_garbages[0].garbage_blob_bytes, 2);
    let mut bad = old[..old.len() - 4].to_vec();
    put_varint32(&mut bad, 65);
    put_varint32(&mut bad, 0);
    put_varint32(&mut bad, 0);
    assert!(VersionEdit::decode(&bad).unwrap_err().to_string().contains("Forward incompatible"));
}

fn new_file4_with_field(field: u32, value: &[u8]) -> Vec<u8> {
    let e = VersionEdit { new_files: vec![(0, file(3, b"a", b"b", (1, 2)))], ..VersionEdit::default() };
    let mut b = e.encoded();
    assert_eq!(b.pop(), Some(FIELD_TERMINATE as u8));
    put_varint32(&mut b, field);
    put_length_prefixed_slice(&mut b, value);
    put_varint32(&mut b, FIELD_TERMINATE);
    b
}

#[test]
fn new_file4_custom_fields() {
    // Unknown but ignorable (min/max timestamp and future fields) are skipped.
    for field in [FIELD_MIN_TIMESTAMP, FIELD_MAX_TIMESTAMP, 13, 63] {
        let d = VersionEdit::decode(&new_file4_with_field(field, b"xyz")).unwrap();
        assert_eq!(d.new_files.len(), 1);
        assert_eq!(d.new_files[0].1.number, 3);
    }
    // Unknown with the non-safe-ignore bit: refused.
    let err = VersionEdit::decode(&new_file4_with_field(FIELD_NON_SAFE_IGNORE_MASK + 5, b"")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("custom field 69 not supported"), "{err}");
    // Known fields with bad sizes or values.
    for (field, value) in [
        (FIELD_PATH_ID, &[1u8, 2][..]),
        (FIELD_PATH_ID, &[4][..]),
        (FIELD_NEED_COMPACTION, &[][..]),
        (FIELD_TEMPERATURE, &[1, 1][..]),
        (FIELD_UNIQUE_ID, &[0; 15][..]),
        (FIELD_MIN_LOG_NUMBER_TO_KEEP_HACK, &[0; 7][..]),
        (FIELD_OLDEST_ANCESTER_TIME, &[0x80][..]),
        (FIELD_EPOCH_NUMBER, &[0x80][..]),
        (FIELD_TAIL_SIZE, &[][..]),
        (FIELD_COMPENSATED_RANGE_DELETION_SIZE, &[0xff][..]),
        (FIELD_USER_DEFINED_TIMESTAMPS_PERSISTED, &[0, 0][..]),
    ] {
        let err = VersionEdit::decode(&new_file4_with_field(field, value)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "field {field}");
    }
    // A temperature RocksDB does not know reads as unknown.
    let d = VersionEdit::decode(&new_file4_with_field(FIELD_TEMPERATURE, &[0x40])).unwrap();
    assert_eq!(d.new_files[0].1.temperature, 0);
    // A missing terminator is corruption.
    let mut b = new_file4_with_field(FIELD_MIN_TIMESTAMP, b"1");
    b.pop();
    assert!(VersionEdit::decode(&b).is_err());
}

#[test]
fn reads_older_file_records() {
    let small = make_internal_key(b"a", 1, ValueType::Value);
    let large = make_internal_key(b"b", 2, ValueType::Value);
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_NEW_FILE);
    put_varint32(&mut b, 2);
    put_varint64(&mut b, 17);
    put_varint64(&mut b, 999);
    put_length_prefixed_slice(&mut b, &small);
    put_length_prefixed_slice(&mut b, &large);
    put_varint32(&mut b, TAG_NEW_FILE3);
    put_varint32(&mut b, 1);
    put_varint64(&mut b, 18);
    put_varint32(&mut b, 1);
    put_varint64(&mut b, 5);
    put_length_prefixed_slice(&mut b, &small);
    put_length_prefixed_slice(&mut b, &large);
    put_varint64(&mut b, 1);
    put_varint64(&mut b, 2);
    let d = VersionEdit::decode(&b).unwrap();
    assert_eq!(d.new_files.len(), 2);
    let (l, f) = &d.new_files[0];
    assert_eq!(
        (*l, f.number, f.file_size, f.smallest_seqno, f.largest_seqno),
        (2, 17, 999, MAX_SEQUENCE_NUMBER, 0)
    );
    let (l, f) = &d.new_files[1];
    assert_eq!((*l, f.number, f.path_id, f.largest_seqno), (1, 18, 1, 2));
}

/// Found by the `manifest_record` fuzz target: a new-file3 record with path id 202 decoded,
/// and its re-encoding (new-file4, path id as one byte) then failed to decode.
#[test]
fn new_file3_path_id_out_of_range_is_corruption() {
    let small = make_internal_key(b"a", 1, ValueType::Value);
    let large = make_internal_key(b"b", 2, ValueType::Value);
    let record = |path_id: u32| {
        let mut b = Vec::new();
        put_varint32(&mut b, TAG_NEW_FILE3);
        put_varint32(&mut b, 1);
        put_varint64(&mut b, 18);
        put_varint32(&mut b, path_id);
        put_varint64(&mut b, 5);
        put_length_prefixed_slice(&mut b, &small);
        put_length_prefixed_slice(&mut b, &large);
        put_varint64(&mut b, 1);
        put_varint64(&mut b, 2);
        b
    };
    let e = VersionEdit::decode(&record(MAX_PATH_ID)).unwrap();
    assert_eq!(VersionEdit::decode(&e.encoded()).unwrap(), e);
    for bad in [MAX_PATH_ID + 1, 202, u32::MAX] {
        let err = VersionEdit::decode(&record(bad)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption);
        assert!(err.to_string().contains("new-file3 entry"), "{err}");
    }
    // The fuzzer's input: mode byte 1, then length-prefixed records; every record that
    // decodes must re-encode to bytes that decode to the same edit.
    let input: &[u8] = &[
        0x01, 0x2f, 0x81, 0x40, 0x0a, 0x70, 0x61, 0x72, 0x61, 0x74, 0x6f, 0x72, 0xcb, 0x01, 0x01, 0x66, 0x30,
        0x52, 0x06, 0x0a, 0x0c, 0x07, 0x00, 0xf4, 0x67, 0x02, 0x09, 0x63, 0x66, 0x31, 0x52, 0x06, 0x0a, 0x0d,
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0xf4, 0x67, 0x02, 0x09, 0x61, 0x01, 0x58,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x04, 0x01, 0x32, 0x02, 0x06, 0x01, 0x01, 0xca, 0x01,
        0xac, 0x02, 0x00,
    ];
    let mut d = crate::coding::Decoder::new(&input[1..]);
    while let Some(rec) = d.length_prefixed() {
        if let Ok(e) = VersionEdit::decode(rec) {
            assert_eq!(VersionEdit::decode(&e.encoded()).unwrap(), e);
        }
    }
}

#[test]
fn bad_internal_keys_in_file_records_are_corruption() {
    let mut e = VersionEdit::default();
    let mut f = file(3, b"a", b"b", (1, 2));
    f.smallest = b"short".to_vec();
    e.new_files.push((0, f));
    assert!(VersionEdit::decode(&e.encoded()).unwrap_err().to_string().contains("new-file4 entry"));
    let mut f = file(3, b"a", b"b", (1, 2));
    let n = f.largest.len();
    f.largest[n - 8] = 0x05; // a WAL-only type
    e.new_files[0] = (0, f);
    assert!(VersionEdit::decode(&e.encoded()).is_err());
}

#[test]
fn wal_records() {
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_WAL_ADDITION);
    put_varint64(&mut b, 21);
    put_varint32(&mut b, 2);
    put_varint64(&mut b, 512);
    put_varint32(&mut b, 1);
    put_varint32(&mut b, TAG_WAL_DELETION);
    put_varint64(&mut b, 20);
    let d = VersionEdit::decode(&b).unwrap();
    assert_eq!(d.wal_additions, vec![WalAddition { number: 21, synced_size: Some(512) }]);
    assert_eq!(d.wal_deletion, Some(20));

    let mut b = Vec::new();
    put_varint32(&mut b, TAG_WAL_ADDITION2);
    put_length_prefixed_slice(&mut b, &[21, 9, 1]);
    let err = VersionEdit::decode(&b).unwrap_err();
    assert!(err.to_string().contains("WalAddition: Unknown tag 9"), "{err}");
}

#[test]
fn never_panics_on_garbage() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5eed);
    for _ in 0..20_000 {
        let n = rng.gen_range(0..64);
        let mut b = vec![0u8; n];
        rng.fill_bytes(&mut b);
        let _ = VersionEdit::decode(&b);
    }
    // Every prefix and every single-byte mutation of a rich edit.
    let good = full_edit().encoded();
    for i in 0..good.len() {
        let _ = VersionEdit::decode(&good[..i]);
        for _ in 0..8 {
            let mut m = good.clone();
            m[i] = rng.gen();
            let _ = VersionEdit::decode(&m);
        }
    }
    let mut huge = Vec::new();
    put_varint32(&mut huge, TAG_COMPARATOR);
    put_fixed32(&mut huge, u32::MAX);
    assert!(VersionEdit::decode(&huge).is_err());
}

#[test]
fn rocksdb_11_top_level_records() {
    // SubcompactionProgress (8202) is length-checked and dropped; PersistUserDefinedTimestamps
    // needs exactly one byte.
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_SUBCOMPACTION_PROGRESS);
    put_length_prefixed_slice(&mut b, &[1, 2, 3]);
    put_varint32(&mut b, TAG_LOG_NUMBER);
    put_varint64(&mut b, 9);
    let d = VersionEdit::decode(&b).unwrap();
    assert_eq!(d.log_number, Some(9));
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_SUBCOMPACTION_PROGRESS);
    put_varint32(&mut b, 50);
    assert_eq!(VersionEdit::decode(&b).unwrap_err().kind(), ErrorKind::Corruption);
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_PERSIST_USER_DEFINED_TIMESTAMPS);
    put_length_prefixed_slice(&mut b, &[1, 1]);
    assert_eq!(VersionEdit::decode(&b).unwrap_err().kind(), ErrorKind::Corruption);
    let mut b = Vec::new();
    put_varint32(&mut b, TAG_LAST_COMPACTED_MANIFEST_FILE_SIZE);
    put_length_prefixed_slice(&mut b, &[0x80]);
    assert_eq!(VersionEdit::decode(&b).unwrap_err().kind(), ErrorKind::Corruption);
}
