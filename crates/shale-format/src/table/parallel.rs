//! Parallel compression of a table's data blocks (RocksDB's `compression_opts.parallel_threads`
//! above 1, `BlockBasedTableBuilder::ParallelCompressionRep`): the thread building the table
//! (the "emit" thread) hands each finished data block to a ring of worker threads and goes
//! on building the next; the compressed blocks come back and are written to the file, with
//! their index entries, strictly in the order they were cut. A block's compression depends
//! only on its bytes, the codec settings and the table's dictionary, so the table's bytes
//! are those of a single-threaded build.
//!
//! ```text
//! emit thread:  cut block k -> jobs (k, raw)      ... cut block k+1 ...
//! workers:      jobs -> compress -> results[k]
//! emit thread:  while results[head] is there: write block head, add its index entry
//!               (head advances; at most `capacity` blocks in flight, else the emit
//!               thread compresses a queued block itself or waits for the head)
//! ```
//!
//! This is the one place the format crate starts threads: `parallel_threads` workers
//! (at most the ring size less one), made when the first block is handed over and joined
//! when the table is finished or dropped. RocksDB's rules for when it runs (which codecs,
//! which table layouts) are in [`effective_threads`]. RocksDB lets a worker write the file;
//! here the emit thread writes it (the file handle stays on one thread), which orders the
//! output the same way.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};

use super::compression::{compress_block_opts, CodecOpts, CompressionType};

/// The codec a block is compressed with: type, settings and the table's dictionary (empty:
/// none). Shared by the jobs of one table.
pub(crate) struct Codec {
    pub t: CompressionType,
    pub opts: CodecOpts,
    pub dict: Vec<u8>,
    /// RocksDB's `verify_compression`: each compressed block is decompressed and compared.
    pub verify: bool,
}

impl Codec {
    pub(crate) fn compress(&self, raw: &[u8]) -> Result<(Vec<u8>, CompressionType)> {
        compress_verified(self.t, &self.opts, raw, &self.dict, self.verify)
    }
}

/// Compresses a block (when it pays); with `verify` (RocksDB's `verify_compression`) a
/// compressed block is decompressed again and must give back `raw`: otherwise Corruption
/// with RocksDB's messages, and the table is not written.
pub(crate) fn compress_verified(
    t: CompressionType,
    opts: &CodecOpts,
    raw: &[u8],
    dict: &[u8],
    verify: bool,
) -> Result<(Vec<u8>, CompressionType)> {
    let (stored, ct) = compress_block_opts(t, opts, raw, dict)?;
    if verify && ct != CompressionType::None {
        match super::compression::uncompress_with_dict(ct, &stored, dict) {
            Ok(back) if back == raw => {}
            Ok(_) => return Err(Error::corruption("Decompressed block did not match pre-compression block")),
            Err(e) => return Err(Error::corruption(format!("Could not decompress: {e}"))),
        }
    }
    Ok((stored, ct))
}

/// The threads RocksDB 11.8.1 compresses a table's data blocks with (1: no parallel
/// compression): none without compression; the compressor's recommendation
/// (`GetRecommendedParallelThreads`: 1 for Snappy, for LZ4's fast compressor and for
/// ZSTD's negative levels; `parallel_threads` for zlib, BZip2, LZ4HC levels and ZSTD);
/// 1 with partitioned filters coupled to the index partitions (a filter partition is cut
/// where the index entry is added, which parallel compression delays).
pub fn effective_threads(
    t: CompressionType,
    level: Option<i32>,
    parallel_threads: i32,
    coupled_partitioned_filters: bool,
) -> u32 {
    let threads = u32::try_from(parallel_threads).unwrap_or(0);
    let one = match t {
        CompressionType::None | CompressionType::Snappy => true,
        // RocksDB 11.8's unified LZ4 levels: the fast compressor unless the level is 1+
        // (LZ4's default level is the fast one, LZ4HC's is HC level 9).
        CompressionType::Lz4 => level.is_none_or(|l| l < 1),
        CompressionType::Lz4hc => level.is_some_and(|l| l < 1),
        CompressionType::Zstd => level.is_some_and(|l| l < 0),
        _ => false,
    };
    if one || coupled_partitioned_filters {
        1
    } else {
        threads
    }
}

/// RocksDB's ring buffer: a power of two, at least twice the threads, at most 32.
fn ring_size(threads: u32) -> usize {
    match threads {
        9.. => 32,
        5..=8 => 16,
        3..=4 => 8,
        _ => 4,
    }
}

