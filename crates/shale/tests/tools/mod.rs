//! Helpers shared by the interop scenario tests: running RocksDB's own tools (`db_bench`,
//! `ldb`, `sst_dump`) and reading what they print, and reading a Shale database completely
//! through its public API.
//!
//! The tools are Debian's RocksDB 7.8.3 ones in /usr/bin, unless a test first calls
//! [`use_rocksdb_11`]: then, for that test's thread, they are RocksDB 11.8.1's release build in
//! `../shared/tools/rocksdb-11.8.1/bin/` beside the checkout (or the directory named by the
//! `SHALE_ROCKSDB_11_BIN` environment variable).
//!
//! A test that needs a tool calls `tools_available` first and returns early (printing the
//! reason) when the tool is not installed. Under CI (`CI` set to anything but `false`/`0`,
//! as CI services set `CI=true`) or with `SHALE_REQUIRE_ORACLE=1`, a missing tool fails the
//! test instead, naming the tool: a run without the oracle must not look green. `.ci/run`
//! installs Debian's `rocksdb-tools` (7.8.3) and sets `SHALE_REQUIRE_ORACLE=1`.
#![allow(dead_code)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::Command;

thread_local! {
    /// Where this test thread's tools are.
    static TOOLS_BIN: RefCell<PathBuf> = RefCell::new(PathBuf::from("/usr/bin"));
}

fn tool_path(tool: &str) -> PathBuf {
    TOOLS_BIN.with(|b| b.borrow().join(tool))
}

/// RocksDB 11.8.1's tool directory: `$SHALE_ROCKSDB_11_BIN`, else
/// `<checkout>/../shared/tools/rocksdb-11.8.1/bin`.
pub fn rocksdb_11_bin() -> PathBuf {
    if let Some(d) = std::env::var_os("SHALE_ROCKSDB_11_BIN") {
        return PathBuf::from(d);
    }
    // CARGO_MANIFEST_DIR is <checkout>/crates/shale.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/rocksdb-11.8.1/bin")
}

/// Makes this test thread use RocksDB 11.8.1's tools. False (with the reason printed) when
/// they are absent or cannot run on this machine (they are built for one processor kind and
/// die with SIGILL elsewhere).
///
/// With `SHALE_REQUIRE_ROCKSDB_11` set (CI sets it when the tools run on its machine), a
/// test that cannot use them fails instead of skipping.
pub fn use_rocksdb_11(test: &str) -> bool {
    let ok = find_rocksdb_11(test);
    if !ok && std::env::var_os("SHALE_REQUIRE_ROCKSDB_11").is_some() {
        panic!(
            "{test}: SHALE_REQUIRE_ROCKSDB_11 is set but RocksDB 11.8.1's tools cannot be used (see above)"
        );
    }
    ok
}

fn find_rocksdb_11(test: &str) -> bool {
    let bin = rocksdb_11_bin();
    for t in ["db_bench", "ldb", "sst_dump"] {
        let p = bin.join(t);
        if !p.exists() {
            eprintln!("SKIPPED {test}: {} (RocksDB 11.8.1 tools) is not there", p.display());
            return false;
        }
        match Command::new(&p).arg("--help").output() {
            Ok(out) => {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = out.status.signal() {
                    eprintln!(
                        "SKIPPED {test}: {} dies with signal {sig} on this machine (built for another processor?)",
                        p.display()
                    );
                    return false;
                }
                let err = String::from_utf8_lossy(&out.stderr);
                if err.contains("error while loading shared libraries") {
                    eprintln!("SKIPPED {test}: {} lacks its libraries: {}", p.display(), err.trim());
                    return false;
                }
            }
            Err(e) => {
                eprintln!("SKIPPED {test}: cannot run {}: {e}", p.display());
                return false;
            }
        }
    }
    TOOLS_BIN.with(|b| *b.borrow_mut() = bin);
    true
}

use shale::{IteratorMode, Options, DB};

pub type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

/// True when every named tool is installed (in /usr/bin, or where [`use_rocksdb_11`]
/// pointed this thread). Otherwise: when the oracle is required (`shale_base::oracle`:
/// under CI or `SHALE_REQUIRE_ORACLE`), panics naming the missing tools; else prints why
/// the test is skipped and returns false.
pub fn tools_available(test: &str, tools: &[&str]) -> bool {
    let missing: Vec<String> =
        tools.iter().map(|t| tool_path(t)).filter(|p| !p.exists()).map(|p| p.display().to_string()).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(!shale_base::oracle::required(), "{}", shale_base::oracle::missing_message(test, &missing));
    eprintln!("SKIPPED {test}: {} (RocksDB tools) not installed", missing.join(", "));
    false
}

