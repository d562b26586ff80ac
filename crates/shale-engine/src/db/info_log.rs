//! The info log, `LOG`, in RocksDB's line format (`2026/11/22-02:41:03.123456 <tid> text`).
//! The previous LOG is renamed to `LOG.old.<micros>`; old logs are trimmed to
//! `keep_log_file_num - 1`, so that with the new LOG at most `keep_log_file_num` files are
//! left (RocksDB's `TrimOldLogFiles` and `PurgeObsoleteFiles` both stop below the count).
//! Writes are best effort: a failing info log never fails the database.
//!
//! ## Rolling (RocksDB's `AutoRollLogger`)
//!
//! With `max_log_file_size` or `log_file_time_to_roll` set, the LOG rolls while the database
//! runs. Before each line is written: when the time to roll is set and the cached clock
//! (seconds, re-read from the clock every 100 lines, as RocksDB's `LogExpired`) has reached
//! the LOG's creation second plus the period, or when the max size is set and the bytes
//! written to the LOG have reached it, the LOG is renamed to `LOG.old.<micros>` (one
//! microsecond later while that name exists), a new LOG is opened, old logs beyond
//! `keep_log_file_num - 1` are deleted oldest first, and the header lines (RocksDB's
//! `ROCKS_LOG_HEADER` lines: the version, the path and the options dump, kept in memory) are
//! written again at its top, each with a new stamp.
//!
//! With `db_log_dir` the log lives in that directory under RocksDB's names for a separate
//! log directory (`InfoLogFileName`, `OldInfoLogFileName`), so several databases can share
//! it: the database's absolute path, `//` runs collapsed, its first character dropped if
//! not kept, every character other than `[A-Za-z0-9._-]` turned to `_`, at most 255
//! characters, then `_LOG` (`/tmp/db-1` logs to `<dir>/tmp_db-1_LOG`, the old ones to
//! `<dir>/tmp_db-1_LOG.old.<micros>`).
//!
//! ## Event lines (`EVENT_LOG_v1`)
//!
//! RocksDB's `EventLogger` lines, which tools parse for flush and compaction timelines:
//! `<time> <tid> EVENT_LOG_v1 {"time_micros": <us>, "job": <n>, "event": "<name>", ...}`.
//! [`JsonWriter`] writes the object as RocksDB's `JSONWriter` (logging/event_logger.h): keys
//! in the order given, `"key": value` pairs joined by `", "`, arrays `[1, 2]`, nested
//! objects, integers in decimal, doubles as C++'s `ostream <<` prints them (`%g`, six
//! significant digits). One difference: RocksDB writes strings unescaped; Shale escapes `"`,
//! `\` and control characters so that every line parses as JSON (the strings RocksDB's
//! events carry, file checksums aside, never hold them).
//!
//! The events and where Shale writes them (keys, order and value types as RocksDB 11.8.1):
//! - `flush_started`, `table_file_creation`, `flush_finished`: `flush.rs` (a family's flush;
//!   an atomic flush group writes `table_file_creation` per table).
//! - `compaction_started`, `table_file_creation`, `compaction_finished`, `trivial_move`:
//!   `compact.rs`.
//! - `table_file_deletion`: `obsolete.rs`, with the job id of the flush or compaction whose
//!   purge deletes the table (a purge of its own otherwise).
//! - `recovery_started`, `table_file_creation`, `recovery_finished`: `open.rs` (WAL replay).
//!
//! Where Shale has no value for a key, the key is still written, with:
//! - `flush_started.flush_reason`: `"Other Reasons"` (RocksDB's `kOthers`): Shale's flush
//!   does not record why it was asked for. `memory_usage` is the memtables' approximate
//!   memory usage. `total_data_size` is RocksDB's value (`MemTable::get_data_size`, the
//!   bytes `MemTable::Add` encodes per entry), counted as entries are added, as RocksDB's
//!   (`tests/interop/event_log_flush_data_size.rs` compares it with 11.8.1's).
//! - `compaction_started.compaction_reason`: `"ManualCompaction"` for `compact_range`,
//!   `"FIFOMaxSize"`/`"FIFOTtl"` for FIFO deletions; an automatic leveled compaction's as
//!   its picker records it (`CompactionPlan::reason`): `"LevelL0FilesNum"`,
//!   `"LevelMaxLevelSize"`, `"FilesMarkedForCompaction"`; else `"Unknown"` (RocksDB's
//!   `kUnknown`: universal, TTL and periodic picks do not record theirs yet). `score`: -1 for a manual
//!   compaction (as RocksDB), the level's score (`picker::level_scores`) for an automatic
//!   leveled one, -1 for other styles (their picker keeps no score).
//! - `compaction_finished.num_single_delete_mismatches`/`_fallthrough`: 0 (Shale's
//!   compaction does not count them); `num_output_records`: input records minus the dropped.
//! - `table_file_creation.file_checksum` (hex) and `file_checksum_func_name`: the table's
//!   MANIFEST values (`""` and `"Unknown"` without `file_checksum_gen_factory`); `table_properties` has RocksDB's fields from the
//!   table's properties block, and no user-collected readable properties (Shale's
//!   collectors have none). The event is written once the table is built (its properties
//!   read back through the table cache, as RocksDB's verification opens it); a table that
//!   failed to build writes no event.
//! - `recovery_finished` is written on success only; a failed recovery fails the open and
//!   writes `recovery_failed` with the error.
//!
//! No line is written under the DB mutex: events and lines that arise under it
//! (`flush_finished`, `compaction_finished`, `trivial_move`, the flush, compaction, MemPurge,
//! ReFitLevel, DeleteFilesInRange and background-error lines) go to an in-memory buffer,
//! RocksDB's `LogBuffer`, written out by the next unlocked purge or log line
//! (`flush_buffered`). A MemPurge writes its line before it wakes the waiters; a flush
//! (`wait_for_flushes`), a manual compaction and a resume write the buffer before they
//! return, so a caller reading the LOG then finds the lines of what it waited for. RocksDB
//! does not promise that much (its `BackgroundCallFlush` writes the `LogBuffer` after the
//! install, and a `Flush()` woken by another `bg_cv_` signal may return first), so callers
//! and tests must not rely on it: the LOG is a diagnostic, not an interface.
//! Buffering a line never waits for the file (whose lock a writer holds across appends),
//! so the DB mutex never waits for LOG I/O.

