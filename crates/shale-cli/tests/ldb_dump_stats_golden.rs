//! Golden: `shale ldb dump --stats` prints, as RocksDB 11.8.1's `ldb dump --stats`, the
//! default family's `rocksdb.stats` text, an empty line, then the dump. The dump part is
//! compared byte for byte; in the stats part every digit is masked (uptimes, rates and
//! times differ from run to run), so its lines, their order and their words are compared.
//! Only 11.8.1 judges (7.8.3's stats text has other lines).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

/// (stats part with digits masked, dump part) split at the last stats line.
fn split(s: &str) -> (String, String) {
    let marker = "Write Stall (count): write-buffer-manager-limit-stops:";
    let cut = s.rfind(marker).and_then(|i| s[i..].find('\n').map(|j| i + j + 1)).unwrap_or(0);
    let stats: String = s[..cut].chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect();
    (stats, s[cut..].to_string())
}

#[test]
fn dump_stats_matches_ldb() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1 here: nothing to compare with");
        return;
    };
    for (label, db) in databases(&oracles) {
        for args in [
            &["--db=db", "dump", "--stats"][..],
            &["--db=db", "dump", "--stats", "--max_keys=2", "--hex"],
            &["--db=db", "--column_family=cf1", "dump", "--stats"],
        ] {
            let (r, s) = run_both(db.path(), &o11.ldb, "ldb", args);
            assert_eq!(r.status, s.status, "exit status of ldb {args:?} on a database {label}");
            let (rs, rd) = split(&r.stdout);
            let (ss, sd) = split(&s.stdout);
            assert!(rs.contains("** Compaction Stats [default] **"), "{}", r.stdout);
            assert_eq!(rd, sd, "the dump after the stats, ldb {args:?} on a database {label}");
            assert_eq!(rs, ss, "the stats text (digits masked), ldb {args:?} on a database {label}");
        }
    }
}
