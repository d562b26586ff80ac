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
        })?;
        // A flush held back to retain timestamps may go now (`flush.rs`).
        if !cf.config().persist_user_defined_timestamps {
            self.schedule_flush(&mut st, cf.id);
        }
        Ok(())
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

/// How a family's comparator changed since the MANIFEST recorded it (RocksDB's
/// `CompareComparator`, util/udt_util.cc): by name only, `.u64ts` added or removed.
enum ToggleUdt {
    Unchanged,
    Enable,
    Disable,
    Invalid,
}

fn compare_comparator(new_name: &str, old_name: &str) -> ToggleUdt {
    const SUFFIX: &str = ".u64ts";
    if new_name == old_name {
        ToggleUdt::Unchanged
    } else if new_name.len() == old_name.len() + SUFFIX.len()
        && new_name.starts_with(old_name)
        && new_name.ends_with(SUFFIX)
    {
        ToggleUdt::Enable
    } else if old_name.len() == new_name.len() + SUFFIX.len()
        && old_name.starts_with(new_name)
        && old_name.ends_with(SUFFIX)
    {
        ToggleUdt::Disable
    } else {
        ToggleUdt::Invalid
    }
}

/// RocksDB 11.8.1's `ValidateUserDefinedTimestampsOptions` (util/udt_util.cc), run at open
/// for each family against the comparator name and `persist_user_defined_timestamps` flag
/// its MANIFEST records (the flag is true when the edit naming the comparator has none):
/// the comparator may gain `.u64ts` only with the flag now false, lose it only if it was
/// false, and the flag may change only without timestamps. Ok(true): timestamps were just
/// enabled, so every existing table is marked as holding none (RocksDB's
/// `mark_sst_files_has_no_udt`).
pub fn validate_udt_options(
    new_comparator: &dyn crate::comparator::Comparator,
    old_comparator_name: &str,
    new_persist: bool,
    old_persist: bool,
) -> Result<bool> {
    let new_name = new_comparator.name();
    match compare_comparator(new_name, old_comparator_name) {
        ToggleUdt::Unchanged => {
            if old_persist == new_persist || new_comparator.timestamp_size() == 0 {
                return Ok(false);
            }
            Err(Error::invalid_argument(
                "Cannot toggle the persist_user_defined_timestamps flag for a column family with \
                 user-defined timestamps feature enabled.",
            ))
        }
        ToggleUdt::Enable => {
            if !new_persist {
                return Ok(true);
            }
            Err(Error::invalid_argument(
                "Cannot open a column family and enable user-defined timestamps feature without \
                 setting persist_user_defined_timestamps flag to false.",
            ))
        }
        ToggleUdt::Disable => {
            if !old_persist {
                return Ok(false);
            }
            Err(Error::invalid_argument(
                "Cannot open a column family and disable user-defined timestamps feature if its \
                 existing persist_user_defined_timestamps flag is not false.",
            ))
        }
        ToggleUdt::Invalid => Err(Error::invalid_argument(format!(
            "{new_name}: does not match existing comparator {old_comparator_name}"
        ))),
    }
}

/// A table's boundaries as the engine keeps them (RocksDB's
/// `MaybeHandleFileBoundariesForNewFiles`): a table of a family with `ts`-byte timestamps
/// whose keys hold none (recorded so, or `mark_no_udt`: timestamps just enabled) gets the
/// minimum timestamp on both boundaries (the maximum one on a range tombstone's end
/// sentinel), and remembers to record them without (`FileMetaData::stripped_ts_size`).
pub fn pad_file_boundaries(f: &mut crate::version::edit::FileMetaData, ts: usize, mark_no_udt: bool) {
    if ts == 0 {
        return;
    }
    if mark_no_udt {
        f.user_defined_timestamps_persisted = false;
    }
    if f.user_defined_timestamps_persisted {
        return;
    }
    f.smallest = crate::key::pad_ikey_ts(&f.smallest, ts, 0);
    let sentinel =
        crate::key::pack_seq_and_type(crate::key::MAX_SEQUENCE_NUMBER, crate::key::ValueType::RangeDeletion);
    let fill = if crate::key::trailer(&f.largest) == sentinel { 0xff } else { 0 };
    f.largest = crate::key::pad_ikey_ts(&f.largest, ts, fill);
    f.stripped_ts_size = ts;
}
