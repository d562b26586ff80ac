//! rust-rocksdb's `backup` module: a BackupEngine writing and reading RocksDB's backup
//! directory (`utilities/backup/backup_engine.cc`), so RocksDB's `ldb backup` / `restore`
//! and Shale read each other's backups. The layout is drawn in `docs/backup.md`:
//!
//! ```text
//! <backup_dir>/
//!   meta/<id>                the backup's meta file (text, below); meta/.<id>.tmp while written
//!   private/<id>/            files of this backup only: CURRENT, MANIFEST-*, OPTIONS-*, *.log
//!   shared_checksum/<n>_s<db session id>_<size>.sst   (a table with a session id)
//!   shared_checksum/<n>_<crc32c>_<size>.sst           (one without: RocksDB's legacy naming)
//!   shared_checksum/<n>_<crc32c>_<size>.blob          (a blob file, BlobDB: always so)
//!                            tables and blob files, shared by every backup that holds them,
//!                            so each is copied once: backups are incremental; <name>.tmp
//!                            while copied
//!
//! meta file (schema 1):      <unix time>\n<last sequence>\n<file count>\n
//!                            then per file: <path under backup_dir> crc32 <crc32c, decimal>\n
//! (schema 2, "schema_version 2" first, with "size <n>" after a file's checksum and other
//! fields, is read too.)
//! ```
//!
//! A backup takes the database's live files (`db/live_files.rs`, file deletions held off
//! while it copies; with `flush_before_backup` the memtables are flushed first, otherwise
//! the WALs are copied to replay). Every file copied is checksummed (CRC32C) on the way;
//! restore and `verify_backup` check every file's size and checksum, so a damaged backup
//! is refused with Corruption and never restored silently. Restore copies the files back
//! (shared tables under their database names), after removing the files of `db_dir` and,
//! unless `keep_log_files`, those of `wal_dir`. `max_background_operations` threads copy
//! at once; `sync` fsyncs every file and directory written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use shale_base::poison;

use crate::checkpoint::copy_file_with;
use crate::db::filename::{self, FileType};
use crate::db::thread_mode::ThreadMode;
use crate::db::{DBCommon, DBInner};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, FileSystemRef};

/// What a backup holds, as rust-rocksdb's `BackupEngineInfo`.
#[derive(Debug, Clone, Copy)]
pub struct BackupEngineInfo {
    pub timestamp: i64,
    pub backup_id: u32,
    pub size: u64,
    pub num_files: u32,
}

/// One file of a backup.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BackupFile {
    /// Path under the backup directory ("shared_checksum/..." or "private/<id>/...").
    path: String,
    crc32c: u32,
    size: u64,
}

/// A backup as its meta file describes it.
#[derive(Debug, Clone)]
struct BackupMeta {
    timestamp: i64,
    sequence: u64,
    files: Vec<BackupFile>,
}

/// A backup engine, as rust-rocksdb's `BackupEngine`.
pub struct BackupEngine {
    fs: FileSystemRef,
    dir: PathBuf,
    threads: usize,
    sync: bool,
    /// Readable backups by id.
    backups: BTreeMap<u32, BackupMeta>,
    /// Backups whose meta file could not be read, with why.
    corrupt: BTreeMap<u32, String>,
}

/// Options of a backup engine, as rust-rocksdb's `BackupEngineOptions`.
pub struct BackupEngineOptions {
    pub(crate) backup_dir: PathBuf,
    pub(crate) max_background_operations: i32,
    pub(crate) sync: bool,
}

/// Options of a restore, as rust-rocksdb's `RestoreOptions`.
#[derive(Default)]
pub struct RestoreOptions {
    pub(crate) keep_log_files: bool,
}

const META: &str = "meta";
const PRIVATE: &str = "private";
const SHARED_CHECKSUM: &str = "shared_checksum";

