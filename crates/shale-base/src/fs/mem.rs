//! An in-memory [`FileSystem`] for tests: files are byte vectors, directories a set of paths.
//!
//! ```text
//! MemFileSystem ── Mutex<MemState>
//!                    files: path -> Arc<Mutex<Vec<u8>>>   (the "inode": open handles keep it,
//!                                                         so a rename does not disturb them)
//!                    dirs:  set of directory paths ("/" always exists)
//!                    locks: paths locked through `lock_file`
//! ```
//! Everything written is immediately visible and "durable": this file system never loses
//! data. [`super::FaultInjectionFs`] wraps it to model what a crash loses. Paths are used as
//! given (no normalisation); a file's parent directory must exist to create it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{FileLock, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};
use crate::poison;

type Inode = Arc<Mutex<Vec<u8>>>;

#[derive(Default)]
struct MemState {
    files: BTreeMap<PathBuf, Inode>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
}

/// The in-memory file system. Cloning shares the same files.
#[derive(Clone, Default)]
pub struct MemFileSystem {
    state: Arc<Mutex<MemState>>,
}

fn not_found(op: &str, path: &Path) -> Error {
    Error::io_code(format!("While {op}: {}: No such file or directory", path.display()), libc::ENOENT)
}

// A test tool: a poisoned lock here panics (`poison::or_panic`), so the test fails on the
// first panic instead of reading files a panic left half written.
fn lock_inode(i: &Inode) -> MutexGuard<'_, Vec<u8>> {
    poison::or_panic(poison::lock(i, "in-memory file"))
}

impl MemFileSystem {
    pub fn new() -> MemFileSystem {
        MemFileSystem::default()
    }

    fn state(&self) -> MutexGuard<'_, MemState> {
        poison::or_panic(poison::lock(&self.state, "in-memory file system"))
    }

    fn inode(&self, op: &str, path: &Path) -> Result<Inode> {
        self.state().files.get(path).cloned().ok_or_else(|| not_found(op, path))
    }

    /// Paths of every file, sorted (a test aid).
    pub fn all_files(&self) -> Vec<PathBuf> {
        self.state().files.keys().cloned().collect()
    }
}

impl MemState {
    fn dir_exists(&self, dir: &Path) -> bool {
        dir.as_os_str().is_empty() || dir == Path::new("/") || self.dirs.contains(dir)
    }

    fn parent_exists(&self, path: &Path) -> bool {
        path.parent().is_none_or(|p| self.dir_exists(p))
    }
}

struct MemWritableFile {
    data: Inode,
}

impl WritableFile for MemWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        lock_inode(&self.data).extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        super::db_mutex_check::assert_not_held(std::path::Path::new("a file of the in-memory file system"));
        Ok(())
    }

    fn size(&self) -> u64 {
        lock_inode(&self.data).len() as u64
    }

    /// Nothing to sync in memory (the check that no sync runs under the DB mutex stays).
    fn sync_handle(&self) -> Option<Arc<dyn super::SyncHandle>> {
        Some(Arc::new(MemSyncHandle))
    }
}

struct MemSyncHandle;

impl super::SyncHandle for MemSyncHandle {
    fn sync(&self) -> Result<()> {
        super::db_mutex_check::assert_not_held(std::path::Path::new("a file of the in-memory file system"));
        Ok(())
    }
}

struct MemRandomAccessFile {
    data: Inode,
}

impl RandomAccessFile for MemRandomAccessFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let data = lock_inode(&self.data);
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> Result<u64> {
        Ok(lock_inode(&self.data).len() as u64)
    }
}

struct MemSequentialFile {
    data: Inode,
    pos: usize,
}

impl SequentialFile for MemSequentialFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let data = lock_inode(&self.data);
        let start = self.pos.min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        self.pos = start + n;
        Ok(n)
    }
}

struct MemFileLock {
    state: Arc<Mutex<MemState>>,
    path: PathBuf,
}

impl FileLock for MemFileLock {}

impl Drop for MemFileLock {
    fn drop(&mut self) {
        // A poisoned state (a panic elsewhere, which the test meets) keeps the lock held.
        if let Ok(mut st) = poison::lock(&self.state, "in-memory file system") {
            st.locks.remove(&self.path);
        }
    }
}

