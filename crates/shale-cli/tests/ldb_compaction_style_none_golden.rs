//! Golden: a family with `compaction_style=kCompactionStyleNone` (RocksDB's
//! NullCompactionPicker) under `CompactRange` with `change_level`, which RocksDB 11.8.1's
//! `ldb change_compaction_style` runs (`change_level = true, target_level = 0`) on a
//! database whose OPTIONS file names the style (ldb loads it). RocksDB's
//! `CompactRangeInternal` takes its leveled path: each step from the first level holding
//! keys picks nothing, the steps end on the last non-empty level (level 1 at least), and
//! `ReFitLevel` moves that level's tables, or refuses when a level between holds tables.
//! Shale's `compact_range` does the same, and Shale's ldb now runs it as RocksDB's does
//! (it moved the tables itself, and so moved a level up past a non-empty level 0): what ldb
//! prints, the files' levels and the keys after are compared with RocksDB 11.8.1's ldb on
//! copies of databases Shale wrote, and what 11.8.1 printed is checked where it does not run.
//!
//! Opening such a family writes RocksDB's LOG warning ("Column family default does not use
//! any background compaction. Compactions can only be done via CompactFiles"), checked in
//! the LOG of each.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

use std::path::Path;

use shale::{Options, DB};

/// Writes `dir/db` with Shale: tables on the levels `shape` makes (leveled compaction, no
/// dynamic level sizes), then reopens it with kCompactionStyleNone so that its OPTIONS file
/// names the style.
fn write(dir: &Path, shape: &dyn Fn(&DB)) {
    let path = dir.join("db");
    {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        o.set_level_compaction_dynamic_level_bytes(false);
        let db = DB::open(&o, &path).unwrap();
        shape(&db);
    }
    let o = Options::default()
        .get_options_from_string(
            "compaction_style=kCompactionStyleNone;disable_auto_compactions=true;\
             level_compaction_dynamic_level_bytes=false",
        )
        .unwrap();
    drop(DB::open(&o, &path).unwrap());
}

fn put_flush(db: &DB, keys: &[&str]) {
    for k in keys {
        db.put(k, format!("v-{k}")).unwrap();
    }
    db.flush().unwrap();
}

/// RocksDB's warning line in a LOG, without its `[file:line] ` (Shale's LOG has none).
fn warning(log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains("does not use any background compaction"))?;
    let text = line.split_once("[WARN] ")?.1;
    let text = match text.strip_prefix('[') {
        Some(rest) => rest.split_once("] ")?.1,
        None => text,
    };
    Some(text.trim_end().to_string())
}

/// What puts a database's tables on their levels.
type Shape = fn(&DB);

#[test]
fn compaction_style_none_change_level_matches_ldb() {
    let oracles = oracles();
    let shapes: [(&str, Shape); 3] = [
        // Level 0 only: the steps end on level 1, which holds nothing; nothing moves.
        ("l0", |db: &DB| {
            put_flush(db, &["a", "c"]);
            put_flush(db, &["b", "d"]);
        }),
        // One table on level 1 (a manual compaction), none above: moved to level 0.
        ("l1", |db: &DB| {
            put_flush(db, &["a", "c"]);
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }),
        // Level 1 and level 0: the refit up to level 0 crosses a level holding tables.
        ("l0l1", |db: &DB| {
            put_flush(db, &["a", "c"]);
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
            put_flush(db, &["b"]);
        }),
    ];
    for (name, shape) in shapes {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &shape);
        let log = std::fs::read_to_string(d.path().join("db/LOG")).unwrap();
        let want = "Column family default does not use any background compaction. Compactions can only be \
                    done via CompactFiles";
        assert_eq!(warning(&log).as_deref(), Some(want), "{name}: Shale's LOG");
        let steps: Vec<Step<'_>> = vec![
            (&["--db=db", "list_live_files_metadata", "--sort_by_filename"], ""),
            (
                &[
                    "--db=db",
                    "change_compaction_style",
                    "--old_compaction_style=0",
                    "--new_compaction_style=1",
                ],
                "",
            ),
            (&["--db=db", "list_live_files_metadata", "--sort_by_filename"], ""),
            (&["--db=db", "scan"], ""),
        ];
        // Each shape is its own database, labelled with its name.
        let label = format!("{SHALE_DB} ({name})");
        // What 11.8.1 printed for the conversion, checked where it does not run too.
        let s = run_script(d.path(), &shale(), &["ldb"], &steps);
        let (status, out, err) = (s[1].status, s[1].stdout.as_str(), first_line(&s[1].stderr));
        match name {
            "l0" => {
                assert_eq!(status, Some(1), "{name}");
                assert_eq!(out, "files per level before compaction: 2,0,0,0,0,0,0\n", "{name}");
                assert_eq!(
                    err, "Failed: Number of db files at level 0 after compaction is 2, not 1.",
                    "{name}"
                );
            }
            "l1" => {
                assert_eq!(status, Some(0), "{name}: {err}");
                assert_eq!(
                    out,
                    "files per level before compaction: 0,1,0,0,0,0,0\nfiles per level after compaction: \
                     1,0,0,0,0,0,0\n",
                    "{name}"
                );
            }
            _ => {
                assert_eq!(status, Some(1), "{name}");
                assert_eq!(
                    err,
                    "Failed: Compaction failed: Not implemented: Levels between source and target are not \
                     empty for a move.",
                    "{name}"
                );
            }
        }
        check_script(&label, d.path(), &oracles, false, &steps, &mask_table_numbers, None);
        // RocksDB's ldb, opening a copy, writes the same warning.
        for o in oracles.iter().filter(|o| o.major == 11) {
            let c = tempfile::tempdir().unwrap();
            copy_dir(&d.path().join("db"), &c.path().join("db"));
            ok(&run_in(c.path(), &o.ldb, &[], &["--db=db", "scan"]), "ldb scan");
            let log = std::fs::read_to_string(c.path().join("db/LOG")).unwrap();
            assert_eq!(warning(&log).as_deref(), Some(want), "{name}: RocksDB's LOG");
        }
    }
}