/// The database file name a backed-up file restores to: a shared table's name without
/// what the backup added between the first '_' and the extension.
fn restored_name(path: &str) -> Result<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if path.starts_with("shared_checksum/") || path.starts_with("shared/") {
        if let (Some(u), Some(d)) = (name.find('_'), name.rfind('.')) {
            if u < d {
                return Ok(format!("{}{}", &name[..u], &name[d..]));
            }
        }
        if path.starts_with("shared_checksum/") {
            return Err(Error::corruption(format!("Invalid shared file name in backup: {path}")));
        }
    }
    Ok(name.to_string())
}

fn parse_meta(text: &str, what: &str) -> Result<BackupMeta> {
    let bad = |why: &str| Error::corruption(format!("Invalid backup meta file {what}: {why}"));
    let mut lines = text.lines().peekable();
    let mut schema = 1;
    if let Some(l) = lines.peek() {
        // RocksDB 11.8.1's `BackupMeta::LoadFromFile`: the line names major version 2
        // ("2" or "2.<minor>"); any other is refused (schema 1 has no such line).
        if let Some(v) = l.strip_prefix("schema_version ") {
            if !(v == "2" || v.starts_with("2.")) {
                return Err(Error::not_supported(format!("Unsupported/unrecognized schema version: {v}")));
            }
            schema = 2;
            lines.next();
        }
    }
    let timestamp =
        lines.next().and_then(|l| l.trim().parse::<i64>().ok()).ok_or_else(|| bad("timestamp"))?;
    let sequence =
        lines.next().and_then(|l| l.trim().parse::<u64>().ok()).ok_or_else(|| bad("sequence number"))?;
    // Optional fields ("metadata <hex>", schema 2 "key value" lines) before the file count.
    let count = loop {
        let l = lines.next().ok_or_else(|| bad("file count"))?;
        if let Ok(n) = l.trim().parse::<usize>() {
            break n;
        }
        if !(l.starts_with("metadata ") || schema >= 2) {
            return Err(bad("file count"));
        }
    };
    let mut files = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let l = lines.next().ok_or_else(|| bad("fewer files than its count"))?;
        let mut parts = l.split(' ');
        let path = parts.next().filter(|p| !p.is_empty()).ok_or_else(|| bad("file path"))?.to_string();
        if path.contains("..") || path.starts_with('/') {
            return Err(bad("file path outside the backup directory"));
        }
        let mut crc = None;
        let mut size = None;
        while let Some(k) = parts.next() {
            let v = parts.next().ok_or_else(|| bad("field without a value"))?;
            match k {
                "crc32" => crc = Some(v.parse::<u32>().map_err(|_| bad("crc32"))?),
                "size" => size = Some(v.parse::<u64>().map_err(|_| bad("size"))?),
                _ if schema >= 2 => {}
                _ => return Err(bad("unknown file field")),
            }
        }
        let crc32c = crc.ok_or_else(|| bad("file without a checksum"))?;
        files.push(BackupFile { path, crc32c, size: size.unwrap_or(u64::MAX) });
    }
    Ok(BackupMeta { timestamp, sequence, files })
}

fn format_meta(m: &BackupMeta) -> String {
    let mut s = format!("{}\n{}\n{}\n", m.timestamp, m.sequence, m.files.len());
    for f in &m.files {
        s.push_str(&format!("{} crc32 {}\n", f.path, f.crc32c));
    }
    s
}

/// CRC32C (unmasked) and size of a file.
fn checksum_file(fs: &dyn FileSystem, path: &Path) -> Result<(u32, u64)> {
    let f = fs.new_random_access_file(path)?;
    let size = f.size()?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut off, mut crc) = (0u64, 0u32);
    while off < size {
        let want = ((size - off) as usize).min(buf.len());
        let n = f.read_at(off, &mut buf[..want])?;
        if n == 0 {
            return Err(Error::corruption(format!("{}: ends at {off} bytes of {size}", path.display())));
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        off += n as u64;
    }
    Ok((crc, size))
}

