//! Names of database properties for `property_value*` and `property_int_value*`, as
//! rust-rocksdb's `properties` module: constants of the fixed names, functions building the
//! per-level ones. Which ones Shale answers is listed in `db/properties.rs`.

use std::ffi::{CStr, CString};

use crate::ffi_util::CStrLike;

/// A property name known at compile time, as rust-rocksdb's `PropName`: a C string that
/// is a property name (it derefs to `CStr`; `to_owned` gives a `PropertyName`).
#[derive(PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct PropName(CStr);

impl PropName {
    const fn new(name: &'static CStr) -> &'static PropName {
        // SAFETY: PropName is a repr(transparent) wrapper of CStr, so a &CStr and a
        // &PropName have the same layout and pointer metadata.
        unsafe { &*(name as *const CStr as *const PropName) }
    }

    fn from_c_str(name: &CStr) -> &PropName {
        // SAFETY: as in `new`: same layout and metadata, same lifetime.
        unsafe { &*(name as *const CStr as *const PropName) }
    }

    pub fn as_c_str(&self) -> &CStr {
        &self.0
    }

    pub fn as_str(&self) -> &str {
        // Every name is ASCII: the constants below and the ones built from them.
        self.0.to_str().unwrap_or_default()
    }
}

impl std::ops::Deref for PropName {
    type Target = CStr;

    fn deref(&self) -> &CStr {
        &self.0
    }
}

impl AsRef<str> for PropName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl ToOwned for PropName {
    type Owned = PropertyName;

    fn to_owned(&self) -> PropertyName {
        PropertyName(self.0.to_owned())
    }
}

impl std::borrow::Borrow<PropName> for PropertyName {
    fn borrow(&self) -> &PropName {
        PropName::from_c_str(&self.0)
    }
}

impl std::fmt::Debug for PropName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for PropName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<CStr> for PropName {
    fn as_ref(&self) -> &CStr {
        &self.0
    }
}

/// A property name built at run time (e.g. with a level number), as rust-rocksdb's
/// `PropertyName`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PropertyName(CString);

impl PartialEq<PropName> for PropertyName {
    fn eq(&self, other: &PropName) -> bool {
        self.0.as_c_str() == other.as_c_str()
    }
}

impl PropertyName {
    fn build(prefix: &str, level: usize) -> PropertyName {
        // A formatted number holds no NUL byte.
        PropertyName(CString::new(format!("{prefix}{level}")).unwrap_or_default())
    }

    pub fn as_c_str(&self) -> &CStr {
        &self.0
    }

    pub fn into_c_string(self) -> CString {
        self.0
    }

    pub fn into_string(self) -> String {
        self.0.into_string().unwrap_or_default()
    }
}

impl std::ops::Deref for PropertyName {
    type Target = CStr;

    fn deref(&self) -> &CStr {
        &self.0
    }
}

impl std::fmt::Display for PropertyName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.to_string_lossy())
    }
}

impl<'a> CStrLike for &'a PropName {
    type Baked = &'a CStr;
    type Error = std::convert::Infallible;

    fn bake(self) -> Result<&'a CStr, Self::Error> {
        Ok(&self.0)
    }

    fn into_c_string(self) -> Result<CString, Self::Error> {
        Ok(self.0.to_owned())
    }
}

impl CStrLike for PropertyName {
    type Baked = CString;
    type Error = std::convert::Infallible;

    fn bake(self) -> Result<CString, Self::Error> {
        Ok(self.0)
    }

    fn into_c_string(self) -> Result<CString, Self::Error> {
        Ok(self.0)
    }
}

impl<'a> CStrLike for &'a PropertyName {
    type Baked = &'a CStr;
    type Error = std::convert::Infallible;

    fn bake(self) -> Result<&'a CStr, Self::Error> {
        Ok(&self.0)
    }

    fn into_c_string(self) -> Result<CString, Self::Error> {
        Ok(self.0.clone())
    }
}

/// `rocksdb.num-files-at-level<N>`.
pub fn num_files_at_level(level: usize) -> PropertyName {
    PropertyName::build("rocksdb.num-files-at-level", level)
}

