//! Tests against OPTIONS files written by RocksDB 7.8.3 and 11.8.1 (testdata/, and live via ldb).
//!
//! * `testdata/OPTIONS-two-cfs`: `DB::Open(Options{create_if_missing})` then
//!   `CreateColumnFamily("my cf#1:x")`, linked against librocksdb 7.8.3.
//! * `testdata/OPTIONS-ldb`: `ldb --db=D --create_if_missing put a b` (7.8.3).
//! * `testdata/OPTIONS-ldb-11.8.1`: the same with RocksDB 11.8.1's release `ldb`.
//! * `rocksdb_defaults.ini`: the first OPTIONS file of the two-cfs database.
//! * `rocksdb_11_defaults.ini`: `OPTIONS-ldb-11.8.1` with ldb's own settings undone.

use super::*;
use crate::fs::default_fs;
use std::process::Command;

const TWO_CFS: &str = include_str!("testdata/OPTIONS-two-cfs");
const LDB: &str = include_str!("testdata/OPTIONS-ldb");
const LDB_11: &str = include_str!("testdata/OPTIONS-ldb-11.8.1");

#[test]
fn rocksdb_files_round_trip_byte_for_byte() {
    for text in [TWO_CFS, LDB, ROCKSDB_DEFAULTS_TEXT, LDB_11, ROCKSDB_11_DEFAULTS_TEXT] {
        let parsed = OptionsFile::parse(text).unwrap();
        assert_eq!(parsed.to_text(), text);
        assert_eq!(OptionsFile::parse(&parsed.to_text()).unwrap(), parsed);
    }
}

#[test]
fn parses_sections_and_escaped_names() {
    let o = OptionsFile::parse(TWO_CFS).unwrap();
    assert_eq!(o.rocksdb_version, "7.8.3");
    assert_eq!(o.options_file_version, "1.1");
    assert_eq!(o.db_option("max_open_files"), Some("-1"));
    assert_eq!(o.db_option("create_if_missing"), Some("true"));
    let names: Vec<&str> = o.cfs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["default", "my cf#1:x"]);
    let cf = o.cf("my cf#1:x").unwrap();
    assert_eq!(cf.table_factory, "BlockBasedTable");
    assert_eq!(cf.option("comparator"), Some("leveldb.BytewiseComparator"));
    assert_eq!(cf.option("write_buffer_size"), Some("67108864"));
    assert_eq!(cf.table_option("format_version"), Some("5"));
    assert_eq!(cf.table_option("checksum"), Some("kXXH3"));
    assert!(o.db_options.len() > 50 && cf.options.len() > 50 && cf.table_options.len() > 20);
    // Values stay escaped, as written.
    let ldb = OptionsFile::parse(LDB).unwrap();
    assert_eq!(ldb.cfs[0].option("merge_operator"), Some("{id=StringAppendOperator;delimiter=\\:;}"));
    let defaults = OptionsFile::rocksdb_defaults();
    assert_eq!(defaults.cfs.len(), 1);
    assert_eq!(defaults.cfs[0].table_option("filter_policy"), Some("nullptr"));
}

#[test]
fn escaping_round_trips() {
    for raw in ["plain", "a#b:c\\d", "line\nbreak\r", "", "\\"] {
        assert_eq!(unescape_option_string(&escape_option_string(raw)), raw);
    }
    assert_eq!(escape_option_string("my cf#1:x"), "my cf\\#1\\:x");
    assert_eq!(unescape_option_string("a\\qb\\"), "aqb");
}

#[test]
fn comments_blank_lines_and_whitespace() {
    let text = "# comment\n\n[Version]\n rocksdb_version = 7.8.3 # trailing\n\toptions_file_version=1.1\r\n\
                [DBOptions]\n  a=b\\#c\n  a=second\n  empty=\n[CFOptions   \"default\"]\n  x=1\n";
    let o = OptionsFile::parse(text).unwrap();
    assert_eq!(o.rocksdb_version, "7.8.3");
    assert_eq!(o.options_file_version, "1.1");
    assert_eq!(o.db_options, vec![("a".into(), "b\\#c".into()), ("empty".into(), String::new())]);
    assert_eq!(o.cfs[0].options, vec![("x".into(), "1".into())]);
    assert_eq!(o.cfs[0].table_factory, "");
    // Without a table section no [TableOptions/...] is written.
    assert!(!o.to_text().contains("TableOptions"));
}

fn expect_err(text: &str, kind: ErrorKind, needle: &str) {
    let e = OptionsFile::parse(text).expect_err(text);
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.to_string().contains(needle), "{e} should mention {needle:?}");
}