/// Runs `jobs` on up to `threads` threads; the first error wins.
fn run_parallel<J: Send>(threads: usize, jobs: Vec<J>, f: impl Fn(J) -> Result<()> + Sync) -> Result<()> {
    if threads <= 1 || jobs.len() <= 1 {
        return jobs.into_iter().try_for_each(f);
    }
    let queue = Mutex::new(jobs);
    let first_err: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let run = || -> Result<()> {
                    loop {
                        if poison::lock(&first_err, "backup error")?.is_some() {
                            return Ok(());
                        }
                        let Some(job) = poison::lock(&queue, "backup job queue")?.pop() else {
                            return Ok(());
                        };
                        f(job)?;
                    }
                };
                if let Err(e) = run() {
                    // Poisoned, it was by a worker's panic, which the scope raises again.
                    if let Ok(mut fe) = first_err.lock() {
                        fe.get_or_insert(e);
                    }
                }
            });
        }
    });
    poison::into_inner(first_err, "backup error")?.map_or(Ok(()), Err)
}

impl BackupEngine {
    /// Opens (creating if needed) the backup directory and reads its backups' meta files.
    /// Leftovers of an interrupted backup (temporary files) are removed.
    pub fn open(opts: &BackupEngineOptions, env: &Env) -> Result<Self> {
        let fs = env.fs.clone().unwrap_or_else(crate::fs::default_fs);
        let dir = opts.backup_dir.clone();
        for sub in ["", META, PRIVATE, SHARED_CHECKSUM] {
            let d = if sub.is_empty() { dir.clone() } else { dir.join(sub) };
            if !fs.file_exists(&d) {
                fs.create_dir_all(&d)?;
                if opts.sync {
                    if let Some(p) = d.parent() {
                        let _ = fs.sync_dir(p);
                    }
                }
            }
        }
        let mut engine = BackupEngine {
            fs,
            dir,
            threads: opts.max_background_operations.max(1) as usize,
            sync: opts.sync,
            backups: BTreeMap::new(),
            corrupt: BTreeMap::new(),
        };
        for name in engine.fs.children(&engine.dir.join(META))? {
            if name.ends_with(".tmp") {
                let _ = engine.fs.remove_file(&engine.dir.join(META).join(&name));
                continue;
            }
            let Ok(id) = name.parse::<u32>() else { continue };
            let path = engine.dir.join(META).join(&name);
            let loaded = crate::fs::read_file(&*engine.fs, &path).and_then(|b| {
                let text =
                    String::from_utf8(b).map_err(|_| Error::corruption(format!("{name}: not text")))?;
                engine.load(&text, &path.display().to_string())
            });
            match loaded {
                Ok(m) => {
                    engine.backups.insert(id, m);
                }
                Err(e) => {
                    engine.corrupt.insert(id, e.to_string());
                }
            }
        }
        engine.remove_temporaries()?;
        Ok(engine)
    }

    /// Parses a meta file and fills in the sizes schema 1 does not record.
    fn load(&self, text: &str, what: &str) -> Result<BackupMeta> {
        let mut m = parse_meta(text, what)?;
        for f in &mut m.files {
            if f.size == u64::MAX {
                // A missing file is found by verify and restore.
                f.size = self.fs.file_size(&self.dir.join(&f.path)).unwrap_or(0);
            }
        }
        Ok(m)
    }

    /// Removes temporary files and private directories of interrupted backups.
    fn remove_temporaries(&self) -> Result<()> {
        let shared = self.dir.join(SHARED_CHECKSUM);
        for name in self.fs.children(&shared)? {
            if name.ends_with(".tmp") {
                let _ = self.fs.remove_file(&shared.join(name));
            }
        }
        let private = self.dir.join(PRIVATE);
        for name in self.fs.children(&private)? {
            let keep = name
                .parse::<u32>()
                .is_ok_and(|id| self.backups.contains_key(&id) || self.corrupt.contains_key(&id));
            if !keep {
                let _ = crate::checkpoint::clean_dir(&*self.fs, &private.join(name));
            }
        }
        Ok(())
    }

    pub fn create_new_backup<T: ThreadMode, D: DBInner>(&mut self, db: &DBCommon<T, D>) -> Result<()> {
        self.create_new_backup_flush(db, false)
    }

