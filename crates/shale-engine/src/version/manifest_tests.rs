use super::*;
use crate::fs::default_fs;
use crate::key::{make_internal_key, ValueType};

fn file(number: u64, seq: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 4096,
        smallest: make_internal_key(b"a", seq, ValueType::Value),
        largest: make_internal_key(b"z", seq, ValueType::Value),
        smallest_seqno: seq,
        largest_seqno: seq,
        ..FileMetaData::default()
    }
}

/// What RocksDB's NewDB writes, plus the comparator record of the first snapshot.
fn new_db_snapshot() -> Vec<VersionEdit> {
    vec![
        VersionEdit { comparator: Some("leveldb.BytewiseComparator".into()), ..VersionEdit::default() },
        VersionEdit {
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..VersionEdit::default()
        },
    ]
}

fn write(dir: &Path, number: u64, snapshot: &[VersionEdit], more: &[VersionEdit]) -> ManifestWriter {
    let fs = default_fs();
    let mut w = ManifestWriter::create(&*fs, dir, number, snapshot).unwrap();
    if !more.is_empty() {
        w.append(more).unwrap();
    }
    set_current_file(&*fs, dir, number, number).unwrap();
    w
}

#[test]
fn file_names() {
    assert_eq!(descriptor_file_name(5), "MANIFEST-000005");
    assert_eq!(descriptor_file_name(12345678), "MANIFEST-12345678");
    assert_eq!(parse_descriptor_file_name("MANIFEST-000005"), Some(5));
    assert_eq!(parse_descriptor_file_name("MANIFEST-"), None);
    assert_eq!(parse_descriptor_file_name("MANIFEST-12x"), None);
    assert_eq!(parse_descriptor_file_name("000005.log"), None);
    assert_eq!(temp_file_name(7), "000007.dbtmp");
}

#[test]
fn current_file_procedure_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let fs = default_fs();
    set_current_file(&*fs, dir.path(), 5, 5).unwrap();
    assert_eq!(std::fs::read(dir.path().join("CURRENT")).unwrap(), b"MANIFEST-000005\n");
    assert!(!dir.path().join("000005.dbtmp").exists());
    assert_eq!(read_current(&*fs, dir.path()).unwrap(), "MANIFEST-000005");
    for (bad, msg) in [
        (&b"MANIFEST-000005"[..], "CURRENT file does not end with newline"),
        (b"", "CURRENT file does not end with newline"),
        (b"000005.log\n", "CURRENT file corrupted"),
        (b"MANIFEST-\n", "CURRENT file corrupted"),
        (b"MANIFEST-000005\n\n", "CURRENT file corrupted"),
    ] {
        std::fs::write(dir.path().join("CURRENT"), bad).unwrap();
        let err = read_current(&*fs, dir.path()).unwrap_err();
        assert_eq!(err.to_string(), format!("Corruption: {msg}"));
    }
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    assert_eq!(read_current(&*fs, dir.path()).unwrap_err().kind(), ErrorKind::IOError);
}

