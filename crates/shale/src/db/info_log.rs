//! The info log, `LOG`, in RocksDB's line format (`2026/11/22-02:41:03.123456 <tid> text`).
//! The previous LOG is renamed to `LOG.old.<micros>`; at most `keep_log_file_num` old
//! logs are kept. Writes are best effort: a failing info log never fails the database.
//!
//! With `db_log_dir` the log lives in that directory under RocksDB's names for a separate
//! log directory (`InfoLogFileName`, `OldInfoLogFileName`), so several databases can share
//! it: the database's absolute path, `//` runs collapsed, its first character dropped if
//! not kept, every character other than `[A-Za-z0-9._-]` turned to `_`, at most 255
//! characters, then `_LOG` (`/tmp/db-1` logs to `<dir>/tmp_db-1_LOG`, the old ones to
//! `<dir>/tmp_db-1_LOG.old.<micros>`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::filename::{self, FileType};
use crate::error::Result;
use crate::fs::{FileSystem, WritableFile};

pub(crate) struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

/// RocksDB's `GetInfoLogPrefix` over the normalized absolute path: the name of the info log
/// of the database at `db_abs` in a separate log directory.
pub(crate) fn info_log_prefix(db_abs: &str) -> String {
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
    pub fn open(fs: &dyn FileSystem, db: &Path, log_dir: &Path, keep: usize) -> Result<InfoLog> {
        let (dir, name): (PathBuf, String) = if log_dir.as_os_str().is_empty() {
            (db.to_path_buf(), "LOG".to_string())
        } else {
            fs.create_dir_all(log_dir)?;
            (log_dir.to_path_buf(), info_log_prefix(&absolute(db)))
        };
        let path =
            if log_dir.as_os_str().is_empty() { filename::info_log_file(&dir) } else { dir.join(&name) };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        if fs.file_exists(&path) {
            fs.rename(&path, &dir.join(format!("{name}.old.{now}")))?;
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
        if olds.len() > keep {
            for n in &olds[..olds.len() - keep] {
                let _ = fs.remove_file(&dir.join(n));
            }
        }
        Ok(InfoLog { file: Mutex::new(Some(fs.new_writable_file(&path)?)) })
    }

    /// No info log: a read-only open creates no file, as RocksDB's (which has no logger
    /// unless one is given).
    pub fn none() -> InfoLog {
        InfoLog { file: Mutex::new(None) }
    }

    pub fn log(&self, args: fmt::Arguments<'_>) {
        let line = format!("{} {:x} {}\n", timestamp(), thread_id(), args);
        if let Ok(mut f) = self.file.lock() {
            if let Some(w) = f.as_mut() {
                let _ = w.append(line.as_bytes()).and_then(|_| w.flush());
            }
        }
    }
}

fn thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

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
        let fs = crate::fs::MemFileSystem::default();
        let dir = std::path::Path::new("/logs");
        let db = std::path::Path::new("/data/db");
        for _ in 0..3 {
            let l = super::InfoLog::open(&fs, db, dir, 1).unwrap();
            l.log(format_args!("hello"));
        }
        let mut names = crate::fs::FileSystem::children(&fs, dir).unwrap();
        names.sort();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(names[0], "data_db_LOG");
        assert!(names[1].starts_with("data_db_LOG.old."), "{names:?}");
        assert!(!crate::fs::FileSystem::file_exists(&fs, &db.join("LOG")));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20414), (2025, 11, 22));
        assert_eq!(super::civil_from_days(11016), (2000, 2, 29));
    }
}