    /// Backs up `db`: its tables and blob files (only those no earlier backup holds are copied), its
    /// MANIFEST, CURRENT and OPTIONS, and (without `flush_before_backup`) its WALs.
    pub fn create_new_backup_flush<T: ThreadMode, D: DBInner>(
        &mut self,
        db: &DBCommon<T, D>,
        flush_before_backup: bool,
    ) -> Result<()> {
        let inner = db.inner.clone();
        let id = self.backups.keys().chain(self.corrupt.keys()).max().map_or(1, |m| m + 1);
        let live = inner.capture_live_files(flush_before_backup)?;
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let private_rel = format!("{PRIVATE}/{id}");
        let private_tmp = self.dir.join(format!("{PRIVATE}/{id}.tmp"));
        if self.fs.file_exists(&private_tmp) {
            crate::checkpoint::clean_dir(&*self.fs, &private_tmp)?;
        }
        self.fs.create_dir_all(&private_tmp)?;
        let fs = &*self.fs;
        let sync = self.sync;

        // Tables: named by checksum and size; copied only when no backup has them.
        let results: Mutex<Vec<(usize, BackupFile)>> = Mutex::new(Vec::new());
        // Blob files are shared like tables, always under RocksDB's legacy naming (the blob
        // file format has no session id).
        let jobs: Vec<(usize, &crate::db::live_files::LiveFile)> =
            live.tables.iter().chain(&live.blobs).enumerate().collect();
        let shared = self.dir.join(SHARED_CHECKSUM);
        // Checksums the backups already record, by shared path.
        let known: BTreeMap<&str, u32> =
            self.backups.values().flat_map(|m| m.files.iter().map(|f| (f.path.as_str(), f.crc32c))).collect();
        run_parallel(self.threads, jobs, |(i, t)| {
            let src = t.dir.join(&t.name);
            let (stem, ext) = t.name.rsplit_once('.').unwrap_or((t.name.as_str(), "sst"));
            let copy_new = |dst_name: &str, expect: Option<u32>| -> Result<u32> {
                let tmp = shared.join(format!("{dst_name}.tmp"));
                let mut copied = 0u32;
                let n = copy_file_with(fs, &src, &tmp, Some(t.size), sync, |b| {
                    copied = crc32c::crc32c_append(copied, b)
                })?;
                if n != t.size || expect.is_some_and(|c| c != copied) {
                    let _ = fs.remove_file(&tmp);
                    return Err(Error::corruption(format!("{}: changed while backed up", t.name)));
                }
                fs.rename(&tmp, &shared.join(dst_name))?;
                Ok(copied)
            };
            let (name, crc) = if t.db_session_id.is_empty() {
                // RocksDB's kLegacyCrc32cAndFileSize naming: the checksum is in the name,
                // so the table is read to compute it.
                let (crc, size) = checksum_file(fs, &src)?;
                if size != t.size {
                    return Err(Error::corruption(format!(
                        "{}: {size} bytes, the MANIFEST says {}",
                        t.name, t.size
                    )));
                }
                let name = format!("{stem}_{crc}_{size}.{ext}");
                if !fs.file_exists(&shared.join(&name)) {
                    copy_new(&name, Some(crc))?;
                }
                (name, crc)
            } else {
                // RocksDB's default naming (kUseDbSessionId | kFlagIncludeFileSize): a
                // table a backup holds already is neither read nor copied.
                let name = format!("{stem}_s{}_{}.{ext}", t.db_session_id, t.size);
                let path = format!("{SHARED_CHECKSUM}/{name}");
                match known.get(path.as_str()) {
                    Some(crc) if fs.file_exists(&shared.join(&name)) => (name, *crc),
                    _ => {
                        let crc = copy_new(&name, None)?;
                        (name, crc)
                    }
                }
            };
            poison::lock(&results, "backup file list")?.push((
                i,
                BackupFile { path: format!("{SHARED_CHECKSUM}/{name}"), crc32c: crc, size: t.size },
            ));
            Ok(())
        })?;
        let mut files: Vec<(usize, BackupFile)> = poison::into_inner(results, "backup file list")?;
        files.sort_by_key(|(i, _)| *i);
        let mut files: Vec<BackupFile> = files.into_iter().map(|(_, f)| f).collect();

        // Private files: copies (WALs cut at their captured size), checksummed on the way.
        let copy_private =
            |name: &str, src: Option<&Path>, data: Option<&[u8]>, size: Option<u64>| -> Result<BackupFile> {
                let dst = private_tmp.join(name);
                let (crc, n) = match (src, data) {
                    (Some(src), _) => {
                        let mut crc = 0u32;
                        let n = copy_file_with(fs, src, &dst, size, sync, |b| {
                            crc = crc32c::crc32c_append(crc, b)
                        })?;
                        (crc, n)
                    }
                    (None, Some(d)) => {
                        let mut f = fs.new_writable_file(&dst)?;
                        f.append(d)?;
                        if sync {
                            f.sync()?;
                        } else {
                            f.flush()?;
                        }
                        (crc32c::crc32c(d), d.len() as u64)
                    }
                    (None, None) => (0, 0),
                };
                Ok(BackupFile { path: format!("{private_rel}/{name}"), crc32c: crc, size: n })
            };
        files.push(copy_private(&live.manifest_name, None, Some(&live.manifest), None)?);
        let current = format!("{}\n", live.manifest_name);
        files.push(copy_private("CURRENT", None, Some(current.as_bytes()), None)?);
        if let Some((name, data)) = &live.options {
            files.push(copy_private(name, None, Some(data), None)?);
        }
        for w in &live.wals {
            files.push(copy_private(&w.name, Some(&w.dir.join(&w.name)), None, Some(w.size))?);
        }
        if sync {
            fs.sync_dir(&private_tmp)?;
            fs.sync_dir(&shared)?;
        }
        let meta = BackupMeta { timestamp, sequence: live.last_sequence, files };
        drop(live);
        // The private directory is in place, durably, before the meta file names it.
        fs.rename(&private_tmp, &self.dir.join(&private_rel))?;
        if sync {
            fs.sync_dir(&self.dir.join(&private_rel))?;
            fs.sync_dir(&self.dir.join(PRIVATE))?;
        }
        let meta_dir = self.dir.join(META);
        let tmp = meta_dir.join(format!(".{id}.tmp"));
        let mut f = fs.new_writable_file(&tmp)?;
        f.append(format_meta(&meta).as_bytes())?;
        if sync {
            f.sync()?;
        } else {
            f.flush()?;
        }
        drop(f);
        fs.rename(&tmp, &meta_dir.join(id.to_string()))?;
        if sync {
            fs.sync_dir(&meta_dir)?;
        }
        inner.info_log.log(format_args!("Backup {id} created: {} files", meta.files.len()));
        self.backups.insert(id, meta);
        Ok(())
    }

