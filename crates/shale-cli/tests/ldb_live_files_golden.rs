//! Golden: `shale ldb dump_live_files` and `list_live_files_metadata` print what ldb prints.
//! Both open the database first (the databases keep nothing only in their WAL, so both
//! engines' opens leave the same tables). Normalised in dump_live_files, because the two
//! engines' opens differ there: the new MANIFEST's number and the new WAL's (the
//! `db/MANIFEST-` line, the `log number:` lines, `next_file_number ... min_log_number_to_keep`),
//! and the WAL list (RocksDB 7.8.3 deletes the empty WAL it recovered; Shale keeps a new
//! empty one): everything after `Write Ahead Log Files`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

#[test]
fn live_files_match_ldb() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        for o in &oracles {
            for args in [
                &["--db=db", "list_live_files_metadata"][..],
                &["--db=db", "list_live_files_metadata", "--sort_by_filename"],
                &["--db=db", "dump_live_files"],
            ] {
                let n = if args.contains(&"dump_live_files") { normalise } else { exact };
                same_ldb(&label, db.path(), o, args, &n);
            }
        }
    }
}

fn normalise(s: &str) -> String {
    let head = s.split("Write Ahead Log Files").next().unwrap_or("");
    head.lines()
        .map(|l| {
            if l.starts_with("db/MANIFEST-") {
                "db/MANIFEST-<number>"
            } else if l.starts_with("log number: ") {
                "log number: <number>"
            } else if l.starts_with("next_file_number ") {
                "next_file_number <numbers>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
