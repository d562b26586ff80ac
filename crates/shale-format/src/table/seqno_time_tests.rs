//! The mapping's rules, with RocksDB 11.8.1's `seqno_time_test.cc` cases as expectations.
#![allow(clippy::unwrap_used)] // a test may unwrap: a failure is the test failing

use super::*;

fn p(seqno: u64, time: u64) -> SeqnoTimePair {
    SeqnoTimePair { seqno, time }
}

fn all(m: &SeqnoToTimeMapping) -> Vec<SeqnoTimePair> {
    m.pairs().copied().collect()
}

#[test]
fn append_merges_what_says_nothing_new() {
    let mut m = SeqnoToTimeMapping::new();
    m.set_max_time_span(100).set_capacity(10);
    assert!(!m.append(0, 100));
    assert!(m.append(3, 200));
    assert!(m.append(10, 300));
    assert_eq!(m.len(), 2);
    // The same seqno later: kept at the older time.
    assert!(!m.append(10, 301));
    assert_eq!(all(&m).last(), Some(&p(10, 300)));
    assert!(!m.append(10, 299));
    assert_eq!(all(&m).last(), Some(&p(10, 299)));
    assert!(!m.append(11, 299));
    assert_eq!(all(&m).last(), Some(&p(11, 299)));
    assert!(!m.append(11, 250));
    assert_eq!(all(&m), vec![p(3, 200), p(11, 250)]);
}

#[test]
fn capacity_limits() {
    let mut m = SeqnoToTimeMapping::new();
    m.set_capacity(3);
    for (s, t) in [(10, 300), (20, 400), (30, 500), (40, 600)] {
        assert!(m.append(s, t));
    }
    assert_eq!(m.len(), 3);
    m.set_capacity(2);
    assert_eq!(all(&m), vec![p(10, 300), p(40, 600)]);
    m.set_capacity(1); // taken as 2
    assert!(m.append(60, 800));
    assert_eq!(m.len(), 2);
    m.set_capacity(0);
    assert!(m.is_empty());
    assert!(!m.append(70, 900));
}

#[test]
fn time_span_keeps_one_pair_older_than_the_span() {
    let mut m = SeqnoToTimeMapping::new();
    m.set_max_time_span(100);
    for (s, t) in [(1, 10), (2, 50), (3, 120), (4, 160), (5, 230)] {
        m.append(s, t);
    }
    // Cutoff 130: (3, 120) stays as the one pair at or before it.
    assert_eq!(all(&m), vec![p(3, 120), p(4, 160), p(5, 230)]);
    m.enforce(400);
    assert_eq!(all(&m), vec![p(5, 230)]);
}

#[test]
fn proximal_lookups() {
    let mut m = SeqnoToTimeMapping::new();
    for (s, t) in [(10, 500), (20, 600), (30, 700)] {
        m.append(s, t);
    }
    assert_eq!(m.proximal_time_before_seqno(10), 0);
    assert_eq!(m.proximal_time_before_seqno(11), 500);
    assert_eq!(m.proximal_time_before_seqno(20), 500);
    assert_eq!(m.proximal_time_before_seqno(21), 600);
    assert_eq!(m.proximal_seqno_before_time(499), 0);
    assert_eq!(m.proximal_seqno_before_time(500), 10);
    assert_eq!(m.proximal_seqno_before_time(599), 10);
    assert_eq!(m.proximal_seqno_before_time(600), 20);
    assert_eq!(m.tiering_cutoff_seqnos(1000, 0, 0), (None, None));
    assert_eq!(m.tiering_cutoff_seqnos(1000, 450, 0), (Some(11), None));
    assert_eq!(m.tiering_cutoff_seqnos(1000, 100, 350), (Some(21), Some(21)));
}

#[test]
fn encode_keeps_the_pairs_that_minimise_time_gaps() {
    let mut m = SeqnoToTimeMapping::new();
    m.set_capacity(10);
    for (s, t) in [(1, 10), (5, 17), (6, 25), (8, 30)] {
        m.append(s, t);
    }
    let mut out = Vec::new();
    m.clone().set_capacity(3).encode_to(&mut out);
    let mut d = SeqnoToTimeMapping::new();
    d.decode_from(&out).unwrap();
    assert_eq!(all(&d), vec![p(1, 10), p(5, 17), p(8, 30)]);
    for (s, t) in [(10, 100), (13, 200), (40, 250), (70, 300)] {
        m.append(s, t);
    }
    out.clear();
    m.clone().set_capacity(4).encode_to(&mut out);
    let mut d = SeqnoToTimeMapping::new();
    d.decode_from(&out).unwrap();
    assert_eq!(all(&d), vec![p(1, 10), p(10, 100), p(13, 200), p(70, 300)]);
}

#[test]
fn encoding_is_rocksdbs_delta_varints() {
    let mut m = SeqnoToTimeMapping::new();
    m.append(5, 1000);
    m.append(300, 1010);
    let mut out = Vec::new();
    m.encode_to(&mut out);
    // count 2 | (5, 1000) | (295, 10)
    assert_eq!(out, vec![2, 5, 0xe8, 0x07, 0xa7, 0x02, 10]);
    let mut d = SeqnoToTimeMapping::new();
    assert!(d.decode_from(&out[..out.len() - 1]).is_err());
    let mut extra = out.clone();
    extra.push(0);
    assert!(d.decode_from(&extra).is_err());
    assert!(d.is_empty());
    d.decode_from(&out).unwrap();
    assert_eq!(d.to_human_string(), "5->1000,300->1010,");
}

#[test]
fn copy_from_seqno_range_takes_the_pair_before_too() {
    let mut src = SeqnoToTimeMapping::new();
    for (s, t) in [(10, 100), (20, 200), (30, 300), (40, 400)] {
        src.append(s, t);
    }
    let mut m = SeqnoToTimeMapping::new();
    m.copy_from_seqno_range(&src, 25, 35);
    assert_eq!(all(&m), vec![p(20, 200), p(30, 300)]);
    let mut m = SeqnoToTimeMapping::new();
    m.copy_from_seqno_range(&src, 20, 20);
    assert_eq!(all(&m), vec![p(10, 100), p(20, 200)]);
    let mut m = SeqnoToTimeMapping::new();
    m.copy_from_seqno_range(&src, 0, u64::MAX);
    assert_eq!(m.len(), 4);
}

#[test]
fn pre_populate_spreads_times() {
    let mut m = SeqnoToTimeMapping::new();
    m.pre_populate(1, 5, 100, 200);
    assert_eq!(all(&m), vec![p(1, 100), p(2, 125), p(3, 150), p(4, 175), p(5, 200)]);
}

#[test]
fn unenforced_pairs_sort_and_merge() {
    let mut m = SeqnoToTimeMapping::new();
    m.add_unenforced(30, 300);
    m.add_unenforced(10, 100);
    m.add_unenforced(20, 100);
    m.add_unenforced(0, 5);
    m.enforce(0);
    assert_eq!(all(&m), vec![p(20, 100), p(30, 300)]);
}
