//! `open_files_async` (RocksDB 11.8.1's `DBImpl::ScheduleAsyncFileOpening` and
//! `BGWorkAsyncFileOpen`): the open leaves the live tables unopened, and this thread opens
//! them right after, family by family, every table of the version each family had (as
//! RocksDB's `LoadTableHandlersHelper`, on up to `max_file_opening_threads` threads). A
//! table that fails to open is logged with RocksDB's words and becomes the database's
//! background error (RocksDB's reason `kAsyncFileOpen`, fatal as its unmapped reasons are);
//! the thread stops there. Reads that need a table before the thread reached it open it
//! themselves through the table cache.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::error_handler::BgErrorReason;
use super::DbInner;
use crate::error::{Error, Result};

/// Starts the thread; the database joins it when it closes.
pub fn start(inner: &Arc<DbInner>) -> Result<std::thread::JoinHandle<()>> {
    // The families with tables, and the version each has now (RocksDB refs them).
    let versions: Vec<_> = inner
        .lock_state()
        .cfs
        .values()
        .filter(|cf| cf.current.all_files().next().is_some())
        .map(|cf| (cf.handle.clone(), cf.current.clone()))
        .collect();
    let inner = inner.clone();
    std::thread::Builder::new()
        .name("shale-open-files".to_string())
        .spawn(move || {
            for (handle, version) in &versions {
                if inner.shutting_down.load(Ordering::Acquire) {
                    return;
                }
                if handle.is_dropped() {
                    continue;
                }
                let r = super::open::open_tables(
                    &inner.table_cache,
                    &[(handle, &**version)],
                    usize::MAX,
                    &inner.config,
                );
                if let Err(e) = r {
                    inner.info_log.log_at(
                        crate::config::LogLevel::Error,
                        format_args!(
                            "BGWorkAsyncFileOpen: LoadTableHandlers failed for CF {}: {e}",
                            handle.name
                        ),
                    );
                    inner.set_bg_error(e, BgErrorReason::AsyncFileOpen);
                    return;
                }
            }
        })
        .map_err(|e| Error::io("starting the table-opening thread", e))
}
