//! The write path: a group-commit queue (as LevelDB's and RocksDB's write thread).
//!
//! Writers queue up; the one at the front leads. The leader gathers the batches queued
//! behind it, writes them as one WAL record with at most one fsync, inserts them into the
//! memtables, publishes the last sequence, and wakes its followers with their results.
//!
//! **Waiting** (RocksDB's `WriteThread::AwaitState`). Each queued writer has its own
//! signal ([`Writer`]): whoever changes what it waits for — its write done, a memtable insert
//! handed to it, it reached the front of the queue and leads — sets the signal and unparks
//! its thread, so a finished group wakes its own writers and the next leader, not every
//! waiter. A waiter spins about a microsecond (at most 200 pauses, as RocksDB's, and at most
//! a microsecond by the clock: a pause takes 7 ns on some processors, 100 on others), then
//! (`enable_write_thread_adaptive_yield`, default true) yields the processor in a loop for up
//! to `write_thread_max_yield_usec` (default 100), giving up after three yields of
//! `write_thread_slow_yield_usec` (default 3) or more, then parks. Whether the yield loop is
//! tried at all follows a decaying credit of sampled waits, one per place a writer waits
//! (`WaitSite`), as RocksDB's: when yielding mostly ends in blocking anyway (more runnable
//! threads than processors), writers block at once. A handoff caught while
//! spinning or yielding costs no futex wait and wake.
//!
//! **Parallel memtable inserts** (`allow_concurrent_memtable_write`, on by default, as
//! RocksDB's parallel memtable writers): when a group has more than one writer and no merge,
//! the leader, after the WAL write, hands each member its own batch and first sequence
//! (`InsertTask`) and wakes them; each inserts its batch with `MemTable::add_concurrently`
//! (compare-and-swap skiplist links, a per-thread arena shard). The last insert to finish
//! (`ParallelGroup::remaining`) notes the full memtables, publishes the group's last
//! sequence — only then, so no reader sees part of a group — and completes the group. The
//! group stays at the front of the queue until then, so the memtables cannot be switched
//! under it. With the option off, the leader inserts every batch in order. A member found
//! blocked (`Writer::parked`: it spun and yielded, then parked) is not woken to insert: the
//! leader inserts its batch too, and a group whose members all are blocked is inserted by
//! the leader in order, as with the option off. Waking a parked thread costs the waker a
//! system call and the batch a scheduling delay, more than inserting a small batch; the
//! option still lets every member that is running insert at once, and the records, their
//! sequences and what readers see are the same either way.
//!
//! The cost of a write does not depend on the number of column families: a record finds
//! its memtable by family id in a vector, and the leader takes the DB mutex only when the
//! write controller asks for attention (`write_controller.rs`): a memtable it found full
//! (switched by the next write, then queued for flush, as RocksDB's flush scheduler), a
//! write stall, a background error.
//!
//! **Prefetching a family's lines.** With many families written at random, what a write
//! touches of its family outside the skiplist's nodes is out of the cache: the family's
//! entry in the active-memtable table, the memtable's first line (the counters), the point
//! list's head tower and arena state, the arena tail where the new node and value go, and
//! the first node the search loads. Each would be a miss, one after the other, in the
//! insert. The writer asks for them in three steps, each once the step before had time to
//! arrive: the table entry as it enters `write` (`DbInner::mems_hint`, the table's address,
//! is a hint only); the memtable and list lines while the leader checks the batch's
//! families (`InsertHint::prefetch`), so that their misses overlap the WAL write (a system
//! call); after it, the arena tail and the first search node, which those lines name
//! (`InsertHint::prefetch_next_entry`), so that these misses overlap each other rather than
//! come one after the other in the insert. Only the first `PREFETCH_RECORDS` families of a
//! group are asked for, and none for a group inserted in parallel (other threads insert).
//!
//! **Pipelined writes** (`enable_pipelined_write`, RocksDB's `PipelinedWriteImpl`). The leader
//! writes (and syncs) the WAL as above, taking its first sequence after the last one given out
//! (`MemWriters::last_allocated`, ahead of the published one while groups wait), then queues
//! its group on the memtable writers' queue and leaves the write queue, waking the next
//! leader, whose WAL write now runs while this group inserts. A group without merges (with
//! `allow_concurrent_memtable_write`) inserts at once (its leader alone, or every member at
//! once as above), with compare-and-swap inserts, while earlier groups may still insert: it
//! does not wait for them, so no writer waits out another's insert before its own. Any other
//! group waits for the front of the queue (every earlier group published), and the groups
//! queued behind it wait for the front too. A group its leader inserts alone, with no writer
//! queued behind it and no group left to insert (one writer thread, as db_bench's fill
//! benchmarks), is such a serial group: it inserts at once with plain inserts, as RocksDB's
//! memtable writer group of one writer does (compare-and-swap inserts cost it about a tenth
//! more processor time), and a group whose WAL write runs meanwhile waits for it to insert. Whoever finishes its inserts publishes the
//! finished groups at the front of the queue — their last sequences set in WAL order, their
//! writers completed — so no reader sees part of a group or a later group before an earlier
//! one, and a writer returns only once its batch is in the memtables and published, as on
//! the ordinary path. (RocksDB's memtable writer group inserts in order instead, and a
//! WAL leader whose group is not at the front waits: with one-record groups that wait is
//! most writes' on a machine with fewer processors than writers.) A leader about to switch memtables (the slow path) and an exclusive
//! writer first wait for the queue to drain (RocksDB's `WaitForPendingWrites`,
//! `WaitForMemTableWriters`), so no group inserts into a memtable that was switched. A failed
//! memtable insert is a background error (RocksDB's `HandleMemTableInsertFailure`). RocksDB's
//! refusals are kept: with `unordered_write` or `atomic_flush` (`Options::check_supported`).
//!
//! **unordered_write** (RocksDB's `WriteImplWALOnly` with `kDoPublishLastSeq`, then
//! `UnorderedWriteMemtable`). The leader writes the group's WAL record, publishes the group's
//! last sequence at once, counts each batch to insert as pending
//! (`MemWriters::unordered_pending`), hands every member its own batch (`OwnInsert`) and
//! leaves the write queue; each writer then inserts its batch concurrently with everyone
//! (the next groups included) and returns when its own insert is done. What RocksDB
//! documents follows: read-your-own-writes holds and a snapshot never sees a write with a
//! larger sequence, but a snapshot is no longer immutable (a write below it may land after
//! it was taken). A memtable switch and an exclusive writer (flush, ingestion, family
//! changes) first wait for the pending inserts (RocksDB's `WaitForPendingWrites`). RocksDB's
//! checks are kept: `Options::check_supported` refuses it with `enable_pipelined_write` or
//! without `allow_concurrent_memtable_write`, `TransactionDB::open` refuses it
//! (WRITE_COMMITTED), a family with `max_successive_merges` refuses it.
//!
//! **wal_bytes_per_sync.** The WAL writer is built with the option
//! (`LogWriter::with_bytes_per_sync`): each flush of a group to the file may start the
//! kernel's write-back of what lies more than 1 MiB behind the end (`wal/writer.rs`).
//!
//! **max_successive_merges.** As RocksDB's `MemTableInserter::MergeCF`: a merge whose key
//! already has `max_successive_merges` merge operands on top of the active memtable is
//! resolved while it is inserted — the key's value at the merge's sequence (every earlier
//! write, those of the same batch included) merged with the new operand — and the result
//! goes into the memtable as a value; the WAL keeps the operand (recovery inserts operands,
//! as RocksDB's, which does not merge while recovering). Without
//! `strict_max_successive_merges` RocksDB reads the value from memory only
//! (`kBlockCacheTier`) and stores the operand when a block is not cached; Shale reads the
//! memtables only and stores the operand when a table file's key range holds the key, or
//! when the merge function fails. With `strict_max_successive_merges` (a family option,
//! mutable; rust-rocksdb 0.25 has no setter) the value is read whole at the merge's
//! sequence, table files included, as RocksDB's; a key with no value keeps the operand.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::error_handler::BgErrorReason;
use super::{ActiveMems, DbInner, DbState};
use crate::batch::Batch as WriteBatch;
use crate::config::WriteSettings;
use crate::error::{Error, ErrorKind, Result};
use crate::key::{SequenceNumber, ValueType};
use crate::memtable::MemTable;
use crate::statistics::{record_tick, Histogram, Statistics, StopWatch, Ticker, WriteGroupCounts};
use crate::wal::LogWriter;
use shale_format::perf::{Field, PerfTimer};

/// The writers of a write group, leader first: held in place up to this many (a lone writer,
/// the common group under light load, allocates nothing).
const GROUP_INLINE: usize = 4;
type Group = smallvec::SmallVec<[Arc<Writer>; GROUP_INLINE]>;

/// How many records' memtables the write leader prefetches (`InsertHint::prefetch`)
/// before its WAL write: with many column families written at random, each record's
/// memtable and skiplist headers are cold lines, and the WAL write (a system call) is time
/// in which their misses can complete. Records further into a large group would be
/// inserted too late for their lines to still be in the cache.
const PREFETCH_RECORDS: usize = 8;

pub struct PendingWrite {
    batch: Option<WriteBatch>,
    sync: bool,
    disable_wal: bool,
    /// Exclusive writers (flush, column family changes) never share a group.
    exclusive: bool,
    /// `WriteOptions::ignore_missing_column_families`: records of a family that does not
    /// exist (dropped) are skipped (their sequence numbers used), not an error.
    ignore_missing: bool,
    /// `WriteOptions::memtable_insert_hint_per_batch`.
    hint_per_batch: bool,
    done: bool,
    result: Option<Result<()>>,
    /// This writer's share of a parallel memtable insert, handed over by its group's leader.
    task: Option<InsertTask>,
    /// `enable_pipelined_write`: this writer's group reached the front of the memtable
    /// writers' queue (`MemWriters`), so it inserts now.
    mem_lead: bool,
    /// `unordered_write`: this writer's batch, in the WAL and its sequences published, to
    /// insert on its own (it returns when its insert is done).
    own_insert: Option<OwnInsert>,
}

/// `unordered_write` (RocksDB's `UnorderedWriteMemtable`): one writer's batch to insert by
/// itself after its group's WAL write published the sequences.
pub struct OwnInsert {
    batch: WriteBatch,
    first_seq: u64,
    mems: Arc<ActiveMems>,
    ignore_missing: bool,
    hint_per_batch: bool,
}

/// One writer's batch to insert into the memtables, in parallel with the rest of its group.
pub struct InsertTask {
    batch: WriteBatch,
    first_seq: u64,
    group: Arc<ParallelGroup>,
    /// The writer's `ignore_missing_column_families`.
    ignore_missing: bool,
    /// The writer's `memtable_insert_hint_per_batch`.
    hint_per_batch: bool,
}

/// A write group whose members insert their own batches at once (RocksDB's parallel
/// memtable writers): the last to finish publishes the sequence and completes the group.
pub struct ParallelGroup {
    /// The active memtables as the leader found them (they cannot change: the group holds
    /// write leadership until it completes).
    mems: Arc<ActiveMems>,
    members: Vec<Arc<Writer>>,
    /// Inserts not yet finished.
    remaining: AtomicUsize,
    /// Families whose memtable the inserts found full.
    full: parking_lot::Mutex<Vec<u32>>,
    error: parking_lot::Mutex<Option<Error>>,
    /// The group's last sequence, published when every insert finished.
    last_seq: u64,
    /// A pipelined group (`enable_pipelined_write`): it left the write queue after its WAL
    /// write and is completed off the memtable writers' queue.
    pipelined: bool,
}

