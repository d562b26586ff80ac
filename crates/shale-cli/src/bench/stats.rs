//! Per-thread benchmark statistics, as db_bench's `Stats`: operation and byte counts,
//! start/finish times, optional latency histograms per operation type, progress
//! reports on stderr ("... finished N ops", or an indicatif bar when stderr is a
//! terminal), and the result line:
//!
//! ```text
//! %-12s : %11.3f micros/op %ld ops/sec %.3f seconds %lu operations;%s%s
//! ```
//!
//! where the tail is ` %6.1f MB/s` when bytes were counted, then the message (e.g.
//! `(N of M found)` followed by db_bench's newline) joined with a space.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::OnceLock;
use std::time::Instant;

use indicatif::ProgressBar;

use super::histogram::Histogram;

/// Operation kinds, in db_bench's OperationType order (the histogram print order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpType {
    Read,
    Write,
    Delete,
    Seek,
    Merge,
    /// db_bench's kOthers (randomtransaction's transactions).
    Others,
}

impl OpType {
    pub fn name(self) -> &'static str {
        match self {
            OpType::Read => "read",
            OpType::Write => "write",
            OpType::Delete => "delete",
            OpType::Seek => "seek",
            OpType::Merge => "merge",
            OpType::Others => "others",
        }
    }
}

