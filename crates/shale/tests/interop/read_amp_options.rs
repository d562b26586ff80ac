//! `read_amp_bytes_per_bit` (helper tbl3, issue 33) in the OPTIONS file: RocksDB 11.8.1's
//! `ldb` loads Shale's file strictly (`--try_load_options`) and keeps the value in the file it
//! writes; Shale loads RocksDB's back and counts read amplification by it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools::{self, tool_command};
use shale::statistics::Ticker;
use shale::{Options, DB};

#[test]
fn rocksdb_11_loads_and_keeps_read_amp_bytes_per_bit() {
    let test = "rocksdb_11_loads_and_keeps_read_amp_bytes_per_bit";
    if !tools::use_rocksdb_11(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = Options::default()
        .get_options_from_string("block_based_table_factory={read_amp_bytes_per_bit=32}")
        .unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, &path).unwrap();
    for i in 0..500 {
        db.put(format!("k{i:04}"), vec![b'v'; 64]).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    assert!(crate::util::latest_options_text(&path).contains("  read_amp_bytes_per_bit=32\n"));
    let ldb = |args: &[&str]| {
        let out = tool_command("ldb").arg(format!("--db={}", path.display())).args(args).output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    };
    let (ok, out) = ldb(&["--try_load_options", "get", "k0007"]);
    assert!(ok && out.trim().ends_with(&"v".repeat(64)), "{out}");
    let (ok, out) = ldb(&["--try_load_options", "put", "k9999", "x"]);
    assert!(ok, "{out}");
    let theirs = crate::util::latest_options_text(&path);
    assert!(
        theirs.contains("rocksdb_version=11.8.1") && theirs.contains("  read_amp_bytes_per_bit=32\n"),
        "{theirs}"
    );
    let (mut loaded, _) =
        Options::load_latest(&path, shale::Env::new().unwrap(), false, shale::Cache::new_lru_cache(1 << 20))
            .unwrap();
    loaded.enable_statistics();
    let db = DB::open(&loaded, &path).unwrap();
    assert_eq!(db.get(b"k9999").unwrap(), Some(b"x".to_vec()));
    assert_eq!(db.get(b"k0007").unwrap(), Some(vec![b'v'; 64]));
    assert!(loaded.get_ticker_count(Ticker::ReadAmpTotalReadBytes) > 0);
    assert!(loaded.get_ticker_count(Ticker::ReadAmpEstimateUsefulBytes) > 0);
}
