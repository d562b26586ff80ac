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
    last_op_finish: u64,
    next_report: u64,
    last_reported: u64,
    histogram_on: bool,
    pub hist: BTreeMap<OpType, Histogram>,
    progress: Option<Progress>,
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
            last_op_finish: now,
            next_report: 100,
            last_reported: 0,
            histogram_on,
            hist: BTreeMap::new(),
            progress,
        }
    }

    /// Resets the clock: the thread begins its work now.
    pub fn start(&mut self) {
        self.start = now_micros();
        self.finish = self.start;
        self.last_op_finish = self.start;
    }

    pub fn stop(&mut self) {
        self.finish = now_micros();
        self.seconds = (self.finish - self.start) as f64 * 1e-6;
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
        if self.done >= self.next_report {
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
        self.start = self.start.min(other.start);
        self.finish = self.finish.max(other.finish);
        if self.message.is_empty() {
            self.message = other.message.clone();
        }
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
