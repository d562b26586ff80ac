//! Power loss across processes, for `shale crash-test --power_loss`: the stress child runs its
//! engine on [`PowerLossFs`], a layer over the real file system that journals what is durable;
//! the parent, after SIGKILL of the child, calls [`drop_unsynced`] to turn the directory into
//! what a machine would find after losing power at that moment. The model is RocksDB's
//! FaultInjectionTestFS (`DropUnsyncedFileData`, `DeleteFilesCreatedAfterLastDirSync`):
//!
//! - a file keeps only the bytes it had at its last successful `sync` (a file never synced
//!   keeps none); in a "torn" round each file keeps, instead, its synced bytes plus a random
//!   prefix of what was appended after them (the disk may have written some of it);
//! - a name created, renamed or removed since its directory's last `sync_dir` goes back to
//!   what it was at that sync: a created file vanishes, a removed or renamed-away one comes
//!   back, a renamed-over one regains its old contents (as of its own last sync).
//!
//! Directory creation is not modelled (directories are durable at once), nor are files the
//! engine writes outside its `FileSystem`.
//!
//! The journal (`<dir>/journal`, one line per event, written by the child with plain
//! `write`: SIGKILL leaves the page cache, so every line written survives):
//!
//! ```text
//! S <len> <path>            <path> is durable up to <len> bytes (a sync, or 0 at creation)
//! M <from>\t<to>            rename: the synced length moves with the file
//! X <path>                  remove: no synced length any more
//! B <path>                  first change since the dir's sync: before it, <path> was absent
//! K <len> <backup>\t<path>  likewise, <path> was present: <backup> holds its bytes (<len> durable)
//! D <dir>                   sync_dir: every earlier B/K line of a name in <dir> is settled
//! ```
//! Paths hold no tab or newline (the engine's names are ASCII); the child refuses others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use shale_base::error::{Error, Result};
use shale_base::fs::{
    FileLock, FileSystem, FileSystemRef, RandomAccessFile, ReadFileOptions, SequentialFile, WritableFile,
};

struct State {
    journal: File,
    /// Names whose durable state before their first unsynced change is already recorded.
    recorded: BTreeSet<PathBuf>,
    /// Synced length of each file written by this process.
    synced: BTreeMap<PathBuf, u64>,
    backups: u64,
}

struct Shared {
    base: FileSystemRef,
    dir: PathBuf,
    state: Mutex<State>,
}

/// The journalling layer the child's engine runs on.
pub struct PowerLossFs {
    shared: Arc<Shared>,
}

fn poisoned() -> Error {
    Error::io_msg("power-loss journal: lock poisoned")
}

fn name(p: &Path) -> Result<&str> {
    match p.to_str() {
        Some(s) if !s.contains(['\t', '\n']) => Ok(s),
        _ => Err(Error::invalid_argument(format!("power-loss journal: unsupported path {}", p.display()))),
    }
}

impl Shared {
    fn log(&self, st: &mut State, line: String) -> Result<()> {
        st.journal
            .write_all(line.as_bytes())
            .map_err(|e| Error::io(format!("power-loss journal {}", self.dir.display()), e))
    }

    /// Records the durable state of `path` before its directory entry changes (once until
    /// its directory is synced). `copy`: the change rewrites the file in place (a create
    /// over it), so its bytes are copied; otherwise a hard link keeps them.
    fn record_before(&self, st: &mut State, path: &Path, copy: bool) -> Result<()> {
        if st.recorded.contains(path) {
            return Ok(());
        }
        let p = name(path)?;
        if !self.base.file_exists(path) {
            self.log(st, format!("B {p}\n"))?;
        } else {
            // A file this process did not write was made durable by the last recovery.
            let len = match st.synced.get(path) {
                Some(&l) => l,
                None => self.base.file_size(path)?,
            };
            st.backups += 1;
            let backup = self.dir.join(format!("backup-{}", st.backups));
            let made = if copy {
                std::fs::copy(path, &backup).map(|_| ())
            } else {
                std::fs::hard_link(path, &backup)
            };
            made.map_err(|e| Error::io(format!("power-loss backup of {p}"), e))?;
            let b = name(&backup)?.to_string();
            self.log(st, format!("K {len} {b}\t{p}\n"))?;
        }
        st.recorded.insert(path.to_path_buf());
        Ok(())
    }
}

