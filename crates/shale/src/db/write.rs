//! The write path: a group-commit queue (as LevelDB's and RocksDB's write thread).
//!
//! Writers queue up; the one at the front leads. The leader makes room (switching a full
//! memtable, stalling while too many wait to be flushed), gathers the batches queued behind
//! it, writes them as one WAL record with at most one fsync, inserts them into the
//! memtables, publishes the last sequence, and wakes its followers with their results.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use parking_lot::MutexGuard;
use std::time::{Duration, Instant};

use super::error_handler::BgErrorReason;
use super::{DbInner, DbState};
use crate::batch::WriteBatch;
use crate::error::{Error, ErrorKind, Result};
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::wal::LogWriter;

/// Upper bound of a write group's bytes (RocksDB: 1 MiB; 128 KiB above a small leader).
const MAX_GROUP_BYTES: usize = 1 << 20;

pub(crate) struct PendingWrite {
    batch: Option<WriteBatch>,
    sync: bool,
    disable_wal: bool,
    /// Exclusive writers (flush, column family changes) never share a group.
    exclusive: bool,
    done: bool,
    result: Option<Result<()>>,
}

/// The queue, guarded by `DbInner::writers`; waiters sleep on `DbInner::write_cv`.
#[derive(Default)]
pub(crate) struct WriteQueue {
    queue: VecDeque<Arc<Mutex<PendingWrite>>>,
}

fn lock(w: &Arc<Mutex<PendingWrite>>) -> std::sync::MutexGuard<'_, PendingWrite> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}

impl DbInner {
    /// Writes `batch` atomically.
    pub fn write(&self, opts: &WriteOptions, batch: WriteBatch) -> Result<()> {
        if opts.sync && opts.disable_wal {
            return Err(Error::invalid_argument("Sync writes has to enable WAL."));
        }
        let me = Arc::new(Mutex::new(PendingWrite {
            batch: Some(batch),
            sync: opts.sync,
            disable_wal: opts.disable_wal,
            exclusive: false,
            done: false,
            result: None,
        }));
        let mut q = self.writers.lock();
        q.queue.push_back(me.clone());
        loop {
            if lock(&me).done {
                return lock(&me).result.take().unwrap_or(Ok(()));
            }
            if q.queue.front().is_some_and(|f| Arc::ptr_eq(f, &me)) {
                break;
            }
            self.write_cv.wait(&mut q);
        }
        drop(q);

        // Leader.
        let room = self.make_room_for_write(false, None, opts.no_slowdown);
        let mut q = self.writers.lock();
        let group = build_group(&q.queue);
        drop(q);
        let result = match room {
            Ok(()) => self.write_group(&group),
            Err(e) => Err(e),
        };
        q = self.writers.lock();
        for w in &group {
            let popped = q.queue.pop_front();
            debug_assert!(popped.is_some_and(|p| Arc::ptr_eq(&p, w)));
            let mut g = lock(w);
            g.done = true;
            g.result = Some(result.clone());
        }
        drop(q);
        self.write_cv.notify_all();
        let r = lock(&me).result.take().unwrap_or(Ok(()));
        r
    }

    /// Runs `f` as the only writer: no write group runs meanwhile.
    pub fn exclusive_write<R>(&self, f: impl FnOnce() -> R) -> R {
        let me = Arc::new(Mutex::new(PendingWrite {
            batch: None,
            sync: false,
            disable_wal: false,
            exclusive: true,
            done: false,
            result: None,
        }));
        let mut q = self.writers.lock();
        q.queue.push_back(me.clone());
        while !q.queue.front().is_some_and(|f| Arc::ptr_eq(f, &me)) {
            self.write_cv.wait(&mut q);
        }
        drop(q);
        let r = f();
        let mut q = self.writers.lock();
        q.queue.pop_front();
        drop(q);
        self.write_cv.notify_all();
        r
    }

