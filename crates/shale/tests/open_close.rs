//! Opening and closing: create_if_missing / error_if_exists, the LOCK file (same process and
//! another process), IDENTITY, CURRENT, OPTIONS, LOG, `DB::destroy` and `DB::list_cf`,
//! with RocksDB 7.8.3's messages.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod util;

use std::process::Command;

use shale::options_file::OptionsFile;
use shale::{ErrorKind, Options, DB};

use util::files_ending;

const LOCK_CHILD_ENV: &str = "SHALE_LOCK_CHILD_DB";

fn create_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o
}

#[test]
fn missing_db_without_create_if_missing_is_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let e = DB::open(&Options::default(), &path).expect_err("open of a missing database must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(
        e.into_string(),
        format!("Invalid argument: {}/CURRENT: does not exist (create_if_missing is false)", path.display())
    );
    // Also when the directory exists but holds no database.
    std::fs::create_dir_all(&path).unwrap();
    let e = DB::open(&Options::default(), &path).expect_err("open of an empty directory must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.into_string().ends_with("CURRENT: does not exist (create_if_missing is false)"));
}

#[test]
fn error_if_exists() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = create_opts();
    o.set_error_if_exists(true);
    // A new database is fine.
    drop(DB::open(&o, &path).unwrap());
    let e = DB::open(&o, &path).expect_err("error_if_exists on an existing database must fail");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.into_string(),
        format!("Invalid argument: {}: exists (error_if_exists is true)", path.display())
    );
    // Without the flag it opens.
    drop(DB::open(&create_opts(), &path).unwrap());
}

#[test]
fn second_open_in_the_same_process_fails_on_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open(&create_opts(), &path).unwrap();
    db.put(b"k", b"v").unwrap();
    let e = DB::open(&create_opts(), &path).expect_err("second open must fail");
    assert_eq!(e.kind(), ErrorKind::IOError, "{e}");
    let msg = e.into_string();
    assert!(msg.starts_with("IO error: lock hold by current process"), "{msg}");
    assert!(msg.contains(&format!("{}/LOCK", path.display())), "{msg}");
    assert!(msg.ends_with("No locks available"), "{msg}");
    // The failed open must not have disturbed the open database.
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    // Closing releases the lock.
    let db = DB::open(&create_opts(), &path).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Runs only as the child of `second_open_from_another_process_fails_on_the_lock`.
#[test]
fn lock_child() {
    let Ok(path) = std::env::var(LOCK_CHILD_ENV) else { return };
    match DB::open(&create_opts(), &path) {
        Ok(_) => println!("RESULT ok"),
        Err(e) => println!("RESULT {:?} {}", e.kind(), e.into_string()),
    }
}

fn open_in_child(path: &std::path::Path) -> String {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", "lock_child", "--nocapture", "--test-threads=1"])
        .env(LOCK_CHILD_ENV, path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout
        .lines()
        .find_map(|l| l.find("RESULT ").map(|i| l[i + "RESULT ".len()..].to_string()))
        .unwrap_or_else(|| panic!("child printed no result: {stdout}"))
}

#[test]
fn second_open_from_another_process_fails_on_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open(&create_opts(), &path).unwrap();
    let r = open_in_child(&path);
    assert!(r.starts_with("IOError IO error: While lock file: "), "{r}");
    assert!(r.contains(&format!("{}/LOCK", path.display())), "{r}");
    assert!(r.contains("Resource temporarily unavailable"), "{r}");
    drop(db);
    assert_eq!(open_in_child(&path), "ok");
}

