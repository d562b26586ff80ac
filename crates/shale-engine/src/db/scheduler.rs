//! Background jobs: a flush queue and a compaction queue of column families, drained by two
//! pools of threads (RocksDB's push model, its `flush_queue_` / `compaction_queue_` and the
//! HIGH and LOW thread pools).
//!
//! A family is pushed when it needs work, never found by a loop over all families: onto the
//! flush queue when a memtable becomes immutable (`schedule_flush`), onto the compaction
//! queue when a new Version makes a compaction pickable (`schedule_compaction`, called
//! after every install and after every compaction). A family is in each queue at most once
//! (`CfState::flush_queued` / `compaction_queued`), and queues are first in, first out, so
//! no family starves whatever its id.
//!
//! Pool sizes come from `max_background_jobs` split as RocksDB's `GetBGJobLimits` (a quarter
//! for flushes, at least one each) or from `max_background_flushes` /
//! `max_background_compactions` when set. As in RocksDB, only one compaction runs at a time
//! unless some family is under compaction pressure (write stall near, `DbState::speedup_cfs`);
//! then all compaction threads may run, on inputs the picker keeps apart. Flushes have their
//! own threads, so they never wait behind compactions. One flush per family runs at a time
//! (its memtables reach level 0 in order); flushes of different families run in parallel.
//! `set_db_options` changes the limits on the open database: the pools grow to a raised
//! limit (never shrink), and each thread checks the limit in force before it starts a job.
//!
//! `work_cv` says "work available" to the pools; `done_cv` says "job done" to whoever waits
//! for one (stalled writers, manual flushes and compactions, recovery, drop).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::error_handler::BgErrorReason;
use super::{DbInner, DbState};
use crate::compaction::picker::{self, Busy, CompactionPlan, RunningCompaction};
use crate::error::{Error, ErrorKind, Result};

/// The queues and what runs, guarded by the DB mutex.
pub struct JobQueues {
    flush_queue: VecDeque<u32>,
    compaction_queue: VecDeque<u32>,
    /// Compactions a LOW thread picked and handed to the BOTTOM pool (RocksDB's
    /// `ForwardToBottomPriPool`), waiting for a BOTTOM thread; already registered by
    /// `start_compaction` (their files busy, counted in `running_compactions`).
    bottom_queue: VecDeque<BottomJob>,
    pub running_flushes: usize,
    /// Every compaction picked and not yet ended: LOW ones and BOTTOM ones, queued or running.
    pub running_compactions: usize,
    /// Of `running_compactions`, those of the BOTTOM pool (RocksDB's
    /// `bg_bottom_compaction_scheduled_`), which do not count against the LOW pool's limit.
    pub bottom_compactions: usize,
    /// RocksDB's `GetBGJobLimits` in force (`set_db_options` changes them,
    /// [`DbInner::set_background_job_limits`]): flush threads run at most `max_flushes`
    /// flushes at once, compaction threads at most `max_compactions` compactions (1 without
    /// compaction pressure).
    pub max_flushes: usize,
    pub max_compactions: usize,
    /// Threads of the HIGH and LOW pools (RocksDB's pool sizes: they only grow,
    /// `IncBackgroundThreadsIfNeeded`).
    pub flush_threads: usize,
    pub compaction_threads: usize,
    /// Threads added to the pools after open (joined at close, `take_added_threads`).
    added_threads: Vec<JoinHandle<()>>,
    /// Manual compaction steps registered, oldest first (RocksDB's
    /// `manual_compaction_dequeue_`; `compact.rs::manual_step`).
    manual: VecDeque<ManualEntry>,
    next_manual: u64,
    /// Background compactions paused (RocksDB's `bg_compaction_paused_`, raised by a level
    /// refit's `PauseBackgroundWork`): no automatic or manual compaction starts.
    pub compactions_paused: usize,
    /// Manual compactions disabled (RocksDB's `manual_compaction_paused_`, raised by a level
    /// refit's `DisableManualCompaction`): a manual compaction that starts or waits meanwhile
    /// fails with Incomplete "Manual compaction paused".
    pub manual_paused: usize,
}

/// One registered manual compaction step (RocksDB's `ManualCompactionState`).
struct ManualEntry {
    token: u64,
    exclusive: bool,
    /// Its compaction job runs (RocksDB's `in_progress`).
    in_progress: bool,
}

impl JobQueues {
    pub fn new(max_flushes: usize, max_compactions: usize) -> JobQueues {
        JobQueues {
            flush_queue: VecDeque::new(),
            compaction_queue: VecDeque::new(),
            bottom_queue: VecDeque::new(),
            running_flushes: 0,
            running_compactions: 0,
            bottom_compactions: 0,
            max_flushes,
            max_compactions,
            flush_threads: 0,
            compaction_threads: 0,
            added_threads: Vec::new(),
            manual: VecDeque::new(),
            next_manual: 0,
            compactions_paused: 0,
            manual_paused: 0,
        }
    }

