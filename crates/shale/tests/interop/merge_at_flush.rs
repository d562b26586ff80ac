//! A flush combines merge operands as RocksDB's flush does (its `BuildTable` runs a
//! `MergeHelper` with the family's merge operator; Shale's flush runs the compaction's
//! per-key code, `compaction/job.rs`): within one snapshot stripe, operands over a Put or
//! deletion become one Put; operands with no base in their stripe are combined by the
//! operator's partial merge into one operand, or kept when it has none or declines;
//! operands a range tombstone covers are dropped. Checked through the level-0 table's
//! properties (`# entries`, `# merge operands`), against RocksDB 11.8.1's own recovery
//! flush of the same WAL (`sst_dump --show_properties`, skipped without its tools), and
//! through reads at every snapshot against a model, before and after a reopen. A failing
//! operator fails the flush with Corruption ("Merge operator failed").
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shale::table::reader::Table;
use shale::{ErrorKind, IteratorMode, MergeOperands, Options, ReadOptions, DB};
use tools::*;

/// Full and partial merge: concatenation (rust-rocksdb's associative operator).
fn opts() -> Options {
    concat_merge_options()
}

/// (`# entries`, `# merge operands`) of table `f`, read with Shale's table reader.
fn table_counts(f: &Path) -> (u64, u64) {
    let (file, size, opts) = table_file(f);
    let p = Table::open(file, size, opts).unwrap().properties().clone();
    (p.num_entries, p.num_merge_operands)
}

/// The only live table (level 0).
fn only_table(db: &DB, dir: &Path) -> PathBuf {
    let files = db.live_files().unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].level, 0);
    dir.join(files[0].name.trim_start_matches('/'))
}

#[test]
fn flush_combines_operands_per_snapshot_stripe() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    // a: operands over a Put: one Put.
    db.put(b"a", b"p").unwrap();
    db.merge(b"a", b"x").unwrap();
    db.merge(b"a", b"y").unwrap();
    // b: two operands, no base (older tables may hold one): one operand (partial merge).
    db.merge(b"b", b"1").unwrap();
    db.merge(b"b", b"2").unwrap();
    // d: an operand over a deletion: one Put.
    db.put(b"d", b"old").unwrap();
    db.delete(b"d").unwrap();
    db.merge(b"d", b"z").unwrap();
    // c: a snapshot between its operands: one operand per stripe.
    db.merge(b"c", b"1").unwrap();
    let snap = db.snapshot();
    db.merge(b"c", b"2").unwrap();
    db.merge(b"c", b"3").unwrap();
    // e: an operand covered by a newer range tombstone of its stripe goes; the one above
    // the tombstone stays (alone: nothing to combine it with).
    db.merge(b"e", b"1").unwrap();
    db.delete_range(b"e", b"f").unwrap();
    db.merge(b"e", b"2").unwrap();
    db.flush().unwrap();
    // a, b, c (2), d, e and the range tombstone; operands: b, c (2), e.
    assert_eq!(table_counts(&only_table(&db, dir.path())), (7, 4));
    let want: [(&[u8], &[u8]); 5] =
        [(b"a", b"pxy"), (b"b", b"12"), (b"c", b"123"), (b"d", b"z"), (b"e", b"2")];
    for (k, v) in want {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v), "{}", String::from_utf8_lossy(k));
    }
    assert_eq!(snap.get(b"c").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(snap.get(b"e").unwrap(), None);
    assert_eq!(snap.get(b"d").unwrap().as_deref(), Some(&b"z"[..]));
    drop(snap);
    drop(db);
    let db = DB::open(&opts(), dir.path()).unwrap();
    for (k, v) in want {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v), "{}", String::from_utf8_lossy(k));
    }
}

#[test]
fn operands_stay_when_the_partial_merge_declines() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator("concat, no partial", concat, |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| None);
    let db = DB::open(&o, dir.path()).unwrap();
    for op in [b"1", b"2", b"3"] {
        db.merge(b"k", op).unwrap();
    }
    db.put(b"m", b"p").unwrap();
    db.merge(b"m", b"q").unwrap();
    db.flush().unwrap();
    // k: three operands as they were; m: one Put.
    assert_eq!(table_counts(&only_table(&db, dir.path())), (4, 3));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"123"[..]));
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"pq"[..]));
}

#[test]
fn a_failing_merge_operator_fails_the_flush_with_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator_associative("fails", |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| None);
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.merge(b"k", b"x").unwrap();
    let e = db.flush().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("Merge operator failed"), "{e}");
    assert!(db.live_files().unwrap().is_empty());
}

/// A small deterministic generator (no dependence on a random crate's stream).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn read_all(db: &DB, snap: Option<&shale::Snapshot<'_>>) -> Model {
    let mut ro = ReadOptions::default();
    if let Some(s) = snap {
        ro.set_snapshot(s);
    }
    db.iterator_opt(IteratorMode::Start, ro)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

