//! Shared by the golden tests: run RocksDB's `ldb`/`sst_dump` (the oracles) and `shale ldb`
//! / `shale sst_dump` on identical copies of a database, at the same relative path (`db`),
//! and compare what they print.
//!
//! Which tool is right: RocksDB 11.8.1 (the version rust-rocksdb 0.25 bundles). Its tools
//! are found at `$SHALE_ROCKSDB_11_BIN` (the KV interop tests' variable; on the lead's
//! machine `/work/rocksdb-src/bin`) or `../shared/tools/rocksdb-11.8.1/bin/` beside the
//! checkout; a build that does not run here (the shared one dies with SIGILL) is skipped
//! with the reason printed. Every case is compared with 11.8.1 whenever it runs.
//!
//! Debian's RocksDB 7.8.3 (`apt-get install rocksdb-tools`, what CI has) judges only the
//! cases marked [`Case::v7`]: those where 7.8.3 prints what 11.8.1 prints. Where they differ
//! 11.8.1 wins (e.g. `get` of a missing key prints `Key not found` and succeeds in 11.8.1,
//! fails in 7.8.3; `scan` prints `key ==> value`, 7.8.3 `key : value`; manifest_dump's
//! per-family note and 11.x edit fields; sst_dump's 11.x properties). When both oracles
//! run, a case marked `v7` is checked against both, so a wrong mark fails. 7.8.3 is not run
//! on databases 11.8.1 or Shale wrote (it cannot open them: their OPTIONS file is newer, their
//! tables are format_version 7, the default of RocksDB 11 and Shale).
//!
//! So that CI (no 11.8.1) still checks the 11.8.1-only behaviour, the tests whose output on
//! the database Shale writes is deterministic keep 11.8.1's output for it in
//! `tests/golden/expected/<test>.txt`: facts produced by running 11.8.1, recorded with
//!
//! ```text
//! SHALE_ROCKSDB_11_BIN=/work/rocksdb-src/bin SHALE_GOLDEN_RECORD=1 cargo test -p shale-cli --test <test>
//! ```
//!
//! Without 11.8.1, Shale's output on that database is compared with the recording; with
//! it, the recording is compared with 11.8.1's live output too (a stale one fails, naming
//! the command above). Outputs that depend on the machine or the moment (file sizes carry
//! the host name and times in their properties; MANIFEST edits carry times and ids) are not
//! recorded.

#![allow(dead_code)]

pub mod remote;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Oracle {
    pub name: &'static str,
    /// RocksDB's major version: 11 or 7.
    pub major: u32,
    pub ldb: PathBuf,
    pub sst_dump: PathBuf,
}

/// One command line compared, and whether RocksDB 7.8.3 prints what 11.8.1 prints for it.
#[derive(Clone, Copy)]
pub struct Case<'a> {
    pub args: &'a [&'a str],
    pub v7: bool,
}

/// A case 7.8.3 and 11.8.1 agree on.
pub fn both<'a>(args: &'a [&'a str]) -> Case<'a> {
    Case { args, v7: true }
}

/// A case only 11.8.1 judges.
pub fn only11<'a>(args: &'a [&'a str]) -> Case<'a> {
    Case { args, v7: false }
}

fn runs(tool: &Path) -> Result<(), String> {
    match Command::new(tool).arg("--version").output() {
        Err(e) => Err(format!("{}: {e}", tool.display())),
        Ok(o) => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = o.status.signal() {
                    return Err(format!(
                        "{} died with signal {sig} (built for another processor?)",
                        tool.display()
                    ));
                }
            }
            let _ = o;
            Ok(())
        }
    }
}