    /// Deletes all but the newest `num_backups_to_keep` backups, and every shared file no
    /// remaining backup holds.
    pub fn purge_old_backups(&mut self, num_backups_to_keep: usize) -> Result<()> {
        let ids: Vec<u32> = self.backups.keys().copied().collect();
        let drop_n = ids.len().saturating_sub(num_backups_to_keep);
        let mut gone: Vec<u32> = ids[..drop_n].to_vec();
        gone.extend(self.corrupt.keys().copied());
        for id in gone {
            self.fs.remove_file(&self.dir.join(META).join(id.to_string()))?;
            if self.sync {
                self.fs.sync_dir(&self.dir.join(META))?;
            }
            self.backups.remove(&id);
            self.corrupt.remove(&id);
            let p = self.dir.join(PRIVATE).join(id.to_string());
            if self.fs.file_exists(&p) {
                crate::checkpoint::clean_dir(&*self.fs, &p)?;
            }
        }
        let live: BTreeSet<&str> =
            self.backups.values().flat_map(|m| m.files.iter().map(|f| f.path.as_str())).collect();
        let shared = self.dir.join(SHARED_CHECKSUM);
        for name in self.fs.children(&shared)? {
            if !live.contains(format!("{SHARED_CHECKSUM}/{name}").as_str()) {
                self.fs.remove_file(&shared.join(name))?;
            }
        }
        Ok(())
    }

