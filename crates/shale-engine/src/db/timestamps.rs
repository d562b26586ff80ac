//! User-defined timestamps at the database level: `full_history_ts_low` (docs/timestamps.md).
//!
//! The bound is per column family, recorded in the MANIFEST as a VersionEdit field
//! (`FullHistoryTsLow`, tag 8198, length-prefixed raw timestamp bytes), replayed at open
//! and written again in every new MANIFEST's snapshot. It only rises.

use super::cf::CfHandle;
use super::DbInner;
use crate::error::{Error, Result};
use crate::version::edit::VersionEdit;

impl DbInner {
    /// RocksDB's `IncreaseFullHistoryTsLowImpl`: checks the size, refuses to lower it, logs
    /// the edit to the MANIFEST, then installs it.
    pub fn increase_full_history_ts_low(&self, cf: &CfHandle, ts: &[u8]) -> Result<()> {
        let ts_sz = cf.icmp.timestamp_size();
        if ts_sz == 0 {
            return Err(Error::invalid_argument(format!(
                "Timestamp is not enabled in column family {}",
                cf.name
            )));
        }
        if ts.len() != ts_sz {
            return Err(Error::invalid_argument(format!(
                "ts_low size mismatch: {} bytes, column family {} has {ts_sz}-byte timestamps",
                ts.len(),
                cf.name
            )));
        }
        let mut st = self.lock_state();
        let current = cf.full_history_ts_low();
        let ucmp = cf.icmp.user_comparator().clone();
        if !current.is_empty() && ucmp.compare_timestamp(ts, &current).is_lt() {
            return Err(Error::invalid_argument("Cannot decrease full_history_ts_low"));
        }
        let edit = VersionEdit {
            column_family: cf.id,
            full_history_ts_low: Some(ts.to_vec()),
            ..Default::default()
        };
        self.log_and_apply(&mut st, vec![edit], |_| {
            *cf.full_history_ts_low.lock() = ts.to_vec();
        })
    }
}

impl DbInner {
    /// The timestamp size of every open family with timestamps, for the WAL's record of
    /// them (empty, without allocating, when there are none).
    pub fn timestamp_sizes_for_wal(&self) -> Vec<(u32, u16)> {
        if !self.ts_families.load(std::sync::atomic::Ordering::Acquire) {
            return Vec::new();
        }
        self.handles
            .read()
            .iter()
            .flatten()
            .filter(|h| h.icmp.timestamp_size() > 0 && !h.is_dropped())
            .map(|h| (h.id, h.icmp.timestamp_size() as u16))
            .collect()
    }
}