/// The oracles that run here; prints why each missing one is skipped.
pub fn oracles() -> Vec<Oracle> {
    let mut v = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    // `$SHALE_ROCKSDB_11_BIN` names another 11.8.1 build (as for the KV engine's interop tests).
    let bin = std::env::var_os("SHALE_ROCKSDB_11_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("shared/tools/rocksdb-11.8.1/bin"));
    let o11 =
        Oracle { name: "RocksDB 11.8.1", major: 11, ldb: bin.join("ldb"), sst_dump: bin.join("sst_dump") };
    match runs(&o11.ldb).and_then(|()| runs(&o11.sst_dump)) {
        Ok(()) => v.push(o11),
        // `.ci/run` sets SHALE_REQUIRE_ROCKSDB_11 where the 11.8.1 build runs.
        Err(e) if std::env::var_os("SHALE_REQUIRE_ROCKSDB_11").is_some() => {
            panic!("SHALE_REQUIRE_ROCKSDB_11 is set but the RocksDB 11.8.1 oracle does not run: {e}")
        }
        Err(e) => println!("skipping the RocksDB 11.8.1 oracle: {e}"),
    }
    let o7 =
        Oracle { name: "RocksDB 7.8.3 (Debian)", major: 7, ldb: "ldb".into(), sst_dump: "sst_dump".into() };
    match runs(&o7.ldb).and_then(|()| runs(&o7.sst_dump)) {
        Ok(()) => v.push(o7),
        // Under CI (or SHALE_REQUIRE_ORACLE) a missing oracle fails (`shale_base::oracle`).
        Err(e) if shale_base::oracle::required() => {
            panic!(
                "{} ({e})",
                shale_base::oracle::missing_message("golden oracles", &["ldb".into(), "sst_dump".into()])
            )
        }
        Err(e) => println!("skipping the RocksDB 7.8.3 oracle (apt-get install rocksdb-tools): {e}"),
    }
    v
}

pub fn shale() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_shale"))
}

/// Runs `prog args` in `cwd`.
pub fn run_in(cwd: &Path, prog: &Path, pre: &[&str], args: &[&str]) -> Output {
    Command::new(prog).current_dir(cwd).args(pre).args(args).output().expect("run tool")
}

