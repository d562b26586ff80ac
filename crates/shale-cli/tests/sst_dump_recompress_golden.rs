//! Golden: `shale sst_dump --command=recompress` prints RocksDB 11.8.1's table of sizes per
//! compression type and level (`--compression_types`, `--set_block_size`/`--block_size`,
//! `--compression_level_from/_to`, `--compression_level`), and its errors (an unknown
//! type; one unsupported: Xpress; a level range given by one end).
//!
//! What legitimately differs, normalised in both outputs:
//! - `options.env is 0x...` (an object address in RocksDB);
//! - `Write usec` and `Read usec` (timings);
//! - for a compressing codec, `Cx size` and `Ratio`: some of Shale's codecs are other
//!   libraries than RocksDB's (flate2, lz4_flex for LZ4, snap) and may compress a block to a
//!   few bytes more or less; Shale's size must be within 10% (or 8 bytes) of RocksDB's.
//!   LZ4HC is liblz4's LZ4_compress_HC, as RocksDB's: on 000013.sst it matches 11.8.1 to the
//!   byte (445 and 853 bytes; it was LZ4's 464 and 868 before), but a 40-byte block (000019)
//!   11.8.1 reports as 40 (kept raw) where Shale reports 45, so the tolerance stays. The uncompressed size, the block counts and every size without compression
//!   are compared exactly.
//!
//! Judged live by 11.8.1 on the fixtures of `tests/golden/sst/` (written by 11.8.1) and
//! the golden databases; the normalised output on the fixtures is recorded in
//! `tests/golden/sst/recompress-expected.txt` for CI (re-record:
//! `SHALE_ROCKSDB_11_BIN=... SHALE_GOLDEN_RECORD=1 cargo test -p shale-cli --test
//! sst_dump_recompress_golden`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod golden;
use golden::*;
use std::path::Path;

/// The value after `name` in a result line (the token that follows, spaces skipped).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let i = line.find(name)? + name.len();
    line[i..].split_whitespace().next()
}

/// Replaces the value of `name` (right-aligned in a column: its padding too) by ` *`.
fn mask(line: &str, name: &str) -> String {
    let Some(i) = line.find(name).map(|i| i + name.len()) else { return line.to_string() };
    let rest = &line[i..];
    let start = rest.len() - rest.trim_start().len();
    let end = start + rest[start..].find(' ').unwrap_or(rest.len() - start);
    format!("{} *{}", &line[..i], &rest[end..])
}

/// The normalised text, and the compressed sizes masked out of it (per line).
fn normalise(s: &str) -> (String, Vec<u64>) {
    let mut sizes = Vec::new();
    let mut compressing = false;
    let mut out = Vec::new();
    for l in s.lines() {
        if l.starts_with("options.env is 0x") {
            out.push("options.env is <address>".to_string());
            continue;
        }
        if l.starts_with("Compression: ") {
            compressing = !l.starts_with("Compression: kNoCompression ");
        }
        let mut l = mask(&mask(l, "Write usec:"), "Read usec:");
        if l.starts_with("Cx level:") && compressing {
            sizes.push(field(&l, "Cx size:").and_then(|v| v.parse().ok()).unwrap_or(0));
            l = mask(&mask(&l, "Cx size:"), "Ratio:");
        }
        out.push(l);
    }
    (out.join("\n"), sizes)
}

fn compare(what: &str, r: &Printed, s: &Printed) {
    assert_eq!(r.status, s.status, "exit status of {what}: {} / {}", r.stderr, s.stderr);
    let (rn, rs) = normalise(&r.stdout);
    let (sn, ss) = normalise(&s.stdout);
    assert_eq!(rn, sn, "stdout of {what}");
    for (a, b) in rs.iter().zip(&ss) {
        assert!(
            (*a as f64 - *b as f64).abs() <= (*a as f64 * 0.10).max(8.0),
            "{what}: compressed size {b} is not within 10% of RocksDB's {a}"
        );
    }
    assert_eq!(first_line(&r.stderr), first_line(&s.stderr), "stderr of {what}");
}

const CASES: &[&[&str]] = &[
    &["--command=recompress"],
    &["--command=recompress", "--set_block_size=512"],
    &[
        "--command=recompress",
        "--block_size=1024",
        "--compression_types=kZSTD,kNoCompression,kLZ4Compression",
    ],
    &[
        "--command=recompress",
        "--compression_types=kSnappyCompression",
        "--compression_level_from=1",
        "--compression_level_to=3",
    ],
    &["--command=recompress", "--compression_types=kZlibCompression", "--compression_level=9"],
    &["--command=recompress", "--compression_types=kXpressCompression,kNoCompression"],
    &["--command=recompress", "--compression_types=kBogus"],
    &["--command=recompress", "--compression_level_from=1"],
    &["--command=recompress", "--set_block_size=x"],
];

#[test]
fn recompress_matches_sst_dump_on_the_fixtures() {
    let oracles = oracles();
    let o11 = oracles.iter().find(|o| o.major == 11);
    let record = o11.is_some() && std::env::var_os("SHALE_GOLDEN_RECORD").is_some();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/sst");
    let src = tempfile::tempdir().unwrap();
    copy_dir(&root, &src.path().join("db"));
    let expected_path = root.join("recompress-expected.txt");
    let mut recorded = String::new();
    let mut shale_text = String::new();
    for table in ["000013.sst", "000025.sst"] {
        let f = format!("--file=db/{table}");
        for case in CASES {
            let mut args = vec![f.as_str()];
            args.extend_from_slice(case);
            let (r, s) = match o11 {
                Some(o) => {
                    let (r, s) = run_both(src.path(), &o.sst_dump, "sst_dump", &args);
                    (Some(r), s)
                }
                None => {
                    let o = run_in(src.path(), &shale(), &["sst_dump"], &args);
                    let p = Printed {
                        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
                        status: o.status.code(),
                        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
                    };
                    (None, p)
                }
            };
            let body = |p: &Printed| {
                format!(
                    "### sst_dump {}\nexit {:?}\nstderr {:?}\n{}\n",
                    args.join(" "),
                    p.status,
                    first_line(&p.stderr),
                    normalise(&p.stdout).0
                )
            };
            if let Some(r) = &r {
                compare(&format!("sst_dump {args:?}"), r, &s);
                recorded.push_str(&body(r));
            }
            shale_text.push_str(&body(&s));
        }
    }
    check_recording(&expected_path, record, o11.is_some(), &recorded, &shale_text);
}

#[test]
fn recompress_matches_sst_dump_on_the_golden_databases() {
    let oracles = oracles();
    let Some(o11) = oracles.iter().find(|o| o.major == 11) else {
        println!("no RocksDB 11.8.1: the fixtures test checks the recorded output");
        return;
    };
    for (label, db) in databases(&oracles) {
        for t in files_with(db.path(), ".sst") {
            let f = format!("--file=db/{t}");
            // The codecs whose library is RocksDB's too (libzstd, libbz2): on these tables'
            // tiny blocks another LZ4, Snappy or deflate may land on the other side of the
            // 7/8 size limit and change the block counts (the fixtures' blocks do not).
            let args = [
                f.as_str(),
                "--command=recompress",
                "--compression_types=kNoCompression,kZSTD,kBZip2Compression",
            ];
            let (r, s) = run_both(db.path(), &o11.sst_dump, "sst_dump", &args);
            compare(&format!("sst_dump {args:?} on a database {label}"), &r, &s);
        }
    }
}
