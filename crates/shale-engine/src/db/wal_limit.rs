//! `max_total_wal_size`: when the live WALs grow past it, the families whose unflushed data
//! holds the oldest live WAL are flushed, so that WAL can be deleted (RocksDB's
//! `DBImpl::SwitchWAL`, called from `PreprocessWrite`).
//!
//! As RocksDB 11.8.1:
//! - the limit is `max_total_wal_size`, or with 0 (the default) four times the memtable
//!   memory of all families, `4 * sum(write_buffer_size * max_write_buffer_number)`
//!   (`GetMaxTotalWalSize`, `max_total_in_memory_state_`);
//! - the size counted is every live WAL's: the closed ones (their size when closed) and the
//!   current one (`wals_total_size_`); a WAL leaves the count when it becomes obsolete;
//! - only a database with more than one column family does this (with one, the memtable's
//!   own flush frees the WALs);
//! - the oldest live WAL is handled once (`getting_flushed`): the families with data whose
//!   log number is at or below it get their memtables switched and flushed, immutable ones
//!   included whatever `min_write_buffer_number_to_merge` says (`FlushRequested`).
//!
//! The write leader checks the count after each WAL write (a few relaxed loads) and, past the
//! limit, asks for the slow path, where `preprocess_write` (`write.rs`) picks the families.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::DbState;
use crate::config::DbConfig;

/// The live WALs' sizes and the limit (leaf lock inside).
pub struct WalTotal {
    /// Sum of the closed live WALs' sizes.
    closed_bytes: AtomicU64,
    /// `max_total_wal_size` in force (0: four times the memtable memory); `set_db_options`
    /// changes it.
    configured: AtomicU64,
    /// The limit in bytes (recomputed as families and options change).
    limit: AtomicU64,
    /// More than one column family: the only case where the limit acts.
    multi_family: AtomicBool,
    /// The last write found the total over the limit.
    over: AtomicBool,
    /// The oldest WAL whose families were already asked to flush (RocksDB's
    /// `getting_flushed`); 0: none.
    flushing_for: AtomicU64,
    /// The total the last write saw (for the LOG line).
    last_total: AtomicU64,
    /// Closed live WALs: number -> size.
    sizes: parking_lot::Mutex<BTreeMap<u64, u64>>,
}

impl WalTotal {
    pub fn new(config: &DbConfig) -> WalTotal {
        let t = WalTotal {
            closed_bytes: AtomicU64::new(0),
            configured: AtomicU64::new(config.max_total_wal_size),
            limit: AtomicU64::new(u64::MAX),
            multi_family: AtomicBool::new(false),
            over: AtomicBool::new(false),
            flushing_for: AtomicU64::new(0),
            last_total: AtomicU64::new(0),
            sizes: parking_lot::Mutex::new(BTreeMap::new()),
        };
        if config.max_total_wal_size > 0 {
            t.limit.store(config.max_total_wal_size, Ordering::Relaxed);
        }
        t
    }

    /// `max_total_wal_size` in force.
    pub fn configured(&self) -> u64 {
        self.configured.load(Ordering::Relaxed)
    }

    /// `SetDBOptions`' `max_total_wal_size`: the limit follows at once (DB mutex held).
    pub fn set_configured(&self, bytes: u64, st: &DbState) {
        self.configured.store(bytes, Ordering::Relaxed);
        self.refresh(st);
    }

    /// Recomputes the limit and the family count from the open families (DB mutex held).
    pub fn refresh(&self, st: &DbState) {
        let live = st.cfs.values().filter(|c| !c.dropping);
        let mut families = 0usize;
        let mut in_memory: u64 = 0;
        for c in live {
            families += 1;
            let o = c.handle.config();
            in_memory = in_memory.saturating_add(
                (o.write_buffer_size as u64).saturating_mul(o.max_write_buffer_number as u64),
            );
        }
        let configured = self.configured();
        let limit = if configured > 0 { configured } else { in_memory.saturating_mul(4) };
        self.limit.store(limit, Ordering::Relaxed);
        self.multi_family.store(families > 1, Ordering::Relaxed);
    }

    /// A WAL was closed at `size` bytes (it stays live until obsolete).
    pub fn closed(&self, number: u64, size: u64) {
        self.sizes.lock().insert(number, size);
        self.closed_bytes.fetch_add(size, Ordering::Relaxed);
    }

    /// These WALs became obsolete: they leave the count.
    pub fn removed(&self, numbers: &[u64]) {
        let mut sizes = self.sizes.lock();
        for n in numbers {
            if let Some(s) = sizes.remove(n) {
                self.closed_bytes.fetch_sub(s, Ordering::Relaxed);
            }
        }
    }

    /// Every live WAL's bytes, the current one being `current` bytes long.
    pub fn total(&self, current: u64) -> u64 {
        self.closed_bytes.load(Ordering::Relaxed).saturating_add(current)
    }

    /// After a WAL write: whether the slow path must flush for the WAL limit.
    #[inline]
    pub fn check(&self, current: u64) -> bool {
        let total = self.total(current);
        self.last_total.store(total, Ordering::Relaxed);
        let over = self.multi_family.load(Ordering::Relaxed) && total > self.limit.load(Ordering::Relaxed);
        if over {
            self.over.store(true, Ordering::Relaxed);
        }
        over
    }

    pub fn is_over(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    /// The live WALs' total as the last write saw it.
    pub fn last_total(&self) -> u64 {
        self.last_total.load(Ordering::Relaxed)
    }

    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// RocksDB's `SwitchWAL` choice (DB mutex held): the families whose data holds the oldest
    /// live WAL, as (families whose active memtable must be switched, families with only
    /// immutable memtables to flush). Empty when the oldest WAL was already handled or is
    /// the current one.
    pub fn take_families_to_flush(&self, st: &DbState) -> Option<(u64, Vec<u32>, Vec<u32>)> {
        if !self.over.swap(false, Ordering::Relaxed) || st.cfs.len() < 2 {
            return None;
        }
        self.families_holding_oldest(st)
    }

    /// `take_families_to_flush` whatever the total and the number of families: RocksDB's
    /// `SwitchWAL` itself, which `SetDBOptions` also calls when `wal_bytes_per_sync`
    /// changed (`live_options.rs`).
    pub fn families_holding_oldest(&self, st: &DbState) -> Option<(u64, Vec<u32>, Vec<u32>)> {
        let oldest = *st.alive_wals.front()?;
        if self.flushing_for.load(Ordering::Relaxed) == oldest {
            return None;
        }
        self.flushing_for.store(oldest, Ordering::Relaxed);
        let mut switch = Vec::new();
        let mut imm_only = Vec::new();
        for (id, c) in &st.cfs {
            if c.dropping || c.log_number > oldest {
                continue;
            }
            if !c.mem.is_empty() {
                switch.push(*id);
            } else if !c.imm.is_empty() {
                imm_only.push(*id);
            }
        }
        Some((oldest, switch, imm_only))
    }
}
