//! The info LOG's column-family options dump matches RocksDB 11.8.1's
//! `ColumnFamilyOptions::Dump`: a database made by RocksDB 11.8.1's `ldb` and one made by
//! Shale, both with default options, print the same `Options.<name>` lines in the same
//! order with the same padding, and the same values where neither side's value is an
//! address or a choice of `ldb` (its merge operator).
//!
//! Skips (printing why) without RocksDB 11.8.1's tools unless `SHALE_REQUIRE_ROCKSDB_11` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::tools;

use std::path::Path;

use shale::{Options, DB};
use tools::*;

/// The `(label, value)` lines of the default family's options dump in `dir`'s LOG: the
/// text after the time and thread id, split at the first ": ", from the section's header
/// to the first line that is not an option line. The table factory's continuation lines
/// (no time stamp) are left out.
fn cf_dump(dir: &Path) -> Vec<(String, String)> {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in log.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())) {
        // "<date-time> <thread id> <text>": the text keeps its leading padding.
        let Some((_, rest)) = line.split_once(' ') else { continue };
        let Some((_, text)) = rest.split_once(' ') else { continue };
        if text.contains("Options for column family [default]") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let is_option = text.trim_start().starts_with("Options.")
            || text.trim_start().starts_with("table_factory options")
            || text.trim_start().starts_with("blob_cache ");
        if !is_option {
            break;
        }
        let (label, value) = text.split_once(": ").unwrap_or((text, ""));
        out.push((label.to_string(), value.to_string()));
    }
    out
}

#[test]
fn cf_options_dump_has_rocksdb_11_lines_order_and_padding() {
    if !use_rocksdb_11("cf_options_dump_has_rocksdb_11_lines_order_and_padding") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("rocksdb");
    run_tool("ldb", &args(&[&format!("--db={}", theirs.display()), "--create_if_missing", "put", "a", "b"]));
    let ours = tmp.path().join("shale");
    let mut o = Options::default();
    o.create_if_missing(true);
    drop(DB::open(&o, &ours).unwrap());

    let (r, s) = (cf_dump(&theirs), cf_dump(&ours));
    assert!(r.len() > 100, "RocksDB's dump is {} lines", r.len());
    let labels = |d: &[(String, String)]| d.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>();
    assert_eq!(labels(&s), labels(&r), "the lines, in order, with RocksDB's padding");
    for ((label, theirs), (_, ours)) in r.iter().zip(&s) {
        let label = label.trim_start();
        // Addresses, and ldb's own merge operator.
        if label == "table_factory options" || label == "Options.merge_operator" {
            continue;
        }
        assert_eq!(ours, theirs, "{label}");
    }
}

/// The `(label, value)` lines of the database options dump in `dir`'s LOG, from
/// `Options.error_if_exists` to the last `Options.` line before the first other line.
fn db_dump(dir: &Path) -> Vec<(String, String)> {
    let log = std::fs::read_to_string(dir.join("LOG")).unwrap();
    let mut out = Vec::new();
    for line in log.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())) {
        let Some((_, rest)) = line.split_once(' ') else { continue };
        let Some((_, text)) = rest.split_once(' ') else { continue };
        let is_option = text.trim_start().starts_with("Options.");
        if out.is_empty() && !text.trim_start().starts_with("Options.error_if_exists") {
            continue;
        }
        if !is_option {
            break;
        }
        let (label, value) = text.split_once(": ").unwrap_or((text, ""));
        out.push((label.to_string(), value.to_string()));
    }
    out
}

#[test]
fn db_options_dump_has_rocksdb_11_lines_order_and_padding() {
    if !use_rocksdb_11("db_options_dump_has_rocksdb_11_lines_order_and_padding") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("rocksdb");
    run_tool("ldb", &args(&[&format!("--db={}", theirs.display()), "--create_if_missing", "put", "a", "b"]));
    let ours = tmp.path().join("shale");
    let mut o = Options::default();
    o.create_if_missing(true);
    drop(DB::open(&o, &ours).unwrap());

    let (r, s) = (db_dump(&theirs), db_dump(&ours));
    assert!(r.len() > 90, "RocksDB's dump is {} lines", r.len());
    let labels = |d: &[(String, String)]| d.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>();
    assert_eq!(labels(&s), labels(&r), "the lines, in order, with RocksDB's padding");
    for ((label, theirs), (_, ours)) in r.iter().zip(&s) {
        let label = label.trim_start();
        // Addresses (Shale's database makes its write buffer manager at open, after the dump).
        if ["Options.env", "Options.info_log", "Options.write_buffer_manager"].contains(&label) {
            continue;
        }
        assert_eq!(ours, theirs, "{label}");
    }
}
