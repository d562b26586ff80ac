//! `block_protection_bytes_per_key` (helper prot, issue 33), as RocksDB 11.8.1's mutable
//! CF option of that name:
//! - parsed, written to the OPTIONS file and read back, changed by `set_options`; 0, 1, 2,
//!   4, 8 only (open and set_options answer RocksDB's NotSupported otherwise); no LOG dump
//!   line (RocksDB 11.8.1 prints none);
//! - the blocks a table reader parses carry that many checksum bytes per entry, charged to
//!   the block cache with the block: usage grows by exactly N bytes per entry of each data
//!   block (and index block, when index blocks go to the cache), reads give the same data;
//! - `set_options` reaches the table readers opened after it, as RocksDB's
//!   `TableCache::GetTableReader` takes the value at open.
//!
//! The checksums' detection of a byte corrupted in memory is shown beside the block
//! (`shale-format/src/table/block_tests.rs`, `protected_*`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::{BlockBasedIndexType, BlockBasedOptions, Cache, ErrorKind, Options, DB};

use crate::util;

const KEYS: u32 = 3000;

/// The pairs a read saw.
type Pairs = Vec<(Box<[u8]>, Box<[u8]>)>;

fn options(protection: Option<&str>, cache: &Cache, index_in_cache: bool, partitioned: bool) -> Options {
    let mut o = match protection {
        Some(n) => {
            Options::default().get_options_from_string(format!("block_protection_bytes_per_key={n}")).unwrap()
        }
        None => Options::default(),
    };
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    let mut t = BlockBasedOptions::default();
    t.set_block_cache(cache);
    t.set_cache_index_and_filter_blocks(index_in_cache);
    if partitioned {
        t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        t.set_partition_filters(true);
        t.set_bloom_filter(10.0, false);
        t.set_metadata_block_size(512);
    }
    o.set_block_based_table_factory(&t);
    o
}

fn key(prefix: char, i: u32) -> String {
    format!("{prefix}{i:07}")
}

fn fill(db: &DB, prefix: char) {
    for i in 0..KEYS {
        db.put(key(prefix, i), util::value(u64::from(i), 50 + (i % 7) as usize)).unwrap();
    }
    db.flush().unwrap();
}

