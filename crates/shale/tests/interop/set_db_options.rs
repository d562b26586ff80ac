//! The OPTIONS file Shale writes after `DB::set_db_options` changed the nine mutable DB
//! options issue 33 left for last: RocksDB 11.8.1's `ldb` loads it strictly
//! (`--try_load_options`), reads the data, and keeps the values in its own OPTIONS file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::DB;

const TEST: &str = "interop set_db_options";

const SET: &[(&str, &str)] = &[
    ("max_background_jobs", "6"),
    ("max_background_compactions", "3"),
    ("max_background_flushes", "2"),
    ("max_open_files", "500"),
    ("bytes_per_sync", "65536"),
    ("wal_bytes_per_sync", "131072"),
    ("strict_bytes_per_sync", "true"),
    ("writable_file_max_buffer_size", "32768"),
    ("manifest_preallocation_size", "8192"),
];

#[test]
fn rocksdb_11_loads_the_options_set_live() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = DB::open(&crate::util::create_options(), &path).unwrap();
    db.set_db_options(SET).unwrap();
    // Written after the change: the new WAL, a table, a MANIFEST edit.
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.put(b"wal", b"w").unwrap();
    drop(db);
    let has_all = |text: &str, who: &str| {
        for (n, v) in SET {
            assert!(text.lines().any(|l| l.trim() == format!("{n}={v}")), "{who}: {n}={v} in\n{text}");
        }
    };
    has_all(&crate::util::latest_options_text(&path), "Shale's OPTIONS file");
    let ldb = |args: &[&str]| {
        let out =
            tools::tool_command("ldb").arg(format!("--db={}", path.display())).args(args).output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    };
    let (ok, out) = ldb(&["--try_load_options", "scan"]);
    assert!(ok && out.contains("k ==> v") && out.contains("wal ==> w"), "{out}");
    let (ok, out) = ldb(&["--try_load_options", "put", "k2", "v2"]);
    assert!(ok, "{out}");
    let theirs = crate::util::latest_options_text(&path);
    assert!(theirs.contains("rocksdb_version=11.8.1"), "{theirs}");
    has_all(&theirs, "RocksDB's OPTIONS file after loading Shale's");
    let db = DB::open(&crate::util::create_options(), &path).unwrap();
    assert_eq!(db.get(b"k2").unwrap(), Some(b"v2".to_vec()));
}