/// Microseconds since the first call (a monotonic clock).
/// RocksDB's `SystemClock::TimeToString` layout (`YYYY/MM/DD-HH:MM:SS `, with its trailing
/// space), in UTC.
pub fn utc_time(secs: u64) -> String {
    let (days, rem) = (secs / 86400, secs % 86400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}/{m:02}/{d:02}-{:02}:{:02}:{:02} ", rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// The calling thread's CPU time (user and system) in nanoseconds; 0 if the clock
/// cannot be read.
pub fn thread_cpu_nanos() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn now_micros() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// Where progress goes.
#[derive(Clone)]
pub enum Progress {
    /// db_bench's `... finished N ops` lines (ending in `\r`) on stderr.
    Text,
    /// A progress bar (stderr is a terminal).
    Bar(ProgressBar),
}

pub struct Stats {
    pub start: u64,
    pub finish: u64,
    pub seconds: f64,
    pub done: u64,
    pub bytes: u64,
    pub message: String,
    pub exclude_from_merge: bool,
    /// CPU time the thread spent between `start` and `stop` (nanoseconds; summed by
    /// `merge`), for `--report_cpu_time`.
    pub cpu_nanos: u64,
    cpu_start: u64,
    last_op_finish: u64,
    next_report: u64,
    last_reported: u64,
    histogram_on: bool,
    pub hist: BTreeMap<OpType, Histogram>,
    progress: Option<Progress>,
    /// db_bench's `--stats_interval` reporting: the thread's id, every how many operations
    /// and at most how often (seconds, 0: every interval), where the last report was.
    id: usize,
    stats_interval: u64,
    stats_interval_seconds: u64,
    last_report_done: u64,
    last_report_finish: u64,
}

impl Stats {
    pub fn new(histogram_on: bool, progress: Option<Progress>) -> Stats {
        let now = now_micros();
        Stats {
            start: now,
            finish: now,
            seconds: 0.0,
            done: 0,
            bytes: 0,
            message: String::new(),
            exclude_from_merge: false,
            cpu_nanos: 0,
            cpu_start: 0,
            last_op_finish: now,
            next_report: 100,
            last_reported: 0,
            histogram_on,
            hist: BTreeMap::new(),
            progress,
            id: 0,
            stats_interval: 0,
            stats_interval_seconds: 0,
            last_report_done: 0,
            last_report_finish: now,
        }
    }

    /// Reports as db_bench's `--stats_interval` / `--stats_interval_seconds` ask: a line
    /// every `interval` operations, or (with `seconds`) when that long has passed, checked
    /// every `interval` operations (1000 when only `seconds` is given).
    pub fn set_interval(&mut self, id: usize, interval: i64, seconds: i64) {
        let seconds = seconds.max(0) as u64;
        let mut interval = interval.max(0) as u64;
        if seconds > 0 && interval == 0 {
            interval = 1000;
        }
        self.id = id;
        self.stats_interval = interval;
        self.stats_interval_seconds = seconds;
        if interval > 0 {
            self.next_report = interval;
        }
    }

    /// Resets the clock: the thread begins its work now.
    pub fn start(&mut self) {
        self.start = now_micros();
        self.cpu_start = thread_cpu_nanos();
        self.finish = self.start;
        self.last_op_finish = self.start;
        self.last_report_finish = self.start;
        self.last_report_done = 0;
    }

    /// db_bench's interval line: `<time> ... thread N: (interval,total) ops and
    /// (interval,total) ops/second in (interval,total) seconds`.
    fn interval_report(&mut self) {
        let now = now_micros();
        let since = now.saturating_sub(self.last_report_finish);
        if self.stats_interval_seconds > 0 && since < self.stats_interval_seconds * 1_000_000 {
            self.next_report += self.stats_interval;
            return;
        }
        let total = now.saturating_sub(self.start).max(1);
        eprintln!(
            "{} ... thread {}: ({},{}) ops and ({:.1},{:.1}) ops/second in ({:.6},{:.6}) seconds",
            utc_time(now / 1_000_000),
            self.id,
            self.done - self.last_report_done,
            self.done,
            (self.done - self.last_report_done) as f64 / (since.max(1) as f64 / 1e6),
            self.done as f64 / (total as f64 / 1e6),
            since as f64 / 1e6,
            total as f64 / 1e6
        );
        self.next_report += self.stats_interval;
        self.last_report_finish = now;
        self.last_report_done = self.done;
    }

    /// The next operation's latency starts now (db_bench's `ResetLastOpTime`: a write
    /// rate limiter's wait is not counted).
    pub fn reset_last_op_time(&mut self) {
        self.last_op_finish = now_micros();
    }

    pub fn stop(&mut self) {
        self.finish = now_micros();
        self.seconds = (self.finish - self.start) as f64 * 1e-6;
        self.cpu_nanos = thread_cpu_nanos().saturating_sub(self.cpu_start);
    }

    pub fn add_bytes(&mut self, n: u64) {
        self.bytes += n;
    }

    /// Appends to the message, separated by a space.
    pub fn add_message(&mut self, msg: &str) {
        if !self.message.is_empty() {
            self.message.push(' ');
        }
        self.message.push_str(msg);
    }

    pub fn finished_ops(&mut self, n: u64, op: OpType) {
        if self.histogram_on {
            let now = now_micros();
            self.hist.entry(op).or_default().add(now.saturating_sub(self.last_op_finish));
            self.last_op_finish = now;
        }
        self.done += n;
        if self.done >= self.next_report && self.stats_interval > 0 {
            self.interval_report();
        } else if self.done >= self.next_report {
            self.next_report += match self.next_report {
                0..1000 => 100,
                1000..5000 => 500,
                5000..10000 => 1000,
                10000..50000 => 5000,
                50000..100000 => 10000,
                100000..500000 => 50000,
                _ => 100000,
            };
            match &self.progress {
                Some(Progress::Text) => {
                    let mut e = std::io::stderr().lock();
                    let _ = write!(e, "... finished {} ops{:30}\r", self.done, "");
                    let _ = e.flush();
                }
                Some(Progress::Bar(bar)) => bar.inc(self.done - self.last_reported),
                None => {}
            }
            self.last_reported = self.done;
        }
    }

    pub fn merge(&mut self, other: &Stats) {
        if other.exclude_from_merge {
            return;
        }
        for (op, h) in &other.hist {
            self.hist.entry(*op).or_default().merge(h);
        }
        self.done += other.done;
        self.bytes += other.bytes;
        self.seconds += other.seconds;
        self.cpu_nanos += other.cpu_nanos;
        self.start = self.start.min(other.start);
        self.finish = self.finish.max(other.finish);
        if self.message.is_empty() {
            self.message = other.message.clone();
        }
    }

    /// `--report_cpu_time`'s line (Shale's own, not db_bench's): the CPU time the
    /// benchmark's counted threads spent, in all and per operation. Unlike the wall clock,
    /// it leaves out the time a thread waited for a CPU, so on a loaded machine it still
    /// compares two runs' work.
    pub fn cpu_line(&self, name: &str) -> String {
        let secs = self.cpu_nanos as f64 * 1e-9;
        format!(
            "{name:<12} : {:11.3} CPU-micros/op {secs:.3} CPU-seconds {} operations\n",
            secs * 1e6 / self.done.max(1) as f64,
            self.done
        )
    }

    /// The result line (with its newline) and, with `--histogram`, the histograms.
    pub fn report(&mut self, name: &str) -> String {
        if self.done < 1 {
            self.done = 1;
        }
        let mut out = format_result_line(
            name,
            self.seconds,
            self.done,
            (self.finish - self.start) as f64 * 1e-6,
            self.bytes,
            &self.message,
        );
        if self.histogram_on {
            for (op, h) in &self.hist {
                out.push_str(&format!("Microseconds per {}:\n{}\n", op.name(), h.render()));
            }
        }
        out
    }
}

/// db_bench's result line. `thread_seconds` is the sum of the threads' run times,
/// `elapsed` the wall time from the first start to the last finish.
pub fn format_result_line(
    name: &str,
    thread_seconds: f64,
    done: u64,
    elapsed: f64,
    bytes: u64,
    message: &str,
) -> String {
    let mut extra = String::new();
    if bytes > 0 {
        extra = format!("{:6.1} MB/s", (bytes as f64 / 1048576.0) / elapsed);
    }
    if !message.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(message);
    }
    let throughput = done as f64 / elapsed;
    format!(
        "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}\n",
        name,
        thread_seconds * 1e6 / done as f64,
        c_long(throughput),
        elapsed,
        done,
        if extra.is_empty() { "" } else { " " },
        extra
    )
}