type Job = (u64, Vec<u8>, Arc<Codec>);
type Done = Result<(Vec<u8>, CompressionType)>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    results: HashMap<u64, Done>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is queued or on shutdown.
    work: Condvar,
    /// Signalled when a result is in.
    done: Condvar,
}

fn lock(s: &Shared) -> Result<MutexGuard<'_, State>> {
    s.state.lock().map_err(|_| Error::corruption("parallel compression: a worker thread panicked"))
}

/// A data block handed over and not yet written: what its index entry needs.
pub(crate) struct InFlight {
    pub seq: u64,
    pub raw_len: usize,
    pub last_key: Vec<u8>,
    /// The next block's first key: `Some(None)` at the table's end, None while unknown
    /// (the last block written from the dictionary buffer, until the next key arrives).
    pub next_key: Option<Option<Vec<u8>>>,
}

/// A block ready to be written, in order.
pub(crate) struct Ready {
    pub stored: Vec<u8>,
    pub t: CompressionType,
    pub last_key: Vec<u8>,
    pub next_key: Option<Vec<u8>>,
}

pub(crate) struct Pipeline {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    threads: u32,
    capacity: usize,
    next_seq: u64,
    pub(crate) in_flight: VecDeque<InFlight>,
}

fn worker(shared: Arc<Shared>) {
    loop {
        let job = {
            let Ok(mut st) = shared.state.lock() else { return };
            loop {
                if let Some(j) = st.jobs.pop_front() {
                    break j;
                }
                if st.shutdown {
                    return;
                }
                st = match shared.work.wait(st) {
                    Ok(g) => g,
                    Err(_) => return,
                };
            }
        };
        let (seq, raw, codec) = job;
        let out = codec.compress(&raw);
        let Ok(mut st) = shared.state.lock() else { return };
        st.results.insert(seq, out);
        drop(st);
        shared.done.notify_all();
    }
}