/// Reads every key of `prefix` (gets and a scan, both directions) and checks the values;
/// returns the entries seen.
fn read_all(db: &DB, prefix: char) -> Pairs {
    for i in (0..KEYS).step_by(7) {
        assert_eq!(db.get(key(prefix, i)).unwrap(), Some(util::value(u64::from(i), 50 + (i % 7) as usize)));
    }
    assert_eq!(db.get(format!("{prefix}x")).unwrap(), None);
    let fwd: Vec<_> = db
        .iterator(shale::IteratorMode::From(prefix.to_string().as_bytes(), shale::Direction::Forward))
        .map(|r| r.unwrap())
        .take_while(|(k, _)| k.starts_with(prefix.to_string().as_bytes()))
        .collect();
    assert_eq!(fwd.len(), KEYS as usize);
    let mut it = db.raw_iterator();
    it.seek_for_prev(key(prefix, KEYS - 1));
    let mut back = 0;
    while it.valid() && it.key().unwrap().starts_with(prefix.to_string().as_bytes()) {
        back += 1;
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(back, KEYS);
    fwd
}

/// The block cache usage after a DB with `protection` reads a table of KEYS entries from
/// its file (reopened: no block cached), and the entries it read.
fn usage_after_reads(protection: Option<&str>, index_in_cache: bool, partitioned: bool) -> (usize, Pairs) {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(256 << 20);
    let o = options(protection, &cache, index_in_cache, partitioned);
    let db = DB::open(&o, dir.path()).unwrap();
    fill(&db, 'a');
    drop(db);
    let cache = Cache::new_lru_cache(256 << 20);
    let o = options(protection, &cache, index_in_cache, partitioned);
    let db = DB::open(&o, dir.path()).unwrap();
    let seen = read_all(&db, 'a');
    (cache.get_usage(), seen)
}

#[test]
fn protected_blocks_are_charged_to_the_cache_and_read_the_same() {
    let (plain, plain_seen) = usage_after_reads(None, false, false);
    assert_eq!(usage_after_reads(Some("0"), false, false).0, plain, "0 is the default: no checksums");
    for n in [1usize, 2, 4, 8] {
        let (usage, seen) = usage_after_reads(Some(&n.to_string()), false, false);
        assert_eq!(seen, plain_seen, "reads unchanged with {n} bytes");
        // Every data block is in the cache after the scan: n bytes for each of its entries.
        assert_eq!(usage - plain, KEYS as usize * n, "{n} bytes per entry charged");
    }
    // Index blocks in the cache are charged their entries' checksums too.
    let (plain, _) = usage_after_reads(None, true, false);
    let (usage, seen) = usage_after_reads(Some("8"), true, false);
    assert_eq!(seen, plain_seen);
    assert!(usage - plain > KEYS as usize * 8, "data and index entries: {} over {plain}", usage - plain);
    // A partitioned index and filter: partitions and top levels parsed with checksums.
    let (plain, _) = usage_after_reads(None, true, true);
    let (usage, seen) = usage_after_reads(Some("4"), true, true);
    assert_eq!(seen, plain_seen);
    assert!(
        usage - plain > KEYS as usize * 4,
        "data, partitions and top level: {} over {plain}",
        usage - plain
    );
}

#[test]
fn block_protection_row_validation_and_set_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    let cache = Cache::new_lru_cache(256 << 20);
    let db = DB::open(&options(Some("8"), &cache, false, false), path).unwrap();
    let text = util::latest_options_text(path);
    assert!(text.contains("  block_protection_bytes_per_key=8\n"), "{text}");
    let log = std::fs::read_to_string(path.join("LOG")).unwrap();
    assert!(!log.contains("block_protection_bytes_per_key"), "RocksDB 11.8.1 dumps no line for it");
    // RocksDB's ValidateOptions, at set_options as at open.
    let e = db.set_options(&[("block_protection_bytes_per_key", "3")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(
        e.to_string()
            .contains("Block per key-value checksum protection only supports 0, 1, 2, 4 or 8 bytes per key."),
        "{e}"
    );
    assert!(util::latest_options_text(path).contains("  block_protection_bytes_per_key=8\n"));
    // A value that is no uint8 is refused by the parser.
    let e = db.set_options(&[("block_protection_bytes_per_key", "256")]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(db);
    let e = DB::open(&options(Some("5"), &cache, false, false), tempfile::tempdir().unwrap().path())
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("Block per key-value checksum protection only supports"), "{e}");

    // set_options from 0: the table read before has no checksums; a table of the same
    // shape written and first opened after `set_options(8)` is charged 8 bytes an entry.
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::new_lru_cache(256 << 20);
    let db = DB::open(&options(None, &cache, false, false), dir.path()).unwrap();
    fill(&db, 'a');
    let before = cache.get_usage();
    let a = read_all(&db, 'a');
    let a_charge = cache.get_usage() - before;
    db.set_options(&[("block_protection_bytes_per_key", "8")]).unwrap();
    assert!(util::latest_options_text(dir.path()).contains("  block_protection_bytes_per_key=8\n"));
    fill(&db, 'b');
    let before = cache.get_usage();
    let b = read_all(&db, 'b');
    let b_charge = cache.get_usage() - before;
    assert_eq!(b_charge - a_charge, KEYS as usize * 8, "a: {a_charge}, b: {b_charge}");
    assert_eq!(a.len(), b.len());
    for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
        assert_eq!((&ka[1..], va), (&kb[1..], vb));
    }
    drop(db);
    // The OPTIONS file's value comes back through load_latest.
    let (again, _) =
        Options::load_latest(dir.path(), shale::Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20))
            .unwrap();
    let db = DB::open(&again, dir.path()).unwrap();
    assert!(util::latest_options_text(dir.path()).contains("  block_protection_bytes_per_key=8\n"));
    read_all(&db, 'a');
    read_all(&db, 'b');
}