/// What a write group's WAL stage leaves to its memtable stage.
pub struct Logged {
    /// The active memtables as the WAL leader found them (no switch before the group's
    /// inserts finish: a switch needs write leadership and, pipelined, an empty memtable
    /// writers' queue).
    mems: Arc<ActiveMems>,
    first_seq: u64,
    /// The group's records.
    count: u64,
    /// Members insert their own batches at once.
    parallel: bool,
    /// Some writer ignores missing families.
    skip_missing: bool,
    /// The leader's `memtable_insert_hint_per_batch` (a serial group's insert).
    leader_hint: bool,
    /// The group's records as one batch when it inserts serially: several writers' merged,
    /// or a lone leader's own, taken from its state (None: the leader's own batch, still in
    /// its state, or a parallel group's).
    merged: Option<WriteBatch>,
    /// Its records may go into the memtables while other groups insert
    /// (`allow_concurrent_memtable_write` and no merge): pipelined, such a group inserts as
    /// soon as it leaves the write queue, not when it reaches the front of the memtable
    /// writers' queue. Cleared for a lone group made serial (`enter_memtable_writers`).
    concurrent: bool,
}

/// A pipelined group in the memtable writers' queue (`MemWriters`), from its WAL write until
/// its sequences are published.
struct MemEntry {
    /// The group's leader (the group's identity in the queue).
    leader: Arc<Writer>,
    /// Every writer of the group, leader first, completed when the group is published;
    /// empty for a group of the leader alone (`MemEntry::writers`).
    members: Group,
    /// The group's last sequence.
    last_seq: u64,
    /// The group inserts with plain (not compare-and-swap) inserts: no other group may insert
    /// meanwhile, so it waits for the front and the groups after it wait for it.
    serial: bool,
    /// The leader waits for the front (`PendingWrite::mem_lead`) before it inserts.
    waiting: bool,
    /// Its inserts finished with this result; published (and completed) once every group
    /// before it is.
    finished: Option<Result<()>>,
}

impl MemEntry {
    /// The writers to complete when the group is published.
    fn writers(&self) -> &[Arc<Writer>] {
        if self.members.is_empty() {
            std::slice::from_ref(&self.leader)
        } else {
            &self.members
        }
    }
}

/// `enable_pipelined_write` (RocksDB's `PipelinedWriteImpl`): the memtable writers' queue.
/// A write group that wrote the WAL leaves the write queue (so the next group's WAL write
/// starts) and queues here. A group whose records may be inserted concurrently
/// (`Logged::concurrent`) inserts at once (its leader alone, or every member at once), while
/// earlier groups may still insert; any other group (merges, or
/// `allow_concurrent_memtable_write` off) waits for the front, and the groups queued after it
/// wait for the front too. A group whose inserts finished is published — its last sequence
/// set, its writers completed — when every group before it was: whoever finishes pops the
/// finished groups at the front, so sequences are published in WAL order and no reader sees
/// part of a group. Its lock is a leaf.
#[derive(Default)]
pub struct MemWriters {
    /// The groups past their WAL write and not yet published, in WAL order.
    queue: Mutex<VecDeque<MemEntry>>,
    /// Notified when the queue empties (`wait_for_memtable_writers`).
    drained: parking_lot::Condvar,
    /// The last sequence given to a group by its WAL leader (WAL leaders only, one at a
    /// time); ahead of the published last sequence while groups wait here.
    last_allocated: std::sync::atomic::AtomicU64,
    /// Groups that began their WAL write while an earlier group had not finished its
    /// memtable inserts: the pipeline at work (`DB::pipelined_write_overlaps`).
    overlaps: std::sync::atomic::AtomicU64,
    /// The queue's length, stored under its lock whenever it changes: the WAL leader reads
    /// it (for `overlaps`) without the lock.
    queued: AtomicUsize,
    /// `unordered_write`: writers whose batch is in the WAL, its sequences published, and
    /// not yet in the memtables (RocksDB's `pending_memtable_writes_`); `drained` is
    /// notified, under `queue`'s lock, when it falls to zero.
    unordered_pending: AtomicUsize,
}

/// What a write group left to do after its WAL write.
enum GroupOutcome {
    /// Inserted and published: complete the group.
    Done,
    /// Members insert in parallel; the leader's share: its own batch, if it has records, and
    /// the batches of members that were blocked (`Writer::parked`).
    Parallel(smallvec::SmallVec<[InsertTask; 1]>),
    /// Pipelined: in the WAL, left to the memtable stage (`memtable_stage`).
    Logged(Logged),
}

/// The queue, guarded by `DbInner::writers`; each waiter waits on its own [`Writer`].
#[derive(Default)]
pub struct WriteQueue {
    queue: VecDeque<Arc<Writer>>,
}

/// One writer in the queue: its write, and how it is woken (see "Waiting" in the module
/// comment).
pub struct Writer {
    state: Mutex<PendingWrite>,
    /// Set by whoever changed what this writer waits for: its write done, a memtable insert
    /// handed to it, or it reached the front of the queue.
    signal: AtomicBool,
    /// The writer's thread, unparked with the signal.
    thread: std::thread::Thread,
    /// The writer is blocked (parked) waiting for its signal, not spinning or yielding: a
    /// write leader inserts such a member's batch itself rather than wake it to do so (see
    /// "Parallel memtable inserts" in the module comment).
    parked: AtomicBool,
}

impl Writer {
    fn new(w: PendingWrite) -> Arc<Writer> {
        Arc::new(Writer {
            state: Mutex::new(w),
            signal: AtomicBool::new(false),
            thread: std::thread::current(),
            parked: AtomicBool::new(false),
        })
    }

