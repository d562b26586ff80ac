//! rust-rocksdb's `backup` module. Backups are issue 17's: `BackupEngine::open` returns
//! NotSupported, so no `BackupEngine` exists (its methods are statically unreachable).

use std::convert::Infallible;
use std::path::{Path, PathBuf};

use crate::db::{DBCommon, DBInner};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::thread_mode::ThreadMode;

/// What a backup holds, as rust-rocksdb's `BackupEngineInfo`.
#[derive(Debug, Clone, Copy)]
pub struct BackupEngineInfo {
    pub timestamp: i64,
    pub backup_id: u32,
    pub size: u64,
    pub num_files: u32,
}

/// A backup engine, as rust-rocksdb's `BackupEngine`.
pub struct BackupEngine {
    never: Infallible,
}

/// Options of a backup engine, as rust-rocksdb's `BackupEngineOptions`.
pub struct BackupEngineOptions {
    #[allow(dead_code)] // read by the backup engine of issue 17
    pub(crate) backup_dir: PathBuf,
    pub(crate) max_background_operations: i32,
    pub(crate) sync: bool,
}

/// Options of a restore, as rust-rocksdb's `RestoreOptions`.
#[derive(Default)]
pub struct RestoreOptions {
    pub(crate) keep_log_files: bool,
}

impl BackupEngine {
    pub fn open(opts: &BackupEngineOptions, env: &Env) -> Result<Self> {
        let _ = (opts, env);
        Err(Error::not_supported("backups (BackupEngine) are not supported by Shale yet (issue 17)"))
    }

    pub fn create_new_backup<T: ThreadMode, D: DBInner>(&mut self, db: &DBCommon<T, D>) -> Result<()> {
        let _ = db;
        match self.never {}
    }

    pub fn create_new_backup_flush<T: ThreadMode, D: DBInner>(
        &mut self,
        db: &DBCommon<T, D>,
        flush_before_backup: bool,
    ) -> Result<()> {
        let _ = (db, flush_before_backup);
        match self.never {}
    }

    pub fn purge_old_backups(&mut self, num_backups_to_keep: usize) -> Result<()> {
        let _ = num_backups_to_keep;
        match self.never {}
    }

    pub fn restore_from_latest_backup<D: AsRef<Path>, W: AsRef<Path>>(
        &mut self,
        db_dir: D,
        wal_dir: W,
        opts: &RestoreOptions,
    ) -> Result<()> {
        let _ = (db_dir, wal_dir, opts);
        match self.never {}
    }

    pub fn restore_from_backup<D: AsRef<Path>, W: AsRef<Path>>(
        &mut self,
        db_dir: D,
        wal_dir: W,
        opts: &RestoreOptions,
        backup_id: u32,
    ) -> Result<()> {
        let _ = (db_dir, wal_dir, opts, backup_id);
        match self.never {}
    }

    pub fn verify_backup(&self, backup_id: u32) -> Result<()> {
        let _ = backup_id;
        match self.never {}
    }

    pub fn get_backup_info(&self) -> Vec<BackupEngineInfo> {
        match self.never {}
    }
}

impl BackupEngineOptions {
    pub fn new<P: AsRef<Path>>(backup_dir: P) -> Result<Self> {
        Ok(BackupEngineOptions {
            backup_dir: backup_dir.as_ref().to_path_buf(),
            max_background_operations: 1,
            sync: true,
        })
    }

    pub fn set_max_background_operations(&mut self, max_background_operations: i32) {
        self.max_background_operations = max_background_operations;
    }

    pub fn set_sync(&mut self, sync: bool) {
        self.sync = sync;
    }

    pub fn get_sync(&mut self) -> bool {
        self.sync
    }
}

impl RestoreOptions {
    pub fn set_keep_log_files(&mut self, keep_log_files: bool) {
        self.keep_log_files = keep_log_files;
    }
}