pub fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Writes a database with `ldb` (an oracle's, or `shale ldb`) in `dir/db`: two column
/// families, puts, a batch, deletes, a range deletion, a compaction, then more writes
/// flushed by a second compaction, so that nothing is left only in the WAL (opening a
/// database flushes recovered WAL data in Shale but not in RocksDB 7.8.3, which would
/// change the file lists compared). No key or value holds a NUL byte: ldb prints text
/// output through C strings, which end there, where Shale prints every byte.
pub fn write_db(dir: &Path, ldb: &Path, pre: &[&str]) {
    write_db_with(dir, ldb, pre, &[])
}

/// [`write_db`] with `extra` ldb options on every step that takes them (all but
/// create_column_family, which takes `--db` only).
pub fn write_db_with(dir: &Path, ldb: &Path, pre: &[&str], extra: &[&str]) {
    let steps: &[&[&str]] = &[
        &["--db=db", "--create_if_missing", "put", "a", "1"],
        &["--db=db", "put", "b", "2"],
        &["--db=db", "batchput", "c", "3", "d", "4", "k\u{1}", "bin"],
        &["--db=db", "delete", "a"],
        &["--db=db", "create_column_family", "cf1"],
        &["--db=db", "--column_family=cf1", "put", "x", "y"],
        &["--db=db", "compact"],
        &["--db=db", "put", "e", "5"],
        &["--db=db", "put", "--hex", "0x0102", "0xFF01"],
        &["--db=db", "singledelete", "zz"],
        &["--db=db", "deleterange", "b", "c"],
        &["--db=db", "compact", "--from=a", "--to=b"],
        &["--db=db", "--column_family=cf1", "compact"],
    ];
    for s in steps {
        let mut args: Vec<&str> = s.to_vec();
        if !s.contains(&"create_column_family") {
            args.extend_from_slice(extra);
        }
        ok(&run_in(dir, ldb, pre, &args), &format!("{} {args:?}", ldb.display()));
    }
}

/// The databases every golden test runs on: written by each oracle and by Shale.
/// Returns (label, tempdir holding `db`).
pub fn databases(oracles: &[Oracle]) -> Vec<(String, tempfile::TempDir)> {
    databases_with(oracles, &[])
}

/// [`databases`], with `extra` (ldb options, e.g. `--auto_compaction=false`) given to every
/// command that writes them.
pub fn databases_with(oracles: &[Oracle], extra: &[&str]) -> Vec<(String, tempfile::TempDir)> {
    let mut v = Vec::new();
    for o in oracles {
        let d = tempfile::tempdir().unwrap();
        write_db_with(d.path(), &o.ldb, &[], extra);
        v.push((format!("written by {}", o.name), d));
    }
    let d = tempfile::tempdir().unwrap();
    write_db_with(d.path(), &shale(), &["ldb"], extra);
    v.push((SHALE_DB.to_string(), d));
    v
}

/// What a tool printed, after `normalise`.
pub struct Printed {
    pub stdout: String,
    pub status: Option<i32>,
    pub stderr: String,
}

/// Runs the oracle's tool and Shale's on fresh copies of `src/db` at the same relative
/// path; returns both outputs.
pub fn run_both(src: &Path, oracle: &Path, shale_sub: &str, args: &[&str]) -> (Printed, Printed) {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    copy_dir(&src.join("db"), &a.path().join("db"));
    copy_dir(&src.join("db"), &b.path().join("db"));
    let oa = run_in(a.path(), oracle, &[], args);
    let ob = run_in(b.path(), &shale(), &[shale_sub], args);
    let p = |o: &Output| Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    (p(&oa), p(&ob))
}

/// Asserts `shale ldb args` prints what `ldb args` prints, after `normalise` on both.
pub fn same_ldb(label: &str, src: &Path, o: &Oracle, args: &[&str], normalise: &dyn Fn(&str) -> String) {
    let (r, s) = run_both(src, &o.ldb, "ldb", args);
    assert_eq!(r.status, s.status, "exit status of {args:?} on a database {label}, oracle {}", o.name);
    assert_eq!(
        normalise(&r.stdout),
        normalise(&s.stdout),
        "output of ldb {args:?} on a database {label}, oracle {}",
        o.name
    );
}

/// Asserts `shale sst_dump args` prints what `sst_dump args` prints, after `normalise`.
pub fn same_sst_dump(label: &str, src: &Path, o: &Oracle, args: &[&str], normalise: &dyn Fn(&str) -> String) {
    let (r, s) = run_both(src, &o.sst_dump, "sst_dump", args);
    assert_eq!(
        r.status, s.status,
        "exit status of sst_dump {args:?} on a database {label}, oracle {}",
        o.name
    );
    assert_eq!(
        normalise(&r.stdout),
        normalise(&s.stdout),
        "output of sst_dump {args:?} on a database {label}, oracle {}",
        o.name
    );
}

/// No normalisation: byte-identical output.
pub fn exact(s: &str) -> String {
    s.to_string()
}

/// Files of `db` with the given suffix, sorted.
pub fn files_with(src: &Path, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(src.join("db"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// The oracles that judge `case` on a database with `label`: 11.8.1 always; 7.8.3 for the
/// cases marked `v7`, on databases 7.8.3 wrote. Databases written by 11.8.1 or by Shale
/// (`shale ldb`) hold format_version 7 tables, the default of both, which 7.8.3 cannot read
/// (the KV interop tests check that 7.8.3 reads Shale's format 5 tables).
pub fn judges<'a>(oracles: &'a [Oracle], label: &str, case: &Case<'_>) -> Vec<&'a Oracle> {
    let v7_reads = !label.contains("11.8.1") && !label.contains("Shale");
    oracles.iter().filter(|o| o.major == 11 || (case.v7 && v7_reads)).collect()
}

/// The label of the database Shale writes (the one recordings are made on).
pub const SHALE_DB: &str = "written by Shale";

/// 11.8.1's recorded outputs for one test, on the database Shale writes.
pub struct Recording {
    path: PathBuf,
    recorded: std::collections::BTreeMap<String, String>,
    fresh: std::collections::BTreeMap<String, String>,
    record: bool,
    live: bool,
}

impl Recording {
    /// Opens `tests/golden/expected/<test>.txt`; `oracles` tells whether 11.8.1 runs here.
    pub fn open(test: &str, oracles: &[Oracle]) -> Recording {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/expected/{test}.txt"));
        let mut recorded = std::collections::BTreeMap::new();
        if let Ok(text) = std::fs::read_to_string(&path) {
            for section in text.split("\n### ").skip(1) {
                if let Some((key, body)) = section.split_once('\n') {
                    recorded.insert(key.to_string(), body.trim_end_matches('\n').to_string());
                }
            }
        }
        let live = oracles.iter().any(|o| o.major == 11);
        let record = live && std::env::var_os("SHALE_GOLDEN_RECORD").is_some();
        Recording { path, recorded, fresh: Default::default(), record, live }
    }

    fn key(tool: &str, args: &[&str]) -> String {
        format!("{tool} {}", args.join(" ").replace('\n', "\\n"))
    }

    fn body(p: &Printed) -> String {
        format!("exit {:?}\nstderr {:?}\n{}\n###end", p.status, first_line(&p.stderr), p.stdout)
    }

    /// With 11.8.1: keeps its output (`printed`) for `args` and checks any recording
    /// agrees. Without: checks Shale's output (`shale`) against the recording.
    /// Both sides go through `normalise` (the test's, e.g. masking the table numbers each
    /// engine gives its own compaction outputs): the numbers of the database Shale writes
    /// also vary from run to run (its `create_column_family` step, which takes no
    /// `--auto_compaction`, may or may not get through an automatic compaction before it
    /// closes), so a recording is stale only when more than what `normalise` masks differs.
    pub fn check(
        &mut self,
        tool: &str,
        args: &[&str],
        oracle11: Option<&Printed>,
        shale: &Printed,
        normalise: &dyn Fn(&str) -> String,
    ) {
        let key = Self::key(tool, args);
        match oracle11 {
            Some(p) => {
                let body = Self::body(p);
                if !self.record {
                    if let Some(r) = self.recorded.get(&key) {
                        assert_eq!(
                            normalise(r),
                            normalise(&body),
                            "the recording {} of `{key}` is stale: re-record with SHALE_ROCKSDB_11_BIN=... \
                             SHALE_GOLDEN_RECORD=1 cargo test -p shale-cli --test <test>",
                            self.path.display()
                        );
                    }
                }
                self.fresh.insert(key, body);
            }
            None => {
                if let Some(r) = self.recorded.get(&key) {
                    assert_eq!(
                        normalise(r),
                        normalise(&Self::body(shale)),
                        "`{key}` on the database Shale writes, against 11.8.1's recording"
                    );
                }
            }
        }
    }

    /// How many recorded cases there are.
    pub fn len(&self) -> usize {
        self.recorded.len()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if self.record && !std::thread::panicking() && self.live {
            let mut text = String::from(
                "RocksDB 11.8.1's output on the database Shale writes (tests/golden/mod.rs, write_db), recorded by\n\
                 SHALE_ROCKSDB_11_BIN=/work/rocksdb-src/bin SHALE_GOLDEN_RECORD=1 cargo test -p shale-cli --test <test>\n",
            );
            for (k, v) in &self.fresh {
                text.push_str(&format!("\n### {k}\n{v}"));
            }
            text.push('\n');
            std::fs::create_dir_all(self.path.parent().unwrap()).unwrap();
            std::fs::write(&self.path, text).unwrap();
        }
    }
}

/// The first line of what a tool printed on stderr (ldb follows some errors with its help
/// text, which differs: Shale's lists its own commands).
pub fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// One case as the entity and TTL goldens record it: the ldb command, its exit status, the
/// first line of its stderr and all of its stdout.
pub fn case_text(args: &[&str], p: &Printed) -> String {
    format!(
        "### ldb {}\nexit {:?}\nstderr {:?}\n{}",
        args.join(" "),
        p.status,
        first_line(&p.stderr),
        p.stdout
    )
}

fn assert_same(
    what: &str,
    label: &str,
    o: &Oracle,
    r: &Printed,
    s: &Printed,
    normalise: &dyn Fn(&str) -> String,
) {
    assert_eq!(r.status, s.status, "exit status of {what} on a database {label}, oracle {}", o.name);
    assert_eq!(
        normalise(&r.stdout),
        normalise(&s.stdout),
        "output of {what} on a database {label}, oracle {}",
        o.name
    );
    assert_eq!(
        first_line(&r.stderr),
        first_line(&s.stderr),
        "first line of stderr of {what} on a database {label}, oracle {}",
        o.name
    );
}

/// Runs `case` (an ldb or sst_dump command line, `tool` naming which) on a copy of
/// `src/db` with each judge and with Shale, and asserts they print the same (exit status,
/// stdout after `normalise`, first line of stderr). On the database Shale writes, feeds
/// `rec` when given.
pub fn check(
    tool: &str,
    label: &str,
    src: &Path,
    oracles: &[Oracle],
    case: &Case<'_>,
    normalise: &dyn Fn(&str) -> String,
    rec: Option<&mut Recording>,
) {
    let mut o11: Option<Printed> = None;
    let mut shale_out: Option<Printed> = None;
    for o in judges(oracles, label, case) {
        let prog = if tool == "ldb" { &o.ldb } else { &o.sst_dump };
        let (r, s) = run_both(src, prog, tool, case.args);
        assert_same(&format!("{tool} {:?}", case.args), label, o, &r, &s, normalise);
        if o.major == 11 {
            o11 = Some(r);
        }
        shale_out = Some(s);
    }
    if let Some(rec) = rec {
        if label == SHALE_DB {
            let s = match shale_out {
                Some(s) => s,
                None => {
                    let d = tempfile::tempdir().unwrap();
                    copy_dir(&src.join("db"), &d.path().join("db"));
                    let o = run_in(d.path(), &shale(), &[tool], case.args);
                    Printed {
                        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
                        status: o.status.code(),
                        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
                    }
                }
            };
            rec.check(tool, case.args, o11.as_ref(), &s, normalise);
        }
    }
}

/// One step of a script: an ldb command line and what it reads on stdin.
pub type Step<'a> = (&'a [&'a str], &'a str);

fn printed(o: &Output) -> Printed {
    Printed {
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        status: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs `prog pre args` in `cwd` with `stdin` on its standard input.
pub fn run_with_stdin(cwd: &Path, prog: &Path, pre: &[&str], args: &[&str], stdin: &str) -> Printed {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(prog)
        .current_dir(cwd)
        .args(pre)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tool");
    let mut input = child.stdin.take().unwrap();
    // A command that fails before reading its input closes the pipe: not a test failure.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    printed(&child.wait_with_output().unwrap())
}

/// Runs the steps one after the other on one copy of `src/db`.
pub fn run_script(src: &Path, prog: &Path, pre: &[&str], steps: &[Step<'_>]) -> Vec<Printed> {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&src.join("db"), &d.path().join("db"));
    steps.iter().map(|(args, stdin)| run_with_stdin(d.path(), prog, pre, args, stdin)).collect()
}

/// The recording key of a step: its arguments, then what it read on stdin.
pub fn step_key<'a>(args: &[&'a str], stdin: &'a str) -> Vec<&'a str> {
    let mut v: Vec<&str> = args.to_vec();
    if !stdin.is_empty() {
        v.push("<<<");
        v.push(stdin);
    }
    v
}

/// Runs `steps` (ldb command lines, each with its stdin) on a copy of `src/db` with each
/// judge (7.8.3 when `v7`) and with `shale ldb`, and asserts every step prints the same
/// (exit status, stdout after `normalise`, first line of stderr). On the database Shale
/// writes, feeds `rec` with every step.
#[allow(clippy::too_many_arguments)]
pub fn check_script(
    label: &str,
    src: &Path,
    oracles: &[Oracle],
    v7: bool,
    steps: &[Step<'_>],
    normalise: &dyn Fn(&str) -> String,
    rec: Option<&mut Recording>,
) {
    let case = Case { args: &[], v7 };
    let mut o11: Option<Vec<Printed>> = None;
    let mut shale_out: Option<Vec<Printed>> = None;
    for o in judges(oracles, label, &case) {
        let r = run_script(src, &o.ldb, &[], steps);
        let s = run_script(src, &shale(), &["ldb"], steps);
        for ((step, r), s) in steps.iter().zip(&r).zip(&s) {
            assert_same(&format!("ldb {:?} <<< {:?}", step.0, step.1), label, o, r, s, normalise);
        }
        if o.major == 11 {
            o11 = Some(r);
        }
        shale_out = Some(s);
    }
    if let Some(rec) = rec {
        if label == SHALE_DB {
            let s = shale_out.unwrap_or_else(|| run_script(src, &shale(), &["ldb"], steps));
            // Later steps are keyed after the script's first step too, as the same command
            // (a scan) follows several scripts.
            // A step repeated in the script (a listing before and after a change) is keyed
            // with its occurrence (`#2`, ...), so each occurrence keeps its own recording.
            let first = steps.first().map(|(a, i)| step_key(a, i)).unwrap_or_default();
            let mut seen: Vec<Vec<&str>> = Vec::new();
            let nth: Vec<String> = (0..=steps.len()).map(|n| format!("#{n}")).collect();
            for (i, (args, stdin)) in steps.iter().enumerate() {
                let mut key = step_key(args, stdin);
                let occurrence = 1 + seen.iter().filter(|k| **k == key).count();
                seen.push(key.clone());
                if i > 0 {
                    let mut k = first.clone();
                    k.push("|");
                    k.extend(key);
                    key = k;
                }
                if occurrence > 1 {
                    key.push(&nth[occurrence]);
                }
                rec.check("ldb", &key, o11.as_ref().map(|v| &v[i]), &s[i], normalise);
            }
        }
    }
}

/// `db/000123.sst` -> `db/N.sst`: table numbers that each engine gives its own compaction
/// outputs, masked where two engines' listings are compared.
pub fn mask_table_numbers(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("db/") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(".sst") {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// [`mask_table_numbers`], then each run of consecutive `db/N.sst` lines sorted: with the
/// numbers masked, an order by file name (`--sort_by_filename`) is an order by numbers that
/// vary from run to run (see [`Recording::check`]), so only the set of lines is compared.
pub fn mask_table_numbers_and_order(s: &str) -> String {
    let masked = mask_table_numbers(s);
    let mut out: Vec<&str> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for line in masked.split('\n') {
        if line.starts_with("db/N.sst") {
            run.push(line);
            continue;
        }
        run.sort_unstable();
        out.append(&mut run);
        out.push(line);
    }
    run.sort_unstable();
    out.append(&mut run);
    out.join("\n")
}

/// The end of a recorded golden test: with `SHALE_GOLDEN_RECORD` (`record`), 11.8.1's output
/// (`recorded`) becomes the file at `expected_path`; when 11.8.1 ran (`oracle_ran`), the file
/// must still hold what it printed; and Shale's output must equal the file.
pub fn check_recording(
    expected_path: &Path,
    record: bool,
    oracle_ran: bool,
    recorded: &str,
    shale_text: &str,
) {
    if record {
        std::fs::write(expected_path, recorded).unwrap();
    }
    let expected = std::fs::read_to_string(expected_path).unwrap();
    if oracle_ran {
        assert_eq!(expected, recorded, "the recording is stale: re-record with SHALE_GOLDEN_RECORD=1");
    }
    assert_eq!(expected, shale_text, "against 11.8.1's recording");
}
