//! The threads that run `async_io`'s background reads (`prefetch.rs`): one small pool per
//! database, owned by its table cache, joined when the database closes.
//!
//! RocksDB 11.8.1 submits such reads to the file system (`FSRandomAccessFile::ReadAsync`,
//! io_uring on Linux; without it the posix file system reads synchronously and calls back).
//! Shale reads on a few threads instead of one thread per read: at most [`POOL_THREADS`],
//! started as reads need them, each taking the oldest queued read. A read is plain file
//! I/O and never waits on another, so a bounded pool cannot deadlock. A read submitted
//! after the pool shut down (an iterator that outlives the database's close), or to a
//! table opened without a pool (`SstFileReader`), runs on the caller's thread at once, as
//! RocksDB's posix fallback does.
//!
//! Threads are named `shale-prefetch`.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

/// The most threads a pool runs.
pub const POOL_THREADS: usize = 4;

type Job = Box<dyn FnOnce() + Send>;

struct State {
    queue: VecDeque<Job>,
    /// Threads started and not yet exited.
    threads: usize,
    /// Of those, threads waiting for a job.
    idle: usize,
    shutdown: bool,
}

/// What the pool's threads share with it.
struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

/// A database's pool of background-read threads. Dropping it shuts it down.
pub struct ReadPool {
    shared: Arc<Shared>,
    handles: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for ReadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.shared.state.lock();
        write!(f, "ReadPool({} threads, {} queued)", st.threads, st.queue.len())
    }
}

impl Default for ReadPool {
    fn default() -> Self {
        ReadPool {
            shared: Arc::new(Shared {
                state: Mutex::new(State { queue: VecDeque::new(), threads: 0, idle: 0, shutdown: false }),
                cv: Condvar::new(),
            }),
            handles: Mutex::new(Vec::new()),
        }
    }
}

impl ReadPool {
    pub fn new() -> Arc<ReadPool> {
        Arc::new(ReadPool::default())
    }

    /// Runs `job` on a thread of the pool (at once on this thread once the pool shut down,
    /// or when no thread can be started).
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) {
        let mut st = self.shared.state.lock();
        if st.shutdown {
            drop(st);
            job();
            return;
        }
        st.queue.push_back(Box::new(job));
        if st.idle > 0 || st.threads >= POOL_THREADS {
            drop(st);
            self.shared.cv.notify_one();
            return;
        }
        st.threads += 1;
        drop(st);
        let shared = self.shared.clone();
        let started =
            std::thread::Builder::new().name("shale-prefetch".to_string()).spawn(move || shared.work());
        match started {
            Ok(h) => self.handles.lock().push(h),
            Err(_) => {
                // No thread: run what is queued here (this job among it).
                let jobs: Vec<Job> = {
                    let mut st = self.shared.state.lock();
                    st.threads -= 1;
                    if st.threads == 0 {
                        st.queue.drain(..).collect()
                    } else {
                        Vec::new()
                    }
                };
                for j in jobs {
                    j();
                }
            }
        }
    }

    /// The threads running now.
    pub fn threads(&self) -> usize {
        self.shared.state.lock().threads
    }

    /// Lets the threads finish what is queued, then joins them; later reads run on their
    /// callers' threads. Called when the database closes.
    pub fn shutdown(&self) {
        self.shared.state.lock().shutdown = true;
        self.shared.cv.notify_all();
        let handles = std::mem::take(&mut *self.handles.lock());
        let me = std::thread::current().id();
        for h in handles {
            if h.thread().id() == me {
                continue;
            }
            // A panicked read has reported its error through its own channel.
            let _ = h.join();
        }
    }
}

impl Shared {
    fn work(&self) {
        let mut st = self.state.lock();
        loop {
            if let Some(job) = st.queue.pop_front() {
                drop(st);
                // A read that panics reports it through its own result (`prefetch.rs`); the
                // thread goes on.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                st = self.state.lock();
                continue;
            }
            if st.shutdown {
                st.threads -= 1;
                return;
            }
            st.idle += 1;
            self.cv.wait(&mut st);
            st.idle -= 1;
        }
    }
}

impl Drop for ReadPool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The result of one background read, handed from the pool's thread to the reader.
pub struct ReadResult<T> {
    slot: Arc<(Mutex<Option<T>>, Condvar)>,
}

impl<T: Send + 'static> ReadResult<T> {
    /// Runs `read` on `pool` (on this thread without one) and returns where its result
    /// arrives.
    pub fn start(pool: Option<&Arc<ReadPool>>, read: impl FnOnce() -> T + Send + 'static) -> ReadResult<T> {
        let slot = Arc::new((Mutex::new(None), Condvar::new()));
        let out = slot.clone();
        let job = move || {
            let r = read();
            *out.0.lock() = Some(r);
            out.1.notify_all();
        };
        match pool {
            Some(p) => p.submit(job),
            None => job(),
        }
        ReadResult { slot }
    }

    /// Waits for the result.
    pub fn wait(self) -> T {
        let mut g = self.slot.0.lock();
        loop {
            if let Some(r) = g.take() {
                return r;
            }
            self.slot.1.wait(&mut g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_reads_share_a_few_threads_and_all_complete() {
        let pool = ReadPool::new();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let results: Vec<ReadResult<usize>> = (0..40)
            .map(|i| {
                let gate = gate.clone();
                ReadResult::start(Some(&pool), move || {
                    let mut open = gate.0.lock();
                    while !*open {
                        gate.1.wait(&mut open);
                    }
                    i * 2
                })
            })
            .collect();
        assert_eq!(pool.threads(), POOL_THREADS);
        *gate.0.lock() = true;
        gate.1.notify_all();
        let got: Vec<usize> = results.into_iter().map(ReadResult::wait).collect();
        assert_eq!(got, (0..40).map(|i| i * 2).collect::<Vec<_>>());
        pool.shutdown();
        assert_eq!(pool.threads(), 0);
        // After the shutdown a read runs on the caller's thread.
        let me = std::thread::current().id();
        let r = ReadResult::start(Some(&pool), move || std::thread::current().id() == me);
        assert!(r.wait());
        assert!(ReadResult::start(None, || 7).wait() == 7);
    }
}
