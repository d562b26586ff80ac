//! Background work: one flush thread and one compaction thread, plus manual compaction
//! (`compact_range`). At most one compaction runs at a time (`DbState::compaction_running`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use super::cf::CfHandle;
use super::error_handler::BgErrorReason;
use super::{DBCommon, DBInner, DbInner, DbState, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::compaction::job::{self, JobInput};
use crate::compaction::picker::{self, CompactionPlan};
use crate::error::{Error, ErrorKind, Result};
use crate::iter::merging::MergingIterator;
use crate::iter::range_del;
use crate::iter::BoxedIterator;
use crate::version::edit::VersionEdit;
use crate::version::VersionBuilder;

pub(crate) fn start_background_threads(inner: &Arc<DbInner>) -> Result<Vec<JoinHandle<()>>> {
    let spawn = |name: &str, f: fn(Arc<DbInner>)| {
        let i = inner.clone();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || f(i))
            .map_err(|e| Error::io("spawning a background thread", e))
    };
    Ok(vec![spawn("shale:flush", flush_loop)?, spawn("shale:compact", compaction_loop)?])
}

/// Pause after a failed background job before the next (RocksDB's, fixed).
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// The flush thread; it also makes the automatic recovery attempts (`error_handler.rs`).
fn flush_loop(inner: Arc<DbInner>) {
    let interval = Duration::from_micros(inner.opts.bgerror_resume_retry_interval);
    let mut st = inner.lock_state();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let mut idle = Duration::from_secs(1);
        if let Some(wait) = st.errors.auto_recovery_wait(Instant::now()) {
            if wait.is_zero() {
                st.errors.start_auto_attempt(interval);
                let _ = MutexGuard::unlocked(&mut st, || inner.recover(false));
                continue;
            }
            idle = idle.min(wait);
        }
        let work =
            !st.errors.is_db_stopped() && !st.flush_running && st.cfs.values().any(|c| !c.imm.is_empty());
        if !work {
            inner.bg_cv.wait_for(&mut st, idle);
            continue;
        }
        st.flush_running = true;
        let r = inner.flush_one(&mut st);
        st.flush_running = false;
        inner.bg_cv.notify_all();
        match r {
            Ok(_) => st.errors.background_job_succeeded(),
            Err(e) if counts_as_bg_error(&e) => {
                st.errors.bg_error_count += 1;
                // An automatic recovery attempt (due at once) comes before the pause.
                if st.errors.auto_recovery_wait(Instant::now()).is_none() {
                    inner.bg_cv.wait_for(&mut st, RETRY_PAUSE);
                }
            }
            Err(_) => {}
        }
    }
}

/// Failures that are background errors (not a shutdown or a dropped family).
fn counts_as_bg_error(e: &Error) -> bool {
    !matches!(
        e.kind(),
        ErrorKind::ShutdownInProgress | ErrorKind::ColumnFamilyDropped | ErrorKind::InvalidArgument
    )
}

fn compaction_loop(inner: Arc<DbInner>) {
    let mut st = inner.lock_state();
    loop {
        if inner.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let pick =
            if !st.errors.is_db_stopped() && !st.compaction_running && st.manual_compaction_waiting == 0 {
                st.cfs.values().find_map(|c| {
                    picker::pick(&c.current, &c.handle.opts, &c.compact_pointer)
                        .map(|p| (c.handle.clone(), p))
                })
            } else {
                None
            };
        let Some((cf, plan)) = pick else {
            inner.bg_cv.wait_for(&mut st, Duration::from_secs(1));
            continue;
        };
        st.compaction_running = true;
        let r = inner.run_compaction(&mut st, &cf, &plan);
        st.compaction_running = false;
        inner.bg_cv.notify_all();
        match r {
            Ok(()) => st.errors.background_job_succeeded(),
            Err(e) if counts_as_bg_error(&e) => {
                // ENOSPC is a soft error: writes go on and this thread retries after the pause.
                st.errors.bg_error_count += 1;
                inner.set_bg_error_in(&mut st, e, BgErrorReason::Compaction);
                inner.bg_cv.wait_for(&mut st, RETRY_PAUSE);
            }
            Err(_) => {}
        }
    }
}