/// A command for `tool` from this thread's tool directory (for a test that pipes stdin).
pub fn tool_command(tool: &str) -> Command {
    Command::new(tool_path(tool))
}

/// Runs `<tool> args...`; panics with its output if it fails. Returns stdout.
pub fn run_tool(tool: &str, args: &[String]) -> String {
    let (ok, out, err) = try_tool(tool, args);
    assert!(ok, "{tool} {args:?} failed\nstdout:\n{out}\nstderr:\n{err}");
    out
}

/// The arguments `tool` is run with: `args`, plus `--ignore_unknown_options` for RocksDB
/// 7.8.3's `ldb` when it loads a database's OPTIONS file (by default with `--db`). Shale's
/// OPTIONS files hold RocksDB 11.8.1's options, as 11.8.1's own do, and 7.8.3's parser
/// refuses the ones it does not know unless asked to skip them (it skips them because the
/// file names a newer version), which is what a RocksDB user runs 7.8.3's ldb on an 11.8.1
/// database with. `create_column_family` and `drop_column_family` take no such flag (they
/// cannot load an 11.8.1 OPTIONS file in 7.8.3 at all); they get nothing added.
pub fn tool_args(tool: &str, args: &[String]) -> Vec<String> {
    let mut v = args.to_vec();
    let v7_ldb = tool == "ldb" && tool_path(tool) == Path::new("/usr/bin/ldb");
    let command = args.iter().find(|a| !a.starts_with("--")).map(String::as_str);
    let takes_flag = !matches!(command, Some("create_column_family" | "drop_column_family"));
    let loads = args.iter().any(|a| a.starts_with("--db="))
        && !args.iter().any(|a| a == "--ignore_unknown_options" || a == "--create_if_missing");
    if v7_ldb && takes_flag && loads {
        v.push("--ignore_unknown_options".to_string());
    }
    v
}

/// Runs `<tool> args...` and returns (success, stdout, stderr).
pub fn try_tool(tool: &str, args: &[String]) -> (bool, String, String) {
    let out = Command::new(tool_path(tool))
        .args(tool_args(tool, args))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // ldb reports most failures on stdout with "Failed:" and still exits 1.
    (out.status.success(), stdout, stderr)
}

/// `try_tool` that gives up after `secs` seconds (killing the tool); None on timeout.
/// RocksDB 7.8.3's log reader can spin forever on some damaged WALs.
pub fn try_tool_timeout(tool: &str, args: &[String], secs: u64) -> Option<(bool, String, String)> {
    use std::io::Read;
    let mut child = Command::new(tool_path(tool))
        .args(tool_args(tool, args))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    // Drain the pipes on threads so a chatty tool cannot block on a full pipe.
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let out = t1.join().unwrap_or_default();
            let err = t2.join().unwrap_or_default();
            return Some((status.success(), out, err));
        }
        if start.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Creates a database with `db_bench --benchmarks=fillrandom,overwrite` and extra flags.
pub fn db_bench_fill(dir: &Path, num: usize, extra: &[&str]) {
    db_bench_run(dir, "fillrandom,overwrite", num, extra)
}

/// Runs `db_bench --benchmarks=<benchmarks>` on `dir` with a fixed seed and extra flags.
pub fn db_bench_run(dir: &Path, benchmarks: &str, num: usize, extra: &[&str]) {
    let mut a = vec![
        format!("--benchmarks={benchmarks}"),
        format!("--num={num}"),
        format!("--db={}", dir.display()),
        "--seed=42".to_string(),
        "--threads=1".to_string(),
        "--histogram=0".to_string(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    run_tool("db_bench", &a);
}

pub fn decode_hex(s: &str) -> Vec<u8> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    assert!(s.len().is_multiple_of(2), "odd hex string {s:?}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit")).collect()
}

pub fn encode_hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for x in b {
        s.push_str(&format!("{x:02X}"));
    }
    s
}

/// Every pair `ldb scan --hex` prints for the database (optionally one column family).
pub fn ldb_scan(dir: &Path, cf: Option<&str>) -> Pairs {
    let mut a = vec![format!("--db={}", dir.display()), "scan".to_string(), "--hex".to_string()];
    if let Some(cf) = cf {
        a.push(format!("--column_family={cf}"));
    }
    let out = run_tool("ldb", &a);
    out.lines()
        .filter(|l| l.starts_with("0x"))
        .map(|l| {
            // 7.8.3 prints `key : value`; 11.x prints `key ==> value`.
            let (k, v) = l
                .split_once(" ==> ")
                .or_else(|| l.split_once(" : "))
                .unwrap_or_else(|| panic!("unexpected ldb scan line {l:?}"));
            (decode_hex(k), decode_hex(v))
        })
        .collect()
}

