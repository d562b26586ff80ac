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
    // The force threshold acts (issue 33): a run with it set goes through.
    let forced = dir.path().join("forced");
    let o = shale()
        .args(["bench", "--num=10", "--enable_blob_files", "--blob_garbage_collection_force_threshold=0.5"])
        .arg(format!("--db={}", forced.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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

/// The OPTIONS file a run writes, as `name=value` lines of its table-options section.
fn table_options(db: &std::path::Path) -> std::collections::HashMap<String, String> {
    let mut newest = None;
    for e in std::fs::read_dir(db).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_prefix("OPTIONS-") {
            let n: u64 = n.parse().unwrap();
            if newest.as_ref().is_none_or(|(m, _)| n > *m) {
                newest = Some((n, name));
            }
        }
    }
    let text = std::fs::read_to_string(db.join(newest.expect("an OPTIONS file").1)).unwrap();
    let section = text.split("[TableOptions/BlockBasedTable \"default\"]").nth(1).expect("table options");
    section
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter_map(|l| l.trim().split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// db_bench 11.8.1's partitioning flags reach the table options (checked in the OPTIONS
/// file the run writes), with db_bench's defaults, and the partitioned tables read back.
#[test]
fn partition_flags_reach_the_table_options() {
    let dir = tempfile::tempdir().unwrap();
    // Defaults: db_bench's (pin_top_level_index_and_filter false, unlike RocksDB's true).
    let plain = dir.path().join("plain");
    run(&["--num=200", "--benchmarks=fillseq", &format!("--db={}", plain.display())]);
    let t = table_options(&plain);
    assert_eq!(t["index_type"], "kBinarySearch");
    assert_eq!(t["partition_filters"], "false");
    assert_eq!(t["metadata_block_size"], "4096");
    assert_eq!(t["pin_top_level_index_and_filter"], "false");
    assert_eq!(t["block_restart_interval"], "16");
    assert_eq!(t["index_block_restart_interval"], "1");

    let part = dir.path().join("part");
    let (stdout, _) = run(&[
        "--num=5000",
        "--seed=3",
        "--bloom_bits=10",
        "--partition_index_and_filters=1",
        "--metadata_block_size=256",
        "--pin_top_level_index_and_filter=true",
        "--cache_index_and_filter_blocks=1",
        "--pin_l0_filter_and_index_blocks_in_cache=1",
        "--block_restart_interval=8",
        "--index_block_restart_interval=2",
        "--benchmarks=fillseq,flush,readrandom",
        &format!("--db={}", part.display()),
    ]);
    let t = table_options(&part);
    assert_eq!(t["index_type"], "kTwoLevelIndexSearch");
    assert_eq!(t["partition_filters"], "true");
    assert_eq!(t["metadata_block_size"], "256");
    assert_eq!(t["pin_top_level_index_and_filter"], "true");
    assert_eq!(t["cache_index_and_filter_blocks"], "true");
    assert_eq!(t["pin_l0_filter_and_index_blocks_in_cache"], "true");
    assert_eq!(t["block_restart_interval"], "8");
    assert_eq!(t["index_block_restart_interval"], "2");
    let r = results(&stdout);
    assert_eq!(r.len(), 2, "{stdout}");
    assert!(r[1].2.contains("(5000 of 5000 found)"), "{stdout}");

    // --partition_index alone: a partitioned index, whole filters.
    let index_only = dir.path().join("index_only");
    run(&[
        "--num=200",
        "--partition_index",
        "--benchmarks=fillseq",
        &format!("--db={}", index_only.display()),
    ]);
    let t = table_options(&index_only);
    assert_eq!(t["index_type"], "kTwoLevelIndexSearch");
    assert_eq!(t["partition_filters"], "false");

    let o = shale().args(["bench", "--num=10", "--metadata_block_size=-1"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("metadata_block_size"));
}

/// db_bench's `waitforcompaction`: its two lines, and afterwards no compaction is due: level 0
/// holds fewer files than `level0_file_num_compaction_trigger` though the fill flushed many.
#[test]
fn waitforcompaction_leaves_no_compaction_due() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let (stdout, _) = run(&[
        "--num=20000",
        "--seed=5",
        "--write_buffer_size=65536",
        "--level0_file_num_compaction_trigger=2",
        "--benchmarks=fillrandom,waitforcompaction,levelstats",
        &db,
    ]);
    let p = path.display();
    assert!(stdout.contains(&format!("waitforcompaction({p}): started\n")), "{stdout}");
    assert!(stdout.contains(&format!("waitforcompaction({p}): finished with status (OK)\n")), "{stdout}");
    let stats = stdout.split("Level Files Size(MB)").nth(1).expect("levelstats");
    let l0 = stats.lines().find(|l| l.split_whitespace().next() == Some("0")).expect("level 0 row");
    let files: u32 = l0.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(files < 2, "level 0 still holds {files} files: {stats}");
    let deeper: u32 = stats
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let level: u32 = w.next()?.parse().ok()?;
            (level > 0).then(|| w.next()?.parse::<u32>().ok()).flatten()
        })
        .sum();
    assert!(deeper > 0, "the flushed files were compacted down: {stats}");
}

/// The `compaction_options_universal` line of the newest OPTIONS file a run wrote.
fn universal_options(db: &std::path::Path) -> String {
    let mut names: Vec<(u64, String)> = std::fs::read_dir(db)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            Some((name.strip_prefix("OPTIONS-")?.parse().ok()?, name))
        })
        .collect();
    names.sort();
    let text = std::fs::read_to_string(db.join(&names.last().expect("an OPTIONS file").1)).unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with("compaction_options_universal="));
    line.expect("compaction_options_universal").trim().to_string()
}

