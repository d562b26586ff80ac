//! rust-rocksdb's manual compaction calls (`compact_range`, `compact_range_cf`), over the
//! engine's `DbInner::compact_range_impl` (`compact.rs`).

use crate::db::HandleOf;
use std::sync::Arc;

use super::cf::CfHandle;
use super::{DBCommon, DBInner, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::options_api::BottommostLevelCompaction;
use shale_engine::config::BottommostLevel;

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// Compacts the keys in `[start, end]` (None: unbounded) of the default column family.
    pub fn compact_range<S: AsRef<[u8]>, E: AsRef<[u8]>>(&self, start: Option<S>, end: Option<E>) {
        let _ = self.compact_range_opt_result(
            &self.default_handle().handle,
            start,
            end,
            BottommostLevelCompaction::IfHaveCompactionFilter,
            None,
            true,
        );
    }

    pub fn compact_range_cf<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &impl AsColumnFamilyRef,
        start: Option<S>,
        end: Option<E>,
    ) {
        if let Ok(h) = self.inner.handle_of(cf) {
            let _ = self.compact_range_opt_result(
                &h,
                start,
                end,
                BottommostLevelCompaction::IfHaveCompactionFilter,
                None,
                true,
            );
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
        self.compact_range_opt_result(
            &h,
            start,
            end,
            BottommostLevelCompaction::IfHaveCompactionFilter,
            None,
            true,
        )
    }

    pub(crate) fn compact_range_opt_result<S: AsRef<[u8]>, E: AsRef<[u8]>>(
        &self,
        cf: &Arc<CfHandle>,
        start: Option<S>,
        end: Option<E>,
        bottommost: BottommostLevelCompaction,
        change_level: Option<i32>,
        exclusive: bool,
    ) -> Result<()> {
        // With timestamps the range's keys come without them; as RocksDB's CompactRange
        // (`MaybeAddTimestampsToRange`), the start gets the maximum timestamp and the end the
        // minimum, so the range holds every version of both keys.
        let ts_sz = cf.icmp.user_comparator().timestamp_size();
        let with_ts = |k: &[u8], fill: u8| [k, &vec![fill; ts_sz]].concat();
        let s =
            start.as_ref().map(|s| if ts_sz > 0 { with_ts(s.as_ref(), 0xff) } else { s.as_ref().to_vec() });
        let e = end.as_ref().map(|e| if ts_sz > 0 { with_ts(e.as_ref(), 0) } else { e.as_ref().to_vec() });
        let bottommost = match bottommost {
            BottommostLevelCompaction::Skip => BottommostLevel::Skip,
            BottommostLevelCompaction::IfHaveCompactionFilter => BottommostLevel::IfHaveCompactionFilter,
            BottommostLevelCompaction::Force => BottommostLevel::Force,
            BottommostLevelCompaction::ForceOptimized => BottommostLevel::ForceOptimized,
        };
        let r = self.inner.compact_range_impl(
            cf,
            s.as_deref(),
            e.as_deref(),
            bottommost,
            change_level,
            exclusive,
        );
        match &r {
            Err(err) => {
                self.inner.info_log.log(format_args!("[{}] manual compaction failed: {err}", cf.name))
            }
            // Its LOG lines, buffered under the DB mutex, are written before it returns.
            Ok(()) => self.inner.info_log.flush_buffered(),
        }
        r
    }
}