    /// Registers a manual compaction step (RocksDB's `AddManualCompaction`); its token.
    pub fn add_manual(&mut self, exclusive: bool) -> u64 {
        self.next_manual += 1;
        self.manual.push_back(ManualEntry { token: self.next_manual, exclusive, in_progress: false });
        self.next_manual
    }

    /// RocksDB's `HasPendingManualCompaction`: a manual compaction step is registered.
    pub fn has_pending_manual(&self) -> bool {
        !self.manual.is_empty()
    }

    /// RocksDB's `RemoveManualCompaction`.
    pub fn remove_manual(&mut self, token: u64) {
        self.manual.retain(|m| m.token != token);
    }

    pub fn set_manual_in_progress(&mut self, token: u64, v: bool) {
        if let Some(m) = self.manual.iter_mut().find(|m| m.token == token) {
            m.in_progress = v;
        }
    }

    /// RocksDB's `HasExclusiveManualCompaction`: while one is registered no automatic
    /// compaction of any family starts (`MaybeScheduleFlushOrCompaction`,
    /// `BackgroundCompaction`).
    pub fn has_exclusive_manual(&self) -> bool {
        self.manual.iter().any(|m| m.exclusive)
    }

    /// RocksDB's `ShouldntRunManualCompaction`: an exclusive step waits while any
    /// compaction of the database (LOW or BOTTOM, automatic or manual) runs or is handed
    /// over; a non-exclusive one while an exclusive step registered before it has not
    /// started (`MCOverlap`: two non-exclusive steps never wait for each other here, their
    /// files and ranges keep them apart).
    pub fn shouldnt_run_manual(&self, token: u64) -> bool {
        let Some(me) = self.manual.iter().find(|m| m.token == token) else { return false };
        if me.exclusive {
            return self.running_compactions > 0;
        }
        self.manual.iter().take_while(|m| m.token != token).any(|m| m.exclusive && !m.in_progress)
    }

    /// Takes a dropped family out of the queues.
    pub fn forget(&mut self, id: u32) {
        self.flush_queue.retain(|&x| x != id);
        self.compaction_queue.retain(|&x| x != id);
    }
}

/// A compaction handed to the BOTTOM pool.
struct BottomJob {
    id: u32,
    plan: CompactionPlan,
    running: RunningCompaction,
    /// `plan` is only the intended compaction (`compaction_options_universal.
    /// reduce_file_locking`, `picker::intended_for_bottom`): the BOTTOM thread releases it
    /// and picks again (RocksDB's `need_repick`).
    repick: bool,
}

/// Whether a picked automatic compaction goes to the BOTTOM pool (RocksDB's
/// `BackgroundCompaction`: not a trivial move nor a FIFO deletion, its output level above 0
/// and the deepest one a compaction may write, and the pool has threads).
fn forwards_to_bottom(
    config: &crate::config::DbConfig,
    cf: &super::cf::CfHandle,
    plan: &CompactionPlan,
) -> bool {
    let max_output_level = cf.config().max_output_level;
    config.env_bottom_threads > 0
        && !plan.deletion_only
        && plan.output_level > 0
        && plan.output_level == max_output_level
        && !super::compact::moves_trivially(cf, plan, false)
}

/// Pause after a failed background job before the next (RocksDB's, fixed).
const RETRY_PAUSE: Duration = Duration::from_secs(1);

impl DbInner {
    /// The counts of `file`'s table properties `compaction_pri` kByCompensatedSize weighs
    /// and FIFO's temperature change reads, as loaded when its Version was built
    /// (`file_stats.rs`): None when not loaded or the table could not be read, and the file
    /// then counts by its size alone, as in RocksDB. Reads no table (the callers hold the DB
    /// mutex).
    pub fn file_stats(
        &self,
        _cf: &super::cf::CfHandle,
        file: &crate::version::edit::FileMetaData,
    ) -> Option<picker::FileStats> {
        file.table_stats.get().flatten()
    }

    /// Queues family `id` for a flush if it has immutable memtables and none is queued or
    /// running (a running flush takes every immutable memtable before it ends).
    pub fn schedule_flush(&self, st: &mut DbState, id: u32) {
        let Some(cf) = st.cfs.get_mut(&id) else { return };
        if cf.flush_queued || cf.flush_running || cf.dropping || !cf.imm_wants_flush() {
            return;
        }
        // min_write_buffer_number_to_merge: wait for enough memtables to merge.
        if !cf.force_flush && cf.imm.len() < cf.handle.config().flush_merge_min {
            return;
        }
        if !cf.force_flush && super::flush::postpone_to_retain_udt(cf) {
            self.info_log.buffer_line(format_args!(
                "FlushRequest for column family {} is re-scheduled to retain user-defined timestamps.",
                cf.handle.name
            ));
            return;
        }
        cf.flush_queued = true;
        st.jobs.flush_queue.push_back(id);
        self.work_cv.notify_all();
    }