    /// Wakes the writer: its state changed (under the lock that guards that state, which the
    /// waker has released).
    fn wake(&self) {
        self.signal.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

thread_local! {
    /// This thread's writer of its last write, kept for its next one (`OwnWriter`).
    static SPARE_WRITER: std::cell::Cell<Option<Arc<Writer>>> = const { std::cell::Cell::new(None) };
}

/// The writer of one call to `DbInner::write`, taken from the thread's spare when nothing
/// else holds that one (as RocksDB's `WriteThread::Writer` lives on the writer's stack, no
/// allocation per write), and given back when the write returns if its group let go of it
/// (a follower's leader may still hold it; it is then freed as any `Arc`). Dereferences to
/// the `Arc` the queue and the groups share.
struct OwnWriter(Arc<Writer>);

impl OwnWriter {
    fn new(w: PendingWrite) -> OwnWriter {
        let spare = SPARE_WRITER.try_with(std::cell::Cell::take).ok().flatten();
        if let Some(mut a) = spare {
            if let Some(wr) = Arc::get_mut(&mut a) {
                *wr.state.get_mut() = w;
                *wr.signal.get_mut() = false;
                return OwnWriter(a);
            }
        }
        OwnWriter(Writer::new(w))
    }
}

impl std::ops::Deref for OwnWriter {
    type Target = Arc<Writer>;
    fn deref(&self) -> &Arc<Writer> {
        &self.0
    }
}

impl Drop for OwnWriter {
    fn drop(&mut self) {
        if let Some(wr) = Arc::get_mut(&mut self.0) {
            // Nothing else holds it: kept for the thread's next write (this `Arc` goes when
            // the field drops), its batch freed now.
            let st = wr.state.get_mut();
            st.batch = None;
            st.result = None;
            st.task = None;
            st.own_insert = None;
            // A thread that is exiting has no spare to keep: the writer is freed.
            let _ = SPARE_WRITER.try_with(|c| c.set(Some(Arc::clone(&self.0))));
        }
    }
}

/// A pending write's lock guards a few fields set and read by the write path itself (no
/// user code, nothing that can panic), so it is a parking_lot lock, which has no poisoned
/// state (`halt.rs`).
fn lock(w: &Arc<Writer>) -> parking_lot::MutexGuard<'_, PendingWrite> {
    w.state.lock()
}

/// One time in this many, a waiting writer yields whatever the yield credit says, to
/// update it (RocksDB's `sampling_base`).
const YIELD_SAMPLING: u32 = 256;
/// The most pauses a waiting writer spins before it yields or blocks (RocksDB's 200).
const SPIN_PAUSES: u32 = 200;
/// The longest a waiting writer spins (RocksDB's intent for its 200 pauses).
const SPIN_TIME: Duration = Duration::from_micros(1);
/// The spin reads the clock once every this many pauses (a clock read costs about a
/// fast pause's time).
const SPIN_CLOCK_EVERY: u32 = 4;
/// Slow yields that end a waiting writer's yield loop (RocksDB's `kMaxSlowYieldsWhileSpinning`).
const MAX_SLOW_YIELDS: u32 = 3;

/// Where a writer waits, each with its own yield credit (RocksDB's `AdaptationContext`s
/// `JoinBatchGroup`, `CompleteParallelMemTableWriter`, `EnterUnbatched`): a wait to lead
/// or be handed a group's result lasts as long as the group before it, while a member
/// waiting for the rest of its parallel group lasts as long as one batch's insert, so
/// whether yielding pays differs between them.
#[derive(Clone, Copy)]
pub enum WaitSite {
    /// Queued: waiting to lead, for a parallel insert, or for the group's result.
    Join = 0,
    /// A parallel group's member (or leader) waiting for the group's other inserts.
    ParallelDone = 1,
    /// An exclusive writer waiting for the write queue.
    Unbatched = 2,
}

thread_local! {
    /// Counts this thread's waits, for [`YIELD_SAMPLING`].
    static WAITS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl DbInner {
    /// RocksDB's `ThrottleLowPriWritesIfNeeded`: while compaction is behind (a family's
    /// writes are stopped or delayed, or it is under compaction pressure), a low-priority
    /// write fails with Incomplete under `no_slowdown`, else waits for its bytes at the
    /// low-priority rate (1 MiB/s).
    fn throttle_low_pri(&self, opts: &WriteSettings, batch: &WriteBatch) -> Result<()> {
        let behind = {
            let st = self.state.lock();
            st.stopped_cfs > 0 || st.delayed_cfs > 0 || st.speedup_cfs > 0
        };
        if !behind {
            return Ok(());
        }
        if opts.no_slowdown {
            return Err(Error::new(crate::ErrorKind::Incomplete, "Low priority write stall"));
        }
        let _t = PerfTimer::new(Field::WriteDelayTime);
        self.low_pri_limiter.request(batch.data().len(), crate::rate_limiter::IoPriority::High);
        Ok(())
    }

    /// RocksDB's WriteImpl refuses every write of a database opened with both
    /// `two_write_queues` and `enable_pipelined_write` (the open succeeds).
    pub fn check_write_queues(&self) -> Result<()> {
        if self.config.two_write_queues && self.config.enable_pipelined_write {
            return Err(Error::not_supported("pipelined_writes is not compatible with concurrent prepares"));
        }
        Ok(())
    }

    /// Writes `batch` atomically.
    pub fn write(&self, opts: &WriteSettings, batch: WriteBatch) -> Result<()> {
        if opts.sync && opts.disable_wal {
            return Err(Error::invalid_argument("Sync writes has to enable WAL."));
        }
        self.check_write_queues()?;
        if opts.disable_wal && self.config.recycle_log_file_num > 0 {
            // RocksDB's WriteImpl: a reused WAL's stale tail is told from new records by
            // their sequence numbers following on, which a write left out of it would break.
            return Err(Error::invalid_argument(
                "WriteOptions::disableWAL option is not supported if DBOptions::recycle_log_file_num > 0",
            ));
        }
        if opts.low_pri {
            self.throttle_low_pri(opts, &batch)?;
        }
        let bytes = batch.size_in_bytes() as u64;
        // `rocksdb.db.write.micros` for every writer, leader or follower (RocksDB's StopWatch
        // in WriteImpl), recorded with the leader's group counts in one call.
        let stats = self.config.statistics.as_deref();
        let started = stats.and_then(Statistics::timer_start);
        self.prefetch_active_mem(&batch);
        let pending = PendingWrite {
            batch: Some(batch),
            sync: opts.sync,
            disable_wal: opts.disable_wal,
            exclusive: false,
            ignore_missing: opts.ignore_missing_column_families,
            hint_per_batch: opts.memtable_insert_hint_per_batch,
            done: false,
            result: None,
            task: None,
            mem_lead: false,
            own_insert: None,
        };
        let lead = Lead::of(&pending);
        let me = OwnWriter::new(pending);
        let mut q = self.writers.lock();
        q.queue.push_back(me.clone());
        // The perf context's wait in the write queue (RocksDB's write_thread_wait_nanos).
        let wait_timer = PerfTimer::new(Field::WriteThreadWaitNanos);
        // Just queued, under the queue's lock: no other writer has seen this one yet (a
        // leader finds its group's writers, and completes them, under that lock), so its
        // state is as made (not done, no task) and its signal clear (`OwnWriter::new`). A
        // writer at the front leads at once, without locking its state.
        if q.queue.len() > 1 {
            drop(q);
            self.await_signal(&me, WaitSite::Join);
            q = self.writers.lock();
        }
        loop {
            // A writer is handed its result or an insert only once its group left the queue
            // or behind its leader, never while it is the front: at the front it leads.
            if q.queue.front().is_some_and(|f| Arc::ptr_eq(f, &me)) {
                break;
            }
            // Cleared before the state is read, so a change made after the read is signalled.
            me.signal.store(false, Ordering::SeqCst);
            let task = {
                let mut g = lock(&me);
                if g.done {
                    let r = g.result.take().unwrap_or(Ok(()));
                    drop(g);
                    drop(q);
                    if let Some(s) = stats {
                        s.record_write(started, None);
                    }
                    return r;
                }
                if let Some(own) = g.own_insert.take() {
                    drop(g);
                    drop(q);
                    drop(wait_timer);
                    let r = self.run_own_insert(own);
                    if let Some(s) = stats {
                        s.record_write(started, None);
                    }
                    return r;
                }
                g.task.take()
            };
            if let Some(task) = task {
                // A member of a parallel group: insert this writer's own batch, then wait
                // for the group to complete (it cannot lead or be handed another task
                // before: the group stays at the front of the queue until it completes).
                drop(q);
                drop(wait_timer);
                self.run_insert_task(task);
                let r = self.await_done(&me);
                if let Some(s) = stats {
                    s.record_write(started, None);
                }
                return r;
            }
            drop(q);
            self.await_signal(&me, WaitSite::Join);
            q = self.writers.lock();
        }
        // Leader. Without the slow path to run first, the group is gathered under the queue
        // lock already held: a lone writer takes that lock twice (join, complete), not three
        // times.
        let pipelined = self.config.enable_pipelined_write;
        let attention = self.write_control.needs_attention() || self.write_buffer_manager_wants_attention();
        let early_group = if attention {
            None
        } else {
            Some(build_group(&q.queue, self.config.max_write_batch_group_size_bytes, lead))
        };
        drop(q);
        drop(wait_timer);
        let room = if attention {
            if pipelined || self.config.unordered_write {
                // RocksDB's WaitForPendingWrites: the memtables may be switched only when no
                // group still has to insert into them.
                self.wait_for_memtable_writers();
            }
            self.preprocess_write(opts.no_slowdown, bytes)
        } else {
            Ok(())
        };
        let group = match early_group {
            Some(g) => g,
            None => {
                build_group(&self.writers.lock().queue, self.config.max_write_batch_group_size_bytes, lead)
            }
        };
        let mut counts = None;
        let outcome = match room {
            Ok(()) => self.write_group(&group, &mut counts, pipelined || self.config.unordered_write),
            Err(e) => Err(e),
        };
        // Pipelined: the group is in the WAL; it leaves the write queue for the memtable
        // writers' queue and inserts when it reaches the front.
        let mut handed = false;
        let outcome = match outcome {
            Ok(GroupOutcome::Logged(logged)) if self.config.unordered_write => {
                let own = self.hand_out_unordered(&me, &group, logged);
                if let Some(s) = stats {
                    s.record_write(started, counts);
                }
                return match own {
                    Some(own) => self.run_own_insert(own),
                    None => Ok(()),
                };
            }
            Ok(GroupOutcome::Logged(mut logged)) => {
                let last_seq = logged.first_seq + logged.count - 1;
                // The leader alone inserts (not in parallel): with no other writer, it may
                // insert with plain inserts (`enter_memtable_writers`).
                if self.enter_memtable_writers(&me, &group, last_seq, !logged.concurrent, !logged.parallel) {
                    logged.concurrent = false;
                }
                handed = true;
                let o = self.memtable_stage(&group, logged, &mut counts, true);
                if let Err(e) = &o {
                    // RocksDB's HandleMemTableInsertFailure: later groups would publish past
                    // a partly inserted one.
                    self.set_bg_error(e.clone(), BgErrorReason::MemTable);
                }
                o
            }
            o => o,
        };
        // The group is counted before the followers are woken, so that a follower reading
        // the tickers after its write returns sees its keys (RocksDB counts them before the
        // WAL write); a parallel group was counted before its inserts were handed out.
        let record = |counts: Option<WriteGroupCounts>| {
            if let Some(s) = stats {
                s.record_write(started, counts);
            }
        };
        let result = match outcome {
            Ok(GroupOutcome::Done) => Ok(()),
            Err(e) => Err(e),
            Ok(GroupOutcome::Parallel(tasks)) => {
                for task in tasks {
                    self.run_insert_task(task);
                }
                // The last insert to finish completes the group.
                let r = self.await_done(&me);
                record(None);
                return r;
            }
            Ok(GroupOutcome::Logged(_)) => Err(Error::new(ErrorKind::Corruption, "write group logged twice")),
        };
        record(counts);
        if handed {
            if let Some(r) = self.finish_memtable_group(&me, result, true) {
                return r;
            }
            // Published once every earlier group is.
            return self.await_done(&me);
        } else {
            self.complete_group(&group, result);
        }
        let r = lock(&me).result.take().unwrap_or(Ok(()));
        r
    }

    /// Pipelined: queues the group of leader `me` (its WAL written) on the memtable writers'
    /// queue, takes it off the write queue (waking the next WAL leader), then, for a `serial`
    /// group or one queued behind a serial group, waits until it is at the front of the
    /// memtable writers' queue (RocksDB's `ExitAsBatchGroupLeader` then
    /// `STATE_MEMTABLE_WRITER_LEADER`); any other group inserts at once. `last_seq`: the
    /// group's last sequence, published in WAL order (`finish_memtable_group`).
    ///
    /// `lone`: the group is inserted by its leader alone. Such a group, found with no writer
    /// queued behind it (none came during its WAL write) and no other group left to insert,
    /// is made serial: its leader inserts with plain (not compare-and-swap) inserts, as
    /// RocksDB's memtable writer group of one writer does (`concurrent_memtable_writes`
    /// false), and a group whose WAL write follows meanwhile waits for it before inserting
    /// (the WAL writes still overlap the insert). Returns whether the group is serial (asked
    /// for, or made so).
    fn enter_memtable_writers(
        &self,
        me: &Arc<Writer>,
        group: &[Arc<Writer>],
        last_seq: u64,
        serial: bool,
        lone: bool,
    ) -> bool {
        // A lone leader is its group (no second reference to keep; `MemEntry::writers`).
        let members: Group = if group.len() == 1 { Group::new() } else { group.iter().cloned().collect() };
        // Queued on the memtable writers' queue and off the write queue under the write
        // queue's lock (then the memtable writers' queue's, a leaf): the next WAL leader,
        // which needs that lock to lead, finds this group queued, and whether a writer
        // waits behind the group is known when the group is made serial.
        let (wait, serial, next) = {
            let mut q = self.writers.lock();
            for w in group {
                let popped = q.queue.pop_front();
                debug_assert!(popped.is_some_and(|p| Arc::ptr_eq(&p, w)));
            }
            let next = q.queue.front().cloned();
            let mut mq = self.mem_writers.queue.lock();
            // Nothing else inserts now, and no later group can insert before this one
            // finishes: a serial group is waited for by every group queued after it.
            let serial = serial || (lone && next.is_none() && mq.is_empty());
            // A serial group waits for every earlier group; a concurrent one only for a
            // serial group before it (which inserts with plain inserts).
            let wait = !mq.is_empty() && (serial || mq.iter().any(|e| e.serial));
            mq.push_back(MemEntry {
                leader: Arc::clone(me),
                members,
                last_seq,
                serial,
                waiting: wait,
                finished: None,
            });
            self.mem_writers.queued.store(mq.len(), Ordering::Relaxed);
            (wait, serial, next)
        };
        // Off the write queue, its writers still waiting for their results: the next WAL
        // leader may start.
        if let Some(n) = next {
            n.wake();
        }
        if !wait {
            return serial;
        }
        loop {
            me.signal.store(false, Ordering::SeqCst);
            if lock(me).mem_lead {
                return serial;
            }
            self.await_signal(me, WaitSite::Join);
        }
    }

    /// Pipelined: the inserts of the group led by `leader` finished with `result`. Every
    /// finished group at the front of the memtable writers' queue (this one once the groups
    /// before it are) is published — its last sequence set when it succeeded (a failed
    /// group's partial inserts are not published; its failure stopped the database) — and
    /// completed, and a group left waiting for the front is handed it. The writers of this
    /// group wait for their results (`await_done`): an earlier group may still insert.
    ///
    /// `own`: the caller is `leader`'s thread. When its group is the leader alone and is
    /// published by this call (the usual case: nothing before it still inserts), the result
    /// is returned for the caller to return at once, the leader's state untouched (no lock,
    /// no wake, no wait); otherwise None and the caller waits (`await_done`).
    fn finish_memtable_group(
        &self,
        leader: &Arc<Writer>,
        result: Result<()>,
        own: bool,
    ) -> Option<Result<()>> {
        let mut mq = self.mem_writers.queue.lock();
        // The usual case (one writer thread): the caller's own lone group is the only one
        // queued, so it is published now and nobody waits for it to be.
        if own
            && mq.len() == 1
            && mq.front().is_some_and(|e| e.members.is_empty() && Arc::ptr_eq(&e.leader, leader))
        {
            let e = mq.pop_front();
            if let (Ok(()), Some(e)) = (&result, &e) {
                self.versions.set_last_sequence(e.last_seq);
            }
            self.mem_writers.queued.store(0, Ordering::Relaxed);
            self.mem_writers.drained.notify_all();
            drop(mq);
            drop(e);
            return Some(result);
        }
        let mut published: smallvec::SmallVec<[MemEntry; 2]> = smallvec::SmallVec::new();
        let mut own_result = None;
        let next = {
            if let Some(e) = mq.iter_mut().find(|e| Arc::ptr_eq(&e.leader, leader)) {
                e.finished = Some(result);
            }
            while mq.front().is_some_and(|e| e.finished.is_some()) {
                let Some(mut e) = mq.pop_front() else { break };
                if matches!(e.finished, Some(Ok(()))) {
                    // In WAL order, under this lock: the published sequence only grows.
                    self.versions.set_last_sequence(e.last_seq);
                }
                if own && e.members.is_empty() && Arc::ptr_eq(&e.leader, leader) {
                    own_result = e.finished.take();
                    continue;
                }
                published.push(e);
            }
            self.mem_writers.queued.store(mq.len(), Ordering::Relaxed);
            if mq.is_empty() {
                self.mem_writers.drained.notify_all();
            }
            let next = match mq.front_mut() {
                Some(f) if f.waiting && (!published.is_empty() || own_result.is_some()) => {
                    f.waiting = false;
                    Some(Arc::clone(&f.leader))
                }
                _ => None,
            };
            // A leaf lock: released before the writers' states are locked.
            drop(mq);
            next
        };
        if let Some(n) = next {
            lock(&n).mem_lead = true;
            n.wake();
        }
        for e in &published {
            let r = e.finished.clone().unwrap_or(Ok(()));
            for w in e.writers() {
                let mut g = lock(w);
                g.done = true;
                g.result = Some(r.clone());
            }
        }
        for e in &published {
            for w in e.writers() {
                w.wake();
            }
        }
        own_result
    }

    /// `unordered_write`, after the group's WAL write (RocksDB's `WriteImplWALOnly` with
    /// `kDoPublishLastSeq`): publishes the group's sequences, counts each batch to insert as
    /// pending, hands every member its own batch, takes the group off the write queue and
    /// wakes the next leader. Returns the leader's own batch to insert.
    fn hand_out_unordered(
        &self,
        me: &Arc<Writer>,
        group: &[Arc<Writer>],
        logged: Logged,
    ) -> Option<OwnInsert> {
        let Logged { mems, first_seq, count, .. } = logged;
        let mut own = None;
        let mut seq = first_seq;
        let mut guards: smallvec::SmallVec<[_; GROUP_INLINE]> = group.iter().map(lock).collect();
        let inserts = guards.iter().filter(|g| g.batch.as_ref().is_some_and(|b| b.count() > 0)).count();
        self.mem_writers.unordered_pending.fetch_add(inserts, Ordering::AcqRel);
        self.versions.set_last_sequence(first_seq + count - 1);
        let bump = |a: &std::sync::atomic::AtomicU64, n: u64| {
            a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed)
        };
        bump(&self.stats.write_groups, 1);
        bump(&self.stats.writes, group.len() as u64);
        for (w, g) in group.iter().zip(guards.iter_mut()) {
            match g.batch.take_if(|b| b.count() > 0) {
                Some(batch) => {
                    let n = u64::from(batch.count());
                    let task = OwnInsert {
                        batch,
                        first_seq: seq,
                        mems: Arc::clone(&mems),
                        ignore_missing: g.ignore_missing,
                        hint_per_batch: g.hint_per_batch,
                    };
                    seq += n;
                    if Arc::ptr_eq(w, me) {
                        own = Some(task);
                    } else {
                        g.own_insert = Some(task);
                    }
                }
                None => {
                    g.done = true;
                    g.result = Some(Ok(()));
                }
            }
        }
        drop(guards);
        self.leave_write_queue(group);
        for w in group.iter().filter(|w| !Arc::ptr_eq(w, me)) {
            w.wake();
        }
        own
    }

    /// `unordered_write` (RocksDB's `UnorderedWriteMemtable`): inserts one writer's batch
    /// at once with other writers, then leaves the pending count (waking a switch or an
    /// exclusive writer waiting for it to drain). A failure is a background error.
    /// Records the families whose memtables an insert filled (`WalMeta::full`), for the next
    /// writer's slow path to switch, and asks for that slow path.
    fn mark_memtables_full(&self, full: Vec<u32>) {
        if full.is_empty() {
            return;
        }
        let mut meta = self.wal_meta.lock();
        for id in full {
            if !meta.full.contains(&id) {
                meta.full.push(id);
            }
        }
        drop(meta);
        self.write_control.set_attention(true);
    }

    fn run_own_insert(&self, own: OwnInsert) -> Result<()> {
        let OwnInsert { batch, first_seq, mems, ignore_missing, hint_per_batch } = own;
        let timer = PerfTimer::new(Field::WriteMemtableTime);
        let mut full = Vec::new();
        let how = Insert { concurrent: true, skip_missing: ignore_missing, hint_per_batch };
        let r = insert_batch(&mems, &batch, first_seq, how, &mut full, None);
        drop(timer);
        drop(mems);
        self.mark_memtables_full(full);
        if self.mem_writers.unordered_pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _mq = self.mem_writers.queue.lock();
            self.mem_writers.drained.notify_all();
        }
        if let Err(e) = &r {
            self.set_bg_error(e.clone(), BgErrorReason::MemTable);
        }
        r
    }