impl PowerLossFs {
    /// Journals into `dir` (created; a journal left there is kept and appended to).
    pub fn new(base: FileSystemRef, dir: &Path) -> Result<PowerLossFs> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("create {}", dir.display()), e))?;
        let journal = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("journal"))
            .map_err(|e| Error::io(format!("open power-loss journal in {}", dir.display()), e))?;
        // Backups of an earlier child in the same round would be overwritten by a count
        // starting at 0: start past them.
        let backups = std::fs::read_dir(dir).map(|d| d.count() as u64).unwrap_or(0) + 1_000_000;
        Ok(PowerLossFs {
            shared: Arc::new(Shared {
                base,
                dir: dir.to_path_buf(),
                state: Mutex::new(State {
                    journal,
                    recorded: BTreeSet::new(),
                    synced: BTreeMap::new(),
                    backups,
                }),
            }),
        })
    }
}

struct Writable {
    inner: Box<dyn WritableFile>,
    path: PathBuf,
    shared: Arc<Shared>,
}

impl WritableFile for Writable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()?;
        let len = self.inner.size();
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        // A file removed or renamed away while still open is no longer this name's.
        if st.synced.contains_key(&self.path) {
            st.synced.insert(self.path.clone(), len);
            let line = format!("S {len} {}\n", name(&self.path)?);
            self.shared.log(&mut st, line)?;
        }
        Ok(())
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        self.inner.range_sync(offset, len)
    }
    fn range_sync_strict(&mut self, end: u64) -> Result<()> {
        self.inner.range_sync_strict(end)
    }
}

impl PowerLossFs {
    fn created(&self, path: &Path, inner: Box<dyn WritableFile>) -> Result<Box<dyn WritableFile>> {
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        st.synced.insert(path.to_path_buf(), 0);
        self.shared.log(&mut st, format!("S 0 {}\n", name(path)?))?;
        Ok(Box::new(Writable { inner, path: path.to_path_buf(), shared: self.shared.clone() }))
    }

    fn before_create(&self, path: &Path) -> Result<()> {
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        self.shared.record_before(&mut st, path, true)
    }
}

impl FileSystem for PowerLossFs {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.before_create(path)?;
        let f = self.shared.base.new_writable_file(path)?;
        self.created(path, f)
    }
    fn new_writable_file_with_buffer(
        &self,
        path: &Path,
        max_buffer_size: usize,
    ) -> Result<Box<dyn WritableFile>> {
        self.before_create(path)?;
        let f = self.shared.base.new_writable_file_with_buffer(path, max_buffer_size)?;
        self.created(path, f)
    }
    fn new_writable_file_with(
        &self,
        path: &Path,
        o: shale_base::fs::WriteFileOptions,
    ) -> Result<Box<dyn WritableFile>> {
        self.before_create(path)?;
        let f = self.shared.base.new_writable_file_with(path, o)?;
        self.created(path, f)
    }
    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.shared.base.new_random_access_file(path)
    }
    fn new_random_access_file_with(
        &self,
        path: &Path,
        o: ReadFileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        self.shared.base.new_random_access_file_with(path, o)
    }
    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.shared.base.new_sequential_file(path)
    }
    fn file_exists(&self, path: &Path) -> bool {
        self.shared.base.file_exists(path)
    }
    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        self.shared.base.children(dir)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.shared.base.file_size(path)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        self.shared.record_before(&mut st, path, false)?;
        self.shared.base.remove_file(path)?;
        st.synced.remove(path);
        self.shared.log(&mut st, format!("X {}\n", name(path)?))
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        self.shared.record_before(&mut st, from, false)?;
        self.shared.record_before(&mut st, to, false)?;
        self.shared.base.rename(from, to)?;
        let len = match st.synced.remove(from) {
            Some(l) => l,
            None => self.shared.base.file_size(to)?,
        };
        st.synced.insert(to.to_path_buf(), len);
        let (f, t) = (name(from)?, name(to)?);
        self.shared.log(&mut st, format!("M {f}\t{t}\nS {len} {t}\n"))
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.shared.base.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.shared.base.remove_dir(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.shared.base.sync_dir(dir)?;
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        st.recorded.retain(|p| p.parent() != Some(dir));
        self.shared.log(&mut st, format!("D {}\n", name(dir)?))
    }
    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.shared.base.lock_file(path)
    }
    fn link_file(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        self.shared.record_before(&mut st, to, false)?;
        self.shared.base.link_file(from, to)?;
        // The link shares the data; its durable length is the source's.
        let len = match st.synced.get(from) {
            Some(&l) => l,
            None => self.shared.base.file_size(from)?,
        };
        st.synced.insert(to.to_path_buf(), len);
        self.shared.log(&mut st, format!("S {len} {}\n", name(to)?))
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        self.shared.base.sync_file(path)?;
        let len = self.shared.base.file_size(path)?;
        let mut st = self.shared.state.lock().map_err(|_| poisoned())?;
        st.synced.insert(path.to_path_buf(), len);
        self.shared.log(&mut st, format!("S {len} {}\n", name(path)?))
    }
}

