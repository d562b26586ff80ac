//! Golden: `shale ldb dump_wal` prints what RocksDB 11.8.1's `ldb dump_wal` prints for WALs
//! holding puts, deletes, single deletes, range deletions, batches and column families; a
//! directory of WALs; `--db` (which names the families the WAL's keys belong to: without
//! it 11.8.1 adds a line naming the families it could not open); and its errors. No
//! difference is normalised away. 7.8.3 agrees where `--db` is given.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn dump_wal_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_dump_wal_golden", &oracles);
    let mut writers: Vec<(String, std::path::PathBuf, Vec<&str>)> =
        oracles.iter().map(|o| (format!("written by {}", o.name), o.ldb.clone(), vec![])).collect();
    writers.push((SHALE_DB.to_string(), shale(), vec!["ldb"]));
    // WALs written by each oracle and by Shale, kept whole: these databases are not flushed
    // after the writes (the last step only adds a family).
    for (label, writer, pre) in writers {
        for with_cf in [false, true] {
            let d = tempfile::tempdir().unwrap();
            let mut steps: Vec<&[&str]> = vec![
                &["--db=db", "--create_if_missing", "put", "a", "1"],
                &["--db=db", "batchput", "b", "2", "c\u{7f}", "3"],
                &["--db=db", "delete", "a"],
                &["--db=db", "singledelete", "b"],
                &["--db=db", "deleterange", "a", "z"],
            ];
            if with_cf {
                steps.push(&["--db=db", "create_column_family", "cf1"]);
                steps.push(&["--db=db", "--column_family=cf1", "put", "x", "y"]);
            }
            for s in steps {
                ok(&run_in(d.path(), &writer, &pre, s), &format!("{s:?}"));
            }
            for wal in files_with(d.path(), ".log") {
                let f = format!("--walfile=db/{wal}");
                for args in [
                    &["dump_wal", f.as_str()][..],
                    &["dump_wal", f.as_str(), "--header"],
                    &["dump_wal", f.as_str(), "--header", "--print_value"],
                    &["dump_wal", f.as_str(), "--print_value=true"],
                    &["dump_wal", f.as_str(), "--db=db", "--header"],
                ] {
                    // Without --db 11.8.1 adds its line on the families it did not open.
                    let case = Case { args, v7: args.contains(&"--db=db") };
                    // Recorded: WAL contents are deterministic (sequence numbers, offsets).
                    let r = if with_cf { Some(&mut rec) } else { None };
                    check("ldb", &label, d.path(), &oracles, &case, &exact, r);
                }
            }
            for case in [
                only11(&["dump_wal", "--walfile=db"]),
                only11(&["dump_wal", "--walfile=db", "--header", "--print_value"]),
            ] {
                check("ldb", &label, d.path(), &oracles, &case, &exact, None);
            }
        }
    }
}

#[test]
fn dump_wal_errors_match_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_dump_wal_errors", &oracles);
    let d = tempfile::tempdir().unwrap();
    ok(&run_in(d.path(), &shale(), &["ldb"], &["--db=db", "--create_if_missing", "put", "a", "1"]), "put");
    std::fs::create_dir(d.path().join("db/empty")).unwrap();
    std::fs::create_dir(d.path().join("db/nowal")).unwrap();
    std::fs::write(d.path().join("db/nowal/CURRENT"), b"x").unwrap();
    let wal = format!("--walfile=db/{}", files_with(d.path(), ".log")[0]);
    for case in [
        only11(&["dump_wal", "--walfile=missing.log"]),
        only11(&["dump_wal", "--walfile=db/CURRENT"]),
        only11(&["dump_wal", "--walfile=db/empty"]),
        only11(&["dump_wal", "--walfile=db/nowal"]),
        only11(&["dump_wal", &wal, "--bogus"]),
        only11(&["dump_wal", &wal, "--bogus=2"]),
        only11(&["dump_wal"]),
    ] {
        check("ldb", SHALE_DB, d.path(), &oracles, &case, &exact, Some(&mut rec));
    }
}