    /// The picker's plan for family `cf` now: the tables its running compactions hold are
    /// kept out, file statistics come from the files' metadata (`file_stats.rs`), and `oldest_snapshot` is the
    /// oldest snapshot left after the last release (bottommost-files compactions).
    fn pick_compaction(&self, cf: &super::CfState, oldest_snapshot: u64) -> Option<CompactionPlan> {
        self.pick_compaction_as(cf, oldest_snapshot, false)
    }

    /// `pick_compaction`; `require_max_output_level`: only a compaction writing the deepest
    /// level a compaction may write (a BOTTOM thread's repick, RocksDB's
    /// `require_max_output_level`; only universal's picker asks).
    fn pick_compaction_as(
        &self,
        cf: &super::CfState,
        oldest_snapshot: u64,
        require_max_output_level: bool,
    ) -> Option<CompactionPlan> {
        let stats = |f: &crate::version::edit::FileMetaData| self.file_stats(&cf.handle, f);
        let busy = Busy {
            files: Some(&cf.being_compacted),
            running: &cf.running,
            stats: Some(&stats),
            opts: None,
            oldest_snapshot,
            require_max_output_level,
        };
        picker::pick(&cf.current, cf.handle.config(), busy)
    }

    /// Queues family `id` for compaction if a compaction of it can be picked now.
    pub fn schedule_compaction(&self, st: &mut DbState, id: u32) {
        let Some(cf) = st.cfs.get_mut(&id) else { return };
        if cf.compaction_queued || cf.dropping {
            return;
        }
        let oldest_snapshot = self.oldest_snapshot_released.load(Ordering::Acquire);
        // A bottommost file this family's version holds that the oldest snapshot does not yet
        // free lowers the DB's threshold (RocksDB recomputes it at each new version).
        let threshold = picker::bottommost_mark_threshold(&cf.current, cf.handle.config(), oldest_snapshot);
        self.bottommost_threshold.fetch_min(threshold, Ordering::AcqRel);
        if self.pick_compaction(cf, oldest_snapshot).is_none() {
            return;
        }
        cf.compaction_queued = true;
        st.jobs.compaction_queue.push_back(id);
        self.work_cv.notify_all();
    }

    /// Waits until the queues are empty and no job runs (`timeout_micros` 0: no limit).
    pub fn wait_for_background_work(&self, timeout_micros: u64) -> Result<()> {
        let deadline = (timeout_micros > 0).then(|| Instant::now() + Duration::from_micros(timeout_micros));
        let mut st = self.lock_state();
        loop {
            if let Some(e) = st.errors.stop_error() {
                return Err(e);
            }
            let j = &st.jobs;
            if j.flush_queue.is_empty()
                && j.compaction_queue.is_empty()
                && j.running_flushes == 0
                && j.running_compactions == 0
            {
                return Ok(());
            }
            if self.shutting_down.load(Ordering::Acquire) {
                return Err(Error::shutdown("Database shutdown"));
            }
            let wait = match deadline {
                Some(d) if Instant::now() >= d => {
                    return Err(Error::new(ErrorKind::TimedOut, "wait_for_compact timed out"));
                }
                Some(d) => d.saturating_duration_since(Instant::now()).min(Duration::from_millis(100)),
                None => Duration::from_millis(100),
            };
            self.done_cv.wait_for(&mut st, wait);
        }
    }

    /// Registers `plan` as running in family `id`: its files are busy and its output range
    /// taken, for the picker (DB mutex held).
    pub fn start_compaction(&self, st: &mut DbState, id: u32, plan: &CompactionPlan) -> RunningCompaction {
        st.jobs.running_compactions += 1;
        Self::register_compaction(st, id, plan)
    }

    /// The bookkeeping half of `start_compaction`: `plan`'s files busy, its output range
    /// taken (RocksDB's `RegisterCompaction`), the count of compactions unchanged.
    fn register_compaction(st: &mut DbState, id: u32, plan: &CompactionPlan) -> RunningCompaction {
        let Some(cf) = st.cfs.get_mut(&id) else {
            return RunningCompaction {
                level: plan.level,
                output_level: plan.output_level,
                smallest: Vec::new(),
                largest: Vec::new(),
                proximal: None,
            };
        };
        let running = RunningCompaction::of_plan(&cf.current, cf.handle.config(), plan);
        cf.being_compacted.extend(plan.all_inputs().map(|(_, f)| f.number));
        cf.running.push(running.clone());
        running
    }