/// What [`drop_unsynced`] did, for the round's log line.
#[derive(Default, Debug)]
pub struct Dropped {
    pub files_cut: u64,
    pub bytes_dropped: u64,
    pub names_restored: u64,
}

fn parent_of(p: &Path) -> PathBuf {
    p.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// After the child was killed: applies the journal in `dir` to the files it names (see the
/// module comment), then removes the journal and its backups. `torn_seed`: `None` drops all
/// unsynced bytes; `Some(s)` keeps a random prefix of each file's unsynced bytes.
pub fn drop_unsynced(dir: &Path, torn_seed: Option<u64>) -> std::result::Result<Dropped, String> {
    let jpath = dir.join("journal");
    let text = match std::fs::read(&jpath) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Dropped::default()),
        Err(e) => return Err(format!("read {}: {e}", jpath.display())),
    };
    let text = String::from_utf8_lossy(&text);
    let mut synced: BTreeMap<PathBuf, u64> = BTreeMap::new();
    // Name -> its durable state before its first unsynced change (None: absent).
    let mut before: BTreeMap<PathBuf, Option<(u64, PathBuf)>> = BTreeMap::new();
    for line in text.lines() {
        // A line cut by the kill has no newline and is the last: `lines` yields it too, but
        // the write that made it had not returned, so its event is ignored.
        if !text.ends_with('\n') && text.lines().last() == Some(line) {
            break;
        }
        let (tag, rest) = line.split_at(1.min(line.len()));
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        let bad = || format!("power-loss journal {}: bad line {line:?}", jpath.display());
        match tag {
            "S" => {
                let (len, p) = rest.split_once(' ').ok_or_else(bad)?;
                synced.insert(PathBuf::from(p), len.parse().map_err(|_| bad())?);
            }
            "M" => {
                let (f, t) = rest.split_once('\t').ok_or_else(bad)?;
                if let Some(l) = synced.remove(Path::new(f)) {
                    synced.insert(PathBuf::from(t), l);
                }
            }
            "X" => {
                synced.remove(Path::new(rest));
            }
            "B" => {
                before.entry(PathBuf::from(rest)).or_insert(None);
            }
            "K" => {
                let (len, r) = rest.split_once(' ').ok_or_else(bad)?;
                let (b, p) = r.split_once('\t').ok_or_else(bad)?;
                let len = len.parse().map_err(|_| bad())?;
                before.entry(PathBuf::from(p)).or_insert(Some((len, PathBuf::from(b))));
            }
            "D" => {
                let d = Path::new(rest);
                before.retain(|p, _| parent_of(p) != d);
            }
            _ => return Err(bad()),
        }
    }
    let mut out = Dropped::default();
    let mut rng = torn_seed.map(|s| s | 1);
    // Each file as last written loses what was not synced.
    for (p, &len) in &synced {
        let Ok(meta) = std::fs::metadata(p) else { continue };
        let size = meta.len();
        if size <= len {
            continue;
        }
        let keep = match &mut rng {
            None => len,
            Some(r) => {
                *r ^= *r << 13;
                *r ^= *r >> 7;
                *r ^= *r << 17;
                len + *r % (size - len + 1)
            }
        };
        if keep < size {
            let f =
                OpenOptions::new().write(true).open(p).map_err(|e| format!("open {}: {e}", p.display()))?;
            f.set_len(keep).map_err(|e| format!("truncate {}: {e}", p.display()))?;
            out.files_cut += 1;
            out.bytes_dropped += size - keep;
        }
    }
    // Every name changed since its directory's last sync returns to its state then.
    for (p, state) in &before {
        match state {
            None => {
                if std::fs::symlink_metadata(p).is_ok() {
                    std::fs::remove_file(p).map_err(|e| format!("remove {}: {e}", p.display()))?;
                    out.names_restored += 1;
                }
            }
            Some((len, backup)) => {
                let data = std::fs::read(backup).map_err(|e| format!("read {}: {e}", backup.display()))?;
                let keep = (*len as usize).min(data.len());
                let _ = std::fs::remove_file(p);
                std::fs::write(p, &data[..keep]).map_err(|e| format!("restore {}: {e}", p.display()))?;
                out.names_restored += 1;
            }
        }
    }
    reset(dir)?;
    Ok(out)
}