#[test]
fn reads_at_every_snapshot_match_a_model_after_flush_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let mut model = Model::new();
    let mut rng = Lcg(7);
    let mut snaps = Vec::new();
    for i in 0..600u32 {
        let k = format!("k{:02}", rng.next(24)).into_bytes();
        match rng.next(10) {
            0..=5 => {
                let op = [b'a' + rng.next(26) as u8];
                db.merge(&k, op).unwrap();
                model.entry(k).or_default().extend_from_slice(&op);
            }
            6 | 7 => {
                let v = format!("P{i}").into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            8 => {
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            _ => {
                let end = format!("k{:02}", rng.next(24)).into_bytes();
                if k < end {
                    db.delete_range(&k, &end).unwrap();
                    let doomed: Vec<Vec<u8>> = model.range(k.clone()..end).map(|(k, _)| k.clone()).collect();
                    for d in doomed {
                        model.remove(&d);
                    }
                }
            }
        }
        if i % 37 == 0 {
            snaps.push((db.snapshot(), model.clone()));
        }
    }
    let before: Vec<Model> = snaps.iter().map(|(s, _)| read_all(&db, Some(s))).collect();
    db.flush().unwrap();
    let (entries, operands) = table_counts(&only_table(&db, dir.path()));
    // Fewer entries than writes: operands were combined.
    assert!(operands < 600 * 6 / 10 / 2, "{operands} operands left");
    assert!(entries < 600, "{entries}");
    for (n, (s, m)) in snaps.iter().enumerate() {
        assert_eq!(&read_all(&db, Some(s)), m, "snapshot {n}");
        assert_eq!(&before[n], m, "snapshot {n} before the flush");
        for k in 0..24 {
            let k = format!("k{k:02}").into_bytes();
            assert_eq!(s.get(&k).unwrap().as_ref(), m.get(&k), "snapshot {n}");
        }
    }
    assert_eq!(read_all(&db, None), model);
    drop(snaps);
    drop(db);
    let db = DB::open(&opts(), dir.path()).unwrap();
    assert_eq!(read_all(&db, None), model);
    for k in 0..24 {
        let k = format!("k{k:02}").into_bytes();
        assert_eq!(db.get(&k).unwrap().as_ref(), model.get(&k));
    }
}

/// RocksDB 11.8.1's `db_bench --benchmarks=fillrandom,mergerandom --merge_operator=uint64add`
/// leaves its writes in the WAL; RocksDB's recovery flush (`ldb put`, which opens for
/// writing) and Shale's flush of the same WAL write tables with the same `# entries` and
/// `# merge operands`, and read the same.
#[test]
fn recovery_flush_counts_match_rocksdb_11() {
    let test = "recovery_flush_counts_match_rocksdb_11";
    if !use_rocksdb_11(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let rocks = tmp.path().join("rocks");
    db_bench_run(
        &rocks,
        "fillrandom,mergerandom",
        3000,
        &[
            "--merge_operator=uint64add",
            "--value_size=8",
            "--key_size=16",
            "--compression_type=none",
            "--disable_auto_compactions=1",
        ],
    );
    assert!(sst_files(&rocks).is_empty(), "db_bench flushed: the writes must stay in the WAL");
    let shale_dir = tmp.path().join("shale");
    std::fs::create_dir(&shale_dir).unwrap();
    for e in std::fs::read_dir(&rocks).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), shale_dir.join(e.file_name())).unwrap();
    }
    // RocksDB: opening for writing flushes the recovered memtable.
    run_tool("ldb", &args(&[&format!("--db={}", rocks.display()), "--try_load_options", "put", "zzzz", "x"]));
    let rocks_tables = sst_files(&rocks);
    assert_eq!(rocks_tables.len(), 1, "{rocks_tables:?}");
    let mut o = Options::default();
    o.set_merge_operator_object(shale::merge_operators::by_name("uint64add").unwrap());
    o.set_disable_auto_compactions(true);
    let db = open_all(&shale_dir, &o);
    if sst_files(&shale_dir).is_empty() {
        db.flush().unwrap();
    }
    let shale_tables = sst_files(&shale_dir);
    assert_eq!(shale_tables.len(), 1, "{shale_tables:?}");
    let want = table_counts(&rocks_tables[0]);
    // Every key is in the table once: a Put where fillrandom wrote it, else one operand.
    assert!(want.1 > 0 && want.1 < want.0, "{want:?}");
    assert_eq!(table_counts(&shale_tables[0]), want);
    let rocks_pairs: Pairs = ldb_scan(&rocks, None).into_iter().filter(|(k, _)| k != b"zzzz").collect();
    assert_same_pairs(&shale_scan_default(&db), &rocks_pairs, test);
}

/// MemPurge (`experimental_mempurge_threshold`) keeps what a flush would write: merge
/// operands combined, so a write buffer full of operands on a few keys is purged in memory
/// (no table) instead of being flushed, and reads stay right, also after a reopen.
#[test]
fn mempurge_combines_operands_as_a_flush() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_write_buffer_size(256 << 10);
    o.set_max_write_buffer_number(4);
    o.set_experimental_mempurge_threshold(1.0);
    o.set_merge_operator_object(shale::merge_operators::by_name("uint64add").unwrap());
    let rounds = 4000u64;
    {
        let db = DB::open(&o, &dir).unwrap();
        for k in 0..10u64 {
            db.put(format!("base{k}"), 1000u64.to_le_bytes()).unwrap();
        }
        // About 12 write buffers of operands on 20 keys, half of them over a Put.
        for _ in 0..rounds {
            for k in 0..10u64 {
                db.merge(format!("base{k}"), 1u64.to_le_bytes()).unwrap();
                db.merge(format!("bare{k}"), 2u64.to_le_bytes()).unwrap();
            }
        }
        assert!(sst_files(&dir).is_empty(), "MemPurge writes no table");
        let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
        assert!(log.contains("Mempurge of"), "LOG records the purges");
        for k in 0..10u64 {
            assert_eq!(db.get(format!("base{k}")).unwrap().unwrap(), (1000 + rounds).to_le_bytes());
            assert_eq!(db.get(format!("bare{k}")).unwrap().unwrap(), (2 * rounds).to_le_bytes());
        }
    }
    let db = DB::open(&o, &dir).unwrap();
    for k in 0..10u64 {
        assert_eq!(db.get(format!("base{k}")).unwrap().unwrap(), (1000 + rounds).to_le_bytes());
        assert_eq!(db.get(format!("bare{k}")).unwrap().unwrap(), (2 * rounds).to_le_bytes());
    }
}
