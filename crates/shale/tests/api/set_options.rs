//! `set_options` / `set_options_cf` (RocksDB's SetOptions): what changes takes effect at
//! once, a bad name or value changes nothing and says which, and the OPTIONS file is
//! rewritten with the new values.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

use crate::util;

use shale::{ErrorKind, Options, WaitForCompactOptions, DB};

fn level_files(db: &DB, cf: &str) -> Vec<(i32, usize)> {
    let mut per_level = std::collections::BTreeMap::new();
    for f in db.live_files().unwrap().into_iter().filter(|f| f.column_family_name == cf) {
        *per_level.entry(f.level).or_insert(0usize) += 1;
    }
    per_level.into_iter().collect()
}

fn section<'a>(text: &'a str, cf: &str) -> &'a str {
    let start = text.find(&format!("[CFOptions \"{cf}\"]")).unwrap();
    let rest = &text[start..];
    let end = rest[1..].find("\n[").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn changes_take_effect_and_reach_the_options_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    let db = DB::open_cf(&opts, &path, ["cf1"]).unwrap();
    let cf1 = db.cf_handle("cf1").unwrap();

    // disable_auto_compactions and the level-0 trigger.
    db.set_options_cf(
        cf1,
        &[("disable_auto_compactions", "true"), ("level0_file_num_compaction_trigger", "2")],
    )
    .unwrap();
    for i in 0..3 {
        db.put_cf(cf1, format!("k{i}"), b"v").unwrap();
        db.flush_cf(cf1).unwrap();
    }
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    assert_eq!(level_files(&db, "cf1"), vec![(0, 3)], "auto compactions ran while disabled");
    let text = util::latest_options_text(&path);
    assert!(section(&text, "cf1").contains("disable_auto_compactions=true"), "{text}");
    assert!(section(&text, "cf1").contains("level0_file_num_compaction_trigger=2"), "{text}");
    assert!(section(&text, "default").contains("disable_auto_compactions=false"), "{text}");

    db.set_options_cf(cf1, &[("disable_auto_compactions", "false")]).unwrap();
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    // Into the base level: the last one, with dynamic level bytes (RocksDB's default).
    assert_eq!(level_files(&db, "cf1"), vec![(6, 1)], "enabling auto compactions did not compact");

    // write_buffer_size: a small buffer fills and flushes by itself; target_file_size_base:
    // compactions cut their outputs at the new size.
    db.set_options(&[("write_buffer_size", "65536"), ("target_file_size_base", "32768")]).unwrap();
    // Incompressible values, so that table sizes follow the bytes written.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let value: Vec<u8> = (0..1000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect();
    for i in 0..400 {
        db.put(format!("w{i:04}"), &value).unwrap();
    }
    db.wait_for_compact(&WaitForCompactOptions::default()).unwrap();
    assert!(!level_files(&db, "default").is_empty(), "no flush after write_buffer_size shrank");
    assert!(section(&util::latest_options_text(&path), "default").contains("write_buffer_size=65536"));

    db.set_options(&[("paranoid_file_checks", "true")]).unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
    let files: Vec<_> =
        db.live_files().unwrap().into_iter().filter(|f| f.column_family_name == "default").collect();
    // About 130 KB of tables (equal values compress within a block): at least four.
    assert!(files.len() >= 4, "{:?}", files.iter().map(|f| (f.level, f.size)).collect::<Vec<_>>());
    assert!(
        files.iter().all(|f| f.size < 64 << 10),
        "{:?}",
        files.iter().map(|f| f.size).collect::<Vec<_>>()
    );
    for i in (0..400).step_by(37) {
        assert_eq!(db.get(format!("w{i:04}")).unwrap().as_deref(), Some(&value[..]));
    }

    // The new values outlive a reopen through the OPTIONS file (Options::load_latest).
    drop(db);
    let text = util::latest_options_text(&path);
    assert!(section(&text, "default").contains("target_file_size_base=32768"), "{text}");
    assert!(section(&text, "default").contains("paranoid_file_checks=true"), "{text}");
}

#[test]
fn bad_input_changes_nothing_and_names_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut opts = Options::default();
    opts.create_if_missing(true);
    let db = DB::open(&opts, &path).unwrap();
    let before = util::latest_options_text(&path);
    type Case<'a> = (&'a [(&'a str, &'a str)], ErrorKind, &'a str);
    let cases: &[Case] = &[
        (
            &[("disable_auto_compactions", "INVALID_VALUE")],
            ErrorKind::InvalidArgument,
            "disable_auto_compactions",
        ),
        (&[("INVALID_NAME", "1")], ErrorKind::InvalidArgument, "INVALID_NAME"),
        (
            &[("write_buffer_size", "1048576"), ("INVALID_NAME", "1")],
            ErrorKind::InvalidArgument,
            "INVALID_NAME",
        ),
        (&[("write_buffer_size", "-5")], ErrorKind::InvalidArgument, "write_buffer_size"),
        (&[("num_levels", "3")], ErrorKind::InvalidArgument, "num_levels"),
        // Mutable (helper cfblob), but only to an extractor RocksDB builds from its name.
        (&[("prefix_extractor", "no.SuchExtractor")], ErrorKind::InvalidArgument, "prefix_extractor"),
        (&[("disable_auto_compactions\0", "true")], ErrorKind::InvalidArgument, "NUL"),
        (&[], ErrorKind::InvalidArgument, "no options"),
    ];
    for (pairs, kind, named) in cases {
        let e = db.set_options(pairs).unwrap_err();
        assert_eq!(e.kind(), *kind, "{pairs:?}: {e}");
        assert!(e.to_string().contains(named), "{pairs:?}: {e}");
    }
    assert_eq!(before, util::latest_options_text(&path), "a refused set_options changed the OPTIONS file");
    assert!(section(&before, "default").contains("write_buffer_size=67108864"));
}
