//! Parsing db_bench's result lines:
//!
//! ```text
//! readrandom   :       1.477 micros/op 670690 ops/sec 0.003 seconds 2000 operations;   74.2 MB/s (2000 of 2000 found)
//! ```

/// One benchmark's result line.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultLine {
    pub name: String,
    pub micros_per_op: f64,
    pub ops_per_sec: u64,
    pub seconds: f64,
    pub operations: u64,
    /// `(found, read)` from ` (N of M found)`.
    pub found: Option<(u64, u64)>,
}

/// Parses one line; None if it is not a result line.
pub fn parse_line(line: &str) -> Option<ResultLine> {
    let (name, rest) = line.split_once(" : ")?;
    let name = name.trim();
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    let mut words = rest.split_whitespace();
    let micros_per_op = words.next()?.parse().ok()?;
    (words.next()? == "micros/op").then_some(())?;
    let ops_per_sec = words.next()?.parse().ok()?;
    (words.next()? == "ops/sec").then_some(())?;
    let seconds = words.next()?.parse().ok()?;
    (words.next()? == "seconds").then_some(())?;
    let operations = words.next()?.parse().ok()?;
    let (_, tail) = rest.split_once(" operations;")?;
    let found = tail.rfind('(').and_then(|i| {
        let inner = tail[i + 1..].strip_suffix(" found)")?;
        let (f, r) = inner.split_once(" of ")?;
        Some((f.parse().ok()?, r.parse().ok()?))
    });
    Some(ResultLine { name: name.to_string(), micros_per_op, ops_per_sec, seconds, operations, found })
}

/// All result lines of a run's stdout, in order; a name seen again gets `#2`, `#3`, ...
pub fn parse_output(stdout: &str) -> Vec<ResultLine> {
    let mut out: Vec<ResultLine> = Vec::new();
    for line in stdout.lines() {
        if let Some(mut r) = parse_line(line) {
            let seen = out
                .iter()
                .filter(|x| x.name == r.name || x.name.starts_with(&format!("{}#", r.name)))
                .count();
            if seen > 0 {
                r.name = format!("{}#{}", r.name, seen + 1);
            }
            out.push(r);
        }
    }
    out
}

/// The P99.9 latency (µs) of each result line's histogram (`--histogram=1`): db_bench prints
/// a benchmark's histograms right after its result line, so a `Percentiles:` line belongs to
/// the result line above it. Returns `(name, P99.9)` for the first histogram of each.
pub fn parse_p999(stdout: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut last: Option<String> = None;
    for line in stdout.lines() {
        if let Some(r) = parse_line(line) {
            last = Some(r.name);
            continue;
        }
        let Some(rest) = line.trim_start().strip_prefix("Percentiles:") else { continue };
        let mut words = rest.split_whitespace();
        while let Some(w) = words.next() {
            if w == "P99.9:" {
                if let (Some(v), Some(name)) = (words.next().and_then(|v| v.parse().ok()), last.take()) {
                    out.push((name, v));
                }
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_db_bench_lines() {
        let r = parse_line(
            "readrandom   :       1.477 micros/op 670690 ops/sec 0.003 seconds 2000 operations;   74.2 MB/s (2000 of 2000 found)",
        )
        .unwrap();
        assert_eq!(r.name, "readrandom");
        assert_eq!(r.micros_per_op, 1.477);
        assert_eq!((r.ops_per_sec, r.operations), (670690, 2000));
        assert_eq!(r.found, Some((2000, 2000)));
        let r = parse_line("readwhilewriting :       9.435 micros/op 101323 ops/sec 0.197 seconds 20000 operations;    0.3 MB/s (620 of 20000 found)").unwrap();
        assert_eq!(r.name, "readwhilewriting");
        assert_eq!(r.found, Some((620, 20000)));
        let r =
            parse_line("compact      :  136781.000 micros/op 7 ops/sec 0.137 seconds 1 operations;").unwrap();
        assert_eq!((r.ops_per_sec, r.found), (7, None));
        assert!(parse_line("fillseq      : skipped (--use_existing_db is true)").is_none());
        assert!(parse_line("Keys:       16 bytes each").is_none());
    }

    #[test]
    fn p999_follows_its_result_line() {
        let text = "fillrandom   :       4.000 micros/op 250000 ops/sec 4.000 seconds 1000000 operations;\n\
                    Microseconds per write:\n\
                    Count: 1000000 Average: 4.0  StdDev: 1.0\n\
                    Percentiles: P50: 3.10 P75: 4.20 P99: 9.80 P99.9: 44.11 P99.99: 100.69\n\
                    readseq      :       1.000 micros/op 1 ops/sec 1.000 seconds 1 operations;\n\
                    stats line without a histogram\n";
        assert_eq!(parse_p999(text), vec![("fillrandom".to_string(), 44.11)]);
    }

    #[test]
    fn repeated_names_are_numbered() {
        let text = "readseq      :       1.000 micros/op 1 ops/sec 1.000 seconds 1 operations;\n\
                    readseq      :       1.000 micros/op 1 ops/sec 1.000 seconds 1 operations;\n";
        let names: Vec<_> = parse_output(text).into_iter().map(|r| r.name).collect();
        assert_eq!(names, ["readseq", "readseq#2"]);
    }
}
