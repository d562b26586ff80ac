//! User-defined timestamps where Shale used to refuse what RocksDB 11.8.1 does (issue 33,
//! helper tsgaps; docs/timestamps.md): point reads (`get`, `multi_get`, `get_pinned`,
//! `get_entity`) meeting merge operands, blob values and wide-column entities; merges and
//! range deletions written with timestamps (`merge_cf_with_ts`, `delete_range_cf_with_ts`,
//! SstFileWriter `delete_range_with_ts`), through flush and compaction; repair skipping a
//! WAL batch whose timestamp sizes differ; ingestion refusing a file of an unrelated
//! comparator in RocksDB's words.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::Arc;

use shale::table::reader::TableReaderOptions;
use shale::{
    CompactOptions, ErrorKind, IngestExternalFileOptions, Options, ReadOptions, SstFileWriter,
    U64TsComparator, WriteBatch, WriteOptions, DB,
};

fn ts(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

fn read_at(t: u64) -> ReadOptions {
    let mut ro = ReadOptions::default();
    ro.set_timestamp(ts(t));
    ro
}

fn opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o.set_merge_operator_object(shale::merge_operators::stringappend(","));
    o
}

fn get(db: &DB, k: &str, t: u64) -> Option<String> {
    db.get_opt(k, &read_at(t)).unwrap().map(|v| String::from_utf8(v).unwrap())
}

/// `get`, `get_pinned`, `multi_get` and `get_entity` (the default column) agree; the value.
fn read_all_ways(db: &DB, k: &str, t: u64) -> Option<String> {
    let v = get(db, k, t);
    let cf = db.cf_handle("default").unwrap();
    let pinned =
        db.get_pinned_cf_opt(&cf, k, &read_at(t)).unwrap().map(|p| String::from_utf8(p.to_vec()).unwrap());
    assert_eq!(pinned, v, "get_pinned {k}@{t}");
    let multi = db.multi_get_opt([k, "zz-absent"], &read_at(t));
    assert_eq!(multi.len(), 2);
    let m: Vec<Option<String>> =
        multi.into_iter().map(|r| r.unwrap().map(|v| String::from_utf8(v).unwrap())).collect();
    assert_eq!(m, vec![v.clone(), None], "multi_get {k}@{t}");
    let e = db.get_entity_cf_opt(&cf, k, &read_at(t)).unwrap();
    let e_default = e.map(|cols| {
        assert_eq!(cols.len(), 1, "{cols:?}");
        assert!(cols[0].0.is_empty());
        String::from_utf8(cols[0].1.clone()).unwrap()
    });
    assert_eq!(e_default, v, "get_entity {k}@{t}");
    v
}

/// What the merge scenario reads at each timestamp, whatever stage it is in (`m6`: the
/// last operand of `a` is written).
fn check_merges(db: &DB, stage: &str, m6: bool) {
    let a9 = if m6 { "m5,m6" } else { "m5" };
    let want: &[(&str, u64, Option<&str>)] = &[
        ("a", 0, None),
        ("a", 1, Some("x1")),
        ("a", 2, Some("x1,m2")),
        ("a", 3, Some("x1,m2,m3")),
        ("a", 4, None),
        ("a", 5, Some("m5")),
        ("a", 9, Some(a9)),
        // Only operands: merged onto nothing.
        ("b", 1, None),
        ("b", 2, Some("b2")),
        ("b", 9, Some("b2,b3")),
    ];
    for &(k, t, v) in want {
        assert_eq!(read_all_ways(db, k, t).as_deref(), v, "{stage}: {k}@{t}");
    }
}

