//! `MemtableFactory::Vector` (RocksDB's VectorRepFactory) opens as in RocksDB 11.8.1 (which
//! allows concurrent memtable writes with it), reads as a sorted memtable in both
//! directions, through flushes and reopens (checked against a BTreeMap model), and is
//! written to the OPTIONS file as RocksDB writes it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::collections::BTreeMap;

use shale::{IteratorMode, MemtableFactory, Options, DB};

fn vector_opts() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_memtable_factory(MemtableFactory::Vector);
    o
}

fn check(db: &DB, model: &BTreeMap<Vec<u8>, Vec<u8>>, ctx: &str) {
    for k in 0..300u32 {
        let key = format!("k{:04}", (k * 7919) % 300).into_bytes();
        assert_eq!(db.get(&key).unwrap().as_ref(), model.get(&key), "{ctx}: get");
    }
    let fwd: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(fwd.len(), want.len(), "{ctx}: forward");
    assert!(fwd.iter().zip(&want).all(|(a, b)| a.0[..] == b.0[..] && a.1[..] == b.1[..]), "{ctx}: forward");
    let back: Vec<_> = db.iterator(IteratorMode::End).map(|r| r.unwrap()).collect();
    assert!(
        back.iter().rev().zip(&want).all(|(a, b)| a.0[..] == b.0[..] && a.1[..] == b.1[..]),
        "{ctx}: backward"
    );
    assert_eq!(back.len(), want.len(), "{ctx}: backward");
    // A seek lands where the model's range starts.
    let mut it = db.raw_iterator();
    it.seek(b"k0150");
    assert_eq!(it.key(), model.range(b"k0150".to_vec()..).next().map(|(k, _)| &k[..]), "{ctx}: seek");
    it.seek_for_prev(b"k0150");
    assert_eq!(
        it.key(),
        model.range(..=b"k0150".to_vec()).next_back().map(|(k, _)| &k[..]),
        "{ctx}: seek_for_prev"
    );
}

#[test]
fn vector_memtable_reads_like_a_sorted_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let o = vector_opts();
    let mut model = BTreeMap::new();
    let mut x = 12345u64;
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for round in 0..3 {
            // Keys written out of order, overwritten, deleted.
            for _ in 0..400 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let key = format!("k{:04}", (x >> 33) % 300).into_bytes();
                if (x >> 20).is_multiple_of(5) {
                    db.delete(&key).unwrap();
                    model.remove(&key);
                } else {
                    let v = format!("v{round}-{}", x % 1000).into_bytes();
                    db.put(&key, &v).unwrap();
                    model.insert(key, v);
                }
            }
            check(&db, &model, &format!("round {round} in memtable"));
            if round == 1 {
                db.flush().unwrap();
                check(&db, &model, "after flush");
            }
        }
    }
    // Reopened: the WAL replays into a vector memtable again.
    let db = DB::open(&o, dir.path()).unwrap();
    check(&db, &model, "after reopen");
    drop(db);
    let text = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    assert!(text.contains("memtable_factory={id=VectorRepFactory;count=0;}"), "{text}");
    // The OPTIONS file reads back (RocksDB's name and nickname).
    let db = DB::open(&o, dir.path()).unwrap();
    db.put(b"k0000", b"again").unwrap();
    assert_eq!(db.get(b"k0000").unwrap().as_deref(), Some(&b"again"[..]));
}
