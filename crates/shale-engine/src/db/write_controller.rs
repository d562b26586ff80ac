//! Write stalls, as RocksDB's WriteController and `RecalculateWriteStallConditions`.
//!
//! Each family has a stall condition, recomputed under the DB mutex whenever its memtable
//! list or Version changes (`recalculate`):
//!
//! | condition | stop | delay |
//! |---|---|---|
//! | unflushed memtables | `>= max_write_buffer_number` | `>= max_write_buffer_number - 1` (when that is above 3) |
//! | level-0 files | `>= level0_stop_writes_trigger` | `>= level0_slowdown_writes_trigger` |
//! | pending compaction bytes | `>= hard_pending_compaction_bytes_limit` | `>= soft_pending_compaction_bytes_limit` |
//!
//! (the level-0 and pending-bytes rows only with automatic compactions on). The DB counts
//! the families that stop or delay (`DbState::stopped_cfs` / `delayed_cfs`) and mirrors
//! "anything to look at" into `WriteController::attention`, the one atomic the write leader
//! reads on its fast path. A stopped write waits for a job to finish (`done_cv`), or with
//! `no_slowdown` fails with Incomplete; a delayed write sleeps as long as
//! `delayed_write_rate` bytes per second asks (a token bucket refilled every millisecond, as
//! RocksDB's `GetDelay`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use super::{CfState, DbState};
use crate::compaction::picker;

/// A family's write-stall condition (RocksDB's `WriteStallCondition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallCondition {
    Normal,
    Delayed,
    Stopped,
}

/// The condition `cf` puts writes in, and whether it needs compactions sped up (RocksDB's
/// compaction pressure: more than one compaction may run at once).
pub fn condition(cf: &CfState) -> (StallCondition, bool) {
    let o = cf.handle.config();
    let imm = cf.imm.len() as i32;
    let l0 = cf.current.num_files(0) as i32;
    let auto = !o.disable_auto_compactions;
    // FIFO deletes level-0 files instead of compacting them: its file count never stalls
    // writes (RocksDB sets both triggers to the maximum for FIFO).
    // Universal counts every sorted run as RocksDB does (`l0_delay_trigger_count`).
    let l0 = match o.style {
        crate::config::CompactionStyle::Fifo => 0,
        crate::config::CompactionStyle::Universal => {
            crate::compaction::universal::num_sorted_runs(&cf.current) as i32
        }
        // RocksDB's `l0_delay_trigger_count` is the level-0 file count but under universal.
        crate::config::CompactionStyle::Level | crate::config::CompactionStyle::None => l0,
    };
    let pending = if auto { picker::estimated_pending_bytes(&cf.current, cf.handle.config()) } else { 0 };
    let hard = o.hard_pending_compaction_bytes_limit;
    let soft = o.soft_pending_compaction_bytes_limit;
    let stall = if imm >= o.max_write_buffer_number
        || (auto && l0 >= o.level0_stop_writes_trigger)
        || (auto && hard > 0 && pending >= hard)
    {
        StallCondition::Stopped
    } else if (o.max_write_buffer_number > 3 && imm >= o.max_write_buffer_number - 1)
        || (auto && l0 >= o.level0_slowdown_writes_trigger)
        || (auto && soft > 0 && pending >= soft)
    {
        StallCondition::Delayed
    } else {
        StallCondition::Normal
    };
    // RocksDB's GetL0ThresholdSpeedupCompaction and the quarter-of-soft-limit rule.
    // In 64 bits, as RocksDB computes it: PrepareForBulkLoad's 1 << 30 triggers would
    // overflow 32.
    let trigger = i64::from(o.level0_file_num_compaction_trigger.max(1));
    let slowdown = i64::from(o.level0_slowdown_writes_trigger);
    let speedup_l0 = (2 * trigger).min(trigger + (slowdown - trigger) / 4);
    let l0 = i64::from(l0);
    let speedup = stall != StallCondition::Normal
        || (auto && l0 >= speedup_l0.max(trigger))
        || (auto && soft > 0 && pending >= soft / 4);
    (stall, speedup)
}

