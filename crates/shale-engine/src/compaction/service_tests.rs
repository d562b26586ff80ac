//! The messages as RocksDB 11.8.1's `ldb remote_compaction_primary` / `_worker` wrote them
//! (tests/data/compaction_service: a default-family database of four L0 files, keys
//! a, b, c with c deleted, compacted to L6).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

const INPUT: &[u8] = include_bytes!("../../tests/data/compaction_service/input-11.8.1.bin");
const RESULT: &[u8] = include_bytes!("../../tests/data/compaction_service/result-11.8.1.bin");

#[test]
fn decodes_11_8_1_input() {
    let i = CompactionServiceInput::decode(INPUT).unwrap();
    assert_eq!(i.cf_name, "default");
    assert_eq!(i.input_files, ["000023.sst", "000018.sst", "000013.sst", "000008.sst"]);
    assert_eq!(i.output_level, 6);
    assert_eq!(i.options_file_number, 27);
    assert_eq!(i.db_id, "9961a757-b998-44e4-b1f7-1e865b0e34d7");
    assert!(i.snapshots.is_empty());
    assert!(!i.has_begin && !i.has_end);
}

#[test]
fn input_round_trips_byte_for_byte_modulo_field_order() {
    let i = CompactionServiceInput::decode(INPUT).unwrap();
    let again = i.encode();
    // The same bytes: this module writes the fields in the order 11.8.1 did.
    assert_eq!(String::from_utf8_lossy(&again[4..]), String::from_utf8_lossy(&INPUT[4..]));
    let mut with = i.clone();
    with.snapshots = vec![5, 9];
    with.has_begin = true;
    with.begin = b"k\x01\0\0\0\0\0\0\0".to_vec();
    assert_eq!(CompactionServiceInput::decode(&with.encode()).unwrap(), with);
}

#[test]
fn decodes_11_8_1_result() {
    let r = CompactionServiceResult::decode(RESULT).unwrap();
    assert_eq!(r.status, ServiceStatus::default());
    assert_eq!(r.output_level, 6);
    assert_eq!(r.output_path, "job/output");
    assert_eq!(r.bytes_written, 1265);
    assert_eq!(r.stat("num_input_records"), 5);
    assert_eq!(r.stat("has_accurate_num_input_records"), 1);
    assert_eq!(r.stat("is_remote_compaction"), 1);
    assert_eq!(r.stats_prefixes["smallest_output_key_prefix"], b"a");
    assert_eq!(r.output_level_stats.get("num_output_records"), 2);
    assert_eq!(r.output_level_stats.counts.len(), COMPACTION_REASON_COUNTS);
    assert_eq!(r.output_level_stats.counts[9], 1);
    assert!(!r.has_proximal_level_output);
    assert_eq!(r.output_files.len(), 1);
    let f = &r.output_files[0];
    assert_eq!(f.file_name, "000027.sst");
    assert_eq!(f.file_size, 1265);
    assert_eq!(f.smallest_internal_key, b"a\x01\0\0\0\0\0\0\0");
    assert_eq!(f.largest_internal_key, b"b\x01\0\0\0\0\0\0\0");
    assert_eq!(f.epoch_number, 1);
    assert_eq!(f.file_checksum_func_name, "Unknown");
    assert_eq!(f.unique_id, [8413792710058485299, 4302315823035283091]);
    assert_eq!(f.file_temperature, "kUnknown");
    assert_eq!(f.table_property_u64("num_entries"), 2);
    assert_eq!(f.table_property_u64("tail_start_offset"), 33);
    assert_eq!(f.table_properties["comparator_name"], "leveldb.BytewiseComparator");
    assert_eq!(f.table_properties["db_host_id"], "vm");
    assert_eq!(f.user_collected_properties[&b"rocksdb.block.based.table.index.type"[..]], b"\0\0\0\0");
}

#[test]
fn result_round_trips() {
    let r = CompactionServiceResult::decode(RESULT).unwrap();
    let again = CompactionServiceResult::decode(&r.encode()).unwrap();
    assert_eq!(again, r);
    // Same length as 11.8.1's: every field it wrote is written back.
    assert_eq!(r.encode().len(), RESULT.len());
    let mut two = r.clone();
    let mut second = r.output_files[0].clone();
    second.file_name = "000028.sst".into();
    two.output_files.push(second);
    two.status.code = 2;
    two.status.message = "a; b={c}".into();
    assert_eq!(CompactionServiceResult::decode(&two.encode()).unwrap(), two);
    two.output_files.clear();
    assert_eq!(CompactionServiceResult::decode(&two.encode()).unwrap(), two);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut v = INPUT.to_vec();
    v[0] = 2;
    assert_eq!(CompactionServiceInput::decode(&v).unwrap_err().kind(), crate::ErrorKind::NotSupported);
    assert!(CompactionServiceInput::decode(&INPUT[..4]).is_err());
    for cut in [10, 40, 100, 200, 290] {
        let _ = CompactionServiceInput::decode(&INPUT[..cut]);
    }
    for cut in (5..RESULT.len()).step_by(37) {
        let _ = CompactionServiceResult::decode(&RESULT[..cut]);
    }
    let mut bad = 1u32.to_le_bytes().to_vec();
    bad.extend_from_slice(b"cf_name=ZZ;");
    assert_eq!(CompactionServiceInput::decode(&bad).unwrap_err().kind(), crate::ErrorKind::InvalidArgument);
    let mut bad = 1u32.to_le_bytes().to_vec();
    bad.extend_from_slice(b"stats={a=1;");
    assert!(CompactionServiceResult::decode(&bad).is_err());
}