use std::fmt;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

use std::sync::Arc;

use super::filename::{self, FileType};
use crate::config::LogLevel;
use crate::config::{UserLogger, UserSink};
use crate::error::Result;
use crate::fs::WritableFile;

/// The clock the rolling logger reads: microseconds since the epoch (a test's own clock in
/// unit tests).
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The system clock in microseconds.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0)
    })
}

/// The info log's file settings: RocksDB's `max_log_file_size` (bytes, 0: no limit),
/// `log_file_time_to_roll` (seconds, 0: never) and `keep_log_file_num`, and the clock.
pub struct LogFiles {
    pub max_size: u64,
    pub time_to_roll: u64,
    pub keep: usize,
    pub clock: Clock,
}

impl LogFiles {
    /// The settings of `c`, with the system clock.
    pub fn of(c: &crate::config::DbConfig) -> LogFiles {
        LogFiles {
            max_size: c.max_log_file_size,
            time_to_roll: c.log_file_time_to_roll,
            keep: c.keep_log_file_num,
            clock: system_clock(),
        }
    }
}

/// A rolling LOG's state (RocksDB's `AutoRollLogger` members), guarded by the file's lock.
struct Roller {
    fs: crate::fs::FileSystemRef,
    dir: PathBuf,
    /// The LOG's file name (`LOG` or the separate directory's `<prefix>_LOG`).
    name: String,
    max_size: u64,
    time_to_roll: u64,
    keep: usize,
    clock: Clock,
    /// Bytes written to the current LOG (`GetLogFileSize`).
    size: u64,
    /// The current LOG's creation second (`ctime_`), the cached second (`cached_now`) and
    /// the lines since it was read (`cached_now_access_count`).
    ctime: u64,
    cached_now: u64,
    access_count: u32,
    /// The old logs, oldest first (`old_log_files_`).
    old: std::collections::VecDeque<PathBuf>,
    /// The header lines' texts (`headers_`).
    headers: Vec<String>,
}

/// RocksDB's `call_NowMicros_every_N_records_`.
const CLOCK_EVERY_N_LINES: u32 = 100;

impl Roller {
    fn expired(&mut self) -> bool {
        if self.access_count >= CLOCK_EVERY_N_LINES {
            self.cached_now = (self.clock)() / 1_000_000;
            self.access_count = 0;
        }
        self.access_count += 1;
        self.cached_now >= self.ctime + self.time_to_roll
    }

    fn wants_roll(&mut self) -> bool {
        (self.time_to_roll > 0 && self.expired()) || (self.max_size > 0 && self.size >= self.max_size)
    }

    /// Renames the LOG to `<name>.old.<micros>` (`RollLogFile`).
    fn rename_current(&mut self) {
        let mut now = (self.clock)();
        let mut old = self.dir.join(format!("{}.old.{now}", self.name));
        while self.fs.file_exists(&old) {
            now += 1;
            old = self.dir.join(format!("{}.old.{now}", self.name));
        }
        let _ = self.fs.rename(&self.dir.join(&self.name), &old);
        self.old.push_back(old);
    }

    /// A new LOG (`ResetLogger`).
    fn new_file(&mut self) -> Result<Box<dyn WritableFile>> {
        let f = self.fs.new_writable_file(&self.dir.join(&self.name))?;
        self.size = 0;
        self.cached_now = (self.clock)() / 1_000_000;
        self.ctime = self.cached_now;
        self.access_count = 0;
        Ok(f)
    }

    /// Deletes old logs, oldest first, until fewer than `keep` are left (`TrimOldLogFiles`).
    fn trim(&mut self) {
        while !self.old.is_empty() && self.old.len() >= self.keep {
            if let Some(f) = self.old.pop_front() {
                let _ = self.fs.remove_file(&f);
            }
        }
    }
}

pub struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
    /// With `max_log_file_size` or `log_file_time_to_roll`: the rolling state (locked inside
    /// the file's lock).
    roller: Option<Mutex<Roller>>,
    /// Lines made under the DB mutex, waiting to be written without it.
    buffered: Mutex<Vec<Line>>,
    /// `info_log_level`: lines below it are dropped (RocksDB's `Logger::Logv` check).
    level: LogLevel,
    /// The user's logger (`set_info_logger`), which gets the lines instead of a LOG file.
    user: Option<Arc<UserLogger>>,
    /// A LOG file was opened (fixed at creation; read without the file's lock, which a
    /// writer may hold for a while).
    has_file: bool,
    /// RocksDB's `DBImpl::next_job_id_`: the ids of flushes, compactions, purges and the
    /// recovery. Kept here because recovery runs before the database's shared state exists.
    next_job_id: AtomicI32,
}

/// A line of the info log: its level, its stamp (time and thread, taken when it was made)
/// and its text.
struct Line {
    level: LogLevel,
    stamp: String,
    text: String,
}

