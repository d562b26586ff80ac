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

/// The offsets a stored index's bucket for `hash` names (RocksDB's `GetOffset`).
fn bucket_offsets(block: &[u8], hash: u32) -> Vec<u32> {
    use crate::coding::{decode_fixed32, decode_varint32};
    let (size, a) = decode_varint32(block).unwrap();
    let (_, b) = decode_varint32(&block[a..]).unwrap();
    let buckets = a + b;
    let v = decode_fixed32(&block[buckets + 4 * (hash % size) as usize..]);
    let sub = &block[buckets + 4 * size as usize..];
    if v & 0x8000_0000 != 0 {
        let p = (v ^ 0x8000_0000) as usize;
        let (n, c) = decode_varint32(&sub[p..]).unwrap();
        (0..n as usize).map(|i| decode_fixed32(&sub[p + c + 4 * i..])).collect()
    } else if u64::from(v) >= MAX_FILE_SIZE {
        Vec::new()
    } else {
        vec![v]
    }
}

/// The file offset of each record of a kPlain table with fixed-size keys, in order.
fn record_offsets(data: &[(Vec<u8>, Vec<u8>)]) -> Vec<u32> {
    let mut at = 0u32;
    let mut out = Vec::new();
    for (k, v) in data {
        out.push(at);
        let pk = crate::key::parse_internal_key(k).unwrap();
        let key = if pk.sequence == 0 && pk.value_type == ValueType::Value { k.len() - 7 } else { k.len() };
        at += (key + crate::coding::varint_length(v.len() as u64) + v.len()) as u32;
    }
    out
}

/// `store_index_in_file`: RocksDB's index and Bloom blocks are written (prefix mode and
/// total order, with and without Bloom locality); every prefix's first record is in its
/// bucket; the stored Bloom passes every key written and rejects most others.
#[test]
fn stored_index_and_bloom_blocks_are_written_and_read() {
    use super::stored_index::*;
    use crate::slice_transform::SliceTransform;
    let data = entries(true);
    for (prefix, locality, sparseness) in [(true, 0, 16), (true, 1, 3), (false, 0, 16), (false, 1, 1)] {
        let ctx = format!("prefix {prefix} locality {locality} sparseness {sparseness}");
        let popts = PlainTableOptions {
            user_key_len: 13,
            hash_table_ratio: if prefix { 0.75 } else { 0.0 },
            index_sparseness: sparseness,
            store_index_in_file: true,
            bloom_locality: locality,
            ..Default::default()
        };
        let bytes = build(popts, prefix, &data);
        let n = bytes.len() as u64;
        let pe = prefix.then(|| Arc::new(SliceTransform::create_fixed_prefix(4)));
        let t = PlainTable::open_for_cf(
            Arc::new(BytesFile(bytes.clone())),
            n,
            bytewise_internal_comparator(),
            "000007.sst",
            false,
            pe.clone(),
        )
        .unwrap();
        check(&t, &data);
        let props = t.properties();
        assert_eq!(
            props.user_collected.get(BLOOM_VERSION_PROPERTY).map(Vec::as_slice),
            Some(&b"1"[..]),
            "{ctx}"
        );
        let lines = props.user_collected.get(NUM_BLOOM_BLOCKS_PROPERTY).unwrap();
        let lines = crate::coding::decode_varint32(lines).unwrap().0;
        assert_eq!(lines > 0, locality > 0, "{ctx}");
        if lines > 0 {
            assert_eq!(lines % 2, 1, "{ctx}: an odd number of cache lines");
            assert_eq!(props.filter_size, u64::from(lines) * 64, "{ctx}");
        } else {
            assert_eq!(props.filter_size, (data.len() as u64 * 10).div_ceil(8), "{ctx}");
        }
        let shape = t.stored_index().unwrap();
        let prefixes: std::collections::BTreeSet<&[u8]> = data.iter().map(|(k, _)| &k[..4]).collect();
        if prefix {
            assert_eq!(shape.num_prefixes as usize, prefixes.len(), "{ctx}");
            assert_eq!(shape.index_size, (prefixes.len() as f64 / 0.75) as u32 + 1, "{ctx}");
        } else {
            assert_eq!((shape.num_prefixes, shape.index_size), (1, 1), "{ctx}");
        }
        // The index block, found through the table's tail: each prefix's first record is
        // named by its bucket; with one bucket, every sparseness-th record is.
        let tail = crate::table::meta_tail::read_raw_tail(&BytesFile(bytes.clone()), n, "x").unwrap();
        let ih = tail.meta[INDEX_BLOCK];
        assert_eq!(props.index_size, ih.size, "{ctx}");
        let block = &bytes[ih.offset as usize..(ih.offset + ih.size) as usize];
        let offsets = record_offsets(&data);
        let mut first_of_prefix = std::collections::BTreeMap::new();
        for (i, (k, _)) in data.iter().enumerate() {
            let p = if prefix { &k[..4] } else { &[][..] };
            first_of_prefix.entry(p.to_vec()).or_insert(offsets[i]);
        }
        for (p, off) in &first_of_prefix {
            assert!(bucket_offsets(block, slice_hash(p)).contains(off), "{ctx}: prefix {p:?}");
        }
        if !prefix {
            let named = bucket_offsets(block, 0);
            let want: Vec<u32> = offsets.iter().copied().step_by(sparseness).collect();
            assert_eq!(named, want, "{ctx}");
        }
        // The Bloom passes every key written; most absent keys (absent prefixes in prefix
        // mode) are turned away before the search.
        for (k, v) in &data {
            assert!(t.bloom_may_match(&k[..k.len() - 8]), "{ctx}");
            let got = t.get(&lookup_key(&k[..k.len() - 8], u64::MAX >> 8)).unwrap().unwrap();
            assert_eq!(&got.1, v, "{ctx}");
        }
        let absent =
            (0..1000).filter(|i| !t.bloom_may_match(format!("zz{i:02}key{i:05}").as_bytes())).count();
        assert!(absent > 900, "{ctx}: {absent} of 1000 absent keys turned away");
        // Opened by a family with another extractor (or none), the Bloom is not asked.
        let other = if prefix { None } else { Some(Arc::new(SliceTransform::create_fixed_prefix(2))) };
        let t2 = PlainTable::open_for_cf(
            Arc::new(BytesFile(bytes)),
            n,
            bytewise_internal_comparator(),
            "x",
            false,
            other,
        )
        .unwrap();
        assert!(t2.bloom_may_match(b"zz01key00001"), "{ctx}");
    }
}

