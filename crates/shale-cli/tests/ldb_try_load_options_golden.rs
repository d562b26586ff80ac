//! Golden: loading the OPTIONS file (`--try_load_options`, and by default when `--db` is
//! given without `--create_if_missing` or `--ttl`, as 11.8.1's ldb), `shale ldb` applies the
//! compression type of each family's section of the database's OPTIONS file, as RocksDB
//! 11.8.1's ldb does: on a
//! database 11.8.1 wrote with `--compression_type=no` (default family; the family `cf1`
//! it creates gets its ldb's LZ4), a put and a compaction by each tool leave data blocks stored with the same
//! compression type byte (read from `sst_dump --command=raw`'s dump), the same without the
//! flag, and with `--try_load_options=false` each keeps its engine's default (LZ4 for
//! both, RocksDB 11's default), so the test can fail. Judged by 11.8.1 live (it writes the
//! database).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;
use std::path::Path;

/// The compression type bytes of the data blocks of every table of `dir/db`, sorted.
fn block_types(dir: &Path, sst_dump: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for t in files_with(dir, ".sst") {
        ok(&run_in(dir, sst_dump, &[], &[&format!("--file=db/{t}"), "--command=raw"]), "sst_dump raw");
        let dump = std::fs::read(dir.join("db").join(t.replace(".sst", "_dump.txt"))).unwrap();
        for l in String::from_utf8_lossy(&dump).lines().filter(|l| l.contains("Data block checksum")) {
            v.push(l.rsplit("compression type: ").next().unwrap().to_string());
        }
    }
    v.sort();
    v
}

#[test]
fn try_load_options_applies_the_compression() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1 here: it writes the database");
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let load: String =
        (0..60).map(|i| format!("key{i:03} ==> value-{i:03}-abcdefghijabcdefghij\n")).collect();
    let r = run_with_stdin(
        src.path(),
        &o11.ldb,
        &[],
        &["--db=db", "--create_if_missing", "--compression_type=no", "load"],
        &load,
    );
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    ok(&run_in(src.path(), &o11.ldb, &[], &["--db=db", "create_column_family", "cf1"]), "cf1");
    let steps: &[&[&str]] = &[
        &["--db=db", "--try_load_options", "put", "zz", "1"],
        &["--db=db", "--try_load_options", "compact"],
        &[
            "--db=db",
            "--try_load_options",
            "--column_family=cf1",
            "batchput",
            "a",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "b",
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        ],
        &["--db=db", "--try_load_options", "--column_family=cf1", "compact"],
    ];
    // `flag`: what replaces `--try_load_options` (None: nothing, ldb's default).
    let run_steps = |prog: &Path, pre: &[&str], flag: Option<&'static str>| -> Vec<String> {
        let d = tempfile::tempdir().unwrap();
        copy_dir(&src.path().join("db"), &d.path().join("db"));
        for s in steps {
            let args: Vec<&str> =
                s.iter().filter_map(|a| if *a == "--try_load_options" { flag } else { Some(*a) }).collect();
            ok(&run_in(d.path(), prog, pre, &args), &format!("{args:?}"));
        }
        block_types(d.path(), &o11.sst_dump)
    };
    let rocks = run_steps(&o11.ldb, &[], Some("--try_load_options"));
    let shale_loaded = run_steps(&shale(), &["ldb"], Some("--try_load_options"));
    assert!(rocks.contains(&"0".to_string()) && rocks.contains(&"4".to_string()), "{rocks:?}");
    assert_eq!(rocks, shale_loaded, "data block compression after --try_load_options");
    // ldb loads the file by default (with --db, without --create_if_missing and --ttl).
    let rocks_default = run_steps(&o11.ldb, &[], None);
    assert_eq!(rocks_default, rocks, "11.8.1 loads the OPTIONS file by default");
    assert_eq!(run_steps(&shale(), &["ldb"], None), rocks, "Shale loads it by default too");
    // With --try_load_options=false each keeps its engine's default: LZ4 (4), RocksDB
    // 11's default compression and Shale's.
    let rocks_off = run_steps(&o11.ldb, &[], Some("--try_load_options=false"));
    let shale_off = run_steps(&shale(), &["ldb"], Some("--try_load_options=false"));
    assert!(rocks_off.iter().all(|t| t == "4"), "{rocks_off:?}");
    assert_eq!(shale_off, rocks_off, "each engine's default compression");
    assert_ne!(rocks, shale_off, "with --try_load_options=false Shale keeps its defaults");
}