    pub fn restore_from_latest_backup<D: AsRef<Path>, W: AsRef<Path>>(
        &mut self,
        db_dir: D,
        wal_dir: W,
        opts: &RestoreOptions,
    ) -> Result<()> {
        let id = *self.backups.keys().next_back().ok_or_else(|| Error::not_found("No backup to restore"))?;
        self.restore_from_backup(db_dir, wal_dir, opts, id)
    }

    /// Restores backup `backup_id` into `db_dir` (WALs into `wal_dir`), checking every
    /// file's size and checksum as it is copied: a damaged backup gives Corruption.
    pub fn restore_from_backup<D: AsRef<Path>, W: AsRef<Path>>(
        &mut self,
        db_dir: D,
        wal_dir: W,
        opts: &RestoreOptions,
        backup_id: u32,
    ) -> Result<()> {
        let (db_dir, wal_dir) = (db_dir.as_ref(), wal_dir.as_ref());
        let meta = self.backup(backup_id)?.clone();
        let fs = &*self.fs;
        for d in [db_dir, wal_dir] {
            fs.create_dir_all(d)?;
        }
        // Remove what the directories hold (the WALs too unless kept), as RocksDB does.
        for name in fs.children(db_dir)? {
            let kind = filename::parse_file_name(&name);
            if kind.is_none() || (opts.keep_log_files && matches!(kind, Some(FileType::Wal(_)))) {
                continue;
            }
            let _ = fs.remove_file(&db_dir.join(&name));
        }
        if !opts.keep_log_files && wal_dir != db_dir {
            for name in fs.children(wal_dir)? {
                if matches!(filename::parse_file_name(&name), Some(FileType::Wal(_))) {
                    let _ = fs.remove_file(&wal_dir.join(&name));
                }
            }
        }
        let sync = self.sync;
        let mut jobs = Vec::new();
        for f in &meta.files {
            let name = restored_name(&f.path)?;
            let to = match filename::parse_file_name(&name) {
                Some(FileType::Wal(_)) => wal_dir.join(&name),
                _ => db_dir.join(&name),
            };
            jobs.push((f, to));
        }
        // CURRENT last, once everything it leads to is in place.
        jobs.sort_by_key(|(f, _)| f.path.ends_with("/CURRENT"));
        let current = jobs.iter().position(|(f, _)| f.path.ends_with("/CURRENT"));
        let last = current.map(|i| jobs.split_off(i));
        let dir = &self.dir;
        let copy = |(f, to): (&BackupFile, PathBuf)| -> Result<()> {
            let mut crc = 0u32;
            let src = dir.join(&f.path);
            let n = copy_file_with(fs, &src, &to, None, sync, |b| crc = crc32c::crc32c_append(crc, b))?;
            if n != f.size || crc != f.crc32c {
                let _ = fs.remove_file(&to);
                return Err(Error::corruption(format!(
                    "Checksum check failed: {} is {n} bytes with crc32c {crc}, the backup recorded {} bytes and {}",
                    src.display(),
                    f.size,
                    f.crc32c
                )));
            }
            Ok(())
        };
        let r = run_parallel(self.threads, jobs, copy)
            .and_then(|_| last.into_iter().flatten().try_for_each(copy))
            .and_then(|_| {
                fs.sync_dir(db_dir)?;
                if wal_dir != db_dir {
                    fs.sync_dir(wal_dir)?;
                }
                Ok(())
            });
        if r.is_err() {
            // No CURRENT is left behind: the half-restored directory does not open as a
            // database.
            let _ = fs.remove_file(&db_dir.join("CURRENT"));
        }
        r
    }

    fn backup(&self, id: u32) -> Result<&BackupMeta> {
        if let Some(why) = self.corrupt.get(&id) {
            return Err(Error::corruption(format!("Backup {id} is corrupt: {why}")));
        }
        self.backups.get(&id).ok_or_else(|| Error::not_found(format!("Backup not found: {id}")))
    }

