//! Column families: handles, descriptors, the per-family read view (SuperVersion), and
//! creating and dropping families.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use super::{CfState, DbInner, DbState};
use crate::cache::BlockCache;
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::{Error, Result};
use crate::key::InternalKeyComparator;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::edit::VersionEdit;
use crate::version::Version;

pub const DEFAULT_COLUMN_FAMILY_NAME: &str = "default";

/// A column family's name and options, for `DB::open_cf_descriptors`.
#[derive(Clone)]
pub struct ColumnFamilyDescriptor {
    pub(crate) name: String,
    pub(crate) options: Options,
}

impl ColumnFamilyDescriptor {
    pub fn new<S: Into<String>>(name: S, options: Options) -> Self {
        ColumnFamilyDescriptor { name: name.into(), options }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A handle to an open column family, as rust-rocksdb's `ColumnFamily`.
pub struct ColumnFamily {
    pub(crate) handle: Arc<CfHandle>,
}

impl AsColumnFamilyRef for ColumnFamily {
    fn cf_id(&self) -> u32 {
        self.handle.id
    }
}

impl ColumnFamily {
    pub fn name(&self) -> &str {
        &self.handle.name
    }

    pub(crate) fn clone_handle(&self) -> ColumnFamily {
        ColumnFamily { handle: self.handle.clone() }
    }
}

/// What is fixed about an open column family, plus its current read view.
pub(crate) struct CfHandle {
    pub id: u32,
    pub name: String,
    pub opts: Options,
    pub icmp: InternalKeyComparator,
    pub block_cache: Option<Arc<BlockCache>>,
    /// Replaced (under `DbInner::state`) on every memtable switch, flush and compaction.
    pub super_version: RwLock<Arc<SuperVersion>>,
    pub dropped: AtomicBool,
}

impl CfHandle {
    pub fn new(
        id: u32,
        name: &str,
        opts: Options,
        default_cache: &Arc<BlockCache>,
        sv: SuperVersion,
    ) -> CfHandle {
        let block_cache = if opts.table.no_block_cache {
            None
        } else {
            Some(
                opts.table.block_cache.as_ref().map(|c| c.0.clone()).unwrap_or_else(|| default_cache.clone()),
            )
        };
        CfHandle {
            id,
            name: name.to_string(),
            icmp: InternalKeyComparator::new(opts.comparator.clone()),
            opts,
            block_cache,
            super_version: RwLock::new(Arc::new(sv)),
            dropped: AtomicBool::new(false),
        }
    }

    pub fn super_version(&self) -> Arc<SuperVersion> {
        self.super_version.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn install(&self, sv: SuperVersion) {
        *self.super_version.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(sv);
    }

    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }
}

/// A consistent read view of one column family.
pub(crate) struct SuperVersion {
    pub mem: Arc<MemTable>,
    /// Immutable memtables, newest first.
    pub imm: Vec<Arc<MemTable>>,
    pub current: Arc<Version>,
    /// What iterators need from `current`, computed by the first iterator.
    pub iter_parts: OnceLock<Arc<super::iterator::IterParts>>,
}

impl SuperVersion {
    pub fn new(mem: Arc<MemTable>, imm: Vec<Arc<MemTable>>, current: Arc<Version>) -> SuperVersion {
        SuperVersion { mem, imm, current, iter_parts: OnceLock::new() }
    }
}

impl CfState {
    /// Publishes the state's memtables and version to readers.
    pub fn install_super_version(&self) {
        self.handle.install(SuperVersion::new(
            self.mem.clone(),
            self.imm.iter().rev().map(|(m, _)| m.clone()).collect(),
            self.current.clone(),
        ));
    }
}

/// Makes the WAL durable before a family change reaches the MANIFEST, so that a crash
/// cannot keep the change yet lose unsynced writes made before it (recovery must yield a
/// prefix of the history).
fn sync_wal_before_family_change(inner: &DbInner, st: &mut DbState) -> Result<()> {
    let mut wal = inner.wal.lock().unwrap_or_else(|p| p.into_inner());
    if !wal.unsynced {
        return Ok(());
    }
    if let Err(e) = wal.writer.sync() {
        inner.set_bg_error_in(st, e.clone(), super::error_handler::BgErrorReason::WriteCallback);
        return Err(e);
    }
    wal.unsynced = false;
    Ok(())
}

pub(crate) fn create_cf(inner: &Arc<DbInner>, name: &str, opts: &Options) -> Result<Arc<CfHandle>> {
    opts.check_supported()?;
    inner.check_bg_error()?;
    // Exclusive write leadership: no write group is inserting while the family appears.
    inner.exclusive_write(|| {
        let mut st = inner.lock_state();
        if st.cfs.values().any(|c| c.handle.name == name) {
            return Err(Error::invalid_argument(format!("Column family already exists: {name}")));
        }
        sync_wal_before_family_change(inner, &mut st)?;
        let id = st.max_column_family + 1;
        let wal_number = inner.wal.lock().map(|w| w.number).unwrap_or(0);
        let mut edit = VersionEdit { column_family: id, ..Default::default() };
        edit.column_family_add = Some(name.to_string());
        edit.comparator = Some(opts.comparator.name().to_string());
        edit.log_number = Some(wal_number);
        edit.max_column_family = Some(id);
        edit.next_file_number = Some(st.next_file_number);
        edit.last_sequence = Some(inner.last_sequence.load(Ordering::Acquire));
        super::open::log_and_apply(inner, &mut st, &[edit])?;
        st.max_column_family = id;
        let icmp = InternalKeyComparator::new(opts.comparator.clone());
        let version = Arc::new(Version::new(icmp.clone(), opts.num_levels as usize, Vec::new()));
        let mem = Arc::new(MemTable::new(icmp, 0));
        let sv = SuperVersion::new(mem.clone(), Vec::new(), version.clone());
        let handle =
            Arc::new(CfHandle::new(id, name, opts.clone(), &inner.table_cache.default_block_cache, sv));
        st.live_versions.push(Arc::downgrade(&version));
        st.cfs.insert(
            id,
            CfState {
                handle: handle.clone(),
                mem,
                imm: Vec::new(),
                current: version,
                log_number: wal_number,
                compact_pointer: vec![Vec::new(); opts.num_levels as usize],
            },
        );
        inner.refresh_active_memtables(&st);
        drop(st);
        super::options_writer::write_options_file(inner)?;
        inner.info_log.log(format_args!("Created column family [{name}] (ID {id})"));
        Ok(handle)
    })
}

pub(crate) fn drop_cf(inner: &Arc<DbInner>, handle: &Arc<CfHandle>) -> Result<()> {
    inner.check_bg_error()?;
    inner.exclusive_write(|| {
        let mut st = inner.lock_state();
        // Wait for a running flush or compaction, which may touch this family.
        while st.flush_running || st.compaction_running {
            inner.bg_cv.wait(&mut st);
        }
        if !st.cfs.contains_key(&handle.id) {
            return Err(Error::invalid_argument(format!("Invalid column family: {}", handle.name)));
        }
        sync_wal_before_family_change(inner, &mut st)?;
        let edit =
            VersionEdit { column_family: handle.id, is_column_family_drop: true, ..Default::default() };
        super::open::log_and_apply(inner, &mut st, &[edit])?;
        st.cfs.remove(&handle.id);
        handle.dropped.store(true, Ordering::Release);
        inner.refresh_active_memtables(&st);
        // The handle outlives the drop (rust-rocksdb code may still hold it): let go of the
        // family's memtables and Version so its tables can be purged now. Readers that are
        // still open hold their own SuperVersion, which keeps the files they read.
        let empty = Arc::new(Version::new(handle.icmp.clone(), handle.opts.num_levels as usize, Vec::new()));
        let mem = Arc::new(MemTable::new(handle.icmp.clone(), 0));
        handle.install(SuperVersion::new(mem, Vec::new(), empty));
        super::flush::purge_obsolete_files(inner, &mut st);
        drop(st);
        super::options_writer::write_options_file(inner)?;
        inner.info_log.log(format_args!("Dropped column family [{}] (ID {})", handle.name, handle.id));
        Ok(())
    })
}