    /// Undoes `register_compaction` (RocksDB's `ReleaseCompactionFiles`).
    fn unregister_compaction(st: &mut DbState, id: u32, plan: &CompactionPlan, running: &RunningCompaction) {
        if let Some(cf) = st.cfs.get_mut(&id) {
            for (_, f) in plan.all_inputs() {
                cf.being_compacted.remove(&f.number);
            }
            if let Some(i) = cf.running.iter().position(|r| {
                r.level == running.level
                    && r.output_level == running.output_level
                    && r.smallest == running.smallest
                    && r.largest == running.largest
            }) {
                cf.running.remove(i);
            }
        }
    }

    /// Undoes `start_compaction` once `plan` has finished, deletes the tables nothing holds
    /// any more (the plan's inputs among them) and wakes the waiters.
    pub fn end_compaction(
        &self,
        st: &mut MutexGuard<'_, DbState>,
        id: u32,
        plan: CompactionPlan,
        running: &RunningCompaction,
    ) {
        st.jobs.running_compactions -= 1;
        Self::unregister_compaction(st, id, &plan, running);
        drop(plan); // its inputs may be deleted now
        self.purge_obsolete_files(st);
        self.done_cv.notify_all();
    }

    /// How many compactions may run now.
    fn compaction_limit(st: &DbState) -> usize {
        if st.speedup_cfs > 0 {
            st.jobs.max_compactions
        } else {
            1
        }
    }
}

/// Starts one background thread running `f`, lowering its priorities as the Env says.
fn spawn_worker(
    inner: &Arc<DbInner>,
    name: String,
    f: fn(Arc<DbInner>),
    (lower_cpu, lower_io): (bool, bool),
) -> Result<JoinHandle<()>> {
    let i = inner.clone();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            lower_thread_priority(lower_cpu, lower_io);
            f(i)
        })
        .map_err(|e| Error::io("spawning a background thread", e))
}

/// Adds threads to the HIGH (`flush`) or LOW pool until it has `want` (RocksDB's
/// `IncBackgroundThreadsIfNeeded`: a pool never shrinks), their handles kept in the queues.
fn grow_pool(inner: &Arc<DbInner>, st: &mut DbState, flush: bool, want: usize) -> Result<()> {
    let (cpu, io) = (inner.config.env_lower_cpu, inner.config.env_lower_io);
    loop {
        let have = if flush { st.jobs.flush_threads } else { st.jobs.compaction_threads };
        if have >= want {
            return Ok(());
        }
        let t = if flush {
            spawn_worker(inner, format!("shale:flush{have}"), flush_worker, (cpu.1, io.1))?
        } else {
            spawn_worker(inner, format!("shale:compact{have}"), compaction_worker, (cpu.0, io.0))?
        };
        st.jobs.added_threads.push(t);
        if flush {
            st.jobs.flush_threads += 1;
        } else {
            st.jobs.compaction_threads += 1;
        }
    }
}

impl DbInner {
    /// RocksDB's `SetDBOptions` with `max_background_jobs`, `max_background_flushes` or
    /// `max_background_compactions` changed: the job limits (`GetBGJobLimits`, resolved by
    /// the caller) take effect at once, a pool smaller than its new limit grows to it (pools
    /// never shrink: a lowered limit leaves threads idle, as RocksDB's), and the pools are
    /// woken to start what the new limits allow (`MaybeScheduleFlushOrCompaction`).
    pub fn set_background_job_limits(
        self: &Arc<Self>,
        max_flushes: usize,
        max_compactions: usize,
    ) -> Result<()> {
        let mut st = self.lock_state();
        st.jobs.max_flushes = max_flushes;
        st.jobs.max_compactions = max_compactions;
        if !self.shutting_down.load(Ordering::Acquire) {
            grow_pool(self, &mut st, true, max_flushes)?;
            grow_pool(self, &mut st, false, max_compactions)?;
        }
        self.work_cv.notify_all();
        Ok(())
    }

    /// The threads `set_background_job_limits` added, for the close to join (after
    /// `open::close` stopped the background work: no thread is added then).
    pub fn take_added_threads(&self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut self.lock_state().jobs.added_threads)
    }
}

