//! `shale bench` end to end: small runs of every workload report db_bench-format result
//! lines with the number of operations each workload does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::process::Command;

fn shale() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shale"))
}

/// (name, operations, message) of each result line in db_bench's format.
fn results(stdout: &str) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Some((name, rest)) = line.split_once(" : ") else { continue };
        if !rest.contains(" micros/op ") {
            continue;
        }
        let (head, tail) = rest.split_once(" operations;").expect("operations;");
        let ops = head.rsplit(' ').next().unwrap().parse().unwrap();
        out.push((name.trim().to_string(), ops, tail.to_string()));
    }
    out
}

fn run(args: &[&str]) -> (String, String) {
    let o = shale().arg("bench").args(args).output().expect("run shale");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "shale bench {args:?} failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn every_workload_does_the_operations_it_reports() {
    let chain = "fillseq,readrandom,readmissing,seekrandom,readseq,readreverse,overwrite,fillrandom,\
                 readwhilewriting,deleterandom,compact,flush,stats";
    let (stdout, stderr) = run(&[
        "--num=2000",
        "--seed=42",
        "--histogram=1",
        "--seek_nexts=2",
        &format!("--benchmarks={chain}"),
    ]);
    let r = results(&stdout);
    let names: Vec<&str> = r.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "fillseq",
            "readrandom",
            "readmissing",
            "seekrandom",
            "readseq",
            "readreverse",
            "overwrite",
            "fillrandom",
            "readwhilewriting",
            "deleterandom",
            "compact"
        ]
    );
    for (name, ops, _) in &r {
        let want = if name == "compact" { 1 } else { 2000 };
        assert_eq!(*ops, want, "{name}");
    }
    let msg = |n: &str| r.iter().find(|x| x.0 == n).unwrap().2.clone();
    assert!(msg("readrandom").ends_with(" (2000 of 2000 found)"), "{}", msg("readrandom"));
    assert!(msg("readmissing").ends_with(" (0 of 2000 found)"));
    assert!(msg("seekrandom").ends_with(" (2000 of 2000 found)"));
    assert!(msg("fillseq").contains(" MB/s"));
    assert!(stdout.contains("Microseconds per write:\nCount: 2000 Average: "));
    assert!(stdout.contains("Microseconds per seek:\nCount: 2000 "));
    assert!(stdout.contains("flush memtable\n"));
    assert!(stdout.starts_with("Keys:       16 bytes each (+ 0 bytes user-defined timestamp)\n"));
    assert!(stdout.contains("DB path: ["));
    assert!(stderr.contains("... finished 2000 ops"));
    assert!(stderr.contains("CPU:        "));
}

#[test]
fn threads_multiply_the_work_and_fillsync_uses_num_over_1000_keys() {
    let (stdout, _) =
        run(&["--num=1000", "--threads=2", "--seed=1", "--benchmarks=fillseq,readrandom,fillsync"]);
    let r = results(&stdout);
    assert_eq!(r[0].1, 2000, "two fillseq threads write --num each");
    assert_eq!(r[1].1, 2000);
    // As db_bench, the message is one thread's.
    assert!(r[1].2.ends_with(" (1000 of 1000 found)"), "{}", r[1].2);
    // db_bench 7.8.3's fillsync: --num synced writes over --num/1000 keys, "(N ops)".
    assert_eq!(r[2].1, 2000);
    assert!(r[2].2.ends_with(" (1 ops)"), "{}", r[2].2);
}

#[test]
fn existing_db_is_reused_and_fills_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    run(&["--num=500", "--seed=3", "--benchmarks=fillrandom", &db]);
    let (stdout, _) =
        run(&["--num=500", "--seed=3", "--use_existing_db", "--benchmarks=fillseq,readseq", &db]);
    assert!(stdout.contains("fillseq      : skipped (--use_existing_db is true)\n"), "{stdout}");
    let r = results(&stdout);
    assert_eq!(r[0].0, "readseq");
    assert!(r[0].1 > 250 && r[0].1 < 500, "distinct keys of 500 random writes: {}", r[0].1);
}