/// `ldb get --hex` of one key: None when ldb says it is not found. RocksDB 7.8.3's ldb then
/// fails (exit status 1) printing `Failed: Get failed: NotFound: `; 11.8.1's succeeds
/// printing `Key not found`. A value is printed as `0x` and hex digits; any other output
/// fails the test with what ldb printed.
pub fn ldb_get(dir: &Path, cf: Option<&str>, key: &[u8]) -> Option<Vec<u8>> {
    let mut a =
        vec![format!("--db={}", dir.display()), "get".to_string(), "--hex".to_string(), encode_hex(key)];
    if let Some(cf) = cf {
        a.push(format!("--column_family={cf}"));
    }
    let (ok, out, err) = try_tool("ldb", &a);
    if !ok {
        assert!(out.contains("NotFound") || err.contains("NotFound"), "ldb get failed: {out}{err}");
        return None;
    }
    let value = out.trim();
    if value == "Key not found" {
        return None;
    }
    assert!(value.starts_with("0x"), "ldb get printed neither a hex value nor \"Key not found\": {out}{err}");
    Some(decode_hex(value))
}

/// The column families of a database, as Shale lists them.
pub fn list_cf(dir: &Path) -> Vec<String> {
    DB::list_cf(&Options::default(), dir).expect("list_cf")
}

/// Opens an existing database with all its column families, each with `opts`.
pub fn open_all(dir: &Path, opts: &Options) -> DB {
    let cfs = list_cf(dir).into_iter().map(|n| shale::ColumnFamilyDescriptor::new(n, opts.clone()));
    DB::open_cf_descriptors(opts, dir, cfs)
        .unwrap_or_else(|e| panic!("Shale cannot open {}: {e}", dir.display()))
}

/// Every pair of one column family, forward.
pub fn shale_scan(db: &DB, cf: &str) -> Pairs {
    let it = match db.cf_handle(cf) {
        Some(h) => db.iterator_cf(h, IteratorMode::Start),
        None => panic!("no column family {cf}"),
    };
    it.map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iterator error")).collect()
}

/// Every pair of the default column family, forward.
pub fn shale_scan_default(db: &DB) -> Pairs {
    shale_scan(db, "default")
}

/// Every pair of one column family, in reverse.
pub fn shale_scan_reverse(db: &DB, cf: &str) -> Pairs {
    let h = db.cf_handle(cf).unwrap_or_else(|| panic!("no column family {cf}"));
    db.iterator_cf(h, IteratorMode::End)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("iterator error"))
        .collect()
}

/// The table files (`*.sst`) of a database directory, sorted.
pub fn sst_files(dir: &Path) -> Vec<PathBuf> {
    files_with_suffix(dir, ".sst")
}

/// The WAL files (`*.log`) of a database directory, sorted.
pub fn wal_files(dir: &Path) -> Vec<PathBuf> {
    files_with_suffix(dir, ".log")
}

pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)))
        .collect();
    v.sort();
    v
}

/// The text of a database's newest OPTIONS file (the highest number).
pub fn latest_options_text(dir: &Path) -> String {
    let newest = files_with_suffix(dir, "")
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-")))
        .max()
        .expect("an OPTIONS file");
    std::fs::read_to_string(newest).expect("read the OPTIONS file")
}

/// The current MANIFEST file of a database (as CURRENT names it).
pub fn current_manifest(dir: &Path) -> PathBuf {
    let cur = std::fs::read_to_string(dir.join("CURRENT")).expect("CURRENT");
    dir.join(cur.trim())
}

/// Panics with a short description of the first difference between two pair lists.
pub fn assert_same_pairs(got: &Pairs, want: &Pairs, ctx: &str) {
    if got == want {
        return;
    }
    let first = got.iter().zip(want.iter()).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    let show = |p: Option<&(Vec<u8>, Vec<u8>)>| {
        p.map(|(k, v)| format!("{} => {} bytes", String::from_utf8_lossy(k), v.len()))
    };
    panic!(
        "{ctx}: {} pairs, expected {}; first difference at #{first}: got {:?}, expected {:?}",
        got.len(),
        want.len(),
        show(got.get(first)),
        show(want.get(first))
    );
}

/// Table options whose tables RocksDB 7.8.3's tools read: format_version 5. Shale writes
/// format_version 7 by default (RocksDB 11's default), which 7.8.3 cannot read (it reads
/// 2..=5); a test whose Shale-written database 7.8.3 reads sets this.
pub fn rocksdb7_tables() -> shale::BlockBasedOptions {
    let mut t = shale::BlockBasedOptions::default();
    t.set_format_version(5);
    t
}

