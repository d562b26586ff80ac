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

/// A concatenating merge operator (the same in both databases).
fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &shale::MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in operands {
        out.push(b'+');
        out.extend_from_slice(op);
    }
    Some(out)
}

fn merge_opts(vector: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_merge_operator_associative("concat", concat);
    if vector {
        o.set_memtable_factory(MemtableFactory::Vector);
    }
    o
}

/// Every read of `v` answers as the same read of `s` (gets at the latest state and at a
/// snapshot, iteration both ways, seeks).
fn same_reads(v: &DB, s: &DB, snaps: &[(shale::Snapshot<'_>, shale::Snapshot<'_>)], ctx: &str) {
    let all = |db: &DB, mode| db.iterator(mode).map(|r| r.unwrap()).collect::<Vec<_>>();
    assert_eq!(all(v, IteratorMode::Start), all(s, IteratorMode::Start), "{ctx}: forward");
    assert_eq!(all(v, IteratorMode::End), all(s, IteratorMode::End), "{ctx}: backward");
    for k in 0..120u32 {
        let key = format!("k{k:03}").into_bytes();
        assert_eq!(v.get(&key).unwrap(), s.get(&key).unwrap(), "{ctx}: get {k}");
        for (sv, ss) in snaps {
            assert_eq!(sv.get(&key).unwrap(), ss.get(&key).unwrap(), "{ctx}: snapshot get {k}");
        }
    }
    let (mut vi, mut si) = (v.raw_iterator(), s.raw_iterator());
    for k in (0..125u32).step_by(7) {
        let target = format!("k{k:03}x").into_bytes();
        vi.seek(&target);
        si.seek(&target);
        assert_eq!(vi.key(), si.key(), "{ctx}: seek {k}");
        if vi.valid() {
            vi.prev();
            si.prev();
            assert_eq!(vi.key(), si.key(), "{ctx}: prev after seek {k}");
        }
        vi.seek_for_prev(&target);
        si.seek_for_prev(&target);
        assert_eq!(vi.key(), si.key(), "{ctx}: seek_for_prev {k}");
        if vi.valid() {
            vi.next();
            si.next();
            assert_eq!(vi.key(), si.key(), "{ctx}: next after seek_for_prev {k}");
        }
    }
}

/// The vector memtable against the skip list: the same random puts, deletes, merges, single
/// deletes and range deletions give the same reads, in the memtable, after a flush (and
/// with an immutable memtable waiting), and after a reopen that replays the WAL.
#[test]
fn vector_memtable_is_model_checked_against_the_skip_list() {
    let (dv, ds) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut step = |v: &DB, s: &DB, n: usize| {
        for _ in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = format!("k{:03}", (x >> 33) % 120).into_bytes();
            let val = format!("v{}", (x >> 13) % 10_000).into_bytes();
            for db in [v, s] {
                match (x >> 60) % 8 {
                    0 => db.delete(&key).unwrap(),
                    1 | 2 => db.merge(&key, &val).unwrap(),
                    3 if (x >> 7).is_multiple_of(16) => {
                        let end = format!("k{:03}", ((x >> 33) % 120) + 5).into_bytes();
                        db.delete_range(&key, &end).unwrap()
                    }
                    _ => db.put(&key, &val).unwrap(),
                }
            }
        }
    };
    {
        let (v, s) = (
            DB::open(&merge_opts(true), dv.path()).unwrap(),
            DB::open(&merge_opts(false), ds.path()).unwrap(),
        );
        step(&v, &s, 700);
        let snaps = vec![(v.snapshot(), s.snapshot())];
        step(&v, &s, 700);
        same_reads(&v, &s, &snaps, "mutable memtable");
        v.flush().unwrap();
        s.flush().unwrap();
        step(&v, &s, 500);
        same_reads(&v, &s, &snaps, "after a flush");
        drop(snaps);
        step(&v, &s, 500);
    }
    let (v, s) =
        (DB::open(&merge_opts(true), dv.path()).unwrap(), DB::open(&merge_opts(false), ds.path()).unwrap());
    same_reads(&v, &s, &[], "after reopen");
    step(&v, &s, 300);
    same_reads(&v, &s, &[], "after reopen and more writes");
}

/// The database's memtable really is the vector: the same entries take a pointer each
/// instead of a skip list node's tower (`rocksdb.cur-size-active-mem-table`).
#[test]
fn vector_memtable_takes_less_memory_than_the_skip_list() {
    let size = |vector: bool| {
        let dir = tempfile::tempdir().unwrap();
        let db = DB::open(&merge_opts(vector), dir.path()).unwrap();
        for i in 0..20_000u32 {
            db.put(format!("key{:08}", i.wrapping_mul(2654435761) % 1_000_000), b"0123456789").unwrap();
        }
        db.property_int_value("rocksdb.cur-size-active-mem-table").unwrap().unwrap()
    };
    let (vector, skip) = (size(true), size(false));
    // Entries of 31 bytes each: the vector adds an 8-byte pointer, the skip list (as
    // RocksDB's InlineSkipList) a tower of 8 * 4/3 bytes on average and 1 byte of alignment.
    assert!(vector + 20_000 * 2 < skip, "vector {vector} bytes, skip list {skip} bytes");
}

/// Writers in many threads at once (concurrent memtable writes, allowed with the vector
/// as in RocksDB): every write is read back, in order.
#[test]
fn vector_memtable_takes_concurrent_writers() {
    let dir = tempfile::tempdir().unwrap();
    let db = DB::open(&vector_opts(), dir.path()).unwrap();
    std::thread::scope(|sc| {
        for t in 0..4u32 {
            let db = &db;
            sc.spawn(move || {
                for i in 0..500u32 {
                    db.put(format!("t{t}-{i:04}"), format!("{i}")).unwrap();
                }
            });
        }
    });
    let got: Vec<_> = db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect();
    assert_eq!(got.len(), 2000);
    assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(db.get(b"t3-0499").unwrap().as_deref(), Some(&b"499"[..]));
}