    /// Waits until no pipelined group is left to insert into the memtables (RocksDB's
    /// `WaitForMemTableWriters`) and no `unordered_write` writer still inserts (RocksDB's
    /// `WaitForPendingWrites`); at once on the ordinary path. The caller leads
    /// the writes, so no group joins meanwhile.
    pub fn wait_for_memtable_writers(&self) {
        let mut mq = self.mem_writers.queue.lock();
        while !mq.is_empty() || self.mem_writers.unordered_pending.load(Ordering::Acquire) != 0 {
            self.mem_writers.drained.wait(&mut mq);
        }
    }

    /// Pipelined groups that began their WAL write while an earlier group still had to
    /// insert into the memtables (the pipeline's overlap, counted for tests and tools).
    pub fn pipelined_write_overlaps(&self) -> u64 {
        self.mem_writers.overlaps.load(Ordering::Relaxed)
    }

    /// Waits until the parallel group of `me` completes (the last of its inserts to finish
    /// completes it) and takes `me`'s result (RocksDB's `CompleteParallelMemTableWriter`).
    fn await_done(&self, me: &Arc<Writer>) -> Result<()> {
        loop {
            // Cleared before the state is read, so a change made after the read is signalled.
            me.signal.store(false, Ordering::SeqCst);
            {
                let mut g = lock(me);
                if g.done {
                    return g.result.take().unwrap_or(Ok(()));
                }
            }
            self.await_signal(me, WaitSite::ParallelDone);
        }
    }