/// Gives `o` [`rocksdb7_tables`].
pub fn for_rocksdb7(o: &mut Options) {
    o.set_block_based_table_factory(&rocksdb7_tables());
}

/// A merge function that concatenates the base (if any) and the operands, oldest first; as
/// an associative operator it is also the partial merge (the merge tests' operator).
pub fn concat(_key: &[u8], existing: Option<&[u8]>, ops: &shale::MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for o in ops {
        v.extend_from_slice(o);
    }
    Some(v)
}

/// Options of the flush-and-merge tests: created if missing, no automatic compaction, a
/// 64 MiB write buffer (flushes only when asked), `concat` as the merge operator.
pub fn concat_merge_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_write_buffer_size(64 << 20);
    o.set_merge_operator_associative("concat", concat);
    o
}

/// A table file opened for reading with the default (bytewise) comparator, no block cache,
/// checksums verified: its file handle, size and reader options.
pub fn table_file(
    f: &Path,
) -> (std::sync::Arc<dyn shale::fs::RandomAccessFile>, u64, shale::table::reader::TableReaderOptions) {
    let size = std::fs::metadata(f).expect("table file size").len();
    let file = shale::fs::default_fs().new_random_access_file(f).expect("open table file");
    let opts = shale::table::reader::TableReaderOptions::standalone(
        shale::key::bytewise_internal_comparator(),
        f.display().to_string(),
    );
    (file, size, opts)
}

/// Opens a database with the option rows `set` (`name=value` pairs, as an options string),
/// then checks that Shale's OPTIONS file holds every row, that RocksDB 11.8.1's `ldb` loads
/// it strictly (`--try_load_options`: a scan and a put), and that the OPTIONS file RocksDB
/// writes after the put keeps every row. With `read_back`, Shale then loads RocksDB's file
/// (`Options::load_latest`), reads the put and keeps the rows in its own next file. The
/// caller has checked `use_rocksdb_11`.
pub fn ldb_keeps_option_rows(set: &[(&str, &str)], read_back: bool) {
    let has_all = |text: &str, who: &str| {
        for (n, v) in set {
            assert!(text.lines().any(|l| l.trim() == format!("{n}={v}")), "{who}: {n}={v} in\n{text}");
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let s: Vec<String> = set.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let mut o = Options::default().get_options_from_string(s.join(";")).unwrap();
    o.create_if_missing(true);
    let db = DB::open(&o, &path).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    drop(db);
    has_all(&crate::util::latest_options_text(&path), "Shale's OPTIONS file");

    let ldb = |args: &[&str]| {
        let out = tool_command("ldb").arg(format!("--db={}", path.display())).args(args).output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    };
    let (ok, out) = ldb(&["--try_load_options", "scan"]);
    assert!(ok && out.contains("k ==> v"), "{out}");
    let (ok, out) = ldb(&["--try_load_options", "put", "k2", "v2"]);
    assert!(ok, "{out}");
    let theirs = crate::util::latest_options_text(&path);
    assert!(theirs.contains("rocksdb_version=11.8.1"), "{theirs}");
    has_all(&theirs, "RocksDB's OPTIONS file after loading Shale's");
    if read_back {
        let (loaded, _) = Options::load_latest(
            &path,
            shale::Env::new().unwrap(),
            false,
            shale::Cache::new_lru_cache(1 << 20),
        )
        .unwrap();
        let db = DB::open(&loaded, &path).unwrap();
        assert_eq!(db.get(b"k2").unwrap(), Some(b"v2".to_vec()));
        drop(db);
        has_all(&crate::util::latest_options_text(&path), "Shale's OPTIONS file after RocksDB's");
    }
}

/// When RocksDB 11.8.1's tools run here (`use_rocksdb_11(test)`): `sst_dump
/// --command=verify --verify_checksum` passes on every table of `dir`, and `ldb scan` reads
/// the pairs Shale's `db` holds in its default family.
pub fn rocksdb_reads(dir: &Path, db: &DB, test: &str) {
    let pairs = shale_scan(db, "default");
    if !use_rocksdb_11(test) {
        return;
    }
    for t in sst_files(dir) {
        let (ok, out, err) = try_tool(
            "sst_dump",
            &args(&[&format!("--file={}", t.display()), "--command=verify", "--verify_checksum"]),
        );
        assert!(
            ok && !out.contains("Corruption") && !err.contains("Corruption"),
            "{}: {out}{err}",
            t.display()
        );
    }
    assert_same_pairs(&ldb_scan(dir, None), &pairs, test);
}
