//! The benchmark loops, one function per db_bench method, with db_bench's semantics:
//! the same key choice (including the random draws db_bench spends on picking a
//! database), the same byte accounting and the same `(N of M found)` messages.

use std::sync::atomic::{AtomicUsize, Ordering};

use shale::{ColumnFamily, ReadOptions, WriteOptions, DB};

use super::random::{key_from_int, Mt64, ValueGenerator};
use super::rate::WriteRateLimiter;
use super::stats::{now_micros, OpType, Stats};

/// Which loop a thread runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    WriteSeq,
    WriteRandom,
    ReadSeq,
    ReadReverse,
    ReadRandom,
    SeekRandom,
    DeleteRandom,
    ReadWhileWriting,
    SeekRandomWhileWriting,
    Compact,
    MergeRandom,
    ReadRandomMergeRandom,
    /// Runs on its own path (`txn.rs`), not through `Ctx::run`.
    RandomTransaction,
}

/// What every thread of one benchmark shares.
pub struct Ctx<'a> {
    pub db: &'a DB,
    /// The column families, `default` first.
    pub cfs: Vec<&'a ColumnFamily>,
    /// `--num` (keys are drawn from `[0, flag_num)`).
    pub flag_num: i64,
    /// db_bench's `num_`: `--num`, or `--num / 1000` for fillsync.
    pub num: i64,
    pub reads: i64,
    pub writes: i64,
    pub deletes: i64,
    /// Merge benchmarks draw keys from `[0, merge_keys)`.
    pub merge_keys: i64,
    pub mergereadpercent: i32,
    pub key_size: usize,
    pub value_size: usize,
    pub compression_ratio: f64,
    pub duration: u64,
    pub seek_nexts: i32,
    pub reverse_iterator: bool,
    /// seekrandom: one snapshot per thread for its iterators.
    pub explicit_snapshot: bool,
    pub auto_refresh_iterator_with_snapshot: bool,
    /// seekrandom: one tailing iterator per thread, reused.
    pub use_tailing_iterator: bool,
    /// `--benchmark_write_rate_limit` (bytes/s; 0: none): the background writer makes a
    /// limiter of its own from it.
    pub write_rate_limit: u64,
    /// `--writer_key_offset`: added to the background writer's key numbers.
    pub writer_key_offset: u64,
    /// The limiter the threads of a fill / overwrite benchmark share.
    pub write_limiter: Option<WriteRateLimiter>,
    pub write_opts: WriteOptions,
    /// Threads of this benchmark that have finished (the writer of readwhilewriting
    /// stops once all the others have).
    pub num_done: AtomicUsize,
    pub total_threads: usize,
}

pub struct ThreadState {
    pub tid: usize,
    pub rand: Mt64,
    pub stats: Stats,
}

/// db_bench's Duration: stops after `max_ops`, or after `max_seconds` when non-zero
/// (checked every 1000 operations).
struct Duration {
    max_seconds: u64,
    max_ops: i64,
    ops: i64,
    start: u64,
}

impl Duration {
    fn new(max_seconds: u64, max_ops: i64) -> Duration {
        Duration { max_seconds, max_ops, ops: 0, start: now_micros() }
    }

    fn done(&mut self, increment: i64) -> bool {
        let increment = increment.max(1);
        self.ops += increment;
        if self.max_seconds > 0 {
            if self.ops / 1000 != (self.ops - increment) / 1000 {
                (now_micros() - self.start) / 1_000_000 >= self.max_seconds
            } else {
                false
            }
        } else {
            self.ops > self.max_ops
        }
    }
}

fn modulo(x: u64, n: i64) -> u64 {
    x % (n.max(1) as u64)
}

