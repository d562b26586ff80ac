//! rust-rocksdb's `checkpoint` module. Checkpoints are issue 17's: `Checkpoint::new`
//! returns NotSupported, so no `Checkpoint` exists (it holds an uninhabited field; its
//! methods keep rust-rocksdb's signatures and are statically unreachable).

use std::convert::Infallible;
use std::marker::PhantomData;
use std::path::Path;

use crate::db::{DBCommon, DBInner};
use crate::error::{Error, Result};
use crate::thread_mode::ThreadMode;
use crate::transactions::TransactionDB;

fn unsupported(what: &str) -> Error {
    Error::not_supported(format!("{what} is not supported by Shale yet (issue 17)"))
}

/// A checkpoint maker borrowing its database, as rust-rocksdb's `Checkpoint`.
pub struct Checkpoint<'db> {
    never: Infallible,
    _db: PhantomData<&'db ()>,
}

impl<'db> Checkpoint<'db> {
    pub fn new<T: ThreadMode, I: DBInner>(db: &'db DBCommon<T, I>) -> Result<Self> {
        let _ = db;
        Err(unsupported("checkpoints"))
    }

    pub fn create_checkpoint<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        let _ = path;
        match self.never {}
    }

    pub fn create_checkpoint_with_log_size<P: AsRef<Path>>(
        &self,
        path: P,
        log_size_for_flush: u64,
    ) -> Result<()> {
        let _ = (path, log_size_for_flush);
        match self.never {}
    }
}

/// A checkpoint maker of a transaction database, as rust-rocksdb's.
pub struct TransactionDBCheckpoint<'db> {
    never: Infallible,
    _db: PhantomData<&'db ()>,
}

impl<'db> TransactionDBCheckpoint<'db> {
    pub fn new<T: ThreadMode>(db: &'db TransactionDB<T>) -> Result<Self> {
        let _ = db;
        Err(unsupported("checkpoints of transaction databases"))
    }

    pub fn create_checkpoint<P: AsRef<Path>>(&self, path: P) -> Result<()> {
        let _ = path;
        match self.never {}
    }

    pub fn create_checkpoint_with_log_size<P: AsRef<Path>>(
        &self,
        path: P,
        log_size_for_flush: u64,
    ) -> Result<()> {
        let _ = (path, log_size_for_flush);
        match self.never {}
    }
}
