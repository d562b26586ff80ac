//! rust-rocksdb's `ColumnFamily`: the user's handle to an open family, over the engine's
//! `CfHandle` (`cf.rs`).

use std::sync::Arc;

use super::cf::CfHandle;
use crate::cf_ref::AsColumnFamilyRef;

/// A handle to an open column family, as rust-rocksdb's `ColumnFamily`.
pub struct ColumnFamily {
    pub(crate) handle: Arc<CfHandle>,
    /// `handle.id`, kept beside the pointer: a write names its family by id, and with a
    /// thousand families written at random reading it through the handle is a cache miss
    /// per write.
    id: u32,
}

impl AsColumnFamilyRef for ColumnFamily {
    #[inline]
    fn cf_id(&self) -> u32 {
        self.id
    }
}

impl ColumnFamily {
    pub(crate) fn new(handle: Arc<CfHandle>) -> ColumnFamily {
        let id = handle.id;
        ColumnFamily { handle, id }
    }

    pub fn name(&self) -> &str {
        &self.handle.name
    }

    pub(crate) fn clone_handle(&self) -> ColumnFamily {
        ColumnFamily::new(self.handle.clone())
    }
}