    /// Asks the CPU to start loading the active-memtable entry (`WalState::mems`) of the
    /// family of `batch`'s first record, which the write leader reads before its WAL write
    /// to prefetch that memtable's lines (`write_group`): with many families written at
    /// random it is a cold line too, and this is the earliest point the family is known.
    #[inline]
    fn prefetch_active_mem(&self, batch: &WriteBatch) {
        let base = self.mems_hint.load(Ordering::Relaxed);
        if base == 0 {
            return;
        }
        let id = first_family(batch.data()) as usize;
        let at = base.wrapping_add(id.wrapping_mul(std::mem::size_of::<Option<super::ActiveMem>>()));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint: it reads nothing architecturally and never
        // faults, whatever the address (this one may be stale or past the entries).
        unsafe {
            std::arch::x86_64::_mm_prefetch(at as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// `max_successive_merges` (see the module's notes): the merged value to insert instead
    /// of the merge operand `operand` of `key` at `seq`, or None to insert the operand (fewer
    /// operands on top of the active memtable `mem`, the value not found in memory, or the
    /// merge function failed).
    fn merge_on_write(
        &self,
        cf_id: u32,
        mem: &Arc<MemTable>,
        seq: SequenceNumber,
        key: &[u8],
        operand: &[u8],
    ) -> Option<Vec<u8>> {
        let limit = mem.max_successive_merges();
        if mem.count_successive_merges(key, seq, limit) < limit {
            return None;
        }
        let cf = self.cf_handle_by_id(cf_id)?;
        // With user-defined timestamps RocksDB's MergeCF reads the key with no read
        // timestamp, which GetEntity refuses: the operand is stored as it is.
        if cf.icmp.timestamp_size() > 0 {
            return None;
        }
        let op = cf.config().callbacks.merge()?;
        let sv = cf.super_version();
        // The write leader switches memtables, so the read view is at most as new as `mem`.
        let older = std::iter::once(&sv.mem).filter(|m| !Arc::ptr_eq(m, mem)).chain(sv.imm.iter());
        let mut operands: Vec<Vec<u8>> = Vec::new();
        // None: go on; Some(None): no base value; Some(Some(v)): base value v.
        let mut base: Option<Option<Vec<u8>>> = None;
        let mut give_up = false;
        let mut max_cov = 0;
        for m in std::iter::once(mem).chain(older) {
            max_cov = max_cov.max(m.max_covering_tombstone_seq(key, seq));
            // A memtable entry whose checks fail: the operand goes in unmerged, and the next
            // read of the key answers the Corruption.
            let walked = m.try_for_each_version(key, seq, |s, t, v| {
                if s < max_cov {
                    base = Some(None);
                    return false;
                }
                match t {
                    ValueType::Merge => {
                        operands.push(v.to_vec());
                        return true;
                    }
                    ValueType::Value => base = Some(Some(v.to_vec())),
                    ValueType::Deletion | ValueType::SingleDeletion => base = Some(None),
                    // A blob reference would need a file read; an entity's merge result is
                    // an entity.
                    ValueType::BlobIndex | ValueType::RangeDeletion | ValueType::WideColumnEntity => {
                        give_up = true
                    }
                }
                false
            });
            if walked.is_err() {
                return None;
            }
            if give_up {
                return None;
            }
            if base.is_some() {
                break;
            }
        }
        let base = match base {
            Some(b) => b,
            // `strict_max_successive_merges`: the value at the merge's sequence is read
            // whole, table files included (RocksDB's MergeCF reads without
            // `kBlockCacheTier`); not found or failed, the operand is stored.
            None if cf.config().strict_max_successive_merges => {
                let ro = crate::config::ReadSettings { snapshot: Some(seq), ..Default::default() };
                let existing = self.get_impl(&cf, key, &ro).ok()??;
                let stats = self.config.statistics.as_deref();
                return op.full_merge(key, Some(&existing), vec![operand.to_vec()], stats).ok();
            }
            None => {
                // Below the memtables: only when no table may hold the key.
                let v = &sv.current;
                let icmp = &cf.icmp;
                for level in 0..v.num_levels() {
                    if v.files(level).iter().any(|f| {
                        icmp.compare_user(key, crate::key::user_key(&f.smallest)).is_ge()
                            && icmp.compare_user(key, crate::key::user_key(&f.largest)).is_le()
                    }) {
                        return None;
                    }
                }
                None
            }
        };
        operands.reverse();
        let stats = self.config.statistics.as_deref();
        let existing = op.full_merge(key, base.as_deref(), operands, stats).ok()?;
        op.full_merge(key, Some(&existing), vec![operand.to_vec()], stats).ok()
    }

    /// Takes the group off the write queue and wakes the next leader (the writer now at the
    /// front); the group's writers keep waiting for their results.
    fn leave_write_queue(&self, group: &[Arc<Writer>]) {
        let mut q = self.writers.lock();
        for w in group {
            let popped = q.queue.pop_front();
            debug_assert!(popped.is_some_and(|p| Arc::ptr_eq(&p, w)));
        }
        let next = q.queue.front().cloned();
        drop(q);
        if let Some(n) = next {
            n.wake();
        }
    }

    /// Takes the group off the queue with its result and wakes its writers and the next
    /// leader (the writer now at the front).
    fn complete_group(&self, group: &[Arc<Writer>], result: Result<()>) {
        let mut q = self.writers.lock();
        for w in group {
            let popped = q.queue.pop_front();
            debug_assert!(popped.is_some_and(|p| Arc::ptr_eq(&p, w)));
            let mut g = lock(w);
            g.done = true;
            g.result = Some(result.clone());
        }
        let next = q.queue.front().cloned();
        drop(q);
        if let Some(n) = next {
            n.wake();
        }
        for w in group {
            w.wake();
        }
    }

    /// Waits until `w` is signalled (RocksDB's `WriteThread::AwaitState`): about a
    /// microsecond of spinning; then, with `enable_write_thread_adaptive_yield`, yields of
    /// the processor in a loop for up to `write_thread_max_yield_usec`, ended early by
    /// [`MAX_SLOW_YIELDS`] yields of `write_thread_slow_yield_usec` or more (other threads
    /// wanted the processor); then it blocks (parks the thread). The yield loop is tried only
    /// while the database's yield credit is not negative: each sampled wait (one in
    /// [`YIELD_SAMPLING`], or one ended by slow yields) adds to the decayed credit when the
    /// loop saw the signal and takes from it when it had to block.
    fn await_signal(&self, w: &Writer, site: WaitSite) {
        let credit = &self.write_yield_credit[site as usize];
        if w.signal.load(Ordering::Acquire) {
            return;
        }
        // RocksDB spins 200 pauses, "a bit more than a microsecond" at the 7 ns a pause takes
        // on the Xeons it was tuned on; a pause can take 100 ns (measured on AMD EPYC under a
        // hypervisor: 200 of them 19-21 µs), and a waiter spinning 20 µs holds a processor
        // the writer it waits for may need. So the spin ends at SPIN_PAUSES pauses or at
        // SPIN_TIME, whichever comes first: about a microsecond everywhere.
        let spin_start = Instant::now();
        for i in 1..=SPIN_PAUSES {
            std::hint::spin_loop();
            if w.signal.load(Ordering::Acquire) {
                return;
            }
            if i % SPIN_CLOCK_EVERY == 0 && spin_start.elapsed() >= SPIN_TIME {
                break;
            }
        }
        let max_yield = if self.config.enable_write_thread_adaptive_yield {
            self.config.write_thread_max_yield_usec
        } else {
            0
        };
        let mut update = false;
        let mut succeeded = false;
        if max_yield > 0 {
            update = WAITS.with(|c| {
                let n = c.get().wrapping_add(1);
                c.set(n);
                n % YIELD_SAMPLING == 0
            });
            if update || credit.load(Ordering::Relaxed) >= 0 {
                let max = Duration::from_micros(max_yield);
                let slow = Duration::from_micros(self.config.write_thread_slow_yield_usec);
                let begin = Instant::now();
                let mut iter_begin = begin;
                let mut slow_yields = 0;
                while iter_begin - begin <= max {
                    std::thread::yield_now();
                    if w.signal.load(Ordering::Acquire) {
                        succeeded = true;
                        break;
                    }
                    let now = Instant::now();
                    // A clock too coarse to see the yield counts it as slow, as RocksDB's.
                    if now == iter_begin || now - iter_begin >= slow {
                        slow_yields += 1;
                        if slow_yields >= MAX_SLOW_YIELDS {
                            update = true;
                            break;
                        }
                    }
                    iter_begin = now;
                }
            }
        }
        if !succeeded {
            w.parked.store(true, Ordering::SeqCst);
            while !w.signal.load(Ordering::Acquire) {
                std::thread::park();
            }
            w.parked.store(false, Ordering::Relaxed);
        }
        if update {
            // Fixed-point decay by 1/1024 per update, +-2^17 per outcome (RocksDB's): the
            // credit stays within i32. Lost updates between threads only lose a sample.
            let v = credit.load(Ordering::Relaxed);
            let step = if succeeded { 131_072 } else { -131_072 };
            credit.store(v - v / 1024 + step, Ordering::Relaxed);
        }
    }

    /// Inserts one member's batch of a parallel group; the last to finish publishes the
    /// group's sequence (RocksDB sets the last sequence after the parallel inserts) and
    /// completes it.
    fn run_insert_task(&self, task: InsertTask) {
        let InsertTask { batch, first_seq, group, ignore_missing, hint_per_batch } = task;
        let timer = PerfTimer::new(Field::WriteMemtableTime);
        let mut full = Vec::new();
        let how = Insert { concurrent: true, skip_missing: ignore_missing, hint_per_batch };
        if let Err(e) = insert_batch(&group.mems, &batch, first_seq, how, &mut full, None) {
            group.error.lock().get_or_insert(e);
        }
        drop(timer);
        if !full.is_empty() {
            let mut f = group.full.lock();
            for id in full {
                if !f.contains(&id) {
                    f.push(id);
                }
            }
        }
        if group.remaining.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // Every insert finished (the AcqRel decrements order them before this point).
        let full = std::mem::take(&mut *group.full.lock());
        self.mark_memtables_full(full);
        let error = group.error.lock().take();
        if group.pipelined {
            // Other pipelined groups may finish at once: locked adds.
            self.stats.write_groups.fetch_add(1, Ordering::Relaxed);
            self.stats.writes.fetch_add(group.members.len() as u64, Ordering::Relaxed);
            if let Some(e) = &error {
                self.set_bg_error(e.clone(), BgErrorReason::MemTable);
            }
            // Published in WAL order by `finish_memtable_group`.
            let result = error.map_or(Ok(()), Err);
            if let Some(leader) = group.members.first() {
                self.finish_memtable_group(leader, result, false);
            }
            return;
        }
        let result = match error {
            Some(e) => Err(e),
            None => {
                self.versions.set_last_sequence(group.last_seq);
                Ok(())
            }
        };
        // Only the group in flight counts (the next leader waits for this one to complete).
        let bump = |a: &std::sync::atomic::AtomicU64, n: u64| {
            a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed)
        };
        bump(&self.stats.write_groups, 1);
        bump(&self.stats.writes, group.members.len() as u64);
        self.complete_group(&group.members, result);
    }

    /// Runs `f` as the only writer: no write group runs meanwhile.
    pub fn exclusive_write<R>(&self, f: impl FnOnce() -> R) -> R {
        let me = Writer::new(PendingWrite {
            batch: None,
            sync: false,
            disable_wal: false,
            exclusive: true,
            ignore_missing: false,
            hint_per_batch: false,
            done: false,
            result: None,
            task: None,
            mem_lead: false,
            own_insert: None,
        });
        let mut q = self.writers.lock();
        q.queue.push_back(me.clone());
        loop {
            me.signal.store(false, Ordering::SeqCst);
            if q.queue.front().is_some_and(|f| Arc::ptr_eq(f, &me)) {
                break;
            }
            drop(q);
            self.await_signal(&me, WaitSite::Unbatched);
            q = self.writers.lock();
        }
        drop(q);
        // RocksDB's EnterUnbatched: pipelined groups still inserting finish first.
        self.wait_for_memtable_writers();
        let r = f();
        let mut q = self.writers.lock();
        q.queue.pop_front();
        let next = q.queue.front().cloned();
        drop(q);
        if let Some(n) = next {
            n.wake();
        }
        r
    }

    /// The leader's part of a write group: the WAL record, then either every insert (one
    /// writer inserting the group's records in order) or, with
    /// `allow_concurrent_memtable_write` and more than one writer, the members' own inserts
    /// handed out (RocksDB does not insert merges in parallel: a group with one is inserted
    /// by the leader).
    ///
    /// `counts`: what the statistics count of the group, once it passed the checks (RocksDB
    /// counts before the WAL write, so a failed write is counted too).
    /// `pipelined` (`enable_pipelined_write`): the group stops after its WAL write
    /// (`GroupOutcome::Logged`), to be inserted by `memtable_stage` off the write queue.
    fn write_group(
        &self,
        group: &[Arc<Writer>],
        counts: &mut Option<WriteGroupCounts>,
        pipelined: bool,
    ) -> Result<GroupOutcome> {
        let mut guards: smallvec::SmallVec<[_; GROUP_INLINE]> = group.iter().map(lock).collect();
        let sync = guards.iter().any(|g| g.sync);
        let disable_wal = guards[0].disable_wal;
        // Records of missing families pass the check below only for writers that ignore
        // them (`ignore_missing_column_families`): the leader's insert skips them.
        let skip_missing = guards.iter().any(|g| g.ignore_missing);
        let writers = guards.len() as u64;
        if guards.len() == 1 && guards[0].batch.is_none() {
            return Err(Error::invalid_argument("empty write"));
        }
        // The active memtables, published under `wal_meta` (changed only with write
        // leadership, which this leader holds).
        let mems = Arc::clone(&self.wal_meta.lock().mems);
        // Blob direct write (`blob_direct.rs`): large values go to blob files now, after any
        // memtable switch, and the group's records become blob indexes.
        if mems.iter().any(|m| m.as_ref().is_some_and(|m| m.direct.is_some())) {
            let mut slots: Vec<&mut Option<WriteBatch>> = guards.iter_mut().map(|g| &mut g.batch).collect();
            self.direct_write_blobs(&mems, &mut slots, sync)?;
        }
        // A group whose members all block in their wait is inserted by the leader alone (see
        // "Parallel memtable inserts" in the module comment): the same records with the same
        // sequences, without the compare-and-swap inserts.
        let concurrent = self.config.allow_concurrent_memtable_write
            && (pipelined || guards.len() > 1)
            && guards.iter().all(|g| g.batch.as_ref().is_none_or(|b| !b.has_merge()));
        let parallel =
            concurrent && guards.len() > 1 && group.iter().skip(1).any(|w| !w.parked.load(Ordering::SeqCst));
        // The group's records as one batch: for the WAL record, and for the leader to insert
        // when it inserts them all. Not built for a parallel group without the WAL.
        // A lone writer's batch is its own WAL record: nothing is allocated for it.
        let use_merged = guards.len() > 1 && !(parallel && disable_wal);
        let mut merged = if use_merged {
            let bytes: usize = guards.iter().filter_map(|g| g.batch.as_ref()).map(|b| b.data().len()).sum();
            let mut m = WriteBatch::with_capacity_bytes(bytes);
            for g in guards.iter() {
                if let Some(b) = &g.batch {
                    m.append(b);
                }
            }
            Some(m)
        } else {
            None
        };
        let batches = || guards.iter().filter_map(|g| g.batch.as_ref());
        let count: u64 = batches().map(|b| u64::from(b.count())).sum();
        if count == 0 {
            return Ok(GroupOutcome::Done);
        }
        // The group's bytes as one batch: one header, then every batch's records.
        let group_bytes = if guards.len() == 1 {
            batches().map(|b| b.data().len()).sum::<usize>()
        } else if let Some(m) = &merged {
            m.data().len()
        } else {
            crate::batch::HEADER_SIZE
                + batches().map(|b| b.data().len().saturating_sub(crate::batch::HEADER_SIZE)).sum::<usize>()
        } as u64;
        let mut wal_guard = self.lock_or_halt(&self.wal, "WAL")?;
        let wal = &mut *wal_guard;
        // Every record must name a live column family before anything is written. The
        // leader, which inserts next, asks for the memtables' cold lines meanwhile (see
        // `PREFETCH_RECORDS`), and keeps their families with the first 8 bytes of the
        // record's user key (and their count) for the second step, after the WAL write.
        let mut prefetched: [Option<(u32, [u8; 8], usize)>; PREFETCH_RECORDS] = [None; PREFETCH_RECORDS];
        {
            let mems = &mems;
            let mut n = if parallel { PREFETCH_RECORDS } else { 0 };
            let mut last = u32::MAX;
            for g in guards.iter() {
                let Some(b) = g.batch.as_ref() else { continue };
                b.for_each(&mut |e| match mems.get(e.cf_id as usize) {
                    // RocksDB's MemTableInserter::SeekToColumnFamily.
                    Some(Some(m)) if m.disallow => {
                        Err(Error::invalid_argument("This column family has disallow_memtable_writes=true"))
                    }
                    Some(Some(m)) => {
                        if n < PREFETCH_RECORDS && e.cf_id != last {
                            last = e.cf_id;
                            m.hint.prefetch(&m.mem);
                            let mut start = [0u8; 8];
                            let len = e.key.len().min(8);
                            start[..len].copy_from_slice(&e.key[..len]);
                            prefetched[n] = Some((e.cf_id, start, len));
                            n += 1;
                        }
                        Ok(())
                    }
                    _ if g.ignore_missing => Ok(()),
                    _ => Err(Error::invalid_argument(format!(
                        "Invalid column family specified in write batch: {}",
                        e.cf_id
                    ))),
                })?;
            }
        }
        // Pipelined, groups earlier in the WAL may not have published their sequences yet:
        // this one follows the last sequence given out (RocksDB's
        // `WriteThread::UpdateLastSequence`). Anything else that takes sequences (ingestion,
        // recovery) leads exclusively after the pipeline drained, so the larger of the two
        // is the last one used.
        // unordered_write publishes each group's sequences after its WAL write, so the last
        // sequence is the last one given out there.
        let first_seq = if pipelined && !self.config.unordered_write {
            self.last_sequence().max(self.mem_writers.last_allocated.load(Ordering::Relaxed)) + 1
        } else {
            self.last_sequence() + 1
        };
        if pipelined && !self.config.unordered_write {
            self.mem_writers.last_allocated.store(first_seq + count - 1, Ordering::Relaxed);
            if self.mem_writers.queued.load(Ordering::Relaxed) != 0 {
                self.mem_writers.overlaps.fetch_add(1, Ordering::Relaxed);
            }
        }
        // The batch the WAL gets (and the leader inserts when it inserts everything).
        let batch: Option<&mut WriteBatch> = if merged.is_some() {
            merged.as_mut()
        } else if guards.len() == 1 {
            guards[0].batch.as_mut()
        } else {
            None
        };
        let mut batch = batch;
        if let Some(b) = batch.as_deref_mut() {
            b.set_sequence(first_seq);
        }
        // As RocksDB's WriteImpl: keys and bytes of the group, who wrote it, through the WAL.
        let stats = self.config.statistics.as_deref();
        // RocksDB's DB-wide `db_stats_` (rocksdb.dbstats), counted whatever the statistics.
        // Only the write leader adds to them, so a load and a store do (RocksDB's
        // `AddDBStats(concurrent = false)`), not a locked read-modify-write.
        let bump = |a: &std::sync::atomic::AtomicU64, n: u64| {
            a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed)
        };
        bump(&self.stats.keys_written, count);
        bump(&self.stats.bytes_written, group_bytes);
        if !disable_wal {
            bump(&self.stats.writes_with_wal, writers);
            bump(&self.stats.wal_bytes, group_bytes);
        }
        if stats.is_some() {
            *counts = Some(WriteGroupCounts { keys: count, bytes: group_bytes, writers, wal: !disable_wal });
        }
        if disable_wal {
            self.unpersisted.store(true, Ordering::Release);
        } else if let Some(batch) = batch.as_deref() {
            // A two-phase commit's batch gives the WAL only its commit marker (it writes
            // alone: `build_group`).
            let ts_sizes = self.timestamp_sizes_for_wal();
            let _wal_timer = PerfTimer::new(Field::WriteWalTime);
            // No family with timestamps (the common case): no record of their sizes to add.
            let r =
                if ts_sizes.is_empty() { Ok(()) } else { wal.writer.maybe_add_timestamp_sizes(&ts_sizes) };
            let r = r.and_then(|_| wal.writer.add_record(&batch.wal_data()));
            // The memtables' lines asked for above had the record's encoding to arrive: now
            // the arena tails they name, which the write to the file gives time to load.
            let r = r.and_then(|_| {
                if sync {
                    self.stats.wal_syncs.fetch_add(1, Ordering::Relaxed);
                    record_tick(stats, Ticker::WalFileSynced, 1);
                    let _t = StopWatch::new(stats, Histogram::WalFileSyncMicros);
                    // Older WALs still alive first (`wal_sync.rs`).
                    self.sync_wals_locked(wal)
                } else {
                    wal.unsynced = true;
                    wal.unsynced_writes += 1;
                    if self.config.manual_wal_flush {
                        Ok(()) // left in the buffer until `flush_wal` (RocksDB's manual_wal_flush)
                    } else {
                        wal.writer.flush()
                    }
                }
            });
            if let Err(e) = r {
                // The WAL lock comes after the DB mutex: release it first.
                drop(wal_guard);
                self.set_bg_error(e.clone(), BgErrorReason::WriteCallback);
                return Err(e);
            }
            // The lines asked for above arrived during the WAL write: now what they name,
            // the arena tails and the first search nodes (asking before the WAL write made
            // the leader wait there for the lines: slower, measured).
            for (id, start, len) in prefetched.iter().flatten() {
                if let Some(Some(m)) = mems.get(*id as usize) {
                    m.hint.prefetch_next_entry(&start[..*len]);
                }
            }
            // Live WALs over `max_total_wal_size`: the next leader flushes the families
            // holding the oldest one (`wal_limit.rs`).
            if self.wal_total.check(wal.writer.file_size()) {
                self.write_control.set_attention(true);
            }
        }
        // A lone writer's batch goes with the group to its insert (no second lock of the
        // leader's state there); `unordered_write` hands it out from the state.
        let merged = if parallel {
            None
        } else if merged.is_none() && guards.len() == 1 && !self.config.unordered_write {
            guards[0].batch.take()
        } else {
            merged
        };
        let leader_hint = guards[0].hint_per_batch;
        let logged =
            Logged { mems, first_seq, count, parallel, skip_missing, leader_hint, merged, concurrent };
        if pipelined {
            return Ok(GroupOutcome::Logged(logged));
        }
        drop(guards);
        if parallel || self.config.two_write_queues {
            // With two write queues, WAL-only writes take the WAL lock meanwhile
            // (`db/twopc.rs`).
            drop(wal_guard);
            self.memtable_stage(group, logged, counts, false)
        } else {
            // The serial insert keeps the WAL lock: a user's comparator panicking in it
            // poisons the lock, which halts the database (`halt.rs`).
            let o = self.memtable_stage(group, logged, counts, false);
            drop(wal_guard);
            o
        }
    }

    /// A write group's memtable stage, after its WAL write: either every insert (one writer
    /// inserting the group's records in order) or, for a parallel group, the members' own
    /// inserts handed out; `pipelined` when the group left the write queue for the memtable
    /// writers' queue (and leads it).
    fn memtable_stage(
        &self,
        group: &[Arc<Writer>],
        logged: Logged,
        counts: &mut Option<WriteGroupCounts>,
        pipelined: bool,
    ) -> Result<GroupOutcome> {
        let Logged { mems, first_seq, count, parallel, skip_missing, leader_hint, merged, concurrent } =
            logged;
        let stats = self.config.statistics.as_deref();
        let bump = |a: &std::sync::atomic::AtomicU64, n: u64| {
            a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed)
        };
        if parallel {
            let mut guards: smallvec::SmallVec<[_; GROUP_INLINE]> = group.iter().map(lock).collect();
            // Hand each member its own batch and first sequence; the leader inserts its own,
            // and those of members blocked in their wait: waking a parked thread costs the
            // waker a system call and the batch a scheduling delay, more than inserting it
            // (db_bench's one-record batches), and the member waits for the group anyway.
            let tasks = guards.iter().filter(|g| g.batch.as_ref().is_some_and(|b| b.count() > 0)).count();
            let shared = Arc::new(ParallelGroup {
                mems,
                members: group.to_vec(),
                remaining: AtomicUsize::new(tasks),
                full: parking_lot::Mutex::new(Vec::new()),
                error: parking_lot::Mutex::new(None),
                last_seq: first_seq + count - 1,
                pipelined,
            });
            let mut seq = first_seq;
            let mut own = smallvec::SmallVec::new();
            let mut handed: smallvec::SmallVec<[&Arc<Writer>; GROUP_INLINE]> = smallvec::SmallVec::new();
            for (i, (g, w)) in guards.iter_mut().zip(group).enumerate() {
                let Some(b) = g.batch.take_if(|b| b.count() > 0) else { continue };
                let n = u64::from(b.count());
                let (ignore_missing, hint_per_batch) = (g.ignore_missing, g.hint_per_batch);
                let task = InsertTask {
                    batch: b,
                    first_seq: seq,
                    group: Arc::clone(&shared),
                    ignore_missing,
                    hint_per_batch,
                };
                seq += n;
                if i == 0 || w.parked.load(Ordering::SeqCst) {
                    own.push(task);
                } else {
                    g.task = Some(task);
                    handed.push(w);
                }
            }
            // Counted before any member can see its task (and so return).
            if let (Some(s), Some(c)) = (stats, counts.take()) {
                s.record_write(None, Some(c));
            }
            drop(guards);
            for w in handed {
                w.wake();
            }
            return Ok(GroupOutcome::Parallel(own));
        }
        // A serial group inserts the merged batch, or the leader's own when it is alone: only
        // the leader's state is borrowed (the members wait for the outcome and touch nothing).
        let leader = if merged.is_none() { group.first().map(lock) } else { None };
        let batch = match merged.as_ref() {
            Some(b) => b,
            None => leader
                .as_ref()
                .and_then(|g| g.batch.as_ref())
                .ok_or_else(|| Error::invalid_argument("empty write"))?,
        };
        let memtable_timer = PerfTimer::new(Field::WriteMemtableTime);
        let merge = |cf: u32, mem: &Arc<MemTable>, seq: SequenceNumber, key: &[u8], op: &[u8]| {
            self.merge_on_write(cf, mem, seq, key, op)
        };
        let mut full = Vec::new();
        // Pipelined, a concurrent group inserts while other groups may (see `MemWriters`).
        let cas = pipelined && concurrent;
        // RocksDB's InsertInto of a group takes the leader's `memtable_insert_hint_per_batch`.
        let how = Insert { concurrent: cas, skip_missing, hint_per_batch: leader_hint };
        insert_batch(&mems, batch, first_seq, how, &mut full, Some(&merge))?;
        drop(memtable_timer);
        self.mark_memtables_full(full);
        if pipelined {
            // Published in WAL order by `finish_memtable_group`; other pipelined groups may
            // count at once: locked adds.
            self.stats.write_groups.fetch_add(1, Ordering::Relaxed);
            self.stats.writes.fetch_add(group.len() as u64, Ordering::Relaxed);
        } else {
            self.versions.set_last_sequence(first_seq + count - 1);
            bump(&self.stats.write_groups, 1);
            bump(&self.stats.writes, group.len() as u64);
        }
        Ok(GroupOutcome::Done)
    }

