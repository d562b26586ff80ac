//! `flush_started`'s `total_data_size` is RocksDB's `MemTable::get_data_size`: per entry
//! the bytes `MemTable::Add` encodes (varint32 internal-key length, internal key, varint32
//! value length, value), range tombstones included. Shale's value for a known workload is
//! checked against that sum, and against RocksDB 11.8.1's own LOG for the same entry sizes
//! (`db_bench fillseq,flush` with 16-byte keys and 100-byte values), when its tools run here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};
use tools::*;

const NUM: u64 = 1000;

/// The `total_data_size` of every `flush_started` line of `dir`'s LOG.
fn flush_data_sizes(dir: &Path) -> Vec<u64> {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    log.lines()
        .filter(|l| l.contains("\"event\": \"flush_started\""))
        .map(|l| {
            let at =
                l.find("\"total_data_size\": ").expect("total_data_size") + "\"total_data_size\": ".len();
            l[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
        })
        .collect()
}

/// 1 + 24 + 1 + 100 bytes per put of a 16-byte key and a 100-byte value.
const PUT_BYTES: u64 = 126;

fn shale_flush(dir: &Path, deletes: u64, range_deletes: u64) -> Vec<u64> {
    let mut o = Options::default();
    o.create_if_missing(true);
    let db = DB::open(&o, dir).unwrap();
    for i in 0..NUM {
        db.put(format!("{i:016}"), [b'v'; 100]).unwrap();
    }
    for i in 0..deletes {
        db.delete(format!("{i:016}")).unwrap();
    }
    for i in 0..range_deletes {
        db.delete_range(format!("{i:016}"), format!("{:016}", i + 1)).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    flush_data_sizes(dir)
}

#[test]
fn total_data_size_counts_the_encoded_entries() {
    let tmp = tempfile::tempdir().unwrap();
    // A delete: 1 + 24 + 1 + 0; a range deletion: 1 + 24 (start) + 1 + 16 (end).
    let got = shale_flush(&tmp.path().join("db"), 10, 3);
    assert_eq!(got, vec![NUM * PUT_BYTES + 10 * 26 + 3 * 42]);
}

#[test]
fn total_data_size_matches_rocksdb_11() {
    if !use_rocksdb_11("total_data_size_matches_rocksdb_11") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let rocks = tmp.path().join("rocks");
    db_bench_run(
        &rocks,
        "fillseq,flush",
        NUM as usize,
        &["--disable_auto_compactions=1", "--key_size=16", "--value_size=100", "--disable_wal=0"],
    );
    let theirs = flush_data_sizes(&rocks);
    assert_eq!(theirs, vec![NUM * PUT_BYTES], "RocksDB 11.8.1's flush_started");
    let ours = shale_flush(&tmp.path().join("shale"), 0, 0);
    assert_eq!(ours, theirs);
}