impl DbInner {
    /// Runs `plan` on `cf` and installs the result. `state` is unlocked while files are
    /// written; the caller has set `compaction_running`.
    pub(crate) fn run_compaction(
        self: &Arc<Self>,
        st: &mut MutexGuard<'_, DbState>,
        cf: &Arc<CfHandle>,
        plan: &CompactionPlan,
    ) -> Result<()> {
        let mut edit = VersionEdit { column_family: cf.id, ..Default::default() };
        for f in &plan.inputs {
            edit.deleted_files.push((plan.level as u32, f.number));
        }
        for f in &plan.next_inputs {
            edit.deleted_files.push((plan.output_level as u32, f.number));
        }
        let mut outputs_numbers = Vec::new();
        if plan.is_trivial_move() {
            edit.new_files.push((plan.output_level as u32, (*plan.inputs[0]).clone()));
        } else {
            let snapshots = self.snapshot_list();
            let this = self.clone();
            let created = parking_lot::Mutex::new(Vec::new());
            let result = MutexGuard::unlocked(st, || -> Result<job::JobResult> {
                let (iter, tombstones) = this.compaction_input(cf, plan)?;
                let builder_options = |n: u64| super::flush::builder_options(cf, n);
                let new_number = || {
                    let n = this.new_output_number();
                    created.lock().push(n);
                    n
                };
                let r = job::run(JobInput {
                    fs: &*this.fs,
                    dir: &this.path,
                    iter,
                    tombstones,
                    snapshots,
                    bottommost: plan.bottommost,
                    target_file_size: cf.opts.target_file_size(plan.output_level),
                    builder_options: &builder_options,
                    new_file_number: &new_number,
                })?;
                if !r.outputs.is_empty() {
                    this.fs.sync_dir(&this.path)?;
                }
                Ok(r)
            });
            let result = match result {
                Ok(r) => r,
                Err(e) => {
                    self.info_log.log(format_args!("[{}] compaction failed: {e}", cf.name));
                    // Its partial outputs are garbage now.
                    for n in created.into_inner() {
                        st.pending_outputs.remove(&n);
                    }
                    super::flush::purge_obsolete_files(self, st);
                    return Err(e);
                }
            };
            self.stats.compaction_bytes_read.fetch_add(plan.input_bytes(), Ordering::Relaxed);
            self.stats.compaction_bytes_written.fetch_add(result.bytes_written, Ordering::Relaxed);
            outputs_numbers = created.into_inner();
            for m in result.outputs {
                edit.new_files.push((plan.output_level as u32, m));
            }
        }
        let installed = (|| -> Result<()> {
            let Some(c) = st.cfs.get(&cf.id) else { return Ok(()) };
            let mut b = VersionBuilder::new(&c.current);
            b.apply(&edit)?;
            let version = Arc::new(b.build());
            super::open::log_and_apply(self, st, std::slice::from_ref(&edit))?;
            let c = st.cfs.get_mut(&cf.id).ok_or_else(|| Error::corruption("family vanished"))?;
            if let Some(last) = plan.inputs.iter().map(|f| &f.largest).max_by(|a, b| cf.icmp.compare(a, b)) {
                c.compact_pointer[plan.level] = last.clone();
            }
            c.current = version.clone();
            c.install_super_version();
            st.live_versions.push(Arc::downgrade(&version));
            Ok(())
        })();
        for n in &outputs_numbers {
            st.pending_outputs.remove(n);
        }
        installed?;
        self.stats.compactions.fetch_add(1, Ordering::Relaxed);
        self.info_log.log(format_args!(
            "[{}] Compacted {}@{} + {}@{} files to L{} ({} outputs){}",
            cf.name,
            plan.inputs.len(),
            plan.level,
            plan.next_inputs.len(),
            plan.output_level,
            plan.output_level,
            edit.new_files.len(),
            if plan.is_trivial_move() { " (trivial move)" } else { "" }
        ));
        super::flush::purge_obsolete_files(self, st);
        Ok(())
    }