#[test]
fn unknown_flags_and_benchmarks_fail_naming_them() {
    let o = shale().args(["bench", "--num=10", "--max_open_filez=1"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--max_open_filez"));
    let o = shale().args(["bench", "--num=10", "--benchmarks=fillseq,nosuch"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown benchmark 'nosuch'"));
}

/// The integrated BlobDB flags reach the options: large values go to blob files (and small
/// ones stay in the tables), GC rewrites blob files during overwrite, and a value Shale
/// does not support is refused rather than ignored.
#[test]
fn blob_flags_put_values_in_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let blob_files = || {
        std::fs::read_dir(&path)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".blob"))
            .count()
    };
    let common: [&str; 12] = [
        "--num=3000",
        "--seed=5",
        "--value_size=1024",
        "--write_buffer_size=1048576",
        "--enable_blob_files=1",
        "--min_blob_size=256",
        "--blob_file_size=524288",
        "--blob_compression_type=lz4",
        "--enable_blob_garbage_collection=1",
        "--blob_garbage_collection_age_cutoff=1.0",
        "--use_blob_cache=1",
        &db,
    ];
    let (stdout, _) = run(&[&common[..], &["--benchmarks=fillrandom,flush,readrandom"][..]].concat());
    assert_eq!(results(&stdout).len(), 2, "{stdout}");
    assert!(blob_files() > 1, "values of 1 KiB went to blob files of 512 KiB");
    let (stdout, _) =
        run(&[&common[..], &["--use_existing_db", "--benchmarks=overwrite,flush,compact,readrandom"]]
            .concat());
    assert_eq!(results(&stdout).len(), 3, "{stdout}");
    // Small values stay inline.
    let small = dir.path().join("small");
    run(&[
        "--num=500",
        "--value_size=100",
        "--enable_blob_files",
        "--min_blob_size=256",
        "--benchmarks=fillrandom,flush",
        &format!("--db={}", small.display()),
    ]);
    assert!(std::fs::read_dir(&small).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".blob")));
    // Shale supports only the default force threshold: refused, by name.
    let o = shale()
        .args(["bench", "--num=10", "--enable_blob_files", "--blob_garbage_collection_force_threshold=0.5"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("blob_garbage_collection_force_threshold"), "{err}");
    let o = shale().args(["bench", "--num=10", "--blob_compression_type=lzma"]).output().unwrap();
    assert!(!o.status.success());
}

/// `--benchmark_write_rate_limit` paces the writers (db_bench's meaning: bytes per second,
/// granted 1/10 at a time every 100 ms) and shows in the header; `--report_cpu_time` adds
/// a CPU line after each result line, counting only the readers of a `*whilewriting`.
#[test]
fn write_rate_limit_paces_writers_and_cpu_time_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    // 100 writes of 16 + 100 bytes = 11,600 bytes at 46,400 bytes/s: 4,640 bytes per
    // refill, so at least two refills after the first (only a lower bound is checked).
    let started = std::time::Instant::now();
    let (stdout, _) = run(&[
        "--num=100",
        "--seed=5",
        "--benchmarks=fillseq",
        "--benchmark_write_rate_limit=46400",
        "--report_cpu_time",
        &db,
    ]);
    assert!(started.elapsed() >= std::time::Duration::from_millis(200), "{:?}", started.elapsed());
    assert!(stdout.contains("Write rate: 46400 bytes/second"), "{stdout}");
    assert_eq!(results(&stdout)[0].1, 100);
    assert!(
        stdout.lines().any(|l| l.starts_with("fillseq      :") && l.contains(" CPU-micros/op ")),
        "{stdout}"
    );
    let (stdout, _) = run(&[
        "--num=100",
        "--reads=50",
        "--seed=5",
        "--use_existing_db",
        "--seek_nexts=3",
        "--explicit_snapshot",
        "--auto_refresh_iterator_with_snapshot",
        "--benchmarks=seekrandomwhilewriting",
        "--benchmark_write_rate_limit=100000",
        "--writer_key_offset=100",
        "--report_cpu_time=1",
        &db,
    ]);
    let cpu = stdout.lines().find(|l| l.contains(" CPU-micros/op ")).expect("a CPU line");
    assert!(cpu.starts_with("seekrandomwhilewriting :") && cpu.ends_with(" 50 operations"), "{cpu}");
    // With auto-refresh the result tells how many times iterators moved (the count depends
    // on the writer's flushes, so only its presence is checked).
    assert!(stdout.contains(" auto-refreshes)"), "{stdout}");
}
