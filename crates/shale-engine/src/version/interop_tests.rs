//! Checks against RocksDB 7.8.3's own tools: Shale reads MANIFESTs that `db_bench` writes,
//! and `ldb` reads MANIFESTs that Shale writes. Skipped when the tools are not installed,
//! failed under CI (`shale_base::oracle`).

use super::*;
use crate::fs::default_fs;
use crate::key::{make_internal_key, ValueType};
use std::process::Command;

/// The tool, or None when it is not installed (a failure under CI: `shale_base::oracle`).
fn tool(name: &str) -> Option<PathBuf> {
    shale_base::oracle::rocksdb_7_tool("version::interop_tests", name)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("tool runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Every record of the MANIFEST, decoded.
fn read_edits(path: &Path) -> Vec<(Vec<u8>, VersionEdit)> {
    let fs = default_fs();
    let f = fs.new_sequential_file(path).unwrap();
    let mut r = LogReader::new(f, path.display().to_string(), 0, WalRecoveryMode::AbsoluteConsistency);
    let mut out = Vec::new();
    let mut rec = Vec::new();
    while r.read_record(&mut rec).unwrap() {
        let e = VersionEdit::decode(&rec).unwrap_or_else(|e| panic!("record {}: {e}", out.len()));
        out.push((rec.clone(), e));
    }
    out
}

/// The number after `key ` in ldb's summary line.
fn field(text: &str, key: &str) -> u64 {
    let at = text.find(&format!("{key} ")).unwrap_or_else(|| panic!("no {key} in ldb output"));
    text[at + key.len() + 1..].split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn reads_a_manifest_written_by_rocksdb() {
    let (Some(db_bench), Some(ldb)) = (tool("db_bench"), tool("ldb")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    run(Command::new(db_bench).args([
        "--benchmarks=fillrandom",
        "--num=20000",
        "--num_column_families=2",
        "--write_buffer_size=200000",
        "--target_file_size_base=200000",
        "--max_bytes_for_level_base=400000",
        "--compression_type=none",
        &format!("--db={}", db.display()),
    ]));
    let r = recover(&*default_fs(), &db).unwrap();
    let path = db.join(descriptor_file_name(r.manifest_number));

    // Every record decodes, and re-encodes to the very bytes RocksDB wrote.
    let edits = read_edits(&path);
    assert!(edits.len() > 5);
    for (i, (raw, e)) in edits.iter().enumerate() {
        assert_eq!(&e.encoded(), raw, "record {i} re-encodes differently: {e:?}");
    }

    // The file additions and deletions, in order, match ldb's verbose dump.
    let verbose = run(Command::new(&ldb)
        .arg("manifest_dump")
        .arg(format!("--path={}", path.display()))
        .arg("--verbose"));
    let mut theirs = Vec::new();
    for line in verbose.lines() {
        let mut words = line.split_whitespace();
        if let Some(w @ ("AddFile:" | "DeleteFile:")) = words.next() {
            let level: u32 = words.next().unwrap().parse().unwrap();
            let number: u64 = words.next().unwrap().parse().unwrap();
            theirs.push((w == "AddFile:", level, number));
        }
    }
    let mut ours = Vec::new();
    for (_, e) in &edits {
        ours.extend(e.deleted_files.iter().map(|&(l, n)| (false, l, n)));
        ours.extend(e.new_files.iter().map(|(l, f)| (true, *l, f.number)));
    }
    assert_eq!(ours, theirs);
    assert!(ours.iter().any(|(add, _, _)| !add), "expected compactions in the MANIFEST");

    // The recovered state matches ldb's summary.
    let summary = run(Command::new(&ldb).arg("manifest_dump").arg(format!("--path={}", path.display())));
    assert_eq!(field(&summary, "next_file_number"), r.next_file_number + 1);
    assert_eq!(field(&summary, "last_sequence"), r.last_sequence);
    assert_eq!(field(&summary, "prev_log_number"), r.prev_log_number);
    assert_eq!(field(&summary, "max_column_family"), r.max_column_family as u64);
    assert_eq!(field(&summary, "min_log_number_to_keep"), r.min_log_number_to_keep);
    assert_eq!(r.column_families.len(), 2);
    for (id, cf) in &r.column_families {
        let header = format!("Column family \"{}\"  (ID {id})", cf.name);
        let start = summary.find(&header).unwrap_or_else(|| panic!("no {header}"));
        let section = &summary[start..];
        let section = &section[..section[1..].find("Column family").map_or(section.len(), |e| e + 1)];
        assert_eq!(field(section, "log number:"), cf.log_number);
        assert_eq!(cf.comparator.as_deref(), Some("leveldb.BytewiseComparator"));
        let mut theirs: Vec<u64> =
            section.lines().filter_map(|l| l.strip_prefix(' ')?.split(':').next()?.parse().ok()).collect();
        theirs.sort_unstable();
        let mut ours: Vec<u64> = cf.files.iter().map(|(_, f)| f.number).collect();
        ours.sort_unstable();
        assert_eq!(ours, theirs, "files of column family {id}");
        assert!(!ours.is_empty());
    }
}

#[test]
fn rocksdb_reads_a_manifest_written_by_shale() {
    let Some(ldb) = tool("ldb") else { return };
    let dir = tempfile::tempdir().unwrap();
    let fs = default_fs();
    let cmp = "leveldb.BytewiseComparator";
    let snapshot = vec![
        VersionEdit { comparator: Some(cmp.into()), ..VersionEdit::default() },
        VersionEdit {
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..Default::default()
        },
    ];
    let mut w = ManifestWriter::create(&*fs, dir.path(), 1, &snapshot).unwrap();
    let file = FileMetaData {
        number: 7,
        file_size: 1234,
        smallest: make_internal_key(b"apple", 5, ValueType::Value),
        largest: make_internal_key(b"melon", 9, ValueType::Value),
        smallest_seqno: 5,
        largest_seqno: 9,
        oldest_ancester_time: 1_700_000_000,
        file_creation_time: 1_700_000_001,
        unique_id: Some([0x0102030405060708, 0x1112131415161718]),
        ..FileMetaData::default()
    };
    // A description of a file only: ldb's manifest_dump does not open tables.
    w.append(&[
        VersionEdit {
            column_family: 1,
            column_family_add: Some("logs".into()),
            comparator: Some(cmp.into()),
            log_number: Some(3),
            next_file_number: Some(6),
            last_sequence: Some(0),
            ..Default::default()
        },
        VersionEdit {
            log_number: Some(4),
            prev_log_number: Some(0),
            next_file_number: Some(11),
            last_sequence: Some(42),
            min_log_number_to_keep: Some(4),
            new_files: vec![(2, file)],
            ..Default::default()
        },
    ])
    .unwrap();
    set_current_file(&*fs, dir.path(), 1, 1).unwrap();
    let path = dir.path().join("MANIFEST-000001");
    let out = run(Command::new(&ldb)
        .arg("manifest_dump")
        .arg(format!("--path={}", path.display()))
        .arg("--verbose"));
    for want in [
        "Comparator: leveldb.BytewiseComparator",
        "LogNumber: 4",
        "NextFileNumber: 11",
        "LastSeq: 42",
        "MinLogNumberToKeep: 4",
        "ColumnFamilyAdd: logs",
        "AddFile: 2 7 1234 'apple' seq:5, type:1 .. 'melon' seq:9, type:1",
        "oldest_ancester_time:1700000000 file_creation_time:1700000001",
        "file_checksum_func_name: Unknown",
        "unique_id(internal): {72623859790382856,1230066625199609624}",
        "next_file_number 12 last_sequence 42  prev_log_number 0 max_column_family 1 min_log_number_to_keep 4",
        "Column family \"logs\"  (ID 1)",
    ] {
        assert!(out.contains(want), "ldb output lacks {want:?}:\n{out}");
    }
    // The whole database directory (CURRENT + MANIFEST) is recognised by RocksDB.
    let cfs =
        run(Command::new(&ldb).arg(format!("--db={}", dir.path().display())).arg("list_column_families"));
    assert!(cfs.contains("default") && cfs.contains("logs"), "{cfs}");
}

#[test]
fn rocksdb_opens_a_database_shale_created() {
    let Some(ldb) = tool("ldb") else { return };
    let dir = tempfile::tempdir().unwrap();
    let fs = default_fs();
    let snapshot = vec![
        VersionEdit { comparator: Some("leveldb.BytewiseComparator".into()), ..VersionEdit::default() },
        VersionEdit {
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..Default::default()
        },
    ];
    ManifestWriter::create(&*fs, dir.path(), 1, &snapshot).unwrap();
    set_current_file(&*fs, dir.path(), 1, 1).unwrap();
    let db = format!("--db={}", dir.path().display());
    run(Command::new(&ldb).args([&db, "put", "k1", "v1"]));
    let got = run(Command::new(&ldb).args([&db, "get", "k1"]));
    assert_eq!(got.trim(), "v1");
    // RocksDB wrote a new MANIFEST on open; Shale recovers it.
    let r = recover(&*fs, dir.path()).unwrap();
    assert!(r.manifest_number > 1);
    assert!(r.next_file_number > 2);
    assert_eq!(r.column_families[&0].comparator.as_deref(), Some("leveldb.BytewiseComparator"));
}

/// A MANIFEST that RocksDB 9.8.4 wrote (shale's tests/data/rocksdb-9.8.4/defaults, see
/// tests/data/gen_rocksdb_9x.py): its 8.x+ file fields (epoch numbers, tail sizes, unique
/// ids, compensated range-deletion sizes) are decoded, and survive Shale's encoding.
#[test]
fn rocksdb_9_manifest_fields_are_kept() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shale/tests/data/rocksdb-9.8.4/defaults");
    let cur = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    let edits = read_edits(&dir.join(cur.trim()));
    let files: Vec<&FileMetaData> =
        edits.iter().flat_map(|(_, e)| e.new_files.iter().map(|(_, f)| f)).collect();
    assert!(files.len() >= 6, "{} file records", files.len());
    assert!(files.iter().all(|f| f.epoch_number > 0), "every file has an epoch number");
    assert!(files.iter().all(|f| f.tail_size > 0), "every file has a tail size");
    assert!(files.iter().all(|f| f.unique_id.is_some()), "every file has a unique id");
    assert!(files.iter().any(|f| f.compensated_range_deletion_size > 0), "range deletions were compensated");
    assert!(edits.iter().any(|(_, e)| e.persist_user_defined_timestamps == Some(true)));
    for (raw, e) in &edits {
        let again = VersionEdit::decode(&e.encoded()).unwrap();
        assert_eq!(&again, e, "record {raw:?} changed through Shale's encoding");
    }
}