/// `--only_print_seqno_gaps`: only the batches whose sequence number does not follow the
/// previous batch's (its sequence plus its count), each after the previous batch's numbers,
/// as RocksDB 11.8.1's ldb prints them (compared with its ldb when it runs here). The WAL is
/// written directly: a database's own WAL has no gap.
#[test]
fn dump_wal_only_print_seqno_gaps_matches_ldb() {
    let oracles = oracles();
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("db")).unwrap();
    let path = d.path().join("db/000005.log");
    let fs = shale_format::fs::default_fs();
    let mut w = shale_format::wal::LogWriter::new(fs.new_writable_file(&path).unwrap(), 5);
    // (sequence, keys): 1+2 = 3 follows, 10 does not, 11 follows, 20 does not.
    for (seq, keys) in [(1u64, &["a", "b"][..]), (3, &["c"]), (10, &["d"]), (11, &["e", "f"]), (20, &["g"])] {
        let mut b = shale_engine::batch::Batch::new();
        for k in keys {
            b.put(k, "v");
        }
        b.set_sequence(seq);
        w.add_record(b.data()).unwrap();
    }
    w.sync().unwrap();
    drop(w);
    let args = ["dump_wal", "--walfile=db/000005.log", "--only_print_seqno_gaps", "--header"];
    let o = run_in(d.path(), &shale(), &["ldb"], &args);
    ok(&o, "dump_wal --only_print_seqno_gaps");
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Sequence,Count,ByteSize,Physical Offset,Key(s)", "{text}");
    assert!(lines[1].starts_with("Prev batch sequence number: 3, prev batch count: 1, 10,1,"), "{text}");
    assert!(lines[1].contains("PUT(0) : 0x64 "), "{text}");
    assert!(lines[2].starts_with("Prev batch sequence number: 11, prev batch count: 2, 20,1,"), "{text}");
    assert!(!text.contains("0x61") && !text.contains("0x65"), "batches that follow are not printed: {text}");
    check("ldb", SHALE_DB, d.path(), &oracles, &only11(&args), &exact, None);
}

/// The markers of two-phase commit: a WAL Shale's `TransactionDB` wrote with prepared,
/// committed and rolled-back transactions (and plain writes between them) is dumped as
/// RocksDB 11.8.1's ldb dumps it (`BEGIN_PREPARE(false) ... END_PREPARE(0xXID) `,
/// `COMMIT(0xXID) `, `ROLLBACK(0xXID) `: its `InMemoryHandler`), with and without
/// `--print_value`. Recorded in `golden/expected/ldb_dump_wal_2pc.txt`.
#[test]
fn dump_wal_prints_two_phase_commit_markers_as_ldb() {
    use shale::{Options, TransactionDB, TransactionDBOptions};
    let oracles = oracles();
    let mut rec = Recording::open("ldb_dump_wal_2pc", &oracles);
    let d = tempfile::tempdir().unwrap();
    {
        let mut o = Options::default();
        o.create_if_missing(true);
        let db: TransactionDB =
            TransactionDB::open(&o, &TransactionDBOptions::default(), d.path().join("db")).unwrap();
        for i in 0..4u32 {
            let txn = db.transaction();
            txn.put(format!("key{i}"), format!("v{i}")).unwrap();
            txn.delete(format!("old{i}")).unwrap();
            txn.set_name(format!("xid{i}").as_bytes()).unwrap();
            txn.prepare().unwrap();
            if i % 2 == 1 {
                txn.rollback().unwrap();
            } else {
                txn.commit().unwrap();
            }
            db.put(format!("plain{i}"), b"p").unwrap();
        }
        // Closed without a flush: everything stays in the WAL.
    }
    let wals = files_with(d.path(), ".log");
    assert!(!wals.is_empty());
    let mut dumped = String::new();
    for wal in wals {
        let f = format!("--walfile=db/{wal}");
        for args in [&["dump_wal", f.as_str()][..], &["dump_wal", f.as_str(), "--header", "--print_value"]] {
            check("ldb", SHALE_DB, d.path(), &oracles, &only11(args), &exact, Some(&mut rec));
        }
        let o = run_in(d.path(), &shale(), &["ldb"], &["dump_wal", &f, "--print_value"]);
        ok(&o, "dump_wal");
        dumped.push_str(&String::from_utf8_lossy(&o.stdout));
    }
    // What the recording holds, checked here too so that a missing recording still fails.
    assert!(dumped.contains("BEGIN_PREPARE(false) PUT(0) : 0x6B657930 : 0x7630 DELETE(0) : 0x6F6C6430 END_PREPARE(0x78696430) "), "{dumped}");
    assert!(dumped.contains(",COMMIT(0x78696430) \n"), "{dumped}");
    assert!(dumped.contains(",ROLLBACK(0x78696431) \n"), "{dumped}");
}