#[test]
fn recovers_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut more = vec![
        VersionEdit {
            column_family: 1,
            column_family_add: Some("logs".into()),
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(4),
            next_file_number: Some(6),
            last_sequence: Some(0),
            ..VersionEdit::default()
        },
        VersionEdit {
            log_number: Some(10),
            next_file_number: Some(13),
            last_sequence: Some(2620),
            new_files: vec![(0, file(11, 100)), (0, file(12, 200))],
            ..VersionEdit::default()
        },
        VersionEdit {
            column_family: 1,
            log_number: Some(12),
            new_files: vec![(0, file(14, 300))],
            ..VersionEdit::default()
        },
        VersionEdit {
            min_log_number_to_keep: Some(10),
            next_file_number: Some(15),
            ..VersionEdit::default()
        },
        // Compaction of the default CF's L0 into L1.
        VersionEdit {
            deleted_files: vec![(0, 11), (0, 12)],
            new_files: vec![(1, file(15, 200))],
            next_file_number: Some(16),
            last_sequence: Some(2700),
            ..VersionEdit::default()
        },
        VersionEdit { column_family: 2, column_family_add: Some("tmp".into()), ..VersionEdit::default() },
        VersionEdit { column_family: 2, is_column_family_drop: true, ..VersionEdit::default() },
        VersionEdit { db_id: Some("db-id-1".into()), ..VersionEdit::default() },
    ];
    // A complete atomic group over two column families.
    more.push(VersionEdit {
        is_in_atomic_group: true,
        remaining_entries: 1,
        new_files: vec![(0, file(20, 3000))],
        last_sequence: Some(3000),
        ..VersionEdit::default()
    });
    more.push(VersionEdit {
        column_family: 1,
        is_in_atomic_group: true,
        remaining_entries: 0,
        new_files: vec![(0, file(21, 3000))],
        ..VersionEdit::default()
    });
    // An incomplete group at the end: dropped.
    more.push(VersionEdit {
        is_in_atomic_group: true,
        remaining_entries: 1,
        new_files: vec![(0, file(30, 4000))],
        last_sequence: Some(4000),
        ..VersionEdit::default()
    });
    let w = write(dir.path(), 1, &new_db_snapshot(), &more);
    let r = recover(&*default_fs(), dir.path()).unwrap();
    assert_eq!(r.manifest_number, 1);
    assert_eq!(r.manifest_size, w.file_size());
    assert_eq!((r.next_file_number, r.last_sequence, r.prev_log_number), (16, 3000, 0));
    assert_eq!((r.min_log_number_to_keep, r.max_column_family), (10, 2));
    assert_eq!(r.db_id.as_deref(), Some("db-id-1"));
    assert_eq!(r.column_families.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
    let d = &r.column_families[&0];
    assert_eq!(
        (d.name.as_str(), d.comparator.as_deref(), d.log_number),
        ("default", Some("leveldb.BytewiseComparator"), 10)
    );
    let nums = |cf: &RecoveredCf| cf.files.iter().map(|(l, f)| (*l, f.number)).collect::<Vec<_>>();
    assert_eq!(nums(d), vec![(0, 20), (1, 15)]);
    assert_eq!(d.files[1].1, file(15, 200));
    d.check_comparator("leveldb.BytewiseComparator").unwrap();
    let err = d.check_comparator("rocksdb.ReverseBytewiseComparator").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid argument: rocksdb.ReverseBytewiseComparator: does not match existing comparator \
         leveldb.BytewiseComparator"
    );
    let logs = &r.column_families[&1];
    assert_eq!((logs.name.as_str(), logs.log_number), ("logs", 12));
    assert_eq!(nums(logs), vec![(0, 14), (0, 21)]);

    // A new MANIFEST from the snapshot recovers to the same state.
    let dir2 = tempfile::tempdir().unwrap();
    let w2 = write(dir2.path(), 17, &r.snapshot(), &[]);
    let r2 = recover(&*default_fs(), dir2.path()).unwrap();
    assert_eq!(r2.manifest_size, w2.file_size());
    // A whole file ends where its last record does (`reuse_manifest_on_open` appends there).
    assert_eq!(r2.last_valid_record_end, r2.manifest_size);
    // The incomplete atomic group at the end of the first is not part of it.
    assert!(r.last_valid_record_end < r.manifest_size, "{} {}", r.last_valid_record_end, r.manifest_size);
    assert_eq!(
        RecoveredManifest {
            manifest_number: 1,
            manifest_size: r.manifest_size,
            last_valid_record_end: r.last_valid_record_end,
            ..r2
        },
        r
    );
}

#[test]
fn default_cf_exists_with_a_minimal_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 1, &new_db_snapshot()[1..], &[]);
    let r = recover(&*default_fs(), dir.path()).unwrap();
    assert_eq!(r.column_families.len(), 1);
    let cf = &r.column_families[&0];
    assert_eq!((cf.name.as_str(), cf.comparator.as_ref(), cf.files.len()), ("default", None, 0));
    assert_eq!(r.next_file_number, 2);
}

