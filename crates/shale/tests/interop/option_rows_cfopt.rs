//! RocksDB 11.8.1's `ldb` loads, strictly (`--try_load_options`), the OPTIONS file Shale
//! writes with the column-family options of the `cfopt` rows at non-default values, and keeps
//! them: the OPTIONS file it writes after a `put` holds them too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

const TEST: &str = "interop option_rows_cfopt";

const SET: &[(&str, &str)] = &[
    ("memtable_protection_bytes_per_key", "4"),
    ("paranoid_memory_checks", "true"),
    ("bottommost_file_compaction_delay", "600"),
    ("target_file_size_is_upper_bound", "true"),
    ("memtable_prefix_bloom_size_ratio", "0.125000"),
    ("memtable_whole_key_filtering", "true"),
    // helper cfmisc's rows
    ("memtable_op_scan_flush_trigger", "300"),
    ("memtable_avg_op_scan_flush_trigger", "20"),
    ("verify_output_flags", "1027"),
    ("memtable_batch_lookup_optimization", "true"),
    ("memtable_insert_with_hint_prefix_extractor", "rocksdb.FixedPrefix.4"),
    // helper mtrc's row
    ("min_tombstones_for_range_conversion", "33"),
];

#[test]
fn rocksdb_11_loads_and_keeps_the_cfopt_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET, true);
}

/// helper cfblob's rows at non-default values (issue 33).
const SET_CFBLOB: &[(&str, &str)] = &[
    ("memtable_verify_per_key_checksum_on_seek", "true"),
    (
        "blob_compression_opts",
        "{checksum=true;max_dict_buffer_bytes=0;enabled=false;max_dict_bytes=0;max_compressed_bytes_per_kb=896;\
         parallel_threads=1;zstd_max_train_bytes=0;level=1;use_zstd_dict_trainer=true;strategy=0;window_bits=-14;}",
    ),
    (
        "compaction_options_fifo",
        "{use_kv_ratio_compaction=false;max_data_files_size=0;trivial_copy_buffer_size=4096;\
         allow_trivial_copy_when_change_temperature=false;file_temperature_age_thresholds=;allow_compaction=false;\
         age_for_warm=600;max_table_files_size=1073741824;}",
    ),
];

#[test]
fn rocksdb_11_loads_and_keeps_the_cfblob_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET_CFBLOB, true);
    // A built-in prefix extractor by name: RocksDB's LoadLatestOptions rebuilds it; Shale's
    // load_latest leaves function-valued options to the caller, so no read back here.
    tools::ldb_keeps_option_rows(&[("prefix_extractor", "rocksdb.FixedPrefix.4")], false);
}

/// Blob files Shale writes with `blob_compression_opts` changed by `set_options` (ZSTD at
/// level 1 with its frame checksum, then LZ4 at acceleration 4): RocksDB 11.8.1's `ldb scan`
/// reads every value back.
#[test]
fn rocksdb_11_reads_blobs_of_blob_compression_opts() {
    use shale::{DBCompressionType, Options, DB};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_enable_blob_files(true);
    o.set_min_blob_size(64);
    o.set_blob_compression_type(DBCompressionType::Zstd);
    let db = DB::open(&o, path).unwrap();
    let value = |i: u32| format!("blob value {i:05} ").repeat(1 + (i as usize % 9)).into_bytes();
    let write = |from: u32| {
        for i in from..from + 300 {
            db.put(format!("key{i:05}"), value(i)).unwrap();
        }
        db.flush().unwrap();
    };
    write(0);
    db.set_options(&[("blob_compression_opts", "{checksum=true;level=1;}")]).unwrap();
    write(300);
    db.set_options(&[("blob_compression_type", "kLZ4Compression"), ("blob_compression_opts", "{level=-4;}")])
        .unwrap();
    write(600);
    assert!(crate::util::files_ending(path, ".blob").len() >= 3);
    assert_eq!(db.get("key00450").unwrap(), Some(value(450)));
    tools::rocksdb_reads(path, &db, "interop option_rows_cfopt blob_compression_opts");
}