/// db_bench 11.8.1's `--universal_*` flags, with db_bench's defaults. The expected lines are
/// what db_bench 11.8.1 itself wrote to its OPTIONS file for the same flags (run by hand:
/// `db_bench --benchmarks=fillseq --num=100 --compaction_style=1 --universal_size_ratio=7 ...`).
#[test]
fn universal_flags_reach_the_options_as_db_bench_sets_them() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    run(&["--num=100", "--benchmarks=fillseq", &format!("--db={}", plain.display())]);
    assert_eq!(
        universal_options(&plain),
        "compaction_options_universal={reduce_file_locking=true;incremental=false;compression_size_percent=-1;\
         allow_trivial_move=false;max_size_amplification_percent=200;max_merge_width=4294967295;\
         stop_style=kCompactionStopStyleTotalSize;min_merge_width=2;max_read_amp=-1;size_ratio=1;}"
    );
    let univ = dir.path().join("univ");
    let (stdout, _) = run(&[
        "--num=100",
        "--benchmarks=fillseq",
        "--compaction_style=1",
        "--universal_size_ratio=7",
        "--universal_min_merge_width=3",
        "--universal_max_merge_width=9",
        "--universal_max_size_amplification_percent=150",
        "--universal_compression_size_percent=80",
        "--universal_max_read_amp=8",
        "--universal_allow_trivial_move=true",
        "--universal_incremental=true",
        "--universal_stop_style=0",
        "--universal_reduce_file_locking=false",
        &format!("--db={}", univ.display()),
    ]);
    assert_eq!(results(&stdout).len(), 1, "{stdout}");
    assert_eq!(
        universal_options(&univ),
        "compaction_options_universal={reduce_file_locking=false;incremental=true;compression_size_percent=80;\
         allow_trivial_move=true;max_size_amplification_percent=150;max_merge_width=9;\
         stop_style=kCompactionStopStyleSimilarSize;min_merge_width=3;max_read_amp=8;size_ratio=7;}"
    );
    // RocksDB's own refusal at open: a read-amplification limit below the level-0 trigger.
    let o = shale()
        .args(["bench", "--num=10", "--compaction_style=1", "--universal_max_read_amp=2"])
        .arg(format!("--db={}", dir.path().join("amp").display()))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("max_read_amp"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = shale().args(["bench", "--num=10", "--universal_stop_style=2"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("universal_stop_style"));
}