/// `rocksdb.compression-ratio-at-level<N>`.
pub fn compression_ratio_at_level(level: usize) -> PropertyName {
    PropertyName::build("rocksdb.compression-ratio-at-level", level)
}

/// `rocksdb.aggregated-table-properties-at-level<N>`.
pub fn aggregated_table_properties_at_level(level: usize) -> PropertyName {
    PropertyName::build("rocksdb.aggregated-table-properties-at-level", level)
}

/// `rocksdb.stats`.
pub const STATS: &PropName = PropName::new(c"rocksdb.stats");

/// `rocksdb.sstables`.
pub const SSTABLES: &PropName = PropName::new(c"rocksdb.sstables");

/// `rocksdb.CFSTATS`.
pub const CFSTATS: &PropName = PropName::new(c"rocksdb.CFSTATS");

/// `rocksdb.cfstats-no-file-histogram`.
pub const CFSTATS_NO_FILE_HISTOGRAM: &PropName = PropName::new(c"rocksdb.cfstats-no-file-histogram");

/// `rocksdb.cf-file-histogram`.
pub const CF_FILE_HISTOGRAM: &PropName = PropName::new(c"rocksdb.cf-file-histogram");

/// `rocksdb.dbstats`.
pub const DBSTATS: &PropName = PropName::new(c"rocksdb.dbstats");

/// `rocksdb.levelstats`.
pub const LEVELSTATS: &PropName = PropName::new(c"rocksdb.levelstats");

/// `rocksdb.num-immutable-mem-table`.
pub const NUM_IMMUTABLE_MEM_TABLE: &PropName = PropName::new(c"rocksdb.num-immutable-mem-table");

/// `rocksdb.num-immutable-mem-table-flushed`.
pub const NUM_IMMUTABLE_MEM_TABLE_FLUSHED: &PropName =
    PropName::new(c"rocksdb.num-immutable-mem-table-flushed");

/// `rocksdb.mem-table-flush-pending`.
pub const MEM_TABLE_FLUSH_PENDING: &PropName = PropName::new(c"rocksdb.mem-table-flush-pending");

/// `rocksdb.num-running-flushes`.
pub const NUM_RUNNING_FLUSHES: &PropName = PropName::new(c"rocksdb.num-running-flushes");

/// `rocksdb.compaction-pending`.
pub const COMPACTION_PENDING: &PropName = PropName::new(c"rocksdb.compaction-pending");

/// `rocksdb.num-running-compactions`.
pub const NUM_RUNNING_COMPACTIONS: &PropName = PropName::new(c"rocksdb.num-running-compactions");

/// `rocksdb.background-errors`.
pub const BACKGROUND_ERRORS: &PropName = PropName::new(c"rocksdb.background-errors");

/// `rocksdb.cur-size-active-mem-table`.
pub const CUR_SIZE_ACTIVE_MEM_TABLE: &PropName = PropName::new(c"rocksdb.cur-size-active-mem-table");

/// `rocksdb.cur-size-all-mem-tables`.
pub const CUR_SIZE_ALL_MEM_TABLES: &PropName = PropName::new(c"rocksdb.cur-size-all-mem-tables");

/// `rocksdb.size-all-mem-tables`.
pub const SIZE_ALL_MEM_TABLES: &PropName = PropName::new(c"rocksdb.size-all-mem-tables");

/// `rocksdb.num-entries-active-mem-table`.
pub const NUM_ENTRIES_ACTIVE_MEM_TABLE: &PropName = PropName::new(c"rocksdb.num-entries-active-mem-table");

/// `rocksdb.num-entries-imm-mem-tables`.
pub const NUM_ENTRIES_IMM_MEM_TABLES: &PropName = PropName::new(c"rocksdb.num-entries-imm-mem-tables");

/// `rocksdb.num-deletes-active-mem-table`.
pub const NUM_DELETES_ACTIVE_MEM_TABLE: &PropName = PropName::new(c"rocksdb.num-deletes-active-mem-table");

/// `rocksdb.num-deletes-imm-mem-tables`.
pub const NUM_DELETES_IMM_MEM_TABLES: &PropName = PropName::new(c"rocksdb.num-deletes-imm-mem-tables");