/// Which of `condition`'s rules stalls `cf` (checked in RocksDB's order: memtables, then
/// level-0 files, then pending compaction bytes).
fn stall_cause(cf: &CfState, stopped: bool) -> super::internal_stats::StallCause {
    use super::internal_stats::StallCause;
    let o = cf.handle.config();
    let imm = cf.imm.len() as i32;
    let memtables = if stopped {
        imm >= o.max_write_buffer_number
    } else {
        o.max_write_buffer_number > 3 && imm >= o.max_write_buffer_number - 1
    };
    let l0 = cf.current.num_files(0) as i32;
    let l0_limit = if stopped { o.level0_stop_writes_trigger } else { o.level0_slowdown_writes_trigger };
    let fifo = o.style == crate::config::CompactionStyle::Fifo;
    if memtables {
        StallCause::MemtableLimit
    } else if !o.disable_auto_compactions && !fifo && l0 >= l0_limit {
        StallCause::L0FileCountLimit
    } else {
        StallCause::PendingCompactionBytes
    }
}

/// Recomputes family `id`'s condition and the DB's counts. Returns true when it changed.
pub fn recalculate(st: &mut DbState, id: u32) -> bool {
    let Some(cf) = st.cfs.get_mut(&id) else { return false };
    let (new, speedup) = condition(cf);
    if new != StallCondition::Normal {
        // RocksDB counts each recalculation that finds a stall, by cause (rocksdb.cfstats).
        let stopped = new == StallCondition::Stopped;
        cf.handle.internal_stats.add_stall(stall_cause(cf, stopped), stopped, !cf.running.is_empty());
    }
    let old = std::mem::replace(&mut cf.stall, new);
    let old_speedup = std::mem::replace(&mut cf.speedup, speedup);
    adjust(st, old, -1);
    adjust(st, new, 1);
    if old_speedup != speedup {
        if speedup {
            st.speedup_cfs += 1;
        } else {
            st.speedup_cfs -= 1;
        }
    }
    old != new
}

/// Takes a removed family out of the counts.
pub fn forget(st: &mut DbState, cf: &CfState) {
    adjust(st, cf.stall, -1);
    if cf.speedup {
        st.speedup_cfs -= 1;
    }
}

fn adjust(st: &mut DbState, c: StallCondition, by: isize) {
    let slot = match c {
        StallCondition::Normal => return,
        StallCondition::Delayed => &mut st.delayed_cfs,
        StallCondition::Stopped => &mut st.stopped_cfs,
    };
    *slot = slot.saturating_add_signed(by);
}

/// What the write leader reads without the DB mutex, and the delay token bucket.
pub struct WriteController {
    /// Something needs the leader to take the DB mutex before writing: a stop or delay, a
    /// full memtable to switch, a background error, memtable memory over its limit.
    attention: AtomicBool,
    rate: AtomicU64,
    bucket: Mutex<Bucket>,
}

struct Bucket {
    credit: u64,
    next_refill: Option<Instant>,
}

const MICROS_PER_REFILL: u64 = 1000;

impl WriteController {
    pub fn new(rate: u64) -> WriteController {
        WriteController {
            attention: AtomicBool::new(false),
            rate: AtomicU64::new(rate.max(1)),
            bucket: Mutex::new(Bucket { credit: 0, next_refill: None }),
        }
    }

    pub fn needs_attention(&self) -> bool {
        self.attention.load(Ordering::Acquire)
    }

    pub fn set_attention(&self, v: bool) {
        self.attention.store(v, Ordering::Release);
    }

    pub fn delayed_write_rate(&self) -> u64 {
        self.rate.load(Ordering::Relaxed)
    }

    /// `SetDBOptions`' `delayed_write_rate` (RocksDB's `set_max_delayed_write_rate`: 0 counts
    /// as 1 byte a second): delays from then on follow it.
    pub fn set_delayed_write_rate(&self, rate: u64) {
        self.rate.store(rate.max(1), Ordering::Relaxed);
    }

