//! The info LOG's options dump matches RocksDB 11.8.1's: a database made by RocksDB
//! 11.8.1's `ldb` and one made by Shale, both with default options, print the same
//! `Options.<name>` lines in the same order with the same padding (`DBOptions::Dump`, then
//! `ColumnFamilyOptions::Dump` for the default family), and the same values where neither
//! side's value is an address or a choice of `ldb` (its merge operator).
//!
//! Skips (printing why) without RocksDB 11.8.1's tools unless `SHALE_REQUIRE_ROCKSDB_11` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};
use tools::*;

type Lines = Vec<(String, String)>;

/// The `(label, value)` option lines of `dir`'s LOG from the first line whose text
/// `starts` (that line included when `include_start`) to the first line that is not an
/// option line: the text after the time and thread id, padding kept, split at the first
/// ": ". Continuation lines (no time stamp, the table factory's options) are left out.
fn dump(dir: &Path, starts: &str, include_start: bool) -> Lines {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in log.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())) {
        // "<date-time> <thread id> <text>".
        let Some((_, rest)) = line.split_once(' ') else { continue };
        let Some((_, text)) = rest.split_once(' ') else { continue };
        if !inside {
            inside = text.contains(starts);
            if !(inside && include_start) {
                continue;
            }
        }
        let t = text.trim_start();
        if !["Options.", "table_factory options", "blob_cache "].iter().any(|p| t.starts_with(p)) {
            break;
        }
        let (label, value) = text.split_once(": ").unwrap_or((text, ""));
        out.push((label.to_string(), value.to_string()));
    }
    out
}

/// RocksDB's and Shale's LOGs for default options: (RocksDB's dir, Shale's dir), or None
/// when RocksDB 11.8.1's tools cannot run here.
fn both_logs(test: &str, tmp: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    if !use_rocksdb_11(test) {
        return None;
    }
    let theirs = tmp.join("rocksdb");
    run_tool("ldb", &args(&[&format!("--db={}", theirs.display()), "--create_if_missing", "put", "a", "b"]));
    let ours = tmp.join("shale");
    let mut o = Options::default();
    o.create_if_missing(true);
    drop(DB::open(&o, &ours).unwrap());
    Some((theirs, ours))
}

/// The same labels in the same order, and the same values but for the `skipped` labels.
fn assert_same(theirs: &Lines, ours: &Lines, at_least: usize, skipped: &[&str]) {
    assert!(theirs.len() >= at_least, "RocksDB's dump is {} lines", theirs.len());
    let labels = |d: &Lines| d.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>();
    assert_eq!(labels(ours), labels(theirs), "the lines, in order, with RocksDB's padding");
    for ((label, t), (_, o)) in theirs.iter().zip(ours) {
        let label = label.trim_start();
        if !skipped.contains(&label) {
            assert_eq!(o, t, "{label}");
        }
    }
}

#[test]
fn cf_options_dump_has_rocksdb_11_lines_order_and_padding() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((theirs, ours)) =
        both_logs("cf_options_dump_has_rocksdb_11_lines_order_and_padding", tmp.path())
    else {
        return;
    };
    let section = "Options for column family [default]";
    // Addresses, and ldb's own merge operator.
    let skipped = ["table_factory options", "Options.merge_operator"];
    assert_same(&dump(&theirs, section, false), &dump(&ours, section, false), 100, &skipped);
}

#[test]
fn db_options_dump_has_rocksdb_11_lines_order_and_padding() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((theirs, ours)) =
        both_logs("db_options_dump_has_rocksdb_11_lines_order_and_padding", tmp.path())
    else {
        return;
    };
    let first = "Options.error_if_exists";
    // Addresses (Shale makes its write buffer manager at open, after the dump).
    let skipped = ["Options.env", "Options.info_log", "Options.write_buffer_manager"];
    assert_same(&dump(&theirs, first, true), &dump(&ours, first, true), 90, &skipped);
}

/// The table factory's options (the LOG's lines after `table_factory options:`, which carry
/// no time stamp) up to the next stamped line, padding kept.
fn table_factory_block(dir: &Path) -> Vec<String> {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let mut lines = log.lines().skip_while(|l| !l.contains("table_factory options:"));
    lines.next();
    lines.take_while(|l| !l.starts_with(|c: char| c.is_ascii_digit())).map(str::to_string).collect()
}

/// With no block cache set, a family's table factory makes RocksDB 11.8.1's default cache: an
/// AutoHyperClockCache of 32 MiB in one shard (`BlockBasedTableFactory::InitializeOptions`),
/// printed as RocksDB prints it (no LRU pool ratios); the whole table-factory block matches
/// but for addresses.
#[test]
fn default_block_cache_is_rocksdb_11s_auto_hyper_clock_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((theirs, ours)) =
        both_logs("default_block_cache_is_rocksdb_11s_auto_hyper_clock_cache", tmp.path())
    else {
        return;
    };
    let (theirs, ours) = (table_factory_block(&theirs), table_factory_block(&ours));
    for want in [
        "  block_cache_name: AutoHyperClockCache",
        "  block_cache_options:",
        "    capacity : 33554432",
        "    num_shard_bits : 0",
        "    strict_capacity_limit : 0",
        "    memory_allocator : None",
    ] {
        assert!(theirs.iter().any(|l| l == want), "RocksDB's LOG lacks {want:?}: {theirs:#?}");
    }
    assert!(theirs.len() > 40, "{theirs:#?}");
    assert_eq!(ours.len(), theirs.len(), "ours {ours:#?}\ntheirs {theirs:#?}");
    for (o, t) in ours.iter().zip(&theirs) {
        // Addresses: "<label>: 0x..." or "<label>: <name> (0x...)".
        if t.contains("0x") {
            assert_eq!(o.split(':').next(), t.split(':').next(), "{t}");
        } else {
            assert_eq!(o, t);
        }
    }
}
