use std::sync::Arc;

use super::*;
use crate::key::{bytewise_internal_comparator, lookup_key, make_internal_key, user_key, ValueType};
use crate::table::builder::TableBuilderOptions;
use crate::table::meta_tail::{BytesFile, SharedBuf};
use crate::ErrorKind;

fn entries(n: u64, seq0: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let t = if !seq0 && i % 9 == 4 { ValueType::Deletion } else { ValueType::Value };
            let seq = if seq0 { 0 } else { 10 + i };
            (
                make_internal_key(format!("key{:08}", i * 3).as_bytes(), seq, t),
                format!("val{:05}", i).into_bytes(),
            )
        })
        .collect()
}

fn build(copts: CuckooOptions, data: &[(Vec<u8>, Vec<u8>)]) -> crate::Result<Vec<u8>> {
    let o = TableBuilderOptions::new(bytewise_internal_comparator());
    let out = SharedBuf::default();
    let mut b = CuckooTableBuilder::new(o, copts, Box::new(out.clone()));
    for (k, v) in data {
        b.add(k, v)?;
    }
    let r = b.finish()?;
    let bytes = out.0.lock().clone();
    assert_eq!(r.file_size, bytes.len() as u64);
    Ok(bytes)
}

fn open(bytes: Vec<u8>) -> crate::Result<Arc<CuckooTable>> {
    let n = bytes.len() as u64;
    CuckooTable::open(Arc::new(BytesFile(bytes)), n, bytewise_internal_comparator(), "000009.sst")
}

#[test]
fn murmur_matches_known_values() {
    // MurmurHash64A reference values (seed 0 and RocksDB's cuckoo seed for hash 1).
    assert_eq!(murmur_hash64a(b"", 0), 0);
    assert_ne!(murmur_hash64a(b"abc", 0), murmur_hash64a(b"abc", 816_922_183));
    assert_eq!(cuckoo_hash(b"\x05\0\0\0\0\0\0\0zz", 0, false, 8, true), 5);
    assert_eq!(cuckoo_hash(b"\x05\0\0\0\0\0\0\0zz", 0, true, 3, true), 2);
}

#[test]
fn round_trip_every_hash_setting() {
    for (module, identity, block, seq0) in
        [(true, false, 5, false), (false, true, 10, false), (false, false, 1, true), (true, true, 2, true)]
    {
        let data = entries(700, seq0);
        let copts = CuckooOptions {
            hash_table_ratio: 0.8,
            max_search_depth: 20,
            cuckoo_block_size: block,
            identity_as_first_hash: identity,
            use_module_hash: module,
        };
        let t = open(build(copts, &data).unwrap()).unwrap();
        assert_eq!(t.properties().num_entries, 700);
        for (k, v) in &data {
            let (gk, gv) = t.get(&lookup_key(user_key(k), crate::key::MAX_SEQUENCE_NUMBER)).unwrap().unwrap();
            assert_eq!(&gk, k);
            if crate::key::trailer(k) & 0xff == ValueType::Value as u64 {
                assert_eq!(&gv, v);
            }
            // An older snapshot does not see a newer entry.
            if !seq0 {
                assert!(t.get(&lookup_key(user_key(k), 1)).unwrap().is_none());
            }
        }
        assert!(t.get(&lookup_key(b"key00000001", 1 << 40)).unwrap().is_none());
        assert!(t.get(&lookup_key(b"short", 1 << 40)).unwrap().is_none());
        // Sorted iteration, both ways.
        let mut it = t.iter();
        it.seek_to_first();
        for (k, _) in &data {
            assert_eq!(it.key(), &k[..]);
            it.next();
        }
        assert!(!it.valid());
        it.seek_to_last();
        for (k, _) in data.iter().rev() {
            assert_eq!(it.key(), &k[..]);
            it.prev();
        }
        it.seek(&lookup_key(b"key00000004", 1 << 40));
        assert_eq!(user_key(it.key()), b"key00000006");
        it.seek_for_prev(&lookup_key(b"key00000004", 1 << 40));
        assert_eq!(user_key(it.key()), b"key00000003");
    }
}

#[test]
fn rocksdb_limits_give_its_errors() {
    let copts = CuckooOptions::default();
    let two_sizes = vec![
        (make_internal_key(b"k1", 5, ValueType::Value), b"v".to_vec()),
        (make_internal_key(b"k22", 6, ValueType::Value), b"v".to_vec()),
    ];
    assert_eq!(build(copts.clone(), &two_sizes).unwrap_err().kind(), ErrorKind::NotSupported);
    let two_values = vec![
        (make_internal_key(b"k1", 5, ValueType::Value), b"v".to_vec()),
        (make_internal_key(b"k2", 6, ValueType::Value), b"vv".to_vec()),
    ];
    assert_eq!(build(copts.clone(), &two_values).unwrap_err().kind(), ErrorKind::NotSupported);
    let merge = vec![(make_internal_key(b"k1", 5, ValueType::Merge), b"v".to_vec())];
    assert_eq!(build(copts.clone(), &merge).unwrap_err().kind(), ErrorKind::NotSupported);
    let same_key = vec![
        (make_internal_key(b"k1", 6, ValueType::Value), b"v".to_vec()),
        (make_internal_key(b"k1", 5, ValueType::Value), b"v".to_vec()),
    ];
    assert_eq!(build(copts, &same_key).unwrap_err().kind(), ErrorKind::NotSupported);
}

#[test]
fn damaged_tables_give_corruption_naming_file_and_offset() {
    let data = entries(50, false);
    let good = build(CuckooOptions::default(), &data).unwrap();
    let data_size = open(good.clone()).unwrap().properties().data_size as usize;
    let mut corrupt_seen = 0;
    for at in (data_size..good.len()).step_by(3) {
        let mut bad = good.clone();
        bad[at] ^= 0x81;
        if let Err(e) = open(bad) {
            assert!(matches!(e.kind(), ErrorKind::Corruption | ErrorKind::InvalidArgument), "{at}: {e}");
            if e.kind() == ErrorKind::Corruption {
                let m = e.to_string();
                assert!(m.contains("000009.sst") && m.contains("offset"), "{at}: {m}");
                corrupt_seen += 1;
            }
        }
    }
    assert!(corrupt_seen > 10, "{corrupt_seen}");
    // A hash table size larger than the data.
    let Err(e) = open(good[data_size / 2..].to_vec()) else { panic!("opened") };
    assert_eq!(e.kind(), ErrorKind::Corruption);
}
