//! Golden: `shale ldb change_compaction_style` does what RocksDB 11.8.1's does, on
//! databases written by RocksDB and by Shale: level to universal compacts a family into one
//! table and moves it to level 0 (`files per level before/after compaction`), refuses when
//! the compaction leaves several tables (RocksDB's "Moving more than 1 file from non-L0 to
//! L0" abort), and its argument errors. The keys are compared with `scan` afterwards.
//!
//! The databases are written with `--auto_compaction=false` (ldb's option), so that their
//! tables do not depend on whether an automatic level-0 compaction finished before a short
//! `ldb` open closed. One step takes no such option (`create_column_family`): there the
//! open of the database Shale writes (which turns the WAL into a fourth level-0 table)
//! starts a compaction that the close may cancel, so its table numbers vary from run to run
//! (cf1's table is 000021 or 000019); its levels and contents do not.
//!
//! What legitimately differs: the table numbers (each engine numbers its own outputs, and
//! Shale's vary as said), replaced by `N` in the live file listings, also when 11.8.1's
//! outputs are checked against their recording.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn change_compaction_style_matches_ldb() {
    let oracles = oracles();
    let mut rec = Recording::open("ldb_change_compaction_style_golden", &oracles);
    // Automatic compactions off while the databases are written (see above).
    for (label, db) in databases_with(&oracles, &["--auto_compaction=false"]) {
        let convert = |cf: &'static str| -> Vec<&'static str> {
            vec![
                "--db=db",
                cf,
                "change_compaction_style",
                "--old_compaction_style=0",
                "--new_compaction_style=1",
            ]
        };
        let cf1 = convert("--column_family=cf1");
        let default = convert("--column_family=default");
        // cf1 holds one table: converted; then the default family, whose compaction leaves
        // several tables in these databases: refused.
        let steps: Vec<Step<'_>> = vec![
            (&cf1, ""),
            (&["--db=db", "list_live_files_metadata", "--sort_by_filename"], ""),
            (&["--db=db", "--column_family=cf1", "scan"], ""),
            (&default, ""),
            (&["--db=db", "scan"], ""),
        ];
        check_script(
            &label,
            db.path(),
            &oracles,
            false,
            &steps,
            &mask_table_numbers_and_order,
            Some(&mut rec),
        );
        for args in [
            &["--db=db", "change_compaction_style"][..],
            &["--db=db", "change_compaction_style", "--old_compaction_style=0"],
            &["--db=db", "change_compaction_style", "--old_compaction_style=x", "--new_compaction_style=1"],
            &["--db=db", "change_compaction_style", "--old_compaction_style=1", "--new_compaction_style=1"],
            &["--db=db", "change_compaction_style", "--old_compaction_style=1", "--new_compaction_style=0"],
            &["--db=db", "change_compaction_style", "--old_compaction_style=0", "--new_compaction_style=2"],
            &["--db=nodb", "change_compaction_style", "--old_compaction_style=0", "--new_compaction_style=1"],
        ] {
            check("ldb", &label, db.path(), &oracles, &only11(args), &exact, Some(&mut rec));
        }
    }
}
