//! What the engine asks of the layer above it at a change of the database's families.
//!
//! RocksDB rewrites the OPTIONS file at open and after every change of a family's options or
//! of the family set (`DBImpl::WriteOptionsFile`), and writes a family's options to the info
//! LOG when it opens or creates the family. Both are written in the user's option terms,
//! which the engine does not hold: the layer that opened the database passes these hooks to
//! it (the rust-rocksdb facade's are `options_writer::RocksOptionsHooks`), and keeps the
//! user's DB-wide options inside them.

use super::cf::CfHandle;
use super::DbInner;
use crate::error::Result;

/// The layer above's work at a family change (see the module comment).
pub trait LayerHooks: Send + Sync {
    /// Writes the OPTIONS file describing the database and its open families as they are.
    fn write_options_file(&self, inner: &DbInner) -> Result<()>;

    /// Writes family `handle`'s options to the info LOG (at open and at its creation).
    fn log_cf_options(&self, inner: &DbInner, handle: &CfHandle) -> Result<()>;

    /// RocksDB's `SetDBOptions`: the DB-wide options are the layer's (held in these hooks,
    /// in its terms), so the layer parses and checks `pairs`, applies them
    /// (`DbInner::set_db_options`, `live_options.rs`), keeps the new values and writes the
    /// OPTIONS file.
    fn set_db_options(&self, inner: &std::sync::Arc<DbInner>, pairs: &[(&str, &str)]) -> Result<()>;
}
