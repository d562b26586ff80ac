//! Shale -> RocksDB: a database Shale wrote and closed — four column families, one per
//! compression (none, Snappy, LZ4, ZSTD), bloom filters on three of them, overwrites,
//! deletes and range deletes, tables on level 0 and below, and writes left in the WAL —
//! opens in RocksDB 7.8.3's tools:
//! - `ldb scan` / `ldb get` of every column family give exactly Shale's pairs;
//! - `sst_dump --command=verify` passes on every table and `--show_properties` shows what
//!   Shale recorded (entries, data size, blocks, deletions, comparator, filter policy,
//!   compression, column family);
//! - `ldb manifest_dump` and `ldb dump_wal` read Shale's MANIFEST and WALs;
//! - RocksDB keeps writing (`ldb put`, `delete`, `deleterange`, `compact`), and Shale then
//!   reopens and sees everything, and RocksDB sees Shale's next writes again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;

use shale::table::reader::Table;
use shale::{ColumnFamilyDescriptor, DBCompressionType, Options, WriteBatch, DB};
use tools::*;

type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

/// (column family, compression, bloom filter)
const FAMILIES: &[(&str, DBCompressionType, bool)] = &[
    ("default", DBCompressionType::None, true),
    ("cf_snappy", DBCompressionType::Snappy, false),
    ("cf_lz4", DBCompressionType::Lz4, true),
    ("cf_zstd", DBCompressionType::Zstd, true),
];

fn cf_options(compression: DBCompressionType, bloom: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_compression_type(compression);
    o.set_write_buffer_size(256 * 1024);
    o.set_disable_auto_compactions(true);
    // Format 5: RocksDB 7.8.3 reads these tables.
    let mut t = rocksdb7_tables();
    if bloom {
        t.set_bloom_filter(10.0, false);
    }
    o.set_block_based_table_factory(&t);
    o
}