#[test]
fn malformed_files_are_rejected_with_line_numbers() {
    let ok_tail = "[CFOptions \"default\"]\n";
    expect_err("[DBOptions]\n  a=1\n  oops\n", ErrorKind::InvalidArgument, "must have a '='. (at line 3)");
    expect_err("[DBOptions]\n  =1\n", ErrorKind::InvalidArgument, "variable name. (at line 2)");
    expect_err("[DBOptions]\n[Bogus]\n", ErrorKind::InvalidArgument, "Unknown section [Bogus] (at line 2)");
    expect_err("[DBOptions]\n[DBOptions]\n", ErrorKind::InvalidArgument, "(at line 2)");
    expect_err("[DBOptions]\n[CFOptions \"x\"]\n", ErrorKind::InvalidArgument, "Default column family");
    expect_err(
        "[DBOptions]\n[CFOptions \"default\"]\n[CFOptions \"default\"]\n",
        ErrorKind::InvalidArgument,
        "(at line 3)",
    );
    expect_err(
        "[DBOptions]\n[CFOptions \"default\"]\n[TableOptions/BlockBasedTable \"x\"]\n",
        ErrorKind::InvalidArgument,
        "Column Family Name:x (at line 3)",
    );
    expect_err(ok_tail, ErrorKind::Corruption, "DBOptions section");
    expect_err("[DBOptions]\n", ErrorKind::Corruption, "CFOptions:default");
    let bad_version = format!("[Version]\n  rocksdb_version=7.x\n[DBOptions]\n{ok_tail}");
    expect_err(&bad_version, ErrorKind::InvalidArgument, "rocksdb_version");
    let old_file_version = format!("[Version]\n  options_file_version=0.9\n[DBOptions]\n{ok_tail}");
    expect_err(&old_file_version, ErrorKind::InvalidArgument, "at least 1");
    assert!(OptionsFile::parse(&format!("[DBOptions]\n{ok_tail}")).is_ok());
}

#[test]
fn file_names() {
    assert_eq!(options_file_name(5), "OPTIONS-000005");
    assert_eq!(options_file_name(12345678), "OPTIONS-12345678");
    assert_eq!(parse_options_file_name("OPTIONS-000005"), Some(5));
    assert_eq!(parse_options_file_name("OPTIONS-000005.dbtmp"), None);
    assert_eq!(parse_options_file_name("OPTIONS-"), None);
    assert_eq!(parse_options_file_name("MANIFEST-000005"), None);
}

#[test]
fn write_then_find_latest() {
    let dir = tempfile::tempdir().unwrap();
    let fs = default_fs();
    assert_eq!(latest_options_file(&*fs, dir.path()).unwrap(), None);
    let mut opts = OptionsFile::parse(TWO_CFS).unwrap();
    write_options_file(&*fs, dir.path(), 7, &opts).unwrap();
    set_option(&mut opts.cfs[1].options, "write_buffer_size", "1048576");
    set_option(&mut opts.db_options, "brand_new", "x");
    write_options_file(&*fs, dir.path(), 12, &opts).unwrap();
    // Temporary and unrelated names are ignored.
    std::fs::write(dir.path().join("OPTIONS-000099.dbtmp"), "garbage").unwrap();
    std::fs::write(dir.path().join("OPTIONS-abc"), "garbage").unwrap();
    let mut names = fs.children(dir.path()).unwrap();
    names.sort();
    assert_eq!(names, ["OPTIONS-000007", "OPTIONS-000012", "OPTIONS-000099.dbtmp", "OPTIONS-abc"]);
    let (n, got) = latest_options_file(&*fs, dir.path()).unwrap().unwrap();
    assert_eq!(n, 12);
    assert_eq!(got, opts);
    assert_eq!(got.cf("my cf#1:x").unwrap().option("write_buffer_size"), Some("1048576"));
    assert_eq!(std::fs::read_to_string(dir.path().join("OPTIONS-000007")).unwrap(), TWO_CFS);

    // A damaged latest file is reported with its name and line.
    std::fs::write(dir.path().join("OPTIONS-000013"), "[DBOptions]\nno equals\n").unwrap();
    let e = latest_options_file(&*fs, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("OPTIONS-000013") && e.to_string().contains("(at line 2)"), "{e}");
}

/// RocksDB 7.8.3's ldb, or None when it is not installed (a failure under CI:
/// `shale_base::oracle`).
fn ldb() -> Option<std::path::PathBuf> {
    shale_base::oracle::rocksdb_7_tool("options_file::tests", "ldb")
}

#[test]
fn reads_options_file_written_by_rocksdb_ldb() {
    let Some(ldb) = ldb() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = Command::new(&ldb)
        .arg(format!("--db={}", db.display()))
        .args(["--create_if_missing", "put", "a", "b"])
        .output()
        .unwrap();
    assert!(out.status.success(), "ldb failed: {}", String::from_utf8_lossy(&out.stderr));
    let fs = default_fs();
    let (n, parsed) = latest_options_file(&*fs, &db).unwrap().expect("ldb wrote an OPTIONS file");
    let text = std::fs::read_to_string(db.join(options_file_name(n))).unwrap();
    assert_eq!(parsed.to_text(), text);
    assert_eq!(parsed.rocksdb_version, "7.8.3");
    assert_eq!(parsed.cfs[0].table_factory, "BlockBasedTable");
}