pub fn start_background_threads(inner: &Arc<DbInner>) -> Result<Vec<JoinHandle<()>>> {
    let (flushes, compactions) = {
        let mut st = inner.lock_state();
        // An Env's pool sizes raise the thread counts (the job limits still decide how many
        // run at once), as RocksDB raises the Env's pools to the limits.
        let (low, high) = inner.config.env_threads;
        let sizes =
            (st.jobs.max_flushes.max(high.unwrap_or(0)), st.jobs.max_compactions.max(low.unwrap_or(0)));
        (st.jobs.flush_threads, st.jobs.compaction_threads) = sizes;
        sizes
    };
    let spawn = |name: String, f: fn(Arc<DbInner>), lower: (bool, bool)| spawn_worker(inner, name, f, lower);
    let (cpu, io) = (inner.config.env_lower_cpu, inner.config.env_lower_io);
    let mut threads = Vec::new();
    for n in 0..flushes {
        threads.push(spawn(format!("shale:flush{n}"), flush_worker, (cpu.1, io.1))?);
    }
    for n in 0..compactions {
        threads.push(spawn(format!("shale:compact{n}"), compaction_worker, (cpu.0, io.0))?);
    }
    for n in 0..inner.config.env_bottom_threads {
        threads.push(spawn(format!("shale:bottom{n}"), bottom_compaction_worker, (false, false))?);
    }
    if inner.wal_precreate_enabled() {
        threads.push(spawn(
            "shale:walpre".to_string(),
            super::wal_precreate::precreate_worker,
            (false, false),
        )?);
    }
    // Both periods change through `set_db_options` (`live_options.rs`): the threads run
    // whatever the open's values, idle while their period is 0.
    threads.push(spawn("shale:dump_st".to_string(), stats_dump_worker, (false, false))?);
    if inner.config.statistics.is_some() {
        threads.push(spawn("shale:pst_st".to_string(), stats_persist_worker, (false, false))?);
    }
    Ok(threads)
}

/// A background thread's idle wait on `work_cv`: until notified, or until `deadline` (the
/// next periodic task of RocksDB's the thread runs) when there is one. Every change a thread
/// waits for is made and notified under the DB mutex, or notified after taking it (close,
/// `set_db_options`, `schedule_purge`, a released snapshot), so no wakeup is lost between the
/// thread's look at the state and its wait; an idle database's threads do not poll.
pub(super) fn idle_wait(inner: &DbInner, st: &mut MutexGuard<'_, DbState>, deadline: Option<Duration>) {
    match deadline {
        Some(d) => {
            inner.work_cv.wait_for(st, d);
        }
        None => inner.work_cv.wait(st),
    }
    inner.bg_wakeups.fetch_add(1, Ordering::Relaxed);
}

impl DbInner {
    /// Wakes the background threads for a change made without the DB mutex (an atomic flag):
    /// the mutex is taken first, so a thread that looked at the state before the change is
    /// waiting by now and gets the notification. Never call with the DB mutex held.
    pub fn wake_workers(&self) {
        drop(self.lock_state());
        self.work_cv.notify_all();
    }
}

// The Env's `lower_*_priority` calls, applied by a pool thread to itself as RocksDB's thread
// pools do (`shale_base::sys::lower_thread_priority`; other systems refuse the calls at open,
// `env.rs`).
use shale_base::sys::lower_thread_priority;

/// Dumps the statistics texts into the info LOG every `stats_dump_period_sec` (RocksDB's
/// periodic `DumpStats` task), the period in force read at each step (0: idle; a new period
/// set by `set_db_options` dumps at once, `stats_dump_now`). It waits on `work_cv` so that
/// close wakes it at once, and builds the texts without the DB mutex (each takes it
/// briefly, as a property read does).
fn stats_dump_worker(inner: Arc<DbInner>) {
    let live = &inner.live_options;
    let period = |p: u32| Duration::from_secs(u64::from(p));
    let mut next = Instant::now() + period(live.stats_dump_period_sec());
    loop {
        {
            let mut st = inner.lock_state();
            if inner.shutting_down.load(Ordering::Acquire) {
                return;
            }
            let p = live.stats_dump_period_sec();
            if live.stats_dump_now.swap(false, Ordering::AcqRel) {
                next = Instant::now();
            }
            if p == 0 {
                // Idle until `set_db_options` sets a period (it notifies under the mutex).
                idle_wait(&inner, &mut st, None);
                continue;
            }
            let left = next.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                idle_wait(&inner, &mut st, Some(left));
                continue;
            }
        }
        inner.dump_stats();
        next = Instant::now() + period(live.stats_dump_period_sec());
    }
}

