use std::sync::Arc;

use super::*;
use crate::key::{bytewise_internal_comparator, lookup_key, make_internal_key, ValueType};
use crate::table::builder::TableBuilderOptions;
use crate::table::meta_tail::{BytesFile, SharedBuf};
use crate::ErrorKind;

fn entries(fixed: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..200u64)
        .map(|i| {
            let t = if i % 7 == 3 { ValueType::Deletion } else { ValueType::Value };
            // Every fifth key has sequence 0 (the 0xFF marker form).
            let seq = if i % 5 == 0 { 0 } else { 100 + i };
            let t = if seq == 0 { ValueType::Value } else { t };
            let uk = if fixed {
                format!("pfx{:02}key{:05}", i / 10, i)
            } else {
                format!("p{}k{}", i / 10, i * 13)
            };
            let v = if t == ValueType::Deletion {
                Vec::new()
            } else {
                format!("v{i}-").repeat(1 + (i % 90) as usize).into_bytes()
            };
            (make_internal_key(uk.as_bytes(), seq, t), v)
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

fn build(popts: PlainTableOptions, prefix: bool, data: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut o = TableBuilderOptions::new(bytewise_internal_comparator());
    if prefix {
        o.prefix_extractor = Some(Arc::new(crate::slice_transform::SliceTransform::create_fixed_prefix(4)));
    }
    let out = SharedBuf::default();
    let mut b = PlainTableBuilder::new(o, popts, Box::new(out.clone()));
    for (k, v) in data {
        b.add(k, v).unwrap();
    }
    let r = b.finish().unwrap();
    let bytes = out.0.lock().clone();
    assert_eq!(r.file_size, bytes.len() as u64);
    bytes
}

fn open(bytes: Vec<u8>) -> crate::Result<Arc<PlainTable>> {
    let n = bytes.len() as u64;
    PlainTable::open(Arc::new(BytesFile(bytes)), n, bytewise_internal_comparator(), "000007.sst", false)
}

fn check(t: &Arc<PlainTable>, data: &[(Vec<u8>, Vec<u8>)]) {
    let mut it = t.iter();
    it.seek_to_first();
    for (k, v) in data {
        assert!(it.valid());
        assert_eq!(it.key(), &k[..]);
        assert_eq!(it.value(), &v[..]);
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for (k, _) in data.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        it.prev();
    }
    assert!(!it.valid());
    for (k, v) in data {
        let uk = crate::key::user_key(k);
        let got = t.get(&lookup_key(uk, crate::key::MAX_SEQUENCE_NUMBER)).unwrap().unwrap();
        assert_eq!(&got.0, k);
        assert_eq!(&got.1, v);
        it.seek(&lookup_key(uk, crate::key::MAX_SEQUENCE_NUMBER));
        assert_eq!(it.key(), &k[..]);
    }
    assert!(t.get(&lookup_key(b"zzz-absent", 5)).unwrap().is_none());
    assert_eq!(t.properties().num_entries, data.len() as u64);
}

#[test]
fn plain_encoding_variable_and_fixed_keys_round_trip() {
    let data = entries(false);
    let t = open(build(PlainTableOptions::default(), false, &data)).unwrap();
    check(&t, &data);
    let data = entries(true);
    let p = PlainTableOptions { user_key_len: 13, ..Default::default() };
    let bytes = build(p, false, &data);
    let t = open(bytes).unwrap();
    assert_eq!(t.properties().fixed_key_len, 13);
    check(&t, &data);
}

#[test]
fn prefix_encoding_round_trips_with_sparse_full_keys() {
    for sparseness in [1, 3, 16] {
        let data = entries(true);
        let p = PlainTableOptions {
            encoding: PlainEncoding::Prefix,
            index_sparseness: sparseness,
            ..Default::default()
        };
        let t = open(build(p, true, &data)).unwrap();
        assert_eq!(t.properties().format_version, 1);
        check(&t, &data);
    }
}

#[test]
fn wrong_key_length_and_range_deletions_are_refused() {
    let o = TableBuilderOptions::new(bytewise_internal_comparator());
    let p = PlainTableOptions { user_key_len: 4, ..Default::default() };
    let mut b = PlainTableBuilder::new(o, p, Box::new(SharedBuf::default()));
    let e = b.add(&make_internal_key(b"abcde", 1, ValueType::Value), b"v").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = b.add(&make_internal_key(b"abcd", 1, ValueType::RangeDeletion), b"e").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
}

#[test]
fn full_scan_mode_refuses_get_and_seek() {
    let data = entries(false);
    let bytes = build(PlainTableOptions::default(), false, &data);
    let n = bytes.len() as u64;
    let t = PlainTable::open(Arc::new(BytesFile(bytes)), n, bytewise_internal_comparator(), "x.sst", true)
        .unwrap();
    assert_eq!(t.get(&lookup_key(b"p0k0", 9)).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let mut it = t.iter();
    it.seek(&lookup_key(b"p0k0", 9));
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::InvalidArgument);
    it.seek_to_first();
    assert!(it.valid());
}

#[test]
fn damaged_tables_give_corruption_naming_file_and_offset() {
    let data = entries(false);
    let good = build(PlainTableOptions::default(), false, &data);
    // Damage bytes of the data part and of the tail in turn: open must fail with Corruption
    // naming the file and an offset, or succeed with a table whose records agree with its
    // properties (a damaged value byte goes unnoticed: plain tables have no checksums).
    let mut corrupt_seen = 0;
    for at in (0..good.len()).step_by(7) {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        match open(bad) {
            Ok(t) => {
                let mut it = t.iter();
                it.seek_to_first();
                let mut n = 0;
                while it.valid() {
                    n += 1;
                    it.next();
                }
                // No checksums: damaged properties may describe a smaller table, but what is
                // read always agrees with them.
                assert_eq!(n as u64, t.properties().num_entries, "damage at {at}");
            }
            Err(e) => {
                assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::Corruption | ErrorKind::NotSupported | ErrorKind::InvalidArgument
                    ),
                    "{at}: {e}"
                );
                if e.kind() == ErrorKind::Corruption {
                    let m = e.to_string();
                    assert!(m.contains("000007.sst") && m.contains("offset"), "{at}: {m}");
                    corrupt_seen += 1;
                }
            }
        }
    }
    assert!(corrupt_seen > 10);
    // A truncated file.
    let short = good[..good.len() - 20].to_vec();
    let Err(e) = open(short) else { panic!("opened") };
    assert_eq!(e.kind(), ErrorKind::Corruption);
}
