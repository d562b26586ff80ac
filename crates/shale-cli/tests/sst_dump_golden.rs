//! Golden: `shale sst_dump` prints what `sst_dump` prints for check, scan, verify, identify
//! and --show_properties, on a file and on a directory. One difference is normalised: the
//! first line, `options.env is 0x<address>`, where RocksDB prints its Env object's address
//! (Shale has none and prints 0x0).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;

fn normalise(s: &str) -> String {
    s.lines()
        .map(|l| if l.starts_with("options.env is 0x") { "options.env is <address>" } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn sst_dump_matches_sst_dump() {
    let oracles = oracles();
    for (label, db) in databases(&oracles) {
        let tables = files_with(db.path(), ".sst");
        assert!(!tables.is_empty());
        for o in &oracles {
            for t in &tables {
                let f = format!("--file=db/{t}");
                for args in [
                    &[f.as_str()][..],
                    &[f.as_str(), "--command=check"],
                    &[f.as_str(), "--command=scan"],
                    &[f.as_str(), "--command=scan", "--output_hex"],
                    &[f.as_str(), "--command=scan", "--from=c", "--to=e"],
                    &[f.as_str(), "--command=scan", "--read_num=1"],
                    &[f.as_str(), "--command=scan", "--input_key_hex", "--from=0x64"],
                    &[f.as_str(), "--command=verify"],
                    &[f.as_str(), "--command=identify"],
                    &[f.as_str(), "--command=scan", "--show_properties"],
                    &[f.as_str(), "--show_summary"],
                ] {
                    same_sst_dump(&label, db.path(), o, args, &normalise);
                }
            }
            for args in [
                &["--file=db", "--command=identify"][..],
                &["--file=db", "--command=scan", "--show_properties"],
            ] {
                same_sst_dump(&label, db.path(), o, args, &normalise);
            }
        }
    }
}