/// Takes a stats snapshot every `stats_persist_period_sec` seconds of the stats clock
/// (RocksDB's periodic `PersistStats` task, `stats_history.rs`); open took the first. It
/// waits on `work_cv` so that close wakes it at once, until the next run is due (looking at
/// a clock of the caller's every 50 ms: it moves when a test says, and nothing notifies).
fn stats_persist_worker(inner: Arc<DbInner>) {
    let poll = inner.config.stats_history_clock.is_some().then_some(Duration::from_millis(50));
    loop {
        {
            let mut st = inner.lock_state();
            if inner.shutting_down.load(Ordering::Acquire) {
                return;
            }
            // Due a period after the last run (open's first one included), whenever this
            // thread got to start; at once after `set_db_options` set a new period; never
            // while the period is 0.
            let now = inner.stats_now_seconds();
            let period = inner.live_options.stats_persist_period_sec();
            let asked = period > 0 && inner.live_options.stats_persist_now.swap(false, Ordering::AcqRel);
            match inner.stats_next_due() {
                _ if asked => {}
                _ if period == 0 => {
                    // Idle until `set_db_options` sets a period (it notifies).
                    idle_wait(&inner, &mut st, None);
                    continue;
                }
                Some(due) if now >= due => {}
                due => {
                    // No run yet (open's comes first): look again a second later.
                    let left = due.map_or(Duration::from_secs(1), |d| Duration::from_secs(d - now));
                    idle_wait(&inner, &mut st, Some(poll.map_or(left, |p| left.min(p))));
                    continue;
                }
            }
        }
        inner.persist_stats();
    }
}

/// Failures that are background errors (not a shutdown or a dropped family).
pub fn counts_as_bg_error(e: &Error) -> bool {
    !matches!(
        e.kind(),
        ErrorKind::ShutdownInProgress | ErrorKind::ColumnFamilyDropped | ErrorKind::InvalidArgument
    )
}

/// A flush thread (HIGH pool). The flush threads also make the automatic recovery
/// attempts after a hard background error (`error_handler.rs`).
fn flush_worker(inner: Arc<DbInner>) {
    let interval = Duration::from_micros(inner.config.bgerror_resume_retry_interval);
    let mut st = inner.lock_state();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        // Sleep until told, or until the next automatic recovery attempt or seqno-time sample
        // is due (RocksDB's timed tasks), whichever comes first.
        let mut idle = inner.seqno_time_wait();
        if let Some(wait) = st.errors.auto_recovery_wait(Instant::now()) {
            if wait.is_zero() {
                st.errors.start_auto_attempt(interval);
                let _ = super::unlocked(&mut st, || inner.recover(false));
                continue;
            }
            idle = Some(idle.map_or(wait, |i| i.min(wait)));
        }
        // RocksDB's periodic `kRecordSeqnoTime` task (`seqno_time.rs`): a sample when due.
        inner.record_seqno_time(super::seqno_time::Sampling::Periodic);
        if inner.purge_requested.swap(false, Ordering::AcqRel) {
            inner.purge_now(&mut st);
            continue;
        }
        // At most `max_flushes` flushes at once (a lowered limit leaves threads idle).
        let id = if st.errors.is_db_stopped() || st.jobs.running_flushes >= st.jobs.max_flushes {
            None
        } else {
            st.jobs.flush_queue.pop_front()
        };
        let Some(id) = id else {
            idle_wait(&inner, &mut st, idle);
            continue;
        };
        let Some(cf) = st.cfs.get_mut(&id) else { continue };
        cf.flush_queued = false;
        if cf.flush_running || cf.dropping {
            continue;
        }
        cf.flush_running = true;
        st.jobs.running_flushes += 1;
        // A panic in the flush (a user's comparator or collector, or a bug) halts the
        // database (`halt.rs`); the unwinding released the DB mutex and took it back.
        let r = inner.catch_job_panic("flush", || inner.flush_cf(&mut st, id));
        inner.note_halt(&mut st);
        if let Some(cf) = st.cfs.get_mut(&id) {
            cf.flush_running = false;
        }
        st.jobs.running_flushes -= 1;
        inner.done_cv.notify_all();
        if !st.jobs.flush_queue.is_empty() {
            // A thread held back by `max_flushes` may start the next.
            inner.work_cv.notify_all();
        }
        match r {
            Ok(()) => st.errors.background_job_succeeded(),
            Err(e) if counts_as_bg_error(&e) => {
                st.errors.bg_error_count += 1;
                // An automatic recovery attempt (due at once) comes before the pause.
                if st.errors.auto_recovery_wait(Instant::now()).is_none() {
                    inner.work_cv.wait_for(&mut st, RETRY_PAUSE);
                }
            }
            Err(_) => {}
        }
        // Memtables that became immutable meanwhile.
        inner.schedule_flush(&mut st, id);
    }
}