/// RocksDB's `Logger::Logv` prefix of a line at `level` (none at INFO and HEADER).
fn level_prefix(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "[DEBUG] ",
        LogLevel::Warn => "[WARN] ",
        LogLevel::Error => "[ERROR] ",
        LogLevel::Fatal => "[FATAL] ",
        LogLevel::Info | LogLevel::Header => "",
    }
}

/// Gives line `l` to the user's logger `u`.
fn write_user(u: &UserLogger, l: &Line) {
    match &u.sink {
        UserSink::Callback(cb) => cb(l.level, &l.text),
        UserSink::Stderr(prefix) => {
            eprintln!("{}{}{}", prefix.as_deref().unwrap_or(""), level_prefix(l.level), l.text)
        }
    }
}

/// RocksDB's `GetInfoLogPrefix` over the normalized absolute path: the name of the info log
/// of the database at `db_abs` in a separate log directory.
pub fn info_log_prefix(db_abs: &str) -> String {
    // NormalizePath: runs of '/' become one (a leading "//" is kept, as for UNC names).
    let mut norm = String::with_capacity(db_abs.len());
    if db_abs.len() > 2 && db_abs.starts_with("//") {
        norm.push('/');
    }
    for c in db_abs.chars() {
        if !(c == '/' && norm.ends_with('/')) {
            norm.push(c);
        }
    }
    // A 260-byte buffer with "_LOG\0" after at most 255 bytes of the path.
    let mut out = String::new();
    for (i, b) in norm.bytes().enumerate() {
        if out.len() >= 260 - 5 {
            break;
        }
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_' {
            out.push(b as char);
        } else if i > 0 {
            out.push('_');
        }
    }
    out.push_str("_LOG");
    out
}

