//! RocksDB 11.8.1's `ldb` loads the OPTIONS file of a Shale database with the vector
//! memtable (`memtable_factory={id=VectorRepFactory;count=0;}`) and reads its data.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use shale::{MemtableFactory, Options, DB};
use tools::*;

#[test]
fn ldb_11_loads_vector_memtable_options() {
    if !use_rocksdb_11("vector memtable OPTIONS") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_memtable_factory(MemtableFactory::Vector);
    let mut want = Pairs::new();
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for i in (0..50u32).rev() {
            let (k, v) = (format!("key{i:03}").into_bytes(), format!("value{i}").into_bytes());
            db.put(&k, &v).unwrap();
            want.push((k, v));
        }
        db.flush().unwrap();
    }
    want.sort();
    assert!(latest_options_text(dir.path()).contains("memtable_factory={id=VectorRepFactory;count=0;}"));
    let a = args(&[&format!("--db={}", dir.path().display()), "scan", "--hex", "--try_load_options"]);
    let got: Pairs = run_tool("ldb", &a)
        .lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            let (k, v) = l.split_once(" ==> ").or_else(|| l.split_once(" : ")).unwrap();
            (decode_hex(k), decode_hex(v))
        })
        .collect();
    assert_same_pairs(&got, &want, "ldb 11.8.1 scan with the vector memtable's OPTIONS");
}