/// `rocksdb.estimate-num-keys`.
pub const ESTIMATE_NUM_KEYS: &PropName = PropName::new(c"rocksdb.estimate-num-keys");

/// `rocksdb.estimate-table-readers-mem`.
pub const ESTIMATE_TABLE_READERS_MEM: &PropName = PropName::new(c"rocksdb.estimate-table-readers-mem");

/// `rocksdb.is-file-deletions-enabled`.
pub const IS_FILE_DELETIONS_ENABLED: &PropName = PropName::new(c"rocksdb.is-file-deletions-enabled");

/// `rocksdb.num-snapshots`.
pub const NUM_SNAPSHOTS: &PropName = PropName::new(c"rocksdb.num-snapshots");

/// `rocksdb.oldest-snapshot-time`.
pub const OLDEST_SNAPSHOT_TIME: &PropName = PropName::new(c"rocksdb.oldest-snapshot-time");

/// `rocksdb.num-live-versions`.
pub const NUM_LIVE_VERSIONS: &PropName = PropName::new(c"rocksdb.num-live-versions");

/// `rocksdb.current-super-version-number`.
pub const CURRENT_SUPER_VERSION_NUMBER: &PropName = PropName::new(c"rocksdb.current-super-version-number");

/// `rocksdb.estimate-live-data-size`.
pub const ESTIMATE_LIVE_DATA_SIZE: &PropName = PropName::new(c"rocksdb.estimate-live-data-size");

/// `rocksdb.min-log-number-to-keep`.
pub const MIN_LOG_NUMBER_TO_KEEP: &PropName = PropName::new(c"rocksdb.min-log-number-to-keep");

/// `rocksdb.min-obsolete-sst-number-to-keep`.
pub const MIN_OBSOLETE_SST_NUMBER_TO_KEEP: &PropName =
    PropName::new(c"rocksdb.min-obsolete-sst-number-to-keep");

/// `rocksdb.total-sst-files-size`.
pub const TOTAL_SST_FILES_SIZE: &PropName = PropName::new(c"rocksdb.total-sst-files-size");

/// `rocksdb.live-sst-files-size`.
pub const LIVE_SST_FILES_SIZE: &PropName = PropName::new(c"rocksdb.live-sst-files-size");

/// `rocksdb.base-level`.
pub const BASE_LEVEL: &PropName = PropName::new(c"rocksdb.base-level");

/// `rocksdb.estimate-pending-compaction-bytes`.
pub const ESTIMATE_PENDING_COMPACTION_BYTES: &PropName =
    PropName::new(c"rocksdb.estimate-pending-compaction-bytes");

/// `rocksdb.aggregated-table-properties`.
pub const AGGREGATED_TABLE_PROPERTIES: &PropName = PropName::new(c"rocksdb.aggregated-table-properties");

/// `rocksdb.actual-delayed-write-rate`.
pub const ACTUAL_DELAYED_WRITE_RATE: &PropName = PropName::new(c"rocksdb.actual-delayed-write-rate");

/// `rocksdb.is-write-stopped`.
pub const IS_WRITE_STOPPED: &PropName = PropName::new(c"rocksdb.is-write-stopped");

/// `rocksdb.estimate-oldest-key-time`.
pub const ESTIMATE_OLDEST_KEY_TIME: &PropName = PropName::new(c"rocksdb.estimate-oldest-key-time");

/// `rocksdb.block-cache-capacity`.
pub const BLOCK_CACHE_CAPACITY: &PropName = PropName::new(c"rocksdb.block-cache-capacity");

/// `rocksdb.block-cache-usage`.
pub const BLOCK_CACHE_USAGE: &PropName = PropName::new(c"rocksdb.block-cache-usage");

/// `rocksdb.block-cache-pinned-usage`.
pub const BLOCK_CACHE_PINNED_USAGE: &PropName = PropName::new(c"rocksdb.block-cache-pinned-usage");

/// `rocksdb.options-statistics`.
pub const OPTIONS_STATISTICS: &PropName = PropName::new(c"rocksdb.options-statistics");