/// The database path made absolute as RocksDB's posix `GetAbsolutePath`: an absolute path
/// as given, else the working directory, '/', the path.
fn absolute(db: &Path) -> String {
    if db.is_absolute() {
        return db.to_string_lossy().into_owned();
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    format!("{}/{}", cwd.to_string_lossy(), db.to_string_lossy())
}

impl InfoLog {
    /// Opens the info log of the database at `db`: in `db` itself as `LOG`, or with a
    /// non-empty `log_dir` in that directory (created if missing) under RocksDB's names.
    pub fn open(
        fs: &crate::fs::FileSystemRef,
        db: &Path,
        log_dir: &Path,
        settings: &LogFiles,
    ) -> Result<InfoLog> {
        let keep = settings.keep;
        let (dir, name): (PathBuf, String) = if log_dir.as_os_str().is_empty() {
            (db.to_path_buf(), "LOG".to_string())
        } else {
            fs.create_dir_all(log_dir)?;
            (log_dir.to_path_buf(), info_log_prefix(&absolute(db)))
        };
        let path =
            if log_dir.as_os_str().is_empty() { filename::info_log_file(&dir) } else { dir.join(&name) };
        if fs.file_exists(&path) {
            let mut now = (settings.clock)();
            let mut old = dir.join(format!("{name}.old.{now}"));
            while fs.file_exists(&old) {
                now += 1;
                old = dir.join(format!("{name}.old.{now}"));
            }
            fs.rename(&path, &old)?;
        }
        let old_prefix = format!("{name}.old.");
        let mut olds: Vec<String> = fs
            .children(&dir)?
            .into_iter()
            .filter(|n| {
                if log_dir.as_os_str().is_empty() {
                    filename::parse_file_name(n) == Some(FileType::OldInfoLog)
                } else {
                    n.strip_prefix(&old_prefix)
                        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                }
            })
            .collect();
        olds.sort();
        let mut roller = Roller {
            fs: fs.clone(),
            dir: dir.clone(),
            name,
            max_size: settings.max_size,
            time_to_roll: settings.time_to_roll,
            keep,
            clock: settings.clock.clone(),
            size: 0,
            ctime: 0,
            cached_now: 0,
            access_count: 0,
            old: olds.iter().map(|n| dir.join(n)).collect(),
            headers: Vec::new(),
        };
        let file = roller.new_file()?;
        roller.trim();
        let rolling = settings.max_size > 0 || settings.time_to_roll > 0;
        Ok(InfoLog { roller: rolling.then(|| Mutex::new(roller)), ..InfoLog::with_file(Some(file)) })
    }

    /// No info log: a read-only open creates no file, as RocksDB's (which has no logger
    /// unless one is given).
    pub fn none() -> InfoLog {
        InfoLog::with_file(None)
    }

    fn with_file(file: Option<Box<dyn WritableFile>>) -> InfoLog {
        InfoLog {
            has_file: file.is_some(),
            file: Mutex::new(file),
            roller: None,
            buffered: Mutex::new(Vec::new()),
            level: LogLevel::Info,
            user: None,
            next_job_id: AtomicI32::new(1),
        }
    }

    /// The info log of a database given a logger (`set_info_logger`): no LOG file is made,
    /// as RocksDB creates none when `info_log` is set; lines go to the logger.
    pub fn for_user(user: Arc<UserLogger>) -> InfoLog {
        InfoLog { user: Some(user), ..InfoLog::with_file(None) }
    }

    /// Keeps only lines at `level` or above (`info_log_level`).
    pub fn with_level(self, level: LogLevel) -> InfoLog {
        InfoLog { level, ..self }
    }

    /// Whether a line at `level` is kept: the user's logger's level when there is one, else
    /// `info_log_level` (RocksDB's `GetInfoLogLevel() <= level`).
    fn wants(&self, level: LogLevel) -> bool {
        let min = self.user.as_ref().map_or(self.level, |u| u.level);
        level as u8 >= min as u8
    }

    fn line(level: LogLevel, args: fmt::Arguments<'_>) -> Line {
        Line { level, stamp: format!("{} {:x}", timestamp(), thread_id()), text: args.to_string() }
    }

    /// A new job id (RocksDB's `next_job_id_.fetch_add(1)`).
    pub fn new_job_id(&self) -> i32 {
        self.next_job_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A line at INFO level (RocksDB's `ROCKS_LOG_INFO`).
    pub fn log(&self, args: fmt::Arguments<'_>) {
        self.log_at(LogLevel::Info, args);
    }

    /// A line at `level` (`[WARN] ` etc. before the text, as RocksDB's `Logger::Logv`).
    /// Lines buffered before are written either way (a dropped line still writes them).
    pub fn log_at(&self, level: LogLevel, args: fmt::Arguments<'_>) {
        let line = self.wants(level).then(|| InfoLog::line(level, args));
        self.write_lines(line);
    }

    /// Writes the buffered lines, then `line`. The buffer is taken with the file locked, so
    /// when this returns every line buffered before it was called is written (by this call
    /// or by the one that held the file). There is no shortcut on an empty buffer: it may be
    /// empty because another thread took the lines and is still appending them, and this
    /// call must wait for that thread (by locking the file) to keep the promise.
    fn write_lines(&self, line: Option<Line>) {
        if !self.enabled() {
            return;
        }
        if let Ok(mut f) = self.file.lock() {
            let pending = match self.buffered.lock() {
                Ok(mut b) if !b.is_empty() => std::mem::take(&mut *b),
                _ => Vec::new(),
            };
            if pending.is_empty() && line.is_none() {
                return;
            }
            if let Some(u) = &self.user {
                for l in pending.iter().chain(line.iter()) {
                    write_user(u, l);
                }
            } else if f.is_some() {
                let mut roller = match &self.roller {
                    Some(r) => match r.lock() {
                        Ok(g) => Some(g),
                        Err(_) => return,
                    },
                    None => None,
                };
                for l in pending.iter().chain(line.iter()) {
                    if let Some(r) = roller.as_deref_mut() {
                        if r.wants_roll() {
                            roll(r, &mut f);
                        }
                    }
                    let Some(w) = f.as_mut() else { return };
                    let text = format!("{} {}{}\n", l.stamp, level_prefix(l.level), l.text);
                    if w.append(text.as_bytes()).is_ok() {
                        if let Some(r) = roller.as_deref_mut() {
                            r.size += text.len() as u64;
                        }
                    }
                }
                if let Some(w) = f.as_mut() {
                    let _ = w.flush();
                }
            }
        }
    }

    /// A header line (RocksDB's `ROCKS_LOG_HEADER`), kept to be written again at the top of
    /// each LOG a roll opens. Shale keeps its INFO-level filtering of these lines (a
    /// `info_log_level` above INFO drops them, and a user's logger gets them as INFO).
    pub fn header(&self, args: fmt::Arguments<'_>) {
        if !self.wants(LogLevel::Info) {
            self.write_lines(None);
            return;
        }
        let line = InfoLog::line(LogLevel::Info, args);
        if let Some(r) = &self.roller {
            if let Ok(mut r) = r.lock() {
                r.headers.push(line.text.clone());
            }
        }
        self.write_lines(Some(line));
    }

    /// Writes an event line now (call without the DB mutex).
    pub fn event(&self, w: JsonWriter) {
        self.log(format_args!("EVENT_LOG_v1 {}", w.finish()));
    }

    /// Keeps an event line (stamped now) to be written by `flush_buffered`: for events
    /// that arise under the DB mutex (RocksDB's `EventLogger::LogToBuffer`).
    pub fn buffer_event(&self, w: JsonWriter) {
        self.buffer_line(format_args!("EVENT_LOG_v1 {}", w.finish()));
    }

    /// Keeps a line (stamped now) to be written by `flush_buffered`: for lines that arise
    /// under the DB mutex, so no write to the LOG happens while it is held.
    pub fn buffer_line(&self, args: fmt::Arguments<'_>) {
        self.buffer_line_at(LogLevel::Info, args);
    }

    /// `buffer_line` at `level`.
    pub fn buffer_line_at(&self, level: LogLevel, args: fmt::Arguments<'_>) {
        if !self.enabled() || !self.wants(level) {
            return;
        }
        let line = InfoLog::line(level, args);
        if let Ok(mut b) = self.buffered.lock() {
            b.push(line);
        }
    }

    /// Whether lines go anywhere: a file (not a read-only open's `none`) or a user's logger.
    pub fn enabled(&self) -> bool {
        self.user.is_some() || self.has_file
    }

    /// Whether buffered lines wait.
    pub fn has_buffered(&self) -> bool {
        self.buffered.lock().map(|b| !b.is_empty()).unwrap_or(false)
    }

    /// Writes the buffered event lines (call without the DB mutex).
    pub fn flush_buffered(&self) {
        self.write_lines(None);
    }
}

/// Rolls the LOG (RocksDB's `AutoRollLogger::Logv` roll branch): closes and renames it,
/// opens a new one, trims the old ones and writes the header lines at its top. When the new
/// LOG cannot be made, lines are dropped (`f` is left empty) as RocksDB's does.
fn roll(r: &mut Roller, f: &mut Option<Box<dyn WritableFile>>) {
    if let Some(mut w) = f.take() {
        let _ = w.flush();
    }
    r.rename_current();
    let file = r.new_file();
    r.trim();
    let Ok(mut w) = file else { return };
    let stamp = format!("{} {:x}", timestamp(), thread_id());
    for h in &r.headers {
        let text = format!("{stamp} {h}\n");
        if w.append(text.as_bytes()).is_ok() {
            r.size += text.len() as u64;
        }
    }
    *f = Some(w);
}

/// RocksDB's `JSONWriter` (logging/event_logger.h): a JSON object written key by key.
/// `JsonWriter::event()` starts an event with its `time_micros`; `finish` closes it.
pub struct JsonWriter {
    out: String,
    /// Per open array or object: whether an element was written in it, and its closing
    /// bracket.
    nested: Vec<(bool, char)>,
    /// A key was written and its value is next.
    want_value: bool,
}

/// A value an event field can take.
pub trait JsonValue {
    fn write_json(&self, out: &mut String);
}

macro_rules! json_int {
    ($($t:ty),*) => {$(
        impl JsonValue for $t {
            fn write_json(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
json_int!(u64, i64, u32, i32, usize);

impl JsonValue for f64 {
    fn write_json(&self, out: &mut String) {
        out.push_str(&format_g(*self));
    }
}

impl JsonValue for str {
    fn write_json(&self, out: &mut String) {
        out.push('"');
        for c in self.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

impl JsonValue for String {
    fn write_json(&self, out: &mut String) {
        self.as_str().write_json(out)
    }
}

impl JsonValue for &str {
    fn write_json(&self, out: &mut String) {
        (**self).write_json(out)
    }
}

impl Default for JsonWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonWriter {
    pub fn new() -> JsonWriter {
        JsonWriter { out: String::from("{"), nested: vec![(false, '}')], want_value: false }
    }

    /// An event object with RocksDB's first field, `time_micros` (now).
    pub fn event() -> JsonWriter {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        let mut w = JsonWriter::new();
        w.field("time_micros", now);
        w
    }

    /// Separator before the next element of the innermost array or object.
    fn element(&mut self) {
        if let Some((written, _)) = self.nested.last_mut() {
            if *written {
                self.out.push_str(", ");
            }
            *written = true;
        }
    }

    pub fn key(&mut self, key: &str) -> &mut JsonWriter {
        self.element();
        key.write_json(&mut self.out);
        self.out.push_str(": ");
        self.want_value = true;
        self
    }

    /// A value: after `key`, or an element of the open array.
    pub fn value<V: JsonValue + ?Sized>(&mut self, v: &V) -> &mut JsonWriter {
        if !std::mem::take(&mut self.want_value) {
            self.element();
        }
        v.write_json(&mut self.out);
        self
    }

    pub fn field<V: JsonValue>(&mut self, key: &str, v: V) -> &mut JsonWriter {
        self.key(key).value(&v)
    }

    /// Opens an array or object (after `key`, or as an element of the open array).
    fn open(&mut self, open: char, close: char) -> &mut JsonWriter {
        if !std::mem::take(&mut self.want_value) {
            self.element();
        }
        self.out.push(open);
        self.nested.push((false, close));
        self
    }

    /// Closes the innermost open array or object.
    fn close(&mut self) -> &mut JsonWriter {
        if let Some((_, c)) = self.nested.pop() {
            self.out.push(c);
        }
        self
    }

    pub fn start_array(&mut self) -> &mut JsonWriter {
        self.open('[', ']')
    }

    pub fn end_array(&mut self) -> &mut JsonWriter {
        self.close()
    }

    /// `key` with an array of `items`.
    pub fn array<V: JsonValue>(&mut self, key: &str, items: impl IntoIterator<Item = V>) -> &mut JsonWriter {
        self.key(key).start_array();
        for v in items {
            self.value(&v);
        }
        self.end_array()
    }

    pub fn start_object(&mut self) -> &mut JsonWriter {
        self.open('{', '}')
    }

    pub fn end_object(&mut self) -> &mut JsonWriter {
        self.close()
    }

    /// The text, with every open array or object closed.
    pub fn finish(mut self) -> String {
        while self.nested.len() > 1 {
            self.close();
        }
        self.out.push('}');
        self.out
    }
}

/// The number of files per level, the events' `lsm_state`.
pub fn lsm_state(v: &crate::version::Version) -> Vec<usize> {
    (0..v.num_levels()).map(|l| v.files(l).len()).collect()
}

/// RocksDB's `Slice::ToString(true)`: upper-case hex.
fn hex_upper(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// `table_file_creation` for table `meta` of family `cf_name` built by job `job`, its
/// properties `p` (RocksDB's `EventHelpers::LogAndNotifyTableFileCreationFinished`).
pub fn table_file_creation_event(
    job: i32,
    cf_name: &str,
    meta: &crate::version::edit::FileMetaData,
    p: &crate::table::properties::TableProperties,
) -> JsonWriter {
    use crate::table::properties::names;
    let mut w = JsonWriter::event();
    let func =
        if meta.file_checksum_func_name.is_empty() { "Unknown" } else { &meta.file_checksum_func_name };
    w.field("cf_name", cf_name)
        .field("job", job)
        .field("event", "table_file_creation")
        .field("file_number", meta.number)
        .field("file_size", meta.file_size)
        .field("file_checksum", hex_upper(&meta.file_checksum))
        .field("file_checksum_func_name", func)
        .field("smallest_seqno", meta.smallest_seqno)
        .field("largest_seqno", meta.largest_seqno);
    let avg = |a: u64| a.checked_div(p.num_entries).unwrap_or(0);
    w.key("table_properties").start_object();
    w.field("data_size", p.data_size)
        .field("index_size", p.index_size)
        .field("index_partitions", p.index_partitions)
        .field("top_level_index_size", p.top_level_index_size)
        .field("index_key_is_user_key", p.index_key_is_user_key)
        .field("index_value_is_delta_encoded", p.index_value_is_delta_encoded)
        .field("filter_size", p.filter_size)
        .field("raw_key_size", p.raw_key_size)
        .field("raw_average_key_size", avg(p.raw_key_size))
        .field("raw_value_size", p.raw_value_size)
        .field("raw_average_value_size", avg(p.raw_value_size))
        .field("num_data_blocks", p.num_data_blocks)
        .field("num_entries", p.num_entries)
        .field("num_filter_entries", p.num_filter_entries)
        .field("num_deletions", p.num_deletions)
        .field("num_merge_operands", p.num_merge_operands)
        .field("num_range_deletions", p.num_range_deletions)
        .field("format_version", p.format_version)
        .field("fixed_key_len", p.fixed_key_len)
        .field("filter_policy", p.filter_policy_name.as_str())
        .field("column_family_name", p.column_family_name.as_str())
        .field("column_family_id", p.column_family_id)
        .field("comparator", p.comparator_name.as_str())
        // RocksDB's TableProperties defaults where the block lacks the property.
        .field(
            "user_defined_timestamps_persisted",
            p.raw_u64(names::USER_DEFINED_TIMESTAMPS_PERSISTED).unwrap_or(1),
        )
        .field("key_largest_seqno", p.raw_u64(names::KEY_LARGEST_SEQNO).unwrap_or(u64::MAX))
        .field("key_smallest_seqno", p.raw_u64(names::KEY_SMALLEST_SEQNO).unwrap_or(u64::MAX))
        .field("merge_operator", p.merge_operator_name.as_str())
        .field("prefix_extractor_name", p.prefix_extractor_name.as_str())
        .field("property_collectors", p.property_collectors_names.as_str())
        .field("compression", p.compression_name.as_str())
        .field("compression_options", p.compression_options.as_str())
        .field("creation_time", p.creation_time)
        // RocksDB 11.8.1 writes these two swapped: "oldest_key_time" carries the newest
        // key time and "newest_key_time" the oldest. Kept, so that tools read the same.
        .field("oldest_key_time", p.raw_u64(names::NEWEST_KEY_TIME).unwrap_or(0))
        .field("newest_key_time", p.oldest_key_time)
        .field("file_creation_time", p.file_creation_time)
        .field("slow_compression_estimated_data_size", p.slow_compression_estimated_data_size)
        .field("fast_compression_estimated_data_size", p.fast_compression_estimated_data_size)
        .field("db_id", p.db_id.as_str())
        .field("db_session_id", p.db_session_id.as_str())
        .field("orig_file_number", p.orig_file_number)
        // The sequence-number-to-time mapping as RocksDB's EventHelpers prints it.
        .field(
            "seqno_to_time_mapping",
            if p.seqno_to_time_mapping.is_empty() {
                "N/A".to_string()
            } else {
                let mut m = crate::table::seqno_time::SeqnoToTimeMapping::new();
                match m.decode_from(&p.seqno_to_time_mapping) {
                    Ok(()) => m.to_human_string(),
                    Err(_) => "Invalid".to_string(),
                }
            },
        );
    w.end_object();
    if meta.oldest_blob_file_number != 0 {
        w.field("oldest_blob_file_number", meta.oldest_blob_file_number);
    }
    w.field("status", "OK");
    w
}

/// `table_file_deletion` (RocksDB's `EventHelpers::LogAndNotifyTableFileDeletion`).
pub fn table_file_deletion_event(job: i32, number: u64, status: &str) -> JsonWriter {
    let mut w = JsonWriter::event();
    w.field("job", job)
        .field("event", "table_file_deletion")
        .field("file_number", number)
        .field("status", status);
    w
}

/// `blob_file_deletion` (RocksDB's `EventHelpers::LogAndNotifyBlobFileDeletion`).
pub fn blob_file_deletion_event(job: i32, number: u64, status: &str) -> JsonWriter {
    let mut w = JsonWriter::event();
    w.field("job", job)
        .field("event", "blob_file_deletion")
        .field("file_number", number)
        .field("status", status);
    w
}

/// Writes `table_file_creation` for the table `meta` of `cf` just built by job `job`, its
/// properties read through the table cache (which the table enters as RocksDB's output
/// verification opens it, at `level`: RocksDB's `level_at_creation`, which decides the
/// level-0 pinning of its index and filter). Call without the DB mutex. No event when the
/// table cannot be opened (its reader reports that).
pub fn log_table_created(
    log: &InfoLog,
    table_cache: &super::table_cache::TableCache,
    job: i32,
    cf: &super::cf::CfHandle,
    meta: &crate::version::edit::FileMetaData,
    level: Option<usize>,
) {
    if !log.enabled() {
        return;
    }
    match table_cache.get_at(cf, meta, level) {
        Ok(t) => log.event(table_file_creation_event(job, &cf.name, meta, t.table.properties())),
        Err(e) => log.log(format_args!(
            "[{}] [JOB {job}] table #{} built but not readable for its event: {e}",
            cf.name, meta.number
        )),
    }
}

/// A double as C++'s `std::ostream << double` prints it (`%g`, precision 6): `-1`, `0.5`,
/// `1.23457`, `1e-07`, `1.5e+10`.
fn format_g(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // The exponent after rounding to 6 significant digits.
    let sci = format!("{v:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}

use shale_base::sys::thread_id;

/// Local-time stamp as RocksDB prints it (UTC here: the C library's local time is not used).
fn timestamp() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, dd) = civil_from_days(days);
    format!(
        "{y:04}/{m:02}/{dd:02}-{:02}:{:02}:{:02}.{:06}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefix_as_rocksdb_names_it() {
        assert_eq!(super::info_log_prefix("/tmp/db-1"), "tmp_db-1_LOG");
        assert_eq!(super::info_log_prefix("/a//b/c d/x.y_z"), "a_b_c_d_x.y_z_LOG");
        let long = format!("/{}", "x".repeat(400));
        assert_eq!(super::info_log_prefix(&long), format!("{}_LOG", "x".repeat(255)));
    }

    #[test]
    fn separate_log_dir() {
        let mem = std::sync::Arc::new(crate::fs::MemFileSystem::default());
        let fs: crate::fs::FileSystemRef = mem.clone();
        let dir = std::path::Path::new("/logs");
        let db = std::path::Path::new("/data/db");
        for _ in 0..3 {
            // keep_log_file_num 2: the LOG and one old one.
            let l = super::InfoLog::open(&fs, db, dir, &settings(0, 0, 2, super::system_clock())).unwrap();
            l.log(format_args!("hello"));
        }
        let mut names = crate::fs::FileSystem::children(&*fs, dir).unwrap();
        names.sort();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(names[0], "data_db_LOG");
        assert!(names[1].starts_with("data_db_LOG.old."), "{names:?}");
        assert!(!crate::fs::FileSystem::file_exists(&*fs, &db.join("LOG")));
    }

    fn settings(max_size: u64, time_to_roll: u64, keep: usize, clock: super::Clock) -> super::LogFiles {
        super::LogFiles { max_size, time_to_roll, keep, clock }
    }

    /// A clock the test moves: microseconds.
    fn test_clock(start: u64) -> (std::sync::Arc<std::sync::atomic::AtomicU64>, super::Clock) {
        let t = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(start));
        let c = t.clone();
        (t, std::sync::Arc::new(move || c.load(std::sync::atomic::Ordering::SeqCst)))
    }

    fn log_dir_files(
        fs: &crate::fs::FileSystemRef,
        dir: &std::path::Path,
    ) -> (String, Vec<(String, String)>) {
        let read = |n: &str| String::from_utf8(crate::fs::read_file(&**fs, &dir.join(n)).unwrap()).unwrap();
        let mut old: Vec<(String, String)> = crate::fs::FileSystem::children(&**fs, dir)
            .unwrap()
            .into_iter()
            .filter(|n| n.starts_with("LOG.old."))
            .map(|n| {
                let t = read(&n);
                (n, t)
            })
            .collect();
        old.sort();
        (read("LOG"), old)
    }

    fn mem_db() -> (crate::fs::FileSystemRef, &'static std::path::Path) {
        let fs: crate::fs::FileSystemRef = std::sync::Arc::new(crate::fs::MemFileSystem::default());
        let db = std::path::Path::new("/db");
        crate::fs::FileSystem::create_dir_all(&*fs, db).unwrap();
        (fs, db)
    }

    /// The header lines' text after the stamp (date, time and thread id).
    fn texts(log: &str) -> Vec<&str> {
        log.lines().map(|l| l.splitn(3, ' ').nth(2).unwrap_or("")).collect()
    }

    #[test]
    fn rolls_by_size_with_headers() {
        let (fs, db) = mem_db();
        let t0 = 1_700_000_000_000_000;
        let (_t, clock) = test_clock(t0);
        let l =
            super::InfoLog::open(&fs, db, std::path::Path::new(""), &settings(300, 0, 1000, clock)).unwrap();
        l.header(format_args!("header one"));
        l.header(format_args!("header two"));
        for i in 0..20 {
            l.log(format_args!("line {i:04} {}", "x".repeat(40)));
        }
        let (cur, old) = log_dir_files(&fs, db);
        assert!(old.len() >= 3, "{old:?}");
        // The clock stood still: each roll takes the next free microsecond.
        for (i, (name, text)) in old.iter().enumerate() {
            assert_eq!(name, &format!("LOG.old.{}", t0 + i as u64));
            // A LOG rolls when it has reached the size, before the next line.
            assert!(text.len() >= 300, "{name}: {} bytes", text.len());
            assert!(text.len() < 300 + 100, "{name}: {} bytes", text.len());
            assert_eq!(texts(text)[..2], ["header one", "header two"], "{name}");
        }
        assert_eq!(texts(&cur)[..2], ["header one", "header two"]);
        // Every line is in exactly one file, in order.
        let all: Vec<&str> = old
            .iter()
            .flat_map(|(_, t)| texts(t))
            .chain(texts(&cur))
            .filter(|t| t.starts_with("line "))
            .collect();
        assert_eq!(all.len(), 20);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn rolls_by_time_on_the_cached_clock() {
        let (fs, db) = mem_db();
        let t0 = 1_700_000_000_000_000;
        let (t, clock) = test_clock(t0);
        let l =
            super::InfoLog::open(&fs, db, std::path::Path::new(""), &settings(0, 60, 1000, clock)).unwrap();
        l.header(format_args!("the header"));
        for i in 0..50 {
            l.log(format_args!("early {i}"));
        }
        assert!(log_dir_files(&fs, db).1.is_empty());
        // 61 seconds later. RocksDB re-reads the clock once 100 checks have used the cached
        // second: the header and 99 lines used it since the LOG was made, so the 100th line
        // reads the new second and rolls before it is written.
        let t1 = t0 + 61_000_000;
        t.store(t1, std::sync::atomic::Ordering::SeqCst);
        for i in 0..49 {
            l.log(format_args!("late {i}"));
        }
        assert!(log_dir_files(&fs, db).1.is_empty(), "rolled before the clock was read again");
        l.log(format_args!("late 49"));
        let (cur, old) = log_dir_files(&fs, db);
        assert_eq!(old.len(), 1, "{old:?}");
        assert_eq!(old[0].0, format!("LOG.old.{t1}"));
        assert!(old[0].1.contains("late 48\n") && !old[0].1.contains("late 49"));
        assert_eq!(texts(&cur), ["the header", "late 49"]);
        // The new LOG's period starts at its creation: no roll before 60 more seconds.
        t.store(t1 + 59_000_000, std::sync::atomic::Ordering::SeqCst);
        for i in 0..300 {
            l.log(format_args!("later {i}"));
        }
        assert_eq!(log_dir_files(&fs, db).1.len(), 1);
    }

    #[test]
    fn keeps_keep_log_file_num_files() {
        let (fs, db) = mem_db();
        let (t, clock) = test_clock(1_000_000);
        // Old logs from before the open are counted too.
        for n in ["LOG.old.1", "LOG.old.2", "LOG.old.3"] {
            crate::fs::write_file_synced(&*fs, &db.join(n), b"old\n").unwrap();
        }
        let l = super::InfoLog::open(&fs, db, std::path::Path::new(""), &settings(100, 0, 3, clock)).unwrap();
        assert_eq!(
            log_dir_files(&fs, db).1.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(),
            ["LOG.old.2", "LOG.old.3"]
        );
        for i in 0..40 {
            t.fetch_add(1000, std::sync::atomic::Ordering::SeqCst);
            l.log(format_args!("line {i:03} {}", "y".repeat(30)));
        }
        let (cur, old) = log_dir_files(&fs, db);
        // keep_log_file_num 3: the LOG and the two newest old logs.
        assert_eq!(old.len(), 2, "{old:?}");
        assert!(old[0].1.contains("line 03") && old[1].1.contains("line 03"), "{old:?}");
        assert!(cur.contains("line 039"));
        let newest: u64 = old[1].0["LOG.old.".len()..].parse().unwrap();
        assert!(newest > 1_000_000);
    }

    #[test]
    fn json_writer_as_rocksdb() {
        use super::JsonWriter;
        let mut w = JsonWriter::new();
        w.field("job", 7).field("event", "flush_finished").field("score", -1.0);
        w.array("lsm_state", [1u64, 0, 2]);
        w.key("table_properties").start_object();
        w.field("data_size", 10u64).field("comparator", "leveldb.BytewiseComparator");
        w.array("empty", Vec::<u64>::new());
        w.end_object();
        w.field("status", "OK");
        assert_eq!(
            w.finish(),
            r#"{"job": 7, "event": "flush_finished", "score": -1, "lsm_state": [1, 0, 2], "table_properties": {"data_size": 10, "comparator": "leveldb.BytewiseComparator", "empty": []}, "status": "OK"}"#
        );
        // Strings are escaped so that the line parses as JSON.
        let mut w = JsonWriter::new();
        w.field("s", "a\"b\\c\nd\u{1}e");
        assert_eq!(w.finish(), r#"{"s": "a\"b\\c\nd\u0001e"}"#);
        // Unclosed arrays and objects are closed by finish.
        let mut w = JsonWriter::new();
        w.key("a").start_array().value(&1u64).value(&"x");
        w.end_array();
        w.key("o").start_object().field("k", 1i64);
        assert_eq!(w.finish(), r#"{"a": [1, "x"], "o": {"k": 1}}"#);
        // An array left open is closed as an array, inside the object around it.
        let mut w = JsonWriter::new();
        w.key("o").start_object().key("a").start_array().value(&2u64);
        assert_eq!(w.finish(), r#"{"o": {"a": [2]}}"#);
        // An event starts with time_micros.
        assert!(JsonWriter::event().finish().starts_with(r#"{"time_micros": "#));
    }

    #[test]
    fn doubles_as_cpp_ostream() {
        for (v, s) in [
            (-1.0, "-1"),
            (0.0, "0"),
            (0.5, "0.5"),
            (1.0, "1"),
            (1.234567, "1.23457"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (99999.95, "99999.9"),
            (999999.5, "1e+06"),
        ] {
            assert_eq!(super::format_g(v), s, "{v}");
        }
    }

    #[test]
    fn buffered_events_wait_for_flush() {
        let fs = crate::fs::MemFileSystem::default();
        let db = std::path::Path::new("/db");
        crate::fs::FileSystem::create_dir_all(&fs, db).unwrap();
        let fs: crate::fs::FileSystemRef = std::sync::Arc::new(fs);
        let l = super::InfoLog::open(
            &fs,
            db,
            std::path::Path::new(""),
            &settings(0, 0, 1, super::system_clock()),
        )
        .unwrap();
        let mut w = super::JsonWriter::event();
        w.field("job", l.new_job_id()).field("event", "trivial_move");
        l.buffer_event(w);
        assert!(l.has_buffered());
        let read = || String::from_utf8(crate::fs::read_file(&*fs, &db.join("LOG")).unwrap()).unwrap();
        assert!(!read().contains("EVENT_LOG_v1"));
        l.flush_buffered();
        assert!(!l.has_buffered());
        let text = read();
        assert!(text.contains(r#"EVENT_LOG_v1 {"time_micros": "#), "{text}");
        assert!(text.contains(r#""job": 1, "event": "trivial_move"}"#), "{text}");
        assert_eq!(l.new_job_id(), 2);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20414), (2025, 11, 22));
        assert_eq!(super::civil_from_days(11016), (2000, 2, 29));
    }
}
