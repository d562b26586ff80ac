//! Shared by the remote compaction goldens (`ldb_remote_compaction_primary_golden.rs`,
//! `ldb_remote_compaction_worker_golden.rs`): the database they compact, the primary and
//! worker run as a pair, and the shape of the tree afterwards.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::{ok, run_in, shale, Printed};

/// Writes the database in `dir/db` with `ldb` (`pre`: its leading arguments), automatic
/// compactions off, so the tree is the same whichever tool wrote it.
pub fn write(dir: &Path, ldb: &Path, pre: &[&str]) {
    let steps: &[&[&str]] = &[
        &["--db=db", "--create_if_missing", "put", "a", "1"],
        &["--db=db", "batchput", "b", "2", "c", "3", "d", "x"],
        &["--db=db", "put", "a", "4"],
        &["--db=db", "delete", "c"],
        &["--db=db", "put", "e", "5"],
    ];
    for s in steps {
        let mut args = s.to_vec();
        args.push("--auto_compaction=false");
        ok(&run_in(dir, ldb, pre, &args), &format!("{} {args:?}", ldb.display()));
    }
}

fn printed(o: Output) -> Printed {
    Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Starts the primary (program and leading arguments), runs the worker to its end, then
/// waits for the primary, in `dir` on `db` with `job`; returns (primary's, worker's) output.
/// The primary polls for the worker's result file, so nothing here sleeps.
pub fn pair(dir: &Path, primary: (&Path, &[&str]), worker: (&Path, &[&str])) -> (Printed, Printed) {
    std::fs::create_dir(dir.join("job")).unwrap();
    let p = Command::new(primary.0)
        .current_dir(dir)
        .args(primary.1)
        .args(["--db=db", "remote_compaction_primary", "--job_dir=job"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let w = run_in(dir, worker.0, worker.1, &["--db=db", "remote_compaction_worker", "--job_dir=job"]);
    (printed(p.wait_with_output().unwrap()), printed(w))
}

/// The worker's line with its result's size masked (RocksDB's and Shale's result files
/// serialise the same fields, but not to the same length).
pub fn mask_result_size(s: &str) -> String {
    match s.find(" (") {
        Some(i) if s.starts_with("remote_compaction_worker: OK") => format!("{} (N bytes result)\n", &s[..i]),
        _ => s.to_string(),
    }
}

/// The live tables per level ("L6: 1"), from `manifest_dump` of `ldb` (None: Shale's).
pub fn shape(dir: &Path, ldb: Option<&Path>) -> Vec<String> {
    let o = match ldb {
        Some(ldb) => run_in(dir, ldb, &[], &["--db=db", "manifest_dump"]),
        None => run_in(dir, &shale(), &["ldb"], &["--db=db", "manifest_dump"]),
    };
    ok(&o, "manifest_dump");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut out = Vec::new();
    let mut level: Option<String> = None;
    let mut count = 0;
    let close = |level: &mut Option<String>, count: &mut usize, out: &mut Vec<String>| {
        if let Some(l) = level.take() {
            if *count > 0 {
                out.push(format!("L{l}: {count}"));
            }
        }
        *count = 0;
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--- level ") {
            close(&mut level, &mut count, &mut out);
            level = rest.split(' ').next().map(str::to_string);
        } else if level.is_some() && line.starts_with(' ') && line.contains(':') {
            count += 1;
        } else if level.is_some() {
            close(&mut level, &mut count, &mut out);
        }
    }
    close(&mut level, &mut count, &mut out);
    out
}
