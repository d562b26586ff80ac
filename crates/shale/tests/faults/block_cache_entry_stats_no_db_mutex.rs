//! `rocksdb.block-cache-entry-stats` walks the block cache without the DB mutex (RocksDB PR
//! 8538's point): while a walk is in progress (a hook holds it open), another thread writes,
//! reads `rocksdb.cfstats` and an integer property that takes the DB mutex, and all of it
//! finishes quickly. Were the mutex held by the walk, that thread would block and the test
//! fail on its timeout. The result is RocksDB's text; `rocksdb.stats` prints the last result
//! without walking.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shale::{BlockBasedOptions, Cache, Options, DB};

#[test]
fn entry_stats_walk_holds_no_db_mutex() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(4 << 20);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(&cache);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_block_based_table_factory(&t);
    let db = Arc::new(DB::open(&o, tmp.path()).unwrap());
    for i in 0..2000 {
        db.put(format!("k{i:05}"), vec![b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    for i in 0..2000 {
        assert!(db.get(format!("k{i:05}")).unwrap().is_some());
    }
    assert!(!db.property_value("rocksdb.stats").unwrap().unwrap().contains("Block cache entry stats"));

    let (tx, rx) = mpsc::channel::<Duration>();
    let tx = std::sync::Mutex::new(tx);
    let db2 = db.clone();
    let hook = Arc::new(move || {
        // The walk is in progress on this thread. Another thread needs the DB mutex.
        let db = db2.clone();
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut worst = Duration::ZERO;
            for i in 0..50 {
                let t = Instant::now();
                db.put(format!("during{i}"), b"x").unwrap();
                assert!(db.property_value("rocksdb.cfstats").unwrap().is_some());
                db.property_int_value("rocksdb.num-immutable-mem-table").unwrap();
                worst = worst.max(t.elapsed());
            }
            let _ = done_tx.send(worst);
        });
        let worst = done_rx.recv_timeout(Duration::from_secs(30)).expect("a writer blocked during the walk");
        let _ = tx.lock().unwrap().send(worst);
    });
    cache.set_entry_scan_hook(Some(hook));
    let text = db.property_value("rocksdb.block-cache-entry-stats").unwrap().unwrap();
    cache.set_entry_scan_hook(None);
    let worst = rx.recv_timeout(Duration::from_secs(1)).expect("the hook ran during the walk");
    assert!(worst < Duration::from_secs(2), "P100 of put + cfstats during the walk: {worst:?}");

    assert!(text.starts_with("Block cache LRUCache@"), "{text}");
    assert!(text.contains(" collections: 1 "), "{text}");
    let line = text.lines().nth(1).unwrap();
    assert!(line.starts_with("Block cache entry stats(count,size,portion): DataBlock("), "{line}");
    // A second ask within 10 s reuses the result (RocksDB's rule): no walk, no hook needed.
    let again = db.property_value("rocksdb.block-cache-entry-stats").unwrap().unwrap();
    assert!(again.contains(" collections: 1 last_copies: 1 "), "{again}");
    // rocksdb.stats prints the saved result.
    let stats = db.property_value("rocksdb.stats").unwrap().unwrap();
    assert!(stats.contains("Block cache entry stats(count,size,portion): DataBlock("), "{stats}");
}
