//! The info log, `LOG`, in RocksDB's line format (`2026/11/22-02:41:03.123456 <tid> text`).
//! The previous LOG is renamed to `LOG.old.<micros>`; at most `keep_log_file_num` old
//! logs are kept. Writes are best effort: a failing info log never fails the database.

use std::fmt;
use std::path::Path;
use std::sync::Mutex;

use super::filename::{self, FileType};
use crate::error::Result;
use crate::fs::{FileSystem, WritableFile};

pub(crate) struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

impl InfoLog {
    pub fn open(fs: &dyn FileSystem, dir: &Path, keep: usize) -> Result<InfoLog> {
        let path = filename::info_log_file(dir);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        if fs.file_exists(&path) {
            fs.rename(&path, &dir.join(format!("LOG.old.{now}")))?;
        }
        let mut olds: Vec<String> = fs
            .children(dir)?
            .into_iter()
            .filter(|n| filename::parse_file_name(n) == Some(FileType::OldInfoLog))
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
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20414), (2025, 11, 22));
        assert_eq!(super::civil_from_days(11016), (2000, 2, 29));
    }
}
