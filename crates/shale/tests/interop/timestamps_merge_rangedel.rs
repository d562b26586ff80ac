//! Merges and range deletions with user-defined timestamps written by Shale
//! (`merge_cf_with_ts`, `delete_range_cf_with_ts`; issue 33, helper tsgaps) read by RocksDB
//! 11.8.1's `ldb scan --read_timestamp=T --try_load_options` (its merge operator named by
//! Shale's OPTIONS file) as a model says, at several read timestamps, with data in tables
//! (flushed, compacted with and without `full_history_ts_low`) and in the WAL; Shale's own
//! point reads at the same timestamps agree, and so do RocksDB's (`ldb get --read_timestamp`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use shale::{CompactOptions, Options, ReadOptions, U64TsComparator, DB};
use tools::*;

fn options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o.set_merge_operator_object(shale::merge_operators::stringappend(","));
    o
}

/// (key, value) as `ldb scan --hex --read_timestamp=t` prints them.
fn ldb_scan_at(dir: &Path, t: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let a = args(&[
        &format!("--db={}", dir.display()),
        "scan",
        "--hex",
        "--try_load_options",
        &format!("--read_timestamp={t}"),
    ]);
    run_tool("ldb", &a)
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            let (k, v) = l.split_once(" ==> ").unwrap_or_else(|| panic!("unexpected ldb line {l:?}"));
            let (k, _ts) = k.split_once("|timestamp:").unwrap_or_else(|| panic!("no timestamp in {l:?}"));
            (decode_hex(k), decode_hex(v))
        })
        .collect()
}

/// One write of the model, at its timestamp (timestamps rise with sequence numbers).
#[derive(Clone)]
enum Op {
    Put(String),
    Merge(String),
    Delete,
}

/// key -> timestamp -> op; range deletions are recorded as a Delete of each key they cover
/// (every key the test uses is in the model).
type Model = BTreeMap<Vec<u8>, BTreeMap<u64, Op>>;

/// The value of each key at read timestamp `t`: operands merged down to a put or deletion.
fn model_at(model: &Model, t: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for (k, versions) in model {
        let mut operands: Vec<&str> = Vec::new();
        let mut base: Option<&str> = None;
        for (_, op) in versions.range(..=t).rev() {
            match op {
                Op::Merge(v) => operands.push(v),
                Op::Put(v) => {
                    base = Some(v);
                    break;
                }
                Op::Delete => break,
            }
        }
        if base.is_none() && operands.is_empty() {
            continue;
        }
        let mut parts: Vec<&str> = base.into_iter().collect();
        parts.extend(operands.iter().rev());
        out.push((k.clone(), parts.join(",").into_bytes()));
    }
    out
}

/// `ldb get --hex --read_timestamp=t` of one key (RocksDB's point read, `DBImpl::GetImpl`):
/// None when ldb says it is not found.
fn ldb_get_at(dir: &Path, key: &[u8], t: u64) -> Option<Vec<u8>> {
    let a = args(&[
        &format!("--db={}", dir.display()),
        "get",
        "--hex",
        "--try_load_options",
        &format!("--read_timestamp={t}"),
        &encode_hex(key),
    ]);
    let out = run_tool("ldb", &a);
    let value = out.lines().find(|l| l.starts_with("0x") || l.trim() == "Key not found").map(str::trim);
    match value {
        Some("Key not found") => None,
        Some(v) => Some(decode_hex(v.split_once(" ==> ").map_or(v, |(_, v)| v))),
        None => panic!("ldb get printed neither a value nor \"Key not found\": {out}"),
    }
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(t.to_le_bytes());
    ro
}

