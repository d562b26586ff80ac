//! `DB::repair` (rust-rocksdb's): the engine rebuilds the MANIFEST (`repair.rs`, steps 1
//! to 4), then the database is opened with all its column families, which replays the
//! WALs, every family is flushed and the database closed (step 5).

use std::path::Path;

use super::repair::RepairSettings;
use super::DB;
use crate::error::Result;
use crate::options::Options;

impl<T: super::ThreadMode, D: super::DBInner> super::DBCommon<T, D> {
    /// Rebuilds the MANIFEST of the database at `path` from its tables and WALs (RocksDB's
    /// RepairDB, rust-rocksdb's `DB::repair`). Tables that cannot be read whole are moved
    /// to `path/lost/`, as are the old MANIFESTs.
    pub fn repair<P: AsRef<Path>>(opts: &Options, path: P) -> Result<()> {
        let dir = path.as_ref();
        RepairSettings {
            fs: opts.fs.clone(),
            db_paths: opts.db_paths.clone(),
            cf_paths: opts.cf_paths.clone(),
            comparator: opts.comparator.clone(),
            persist_user_defined_timestamps: opts.persist_user_defined_timestamps,
        }
        .repair(dir)?;
        // Replay the WALs through the engine and flush them into tables.
        let mut o = opts.clone();
        o.create_if_missing(false);
        let names = DB::list_cf(&o, dir)?;
        // RocksDB's repairer gives every family the options it was given.
        let descs = names.iter().map(|n| crate::ColumnFamilyDescriptor::new(n, o.clone()));
        // A WAL batch whose timestamp sizes differ from its families' is skipped, logged
        // "Log #N: ignoring ...", as RocksDB's Repairer (not padded or stripped).
        let db: DB = super::open_api::open_as(&o, dir, descs.collect(), true)?;
        for n in &names {
            if let Some(cf) = db.cf_handle(n) {
                db.flush_cf(cf)?;
            }
        }
        drop(db);
        Ok(())
    }
}