#[test]
fn rocksdb_loads_options_file_we_wrote() {
    let Some(ldb) = ldb() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let run = |args: &[&str]| {
        let out = Command::new(&ldb).arg(format!("--db={}", db.display())).args(args).output().unwrap();
        assert!(out.status.success(), "ldb {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["--create_if_missing", "put", "k", "v"]);
    let fs = default_fs();
    let (n, mut opts) = latest_options_file(&*fs, &db).unwrap().unwrap();
    set_option(&mut opts.cfs[0].options, "write_buffer_size", "1048576");
    write_options_file(&*fs, &db, n + 100, &opts).unwrap();
    // --try_load_options makes ldb open the database with our OPTIONS file.
    assert_eq!(run(&["--try_load_options", "get", "k"]).trim(), "v");
    let (_, reloaded) = latest_options_file(&*fs, &db).unwrap().unwrap();
    assert_eq!(reloaded.cfs[0].option("write_buffer_size"), Some("1048576"));
}

/// OPTIONS files of other RocksDB versions (here 9.8.4's, from tests/data/rocksdb-9.8.4) are
/// read; all their options are ones 7.8.3 or 11.8.1 writes.
#[test]
fn reads_rocksdb_9_options_files_with_no_unknown_options() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocksdb-9.8.4/defaults");
    let fs = crate::fs::default_fs();
    let (number, f) = latest_options_file(&*fs, &dir).unwrap().expect("an OPTIONS file");
    assert_eq!(number, 11);
    assert_eq!(f.rocksdb_version, "9.8.4");
    assert_eq!(f.cfs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["default", "cf1", "cf2"]);
    assert_eq!(f.cf("cf1").unwrap().table_option("format_version"), Some("6"));
    assert_eq!(f.cf("default").unwrap().option("level_compaction_dynamic_level_bytes"), Some("true"));
    assert_eq!(f.unknown_options(), Vec::<String>::new());
    f.check_unknown_options(false).unwrap();
    for text in [TWO_CFS, LDB, LDB_11, ROCKSDB_DEFAULTS_TEXT, ROCKSDB_11_DEFAULTS_TEXT] {
        let f = OptionsFile::parse(text).unwrap();
        assert_eq!(f.unknown_options(), Vec::<String>::new());
        f.check_unknown_options(false).unwrap();
    }
}

/// RocksDB's rule (checked against 11.8.1's `ldb`): an unknown option is InvalidArgument
/// naming it, unless unknown options are ignored and the file is from a newer RocksDB.
#[test]
fn unknown_options_follow_rocksdb_version_rule() {
    let base = OptionsFile::parse(LDB_11).unwrap();
    assert_eq!(base.version(), Some((11, 8)));
    assert!(!base.is_from_newer_version());

    let mut f = base.clone();
    set_option(&mut f.db_options, "foo_bar", "1");
    assert_eq!(f.unknown_options(), ["DBOptions.foo_bar"]);
    for ignore in [false, true] {
        let e = f.check_unknown_options(ignore).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().ends_with("Extra option not recognized: foo_bar"), "{e}");
    }
    // A struct's unknown field.
    let mut g = base.clone();
    let u = g.cfs[0]
        .option("compaction_options_universal")
        .unwrap()
        .replace("size_ratio=1;", "size_ratio=1;zzz=3;");
    set_option(&mut g.cfs[0].options, "compaction_options_universal", &u);
    assert_eq!(g.unknown_options(), ["CFOptions \"default\".compaction_options_universal.zzz"]);
    let e = g.check_unknown_options(false).unwrap_err();
    assert!(e.to_string().ends_with("Unrecognized option: compaction_options_universal.zzz"), "{e}");
    let mut t = base.clone();
    set_option(&mut t.cfs[0].table_options, "ttt", "1");
    assert!(t
        .check_unknown_options(true)
        .unwrap_err()
        .to_string()
        .contains("Extra option not recognized: ttt"));

    // A newer file: skipped when asked, refused otherwise.
    for (version, newer) in
        [("11.9.0", true), ("12.0", true), ("11.8.9", false), ("7.8.3", false), ("", false)]
    {
        let mut n = f.clone();
        n.rocksdb_version = version.to_string();
        assert_eq!(n.is_from_newer_version(), newer, "{version}");
        assert_eq!(n.check_unknown_options(true).is_ok(), newer, "{version}");
        assert!(n.check_unknown_options(false).is_err(), "{version}");
    }
}
