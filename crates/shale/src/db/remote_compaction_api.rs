//! The remote-compaction calls of the API: `compact_for_service` (RocksDB's
//! `OpenAndCompact` on an open secondary), `open_and_compact` and
//! `set_compaction_service`, over the engine's `remote_compaction.rs`.

use std::path::Path;
use std::sync::Arc;

use super::remote_compaction::CompactionService;
use super::{DBCommon, DBInner, ThreadMode};
use crate::compaction::service::{CompactionServiceInput, CompactionServiceResult};
use crate::error::Result;

impl<T: ThreadMode, I: DBInner> DBCommon<T, I> {
    /// Compacts the tables `input` names into `output_dir` (which must exist) and returns
    /// what RocksDB's `OpenAndCompact` returns; `output_path` in the result is `output_dir`
    /// as given. Meant for a secondary instance; the database's own Version is not changed.
    pub fn compact_for_service(
        &self,
        input: &CompactionServiceInput,
        output_dir: &Path,
    ) -> Result<CompactionServiceResult> {
        self.inner.compact_for_service(input, output_dir)
    }
}

/// RocksDB's `DB::OpenAndCompact`: opens the database at `db_path` as a secondary (its info
/// log in `output_dir`) with the options of the OPTIONS file the input names, compacts what the
/// serialized `input` names into `output_dir`, and returns the serialized result.
pub fn open_and_compact(db_path: &Path, output_dir: &Path, input: &[u8]) -> Result<Vec<u8>> {
    let input = CompactionServiceInput::decode(input)?;
    let (opts, descs) = crate::options_load::load_numbered(
        db_path,
        input.options_file_number,
        &crate::Env::new()?,
        true,
        &crate::Cache::new_lru_cache(8 << 20),
    )?;
    // RocksDB's OpenAndCompact loads the OPTIONS file with its object registry, which
    // builds the built-in comparators from their names (the `.u64ts` ones too): a family
    // with user-defined timestamps is compacted with them.
    let file = crate::options_file::read_options_file(
        &*crate::fs::default_fs(),
        db_path,
        input.options_file_number,
    )?;
    let builtin = |cf: &str| {
        let name = file
            .cfs
            .iter()
            .find(|c| c.name == cf)?
            .options
            .iter()
            .find(|(k, _)| k == "comparator")?
            .1
            .clone();
        let cmp: crate::comparator::ComparatorRef = match name.as_str() {
            "leveldb.BytewiseComparator" => Arc::new(crate::BytewiseComparator),
            "rocksdb.ReverseBytewiseComparator" => Arc::new(crate::ReverseBytewiseComparator),
            "leveldb.BytewiseComparator.u64ts" => Arc::new(crate::U64TsComparator::bytewise()),
            "rocksdb.ReverseBytewiseComparator.u64ts" => Arc::new(crate::U64TsComparator::reverse_bytewise()),
            _ => return None,
        };
        Some(cmp)
    };
    let mut opts = opts;
    if let Some(c) = builtin("default") {
        opts.set_comparator_object(c);
    }
    let descs: Vec<crate::ColumnFamilyDescriptor> = descs
        .into_iter()
        .map(|d| match builtin(d.name()) {
            Some(c) => {
                let mut o = d.options().clone();
                o.set_comparator_object(c);
                crate::ColumnFamilyDescriptor::new(d.name(), o)
            }
            None => d,
        })
        .collect();
    let db: crate::DB = crate::DB::open_cf_descriptors_as_secondary(&opts, db_path, output_dir, descs)?;
    let result = db.compact_for_service(&input, output_dir)?;
    Ok(result.encode())
}

impl<T: ThreadMode, I: DBInner> DBCommon<T, I> {
    /// Hands every compaction that rewrites tables to `service` from now on (None: run them
    /// here again), as RocksDB's `Options::compaction_service`. Trivial moves and FIFO
    /// deletions still run here, as in RocksDB.
    pub fn set_compaction_service(&self, service: Option<Arc<dyn CompactionService>>) {
        **self.inner.compaction_service.lock() = service;
    }
}