/// Without the option no meta block besides the properties; with it and no records, no
/// index or Bloom block (RocksDB writes them for a non-empty table only).
#[test]
fn no_stored_blocks_without_the_option_or_records() {
    let data = entries(true);
    let bytes = build(PlainTableOptions { user_key_len: 13, ..Default::default() }, true, &data);
    let t = open(bytes).unwrap();
    assert!(t.stored_index().is_none());
    let popts = PlainTableOptions { user_key_len: 13, store_index_in_file: true, ..Default::default() };
    let bytes = build(popts, true, &[]);
    let n = bytes.len() as u64;
    let tail = crate::table::meta_tail::read_raw_tail(&BytesFile(bytes), n, "x").unwrap();
    assert_eq!(tail.meta.len(), 1, "{:?}", tail.meta.keys());
}

/// A stored index naming an offset past the data is Corruption naming the file and the
/// index block's offset.
#[test]
fn a_damaged_stored_index_is_corruption() {
    use super::stored_index::INDEX_BLOCK;
    let data = entries(true);
    let popts = PlainTableOptions {
        user_key_len: 13,
        hash_table_ratio: 0.75,
        store_index_in_file: true,
        ..Default::default()
    };
    let mut bytes = build(popts, true, &data);
    let n = bytes.len() as u64;
    let tail = crate::table::meta_tail::read_raw_tail(&BytesFile(bytes.clone()), n, "x").unwrap();
    let ih = tail.meta[INDEX_BLOCK];
    // The first bucket (after two one-byte varints here) made a direct offset past the data.
    let at = ih.offset as usize + 2;
    bytes[at..at + 4].copy_from_slice(&0x7000_0000u32.to_le_bytes());
    let e = open(bytes).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains(&format!("000007.sst offset {}", ih.offset)), "{e}");
}