    /// The write leader's slow path (RocksDB's `PreprocessWrite`): the background error,
    /// memtables found full (switched and queued for flush), the write buffer manager's
    /// flush, then the write stall (stop: wait for a job, or Incomplete with `no_slowdown`;
    /// delay: sleep as `delayed_write_rate` says), then the write buffer manager's stall.
    fn preprocess_write(&self, no_slowdown: bool, bytes: u64) -> Result<()> {
        let mut st = self.lock_state();
        let mut stall_start: Option<Instant> = None;
        let result = loop {
            if let Some(e) = st.errors.stop_error() {
                break Err(e);
            }
            if self.shutting_down.load(Ordering::Acquire) {
                break Err(Error::shutdown("Database shutdown"));
            }
            let full = std::mem::take(&mut self.wal_meta.lock().full);
            let mut switch: Vec<u32> = full
                .into_iter()
                .filter(|id| {
                    st.cfs.get(id).is_some_and(|c| {
                        !c.mem.is_empty()
                            && (c.mem.approximate_memory_usage() >= c.handle.config().write_buffer_size
                                || c.mem.should_flush_now())
                    })
                })
                .collect();
            if let Some(id) = self.pick_for_write_buffer_manager(&st) {
                if !switch.contains(&id) {
                    switch.push(id);
                }
            }
            // RocksDB's SwitchWAL: the live WALs are over `max_total_wal_size`.
            if let Some((oldest, mems, imm_only)) = self.wal_total.take_families_to_flush(&st) {
                self.info_log.buffer_line(format_args!(
                    "Flushing all column families with data in WAL number {oldest}. Total log size is {} while max_total_wal_size is {}",
                    self.wal_total.last_total(),
                    self.wal_total.limit()
                ));
                // Flushed whatever `min_write_buffer_number_to_merge` says (RocksDB's
                // `FlushRequested`).
                for id in mems {
                    if let Some(c) = st.cfs.get_mut(&id) {
                        c.force_flush = true;
                    }
                    if !switch.contains(&id) {
                        switch.push(id);
                    }
                }
                for id in imm_only {
                    if let Some(c) = st.cfs.get_mut(&id) {
                        c.force_flush = true;
                    }
                    self.schedule_flush(&mut st, id);
                }
            }
            self.widen_for_atomic_flush(&st, &mut switch);
            if !switch.is_empty() {
                if let Err(e) = self.switch_memtables(&mut st, &switch, false) {
                    break Err(e);
                }
            }
            if st.stopped_cfs > 0 {
                if no_slowdown {
                    break Err(Error::new(ErrorKind::Incomplete, "Write stall"));
                }
                if stall_start.is_none() {
                    stall_start = Some(Instant::now());
                    self.stats.stall_stops.fetch_add(1, Ordering::Relaxed);
                }
                self.work_cv.notify_all();
                self.done_cv.wait_for(&mut st, Duration::from_millis(100));
                continue;
            }
            if st.delayed_cfs > 0 {
                if no_slowdown {
                    break Err(Error::new(ErrorKind::Incomplete, "Write stall"));
                }
                let delay = self.write_control.delay_micros(bytes);
                if delay > 0 {
                    self.stats.stall_delays.fetch_add(1, Ordering::Relaxed);
                    stall_start.get_or_insert_with(Instant::now);
                    // Sleep in slices, ending early when the condition clears (as RocksDB).
                    let until = Instant::now() + Duration::from_micros(delay);
                    while Instant::now() < until && st.delayed_cfs > 0 && st.stopped_cfs == 0 {
                        let left = until.saturating_duration_since(Instant::now());
                        self.done_cv.wait_for(&mut st, left.min(Duration::from_millis(1)));
                    }
                }
            }
            // The write buffer manager's stall (RocksDB's `WriteBufferManagerStallWrites`):
            // memtables of every database sharing it hold the budget; wait for a free.
            if let Some(wbm) = self.config.write_buffer_manager.as_ref().filter(|w| w.should_stall()) {
                if no_slowdown {
                    break Err(Error::new(ErrorKind::Incomplete, "Write stall"));
                }
                if stall_start.is_none() {
                    stall_start = Some(Instant::now());
                    self.stats.stall_stops.fetch_add(1, Ordering::Relaxed);
                    self.stats.wbm_stops.fetch_add(1, Ordering::Relaxed);
                }
                self.work_cv.notify_all();
                super::unlocked(&mut st, || wbm.wait_for_room(Duration::from_millis(100)));
                continue;
            }
            break Ok(());
        };
        if let Some(t) = stall_start {
            let micros = t.elapsed().as_micros() as u64;
            shale_format::perf::count(Field::WriteDelayTime, micros.saturating_mul(1000));
            self.stats.stall_micros.fetch_add(micros, Ordering::Relaxed);
            if let Some(s) = self.config.statistics.as_deref() {
                s.record_tick(Ticker::StallMicros, micros);
                s.report_time(Histogram::WriteStall, micros);
            }
        }
        self.update_write_attention(&st);
        result
    }

