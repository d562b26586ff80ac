//! Index keys as RocksDB 11.8.1 writes them under each `index_shortening` mode: 11.8.1's
//! db_bench flushes one table of fillseq keys with `--index_shortening_mode=0|1|2`; Shale
//! writes the same keys and values with the same mode (`set_index_shortening`), block size and
//! no compression; the index entries 11.8.1's `sst_dump --command=raw` prints for the two
//! tables are identical (keys and block handles). Skipped (with the reason) where 11.8.1's
//! tools cannot run.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{BlockBasedOptions, DBCompressionType, IndexShorteningMode, IteratorMode, Options, DB};

/// A key and its value, as the iterator returns them.
type KeyValue = (Box<[u8]>, Box<[u8]>);

/// The index entries (`  HEX <key>: <handle> offset .. size ..`) of the one table in `dir`.
fn index_entries(dir: &Path) -> Vec<String> {
    let ssts = tools::sst_files(dir);
    assert_eq!(ssts.len(), 1, "{ssts:?}");
    tools::run_tool("sst_dump", &tools::args(&[&format!("--file={}", ssts[0].display()), "--command=raw"]));
    let dump = ssts[0].with_extension("").with_extension("");
    let dump = dump.with_file_name(format!("{}_dump.txt", dump.file_name().unwrap().to_string_lossy()));
    let text = String::from_utf8_lossy(&std::fs::read(&dump).unwrap()).into_owned();
    let start = text.find("Index Details:").unwrap_or_else(|| panic!("no index in {}", dump.display()));
    let entries: Vec<String> = text[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.ends_with("Details:") && !l.starts_with("Data Block"))
        .filter(|l| l.trim_start().starts_with("HEX"))
        .map(str::to_string)
        .collect();
    assert!(entries.len() > 10, "too few index entries in {}", dump.display());
    entries
}

#[test]
fn index_keys_match_rocksdb_11_in_every_shortening_mode() {
    if !tools::use_rocksdb_11("index_keys_match_rocksdb_11_in_every_shortening_mode") {
        return;
    }
    for (flag, mode) in [
        ("0", IndexShorteningMode::NoShortening),
        ("1", IndexShorteningMode::ShortenSeparators),
        ("2", IndexShorteningMode::ShortenSeparatorsAndSuccessor),
    ] {
        let rocks = tempfile::tempdir().unwrap();
        tools::db_bench_run(
            rocks.path(),
            "fillseq,flush",
            3000,
            &[
                &format!("--index_shortening_mode={flag}"),
                "--block_size=512",
                "--compression_type=none",
                "--bloom_bits=-1",
                "--disable_auto_compactions=1",
            ],
        );
        let pairs: Vec<KeyValue> = {
            let db = DB::open_for_read_only(&Options::default(), rocks.path(), false).unwrap();
            db.iterator(IteratorMode::Start).map(|r| r.unwrap()).collect()
        };
        assert_eq!(pairs.len(), 3000);

        let ours = tempfile::tempdir().unwrap();
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        o.set_compression_type(DBCompressionType::None);
        let mut t = BlockBasedOptions::default();
        t.set_block_size(512);
        t.set_index_shortening(mode);
        o.set_block_based_table_factory(&t);
        let db = DB::open(&o, ours.path()).unwrap();
        for (k, v) in &pairs {
            db.put(k, v).unwrap();
        }
        db.flush().unwrap();
        drop(db);

        let (want, got) = (index_entries(rocks.path()), index_entries(ours.path()));
        assert_eq!(got, want, "index_shortening_mode={flag}");
    }
}