#[test]
fn shale_written_merges_and_range_deletions_with_timestamps_read_in_rocksdb_11() {
    let test = "shale_written_merges_and_range_deletions_with_timestamps_read_in_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<Vec<u8>> = (0..40u32).map(|i| format!("key{i:03}").into_bytes()).collect();
    let mut model: Model = keys.iter().map(|k| (k.clone(), BTreeMap::new())).collect();
    let mut now = 0u64;
    let mut checkpoints: Vec<(String, u64)> = Vec::new();
    {
        let db = DB::open(&options(), dir.path()).unwrap();
        let cf = db.cf_handle("default").unwrap();
        for round in 0..5u64 {
            for i in 0..60u64 {
                now += 1;
                let k = &keys[((i * 7 + round * 11) % 40) as usize];
                let v = format!("r{round}i{i}");
                match (i + round) % 6 {
                    0 => {
                        db.put_with_ts(k, now.to_le_bytes(), &v).unwrap();
                        model.get_mut(k).unwrap().insert(now, Op::Put(v));
                    }
                    5 => {
                        db.delete_with_ts(k, now.to_le_bytes()).unwrap();
                        model.get_mut(k).unwrap().insert(now, Op::Delete);
                    }
                    _ => {
                        db.merge_cf_with_ts(&cf, k, now.to_le_bytes(), &v).unwrap();
                        model.get_mut(k).unwrap().insert(now, Op::Merge(v));
                    }
                }
            }
            // A range deletion over a quarter of the keys.
            now += 1;
            let (from, to) = (&keys[(round * 7 % 30) as usize], &keys[(round * 7 % 30 + 10) as usize]);
            db.delete_range_cf_with_ts(&cf, from, to, now.to_le_bytes()).unwrap();
            for k in keys.iter().filter(|k| *k >= from && *k < to) {
                model.get_mut(k).unwrap().insert(now, Op::Delete);
            }
            checkpoints.push((format!("round {round}"), now));
            match round {
                1 => db.compact_range(None::<&[u8]>, None::<&[u8]>),
                3 => {
                    // Versions below the mark collapse; reads at or above it are unchanged.
                    let mut co = CompactOptions::default();
                    co.set_full_history_ts_low(checkpoints[1].1.to_le_bytes());
                    db.compact_range_cf_opt(&cf, None::<&[u8]>, None::<&[u8]>, &co);
                }
                4 => {} // stays in the WAL
                _ => db.flush().unwrap(),
            }
        }
        // Shale's point reads agree with the model.
        for &(_, t) in checkpoints.iter().skip(1) {
            let want: BTreeMap<Vec<u8>, Vec<u8>> = model_at(&model, t).into_iter().collect();
            for k in &keys {
                assert_eq!(
                    db.get_opt(k, &read_at(t)).unwrap().as_ref(),
                    want.get(k),
                    "{test}: Shale get at {t}"
                );
            }
        }
    }
    for (what, t) in checkpoints.iter().skip(1).chain([&("newest".to_string(), u64::MAX)]) {
        let want = model_at(&model, *t);
        assert_eq!(ldb_scan_at(dir.path(), *t), want, "{test}: ldb scan at {t} ({what})");
        // RocksDB's point reads of a few keys (merged values, deleted and absent keys).
        let want: BTreeMap<Vec<u8>, Vec<u8>> = want.into_iter().collect();
        for k in keys.iter().step_by(9).chain([&b"nokey".to_vec()]) {
            assert_eq!(
                ldb_get_at(dir.path(), k, *t).as_ref(),
                want.get(k),
                "{test}: ldb get {k:?} at {t} ({what})"
            );
        }
    }
}

/// A file of an unrelated comparator: RocksDB 11.8.1's `ldb ingest_extern_sst` into Shale's
/// database refuses it in the words Shale's ingestion gives (`SanityCheckTableProperties`).
#[test]
fn ingesting_a_file_of_an_unrelated_comparator_answers_as_rocksdb_11() {
    let test = "ingesting_a_file_of_an_unrelated_comparator_answers_as_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut w_opts = Options::default();
    w_opts.set_comparator_object(Arc::new(U64TsComparator::reverse_bytewise()));
    let path = dir.path().join("other.sst");
    let mut w = shale::SstFileWriter::create(&w_opts);
    w.open(&path).unwrap();
    w.put_with_ts("k", 1u64.to_le_bytes(), "v").unwrap();
    w.finish().unwrap();
    let db_dir = dir.path().join("db");
    let shale_err = {
        let db = DB::open(&options(), &db_dir).unwrap();
        db.put_with_ts("a", 1u64.to_le_bytes(), "x").unwrap();
        let e = db.ingest_external_file_opts(&shale::IngestExternalFileOptions::default(), vec![&path]);
        e.unwrap_err().to_string()
    };
    let a = args(&[
        &format!("--db={}", db_dir.display()),
        "--try_load_options",
        "ingest_extern_sst",
        &path.display().to_string(),
    ]);
    let (ok, out, err) = try_tool("ldb", &a);
    assert!(!ok, "{test}: ldb ingested it: {out}{err}");
    let text = format!("{out}{err}");
    assert!(
        text.contains(&format!("failed to ingest external SST: {shale_err}")),
        "{test}: Shale: {shale_err}; ldb: {text}"
    );
}
