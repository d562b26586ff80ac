//! `shale ldb remote_compaction_worker` alone (no RocksDB tool needed, so CI runs it): on a
//! database Shale's ldb wrote (four L0 tables: puts, an overwrite, a deletion), the test
//! writes `job/input.bin` as RocksDB's primary would (Shale's encoder of the
//! CompactionServiceInput, naming every live table, output level 6), then runs the worker.
//! `input.bin` exists before the worker starts, so its poll returns at once.
//!
//! Checked: the worker's line; `result.bin` decodes (status OK, output level, output path,
//! the input record count, the output tables' sizes, keys and properties as the files in
//! `job/output` have them, `rocksdb.newest.key.time` the inputs' newest as a local
//! compaction writes it); the outputs hold exactly the live keys (sst_dump's scan); the
//! database itself is unchanged (a secondary compacts). A subcompaction's key range
//! (`has_begin` / `has_end`, as RocksDB's primary sends with `max_subcompactions` > 1): the
//! outputs hold only the keys from `begin` up to `end`. Then the errors: an input naming a
//! table that is not live (NotFound through `OpenAndCompact:`), a missing OPTIONS file, and
//! a missing `--job_dir`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

use std::path::Path;

use shale_engine::compaction::service::{CompactionServiceInput, CompactionServiceResult};

fn write(dir: &Path) {
    let steps: &[&[&str]] = &[
        &["--db=db", "--create_if_missing", "put", "a", "1"],
        &["--db=db", "batchput", "b", "2", "c", "3"],
        &["--db=db", "put", "a", "4"],
        &["--db=db", "delete", "c"],
        // Opening flushes the WAL's data: the delete becomes the fourth table (e stays
        // in the WAL). No automatic
        // compaction runs meanwhile (it would change the tables).
        &["--db=db", "put", "e", "5"],
    ];
    for s in steps {
        let mut args = s.to_vec();
        args.push("--auto_compaction=false");
        ok(&run_in(dir, &shale(), &["ldb"], &args), &format!("{args:?}"));
    }
}

fn input_for(db: &Path) -> CompactionServiceInput {
    let d = shale::DB::open_for_read_only(&shale::Options::default(), db, false).unwrap();
    let mut files: Vec<String> =
        d.live_files().unwrap().into_iter().map(|f| f.name.trim_start_matches('/').to_string()).collect();
    files.sort();
    drop(d);
    let db_id = std::fs::read_to_string(db.join("IDENTITY")).unwrap();
    // The newest OPTIONS file, as a primary names the one it wrote at open.
    let options_file_number = std::fs::read_dir(db)
        .unwrap()
        .filter_map(|e| {
            e.unwrap().file_name().to_string_lossy().strip_prefix("OPTIONS-")?.parse::<u64>().ok()
        })
        .max()
        .unwrap();
    CompactionServiceInput {
        cf_name: "default".into(),
        input_files: files,
        output_level: 6,
        db_id: db_id.trim().to_string(),
        options_file_number,
        ..Default::default()
    }
}

/// A table's "rocksdb.newest.key.time" property (it must have one).
fn newest_key_time(path: &Path) -> u64 {
    let size = std::fs::metadata(path).unwrap().len();
    let file = shale_format::fs::default_fs().new_random_access_file(path).unwrap();
    let opts = shale_format::table::reader::TableReaderOptions::standalone(
        shale_format::key::bytewise_internal_comparator(),
        path.display().to_string(),
    );
    let table = shale_format::table::reader::Table::open(file, size, opts).unwrap();
    table.properties().raw_u64("rocksdb.newest.key.time").unwrap()
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn worker(dir: &Path) -> std::process::Output {
    run_in(dir, &shale(), &["ldb"], &["--db=db", "remote_compaction_worker", "--job_dir=job"])
}

#[test]
fn worker_compacts_the_named_tables_into_the_job_directory() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    write(dir);
    let input = input_for(&dir.join("db"));
    assert_eq!(input.input_files.len(), 4, "{:?}", input.input_files);
    std::fs::create_dir(dir.join("job")).unwrap();
    std::fs::write(dir.join("job/input.bin"), input.encode()).unwrap();
    let live_before = input_for(&dir.join("db")).input_files;
    // The inputs' newest "rocksdb.newest.key.time" (their flushes' times), which the output
    // carries (RocksDB's MaxInputFileNewestKeyTime). The worker runs in a later second than
    // that, so an output stamped with the worker's own time differs from it.
    let inputs_newest =
        input.input_files.iter().map(|n| newest_key_time(&dir.join("db").join(n))).max().unwrap();
    assert!(inputs_newest > 0);
    while unix_secs() <= inputs_newest {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    let o = worker(dir);
    ok(&o, "remote_compaction_worker");
    let result_bytes = std::fs::read(dir.join("job/result.bin")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("remote_compaction_worker: OK ({} bytes result)\n", result_bytes.len())
    );
    assert!(!dir.join("job/result.bin.tmp").exists());

    let r = CompactionServiceResult::decode(&result_bytes).unwrap();
    assert_eq!(r.status.code, 0, "{:?}", r.status);
    assert_eq!(r.output_level, 6);
    assert_eq!(r.output_path, "job/output");
    // a, b, c, a again, c deleted.
    assert_eq!(r.stat("num_input_records"), 5);
    assert_eq!(r.stat("is_remote_compaction"), 1);
    assert_eq!(r.output_files.len(), 1);
    let f = &r.output_files[0];
    let path = dir.join("job/output").join(&f.file_name);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), f.file_size);
    assert_eq!(shale_format::key::user_key(&f.smallest_internal_key), b"a");
    assert_eq!(shale_format::key::user_key(&f.largest_internal_key), b"b");
    assert_eq!(f.table_property_u64("num_entries"), 2);
    assert_eq!(r.output_level_stats.get("num_output_records"), 2);
    assert!(f.table_property_u64("tail_start_offset") > 0);
    assert_eq!(f.table_properties["comparator_name"], "leveldb.BytewiseComparator");
    // The compaction's own table options (compact.rs): the inputs' newest key time, in the
    // result and in the table itself.
    assert_eq!(f.table_property_u64("newest_key_time"), inputs_newest);
    assert_eq!(newest_key_time(&path), inputs_newest);

    let scan =
        run_in(dir, &shale(), &["sst_dump"], &[&format!("--file={}", path.display()), "--command=scan"]);
    ok(&scan, "sst_dump scan");
    let text = String::from_utf8_lossy(&scan.stdout);
    let keys: Vec<&str> = text.lines().filter(|l| l.starts_with('\'')).collect();
    assert_eq!(keys.len(), 2, "{text}");
    assert!(keys[0].starts_with("'a' ") && keys[0].ends_with(" => 4"), "{text}");
    assert!(keys[1].starts_with("'b' ") && keys[1].ends_with(" => 2"), "{text}");

    // The worker compacted a secondary: the database still has its four tables.
    assert_eq!(input_for(&dir.join("db")).input_files, live_before);
}