    /// Whether the write leader must take the slow path, from the state (DB mutex held).
    pub fn update_write_attention(&self, st: &DbState) {
        // `wal_meta`, not `wal`: the DB mutex never waits for a WAL fsync (`wal_sync.rs`).
        let full = !self.wal_meta.lock().full.is_empty();
        let v = full
            || st.stopped_cfs > 0
            || st.delayed_cfs > 0
            || st.errors.is_db_stopped()
            || self.halted.get().is_some()
            || self.wal_total.is_over();
        self.write_control.set_attention(v);
    }

    /// Whether the write buffer manager asks for a flush or a stall (a few relaxed loads,
    /// checked by every write leader; the families are scanned only when it does).
    #[inline]
    fn write_buffer_manager_wants_attention(&self) -> bool {
        self.config.write_buffer_manager.as_ref().is_some_and(|w| w.should_flush() || w.should_stall())
    }

    /// When the write buffer manager says flush, the family whose active memtable holds the
    /// oldest data (RocksDB's `HandleWriteBufferManagerFlush` picks the oldest memtable).
    fn pick_for_write_buffer_manager(&self, st: &DbState) -> Option<u32> {
        if !self.config.write_buffer_manager.as_ref().is_some_and(|w| w.should_flush()) {
            return None;
        }
        st.cfs
            .iter()
            .filter(|(_, c)| !c.mem.is_empty())
            .min_by_key(|(_, c)| c.mem.first_seqno())
            .map(|(id, _)| *id)
    }

    /// Switches the non-empty memtables of family `only` (every family when None) for a
    /// manual flush; returns, per family switched, the count its flushes must reach.
    pub fn switch_for_flush(&self, only: Option<u32>) -> Result<Vec<(u32, u64)>> {
        {
            // Nothing to switch: no need to wait for write leadership (which a writer
            // stopped by a stall holds).
            let st = self.lock_state();
            let empty = |c: &super::CfState| c.mem.is_empty();
            let nothing = match only {
                Some(id) => st.cfs.get(&id).is_none_or(empty),
                None => st.cfs.values().all(empty),
            };
            if nothing {
                if let Some(e) = st.errors.stop_error() {
                    return Err(e);
                }
                let targets = flush_targets(&st, only);
                drop(st);
                // A flush makes every earlier write durable: with nothing to switch, the
                // WALs are synced (other families' writes may be in them).
                self.sync_wal()?;
                return Ok(targets);
            }
        }
        self.exclusive_write(|| {
            let mut st = self.lock_state();
            if let Some(e) = st.errors.stop_error() {
                return Err(e);
            }
            let ids: Vec<u32> = match only {
                Some(id) => {
                    st.cfs.get(&id).filter(|c| !c.mem.is_empty()).map(|_| vec![id]).unwrap_or_default()
                }
                None => st.cfs.iter().filter(|(_, c)| !c.mem.is_empty()).map(|(id, _)| *id).collect(),
            };
            if !ids.is_empty() {
                self.switch_memtables(&mut st, &ids, false)?;
            }
            Ok(flush_targets(&st, only))
        })
    }

    /// Syncs the WALs (closed ones not yet synced, then the current one) if any holds
    /// unsynced writes, outside the WAL lock (`wal_sync.rs`). A failure is a WAL write error.
    pub fn sync_wal(&self) -> Result<()> {
        match self.sync_wals_unlocked(false) {
            Ok(synced) => {
                if synced {
                    self.stats.wal_syncs.fetch_add(1, Ordering::Relaxed);
                    record_tick(self.config.statistics.as_deref(), Ticker::WalFileSynced, 1);
                }
                Ok(())
            }
            Err(e) => {
                self.set_bg_error(e.clone(), BgErrorReason::WriteCallback);
                Err(e)
            }
        }
    }

    /// Moves the active memtables of `cfs` to their immutable lists, starts a new WAL, and
    /// queues the families for flush; returns the new WAL's number. The caller holds write
    /// leadership. `recovering`: for error recovery (see `roll_wal`).
    pub fn switch_memtables(
        &self,
        st: &mut MutexGuard<'_, DbState>,
        cfs: &[u32],
        recovering: bool,
    ) -> Result<u64> {
        // RocksDB's SwitchMemtable sizes the new WAL's preallocation block from the write
        // buffer of the family being switched.
        let write_buffer_size = cfs
            .first()
            .and_then(|id| st.cfs.get(id))
            .map_or(0, |c| c.handle.config().write_buffer_size as u64);
        let new_wal = self.roll_wal(st, recovering, write_buffer_size)?;
        for id in cfs {
            let Some(cf) = st.cfs.get_mut(id) else { continue };
            let fresh = cf.handle.new_memtable(new_wal);
            // Every write up to here is in the old memtables (the caller leads the writes):
            // the new one holds what comes after, as RocksDB's ConstructNewMemtable(seq).
            fresh.set_earliest_seqno(self.last_sequence());
            let old = std::mem::replace(&mut cf.mem, fresh);
            old.mark_immutable();
            // Blob direct write: the open blob files go with the memtable their indexes are
            // in (RocksDB's RotateCurrentGeneration; no I/O).
            if let Some(w) = &cf.handle.direct_write {
                *old.direct_blobs.lock() = w.rotate();
            }
            cf.imm.push((old, new_wal));
            cf.mems_switched += 1;
            cf.install_super_version();
            self.publish_active_memtable(*id, Some(cf));
            self.schedule_flush(st, *id);
            self.stall_changed(st, *id);
        }
        // RocksDB's `SwitchMemtable` ends by scheduling the next WAL's precreation.
        self.maybe_schedule_wal_precreate(st, write_buffer_size);
        Ok(new_wal)
    }

    /// Starts a new WAL (skipped when the current one is empty), with the DB mutex released
    /// (the caller's write leadership keeps writers out). The old WAL is not synced
    /// (RocksDB's `SwitchMemtable`): it joins the closed WALs that a later sync write, WAL
    /// sync or multi-family flush syncs first (`wal_sync.rs`); one already synced whole is
    /// recorded as synced at once. Nor is the directory synced: the next sync does it. A
    /// failure is a memtable-switch error (fatal, as in RocksDB). When `recovering` from a
    /// background error, a WAL that saw a failed append is replaced too, the old one is
    /// abandoned, never to be synced (what it holds is in the memtables about to be flushed;
    /// what its buffer holds was never acknowledged), and a failure is left to the recovery
    /// attempt.
    /// `write_buffer_size`: the switched family's, which sizes the new WAL's preallocation
    /// (`allow_fallocate`).
    fn roll_wal(
        &self,
        st: &mut MutexGuard<'_, DbState>,
        recovering: bool,
        write_buffer_size: u64,
    ) -> Result<u64> {
        let mut closed: Option<(u64, u64)> = None;
        let mut closed_size: Option<(u64, u64)> = None;
        // `recycle_log_file_num`: the oldest kept WAL is reused, unless file deletions are
        // disabled (a checkpoint may be linking it; RocksDB does not rename then). Taken off
        // the list here so no other switch takes it; put back if no WAL is made.
        let recycle = if self.config.recycle_log_file_num > 0 && st.file_deletion_holds == 0 {
            st.wal_recycle.pop_front()
        } else {
            None
        };
        let recycling = self.config.recycle_log_file_num > 0;
        // `async_wal_precreate`: the file made ahead, with its number (`wal_precreate.rs`).
        let mut precreated = self.take_wal_precreate(st);
        let r = super::unlocked(st, || -> Result<(u64, bool)> {
            let mut wal = self.lock_or_halt(&self.wal, "WAL")?;
            if wal.writer.is_empty_log() && !(recovering && wal.writer.has_failed()) {
                return Ok((wal.number, false));
            }
            self.count_wal_precreate(precreated.is_some());
            // A writer that saw a failed append (only replaced when recovering) is abandoned.
            let keep_old = !(recovering && wal.writer.has_failed());
            if keep_old {
                // What the old writer holds reaches the file before it is closed.
                wal.writer.flush()?;
            }
            let (number, file, was_precreated) = match precreated.take() {
                Some((number, file)) => (number, file, true),
                None => {
                    let number = self.versions.new_file_number();
                    let path = super::filename::wal_file(&self.wal_dir(), number);
                    let file = match recycle {
                        Some(old) => {
                            self.info_log.log(format_args!("reusing log {old} from recycle list"));
                            let old_path = super::filename::wal_file(&self.wal_dir(), old);
                            let max = self.live_options.file_writes.max_buffer_size();
                            self.fs.reuse_writable_file(&path, &old_path, max)?
                        }
                        None => self.fs.new_writable_file(&path)?,
                    };
                    let prealloc = self.config.wal_preallocation(write_buffer_size);
                    (number, crate::fs::Preallocating::wrap(file, prealloc), false)
                }
            };
            let mut writer = LogWriter::new(file, number)
                // As set now (`set_db_options`, RocksDB's `CreateWAL` building the WAL's file
                // options from the mutable DB options in force).
                .with_bytes_per_sync(self.live_options.file_writes.wal_bytes_per_sync())
                .with_strict_range_sync(self.live_options.file_writes.strict_bytes_per_sync())
                .with_recycling(recycling)
                .with_track_and_verify_wals(self.config.track_and_verify_wals);
            // `track_and_verify_wals`: the new WAL names the current one (RocksDB's
            // `SwitchMemtable` takes `logs_.back()`'s number, size and last sequence).
            let started = writer
                .add_compression_type_record(self.config.wal_compression)
                .and_then(|()| writer.add_predecessor_wal_info(&wal.writer.predecessor_info()));
            if let Err(e) = started {
                if was_precreated {
                    // RocksDB deletes a precreated WAL it could not start.
                    drop(writer);
                    let path = super::filename::wal_file(&self.wal_dir(), number);
                    if let Err(d) = self.fs.remove_file(&path) {
                        self.info_log.log_at(
                            crate::config::LogLevel::Warn,
                            format_args!("Failed to delete unstarted async precreated WAL #{number}: {d}"),
                        );
                    }
                }
                return Err(e);
            }
            let old = std::mem::replace(&mut wal.writer, writer);
            let old_number = std::mem::replace(&mut wal.number, number);
            if keep_old {
                let size = old.file_size();
                closed_size = Some((old_number, size));
                if wal.unsynced {
                    self.wal_meta.lock().closed.push(super::wal_sync::ClosedWal {
                        number: old_number,
                        size,
                        writer: std::sync::Arc::new(parking_lot::Mutex::new(old)),
                    });
                } else {
                    // Synced whole by the last sync write: RocksDB's MarkLogsSynced records it.
                    closed = Some((old_number, size));
                    if self.closes_inactive_wals_in_background() {
                        // `background_close_inactive_wals`: the next purge closes it.
                        self.wal_meta.lock().to_free.push(std::sync::Arc::new(parking_lot::Mutex::new(old)));
                    }
                }
            }
            wal.unsynced = false;
            wal.dir_synced = false;
            Ok((number, true))
        });
        if let (Some(old), Ok((_, false))) = (recycle, &r) {
            st.wal_recycle.push_front(old);
        }
        if let Some((number, file)) = precreated {
            // Not used (the current WAL was empty): it waits for the next switch.
            self.return_wal_precreate(st, number, file);
        }
        match r {
            Ok((number, rolled)) => {
                if rolled {
                    st.alive_wals.push_back(number);
                    if let Some((n, size)) = closed_size {
                        self.wal_total.closed(n, size);
                    }
                    self.wal_total.refresh(st);
                    if let (true, Some((n, size))) = (self.config.track_and_verify_wals_in_manifest, closed) {
                        if size > 0 {
                            st.pending_wal_additions.push(crate::version::edit::WalAddition {
                                number: n,
                                synced_size: Some(size),
                            });
                        }
                    }
                }
                Ok(number)
            }
            Err(e) => {
                if !recovering {
                    self.set_bg_error_in(st, e.clone(), BgErrorReason::MemTable);
                }
                Err(e)
            }
        }
    }
}