/// Removes the journal and backups in `dir` (the state on disk is durable as it is).
pub fn reset(dir: &Path) -> std::result::Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("remove {}: {e}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

    use super::*;

    fn write(fs: &PowerLossFs, p: &Path, data: &[u8], sync: bool) -> Box<dyn WritableFile> {
        let mut f = fs.new_writable_file(p).unwrap();
        f.append(data).unwrap();
        if sync {
            f.sync().unwrap();
        }
        f
    }

    /// Each kind of change the journal models, and the state `drop_unsynced` leaves.
    #[test]
    fn a_power_loss_keeps_only_what_was_synced() {
        let tmp = tempfile::tempdir().unwrap();
        let (db, journal) = (tmp.path().join("db"), tmp.path().join("journal"));
        std::fs::create_dir_all(&db).unwrap();
        // Durable before the run (an earlier round's state).
        std::fs::write(db.join("old"), b"old bytes").unwrap();
        std::fs::write(db.join("CURRENT"), b"MANIFEST-1\n").unwrap();
        std::fs::write(db.join("gone"), b"removed but not durably").unwrap();
        let fs = PowerLossFs::new(default_fs_ref(), &journal).unwrap();
        // A file synced in part, its name made durable.
        let mut wal = write(&fs, &db.join("wal"), b"synced", true);
        fs.sync_dir(&db).unwrap();
        wal.append(b" and not").unwrap();
        // A file synced whole, its name never made durable.
        drop(write(&fs, &db.join("fresh"), b"data", true));
        // CURRENT replaced by a rename, the directory not synced after.
        drop(write(&fs, &db.join("CURRENT.tmp"), b"MANIFEST-2\n", true));
        fs.rename(&db.join("CURRENT.tmp"), &db.join("CURRENT")).unwrap();
        fs.remove_file(&db.join("gone")).unwrap();
        drop(wal);

        let d = drop_unsynced(&journal, None).unwrap();
        assert_eq!(std::fs::read(db.join("wal")).unwrap(), b"synced");
        assert!(!db.join("fresh").exists(), "a name never synced vanishes");
        assert!(!db.join("CURRENT.tmp").exists());
        assert_eq!(std::fs::read(db.join("CURRENT")).unwrap(), b"MANIFEST-1\n", "the rename is undone");
        assert_eq!(std::fs::read(db.join("gone")).unwrap(), b"removed but not durably");
        assert_eq!(std::fs::read(db.join("old")).unwrap(), b"old bytes");
        assert_eq!(d.bytes_dropped, 8);
        assert!(!journal.exists(), "the journal is spent");
    }

    /// A torn round keeps the synced bytes and a prefix of the rest.
    #[test]
    fn a_torn_power_loss_keeps_a_prefix_of_the_unsynced_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let (db, journal) = (tmp.path().join("db"), tmp.path().join("journal"));
        std::fs::create_dir_all(&db).unwrap();
        let fs = PowerLossFs::new(default_fs_ref(), &journal).unwrap();
        let mut f = write(&fs, &db.join("log"), b"0123", true);
        fs.sync_dir(&db).unwrap();
        f.append(b"456789").unwrap();
        drop(f);
        drop_unsynced(&journal, Some(7)).unwrap();
        let got = std::fs::read(db.join("log")).unwrap();
        assert!(got.len() >= 4 && b"0123456789".starts_with(&got), "{got:?}");
    }

    fn default_fs_ref() -> FileSystemRef {
        shale_base::fs::default_fs()
    }
}
