//! `DBWALIterator`, as rust-rocksdb's: the write batches of the WAL from a sequence number on.
//! `get_updates_since` does not build one yet (it returns NotSupported), so no value of this
//! type exists today; its methods are complete for the day it does.

use crate::batch::WriteBatch;
use crate::error::Result;

/// An iterator over `(sequence number, write batch)` read back from the WAL.
pub struct DBWALIterator {
    batches: std::vec::IntoIter<(u64, WriteBatch)>,
    status: Result<()>,
}

impl DBWALIterator {
    /// Whether another batch follows.
    pub fn valid(&self) -> bool {
        self.status.is_ok() && self.batches.len() > 0
    }

    /// The error that stopped the iterator, if any.
    pub fn status(&self) -> Result<()> {
        self.status.clone()
    }
}

impl Iterator for DBWALIterator {
    type Item = Result<(u64, WriteBatch)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(e) = &self.status {
            let e = e.clone();
            self.status = Ok(());
            self.batches = Vec::new().into_iter();
            return Some(Err(e));
        }
        self.batches.next().map(Ok)
    }
}