/// The merge operator the OPTIONS file names is the one reads use: on a database 11.8.1's
/// `db_bench --benchmarks=mergerandom --merge_operator=uint64add` wrote (operands in tables
/// and in the WAL), `scan`, `get` and `dump` print the sums as 11.8.1's ldb does, which loads
/// the file by default; with `--try_load_options=false` neither has an operator and both fail.
#[test]
fn loaded_options_merge_operator() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1 here: it writes the database");
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let db_bench = o11.ldb.with_file_name("db_bench");
    let o = std::process::Command::new(&db_bench)
        .args([
            &format!("--db={}", src.path().join("db").display()),
            "--benchmarks=mergerandom",
            "--merge_operator=uint64add",
            "--num=300",
            "--value_size=8",
            "--key_size=8",
            "--compression_type=none",
            "--write_buffer_size=4096",
            "--seed=7",
            "--threads=1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let label = "written by RocksDB 11.8.1 db_bench";
    for case in [
        only11(&["--db=db", "scan", "--hex"]),
        only11(&["--db=db", "dump", "--hex", "--max_keys=20"]),
        only11(&["--db=db", "get", "--hex", "0x0000000000000000"]),
        only11(&["--db=db", "scan", "--hex", "--try_load_options=false"]),
    ] {
        check("ldb", label, src.path(), &oracles, &case, &exact, None);
    }
}

/// An option RocksDB 11.8.1 does not know fails the load in the same words from both tools
/// (also with --ignore_unknown_options, the file naming 11.8.1 itself); in a file naming a
/// newer version --ignore_unknown_options skips it in both.
#[test]
fn unknown_options_fail_as_in_rocksdb_11() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1 here: it writes the database");
        return;
    };
    let src = tempfile::tempdir().unwrap();
    ok(&run_in(src.path(), &o11.ldb, &[], &["--db=db", "--create_if_missing", "put", "a", "b"]), "put");
    let options = files_with(src.path(), "").into_iter().filter(|n| n.starts_with("OPTIONS-")).max().unwrap();
    let file = src.path().join("db").join(options);
    let text = std::fs::read_to_string(&file).unwrap();
    let cases: [(&str, &[&str], bool); 4] = [
        ("11.8.1", &["--db=db", "scan"], false),
        ("11.8.1", &["--db=db", "--ignore_unknown_options", "scan"], false),
        ("11.9.0", &["--db=db", "scan"], false),
        ("11.9.0", &["--db=db", "--ignore_unknown_options", "scan"], true),
    ];
    for (version, args, succeeds) in cases {
        let changed = text
            .replace("rocksdb_version=11.8.1", &format!("rocksdb_version={version}"))
            .replace("[DBOptions]\n", "[DBOptions]\n  foo_bar=1\n");
        std::fs::write(&file, changed).unwrap();
        let (r, s) = run_both(src.path(), &o11.ldb, "ldb", args);
        assert_eq!(r.status == Some(0), succeeds, "{version} {args:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(s.status, r.status, "{version} {args:?}: {}{}", s.stdout, s.stderr);
        assert_eq!(s.stdout, r.stdout, "{version} {args:?}");
        assert_eq!(s.stderr, r.stderr, "{version} {args:?}");
    }
}

/// The table properties that show the options a table was written with: the number of
/// data blocks (block_size), the filter policy, the prefix extractor and the compression,
/// of every table of `dir/db`.
fn written_with(dir: &Path, sst_dump: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for t in files_with(dir, ".sst") {
        let out = run_in(dir, sst_dump, &[], &[&format!("--file=db/{t}"), "--show_properties"]);
        ok(&out, "sst_dump --show_properties");
        for l in String::from_utf8_lossy(&out.stdout).lines() {
            let l = l.trim();
            let shown = ["# data blocks:", "# entries:", "filter policy name:", "prefix extractor name:"];
            if shown.iter().any(|s| l.starts_with(s)) || l.starts_with("SST file compression algo:") {
                v.push(l.to_string());
            }
        }
    }
    v
}

/// Every option of the OPTIONS file reaches the database ldb opens (RocksDB's
/// `LoadLatestOptions` in `LDBCommand::PrepareOptions`), not only the compression: on a
/// database 11.8.1's ldb created with 512-byte blocks, a bloom filter of 10 bits per key,
/// a 4-byte fixed prefix extractor and ZSTD, a put and a compaction by each tool, loading
/// the file by default, leave tables with the same data block count, filter, prefix
/// extractor and compression (11.8.1's `sst_dump --show_properties`); Shale with
/// `--try_load_options=false` writes other tables (4 KiB blocks, no filter, LZ4), so the
/// test can fail.
#[test]
fn try_load_options_applies_every_option() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1 here: it writes the database");
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let load: String =
        (0..300).map(|i| format!("key{i:04} ==> value-{i:04}-abcdefghijabcdefghij\n")).collect();
    let create = [
        "--db=db",
        "--create_if_missing",
        "--block_size=512",
        "--bloom_bits=10",
        "--fix_prefix_len=4",
        "--compression_type=zstd",
        "load",
    ];
    let r = run_with_stdin(src.path(), &o11.ldb, &[], &create, &load);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let run_steps = |prog: &Path, pre: &[&str], extra: &[&str]| -> Vec<String> {
        let d = tempfile::tempdir().unwrap();
        copy_dir(&src.path().join("db"), &d.path().join("db"));
        for s in [&["--db=db", "put", "zz", "1"][..], &["--db=db", "compact"]] {
            let mut args = s.to_vec();
            args.extend_from_slice(extra);
            ok(&run_in(d.path(), prog, pre, &args), &format!("{args:?}"));
        }
        // Both read back the same keys.
        let scan = |p: &Path, pp: &[&str]| run_in(d.path(), p, pp, &["--db=db", "scan"]).stdout;
        assert_eq!(scan(&o11.ldb, &[]), scan(&shale(), &["ldb"]), "scan after {} {extra:?}", prog.display());
        written_with(d.path(), &o11.sst_dump)
    };
    let rocks = run_steps(&o11.ldb, &[], &[]);
    assert!(rocks.iter().any(|l| l == "filter policy name: bloomfilter"), "{rocks:?}");
    assert!(rocks.iter().any(|l| l == "prefix extractor name: rocksdb.FixedPrefix.4"), "{rocks:?}");
    assert!(rocks.iter().any(|l| l == "# data blocks: 28"), "{rocks:?}");
    assert_eq!(
        run_steps(&shale(), &["ldb"], &[]),
        rocks,
        "tables Shale's ldb writes, the OPTIONS file loaded"
    );
    let off = run_steps(&shale(), &["ldb"], &["--try_load_options=false"]);
    assert!(off.iter().any(|l| l == "filter policy name: N/A"), "{off:?}");
    assert_ne!(off, rocks, "without the OPTIONS file Shale writes other tables");
}