/// The keys (`'key' ... => value` lines of sst_dump's scan) of the tables a result names.
fn output_keys(dir: &Path, job: &str, r: &CompactionServiceResult) -> Vec<String> {
    let mut keys = Vec::new();
    for f in &r.output_files {
        let path = dir.join(job).join("output").join(&f.file_name);
        let scan =
            run_in(dir, &shale(), &["sst_dump"], &[&format!("--file={}", path.display()), "--command=scan"]);
        ok(&scan, "sst_dump scan");
        for l in String::from_utf8_lossy(&scan.stdout).lines().filter(|l| l.starts_with('\'')) {
            let (k, v) = (l.split(' ').next().unwrap(), l.rsplit(" => ").next().unwrap());
            keys.push(format!("{k}={v}"));
        }
    }
    keys
}

/// A subcompaction's key range, as RocksDB's primary sends it with `max_subcompactions` > 1
/// (`begin` inclusive, `end` exclusive, either open): the worker compacts only the keys in
/// it (RocksDB's `CompactionServiceCompactionJob::Prepare`), the rest of the inputs untouched.
#[test]
fn worker_compacts_a_subcompaction_range() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    write(dir);
    let cases: [(Option<&str>, Option<&str>, &[&str]); 4] = [
        (Some("b"), Some("c"), &["'b'=2"]),
        (Some("b"), None, &["'b'=2"]),
        (None, Some("b"), &["'a'=4"]),
        (Some("a"), Some("c"), &["'a'=4", "'b'=2"]),
    ];
    for (i, (begin, end, want)) in cases.into_iter().enumerate() {
        let job = format!("job{i}");
        std::fs::create_dir(dir.join(&job)).unwrap();
        let mut input = input_for(&dir.join("db"));
        input.has_begin = begin.is_some();
        input.begin = begin.unwrap_or("").as_bytes().to_vec();
        input.has_end = end.is_some();
        input.end = end.unwrap_or("").as_bytes().to_vec();
        std::fs::write(dir.join(&job).join("input.bin"), input.encode()).unwrap();
        let o = run_in(
            dir,
            &shale(),
            &["ldb"],
            &["--db=db", "remote_compaction_worker", &format!("--job_dir={job}")],
        );
        ok(&o, &format!("remote_compaction_worker {begin:?}..{end:?}"));
        let r = CompactionServiceResult::decode(&std::fs::read(dir.join(&job).join("result.bin")).unwrap())
            .unwrap();
        assert_eq!(r.status.code, 0, "{:?}", r.status);
        assert_eq!(
            output_keys(dir, &job, &r),
            want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "{begin:?}..{end:?}"
        );
        let records: u64 = r.output_files.iter().map(|f| f.table_property_u64("num_entries")).sum();
        assert_eq!(r.output_level_stats.get("num_output_records"), records);
    }
}

#[test]
fn worker_errors() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    write(dir);
    std::fs::create_dir(dir.join("job")).unwrap();

    let mut input = input_for(&dir.join("db"));
    input.input_files.push("999999.sst".into());
    std::fs::write(dir.join("job/input.bin"), input.encode()).unwrap();
    let o = worker(dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("Failed: OpenAndCompact: ") && err.contains("999999.sst"), "{err}");
    assert!(!dir.join("job/result.bin").exists());

    let mut input = input_for(&dir.join("db"));
    input.options_file_number = 999_999;
    std::fs::write(dir.join("job/input.bin"), input.encode()).unwrap();
    let o = worker(dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("Failed: OpenAndCompact: ") && err.contains("OPTIONS-999999"), "{err}");

    std::fs::write(dir.join("job/input.bin"), b"\x01\0\0\0cf_name=ZZ;").unwrap();
    let o = worker(dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cf_name"), "{err}");

    let o = run_in(dir, &shale(), &["ldb"], &["--db=db", "remote_compaction_worker"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "Failed: --job_dir is required\n");
}