    fn write_group(&self, group: &[Arc<Mutex<PendingWrite>>]) -> Result<()> {
        let mut guards: Vec<_> = group.iter().map(lock).collect();
        let sync = guards.iter().any(|g| g.sync);
        let disable_wal = guards[0].disable_wal;
        let mut merged;
        let batch: &mut WriteBatch = if guards.len() == 1 {
            guards[0].batch.as_mut().ok_or_else(|| Error::invalid_argument("empty write"))?
        } else {
            merged = WriteBatch::default();
            for g in guards.iter() {
                if let Some(b) = &g.batch {
                    merged.append(b);
                }
            }
            &mut merged
        };
        let count = batch.count() as u64;
        if count == 0 {
            return Ok(());
        }
        let mut wal = self.wal.lock().unwrap_or_else(|p| p.into_inner());
        let wal = &mut *wal;
        let mems = &wal.mems;
        // Every record must name a live column family before anything is written.
        {
            batch.for_each(&mut |e| {
                if mems.iter().any(|(id, _)| *id == e.cf_id) {
                    Ok(())
                } else {
                    Err(Error::invalid_argument(format!(
                        "Invalid column family specified in write batch: {}",
                        e.cf_id
                    )))
                }
            })?;
        }
        let first_seq = self.last_sequence.load(Ordering::Acquire) + 1;
        batch.set_sequence(first_seq);
        if disable_wal {
            self.unpersisted.store(true, Ordering::Release);
        } else {
            let r = wal.writer.add_record(batch.data()).and_then(|_| {
                if sync {
                    self.stats.wal_syncs.fetch_add(1, Ordering::Relaxed);
                    wal.unsynced = false;
                    wal.writer.sync()
                } else {
                    wal.unsynced = true;
                    wal.writer.flush()
                }
            });
            if let Err(e) = r {
                self.set_bg_error(e.clone(), BgErrorReason::WriteCallback);
                return Err(e);
            }
        }
        let mut seq = first_seq;
        let single = mems.len() == 1;
        batch.for_each(&mut |e| {
            let mem = if single {
                &mems[0].1
            } else {
                match mems.iter().find(|(id, _)| *id == e.cf_id) {
                    Some((_, m)) => m,
                    None => return Err(Error::invalid_argument("column family vanished")),
                }
            };
            mem.add(seq, e.value_type, e.key, e.value);
            seq += 1;
            Ok(())
        })?;
        self.last_sequence.store(first_seq + count - 1, Ordering::Release);
        self.stats.write_groups.fetch_add(1, Ordering::Relaxed);
        self.stats.writes.fetch_add(guards.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Ensures the memtables have room, switching full ones and stalling as RocksDB does.
    /// `force` switches the non-empty memtable of family `only` (every family when None),
    /// as a manual flush does.
    pub fn make_room_for_write(&self, force: bool, only: Option<u32>, no_slowdown: bool) -> Result<()> {
        let mut st = self.lock_state();
        let mut slowed = false;
        let mut forced = !force;
        let mut stall_start: Option<Instant> = None;
        loop {
            if let Some(e) = st.errors.stop_error() {
                return Err(e);
            }
            if self.shutting_down.load(Ordering::Acquire) {
                return Err(Error::shutdown("Database shutdown"));
            }
            let mut stall = false;
            let mut slow = false;
            let mut switch: Vec<u32> = Vec::new();
            for (id, cf) in st.cfs.iter() {
                let o = &cf.handle.opts;
                let l0 = cf.current.num_files(0) as i32;
                let full = cf.mem.approximate_memory_usage() >= o.write_buffer_size;
                let forcing = !forced && only.is_none_or(|o| o == *id);
                let want = (full || forcing) && !cf.mem.is_empty();
                if want && cf.imm.len() as i32 >= o.max_write_buffer_number - 1 {
                    stall = true; // too many memtables waiting for flush
                } else if !o.disable_auto_compactions && l0 >= o.level0_stop_writes_trigger {
                    stall = true;
                } else {
                    if !o.disable_auto_compactions && l0 >= o.level0_slowdown_writes_trigger {
                        slow = true;
                    }
                    if want {
                        switch.push(*id);
                    }
                }
            }
            if stall {
                if no_slowdown {
                    return Err(Error::new(ErrorKind::Incomplete, "Write stall"));
                }
                stall_start.get_or_insert_with(Instant::now);
                self.bg_cv.notify_all();
                self.bg_cv.wait_for(&mut st, Duration::from_millis(100));
                continue;
            }
            if slow && !slowed {
                if no_slowdown {
                    return Err(Error::new(ErrorKind::Incomplete, "Write stall"));
                }
                slowed = true;
                MutexGuard::unlocked(&mut st, || std::thread::sleep(Duration::from_millis(1)));
                continue;
            }
            if !switch.is_empty() {
                self.switch_memtables(&mut st, &switch, false)?;
            }
            if !forced {
                forced = true;
                continue;
            }
            break;
        }
        if let Some(t) = stall_start {
            self.stats.stall_micros.fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Moves the active memtables of `cfs` to their immutable lists and starts a new WAL;
    /// returns its number. `recovering`: for error recovery (see `roll_wal`).
    pub(crate) fn switch_memtables(&self, st: &mut DbState, cfs: &[u32], recovering: bool) -> Result<u64> {
        let new_wal = self.roll_wal(st, recovering)?;
        for id in cfs {
            if let Some(cf) = st.cfs.get_mut(id) {
                let fresh = Arc::new(MemTable::new(cf.handle.icmp.clone(), new_wal));
                let old = std::mem::replace(&mut cf.mem, fresh);
                cf.imm.push((old, new_wal));
                cf.install_super_version();
            }
        }
        self.refresh_active_memtables(st);
        st.flush_requests += 1;
        self.bg_cv.notify_all();
        Ok(new_wal)
    }

    /// Syncs the current WAL and starts a new one (skipped when the current one is empty).
    /// A failure is a memtable-switch error (fatal, as in RocksDB). When `recovering` from a
    /// background error, a WAL that saw a failed append is replaced too, the old one is
    /// abandoned without syncing (what it holds is in the memtables about to be flushed;
    /// what its buffer holds was never acknowledged), and a failure is left to the recovery
    /// attempt.
    fn roll_wal(&self, st: &mut DbState, recovering: bool) -> Result<u64> {
        let mut wal = self.wal.lock().unwrap_or_else(|p| p.into_inner());
        if wal.writer.file_size() == 0 && !(recovering && wal.writer.has_failed()) {
            return Ok(wal.number);
        }
        let number = st.next_file_number;
        let path = super::filename::wal_file(&self.path, number);
        let r = self.fs.new_writable_file(&path).and_then(|file| {
            if !recovering {
                wal.writer.sync()?;
            }
            self.fs.sync_dir(&self.path)?;
            Ok(file)
        });
        let file = match r {
            Ok(f) => f,
            Err(e) => {
                if !recovering {
                    self.set_bg_error_in(st, e.clone(), BgErrorReason::MemTable);
                }
                return Err(e);
            }
        };
        st.next_file_number += 1;
        wal.writer = LogWriter::new(file, number);
        wal.number = number;
        wal.unsynced = false;
        st.alive_wals.push_back(number);
        Ok(number)
    }
}

/// Leader plus the writers queued behind it that can share its WAL record.
fn build_group(queue: &VecDeque<Arc<Mutex<PendingWrite>>>) -> Vec<Arc<Mutex<PendingWrite>>> {
    let mut group = Vec::new();
    let Some(first) = queue.front() else { return group };
    let (lead_sync, lead_nowal, lead_size, lead_excl) = {
        let g = lock(first);
        (g.sync, g.disable_wal, g.batch.as_ref().map_or(0, |b| b.size_in_bytes()), g.exclusive)
    };
    group.push(first.clone());
    if lead_excl {
        return group;
    }
    let max = if lead_size <= 128 << 10 { lead_size + (128 << 10) } else { MAX_GROUP_BYTES };
    let mut size = lead_size;
    for w in queue.iter().skip(1) {
        let g = lock(w);
        if g.exclusive || (g.sync && !lead_sync) || g.disable_wal != lead_nowal {
            break;
        }
        let n = g.batch.as_ref().map_or(0, |b| b.size_in_bytes());
        if size + n > max {
            break;
        }
        size += n;
        drop(g);
        group.push(w.clone());
    }
    group
}