impl DbInner {
    /// At close, before background work stops: runs the queued compactions that are trivial
    /// moves (a MANIFEST edit moving a table down a level, no table read or written), so the
    /// shape a finished manual compaction leads to does not depend on whether a compaction
    /// thread woke before the close. RocksDB skips a queued job once shutting down; on a
    /// loaded machine that left rust-rocksdb's `get_with_cache_and_bulkload_test` (its L1
    /// table over the level's target, moved to L2 after `compact_range`) to chance here.
    /// Compactions that rewrite tables are still left to the next open.
    pub fn run_queued_trivial_moves_at_close(self: &Arc<Self>) {
        let mut st = self.lock_state();
        // Bounded: each move goes one level down.
        for _ in 0..64 {
            // An exclusive manual compaction or a paused background holds every automatic
            // compaction back.
            if st.errors.is_db_stopped() || st.jobs.has_exclusive_manual() || st.jobs.compactions_paused > 0 {
                return;
            }
            let mut ran = false;
            let queued: Vec<u32> = st.jobs.compaction_queue.iter().copied().collect();
            for id in queued {
                let Some(cf) = st.cfs.get_mut(&id) else { continue };
                if cf.dropping || !cf.running.is_empty() {
                    continue;
                }
                let oldest_snapshot = self.oldest_snapshot_released.load(Ordering::Acquire);
                let Some(plan) = self.pick_compaction(cf, oldest_snapshot) else {
                    continue;
                };
                // A table its family's SST partitioner will not let move is rewritten:
                // left to the next open, as other rewrites.
                if !plan.is_trivial_move()
                    || plan.level == plan.output_level
                    || !super::compact::partitioner_allows_move(&cf.handle, &plan)
                {
                    continue;
                }
                cf.compaction_queued = false;
                let handle = cf.handle.clone();
                st.jobs.compaction_queue.retain(|&q| q != id);
                let running = self.start_compaction(&mut st, id, &plan);
                let r = self.catch_job_panic("compaction", || self.run_compaction(&mut st, &handle, &plan));
                self.note_halt(&mut st);
                self.end_compaction(&mut st, id, plan, &running);
                self.done_cv.notify_all();
                if let Err(e) = r {
                    self.info_log
                        .buffer_line(format_args!("[{}] trivial move at close failed: {e}", handle.name));
                    return;
                }
                self.schedule_compaction(&mut st, id);
                ran = true;
            }
            if !ran {
                return;
            }
        }
    }
}

/// A compaction thread (LOW pool). One of them (the first to start) also runs RocksDB's
/// periodic `kTriggerCompaction` task when idle, as RocksDB runs it once on its timer, not
/// once per thread.
fn compaction_worker(inner: Arc<DbInner>) {
    let triggers = !inner.aged_trigger_claimed.swap(true, Ordering::AcqRel);
    let mut st = inner.lock_state();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        if inner.bottommost_recheck.swap(false, Ordering::AcqRel) {
            inner.recheck_bottommost_files(&mut st);
        }
        // RocksDB's `MaybeScheduleFlushOrCompaction` and `BackgroundCompaction`: nothing
        // automatic starts while background compaction is paused or an exclusive manual
        // compaction is registered (the family stays queued).
        let can_run = !st.errors.is_db_stopped()
            && st.jobs.compactions_paused == 0
            && !st.jobs.has_exclusive_manual()
            && st.jobs.running_compactions - st.jobs.bottom_compactions < DbInner::compaction_limit(&st)
            && !st.jobs.compaction_queue.is_empty();
        if !can_run {
            // Tables age with nothing else happening (ttl, periodic compaction): RocksDB's
            // periodic `kTriggerCompaction` task is the only deadline of an idle thread.
            let due = triggers.then(|| inner.aged_trigger_wait(&st));
            idle_wait(&inner, &mut st, due);
            if triggers {
                // Whenever the task is due, also on a wake for other work (it checks).
                inner.schedule_aged_compactions(&mut st);
            }
            continue;
        }
        let Some(id) = st.jobs.compaction_queue.pop_front() else { continue };
        let Some(cf) = st.cfs.get_mut(&id) else { continue };
        cf.compaction_queued = false;
        if cf.dropping {
            continue;
        }
        let handle = cf.handle.clone();
        let oldest_snapshot = inner.oldest_snapshot_released.load(Ordering::Acquire);
        let Some(plan) = inner.pick_compaction(cf, oldest_snapshot) else {
            continue;
        };
        let running = inner.start_compaction(&mut st, id, &plan);
        if forwards_to_bottom(&inner.config, &handle, &plan) {
            st.jobs.bottom_compactions += 1;
            // As RocksDB's `BackgroundCompaction`: the family is queued again while the
            // picked compaction holds its files, then the hand-over.
            inner.schedule_compaction(&mut st, id);
            let job = if handle.config().universal.reduce_file_locking {
                // `reduce_file_locking` (RocksDB's
                // `CreateIntendedCompactionForwardedToBottomPriorityPool`): the picked
                // compaction lets its files go; only its deepest input level's files (level 0:
                // the last file) stay held by an intended compaction until a BOTTOM thread
                // picks again.
                DbInner::unregister_compaction(&mut st, id, &plan, &running);
                let intended = picker::intended_for_bottom(handle.config().style, &plan);
                drop(plan);
                let running = DbInner::register_compaction(&mut st, id, &intended);
                BottomJob { id, plan: intended, running, repick: true }
            } else {
                BottomJob { id, plan, running, repick: false }
            };
            st.jobs.bottom_queue.push_back(job);
            inner.work_cv.notify_all();
            continue;
        }
        // Another compaction of this family may run beside this one.
        inner.schedule_compaction(&mut st, id);
        // A panic in the compaction (a user's compaction filter, merge operator or
        // comparator, or a bug) halts the database (`halt.rs`).
        let r = inner.catch_job_panic("compaction", || inner.run_compaction(&mut st, &handle, &plan));
        after_compaction(&inner, &mut st, id, plan, &running, r, false);
    }
}

