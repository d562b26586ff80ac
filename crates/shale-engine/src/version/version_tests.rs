use super::*;
use crate::comparator::ReverseBytewiseComparator;
use crate::error::ErrorKind;
use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};

fn f(number: u64, lo: &str, hi: &str, seqs: (u64, u64)) -> Arc<FileMetaData> {
    Arc::new(FileMetaData {
        number,
        file_size: number * 10,
        smallest: make_internal_key(lo.as_bytes(), seqs.1, ValueType::Value),
        largest: make_internal_key(hi.as_bytes(), seqs.0, ValueType::Value),
        smallest_seqno: seqs.0,
        largest_seqno: seqs.1,
        ..FileMetaData::default()
    })
}

fn numbers(files: &[Arc<FileMetaData>]) -> Vec<u64> {
    files.iter().map(|f| f.number).collect()
}

fn sample() -> Version {
    Version::new(
        bytewise_internal_comparator(),
        4,
        vec![
            (1, f(20, "m", "p", (1, 2))),
            (0, f(11, "a", "c", (10, 20))),
            (1, f(21, "a", "c", (1, 2))),
            (0, f(12, "b", "f", (21, 30))),
            (0, f(13, "x", "z", (21, 30))),
            (0, f(14, "e", "h", (5, 9))),
            (1, f(22, "d", "f", (1, 2))),
            (0, f(15, "q", "r", (31, 31))),
        ],
    )
}

#[test]
fn orders_levels() {
    let v = sample();
    assert_eq!(v.num_levels(), 4);
    // Largest seqno descending, then smallest seqno, then number.
    assert_eq!(numbers(v.files(0)), vec![15, 13, 12, 11, 14]);
    assert_eq!(numbers(v.files(1)), vec![21, 22, 20]);
    assert_eq!(v.num_files(2), 0);
    assert!(v.files(99).is_empty());
    assert_eq!(v.level_bytes(1), 630);
    assert_eq!(v.level_bytes(7), 0);
    assert_eq!(v.all_files().count(), 8);
    assert_eq!(v.total_files(), 8);
    v.check_consistency().unwrap();
}

#[test]
fn l0_ties_break_on_smallest_seqno_then_number() {
    let v = Version::new(
        bytewise_internal_comparator(),
        2,
        vec![(0, f(1, "a", "b", (5, 9))), (0, f(3, "a", "b", (4, 9))), (0, f(2, "a", "b", (5, 9)))],
    );
    assert_eq!(numbers(v.files(0)), vec![2, 1, 3]);
}

#[test]
fn overlapping_files_on_sorted_levels() {
    let v = sample();
    let o = |lo: Option<&str>, hi: Option<&str>| {
        numbers(&v.overlapping_files(1, lo.map(str::as_bytes), hi.map(str::as_bytes)))
    };
    assert_eq!(o(Some("b"), Some("e")), vec![21, 22]);
    assert_eq!(o(Some("c"), Some("c")), vec![21]);
    assert_eq!(o(Some("g"), Some("l")), Vec::<u64>::new());
    assert_eq!(o(None, Some("d")), vec![21, 22]);
    assert_eq!(o(Some("n"), None), vec![20]);
    assert_eq!(o(None, None), vec![21, 22, 20]);
    assert_eq!(o(Some("q"), None), Vec::<u64>::new());
}

#[test]
fn overlapping_files_on_l0_expand_transitively() {
    let v = sample();
    // [a,b] hits 11 (a..c) -> range a..c hits 12 (b..f) -> a..f hits 14 (e..h) -> a..h.
    let got = numbers(&v.overlapping_files(0, Some(b"a"), Some(b"b")));
    assert_eq!(got, vec![12, 11, 14]);
    assert_eq!(numbers(&v.overlapping_files(0, Some(b"i"), Some(b"p"))), Vec::<u64>::new());
    assert_eq!(numbers(&v.overlapping_files(0, Some(b"r"), None)), vec![15, 13]);
    assert_eq!(numbers(&v.overlapping_files(0, None, Some(b"a"))), vec![12, 11, 14]);
}

#[test]
fn find_file_binary_searches() {
    let v = sample();
    let k = |u: &str, s| make_internal_key(u.as_bytes(), s, ValueType::Value);
    assert_eq!(v.find_file(1, &k("0", 5)), Some(0));
    assert_eq!(v.find_file(1, &k("c", 2)), Some(0));
    // Same user key as file 21's largest ("c"@1) but an older entry: after it.
    assert_eq!(v.find_file(1, &k("c", 0)), Some(1));
    assert_eq!(v.find_file(1, &k("g", 5)), Some(2));
    assert_eq!(v.find_file(1, &k("p", 1)), Some(2));
    assert_eq!(v.find_file(1, &k("q", 5)), None);
    assert_eq!(v.find_file(0, &k("a", 5)), None);
    assert_eq!(v.find_file(3, &k("a", 5)), None);
}

