//! `set_options(&[("table_factory", "PlainTable"), ("ttl", "0")])` on a block-based family:
//! RocksDB 11.8.1's `ldb --try_load_options` opens the database with the factory Shale's
//! OPTIONS file names. While a table of the old format is live, RocksDB's table cache opens
//! it with the new factory and fails ("Bad table magic number"; its reader reads one format);
//! once a compaction has rewritten every table, RocksDB reads all of it.

use shale::{Options, SliceTransform, DB};

use crate::tools::{self, args, assert_same_pairs, shale_scan_default, try_tool};

fn write(db: &DB, tag: &str) {
    for i in 0..200u32 {
        db.put(format!("{tag}{i:06}"), format!("value-{tag}-{i}")).unwrap();
    }
    db.flush().unwrap();
}

#[test]
fn rocksdb_reads_a_family_switched_to_plain_table() {
    if !tools::use_rocksdb_11("rocksdb_reads_a_family_switched_to_plain_table") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    let db = DB::open(&o, dir.path()).unwrap();
    write(&db, "aaaa");
    db.set_options(&[("table_factory", "PlainTable"), ("ttl", "0")]).unwrap();
    write(&db, "bbbb");
    let want = shale_scan_default(&db);
    assert_eq!(want.len(), 400);
    drop(db);

    let d = format!("--db={}", dir.path().display());
    let (ok, out, err) = try_tool("ldb", &args(&[&d, "--try_load_options", "scan"]));
    assert!(!ok, "RocksDB read a block-based table through PlainTable:\n{out}\n{err}");
    assert!(format!("{out}{err}").contains("Bad table magic number"), "{out}\n{err}");

    let mut o2 = o.clone();
    o2.set_plain_table_factory(&shale::PlainTableFactoryOptions {
        user_key_length: 0,
        bloom_bits_per_key: 10,
        hash_table_ratio: 0.75,
        index_sparseness: 16,
        huge_page_tlb_size: 0,
        encoding_type: shale::KeyEncodingType::Plain,
        full_scan_mode: false,
        store_index_in_file: false,
    });
    o2.set_ttl(0);
    let db = DB::open(&o2, dir.path()).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    assert_eq!(shale_scan_default(&db), want);
    drop(db);
    let out = tools::run_tool("ldb", &args(&[&d, "--try_load_options", "scan", "--hex"]));
    let got: Vec<(Vec<u8>, Vec<u8>)> = out
        .lines()
        .filter_map(|l| l.split_once(" ==> "))
        .map(|(k, v)| (tools::decode_hex(k), tools::decode_hex(v)))
        .collect();
    assert_same_pairs(&got, &want, "RocksDB's scan after the compaction");
}