impl FileSystem for MemFileSystem {
    fn new_writable_file(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut st = self.state();
        if !st.parent_exists(path) || st.dirs.contains(path) {
            return Err(not_found("open a file for appending", path));
        }
        // O_TRUNC on an existing file keeps its inode, as POSIX does.
        let data = st.files.entry(path.to_path_buf()).or_default().clone();
        lock_inode(&data).clear();
        Ok(Box::new(MemWritableFile { data }))
    }

    fn new_random_access_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(MemRandomAccessFile { data: self.inode("open a file for random read", path)? }))
    }

    fn new_sequential_file(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let data = self.inode("open a file for sequential reading", path)?;
        Ok(Box::new(MemSequentialFile { data, pos: 0 }))
    }

    fn file_exists(&self, path: &Path) -> bool {
        let st = self.state();
        st.files.contains_key(path) || st.dir_exists(path)
    }

    fn children(&self, dir: &Path) -> Result<Vec<String>> {
        let st = self.state();
        if !st.dir_exists(dir) {
            return Err(not_found("opendir", dir));
        }
        let names = st.files.keys().chain(st.dirs.iter()).filter(|p| p.parent() == Some(dir));
        Ok(names.filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect())
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(lock_inode(&self.inode("stat", path)?).len() as u64)
    }

    fn write_at_synced(&self, path: &Path, offset: u64, data: &[u8]) -> Result<()> {
        let inode = self.inode("open for random writes", path)?;
        let mut f = lock_inode(&inode);
        let start = usize::try_from(offset)
            .map_err(|_| Error::invalid_argument(format!("offset {offset} ({})", path.display())))?;
        let end = start.saturating_add(data.len());
        if f.len() < end {
            f.resize(end, 0);
        }
        f[start..end].copy_from_slice(data);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.state().files.remove(path).map(|_| ()).ok_or_else(|| not_found("unlink", path))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.state();
        if !st.parent_exists(to) {
            return Err(not_found("renaming a file", to));
        }
        if st.dirs.contains(from) {
            // A directory: everything under it moves (checkpoints and backups build a
            // directory under a temporary name, then rename it).
            if st.files.contains_key(to) || st.dirs.contains(to) {
                return Err(Error::io_code(
                    format!("While renaming a directory to {}: File exists", to.display()),
                    libc::EEXIST,
                ));
            }
            let moved = |p: &Path| p.strip_prefix(from).ok().map(|rest| to.join(rest));
            let files: Vec<PathBuf> = st.files.keys().filter(|p| p.starts_with(from)).cloned().collect();
            for p in files {
                if let (Some(i), Some(n)) = (st.files.remove(&p), moved(&p)) {
                    st.files.insert(n, i);
                }
            }
            let dirs: Vec<PathBuf> = st.dirs.iter().filter(|p| p.starts_with(from)).cloned().collect();
            for p in dirs {
                st.dirs.remove(&p);
                if let Some(n) = moved(&p) {
                    st.dirs.insert(n);
                }
            }
            return Ok(());
        }
        let inode = st.files.remove(from).ok_or_else(|| not_found("renaming a file", from))?;
        st.files.insert(to.to_path_buf(), inode);
        Ok(())
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let mut st = self.state();
        for a in dir.ancestors() {
            if st.files.contains_key(a) {
                return Err(Error::io_code(
                    format!("While mkdir: {}: File exists", a.display()),
                    libc::EEXIST,
                ));
            }
        }
        for a in dir.ancestors().filter(|a| !a.as_os_str().is_empty() && *a != Path::new("/")) {
            st.dirs.insert(a.to_path_buf());
        }
        Ok(())
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let mut st = self.state();
        if !st.dirs.contains(dir) {
            return Err(not_found("rmdir", dir));
        }
        if st.files.keys().chain(st.dirs.iter()).any(|p| p.parent() == Some(dir)) {
            return Err(Error::io_code(
                format!("While rmdir: {}: Directory not empty", dir.display()),
                libc::ENOTEMPTY,
            ));
        }
        st.dirs.remove(dir);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        if self.state().dir_exists(dir) {
            Ok(())
        } else {
            Err(not_found("open directory", dir))
        }
    }

    fn lock_file(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let mut st = self.state();
        if !st.parent_exists(path) {
            return Err(not_found("open lock", path));
        }
        if !st.locks.insert(path.to_path_buf()) {
            return Err(Error::io_msg(format!(
                "lock hold by current process, acquire time 0 acquiring thread 0: {}: No locks available",
                path.display()
            )));
        }
        st.files.entry(path.to_path_buf()).or_default();
        Ok(Box::new(MemFileLock { state: self.state.clone(), path: path.to_path_buf() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::read_file;
    use crate::ErrorKind;

    fn fs_with_dir() -> MemFileSystem {
        let fs = MemFileSystem::new();
        fs.create_dir_all(Path::new("/db/sub")).unwrap();
        fs
    }

    #[test]
    fn write_read_round_trip() {
        let fs = fs_with_dir();
        let p = Path::new("/db/f");
        let mut w = fs.new_writable_file(p).unwrap();
        w.append(b"hello ").unwrap();
        w.append(b"world").unwrap();
        w.sync().unwrap();
        assert_eq!(w.size(), 11);
        assert_eq!(fs.file_size(p).unwrap(), 11);
        let r = fs.new_random_access_file(p).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(r.read_at(6, &mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"world");
        assert_eq!(r.read_at(100, &mut buf).unwrap(), 0);
        let mut s = fs.new_sequential_file(p).unwrap();
        let mut small = [0u8; 4];
        assert_eq!(s.read(&mut small).unwrap(), 4);
        assert_eq!(&small, b"hell");
        assert_eq!(read_file(&fs, p).unwrap(), b"hello world");
        // Reopening for write truncates.
        drop(fs.new_writable_file(p).unwrap());
        assert_eq!(fs.file_size(p).unwrap(), 0);
    }

    /// `write_at_synced` overwrites bytes in place and leaves the rest; a missing file is
    /// NotFound-like (the open fails), not created.
    #[test]
    fn write_at_overwrites_in_place() {
        let fs = fs_with_dir();
        let p = Path::new("/db/f");
        let mut w = fs.new_writable_file(p).unwrap();
        w.append(b"0123456789").unwrap();
        w.sync().unwrap();
        drop(w);
        fs.write_at_synced(p, 3, b"abc").unwrap();
        assert_eq!(read_file(&fs, p).unwrap(), b"012abc6789");
        assert!(fs.write_at_synced(Path::new("/db/missing"), 0, b"x").is_err());
        assert!(!fs.file_exists(Path::new("/db/missing")));
    }

    #[test]
    fn directories_and_children() {
        let fs = fs_with_dir();
        write_file(&fs, "/db/a");
        write_file(&fs, "/db/b");
        let mut c = fs.children(Path::new("/db")).unwrap();
        c.sort();
        assert_eq!(c, vec!["a", "b", "sub"]);
        assert!(fs.file_exists(Path::new("/db/sub")));
        assert!(!fs.file_exists(Path::new("/db/c")));
        let e = fs.new_writable_file(Path::new("/nodir/x")).err().unwrap();
        assert_eq!(e.os_code(), Some(libc::ENOENT));
        assert_eq!(fs.remove_dir(Path::new("/db")).unwrap_err().os_code(), Some(libc::ENOTEMPTY));
        fs.remove_dir(Path::new("/db/sub")).unwrap();
        fs.remove_file(Path::new("/db/a")).unwrap();
        assert_eq!(fs.remove_file(Path::new("/db/a")).unwrap_err().kind(), ErrorKind::IOError);
        assert_eq!(fs.children(Path::new("/db")).unwrap(), vec!["b"]);
        assert!(fs.children(Path::new("/none")).is_err());
    }

    fn write_file(fs: &MemFileSystem, p: &str) {
        crate::fs::write_file_synced(fs, Path::new(p), p.as_bytes()).unwrap();
    }

    #[test]
    fn rename_replaces_target_and_keeps_open_handles() {
        let fs = fs_with_dir();
        write_file(&fs, "/db/old");
        let mut w = fs.new_writable_file(Path::new("/db/tmp")).unwrap();
        w.append(b"new").unwrap();
        fs.rename(Path::new("/db/tmp"), Path::new("/db/old")).unwrap();
        w.append(b"er").unwrap();
        assert_eq!(read_file(&fs, Path::new("/db/old")).unwrap(), b"newer");
        assert!(!fs.file_exists(Path::new("/db/tmp")));
        assert!(fs.rename(Path::new("/db/tmp"), Path::new("/db/x")).is_err());
    }

    #[test]
    fn second_lock_fails_until_released() {
        let fs = fs_with_dir();
        let p = Path::new("/db/LOCK");
        let l = fs.lock_file(p).unwrap();
        let e = fs.lock_file(p).err().expect("second lock must fail");
        assert_eq!(e.kind(), ErrorKind::IOError);
        assert!(fs.file_exists(p));
        drop(l);
        drop(fs.lock_file(p).unwrap());
    }
}