#[test]
fn point_reads_merge_operands_across_versions() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    db.put_with_ts("a", ts(1), "x1").unwrap();
    db.merge_cf_with_ts(&cf, "a", ts(2), "m2").unwrap();
    db.merge_cf_with_ts(&cf, "a", ts(3), "m3").unwrap();
    db.delete_with_ts("a", ts(4)).unwrap();
    db.merge_cf_with_ts(&cf, "b", ts(2), "b2").unwrap();
    // A batch holding a merge and a put with timestamps.
    let mut b = WriteBatch::default();
    b.merge_cf_with_ts(&cf, "a", ts(5), "m5");
    b.merge_cf_with_ts(&cf, "b", ts(3), "b3");
    db.write(b).unwrap();
    check_merges(&db, "memtable", false);
    db.flush().unwrap();
    check_merges(&db, "one table", false);
    // An operand in the memtable over operands and a deletion in a table.
    db.merge_cf_with_ts(&cf, "a", ts(6), "m6").unwrap();
    let want9 = read_all_ways(&db, "a", 9);
    assert_eq!(want9.as_deref(), Some("m5,m6"));
    db.flush().unwrap();
    check_merges(&db, "two tables", true);
    // Without full_history_ts_low every version is kept: the same answers.
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    check_merges(&db, "compacted", true);
    drop(db);
    let db = DB::open(&opts(), dir.path()).unwrap();
    check_merges(&db, "reopened", true);
    // Versions below full_history_ts_low are collapsed: reads at or above it are unchanged.
    let cf = db.cf_handle("default").unwrap();
    let mut co = CompactOptions::default();
    co.set_full_history_ts_low(ts(5));
    db.compact_range_cf_opt(&cf, None::<&[u8]>, None::<&[u8]>, &co);
    assert_eq!(read_all_ways(&db, "a", 5).as_deref(), Some("m5"));
    assert_eq!(read_all_ways(&db, "a", 9).as_deref(), Some("m5,m6"));
    assert_eq!(read_all_ways(&db, "b", 9).as_deref(), Some("b2,b3"));
    assert_eq!(db.get_opt("a", &read_at(4)).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn a_snapshot_passes_over_operands_written_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    db.put_with_ts("k", ts(1), "p1").unwrap();
    db.merge_cf_with_ts(&cf, "k", ts(5), "m5").unwrap();
    let snap = db.snapshot();
    // Written after the snapshot with an older timestamp: the snapshot does not see it.
    db.merge_cf_with_ts(&cf, "k", ts(3), "m3").unwrap();
    let at = |t| snap.get_opt("k", read_at(t)).unwrap().map(|v| String::from_utf8(v).unwrap());
    assert_eq!(at(9).as_deref(), Some("p1,m5"));
    assert_eq!(get(&db, "k", 9).as_deref(), Some("p1,m3,m5"));
    db.flush().unwrap();
    assert_eq!(at(9).as_deref(), Some("p1,m5"));
    assert_eq!(at(4).as_deref(), Some("p1"));
    assert_eq!(get(&db, "k", 4).as_deref(), Some("p1,m3"));
}