    /// Microseconds a delayed write of `bytes` must wait (RocksDB's `GetDelay`).
    pub fn delay_micros(&self, bytes: u64) -> u64 {
        let rate = self.delayed_write_rate();
        let mut b = self.bucket.lock();
        if b.credit >= bytes {
            b.credit -= bytes;
            return 0;
        }
        let now = Instant::now();
        let refill_at = *b.next_refill.get_or_insert(now);
        if refill_at <= now {
            let elapsed = now.duration_since(refill_at).as_micros() as u64 + MICROS_PER_REFILL;
            b.credit += elapsed.saturating_mul(rate) / 1_000_000;
            b.next_refill = Some(now + std::time::Duration::from_micros(MICROS_PER_REFILL));
            if b.credit >= bytes {
                b.credit -= bytes;
                return 0;
            }
        }
        let over = bytes - b.credit;
        b.credit = 0;
        let needed = over.saturating_mul(1_000_000) / rate;
        let next = b.next_refill.unwrap_or(now) + std::time::Duration::from_micros(needed);
        b.next_refill = Some(next);
        (next.saturating_duration_since(now).as_micros() as u64).max(MICROS_PER_REFILL)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::StallCondition::{Delayed, Normal, Stopped};
    use super::*;
    use crate::cache::BlockCache;
    use crate::config::CfConfig;
    use crate::db::cf::{CfHandle, SuperVersion};
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
    use crate::memtable::MemTable;
    use crate::version::{FileMetaData, Version};

    /// A family with tables of the given (level, size) and `imm` immutable memtables.
    fn family(opts: &CfConfig, files: &[(u32, u64)], imm: usize) -> CfState {
        let icmp = bytewise_internal_comparator();
        let files = files
            .iter()
            .enumerate()
            .map(|(i, &(level, size))| {
                let f = FileMetaData {
                    number: i as u64 + 1,
                    file_size: size,
                    smallest: make_internal_key(format!("k{i:03}a").as_bytes(), 1, ValueType::Value),
                    largest: make_internal_key(format!("k{i:03}z").as_bytes(), 1, ValueType::Value),
                    ..Default::default()
                };
                (level, Arc::new(f))
            })
            .collect();
        let v = Arc::new(Version::new(icmp.clone(), 7, files));
        let mem = Arc::new(MemTable::new(icmp, 0));
        let sv = SuperVersion::new(1, mem.clone(), Vec::new(), v.clone());
        let h = Arc::new(CfHandle::new(
            1,
            "t",
            opts.clone(),
            Arc::new(()),
            &Arc::new(BlockCache::new(1 << 20)),
            sv,
        ));
        let mut c = CfState::new(h, mem.clone(), v, 0);
        c.imm = (0..imm).map(|_| (mem.clone(), 0)).collect();
        c
    }

    fn l0(n: usize) -> Vec<(u32, u64)> {
        vec![(0, 100); n]
    }

    #[test]
    fn conditions_follow_rocksdbs_triggers() {
        let o = CfConfig::default(); // slowdown 20, stop 36, max_write_buffer_number 2
        assert_eq!(condition(&family(&o, &[], 0)).0, Normal);
        assert_eq!(condition(&family(&o, &[], 1)).0, Normal);
        assert_eq!(condition(&family(&o, &[], 2)).0, Stopped, "memtables >= max_write_buffer_number");
        assert_eq!(condition(&family(&o, &l0(19), 0)).0, Normal);
        assert_eq!(condition(&family(&o, &l0(20), 0)).0, Delayed);
        assert_eq!(condition(&family(&o, &l0(36), 0)).0, Stopped);

        // Without automatic compactions the level-0 triggers do not apply (RocksDB).
        let off = CfConfig { disable_auto_compactions: true, ..o.clone() };
        assert_eq!(condition(&family(&off, &l0(36), 0)).0, Normal);

        // More than 3 memtables allowed: one short of the limit delays.
        let many = CfConfig { max_write_buffer_number: 5, ..o.clone() };
        assert_eq!(condition(&family(&many, &[], 3)).0, Normal);
        assert_eq!(condition(&family(&many, &[], 4)).0, Delayed);
        assert_eq!(condition(&family(&many, &[], 5)).0, Stopped);

        // Pending compaction bytes against the soft and hard limits.
        let p = CfConfig {
            max_bytes_for_level_base: 1000,
            soft_pending_compaction_bytes_limit: 5000,
            hard_pending_compaction_bytes_limit: 50_000,
            ..o.clone()
        };
        assert_eq!(condition(&family(&p, &[(1, 2000)], 0)).0, Normal);
        assert_eq!(condition(&family(&p, &[(1, 10_000)], 0)).0, Delayed);
        assert_eq!(condition(&family(&p, &[(1, 100_000)], 0)).0, Stopped);
    }

    #[test]
    fn compaction_pressure_starts_before_the_slowdown() {
        // trigger 4, slowdown 20: min(2 * 4, 4 + (20 - 4) / 4) = 8 level-0 files.
        let o = CfConfig::default();
        assert!(!condition(&family(&o, &l0(7), 0)).1);
        assert!(condition(&family(&o, &l0(8), 0)).1);
    }

    #[test]
    fn delay_follows_the_rate() {
        // 1 MiB/s; 100 KiB over an empty bucket: about 100 ms.
        let w = WriteController::new(1 << 20);
        let d = w.delay_micros(100 << 10);
        assert!((80_000..=120_000).contains(&d), "{d} us");
        // Small writes ride on the credit of a refill.
        let w = WriteController::new(1 << 30);
        assert_eq!(w.delay_micros(10), 0);
    }
}
