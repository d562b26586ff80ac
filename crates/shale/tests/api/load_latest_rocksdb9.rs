//! `Options::load_latest` on an OPTIONS file RocksDB 9.8.4 wrote (rocksdict 0.3.29's engine):
//! it records `fail_if_options_file_error=true`, an option RocksDB 11.8.1 parses and ignores.

use shale::{Cache, Env, Options};
use std::path::Path;

#[test]
fn loads_rocksdb_9_8_4_options_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocksdb-9.8.4/defaults");
    let text = std::fs::read_to_string(dir.join("OPTIONS-000011")).unwrap();
    assert!(text.contains("fail_if_options_file_error=true"), "fixture changed");
    // Without the fixture's Bloom filter (a filter policy Shale loads only by its default).
    let text = text.replace("filter_policy=bloomfilter", "filter_policy=nullptr");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("OPTIONS-000011"), text).unwrap();
    let (_, cfs) =
        Options::load_latest(tmp.path(), Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20)).unwrap();
    let names: Vec<&str> = cfs.iter().map(|c| c.name()).collect();
    assert!(names.contains(&"default"), "{names:?}");
}