/// Per family (`only`, or all), the number of memtable switches a flush waits to see
/// flushed (`CfState::mems_flushed`).
fn flush_targets(st: &DbState, only: Option<u32>) -> Vec<(u32, u64)> {
    match only {
        Some(id) => st.cfs.get(&id).map(|c| vec![(id, c.mems_switched)]).unwrap_or_default(),
        None => st.cfs.iter().map(|(id, c)| (*id, c.mems_switched)).collect(),
    }
}

/// The column family of the first record of the batch bytes `data` (0 for a record of the
/// default family, a record without one, or bytes too short): a hint for prefetching only.
fn first_family(data: &[u8]) -> u32 {
    use crate::batch::tag;
    let Some(&t) = data.get(crate::batch::HEADER_SIZE) else { return 0 };
    let with_cf = matches!(
        t,
        tag::CF_DELETION
            | tag::CF_VALUE
            | tag::CF_MERGE
            | tag::CF_SINGLE_DELETION
            | tag::CF_RANGE_DELETION
            | tag::CF_BLOB_INDEX
            | tag::CF_WIDE_COLUMN_ENTITY
    );
    if !with_cf {
        return 0;
    }
    // varint32
    let mut id = 0u32;
    for (i, &b) in data.iter().skip(crate::batch::HEADER_SIZE + 1).take(5).enumerate() {
        id |= u32::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return id;
        }
    }
    0
}

/// What of a write group's leader decides which writers join its group (`build_group`).
#[derive(Clone, Copy)]
struct Lead {
    sync: bool,
    disable_wal: bool,
    /// The leader's batch's size in bytes.
    size: usize,
    /// The leader writes alone: an exclusive writer, or a two-phase commit's batch.
    alone: bool,
}

impl Lead {
    fn of(w: &PendingWrite) -> Lead {
        Lead {
            sync: w.sync,
            disable_wal: w.disable_wal,
            size: w.batch.as_ref().map_or(0, |b| b.size_in_bytes()),
            alone: w.exclusive || w.batch.as_ref().is_some_and(|b| b.wal_end.is_some()),
        }
    }
}

/// Leader plus the writers queued behind it that can share its WAL record, up to
/// `max_bytes` (`max_write_batch_group_size_bytes`) in all, or the leader's size plus an
/// eighth of it when the leader is at most that eighth (RocksDB's
/// `WriteThread::EnterAsBatchGroupLeader`).
///
/// `lead`: what of the leader (the queue's front) decides the group, read by the leader's
/// own thread before it queued (its state is not locked again for it).
fn build_group(queue: &VecDeque<Arc<Writer>>, max_bytes: u64, lead: Lead) -> Group {
    let mut group = Group::new();
    let Some(first) = queue.front() else { return group };
    let Lead { sync: lead_sync, disable_wal: lead_nowal, size: lead_size, alone: lead_excl } = lead;
    group.push(first.clone());
    if lead_excl {
        return group;
    }
    let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let eighth = max_bytes / 8;
    let max = if lead_size <= eighth { lead_size.saturating_add(eighth) } else { max_bytes };
    let mut size = lead_size;
    for w in queue.iter().skip(1) {
        let g = lock(w);
        let alone = g.batch.as_ref().is_some_and(|b| b.wal_end.is_some());
        if g.exclusive || alone || (g.sync && !lead_sync) || g.disable_wal != lead_nowal {
            break;
        }
        let n = g.batch.as_ref().map_or(0, |b| b.size_in_bytes());
        if size.saturating_add(n) > max {
            break;
        }
        size += n;
        drop(g);
        group.push(w.clone());
    }
    group
}

/// Inserts `batch`'s records into the active memtables of their families, with sequences
/// from `seq` on (`concurrent`: other writers insert into the same memtables at once), and
/// notes in `full` the families whose memtable reached its write buffer size (checked when
/// the batch moves on to another family and at the end, not per record).
/// What a `max_successive_merges` merge is written as instead of its operand (None: the
/// operand); see `DbInner::merge_on_write`.
type MergeOnWrite<'a> = &'a dyn Fn(u32, &Arc<MemTable>, SequenceNumber, &[u8], &[u8]) -> Option<Vec<u8>>;

/// How `insert_batch` inserts: `concurrent` (other writers insert into the same memtables at
/// once), `skip_missing` (records of missing families are skipped), `hint_per_batch`
/// (RocksDB's `memtable_insert_hint_per_batch`: a concurrent insert keeps one skip-list
/// splice per memtable for this batch, RocksDB's `MemTableInserter::GetHintMap`).
#[derive(Clone, Copy)]
struct Insert {
    concurrent: bool,
    skip_missing: bool,
    hint_per_batch: bool,
}

fn insert_batch(
    mems: &ActiveMems,
    batch: &WriteBatch,
    mut seq: u64,
    how: Insert,
    full: &mut Vec<u32>,
    merge: Option<MergeOnWrite<'_>>,
) -> Result<()> {
    let Insert { concurrent, skip_missing, hint_per_batch } = how;
    // The batch's hints, one per memtable it inserted into (by the memtable's address),
    // freed when the batch is done: they are no part of any memtable's usage.
    let mut hints: smallvec::SmallVec<[(*const MemTable, crate::memtable::skiplist::InsertHint); 2]> =
        smallvec::SmallVec::new();
    let check = |id: u32, full: &mut Vec<u32>| {
        if let Some(Some(m)) = mems.get(id as usize) {
            let is_full = m.mem.approximate_memory_usage() >= m.limit || m.mem.should_flush_now();
            if is_full && !full.contains(&id) {
                full.push(id);
            }
        }
    };
    let mut last: Option<u32> = None;
    batch.for_each(&mut |e| {
        let Some(Some(m)) = mems.get(e.cf_id as usize) else {
            if skip_missing {
                // RocksDB's MemTableInserter: a skipped record still takes its sequence.
                seq += 1;
                return Ok(());
            }
            return Err(Error::invalid_argument("column family vanished"));
        };
        let mem = &m.mem;
        if concurrent && hint_per_batch {
            let at = Arc::as_ptr(mem);
            let i = match hints.iter().position(|(m, _)| *m == at) {
                Some(i) => i,
                None => {
                    hints.push((at, Default::default()));
                    hints.len() - 1
                }
            };
            mem.add_concurrently_with_hint(seq, e.value_type, e.key, e.value, &mut hints[i].1);
        } else if concurrent {
            mem.add_concurrently(seq, e.value_type, e.key, e.value);
        } else {
            let merged = match merge {
                Some(f) if e.value_type == ValueType::Merge && mem.max_successive_merges() > 0 => {
                    f(e.cf_id, mem, seq, e.key, e.value)
                }
                _ => None,
            };
            match &merged {
                Some(v) => mem.add(seq, ValueType::Value, e.key, v),
                // A Put may overwrite in place (`inplace_update_support`).
                None => mem.put(seq, e.value_type, e.key, e.value),
            };
        }
        seq += 1;
        if last != Some(e.cf_id) {
            if let Some(prev) = last {
                check(prev, full);
            }
            last = Some(e.cf_id);
        }
        Ok(())
    })?;
    if let Some(prev) = last {
        check(prev, full);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{build_group, first_family, Lead, PendingWrite, Writer};
    use crate::batch::{tag, Batch as WriteBatch, HEADER_SIZE};
    use std::collections::VecDeque;
    use std::sync::Arc;

    fn writer(value_len: usize) -> Arc<Writer> {
        let mut b = WriteBatch::default();
        b.put(b"k", vec![b'v'; value_len]);
        Writer::new(PendingWrite {
            batch: Some(b),
            sync: false,
            disable_wal: false,
            exclusive: false,
            ignore_missing: false,
            hint_per_batch: false,
            done: false,
            result: None,
            task: None,
            mem_lead: false,
            own_insert: None,
        })
    }

    /// `max_write_batch_group_size_bytes` bounds a group as RocksDB's
    /// `EnterAsBatchGroupLeader`: the limit, or the leader plus an eighth of it.
    #[test]
    fn group_size_follows_max_write_batch_group_size_bytes() {
        let queue: VecDeque<Arc<Writer>> = (0..10).map(|_| writer(100)).collect();
        let lead = Lead::of(&super::lock(&queue[0]));
        let size = lead.size as u64;
        // RocksDB's default (1 MiB): all ten share the leader's WAL record.
        assert_eq!(build_group(&queue, 1 << 20, lead).len(), 10);
        // A leader no larger than an eighth of the limit grows by that eighth: two more.
        assert_eq!(build_group(&queue, 8 * 2 * size, lead).len(), 3);
        // A leader above the eighth: the limit itself, here four writers' worth.
        assert_eq!(build_group(&queue, 4 * size, lead).len(), 4);
        // Below one batch: the leader alone.
        assert_eq!(build_group(&queue, 1, lead).len(), 1);
    }

    fn record(tag: u8, rest: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; HEADER_SIZE];
        v.push(tag);
        v.extend_from_slice(rest);
        v
    }

    #[test]
    fn first_family_reads_the_first_records_family() {
        // Family 300 is the varint 0xAC 0x02; a key of one byte follows.
        assert_eq!(first_family(&record(tag::CF_VALUE, &[0xAC, 0x02, 1, b'k'])), 300);
        assert_eq!(first_family(&record(tag::CF_DELETION, &[7, 1, b'k'])), 7);
        assert_eq!(first_family(&record(tag::VALUE, &[1, b'k', 1, b'v'])), 0);
        // Too short or a truncated varint: 0, never a panic.
        assert_eq!(first_family(&[0u8; HEADER_SIZE]), 0);
        assert_eq!(first_family(&record(tag::CF_MERGE, &[0x80, 0x80])), 0);
    }
}