fn open_shale(dir: &Path) -> DB {
    let descs: Vec<ColumnFamilyDescriptor> =
        FAMILIES.iter().map(|(n, c, b)| ColumnFamilyDescriptor::new(*n, cf_options(*c, *b))).collect();
    DB::open_cf_descriptors(&cf_options(DBCompressionType::None, true), dir, descs).expect("Shale open")
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(cf: usize, i: u32, round: u32) -> Vec<u8> {
    format!("{cf}/{i}/{round}:").repeat(1 + (i as usize * 7 + round as usize) % 20).into_bytes()
}

/// Builds the database with Shale and returns what it holds.
/// Flushes every column family (`DB::flush` flushes only the default one, as RocksDB's).
fn flush_all(db: &DB) {
    for (name, ..) in FAMILIES.iter() {
        db.flush_cf(db.cf_handle(name).unwrap()).unwrap();
    }
}

fn build(dir: &Path) -> Model {
    let mut model: Model = FAMILIES.iter().map(|(n, ..)| (n.to_string(), BTreeMap::new())).collect();
    let db = open_shale(dir);
    for (c, (name, ..)) in FAMILIES.iter().enumerate() {
        let h = db.cf_handle(name).unwrap();
        let m = model.get_mut(*name).unwrap();
        for chunk in (0..3000u32).collect::<Vec<_>>().chunks(100) {
            let mut b = WriteBatch::default();
            for &i in chunk {
                b.put_cf(h, key(i), value(c, i, 0));
                m.insert(key(i), value(c, i, 0));
            }
            db.write(b).unwrap();
        }
    }
    flush_all(&db);
    for (c, (name, ..)) in FAMILIES.iter().enumerate() {
        let h = db.cf_handle(name).unwrap();
        let m = model.get_mut(*name).unwrap();
        for i in (0..3000u32).step_by(5) {
            db.put_cf(h, key(i), value(c, i, 1)).unwrap();
            m.insert(key(i), value(c, i, 1));
        }
        for i in (0..3000u32).step_by(7) {
            db.delete_cf(h, key(i)).unwrap();
            m.remove(&key(i));
        }
        db.delete_range_cf(h, key(1000), key(1100)).unwrap();
        m.retain(|k, _| !(k >= &key(1000) && k < &key(1100)));
    }
    flush_all(&db);
    for (name, ..) in FAMILIES {
        db.try_compact_range_cf(db.cf_handle(name).unwrap(), None::<&[u8]>, None::<&[u8]>).unwrap();
    }
    // Level-0 tables with a range tombstone above the compacted data.
    for (c, (name, ..)) in FAMILIES.iter().enumerate() {
        let h = db.cf_handle(name).unwrap();
        let m = model.get_mut(*name).unwrap();
        db.delete_range_cf(h, key(2000), key(2050)).unwrap();
        m.retain(|k, _| !(k >= &key(2000) && k < &key(2050)));
        db.put_cf(h, key(2010), value(c, 2010, 2)).unwrap();
        m.insert(key(2010), value(c, 2010, 2));
        db.single_delete_cf(h, key(3)).unwrap();
        m.remove(&key(3));
    }
    flush_all(&db);
    // Writes that stay in the WAL.
    for (c, (name, ..)) in FAMILIES.iter().enumerate() {
        let h = db.cf_handle(name).unwrap();
        let m = model.get_mut(*name).unwrap();
        for i in 3000..3100u32 {
            db.put_cf(h, key(i), value(c, i, 3)).unwrap();
            m.insert(key(i), value(c, i, 3));
        }
        db.delete_cf(h, key(10)).unwrap();
        m.remove(&key(10));
        db.delete_range_cf(h, key(2500), key(2520)).unwrap();
        m.retain(|k, _| !(k >= &key(2500) && k < &key(2520)));
    }
    drop(db);
    model
}

fn as_pairs(m: &BTreeMap<Vec<u8>, Vec<u8>>) -> Pairs {
    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn check_ldb_sees(dir: &Path, model: &Model, ctx: &str) {
    let mut listed = list_cf(dir);
    listed.sort();
    let mut names: Vec<String> = model.keys().cloned().collect();
    names.sort();
    assert_eq!(listed, names, "{ctx}: column families");
    for (cf, m) in model {
        assert_same_pairs(&ldb_scan(dir, Some(cf)), &as_pairs(m), &format!("{ctx}: ldb scan of {cf}"));
    }
}

fn check_shale_sees(db: &DB, model: &Model, ctx: &str) {
    for (cf, m) in model {
        let want = as_pairs(m);
        assert_same_pairs(&shale_scan(db, cf), &want, &format!("{ctx}: Shale scan of {cf}"));
        let mut rev = want;
        rev.reverse();
        assert_same_pairs(&shale_scan_reverse(db, cf), &rev, &format!("{ctx}: Shale reverse scan of {cf}"));
    }
}

#[test]
fn ldb_scan_and_get_show_shales_pairs() {
    let test = "ldb_scan_and_get_show_shales_pairs";
    if !tools_available(test, &["ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let model = build(&dir);
    check_ldb_sees(&dir, &model, test);
    for (cf, m) in &model {
        for i in [0u32, 1, 3, 5, 10, 1005, 2010, 2020, 2510, 2999, 3050, 5000] {
            assert_eq!(ldb_get(&dir, Some(cf), &key(i)), m.get(&key(i)).cloned(), "{cf}: ldb get {i}");
        }
    }
}

/// `sst_dump --show_properties` as a map of "name: value" lines.
fn sst_dump_properties(file: &Path) -> BTreeMap<String, String> {
    let out = run_tool("sst_dump", &args(&[&format!("--file={}", file.display()), "--show_properties"]));
    out.lines()
        .filter_map(|l| l.trim_start().split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[test]
fn sst_dump_verifies_every_table_and_shows_its_properties() {
    let test = "sst_dump_verifies_every_table_and_shows_its_properties";
    if !tools_available(test, &["sst_dump"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    build(&dir);
    let tables = sst_files(&dir);
    assert!(tables.len() >= 8, "expected tables on several levels, got {}", tables.len());
    let mut range_del_tables = 0;
    let mut compressions = std::collections::BTreeSet::new();
    for f in &tables {
        let (ok, out, err) =
            try_tool("sst_dump", &args(&[&format!("--file={}", f.display()), "--command=verify"]));
        assert!(
            ok && out.contains("The file is ok") && !out.contains("Corruption"),
            "verify {}: {out}{err}",
            f.display()
        );

        let shown = sst_dump_properties(f);
        let (file, size, opts) = table_file(f);
        let table = Table::open(file, size, opts).unwrap();
        let p = table.properties();
        let expect = [
            ("# entries", p.num_entries.to_string()),
            ("# data blocks", p.num_data_blocks.to_string()),
            ("# deletions", p.num_deletions.to_string()),
            ("# range deletions", p.num_range_deletions.to_string()),
            ("raw key size", p.raw_key_size.to_string()),
            ("raw value size", p.raw_value_size.to_string()),
            ("data block size", p.data_size.to_string()),
            ("comparator name", "leveldb.BytewiseComparator".to_string()),
            ("column family name", p.column_family_name.clone()),
            ("SST file compression algo", p.compression_name.clone()),
            (
                "filter policy name",
                if p.filter_policy_name.is_empty() { "N/A".into() } else { p.filter_policy_name.clone() },
            ),
        ];
        for (name, want) in expect {
            assert_eq!(shown.get(name), Some(&want), "{}: sst_dump's {name:?}", f.display());
        }
        assert!(p.num_entries > 0);
        let family = FAMILIES.iter().find(|(n, ..)| *n == p.column_family_name).expect("known family");
        assert_eq!(p.filter_policy_name.is_empty(), !family.2, "{}: filter policy", f.display());
        if p.num_range_deletions > 0 {
            range_del_tables += 1;
        }
        compressions.insert(p.compression_name.clone());
    }
    assert!(range_del_tables >= FAMILIES.len(), "range tombstones must reach tables");
    for c in ["NoCompression", "Snappy", "LZ4", "ZSTD"] {
        assert!(compressions.contains(c), "no table with {c}: {compressions:?}");
    }
}

#[test]
fn ldb_reads_shales_manifest_and_wal() {
    let test = "ldb_reads_shales_manifest_and_wal";
    if !tools_available(test, &["ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    build(&dir);
    let manifest = current_manifest(&dir);
    let out =
        run_tool("ldb", &args(&["manifest_dump", "--verbose", &format!("--path={}", manifest.display())]));
    assert!(!out.contains("Error in processing") && !out.contains("Corruption"), "manifest_dump: {out}");
    for (name, ..) in FAMILIES {
        assert!(out.contains(&format!("Column family \"{name}\"")), "manifest_dump lacks {name}: {out}");
    }
    for t in sst_files(&dir) {
        let number: u64 = t.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        assert!(out.contains(&format!(" {number}:")), "manifest_dump does not list table {number}");
    }
    let wals = wal_files(&dir);
    assert!(!wals.is_empty());
    let mut puts = 0;
    let mut saw_tail = false;
    for w in &wals {
        let out =
            run_tool("ldb", &args(&["dump_wal", &format!("--walfile={}", w.display()), "--print_value"]));
        assert!(!out.contains("Corruption") && !out.contains("Error"), "dump_wal {}: {out}", w.display());
        // Records print as "seq,count,size,offset,PUT(cf) : 0xKEY : 0xVALUE".
        puts += out.matches("PUT(").count();
        if out.contains(&encode_hex(&key(3050))) {
            saw_tail = true;
            assert!(out.contains("DELETE_RANGE("), "range delete in the WAL: {out}");
            assert!(out.contains(&encode_hex(&value(3, 3050, 3))), "value in the WAL");
        }
    }
    assert!(saw_tail, "dump_wal did not show the writes left in the WAL");
    // The writes left in the WAL: 100 puts in each family.
    assert!(puts >= 100 * FAMILIES.len(), "dump_wal showed {puts} puts");
}

#[test]
fn rocksdb_keeps_writing_and_shale_reopens() {
    let test = "rocksdb_keeps_writing_and_shale_reopens";
    if !tools_available(test, &["ldb"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut model = build(&dir);
    let d = format!("--db={}", dir.display());
    for (name, ..) in FAMILIES {
        let cf = format!("--column_family={name}");
        let m = model.get_mut(*name).unwrap();
        run_tool("ldb", &args(&[&d, &cf, "put", "rocks-key", "rocks-value"]));
        m.insert(b"rocks-key".to_vec(), b"rocks-value".to_vec());
        run_tool("ldb", &args(&[&d, &cf, "put", "key000001", "changed by rocksdb"]));
        m.insert(key(1), b"changed by rocksdb".to_vec());
        run_tool("ldb", &args(&[&d, &cf, "delete", "key000002"]));
        m.remove(&key(2));
        run_tool("ldb", &args(&[&d, &cf, "deleterange", "key000400", "key000450"]));
        m.retain(|k, _| !(k >= &key(400) && k < &key(450)));
    }
    // RocksDB compacts two of the families (its own tables replace Shale's).
    run_tool("ldb", &args(&[&d, "compact"]));
    run_tool("ldb", &args(&[&d, "--column_family=cf_zstd", "compact"]));
    check_ldb_sees(&dir, &model, "after RocksDB's writes");
    {
        let db = open_shale(&dir);
        check_shale_sees(&db, &model, "Shale after RocksDB's writes");
        for (c, (name, ..)) in FAMILIES.iter().enumerate() {
            let h = db.cf_handle(name).unwrap();
            db.put_cf(h, b"shale-again", value(c, 9, 9)).unwrap();
            model.get_mut(*name).unwrap().insert(b"shale-again".to_vec(), value(c, 9, 9));
        }
        db.try_compact_range_cf(db.cf_handle("cf_lz4").unwrap(), None::<&[u8]>, None::<&[u8]>).unwrap();
    }
    check_ldb_sees(&dir, &model, "after Shale wrote again");
    let db = open_shale(&dir);
    check_shale_sees(&db, &model, "Shale's last reopen");
}