/// `compression_manager=BuiltinV2` (helper cfblob): RocksDB 11.8.1 loads Shale's OPTIONS file
/// strictly, reads its tables, and its `sst_dump` shows the compression options property
/// as RocksDB's own builder writes it for that manager (checked against a db_bench run
/// with the same OPTIONS line: `_compression_manager=BuiltinCompressionManagerV2;
/// _compressor=BuiltinLZ4CompressorV2;`).
#[test]
fn rocksdb_11_reads_tables_of_compression_manager() {
    use shale::{Options, DB};
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = Options::default().get_options_from_string("compression_manager=BuiltinV2").unwrap();
    o.create_if_missing(true);
    o.set_compression_type(shale::DBCompressionType::Lz4);
    let db = DB::open(&o, &path).unwrap();
    for i in 0..200u32 {
        db.put(format!("key{i:04}"), format!("value {i} ").repeat(8)).unwrap();
    }
    db.flush().unwrap();
    tools::rocksdb_reads(&path, &db, "interop option_rows_cfopt compression_manager");
    drop(db);
    let (ok, out, err) = tools::try_tool(
        "ldb",
        &tools::args(&[&format!("--db={}", path.display()), "--try_load_options", "scan"]),
    );
    assert!(ok && out.contains("key0042 ==> value 42 "), "{out}{err}");
    let sst = crate::util::files_ending(&path, ".sst");
    assert_eq!(sst.len(), 1, "{sst:?}");
    let file = path.join(&sst[0]);
    let (ok, out, err) = tools::try_tool(
        "sst_dump",
        &tools::args(&[&format!("--file={}", file.display()), "--show_properties"]),
    );
    assert!(ok, "{out}{err}");
    assert!(
        out.contains(
            "checksum=0; _type=4; _compression_manager=BuiltinCompressionManagerV2; _compressor=BuiltinLZ4CompressorV2; "
        ),
        "{out}"
    );
}

/// helper cftbl's rows (issue 33) at non-default values, in RocksDB 11.8.1's spelling (what
/// its ldb wrote back for the same options).
const SET_CFTBL: &[(&str, &str)] = &[
    ("sst_partitioner_factory", "{id=SstPartitionerFixedPrefixFactory;length=3;}"),
    (
        "table_properties_collectors",
        "{{id=CompactOnDeletionCollector;min_file_size=0;deletion_ratio=0.500000;deletion_trigger=10;window_size=100;}:\
         {id=CompactForTieringCollector;compaction_trigger_ratio=0.300000;}}",
    ),
];

#[test]
fn rocksdb_11_loads_and_keeps_the_cftbl_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    tools::ldb_keeps_option_rows(SET_CFTBL, true);
}

/// Tables Shale writes with `table_properties_collectors` and a partitioner: RocksDB 11.8.1's
/// `sst_dump --show_properties` names the collectors as its own builder does, and every table
/// of the partitioned compaction holds one prefix in RocksDB's reading too.
#[test]
fn rocksdb_11_reads_collector_names_and_partitioned_tables() {
    use shale::{Options, DB};
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = Options::default()
        .get_options_from_string(
            "sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;length=2};\
             table_properties_collectors={{id=CompactOnDeletionCollector;window_size=100;deletion_trigger=10}:\
             {id=CompactForTieringCollector;compaction_trigger_ratio=0.3}}",
        )
        .unwrap();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    // Level 0 compacts into level 1, not the last level (where a table would move whole).
    o.set_level_compaction_dynamic_level_bytes(false);
    let db = DB::open(&o, &path).unwrap();
    for p in ["aa", "ab", "zz"] {
        for i in 0..100u32 {
            db.put(format!("{p}{i:03}"), format!("value {i}")).unwrap();
        }
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    tools::rocksdb_reads(&path, &db, "interop option_rows_cfopt cftbl");
    drop(db);
    let ssts = tools::sst_files(&path);
    assert_eq!(ssts.len(), 3, "{ssts:?}");
    for sst in ssts {
        let props =
            tools::run_tool("sst_dump", &[format!("--file={}", sst.display()), "--show_properties".into()]);
        assert!(
            props.contains(
                "property collectors names: [CompactOnDeletionCollector,CompactForTieringCollector]"
            ),
            "{props}"
        );
        let scan =
            tools::run_tool("sst_dump", &[format!("--file={}", sst.display()), "--command=scan".into()]);
        let prefixes: std::collections::BTreeSet<String> =
            scan.lines().filter_map(|l| l.strip_prefix('\'')).map(|k| k.chars().take(2).collect()).collect();
        assert_eq!(prefixes.len(), 1, "{scan}");
    }
}