#[test]
fn identity_current_options_and_log_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open(&create_opts(), &path).unwrap();
    db.put(b"a", b"1").unwrap();
    let identity = std::fs::read_to_string(path.join("IDENTITY")).unwrap();
    let id = identity.trim();
    assert_eq!(id.len(), 36, "IDENTITY should hold a UUID: {identity:?}");
    assert_eq!(id.matches('-').count(), 4, "{identity:?}");

    // CURRENT names the MANIFEST, which exists.
    let current = std::fs::read_to_string(path.join("CURRENT")).unwrap();
    assert!(current.ends_with('\n'), "{current:?}");
    let manifest = current.trim_end();
    assert!(manifest.starts_with("MANIFEST-") && manifest.len() == "MANIFEST-000000".len(), "{current:?}");
    assert!(path.join(manifest).is_file(), "CURRENT names {manifest}, which is missing");
    assert_eq!(files_ending(&path, "").iter().filter(|n| n.starts_with("MANIFEST-")).count(), 1);

    // An OPTIONS file that parses and describes the default column family.
    let options: Vec<String> =
        files_ending(&path, "").into_iter().filter(|n| n.starts_with("OPTIONS-")).collect();
    assert!(!options.is_empty(), "no OPTIONS file");
    let text = std::fs::read_to_string(path.join(options.last().unwrap())).unwrap();
    let parsed = OptionsFile::parse(&text).unwrap();
    assert_eq!(parsed.rocksdb_version, "11.8.1");
    let cf = parsed.cf("default").expect("OPTIONS file lacks [CFOptions \"default\"]");
    assert_eq!(cf.option("comparator"), Some("leveldb.BytewiseComparator"));
    assert_eq!(cf.option("write_buffer_size"), Some("67108864"));
    assert_eq!(parsed.db_option("create_if_missing"), Some("true"));

    // The info log.
    let log = std::fs::read_to_string(path.join("LOG")).unwrap();
    assert!(!log.is_empty());
    drop(db);

    // IDENTITY is stable across reopen; CURRENT still names an existing MANIFEST.
    let db = DB::open(&create_opts(), &path).unwrap();
    assert_eq!(std::fs::read_to_string(path.join("IDENTITY")).unwrap(), identity);
    let current = std::fs::read_to_string(path.join("CURRENT")).unwrap();
    assert!(path.join(current.trim_end()).is_file());
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn destroy_removes_the_database_and_fails_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open(&create_opts(), &path).unwrap();
    for i in 0..100u32 {
        db.put(i.to_be_bytes(), b"value").unwrap();
    }
    db.flush().unwrap();
    assert!(!files_ending(&path, ".sst").is_empty());
    let e = DB::destroy(&Options::default(), &path).expect_err("destroy of an open database must fail");
    assert_eq!(e.kind(), ErrorKind::IOError, "{e}");
    // Nothing was removed.
    assert!(path.join("CURRENT").exists());
    assert_eq!(db.get(0u32.to_be_bytes()).unwrap().as_deref(), Some(&b"value"[..]));
    drop(db);
    DB::destroy(&Options::default(), &path).unwrap();
    assert!(!path.exists(), "destroy left {:?}", files_ending(&path, ""));
    // The database is gone: opening without create_if_missing fails.
    assert_eq!(DB::open(&Options::default(), &path).err().unwrap().kind(), ErrorKind::InvalidArgument);
    // Destroying a missing database is fine.
    DB::destroy(&Options::default(), &path).unwrap();
}

#[test]
fn destroy_leaves_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    drop(DB::open(&create_opts(), &path).unwrap());
    std::fs::write(path.join("notes.txt"), b"mine").unwrap();
    DB::destroy(&Options::default(), &path).unwrap();
    assert_eq!(files_ending(&path, ""), vec!["notes.txt".to_string()]);
}

#[test]
fn list_cf_names_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    assert!(DB::list_cf(&Options::default(), &path).is_err(), "list_cf of a missing database");
    let mut db = DB::open(&create_opts(), &path).unwrap();
    assert_eq!(DB::list_cf(&Options::default(), &path).unwrap(), vec!["default"]);
    db.create_cf("alpha", &Options::default()).unwrap();
    db.create_cf("beta", &Options::default()).unwrap();
    // list_cf reads the MANIFEST, so it works while the database is open.
    assert_eq!(DB::list_cf(&Options::default(), &path).unwrap(), vec!["default", "alpha", "beta"]);
    db.drop_cf("alpha").unwrap();
    drop(db);
    assert_eq!(DB::list_cf(&Options::default(), &path).unwrap(), vec!["default", "beta"]);
}
