//! A database on plain tables, and one on cuckoo tables, behave as one on block-based tables:
//! the same writes (overwrites and deletions within one memtable, several flushes, a
//! compaction, a reopen) give the same gets and the same scans both ways. Cuckoo tables keep
//! one entry per user key: the flush drops versions no snapshot sees, as RocksDB's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{
    CuckooTableOptions, IteratorMode, KeyEncodingType, Options, PlainTableFactoryOptions, SliceTransform, DB,
};

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn scan(db: &DB) -> Pairs {
    db.iterator(IteratorMode::Start).map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect()
}

fn scan_rev(db: &DB) -> Pairs {
    let mut v: Pairs =
        db.iterator(IteratorMode::End).map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
    v.reverse();
    v
}

/// Fixed-size keys and values (what a cuckoo table needs).
fn workload(db: &DB, rounds: usize) {
    for r in 0..rounds {
        for i in 0..300u32 {
            let k = format!("k{:07}", (i * 7 + r as u32 * 13) % 500);
            if (i + r as u32).is_multiple_of(11) {
                db.delete(k.as_bytes()).unwrap();
            } else {
                db.put(k.as_bytes(), format!("v{r:03}-{i:06}").as_bytes()).unwrap();
            }
        }
        db.flush().unwrap();
    }
}

fn run(name: &str, configure: impl Fn(&mut Options), compact: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    let mut opts = base.clone();
    configure(&mut opts);
    let want_db = DB::open(&base, dir.path().join("block")).unwrap();
    workload(&want_db, 5);
    let path = dir.path().join(name);
    {
        let db = DB::open(&opts, &path).unwrap();
        workload(&db, 5);
        if compact {
            db.compact_range::<&[u8], &[u8]>(None, None);
        }
        let want = scan(&want_db);
        assert_eq!(scan(&db), want, "{name}: scan");
        assert_eq!(scan_rev(&db), want, "{name}: reverse scan");
        for i in 0..520u32 {
            let k = format!("k{i:07}");
            assert_eq!(db.get(k.as_bytes()).unwrap(), want_db.get(k.as_bytes()).unwrap(), "{name}: get {k}");
        }
    }
    let db = DB::open(&opts, &path).unwrap();
    assert_eq!(scan(&db), scan(&want_db), "{name}: after reopen");
}

#[test]
fn plain_and_cuckoo_databases_match_block_based() {
    let plain = |encoding: KeyEncodingType, key_len: u32| {
        move |o: &mut Options| {
            o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
            o.set_plain_table_factory(&PlainTableFactoryOptions {
                user_key_length: key_len,
                bloom_bits_per_key: 10,
                hash_table_ratio: 0.75,
                index_sparseness: 4,
                huge_page_tlb_size: 0,
                encoding_type: encoding,
                full_scan_mode: false,
                store_index_in_file: false,
            });
        }
    };
    run("plain", plain(KeyEncodingType::Plain, 0), true);
    run("plain-fixed", plain(KeyEncodingType::Plain, 8), false);
    run("plain-prefix", plain(KeyEncodingType::Prefix, 0), true);
    let cuckoo = |o: &mut Options| {
        let mut c = CuckooTableOptions::default();
        c.set_hash_ratio(0.8);
        c.set_cuckoo_block_size(4);
        o.set_cuckoo_table_factory(&c);
    };
    // A level-0 cuckoo table per flush (overlapping key ranges), then compacted.
    run("cuckoo", cuckoo, false);
    run("cuckoo-compacted", cuckoo, true);
}

#[test]
fn cuckoo_flush_with_a_snapshot_holding_two_versions_fails_as_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_cuckoo_table_factory(&CuckooTableOptions::default());
    let db = DB::open(&opts, dir.path()).unwrap();
    db.put(b"key00001", b"v1").unwrap();
    let snap = db.snapshot();
    db.put(b"key00001", b"v2").unwrap();
    let e = db.flush().unwrap_err();
    assert!(e.to_string().contains("Same key is being inserted again"), "{e}");
    assert_eq!(snap.get(b"key00001").unwrap().as_deref(), Some(&b"v1"[..]));
}