/// C's `(long)x` for the values db_bench casts (truncation toward zero).
fn c_long(x: f64) -> i64 {
    if x.is_finite() {
        x as i64
    } else {
        // x86-64 converts out-of-range doubles to LONG_MIN.
        i64::MIN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_reports_follow_db_bench() {
        assert_eq!(utc_time(0), "1970/01/01-00:00:00 ");
        assert_eq!(utc_time(1_795_000_000), "2026/11/18-11:06:40 ");
        let mut s = Stats::new(false, None);
        s.set_interval(3, 0, 5);
        assert_eq!((s.stats_interval, s.next_report), (1000, 1000));
        s.start();
        // Within 5 s of the start: no line, the next check 1000 operations on.
        s.finished_ops(1000, OpType::Write);
        assert_eq!((s.next_report, s.last_report_done), (2000, 0));
        let mut s = Stats::new(false, None);
        s.set_interval(0, 10, 0);
        s.start();
        s.finished_ops(10, OpType::Write);
        assert_eq!((s.next_report, s.last_report_done), (20, 10));
    }

    #[test]
    fn result_line_is_byte_exact() {
        // db_bench 7.8.3: fillseq with 2000 ops in 0.036 s and 232000 bytes.
        let line = format_result_line("fillseq", 0.036296, 2000, 0.036386, 232000, "");
        assert_eq!(
            line,
            "fillseq      :      18.148 micros/op 54966 ops/sec 0.036 seconds 2000 operations;    6.1 MB/s\n"
        );
        let line =
            format_result_line("readrandom", 0.002954, 2000, 0.002982, 232000, "(2000 of 2000 found)\n");
        assert_eq!(
            line,
            "readrandom   :       1.477 micros/op 670690 ops/sec 0.003 seconds 2000 operations;   74.2 MB/s \
             (2000 of 2000 found)\n\n"
        );
        let line = format_result_line("compact", 0.136781, 1, 0.136781, 0, "");
        assert_eq!(line, "compact      :  136781.000 micros/op 7 ops/sec 0.137 seconds 1 operations;\n");
        let line = format_result_line("readmissing", 0.0124, 2000, 0.0124, 0, "(0 of 2000 found)\n");
        assert!(line.ends_with("2000 operations; (0 of 2000 found)\n\n"), "{line}");
        let line = format_result_line("readwhilewriting", 1.0, 10, 1.0, 0, "");
        assert!(line.starts_with("readwhilewriting :"));
    }

    #[test]
    fn merge_and_report() {
        let mut a = Stats::new(true, None);
        a.start = 1_000_000;
        a.finish = 2_000_000;
        a.seconds = 1.0;
        a.done = 500;
        a.bytes = 1048576;
        a.add_message("(1 of 2 found)");
        let mut b = Stats::new(false, None);
        b.start = 1_500_000;
        b.finish = 3_000_000;
        b.seconds = 1.5;
        b.done = 500;
        b.bytes = 1048576;
        let mut w = Stats::new(false, None);
        w.done = 99;
        w.exclude_from_merge = true;
        let mut m = Stats::new(true, None);
        m.start = u64::MAX;
        m.finish = 0;
        for s in [&a, &b, &w] {
            m.merge(s);
        }
        let out = m.report("x");
        assert_eq!(
            out,
            "x            :    2500.000 micros/op 500 ops/sec 2.000 seconds 1000 operations;    1.0 MB/s \
             (1 of 2 found)\n"
        );
    }

    #[test]
    fn histogram_block_follows_the_line() {
        let mut s = Stats::new(true, None);
        s.start();
        for _ in 0..3 {
            s.finished_ops(1, OpType::Read);
        }
        s.stop();
        let out = s.report("readrandom");
        assert!(out.contains("operations;\nMicroseconds per read:\nCount: 3 Average: "), "{out}");
        assert!(out.ends_with("%\n\n") || out.ends_with("#\n\n"), "{out:?}");
    }
}
