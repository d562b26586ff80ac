//! The speed settings RocksDB keeps as options (max_subcompactions,
//! max_sequential_skip_in_iterations, compaction_readahead_size, advise_random_on_open,
//! manifest_preallocation_size, max_file_opening_threads, table_cache_numshardbits) are
//! written to the OPTIONS file as set, not as RocksDB's defaults; an iterator walking over
//! many versions of one key reseeks after max_sequential_skip_in_iterations of them
//! (ticker rocksdb.number.reseeks.iteration) and returns the same entries either way; tables
//! opened at open on several threads are all readable.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use shale::statistics::Ticker;
use shale::{IteratorMode, Options, DB};

fn newest_options_file(dir: &std::path::Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OPTIONS-"))
        .collect();
    names.sort();
    std::fs::read_to_string(dir.join(names.last().unwrap())).unwrap()
}

#[test]
fn options_file_records_the_values_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_max_subcompactions(3);
    o.set_compaction_readahead_size(1 << 20);
    o.set_advise_random_on_open(false);
    o.set_manifest_preallocation_size(1 << 20);
    o.set_max_file_opening_threads(2);
    o.set_table_cache_num_shard_bits(4);
    o.set_max_sequential_skip_in_iterations(3);
    let db = DB::open(&o, dir.path()).unwrap();
    drop(db);
    let text = newest_options_file(dir.path());
    for line in [
        "  max_subcompactions=3\n",
        "  compaction_readahead_size=1048576\n",
        "  advise_random_on_open=false\n",
        "  manifest_preallocation_size=1048576\n",
        "  max_file_opening_threads=2\n",
        "  table_cache_numshardbits=4\n",
        "  max_sequential_skip_in_iterations=3\n",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    // Read back, the file gives the same values (a database reopened from it acts alike).
    let (loaded, _) = Options::load_latest(
        dir.path(),
        shale::Env::new().unwrap(),
        false,
        shale::Cache::new_lru_cache(8 << 20),
    )
    .unwrap();
    let db = DB::open(&loaded, dir.path()).unwrap();
    drop(db);
    let again = newest_options_file(dir.path());
    assert!(
        again.contains("  max_subcompactions=3\n")
            && again.contains("  max_sequential_skip_in_iterations=3\n")
    );
}

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Entries seen walking a database whose key "a" has 20 versions (forward, backward), and
/// the reseeks counted.
/// With `dynamic`, the value is set by `set_options` after open.
fn walk(max_skip: Option<u64>, dynamic: bool) -> (Pairs, Pairs, u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.enable_statistics();
    if let Some(n) = max_skip.filter(|_| !dynamic) {
        o.set_max_sequential_skip_in_iterations(n);
    }
    let db = DB::open(&o, dir.path()).unwrap();
    if let Some(n) = max_skip.filter(|_| dynamic) {
        db.set_options(&[("max_sequential_skip_in_iterations", n.to_string().as_str())]).unwrap();
    }
    db.put(b"0", b"first").unwrap();
    for i in 0..20 {
        db.put(b"a", format!("v{i}")).unwrap();
    }
    db.put(b"b", b"last").unwrap();
    let collect = |mode| -> Pairs {
        db.iterator(mode)
            .map(|r| {
                let (k, v) = r.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect()
    };
    let forward = collect(IteratorMode::Start);
    let backward = collect(IteratorMode::End);
    (forward, backward, o.get_ticker_count(Ticker::NumberOfReseeksInIteration))
}

#[test]
fn iterators_reseek_after_max_sequential_skip_in_iterations() {
    let (f8, b8, reseeks8) = walk(None, false);
    let (f100, b100, reseeks100) = walk(Some(100), false);
    let (f1, b1, reseeks1) = walk(Some(1), false);
    // A mutable option, as RocksDB's: set_options changes it for new iterators.
    let (fd, bd, reseeks_dynamic) = walk(Some(100), true);
    assert_eq!((&fd, &bd, reseeks_dynamic), (&f100, &b100, 0));
    assert_eq!(f8.len(), 3);
    assert_eq!(f8[1], (b"a".to_vec(), b"v19".to_vec()));
    assert_eq!((&f8, &b8), (&f100, &b100));
    assert_eq!((&f8, &b8), (&f1, &b1));
    // The 19 hidden versions of "a": more than 8 and than 1, fewer than 100.
    assert!(reseeks8 >= 1, "no reseek with the default 8");
    assert_eq!(reseeks100, 0, "a reseek with 100 allowed");
    assert!(reseeks1 >= reseeks8, "{reseeks1} reseeks with 1, {reseeks8} with 8");
}

#[test]
fn tables_opened_on_several_threads_are_all_readable() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    {
        let db = DB::open(&o, dir.path()).unwrap();
        for t in 0..12 {
            for i in 0..50 {
                db.put(format!("t{t:02}k{i:03}"), format!("v{t}.{i}")).unwrap();
            }
            db.flush().unwrap();
        }
    }
    for threads in [1, 4] {
        let mut o = o.clone();
        o.set_max_open_files(-1);
        o.set_max_file_opening_threads(threads);
        let db = DB::open(&o, dir.path()).unwrap();
        assert_eq!(db.iterator(IteratorMode::Start).count(), 600);
        assert_eq!(db.get(b"t11k049").unwrap(), Some(b"v11.49".to_vec()));
    }
}