impl Pipeline {
    pub(crate) fn new(threads: u32) -> Pipeline {
        let capacity = ring_size(threads);
        Pipeline {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                done: Condvar::new(),
            }),
            workers: Vec::new(),
            threads: threads.min(capacity as u32 - 1),
            capacity,
            next_seq: 0,
            in_flight: VecDeque::new(),
        }
    }

    /// Uncompressed bytes (with trailers) handed over and not yet written: RocksDB's
    /// `estimated_inflight_size`, added to the file size for output cutting.
    pub(crate) fn inflight_bytes(&self) -> u64 {
        self.in_flight.iter().map(|b| b.raw_len as u64 + super::format::BLOCK_TRAILER_SIZE as u64).sum()
    }

    fn start_workers(&mut self) -> Result<()> {
        while self.workers.len() < self.threads as usize {
            let shared = self.shared.clone();
            let h = std::thread::Builder::new()
                .name("shale-compress".into())
                .spawn(move || worker(shared))
                .map_err(|e| Error::io("spawn a compression thread", e))?;
            self.workers.push(h);
        }
        Ok(())
    }

    /// Hands a block over. Returns the blocks now ready to write, in order; when the ring is
    /// full, first compresses queued blocks on this thread or waits for the oldest.
    pub(crate) fn submit(
        &mut self,
        raw: Vec<u8>,
        codec: &Arc<Codec>,
        last_key: Vec<u8>,
        next_key: Option<Option<Vec<u8>>>,
    ) -> Result<Vec<Ready>> {
        self.start_workers()?;
        let seq = self.next_seq;
        self.next_seq += 1;
        self.in_flight.push_back(InFlight { seq, raw_len: raw.len(), last_key, next_key });
        lock(&self.shared)?.jobs.push_back((seq, raw, codec.clone()));
        self.shared.work.notify_one();
        let mut ready = self.take_ready()?;
        while self.in_flight.len() >= self.capacity {
            self.help_or_wait()?;
            ready.extend(self.take_ready()?);
        }
        Ok(ready)
    }

    /// Sets the next key of the last block handed over, if it was unknown.
    pub(crate) fn resolve_next_key(&mut self, next: Option<&[u8]>) {
        if let Some(b) = self.in_flight.back_mut() {
            if b.next_key.is_none() {
                b.next_key = Some(next.map(<[u8]>::to_vec));
            }
        }
    }

    /// Every block handed over, compressed and in order (the table's last block's next key
    /// must be known).
    pub(crate) fn drain(&mut self) -> Result<Vec<Ready>> {
        let mut ready = self.take_ready()?;
        while !self.in_flight.is_empty() {
            if self.in_flight.front().is_some_and(|b| b.next_key.is_none()) {
                return Err(Error::invalid_argument(
                    "parallel compression: a block's index entry is unresolved",
                ));
            }
            self.help_or_wait()?;
            ready.extend(self.take_ready()?);
        }
        Ok(ready)
    }

    /// The blocks at the head whose compression is done (and next key known).
    fn take_ready(&mut self) -> Result<Vec<Ready>> {
        let mut out = Vec::new();
        let mut st = lock(&self.shared)?;
        while let Some(head) = self.in_flight.front() {
            if head.next_key.is_none() {
                break;
            }
            let Some(done) = st.results.remove(&head.seq) else { break };
            let (stored, t) = done?;
            let Some(b) = self.in_flight.pop_front() else { break };
            out.push(Ready { stored, t, last_key: b.last_key, next_key: b.next_key.unwrap_or(None) });
        }
        Ok(out)
    }

    /// Compresses the oldest queued block on this thread (RocksDB's emit thread taking up
    /// compression work when the ring is full), else waits until a result comes in.
    fn help_or_wait(&mut self) -> Result<()> {
        let mut st = lock(&self.shared)?;
        if let Some((seq, raw, codec)) = st.jobs.pop_front() {
            drop(st);
            let out = codec.compress(&raw);
            lock(&self.shared)?.results.insert(seq, out);
            return Ok(());
        }
        let head = self.in_flight.front().map(|b| b.seq);
        while head.is_some_and(|s| !st.results.contains_key(&s)) {
            if self.workers.iter().all(JoinHandle::is_finished) {
                return Err(Error::corruption("parallel compression: the worker threads stopped"));
            }
            // A bounded wait, so that workers that died are noticed.
            st = match self.shared.done.wait_timeout(st, Duration::from_millis(200)) {
                Ok((g, _)) => g,
                Err(_) => return Err(Error::corruption("parallel compression: a worker thread panicked")),
            };
        }
        Ok(())
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.shutdown = true;
            st.jobs.clear();
        }
        self.shared.work.notify_all();
        for h in self.workers.drain(..) {
            // A worker that panicked has nothing left to clean up.
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_thread_rules() {
        use CompressionType as T;
        assert_eq!(effective_threads(T::Zstd, None, 4, false), 4);
        assert_eq!(effective_threads(T::Zstd, Some(-1), 4, false), 1);
        assert_eq!(effective_threads(T::Zstd, None, 4, true), 1);
        assert_eq!(effective_threads(T::Snappy, None, 4, false), 1);
        assert_eq!(effective_threads(T::Lz4, None, 4, false), 1);
        assert_eq!(effective_threads(T::Lz4, Some(3), 4, false), 4);
        assert_eq!(effective_threads(T::Lz4hc, None, 4, false), 4);
        assert_eq!(effective_threads(T::Zlib, None, 3, false), 3);
        assert_eq!(effective_threads(T::None, None, 4, false), 1);
        assert_eq!(effective_threads(T::Zlib, None, 0, false), 0);
        assert_eq!((ring_size(2), ring_size(4), ring_size(8), ring_size(9)), (4, 8, 16, 32));
    }

    #[test]
    fn blocks_come_back_in_order() {
        let codec = Arc::new(Codec {
            t: CompressionType::Zstd,
            opts: CodecOpts::default(),
            dict: Vec::new(),
            verify: true,
        });
        let mut p = Pipeline::new(3);
        let mut got = Vec::new();
        for i in 0..100u32 {
            let raw: Vec<u8> = (0..4096u32).map(|j| ((j * (i + 1)) % 7) as u8).collect();
            let next = (i < 99).then(|| vec![i as u8 + 1]);
            got.extend(p.submit(raw, &codec, vec![i as u8], Some(next)).unwrap());
        }
        got.extend(p.drain().unwrap());
        assert_eq!(got.len(), 100);
        for (i, r) in got.iter().enumerate() {
            assert_eq!(r.last_key, vec![i as u8]);
            let raw: Vec<u8> = (0..4096u32).map(|j| ((j * (i as u32 + 1)) % 7) as u8).collect();
            assert_eq!((r.stored.clone(), r.t), codec.compress(&raw).unwrap());
        }
    }
}