#[test]
fn consistency_catches_overlap() {
    let v = Version::new(
        bytewise_internal_comparator(),
        3,
        vec![(2, f(1, "a", "f", (1, 1))), (2, f(2, "e", "k", (1, 1)))],
    );
    let err = v.check_consistency().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    // RocksDB 11.8.1's text, keys as its InternalKey::DebugString(true).
    assert!(
        err.to_string().contains(
            "force_consistency_checks: VersionBuilder: L2 has overlapping ranges: file #1 largest key: \
             '66' seq:1, type:1 vs. file #2 smallest key: '65' seq:1, type:1"
        ),
        "{err}"
    );
    // Without force_consistency_checks the layout is taken as it is.
    v.check_consistency_with(false).unwrap();
    let v = Version::new(bytewise_internal_comparator(), 3, vec![(1, f(1, "z", "a", (1, 1)))]);
    assert_eq!(v.check_consistency().unwrap_err().kind(), ErrorKind::Corruption);
    v.check_consistency_with(false).unwrap();
}

#[test]
fn uses_the_column_familys_comparator() {
    let icmp = InternalKeyComparator::new(Arc::new(ReverseBytewiseComparator));
    let v = Version::new(icmp, 2, vec![(1, f(1, "c", "a", (1, 1))), (1, f(2, "z", "d", (1, 1)))]);
    assert_eq!(numbers(v.files(1)), vec![2, 1]);
    v.check_consistency().unwrap();
    assert_eq!(numbers(&v.overlapping_files(1, Some(b"e"), Some(b"b"))), vec![2, 1]);
}

/// `key | ts` with `ts` as RocksDB's u64 timestamp (8 bytes little-endian).
fn with_ts(key: &str, ts: u64) -> Vec<u8> {
    let mut k = key.as_bytes().to_vec();
    k.extend_from_slice(&ts.to_le_bytes());
    k
}

fn f_ts(number: u64, lo: (&str, u64), hi: (&str, u64)) -> Arc<FileMetaData> {
    Arc::new(FileMetaData {
        number,
        file_size: 10,
        smallest: make_internal_key(&with_ts(lo.0, lo.1), 5, ValueType::Value),
        largest: make_internal_key(&with_ts(hi.0, hi.1), 5, ValueType::Value),
        smallest_seqno: 5,
        largest_seqno: 5,
        ..FileMetaData::default()
    })
}

#[test]
fn keys_differing_only_by_timestamp_overlap() {
    let icmp = InternalKeyComparator::new(Arc::new(crate::comparator::U64TsComparator::bytewise()));
    // Level 1: #1 ends at k@5, #2 starts at k@3 (newest timestamp first: k@5 sorts before
    // k@3), so the two are disjoint as internal keys but share the user key k.
    let v = Version::new(
        icmp.clone(),
        3,
        vec![
            (1, f_ts(1, ("a", 9), ("k", 5))),
            (1, f_ts(2, ("k", 3), ("p", 1))),
            (1, f_ts(3, ("q", 1), ("z", 1))),
        ],
    );
    v.check_consistency().unwrap();
    // A range holding only k@2 meets both files that hold a version of k.
    let k2 = with_ts("k", 2);
    assert_eq!(numbers(&v.overlapping_files(1, Some(&k2), Some(&k2))), vec![1, 2]);
    // k@7 sorts before #1's largest k@5, k@1 after #2's smallest k@3: still both.
    assert_eq!(numbers(&v.overlapping_files(1, Some(&with_ts("k", 7)), Some(&with_ts("k", 1)))), vec![1, 2]);
    assert_eq!(numbers(&v.overlapping_files(1, Some(&with_ts("p", 9)), None)), vec![2, 3]);
    assert_eq!(numbers(&v.overlapping_files(1, None, Some(&with_ts("a", 0)))), vec![1]);
    // Level 0 grows its range the same way.
    let v = Version::new(icmp, 2, vec![(0, f_ts(4, ("a", 1), ("k", 9))), (0, f_ts(5, ("k", 1), ("m", 1)))]);
    assert_eq!(numbers(&v.overlapping_files(0, Some(&with_ts("a", 5)), Some(&with_ts("b", 5)))).len(), 2);
}
