//! Hash memtables in the OPTIONS file: `set_memtable_factory` with HashSkipList or
//! HashLinkList is written as RocksDB 11.8.1 writes it (the lines below are from the
//! OPTIONS files 11.8.1's db_bench wrote with `--memtablerep=prefix_hash` /
//! `hash_linkedlist --prefix_size=4 --hash_bucket_count=1000`), as the skip list without a
//! prefix extractor (RocksDB's SanitizeCfOptions replaces the factory then), and is read
//! back by `load_latest` and `get_options_from_string`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Cache, Env, MemtableFactory, Options, SliceTransform, DB};

const HASH_SKIP_LIST_11_8_1: &str =
    "memtable_factory={id=HashSkipListRepFactory;branching_factor=4;skiplist_height=4;bucket_count=1000;}";
const HASH_LINK_LIST_11_8_1: &str = "memtable_factory={id=HashLinkListRepFactory;log_when_flash=true;\
     logging_threshold=4096;huge_page_size=0;threshold=256;bucket_count=1000;}";

/// The `memtable_factory` line of the newest OPTIONS file (the first family's).
fn factory_line(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OPTIONS-"))
        .collect();
    names.sort_by_key(|n| n["OPTIONS-".len()..].parse::<u64>().unwrap());
    let text = std::fs::read_to_string(dir.join(names.last().unwrap())).unwrap();
    text.lines().map(str::trim).find(|l| l.starts_with("memtable_factory=")).unwrap().to_string()
}

fn written(factory: MemtableFactory, prefix: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    // The hash memtables cannot insert concurrently: RocksDB refuses them otherwise.
    o.set_allow_concurrent_memtable_write(false);
    o.set_memtable_factory(factory);
    if prefix {
        o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    }
    drop(DB::open(&o, dir.path()).unwrap());
    factory_line(dir.path())
}

#[test]
fn hash_memtables_are_written_as_rocksdb_writes_them() {
    let hsl = MemtableFactory::HashSkipList { bucket_count: 1000, height: 4, branching_factor: 4 };
    assert_eq!(written(hsl.clone(), true), HASH_SKIP_LIST_11_8_1);
    assert_eq!(written(MemtableFactory::HashLinkList { bucket_count: 1000 }, true), HASH_LINK_LIST_11_8_1);
    let other = MemtableFactory::HashSkipList { bucket_count: 7, height: 12, branching_factor: 2 };
    assert_eq!(
        written(other, true),
        "memtable_factory={id=HashSkipListRepFactory;branching_factor=2;skiplist_height=12;bucket_count=7;}"
    );
    // No prefix extractor: RocksDB uses (and writes) the skip list.
    assert_eq!(written(hsl, false), "memtable_factory=SkipListFactory");
    assert_eq!(written(MemtableFactory::SkipList, true), "memtable_factory=SkipListFactory");
}

#[test]
fn hash_memtables_are_read_back_from_the_options_file() {
    for (factory, line) in [
        (
            MemtableFactory::HashSkipList { bucket_count: 1000, height: 4, branching_factor: 4 },
            HASH_SKIP_LIST_11_8_1,
        ),
        (MemtableFactory::HashLinkList { bucket_count: 1000 }, HASH_LINK_LIST_11_8_1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_allow_concurrent_memtable_write(false);
        o.set_memtable_factory(factory);
        o.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
        drop(DB::open(&o, dir.path()).unwrap());
        // The prefix extractor is not rebuilt from its name: the caller sets it again.
        let (mut loaded, _) =
            Options::load_latest(dir.path(), Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20))
                .unwrap();
        loaded.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
        drop(DB::open(&loaded, dir.path()).unwrap());
        assert_eq!(factory_line(dir.path()), line);
    }
}

#[test]
fn an_options_string_names_a_hash_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let mut base = Options::default();
    base.create_if_missing(true);
    base.set_allow_concurrent_memtable_write(false);
    base.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
    let o = base.get_options_from_string(HASH_LINK_LIST_11_8_1).unwrap();
    drop(DB::open(&o, dir.path()).unwrap());
    assert_eq!(factory_line(dir.path()), HASH_LINK_LIST_11_8_1);
    // By id alone: the factory's defaults (NewHashSkipListRepFactory()).
    let o = base.get_options_from_string("memtable_factory=HashSkipListRepFactory").unwrap();
    drop(DB::open(&o, dir.path()).unwrap());
    assert_eq!(
        factory_line(dir.path()),
        "memtable_factory={id=HashSkipListRepFactory;branching_factor=4;skiplist_height=4;bucket_count=1000000;}"
    );
    // A field the factory does not have is refused.
    assert!(base
        .get_options_from_string("memtable_factory={id=HashSkipListRepFactory;threshold=3;}")
        .is_err());
}

#[test]
fn rocksdb_11_8_1s_hash_memtables_are_read_and_written_back_the_same() {
    if !tools::use_rocksdb_11("rocksdb_11_8_1s_hash_memtables_are_read_and_written_back_the_same") {
        return;
    }
    for (rep, line) in [("prefix_hash", HASH_SKIP_LIST_11_8_1), ("hash_linkedlist", HASH_LINK_LIST_11_8_1)] {
        let dir = tempfile::tempdir().unwrap();
        tools::db_bench_run(
            dir.path(),
            "fillseq",
            100,
            &[
                &format!("--memtablerep={rep}"),
                "--prefix_size=4",
                "--hash_bucket_count=1000",
                "--allow_concurrent_memtable_write=false",
            ],
        );
        assert_eq!(factory_line(dir.path()), line, "{rep}: RocksDB 11.8.1 wrote another line");
        let (mut loaded, _) =
            Options::load_latest(dir.path(), Env::new().unwrap(), false, Cache::new_lru_cache(1 << 20))
                .unwrap();
        loaded.set_prefix_extractor(SliceTransform::create_fixed_prefix(4));
        drop(DB::open(&loaded, dir.path()).unwrap());
        assert_eq!(factory_line(dir.path()), line, "{rep}: Shale wrote it back otherwise");
    }
}
