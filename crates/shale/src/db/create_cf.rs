//! rust-rocksdb's `create_column_family` on the engine's `cf::create_families`: the checks
//! of the family's `Options` (alone and against the database's), a TTL database's default
//! for a family created in it, RocksDB's sanitizing, the table directories, and the engine's
//! configuration built from the `Options` (kept as the family's record).

use std::sync::Arc;

use super::cf::{CfHandle, NewFamily};
use super::DbInner;
use crate::error::{Error, Result};
use crate::options::Options;

/// Creates column families from rust-rocksdb's `Options`: one MANIFEST write and one
/// OPTIONS file for the whole batch.
pub(crate) fn create_cfs(inner: &Arc<DbInner>, new: &[(String, Options)]) -> Result<Vec<Arc<CfHandle>>> {
    // In a TTL database every family's values carry the write time; one created now never
    // expires (RocksDB's CreateColumnFamily on a DBWithTTL), unless its options say.
    let with_ttl: Vec<(String, Options)>;
    let new = if inner.config.ttl_db.is_some() && new.iter().any(|(_, o)| o.ttl_db.is_none()) {
        with_ttl = new
            .iter()
            .map(|(n, o)| {
                let mut o = o.clone();
                o.ttl_db.get_or_insert(0);
                (n.clone(), o)
            })
            .collect();
        &with_ttl[..]
    } else {
        new
    };
    let sanitized: Vec<(String, Options)> = new
        .iter()
        .map(|(n, o)| {
            let mut o = o.clone();
            o.sanitize_cf(inner.config.allow_ingest_behind);
            (n.clone(), o)
        })
        .collect();
    let new = &sanitized[..];
    for (_, opts) in new {
        opts.check_supported()?;
        opts.check_validate_options()?;
        Options::check_with_db(&inner.config, opts)?;
        for (dir, _) in super::paths::table_dirs(&inner.path, &inner.config.db_paths, &opts.cf_paths) {
            inner.fs.create_dir_all(&dir)?;
        }
    }
    let families = new
        .iter()
        .map(|(name, opts)| {
            let mut opts = opts.clone();
            // Every family charges the database's write buffer manager.
            opts.write_buffer_manager = inner.config.write_buffer_manager.clone();
            opts.rate_limiter = inner.config.rate_limiter.clone();
            opts.statistics = inner.config.statistics.clone();
            opts.dbmisc.adopt_db_wide(&inner.config);
            opts.table_ids = inner.config.table_ids.clone();
            let table_dirs = super::paths::table_dirs(&inner.path, &inner.config.db_paths, &opts.cf_paths);
            if table_dirs.len() > 1 {
                // RocksDB's SanitizeOptions: dynamic level sizes and several paths do not go
                // together.
                opts.level_compaction_dynamic_level_bytes = false;
            }
            let (config, record) =
                super::dyn_options::settings_of(super::dyn_options::sanitized_at_open(opts));
            NewFamily { name: name.clone(), config, record, table_dirs }
        })
        .collect();
    super::cf::create_families(inner, families)
}

pub(crate) fn create_cf(inner: &Arc<DbInner>, name: &str, opts: &Options) -> Result<Arc<CfHandle>> {
    let mut v = create_cfs(inner, &[(name.to_string(), opts.clone())])?;
    v.pop().ok_or_else(|| Error::corruption("column family creation returned nothing"))
}