    /// Checks that every file of backup `backup_id` is there with its size and checksum.
    pub fn verify_backup(&self, backup_id: u32) -> Result<()> {
        let meta = self.backup(backup_id)?;
        for f in &meta.files {
            let p = self.dir.join(&f.path);
            let (crc, size) = checksum_file(&*self.fs, &p).map_err(|e| {
                if e.kind() == crate::ErrorKind::IOError && !self.fs.file_exists(&p) {
                    Error::not_found(format!("{} is missing", p.display()))
                } else {
                    e
                }
            })?;
            if size != f.size {
                return Err(Error::corruption(format!("{}: {size} bytes, expected {}", p.display(), f.size)));
            }
            if crc != f.crc32c {
                return Err(Error::corruption(format!(
                    "{}: Checksum mismatch: crc32c {crc}, expected {}",
                    p.display(),
                    f.crc32c
                )));
            }
        }
        Ok(())
    }

    /// The readable backups, oldest first.
    pub fn get_backup_info(&self) -> Vec<BackupEngineInfo> {
        self.backups
            .iter()
            .map(|(id, m)| BackupEngineInfo {
                timestamp: m.timestamp,
                backup_id: *id,
                size: m.files.iter().map(|f| f.size).sum(),
                num_files: m.files.len() as u32,
            })
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_file_round_trips_and_reads_rocksdb_layouts() {
        let m = BackupMeta {
            timestamp: 1_700_000_000,
            sequence: 42,
            files: vec![
                BackupFile { path: "private/1/MANIFEST-000005".into(), crc32c: 7, size: 10 },
                BackupFile { path: "shared_checksum/000007_123_4567.sst".into(), crc32c: 123, size: 4567 },
            ],
        };
        let text = format_meta(&m);
        assert_eq!(
            text,
            "1700000000\n42\n2\nprivate/1/MANIFEST-000005 crc32 7\nshared_checksum/000007_123_4567.sst crc32 123\n"
        );
        let back = parse_meta(&text, "x").expect("parse");
        assert_eq!(back.files.iter().map(|f| (&f.path, f.crc32c)).collect::<Vec<_>>().len(), 2);
        assert_eq!(back.sequence, 42);
        // RocksDB's optional metadata line and schema 2 fields.
        let v1 = "1\n2\nmetadata 6869\n1\nprivate/1/CURRENT crc32 99\n";
        assert_eq!(parse_meta(v1, "x").expect("v1").files[0].crc32c, 99);
        let v2 = "schema_version 2\n1\n2\n1\nprivate/1/CURRENT crc32 99 size 16 temp 0\nfooter 1\n";
        let p = parse_meta(v2, "x").expect("v2");
        assert_eq!((p.files[0].crc32c, p.files[0].size), (99, 16));
        // A minor version of 2 reads as 2; another major version (1 included, which RocksDB
        // writes without the line) is refused as RocksDB's LoadFromFile refuses it.
        let v21 = v2.replacen("schema_version 2", "schema_version 2.1", 1);
        assert_eq!(parse_meta(&v21, "x").expect("v2.1").files[0].size, 16);
        for v in ["1", "3", "x"] {
            let e = parse_meta(&v2.replacen("2", v, 1), "x").expect_err(v);
            assert_eq!(e.kind(), crate::ErrorKind::NotSupported, "{e}");
            assert_eq!(
                e.to_string(),
                format!("Not implemented: Unsupported/unrecognized schema version: {v}")
            );
        }
        for bad in [
            "",
            "x\n1\n0\n",
            "1\n2\n3\nprivate/1/CURRENT crc32 1\n",
            "1\n2\n1\n../etc crc32 1\n",
            "1\n2\n1\np nocrc\n",
        ] {
            assert_eq!(parse_meta(bad, "x").expect_err(bad).kind(), crate::ErrorKind::Corruption, "{bad:?}");
        }
    }

    #[test]
    fn shared_names_restore_to_database_names() {
        assert_eq!(restored_name("shared_checksum/000007_123_4567.sst").expect("name"), "000007.sst");
        assert_eq!(restored_name("shared_checksum/000008_sABCDEF_6057.sst").expect("name"), "000008.sst");
        assert_eq!(restored_name("private/3/MANIFEST-000005").expect("name"), "MANIFEST-000005");
        assert!(restored_name("shared_checksum/nounderscore").is_err());
    }
}
