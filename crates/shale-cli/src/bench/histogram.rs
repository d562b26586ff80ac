//! RocksDB's latency histogram (monitoring/histogram.cc semantics): fixed buckets that
//! grow by 1.5x and are rounded to two significant digits (1, 2, 3, 4, 6, 10, 15, 22,
//! 34, 51, 76, 110, 170, ...), linear interpolation inside a bucket for percentiles,
//! and db_bench's text rendering with one `#` per 5% in the bucket rows.

use std::fmt::Write as _;

use shale_format::statistics::bucket_limits;

fn index_for(value: u64) -> usize {
    let limits = bucket_limits();
    let last = limits.len() - 1;
    if value >= limits[last] {
        return last;
    }
    limits.partition_point(|&l| l < value)
}

#[derive(Clone, Debug)]
pub struct Histogram {
    min: u64,
    max: u64,
    num: u64,
    sum: u64,
    sum_squares: u64,
    buckets: Vec<u64>,
}

impl Default for Histogram {
    fn default() -> Self {
        let limits = bucket_limits();
        Histogram {
            min: limits[limits.len() - 1],
            max: 0,
            num: 0,
            sum: 0,
            sum_squares: 0,
            buckets: vec![0; limits.len()],
        }
    }
}

impl Histogram {
    pub fn add(&mut self, value: u64) {
        self.buckets[index_for(value)] += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.num += 1;
        self.sum = self.sum.wrapping_add(value);
        self.sum_squares = self.sum_squares.wrapping_add(value.wrapping_mul(value));
    }

    pub fn merge(&mut self, other: &Histogram) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.num += other.num;
        self.sum = self.sum.wrapping_add(other.sum);
        self.sum_squares = self.sum_squares.wrapping_add(other.sum_squares);
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
    }

    pub fn average(&self) -> f64 {
        if self.num == 0 {
            0.0
        } else {
            self.sum as f64 / self.num as f64
        }
    }

    pub fn standard_deviation(&self) -> f64 {
        if self.num == 0 {
            return 0.0;
        }
        let (n, s, sq) = (self.num as f64, self.sum as f64, self.sum_squares as f64);
        ((sq * n - s * s) / (n * n)).max(0.0).sqrt()
    }

    pub fn percentile(&self, p: f64) -> f64 {
        let limits = bucket_limits();
        let threshold = self.num as f64 * (p / 100.0);
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            cumulative += count;
            if cumulative as f64 >= threshold {
                let left = if b == 0 { 0 } else { limits[b - 1] };
                let right = limits[b];
                let left_sum = cumulative - count;
                let pos = if count != 0 { (threshold - left_sum as f64) / count as f64 } else { 0.0 };
                let r = left as f64 + (right - left) as f64 * pos;
                return r.max(self.min as f64).min(self.max as f64);
            }
        }
        self.max as f64
    }

    pub fn median(&self) -> f64 {
        self.percentile(50.0)
    }

    /// The text RocksDB's `HistogramStat::ToString` produces.
    pub fn render(&self) -> String {
        let limits = bucket_limits();
        let mut r = String::new();
        let _ = writeln!(
            r,
            "Count: {} Average: {:.4}  StdDev: {:.2}",
            self.num,
            self.average(),
            self.standard_deviation()
        );
        let (min, max) = if self.num == 0 { (0, 0) } else { (self.min, self.max) };
        let _ = writeln!(r, "Min: {min}  Median: {:.4}  Max: {max}", self.median());
        let _ = writeln!(
            r,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            self.percentile(50.0),
            self.percentile(75.0),
            self.percentile(99.0),
            self.percentile(99.9),
            self.percentile(99.99)
        );
        r.push_str("------------------------------------------------------\n");
        if self.num == 0 {
            return r;
        }
        let mult = 100.0 / self.num as f64;
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            if count == 0 {
                continue;
            }
            cumulative += count;
            let _ = write!(
                r,
                "{} {:7}, {:7} ] {:8} {:7.3}% {:7.3}% ",
                if b == 0 { '[' } else { '(' },
                if b == 0 { 0 } else { limits[b - 1] },
                limits[b],
                count,
                mult * count as f64,
                mult * cumulative as f64
            );
            let marks = (mult * count as f64 / 5.0 + 0.5) as usize;
            r.extend(std::iter::repeat_n('#', marks));
            r.push('\n');
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_rocksdbs() {
        let l = bucket_limits();
        assert_eq!(&l[..16], &[1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250, 380, 580]);
        assert_eq!(l.len(), 109); // HistogramImpl's bucket array size
        assert_eq!(index_for(0), 0);
        assert_eq!(index_for(1), 0);
        assert_eq!(index_for(5), 4);
        assert_eq!(index_for(u64::MAX), l.len() - 1);
    }

    #[test]
    fn renders_like_rocksdb() {
        let mut h = Histogram::default();
        for v in [0u64, 1, 1, 2, 3, 5, 233] {
            h.add(v);
        }
        let text = h.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Count: 7 Average: 35.0000  StdDev: 80.85");
        assert!(lines[1].starts_with("Min: 0  Median: "), "{}", lines[1]);
        assert!(lines[1].ends_with("  Max: 233"));
        assert_eq!(lines[3], "------------------------------------------------------");
        assert_eq!(lines[4], "[       0,       1 ]        3  42.857%  42.857% #########");
        assert_eq!(lines[5], "(       1,       2 ]        1  14.286%  57.143% ###");
        assert_eq!(lines.last().copied(), Some("(     170,     250 ]        1  14.286% 100.000% ###"));
    }

    #[test]
    fn empty_histogram() {
        let h = Histogram::default();
        assert_eq!(
            h.render(),
            "Count: 0 Average: 0.0000  StdDev: 0.00\nMin: 0  Median: 0.0000  Max: 0\n\
             Percentiles: P50: 0.00 P75: 0.00 P99: 0.00 P99.9: 0.00 P99.99: 0.00\n\
             ------------------------------------------------------\n"
        );
    }
}
