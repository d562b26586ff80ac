//! Golden: with `--try_load_options`, `shale ldb` applies the compression type of each
//! family's section of the database's OPTIONS file, as RocksDB 11.8.1's ldb does: on a
//! database 11.8.1 wrote with `--compression_type=no` (default family; the family `cf1`
//! it creates gets its ldb's LZ4), a put and a compaction by each tool leave data blocks stored with the same
//! compression type byte (read from `sst_dump --command=raw`'s dump), and Shale without
//! the flag keeps its default (Snappy), so the test can fail. Only compression is applied
//! yet (README). Judged by 11.8.1 live (it writes the database).
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
    let run_steps = |prog: &Path, pre: &[&str], with_flag: bool| -> Vec<String> {
        let d = tempfile::tempdir().unwrap();
        copy_dir(&src.path().join("db"), &d.path().join("db"));
        for s in steps {
            let args: Vec<&str> =
                s.iter().copied().filter(|a| with_flag || *a != "--try_load_options").collect();
            ok(&run_in(d.path(), prog, pre, &args), &format!("{args:?}"));
        }
        block_types(d.path(), &o11.sst_dump)
    };
    let rocks = run_steps(&o11.ldb, &[], true);
    let shale_loaded = run_steps(&shale(), &["ldb"], true);
    let shale_default = run_steps(&shale(), &["ldb"], false);
    assert!(rocks.contains(&"0".to_string()) && rocks.contains(&"4".to_string()), "{rocks:?}");
    assert_eq!(rocks, shale_loaded, "data block compression after --try_load_options");
    assert_ne!(rocks, shale_default, "without --try_load_options Shale keeps its defaults");
}