#[test]
fn missing_entries_use_rocksdbs_message() {
    let dir = tempfile::tempdir().unwrap();
    let only_cmp = &new_db_snapshot()[..1];
    write(dir.path(), 3, only_cmp, &[]);
    let err = recover(&*default_fs(), dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    let s = err.to_string();
    assert!(
        s.starts_with(
            "Corruption: no log_file_number, next_file_number, last_sequence entry in MANIFEST in file "
        ),
        "{s}"
    );
    assert!(s.ends_with("MANIFEST-000003"), "{s}");

    write(
        dir.path(),
        4,
        only_cmp,
        &[VersionEdit { next_file_number: Some(9), log_number: Some(1), ..Default::default() }],
    );
    let s = recover(&*default_fs(), dir.path()).unwrap_err().to_string();
    assert!(s.starts_with("Corruption: no last_sequence entry in MANIFEST"), "{s}");
}

#[test]
fn bad_records_are_corruption_naming_file_and_offset() {
    let cases: Vec<(VersionEdit, &str)> = vec![
        (VersionEdit { deleted_files: vec![(0, 99)], ..Default::default() }, "Cannot delete table file #99"),
        (
            VersionEdit { column_family: 7, last_sequence: Some(1), ..Default::default() },
            "unknown column family",
        ),
        (
            VersionEdit { column_family: 7, is_column_family_drop: true, ..Default::default() },
            "dropping non-existing",
        ),
        (
            VersionEdit { column_family_add: Some("again".into()), ..Default::default() },
            "adding the same column family twice",
        ),
        (
            VersionEdit { is_in_atomic_group: true, remaining_entries: 1, ..Default::default() },
            "corrupted atomic group",
        ),
    ];
    for (i, (bad, want)) in cases.into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let mut more = vec![bad];
        if want == "corrupted atomic group" {
            more.push(VersionEdit::default()); // a plain edit inside an open group
        }
        write(dir.path(), 1, &new_db_snapshot(), &more);
        let s = recover(&*default_fs(), dir.path()).unwrap_err().to_string();
        assert!(s.starts_with("Corruption: ") && s.contains(want), "case {i}: {s}");
        assert!(s.contains("MANIFEST-000001 (record at offset "), "case {i}: {s}");
    }

    // A record that is not a VersionEdit.
    let dir = tempfile::tempdir().unwrap();
    let fs = default_fs();
    let path = dir.path().join(descriptor_file_name(1));
    let mut log = LogWriter::new(fs.new_writable_file(&path).unwrap(), 0);
    let mut rec = Vec::new();
    new_db_snapshot()[1].encode(&mut rec);
    log.add_record(&rec).unwrap();
    log.add_record(&[0x4d, 0x01]).unwrap();
    log.sync().unwrap();
    set_current_file(&*fs, dir.path(), 1, 1).unwrap();
    let s = recover(&*fs, dir.path()).unwrap_err().to_string();
    assert!(s.contains("VersionEdit: unknown tag 77 in file") && s.contains("(record at offset 13)"), "{s}");
}

#[test]
fn torn_tail_is_ignored_but_damage_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let last =
        VersionEdit { last_sequence: Some(77), new_files: vec![(0, file(9, 77))], ..Default::default() };
    write(dir.path(), 1, &new_db_snapshot(), &[last]);
    let path = dir.path().join("MANIFEST-000001");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(recover(&*default_fs(), dir.path()).unwrap().last_sequence, 77);

    // Cut inside the last record: recovery ends before it, as RocksDB does.
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let r = recover(&*default_fs(), dir.path()).unwrap();
    assert_eq!(r.last_sequence, 0);
    assert!(r.column_families[&0].files.is_empty());

    // A flipped byte in an earlier record is corruption naming the file.
    let mut damaged = bytes.clone();
    damaged[10] ^= 0x40;
    std::fs::write(&path, &damaged).unwrap();
    let err = recover(&*default_fs(), dir.path()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("MANIFEST-000001"), "{err}");

    // CURRENT naming a MANIFEST that is not there: the file system's error.
    set_current_file(&*default_fs(), dir.path(), 8, 8).unwrap();
    assert_eq!(recover(&*default_fs(), dir.path()).unwrap_err().kind(), ErrorKind::IOError);
}