    /// The merged iterator over a compaction's inputs, and their range tombstones.
    fn compaction_input(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        plan: &CompactionPlan,
    ) -> Result<(BoxedIterator, Vec<range_del::RangeTombstone>)> {
        let mut children: Vec<BoxedIterator> = Vec::new();
        let mut tombstones = Vec::new();
        let mut add_level = |level: usize, files: &[Arc<crate::version::edit::FileMetaData>]| -> Result<()> {
            for f in files {
                let e = self.table_cache.get(cf, f)?;
                tombstones.extend(range_del::from_table_entries(e.table.range_tombstones())?);
                if level == 0 {
                    children.push(e.table.iter(false));
                }
            }
            if level > 0 && !files.is_empty() {
                children.push(Box::new(self.level_iterator_of(cf, files, false)));
            }
            Ok(())
        };
        add_level(plan.level, &plan.inputs)?;
        add_level(plan.output_level, &plan.next_inputs)?;
        Ok((Box::new(MergingIterator::new(cf.icmp.clone(), children)), tombstones))
    }

    /// RocksDB's CompactRange: flush, then compact each level holding keys of the range
    /// into the next, down to the deepest such level.
    pub(crate) fn compact_range_impl(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.flush_memtables(true, Some(cf.id))?;
        let mut st = self.lock_state();
        st.manual_compaction_waiting += 1;
        while st.compaction_running {
            self.bg_cv.wait(&mut st);
        }
        st.manual_compaction_waiting -= 1;
        st.compaction_running = true;
        let r = (|| -> Result<()> {
            let num_levels = cf.opts.num_levels as usize;
            let deepest = {
                let c = st.cfs.get(&cf.id).ok_or_else(|| Error::invalid_argument("column family dropped"))?;
                (0..num_levels).rev().find(|&l| !c.current.overlapping_files(l, begin, end).is_empty())
            };
            let Some(deepest) = deepest else { return Ok(()) };
            let last = if deepest == 0 { 1 } else { deepest };
            for level in 0..last {
                let plan = {
                    let c =
                        st.cfs.get(&cf.id).ok_or_else(|| Error::invalid_argument("column family dropped"))?;
                    picker::pick_manual(&c.current, level, begin, end)
                };
                if let Some(plan) = plan {
                    if let Err(e) = self.run_compaction(&mut st, cf, &plan) {
                        if counts_as_bg_error(&e) {
                            self.set_bg_error_in(&mut st, e.clone(), BgErrorReason::Compaction);
                        }
                        return Err(e);
                    }
                    st.errors.background_job_succeeded();
                }
            }
            Ok(())
        })();
        st.compaction_running = false;
        self.bg_cv.notify_all();
        r
    }
}

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Compacts the keys in `[start, end]` (None: unbounded) of the default column family.
    pub fn compact_range<S: AsRef<[u8]>, E: AsRef<[u8]>>(&self, start: Option<S>, end: Option<E>) {
        let _ = self.compact_range_opt_result(&self.default_handle().handle, start, end);
    }

    pub fn compact_range_cf<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
    ) {
        if let Ok(h) = self.inner.handle_of(cf) {
            let _ = self.compact_range_opt_result(&h, start, end);
        }
    }

    /// `compact_range` with its outcome (rust-rocksdb's `compact_range` returns nothing).
    pub fn try_compact_range_cf<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
    ) -> Result<()> {
        let h = self.inner.handle_of(cf)?;
        self.compact_range_opt_result(&h, start, end)
    }

    fn compact_range_opt_result<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &Arc<CfHandle>,
        start: Option<S>,
        end: Option<E>,
    ) -> Result<()> {
        let s = start.as_ref().map(|s| s.as_ref());
        let e = end.as_ref().map(|e| e.as_ref());
        let r = self.inner.compact_range_impl(cf, s, e);
        if let Err(err) = &r {
            self.inner.info_log.log(format_args!("[{}] manual compaction failed: {err}", cf.name));
        }
        r
    }
}
