//! RocksDB's `daily_offpeak_time_utc` (`options/offpeak_time_info.cc`): a daily window of UTC
//! time, "HH:mm-HH:mm" (the end minute included; a start after the end spans midnight),
//! during which RocksDB brings periodic compactions forward. When the current minute is in
//! the window, a table becomes due for periodic compaction if it would be due by the time the
//! next window starts (`VersionStorageInfo::ComputeFilesMarkedForPeriodicCompaction`): the age
//! limit is moved on by the seconds from now to the next window's start.

const SECONDS_PER_DAY: u64 = 86_400;

/// Text that is not RocksDB's "HH:mm-HH:mm" (`TryParseTimeRangeString` false).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadTimeRange;

/// A parsed `daily_offpeak_time_utc`: start and end, seconds after midnight UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DailyOffpeak {
    pub start: u32,
    pub end: u32,
}

/// RocksDB's `ParseTimeStringToSeconds`: "H:M" or "HH:mm", hours 0-23, minutes 0-59 (C++
/// stream parsing: leading blanks and a sign are taken, nothing may follow the minutes).
fn time_of_day(s: &str) -> Option<u32> {
    let (h, m) = s.split_once(':')?;
    let num = |t: &str| -> Option<i64> {
        let t = t.trim_start();
        let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (h, m) = (num(h)?, num(m)?);
    if !(0..=23).contains(&h) || !(0..=59).contains(&m) {
        return None;
    }
    u32::try_from(h * 3600 + m * 60).ok()
}

impl DailyOffpeak {
    /// RocksDB's `TryParseTimeRangeString`: Ok(None) for "" (no window), Ok(Some) for
    /// "HH:mm-HH:mm", Err for anything else.
    pub fn parse(s: &str) -> Result<Option<DailyOffpeak>, BadTimeRange> {
        if s.is_empty() {
            return Ok(None);
        }
        let parts: Vec<&str> = s.split('-').collect();
        // `StringSplit` drops one trailing empty piece ("04:00-" is one piece).
        let parts: &[&str] = match parts.as_slice() {
            [rest @ .., ""] => rest,
            all => all,
        };
        let [a, b] = parts else { return Err(BadTimeRange) };
        Ok(Some(DailyOffpeak {
            start: time_of_day(a).ok_or(BadTimeRange)?,
            end: time_of_day(b).ok_or(BadTimeRange)?,
        }))
    }

    /// RocksDB's `GetOffpeakTimeInfo` at `now` (seconds since the epoch): whether the current
    /// minute is in the window, and the seconds until the next window starts.
    pub fn info(&self, now: u64) -> (bool, u64) {
        if self.start == self.end {
            return (false, 0);
        }
        let (start, end) = (u64::from(self.start), u64::from(self.end));
        let since_midnight = now % SECONDS_PER_DAY;
        let minute = since_midnight / 60 * 60;
        let in_window =
            if start > end { start <= minute || minute <= end } else { start <= minute && minute <= end };
        let till_start = if since_midnight < start {
            start - since_midnight
        } else {
            start + SECONDS_PER_DAY - since_midnight
        };
        (in_window, till_start)
    }
}

impl std::fmt::Display for DailyOffpeak {
    /// "HH:mm-HH:mm", which `parse` reads back.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hm = |s: u32| (s / 3600, s % 3600 / 60);
        let ((a, b), (c, d)) = (hm(self.start), hm(self.end));
        write!(f, "{a:02}:{b:02}-{c:02}:{d:02}")
    }
}

/// The creation time below which a table is due for periodic compaction at `now` (RocksDB's
/// adjusted allowed time limit), None when `periodic` is 0 or longer than `now`.
pub fn periodic_limit(now: u64, periodic: u64, offpeak: Option<DailyOffpeak>) -> Option<u64> {
    if periodic == 0 || periodic > now {
        return None;
    }
    let bring_forward = match offpeak.map(|o| o.info(now)) {
        Some((true, till_start)) => till_start,
        _ => 0,
    };
    Some(now - periodic + bring_forward)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_rocksdb_11() {
        assert_eq!(DailyOffpeak::parse(""), Ok(None));
        assert_eq!(DailyOffpeak::parse("04:30-07:30"), Ok(Some(DailyOffpeak { start: 16200, end: 27000 })));
        assert_eq!(DailyOffpeak::parse("0:00-23:59"), Ok(Some(DailyOffpeak { start: 0, end: 86340 })));
        assert_eq!(DailyOffpeak::parse("23:30-04:00"), Ok(Some(DailyOffpeak { start: 84600, end: 14400 })));
        assert_eq!(DailyOffpeak { start: 84600, end: 14400 }.to_string(), "23:30-04:00");
        for bad in ["4:30", "24:00-01:00", "01:60-02:00", "01:00-02:00-03:00", "a:b-c:d", "01:00-02:00x", "-"]
        {
            assert_eq!(DailyOffpeak::parse(bad), Err(BadTimeRange), "{bad}");
        }
    }

    #[test]
    fn offpeak_brings_periodic_compaction_forward_to_the_next_window() {
        let day = 20_000 * SECONDS_PER_DAY;
        let o = DailyOffpeak { start: 3600, end: 7200 }; // 01:00-02:00
                                                         // 01:30: in the window, the next starts in 23.5 hours.
        let now = day + 5400;
        assert_eq!(o.info(now), (true, SECONDS_PER_DAY - 1800));
        assert_eq!(periodic_limit(now, 1000, Some(o)), Some(now - 1000 + SECONDS_PER_DAY - 1800));
        // 03:00: outside it, no change.
        let now = day + 10_800;
        assert_eq!(o.info(now), (false, SECONDS_PER_DAY - 7200));
        assert_eq!(periodic_limit(now, 1000, Some(o)), Some(now - 1000));
        assert_eq!(periodic_limit(now, 1000, None), Some(now - 1000));
        assert_eq!(periodic_limit(now, 0, Some(o)), None);
        // A window over midnight: 23:00-01:00 at 00:30.
        let o = DailyOffpeak { start: 82_800, end: 3600 };
        assert_eq!(o.info(day + 1800), (true, 81_000));
        // The end minute is in the window; the seconds in it are not looked at.
        let o = DailyOffpeak { start: 3600, end: 7200 };
        assert!(o.info(day + 7259).0);
        assert!(!o.info(day + 7260).0);
    }
}