#[test]
fn merge_needs_a_merge_operator_and_the_timestamp_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_merge_operator_object(shale::merge_operators::stringappend(","));
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    // Without a timestamp, or one of another size: InvalidArgument, as RocksDB.
    assert_eq!(db.merge("k", "v").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.merge_cf_with_ts(&cf, "k", [1u8; 4], "v").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.delete_range_cf(&cf, "a", "b").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        db.delete_range_cf_with_ts(&cf, "a", "b", [1u8; 4]).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(get(&db, "k", 9), None);
    drop(db);
    // No merge operator: RocksDB's NotSupported.
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    let e = db.merge_cf_with_ts(&cf, "k", ts(1), "v").unwrap_err();
    assert_eq!(
        (e.kind(), e.to_string().as_str()),
        (ErrorKind::NotSupported, "Not implemented: Provide a merge_operator when opening DB")
    );
    // A family without timestamps refuses them.
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_merge_operator_object(shale::merge_operators::stringappend(","));
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    assert_eq!(db.merge_cf_with_ts(&cf, "k", ts(1), "v").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        db.delete_range_cf_with_ts(&cf, "a", "b", ts(1)).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

fn check_range_deletions(db: &DB, stage: &str) {
    let want: &[(&str, u64, Option<&str>)] = &[
        ("a", 1, Some("a1")),
        ("a", 2, None),
        ("a", 3, Some("a3")),
        ("b", 1, Some("b1")),
        ("b", 2, None),
        ("b", 9, None),
        // The end is exclusive.
        ("c", 2, Some("c1")),
        ("c", 9, Some("c1")),
        // The batch's tombstone [d, f)@6 hides d@4 and e@5 from reads at 6 or later; e@7
        // comes after it in the batch.
        ("e", 5, Some("e5")),
        ("e", 6, None),
        ("e", 7, Some("e7")),
        ("d", 9, None),
    ];
    for &(k, t, v) in want {
        assert_eq!(read_all_ways(db, k, t).as_deref(), v, "{stage}: {k}@{t}");
    }
}

#[test]
fn range_deletions_with_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    for k in ["a", "b", "c"] {
        db.put_with_ts(k, ts(1), format!("{k}1")).unwrap();
    }
    db.delete_range_cf_with_ts(&cf, "a", "c", ts(2)).unwrap();
    db.put_with_ts("a", ts(3), "a3").unwrap();
    db.put_with_ts("d", ts(4), "d4").unwrap();
    db.put_with_ts("e", ts(5), "e5").unwrap();
    let mut b = WriteBatch::default();
    b.delete_range_cf_with_ts(&cf, "d", "f", ts(6));
    b.put_cf_with_ts(&cf, "e", ts(7), "e7");
    db.write_opt(b, &WriteOptions::default()).unwrap();
    check_range_deletions(&db, "memtable");
    db.flush().unwrap();
    check_range_deletions(&db, "table");
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    check_range_deletions(&db, "compacted");
    drop(db);
    let db = DB::open(&opts(), dir.path()).unwrap();
    check_range_deletions(&db, "reopened");
    // The iterator agrees: at 2 only c; at 9 a, c and e.
    let keys = |t| {
        let mut it = db.raw_iterator_opt(read_at(t));
        it.seek_to_first();
        let mut out = Vec::new();
        while it.valid() {
            out.push(String::from_utf8(it.key().unwrap().to_vec()).unwrap());
            it.next();
        }
        out
    };
    assert_eq!(keys(2), ["c"]);
    assert_eq!(keys(9), ["a", "c", "e"]);
}

#[test]
fn range_deletions_survive_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&opts(), dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    db.put_with_ts("k", ts(1), "k1").unwrap();
    db.merge_cf_with_ts(&cf, "m", ts(1), "o1").unwrap();
    db.delete_range_cf_with_ts(&cf, "a", "l", ts(2)).unwrap();
    db.merge_cf_with_ts(&cf, "m", ts(3), "o3").unwrap();
    drop(db);
    let db = DB::open(&opts(), dir.path()).unwrap();
    assert_eq!(get(&db, "k", 1).as_deref(), Some("k1"));
    assert_eq!(get(&db, "k", 2), None);
    assert_eq!(read_all_ways(&db, "m", 9).as_deref(), Some("o1,o3"));
}

