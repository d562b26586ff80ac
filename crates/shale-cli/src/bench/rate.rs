//! `--benchmark_write_rate_limit`: db_bench paces its writers with a RocksDB
//! `NewGenericRateLimiter(rate)` (100 ms refill period): every period holds
//! `rate / 10` bytes, what a period leaves unused is not carried over, a request larger
//! than one period's bytes is served in pieces of at most that size, and a request that
//! does not fit takes what is there and waits for the next refill for the rest.
//!
//! db_bench asks it for `key + value` bytes after each put of the background writer of
//! the `*whilewriting` benchmarks (a limiter of its own), and for each batch's bytes after
//! each write of the fill / overwrite benchmarks (one limiter shared by their threads).

use std::sync::Mutex;
use std::time::{Duration, Instant};

const REFILL_PERIOD: Duration = Duration::from_millis(100);

pub struct WriteRateLimiter {
    refill_bytes: u64,
    state: Mutex<State>,
}

struct State {
    available: u64,
    next_refill: Instant,
}

impl WriteRateLimiter {
    /// `bytes_per_sec` > 0.
    pub fn new(bytes_per_sec: u64) -> WriteRateLimiter {
        let refill_bytes = (bytes_per_sec / 10).max(1);
        WriteRateLimiter {
            refill_bytes,
            state: Mutex::new(State { available: 0, next_refill: Instant::now() }),
        }
    }

    /// Returns once `bytes` have been granted; a poisoned limiter is an error
    /// (`shale_base::poison`).
    pub fn request(&self, bytes: u64) -> shale_base::Result<()> {
        let mut left = bytes;
        while left > 0 {
            let wait_until = {
                let mut s = shale_base::poison::lock(&self.state, "write rate limiter")?;
                let now = Instant::now();
                if now >= s.next_refill {
                    s.available = self.refill_bytes;
                    s.next_refill = now + REFILL_PERIOD;
                }
                let take = left.min(s.available);
                s.available -= take;
                left -= take;
                s.next_refill
            };
            if left > 0 {
                let now = Instant::now();
                if wait_until > now {
                    std::thread::sleep(wait_until - now);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_one_period_at_once_then_waits_for_the_next() {
        let l = WriteRateLimiter::new(10_000); // 1000 bytes per 100 ms
        let start = Instant::now();
        l.request(1000).unwrap(); // the first period's bytes, at once
        l.request(1500).unwrap(); // the next two refills' (no upper bound asserted: the machine may be loaded)
        let elapsed = start.elapsed();
        assert!(elapsed >= 2 * REFILL_PERIOD, "{elapsed:?}");
    }
}