/// What a LOW or BOTTOM thread does after a compaction job: notes a halt, releases the job's
/// inputs (and, `bottom`, its place in the BOTTOM count), records its outcome as the error
/// handler says, and schedules the family again.
fn after_compaction(
    inner: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    id: u32,
    plan: CompactionPlan,
    running: &RunningCompaction,
    r: Result<()>,
    bottom: bool,
) {
    inner.note_halt(st);
    inner.end_compaction(st, id, plan, running);
    if bottom {
        st.jobs.bottom_compactions -= 1;
    }
    inner.work_cv.notify_all();
    match r {
        Ok(()) => st.errors.background_job_succeeded(),
        Err(e) if counts_as_bg_error(&e) => {
            // ENOSPC is a soft error: writes go on and compaction retries after the pause.
            st.errors.bg_error_count += 1;
            inner.set_bg_error_in(st, e, BgErrorReason::Compaction);
            inner.work_cv.wait_for(st, RETRY_PAUSE);
        }
        Err(_) => {}
    }
    inner.schedule_compaction(st, id);
}

/// A BOTTOM pool thread: runs the compactions the LOW threads handed over (RocksDB's
/// `BGWorkBottomCompaction`), one at a time per thread, with the LOW threads' error handling.
/// Jobs still queued at close are dropped with the database, as RocksDB unschedules them.
fn bottom_compaction_worker(inner: Arc<DbInner>) {
    let mut st = inner.lock_state();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let job = if st.errors.is_db_stopped() { None } else { st.jobs.bottom_queue.pop_front() };
        let Some(BottomJob { id, plan, running, repick }) = job else {
            // A LOW thread hands a job over under the DB mutex and notifies.
            idle_wait(&inner, &mut st, None);
            continue;
        };
        let (plan, running) = if repick {
            // RocksDB's `ResetBottomPriCompactionIntent` and a pick that must write the
            // deepest level (universal; the other pickers pick as a LOW thread does). An
            // exclusive manual compaction does not hold this pick back (RocksDB's TODO).
            DbInner::unregister_compaction(&mut st, id, &plan, &running);
            drop(plan);
            let oldest_snapshot = inner.oldest_snapshot_released.load(Ordering::Acquire);
            let picked = st
                .cfs
                .get(&id)
                .filter(|cf| !cf.dropping)
                .and_then(|cf| inner.pick_compaction_as(cf, oldest_snapshot, true));
            let Some(plan) = picked else {
                if let Some(cf) = st.cfs.get(&id) {
                    inner.info_log.buffer_line(format_args!(
                        "[{}] Pre-picked compaction repicked files for compaction as required, but upon \
                         re-evaluation, no compaction was found necessary ",
                        cf.handle.name
                    ));
                    inner.info_log.buffer_line(format_args!("Compaction nothing to do"));
                }
                st.jobs.running_compactions -= 1;
                st.jobs.bottom_compactions -= 1;
                inner.done_cv.notify_all();
                inner.work_cv.notify_all();
                inner.schedule_compaction(&mut st, id);
                continue;
            };
            let running = DbInner::register_compaction(&mut st, id, &plan);
            inner.schedule_compaction(&mut st, id);
            (plan, running)
        } else {
            (plan, running)
        };
        let handle = st.cfs.get(&id).map(|cf| cf.handle.clone());
        let r = match &handle {
            Some(h) => inner.catch_job_panic("compaction", || inner.run_compaction(&mut st, h, &plan)),
            None => Ok(()),
        };
        after_compaction(&inner, &mut st, id, plan, &running, r, true);
    }
}