/// Entities and merges written before the family had timestamps, then read with the
/// comparator gaining `.u64ts` and `persist_user_defined_timestamps=false` (every old entry
/// reads with the minimum timestamp, RocksDB's way of enabling timestamps on a family).
fn toggled(persist_flush: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut plain = Options::default();
    plain.create_if_missing(true);
    plain.set_disable_auto_compactions(true);
    plain.set_merge_operator_object(shale::merge_operators::stringappend(","));
    let db = DB::open(&plain, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    let cols: Vec<(&[u8], &[u8])> = vec![(b"", b"d0"), (b"c1", b"v1")];
    db.put_entity_cf(&cf, "e", &cols, &WriteOptions::default()).unwrap();
    db.put_entity_cf(&cf, "f", &cols, &WriteOptions::default()).unwrap();
    db.merge("f", "op").unwrap();
    db.put("p", "base").unwrap();
    db.merge("p", "x").unwrap();
    if persist_flush {
        db.flush().unwrap();
    }
    drop(db);
    let mut o = Options::default().get_options_from_string("persist_user_defined_timestamps=false").unwrap();
    o.set_disable_auto_compactions(true);
    o.set_allow_concurrent_memtable_write(false);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    o.set_merge_operator_object(shale::merge_operators::stringappend(","));
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    let ro = read_at(u64::MAX);
    let owned = |c: &[(&[u8], &[u8])]| -> Vec<(Vec<u8>, Vec<u8>)> {
        c.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
    };
    for stage in ["after open", "after flush"] {
        assert_eq!(db.get_opt("e", &ro).unwrap().as_deref(), Some(&b"d0"[..]), "{stage}");
        assert_eq!(db.get_entity_cf_opt(&cf, "e", &ro).unwrap(), Some(owned(&cols)), "{stage}");
        assert_eq!(db.get_opt("f", &ro).unwrap().as_deref(), Some(&b"d0,op"[..]), "{stage}");
        let f_cols: Vec<(&[u8], &[u8])> = vec![(b"", b"d0,op"), (b"c1", b"v1")];
        assert_eq!(db.get_entity_cf_opt(&cf, "f", &ro).unwrap(), Some(owned(&f_cols)), "{stage}");
        let m = db.multi_get_opt(["e", "p"], &ro);
        let m: Vec<Option<Vec<u8>>> = m.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(m, vec![Some(b"d0".to_vec()), Some(b"base,x".to_vec())], "{stage}");
        db.flush().unwrap();
    }
    // A merge with a timestamp over the old entity: in the memtable, then in a table.
    db.merge_cf_with_ts(&cf, "e", ts(7), "y").unwrap();
    let e_cols: Vec<(&[u8], &[u8])> = vec![(b"", b"d0,y"), (b"c1", b"v1")];
    for stage in ["memtable", "table"] {
        assert_eq!(db.get_opt("e", &ro).unwrap().as_deref(), Some(&b"d0,y"[..]), "{stage}");
        assert_eq!(db.get_entity_cf_opt(&cf, "e", &ro).unwrap(), Some(owned(&e_cols)), "{stage}");
        db.flush().unwrap();
    }
}

#[test]
fn entities_and_merges_from_before_timestamps_read_from_tables() {
    toggled(true);
}

#[test]
fn entities_and_merges_from_before_timestamps_read_from_the_wal() {
    toggled(false);
}

#[test]
fn blob_values_under_merge_operands() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_enable_blob_files(true);
    o.set_min_blob_size(4);
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    let big = |t: u64| format!("value-{t}-{}", "x".repeat(100));
    db.put_with_ts("k", ts(1), big(1)).unwrap();
    db.put_with_ts("k", ts(3), big(3)).unwrap();
    db.flush().unwrap();
    assert!(std::fs::read_dir(dir.path()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".blob")));
    // Operands in the memtable over blob values in a table, then all in tables.
    db.merge_cf_with_ts(&cf, "k", ts(4), "tail").unwrap();
    for stage in ["memtable", "table", "compacted"] {
        assert_eq!(read_all_ways(&db, "k", 1), Some(big(1)), "{stage}");
        assert_eq!(read_all_ways(&db, "k", 2), Some(big(1)), "{stage}");
        assert_eq!(read_all_ways(&db, "k", 3), Some(big(3)), "{stage}");
        assert_eq!(read_all_ways(&db, "k", 4), Some(format!("{},tail", big(3))), "{stage}");
        if stage == "memtable" {
            db.flush().unwrap();
        } else {
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
    }
    // RocksDB 11.8.1 refuses blob direct write with timestamps (ValidateOptions).
    o.set_enable_blob_direct_write(true);
    o.set_allow_concurrent_memtable_write(false);
    drop(db);
    let e = DB::open(&o, dir.path()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
}

#[test]
fn sst_file_writer_range_deletions_with_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let path = dir.path().join("rd.sst");
    let mut w = SstFileWriter::create(&o);
    w.open(&path).unwrap();
    // Without a timestamp: RocksDB's InvalidArgument.
    assert_eq!(w.delete_range("a", "c").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(w.delete_range_with_ts("c", "a", ts(5)).unwrap_err().kind(), ErrorKind::InvalidArgument);
    w.delete_range_with_ts("a", "c", ts(5)).unwrap();
    w.put_with_ts("x", ts(5), "x5").unwrap();
    w.finish().unwrap();
    // The tombstone is RocksDB's: both ends with the timestamp, sequence 0.
    let size = std::fs::metadata(&path).unwrap().len();
    let file = shale::fs::default_fs().new_random_access_file(&path).unwrap();
    let icmp = shale::key::InternalKeyComparator::new(Arc::new(U64TsComparator::bytewise()));
    let t = shale::table::reader::Table::open(file, size, TableReaderOptions::standalone(icmp, "rd.sst"))
        .unwrap();
    let mut start = b"a".to_vec();
    start.extend_from_slice(&ts(5));
    start.extend_from_slice(&[0xf, 0, 0, 0, 0, 0, 0, 0]);
    let mut end = b"c".to_vec();
    end.extend_from_slice(&ts(5));
    assert_eq!(t.range_tombstones(), &[(start, end)][..]);
    assert_eq!(t.properties().num_range_deletions, 1);
    // Ingested (nothing of its range in the database: RocksDB refuses any overlap there).
    let db = DB::open(&o, dir.path().join("db")).unwrap();
    db.put_with_ts("z", ts(3), "z3").unwrap();
    db.flush().unwrap();
    db.ingest_external_file_opts(&IngestExternalFileOptions::default(), vec![&path]).unwrap();
    assert_eq!(get(&db, "b", 5), None);
    assert_eq!(get(&db, "x", 5).as_deref(), Some("x5"));
    assert_eq!(get(&db, "z", 5).as_deref(), Some("z3"));
}

#[test]
fn repair_skips_a_wal_batch_whose_timestamp_sizes_differ() {
    // A WAL written without timestamps, then the comparator gains them
    // (persist_user_defined_timestamps=false).
    let mut o = Options::default().get_options_from_string("persist_user_defined_timestamps=false").unwrap();
    o.set_allow_concurrent_memtable_write(false);
    o.set_comparator_object(Arc::new(U64TsComparator::bytewise()));
    let unflushed_plain_writes = |dir: &std::path::Path| {
        let mut plain = Options::default();
        plain.create_if_missing(true);
        let db = DB::open(&plain, dir).unwrap();
        db.put("in-wal", "w").unwrap();
    };
    // An open pads the batch's keys with the minimum timestamp (RocksDB's
    // kReconcileInconsistency).
    let opened = tempfile::tempdir().unwrap();
    unflushed_plain_writes(opened.path());
    let db = DB::open(&o, opened.path()).unwrap();
    assert_eq!(db.get_opt("in-wal", &read_at(u64::MAX)).unwrap().as_deref(), Some(&b"w"[..]));
    drop(db);
    // RocksDB's Repairer skips it ("Log #N: ignoring ...").
    let repaired = tempfile::tempdir().unwrap();
    unflushed_plain_writes(repaired.path());
    DB::repair(&o, repaired.path()).unwrap();
    let log = std::fs::read_to_string(repaired.path().join("LOG")).unwrap();
    assert!(
        log.contains(": ignoring Invalid argument: WriteBatch contains timestamp size inconsistency."),
        "{log}"
    );
    let db = DB::open(&o, repaired.path()).unwrap();
    assert_eq!(db.get_opt("in-wal", &read_at(u64::MAX)).unwrap(), None);
    db.put_with_ts("after", ts(1), "a").unwrap();
    assert_eq!(db.get_opt("after", &read_at(u64::MAX)).unwrap().as_deref(), Some(&b"a"[..]));
}

#[test]
fn ingesting_a_file_of_an_unrelated_comparator_uses_rocksdbs_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut w_opts = Options::default();
    w_opts.set_comparator_object(Arc::new(U64TsComparator::reverse_bytewise()));
    let path = dir.path().join("other.sst");
    let mut w = SstFileWriter::create(&w_opts);
    w.open(&path).unwrap();
    w.put_with_ts("k", ts(1), "v").unwrap();
    w.finish().unwrap();
    let db = DB::open(&opts(), dir.path().join("db")).unwrap();
    let e = db.ingest_external_file_opts(&IngestExternalFileOptions::default(), vec![&path]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "Invalid argument: leveldb.BytewiseComparator.u64ts: does not match existing comparator \
         rocksdb.ReverseBytewiseComparator.u64ts"
    );
}

#[test]
fn max_successive_merges_stores_each_operand() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.set_max_successive_merges(2);
    let db = DB::open(&o, dir.path()).unwrap();
    let cf = db.cf_handle("default").unwrap();
    db.put_with_ts("k", ts(1), "p").unwrap();
    for t in 2..6 {
        db.merge_cf_with_ts(&cf, "k", ts(t), format!("m{t}")).unwrap();
    }
    // RocksDB's MergeCF reads the key without a read timestamp, which fails in such a
    // family: every operand is stored as it came (type 2), none folded into a put.
    let mut ro = read_at(9);
    ro.set_iter_start_ts(ts(0));
    let mut it = db.raw_iterator_opt(ro);
    it.seek_to_first();
    let mut types = Vec::new();
    while it.valid() {
        let k = it.key().unwrap();
        types.push(k[k.len() - 8]);
        it.next();
    }
    it.status().unwrap();
    assert_eq!(types, [2, 2, 2, 2, 1]);
    assert_eq!(read_all_ways(&db, "k", 9).as_deref(), Some("p,m2,m3,m4,m5"));
    assert_eq!(read_all_ways(&db, "k", 3).as_deref(), Some("p,m2,m3"));
}