impl Ctx<'_> {
    fn cf_for(&self, rand_num: u64) -> &ColumnFamily {
        self.cfs[(rand_num % self.cfs.len() as u64) as usize]
    }

    pub fn run(&self, method: Method, t: &mut ThreadState) -> Result<(), String> {
        match method {
            Method::WriteSeq => self.do_write(t, false),
            Method::WriteRandom => self.do_write(t, true),
            Method::ReadSeq => self.read_sequential(t, false),
            Method::ReadReverse => self.read_sequential(t, true),
            Method::ReadRandom => self.read_random(t),
            Method::SeekRandom => self.seek_random(t),
            Method::DeleteRandom => self.delete_random(t),
            Method::ReadWhileWriting => {
                if t.tid > 0 {
                    self.read_random(t)
                } else {
                    self.bg_writer(t)
                }
            }
            Method::SeekRandomWhileWriting => {
                if t.tid > 0 {
                    self.seek_random(t)
                } else {
                    self.bg_writer(t)
                }
            }
            Method::MergeRandom => self.merge_random(t),
            Method::ReadRandomMergeRandom => self.read_random_merge_random(t),
            Method::RandomTransaction => Err("randomtransaction runs through bench/txn.rs".into()),
            Method::Compact => {
                t.rand.next_u64(); // db_bench's SelectDB draw
                self.db
                    .try_compact_range_cf(self.cfs[0], None::<&[u8]>, None::<&[u8]>)
                    .map_err(|e| e.to_string())
            }
        }
    }

    fn put(&self, rand_num: u64, key: &[u8], val: &[u8]) -> Result<(), String> {
        let r = if self.cfs.len() <= 1 {
            self.db.put_opt(key, val, &self.write_opts)
        } else {
            self.db.put_cf_opt(self.cf_for(rand_num), key, val, &self.write_opts)
        };
        r.map_err(|e| format!("put error: {e}"))
    }

    /// db_bench's MergeRandom: `reads` merges of generated values into random keys of
    /// `[0, merge_keys)`.
    fn merge_random(&self, t: &mut ThreadState) -> Result<(), String> {
        let mut gen = ValueGenerator::new(self.compression_ratio, self.value_size);
        let mut duration = Duration::new(self.duration, self.reads);
        let mut key = vec![0u8; self.key_size];
        let mut bytes = 0u64;
        while !duration.done(1) {
            t.rand.next_u64(); // db_bench's SelectDB draw
            key_from_int(modulo(t.rand.next_u64(), self.merge_keys), &mut key);
            let val = gen.generate(self.value_size);
            self.db.merge_opt(&key, val, &self.write_opts).map_err(|e| format!("merge error: {e}"))?;
            bytes += (val.len() + self.key_size) as u64;
            t.stats.finished_ops(1, OpType::Merge);
        }
        t.stats.add_bytes(bytes);
        t.stats.add_message(&format!("( updates:{})", self.reads));
        Ok(())
    }

    /// db_bench's ReadRandomMergeRandom: random keys of `[0, merge_keys)`, each merged into
    /// (`mergereadpercent` of the time) or read.
    fn read_random_merge_random(&self, t: &mut ThreadState) -> Result<(), String> {
        let mut gen = ValueGenerator::new(self.compression_ratio, self.value_size);
        let mut duration = Duration::new(self.duration, self.reads);
        let mut key = vec![0u8; self.key_size];
        let (mut gets, mut merges, mut hits, mut max_length) = (0u64, 0u64, 0u64, 0usize);
        while !duration.done(1) {
            t.rand.next_u64(); // db_bench's SelectDB draw
            key_from_int(modulo(t.rand.next_u64(), self.merge_keys), &mut key);
            let do_merge = (t.rand.next_u64() % 100) < self.mergereadpercent.max(0) as u64;
            if do_merge {
                let val = gen.generate(self.value_size);
                self.db.merge_opt(&key, val, &self.write_opts).map_err(|e| format!("merge error: {e}"))?;
                merges += 1;
                t.stats.finished_ops(1, OpType::Merge);
            } else {
                match self.db.get(&key) {
                    Ok(Some(v)) => {
                        hits += 1;
                        max_length = max_length.max(v.len());
                    }
                    Ok(None) => {}
                    Err(e) => return Err(format!("Get returned an error: {e}")),
                }
                gets += 1;
                t.stats.finished_ops(1, OpType::Read);
            }
        }
        t.stats.add_message(&format!(
            "(reads:{gets} merges:{merges} total:{} hits:{hits} maxlength:{max_length})",
            self.reads
        ));
        Ok(())
    }

    fn do_write(&self, t: &mut ThreadState, random: bool) -> Result<(), String> {
        let test_duration = if random { self.duration } else { 0 };
        let num_ops = if self.writes == 0 { self.num } else { self.writes };
        let mut duration = Duration::new(test_duration, num_ops);
        if self.num != self.flag_num {
            t.stats.add_message(&format!("({} ops)", self.num));
        }
        let mut gen = ValueGenerator::new(self.compression_ratio, self.value_size);
        let mut key = vec![0u8; self.key_size];
        let mut next_seq = 0u64;
        let mut bytes = 0u64;
        while self.num != 0 && !duration.done(1) {
            let rand_num = if random {
                t.rand.next_u64(); // db_bench picks one of its databases first
                modulo(t.rand.next_u64(), self.num)
            } else {
                next_seq += 1;
                next_seq - 1
            };
            key_from_int(rand_num, &mut key);
            let val = gen.generate(self.value_size);
            if let Some(l) = &self.write_limiter {
                // As db_bench: asked for before the write, and its wait not in the latency.
                l.request((val.len() + self.key_size) as u64).map_err(|e| e.to_string())?;
                t.stats.reset_last_op_time();
            }
            self.put(rand_num, &key, val)?;
            bytes += (val.len() + self.key_size) as u64;
            t.stats.finished_ops(1, OpType::Write);
        }
        t.stats.add_bytes(bytes);
        Ok(())
    }

    fn read_sequential(&self, t: &mut ThreadState, reverse: bool) -> Result<(), String> {
        let mut it = self.db.raw_iterator_opt(ReadOptions::default());
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        let (mut i, mut bytes) = (0i64, 0u64);
        while i < self.reads && it.valid() {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                bytes += (k.len() + v.len()) as u64;
            }
            t.stats.finished_ops(1, OpType::Read);
            i += 1;
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status().map_err(|e| format!("iterator error: {e}"))?;
        t.stats.add_bytes(bytes);
        Ok(())
    }

    fn read_random(&self, t: &mut ThreadState) -> Result<(), String> {
        let mut duration = Duration::new(self.duration, self.reads);
        let mut key = vec![0u8; self.key_size];
        let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
        while !duration.done(1) {
            t.rand.next_u64(); // db_bench's SelectDBWithCfh draw
            let key_rand = modulo(t.rand.next_u64(), self.flag_num);
            key_from_int(key_rand, &mut key);
            read += 1;
            let r = if self.cfs.len() <= 1 {
                self.db.get(&key)
            } else {
                self.db.get_cf(self.cf_for(key_rand), &key)
            };
            match r {
                Ok(Some(v)) => {
                    found += 1;
                    bytes += (key.len() + v.len()) as u64;
                }
                Ok(None) => {}
                Err(e) => return Err(format!("Get returned an error: {e}")),
            }
            t.stats.finished_ops(1, OpType::Read);
        }
        t.stats.add_bytes(bytes);
        t.stats.add_message(&format!("({found} of {read} found)\n"));
        Ok(())
    }

    fn seek_random(&self, t: &mut ThreadState) -> Result<(), String> {
        let mut duration = Duration::new(self.duration, self.reads);
        let mut key = vec![0u8; self.key_size];
        let mut value_buffer = [0u8; 256];
        let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
        let snapshot =
            (self.explicit_snapshot || self.auto_refresh_iterator_with_snapshot).then(|| self.db.snapshot());
        let read_options = || {
            let mut ro = ReadOptions::default();
            if let Some(s) = &snapshot {
                ro.set_snapshot(s);
            }
            ro.set_auto_refresh_iterator_with_snapshot(self.auto_refresh_iterator_with_snapshot);
            ro.set_tailing(self.use_tailing_iterator);
            ro
        };
        let mut tailing = self.use_tailing_iterator.then(|| self.db.raw_iterator_opt(read_options()));
        while !duration.done(1) {
            let seek_pos = modulo(t.rand.next_u64(), self.flag_num);
            key_from_int(seek_pos, &mut key);
            let mut fresh;
            let it = match &mut tailing {
                Some(it) => it,
                None => {
                    fresh = self.db.raw_iterator_opt(read_options());
                    &mut fresh
                }
            };
            it.seek(&key);
            read += 1;
            if it.key() == Some(&key[..]) {
                found += 1;
            }
            let mut j = 0;
            while j < self.seek_nexts && it.valid() {
                if let (Some(k), Some(v)) = (it.key(), it.value()) {
                    let n = v.len().min(value_buffer.len());
                    value_buffer[..n].copy_from_slice(&v[..n]);
                    bytes += (k.len() + v.len()) as u64;
                }
                if self.reverse_iterator {
                    it.prev();
                } else {
                    it.next();
                }
                j += 1;
            }
            it.status().map_err(|e| format!("iterator error: {e}"))?;
            t.stats.finished_ops(1, OpType::Seek);
        }
        std::hint::black_box(&value_buffer);
        t.stats.add_bytes(bytes);
        t.stats.add_message(&format!("({found} of {read} found)\n"));
        if self.auto_refresh_iterator_with_snapshot {
            // How many times iterators moved onto a newer SuperVersion (all threads so far).
            let n = self.db.property_int_value("rocksdb.shale.iterator-auto-refreshes").ok().flatten();
            t.stats.add_message(&format!("({} auto-refreshes)\n", n.unwrap_or(0)));
        }
        Ok(())
    }

    fn delete_random(&self, t: &mut ThreadState) -> Result<(), String> {
        let mut duration = Duration::new(self.duration, self.deletes);
        let mut key = vec![0u8; self.key_size];
        while !duration.done(1) {
            t.rand.next_u64(); // db_bench's SelectDB draw
            let k = modulo(t.rand.next_u64(), self.flag_num);
            key_from_int(k, &mut key);
            self.db.delete_opt(&key, &self.write_opts).map_err(|e| format!("del error: {e}"))?;
            t.stats.finished_ops(1, OpType::Delete);
        }
        Ok(())
    }

    /// The extra writer thread: random overwrites until every reader has finished; its
    /// stats are left out of the reported result.
    fn bg_writer(&self, t: &mut ThreadState) -> Result<(), String> {
        let mut gen = ValueGenerator::new(self.compression_ratio, self.value_size);
        t.stats.exclude_from_merge = true;
        let mut key = vec![0u8; self.key_size];
        let mut bytes = 0u64;
        let limiter = (self.write_rate_limit > 0).then(|| WriteRateLimiter::new(self.write_rate_limit));
        loop {
            t.rand.next_u64(); // db_bench's SelectDB draw
            if self.num_done.load(Ordering::Acquire) + 1 >= self.total_threads {
                break;
            }
            let k = modulo(t.rand.next_u64(), self.flag_num);
            key_from_int(k + self.writer_key_offset, &mut key);
            let val = gen.generate(self.value_size);
            self.db.put_opt(&key, val, &self.write_opts).map_err(|e| format!("put or merge error: {e}"))?;
            bytes += (key.len() + val.len()) as u64;
            t.stats.finished_ops(1, OpType::Write);
            if let Some(l) = &limiter {
                l.request((key.len() + val.len()) as u64).map_err(|e| e.to_string())?;
            }
        }
        t.stats.add_bytes(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_counts_ops() {
        let mut d = Duration::new(0, 3);
        let mut n = 0;
        while !d.done(1) {
            n += 1;
        }
        assert_eq!(n, 3);
    }
}
