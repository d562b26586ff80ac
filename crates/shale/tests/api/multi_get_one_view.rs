//! A multi-get reads all its keys in one view, as RocksDB's MultiGet: one sequence for the
//! call and one SuperVersion per family, while writes, flushes and compactions go on.
//!
//! The interleaving is made deterministic by the read itself: the first key of the call
//! holds a merge operand, so the read calls the merge operator, and the operator (armed
//! once) overwrites every other key of both families, flushes both and compacts them
//! before it returns. The keys read after it must still show the values from before.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use shale::{ColumnFamilyDescriptor, MergeOperands, Options, DB};

const KEYS: usize = 10;

fn key(i: usize) -> Vec<u8> {
    format!("k{i:02}").into_bytes()
}

/// Writes `value` to every key of both families.
fn put_all(db: &DB, value: &[u8]) {
    let two = db.cf_handle("two").unwrap();
    for i in 0..KEYS {
        db.put(key(i), value).unwrap();
        db.put_cf(two, key(i), value).unwrap();
    }
}

/// What the merge operator does mid-read, once: a writer, a flush and a compaction.
fn interfere(db: &DB) {
    put_all(db, b"v3");
    let two = db.cf_handle("two").unwrap();
    db.flush().unwrap();
    db.flush_cf(two).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    db.compact_range_cf(two, None::<&[u8]>, None::<&[u8]>);
}

#[test]
fn multi_get_sees_one_view_while_a_writer_flushes_and_compacts() {
    let dir = tempfile::tempdir().unwrap();
    let slot: Arc<Mutex<Weak<DB>>> = Arc::new(Mutex::new(Weak::new()));
    let armed = Arc::new(AtomicBool::new(false));
    let fired = Arc::new(AtomicBool::new(false));
    let merge = {
        let (slot, armed, fired) = (slot.clone(), armed.clone(), fired.clone());
        move |_k: &[u8], existing: Option<&[u8]>, ops: &MergeOperands| -> Option<Vec<u8>> {
            if armed.swap(false, Ordering::AcqRel) {
                let db = slot.lock().unwrap().upgrade().expect("the database is open");
                interfere(&db);
                fired.store(true, Ordering::Release);
            }
            let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
            for o in ops {
                v.extend_from_slice(o);
            }
            Some(v)
        }
    };
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_disable_auto_compactions(true);
    o.set_merge_operator_associative("concat", merge);
    // Both families with the merge operator (a list without "default" would open it with
    // Options::default(), as rust-rocksdb does).
    let descs = ["default", "two"].map(|n| ColumnFamilyDescriptor::new(n, o.clone()));
    let db = Arc::new(DB::open_cf_descriptors(&o, dir.path(), descs).unwrap());
    *slot.lock().unwrap() = Arc::downgrade(&db);

    // v1 in tables, v2 in the memtables; the trigger key holds one merge operand.
    put_all(&db, b"v1");
    let two = db.cf_handle("two").unwrap();
    db.flush().unwrap();
    db.flush_cf(two).unwrap();
    put_all(&db, b"v2");
    db.merge(b"trigger", b"m").unwrap();

    let mut keys: Vec<(&shale::ColumnFamily, Vec<u8>)> =
        vec![(db.cf_handle("default").unwrap(), b"trigger".to_vec())];
    for i in 0..KEYS {
        keys.push((db.cf_handle("default").unwrap(), key(i)));
        keys.push((two, key(i)));
    }

    armed.store(true, Ordering::Release);
    let got: Vec<Option<Vec<u8>>> =
        db.multi_get_cf(keys.iter().map(|(c, k)| (*c, k))).into_iter().map(|r| r.unwrap()).collect();
    assert!(fired.load(Ordering::Acquire), "the merge operator ran during the multi-get");
    assert_eq!(got[0].as_deref(), Some(&b"m"[..]));
    for (i, v) in got[1..].iter().enumerate() {
        assert_eq!(
            v.as_deref(),
            Some(&b"v2"[..]),
            "key {} of family {}",
            i / 2,
            if i % 2 == 0 { "default" } else { "two" }
        );
    }

    // The same call again, nothing armed: the writes made meanwhile are there.
    let got: Vec<Option<Vec<u8>>> =
        db.multi_get_cf(keys.iter().map(|(c, k)| (*c, k))).into_iter().map(|r| r.unwrap()).collect();
    for v in &got[1..] {
        assert_eq!(v.as_deref(), Some(&b"v3"[..]));
    }
    // The plain multi_get (default family only) too, across one more write and flush.
    armed.store(true, Ordering::Release);
    let mut plain: Vec<Vec<u8>> = vec![b"trigger".to_vec()];
    plain.extend((0..KEYS).map(key));
    // The operator writes v3 again: put v4 first so a stale view would show v3, not v4.
    // (The compaction resolved the trigger's operand into a value: give it a new one.)
    put_all(&db, b"v4");
    db.merge(b"trigger", b"n").unwrap();
    fired.store(false, Ordering::Release);
    let got: Vec<Option<Vec<u8>>> = db.multi_get(&plain).into_iter().map(|r| r.unwrap()).collect();
    assert!(fired.load(Ordering::Acquire), "the merge operator ran during the plain multi-get");
    assert_eq!(got[0].as_deref(), Some(&b"mn"[..]));
    for v in &got[1..] {
        assert_eq!(v.as_deref(), Some(&b"v4"[..]));
    }
    assert_eq!(db.get(key(0)).unwrap().as_deref(), Some(&b"v3"[..]));

    // batched_multi_get_cf: one view as well.
    put_all(&db, b"v5");
    db.merge(b"trigger", b"o").unwrap();
    fired.store(false, Ordering::Release);
    armed.store(true, Ordering::Release);
    let batch: Vec<Vec<u8>> = std::iter::once(b"trigger".to_vec()).chain((0..KEYS).map(key)).collect();
    let got: Vec<Option<Vec<u8>>> = db
        .batched_multi_get_cf(db.cf_handle("default").unwrap(), &batch, false)
        .into_iter()
        .map(|r| r.unwrap().map(|s| s.to_vec()))
        .collect();
    assert!(fired.load(Ordering::Acquire), "the merge operator ran during the batched multi-get");
    assert_eq!(got[0].as_deref(), Some(&b"mno"[..]));
    for v in &got[1..] {
        assert_eq!(v.as_deref(), Some(&b"v5"[..]));
    }
}
