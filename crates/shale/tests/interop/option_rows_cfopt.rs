//! RocksDB 11.8.1's `ldb` loads, strictly (`--try_load_options`), the OPTIONS file Shale
//! writes with the column-family options of the `cfopt` rows at non-default values, and keeps
//! them: the OPTIONS file it writes after a `put` holds them too.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};

const TEST: &str = "interop option_rows_cfopt";

const SET: &[(&str, &str)] = &[
    ("memtable_protection_bytes_per_key", "4"),
    ("paranoid_memory_checks", "true"),
    ("bottommost_file_compaction_delay", "600"),
    ("target_file_size_is_upper_bound", "true"),
    ("memtable_prefix_bloom_size_ratio", "0.125000"),
    ("memtable_whole_key_filtering", "true"),
];

fn latest_options_text(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OPTIONS-"))
        .collect();
    names.sort_by_key(|n| n["OPTIONS-".len()..].parse::<u64>().unwrap_or(0));
    std::fs::read_to_string(dir.join(names.last().unwrap())).unwrap()
}

fn has_all(text: &str, who: &str) {
    for (n, v) in SET {
        assert!(text.lines().any(|l| l.trim() == format!("{n}={v}")), "{who}: {n}={v} in\n{text}");
    }
}

#[test]
fn rocksdb_11_loads_and_keeps_the_cfopt_rows() {
    if !tools::use_rocksdb_11(TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let s: Vec<String> = SET.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let mut o = Options::default().get_options_from_string(s.join(";")).unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, &path).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    has_all(&latest_options_text(&path), "Shale's OPTIONS file");

    let ldb = |args: &[&str]| {
        let out =
            tools::tool_command("ldb").arg(format!("--db={}", path.display())).args(args).output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    };
    let (ok, out) = ldb(&["--try_load_options", "scan"]);
    assert!(ok && out.contains("k ==> v"), "{out}");
    let (ok, out) = ldb(&["--try_load_options", "put", "k2", "v2"]);
    assert!(ok, "{out}");
    let theirs = latest_options_text(&path);
    assert!(theirs.contains("rocksdb_version=11.8.1"), "{theirs}");
    has_all(&theirs, "RocksDB's OPTIONS file after loading Shale's");
    // And Shale reads what RocksDB wrote.
    let (loaded, _) =
        Options::load_latest(&path, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&loaded, &path).unwrap();
    assert_eq!(db.get(b"k2").unwrap(), Some(b"v2".to_vec()));
    drop(db);
    has_all(&latest_options_text(&path), "Shale's OPTIONS file after RocksDB's");
}
