//! The files of one queue (append or rewrite): the active file being written, the sealed
//! ones being read, rotation, purge and recycling.
//!
//! ```text
//! SinglePipe
//!   files:  RwLock<VecDeque<LogFile>>   seq ascending, contiguous; the last is active
//!   active: Mutex<ActiveFile>           writer, bytes written, format
//!   recycled: Mutex<Recycled>           reserved files kept (NNN.raftlog.reserved) and
//!                                       the number the next one is given
//! ```
//! Durability: a new file is written with its header, synced, then its directory is
//! synced before any batch goes in; the previous active file is synced before the switch.
//! Purge removes files oldest first with a directory sync after each, so a crash leaves a
//! contiguous suffix of them (recovery relies on that: see `memtable.rs`).
//!
//! Recycling (`enable_log_recycle`, V2 only): purged append files are renamed to
//! `NNN.raftlog.reserved` (up to the recycle capacity) instead of being removed, as
//! raft-engine keeps them, so a directory handed back to raft-engine finds them. NNN is
//! not the purged file's sequence number: reserved files are numbered on a counter of
//! their own (as raft-engine numbers them), one past the highest reserved file found at
//! open and never given twice, so a purge cannot rename over a reserved file raft-engine
//! (or an earlier run) left, whatever its number. Shale's
//! `FileSystem` cannot overwrite a file in place, so when Shale rotates it removes one
//! reserved file and creates the new one fresh: the saving of reusing allocated blocks
//! that raft-engine gets is not there. Except for reserved files this run wrote itself
//! (`prefill_for_recycle`: a header and zeros, synced; `prefill_reserved`): on the real
//! file system a rotation takes one in place (`take_reserved`), renamed to the new file's
//! name and written at offsets, as a next file zeroed ahead (`prefill.rs`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use shale_base::fs::{FileSystemRef, RandomAccessFile, WritableFile};

use crate::format::{build_reserved_file_name, FileId, FileSeq, LogFileFormat, LogQueue};
use crate::halt::Halt;
use crate::log_batch::{signature_of, EncodedBatch};
use crate::memtable::MAX_FILE_SEQ;
use crate::poison;
use crate::prefill::{cut_file, NextFiles, OffsetWriter, Prefiller};
use crate::{Error, Result};

/// Where a batch went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileBlockHandle {
    pub id: FileId,
    pub offset: u64,
    pub len: usize,
}

/// A file of the queue, readable.
pub(crate) struct LogFile {
    pub seq: FileSeq,
    pub reader: Arc<dyn RandomAccessFile>,
    pub format: LogFileFormat,
    /// Bytes in the file (grows for the active file).
    pub size: u64,
}

struct ActiveFile {
    seq: FileSeq,
    writer: Box<dyn WritableFile>,
    written: u64,
    format: LogFileFormat,
    /// Records of the recovery index (`index_file.rs`) of this file, when it is on.
    index: Vec<u8>,
    index_count: u64,
    /// The file, when it was zeroed ahead (`prefill_next_file`): cut back to its batches
    /// when sealed and when the engine is dropped.
    zeroed: Option<std::fs::File>,
    /// Sealed (rotated) once it holds this many bytes: the target file size, or with
    /// `prefill_next_file` the size of its zeroed file (the first files are shorter,
    /// `prefill.rs`).
    limit: u64,
}

/// The reserved files kept for recycling, oldest first, and the number the next one gets.
struct Recycled {
    seqs: VecDeque<FileSeq>,
    /// Above every reserved file's number seen or given in this run.
    next_name: FileSeq,
    /// Reserved files this run wrote as a header and zeros (`prefill_for_recycle`) on the
    /// real file system: a rotation takes them in place.
    clean: std::collections::HashSet<FileSeq>,
}

impl Recycled {
    fn new(mut seqs: Vec<FileSeq>) -> Recycled {
        seqs.sort_unstable();
        seqs.dedup();
        let next_name = seqs.last().map_or(1, |s| s + 1);
        Recycled { seqs: seqs.into(), next_name, clean: Default::default() }
    }
}

/// A reserved file number free in `dir`: `from` (the counter), or past it when names are
/// taken on disk (a reserved file whose removal failed keeps its name).
fn free_name(fs: &dyn shale_base::fs::FileSystem, dir: &Path, from: FileSeq) -> Result<FileSeq> {
    let mut n = from;
    while n < MAX_FILE_SEQ && fs.file_exists(&dir.join(build_reserved_file_name(n))) {
        n += 1;
    }
    if fs.file_exists(&dir.join(build_reserved_file_name(n))) {
        return Err(Error::Other(
            format!("no free reserved file number in {} (up to {n} taken)", dir.display()).into(),
        ));
    }
    Ok(n)
}

/// `prefill_for_recycle` at open (raft-engine's `initialize_files`): reserved files are
/// created, each a log file header then zeros to `size` bytes, synced, until there are
/// `target`; those beyond `target` are removed, newest first; the directory is synced.
/// Files it writes are marked clean when `in_place` (the real file system). A file that
/// cannot be written (a full disk) is removed and the prefill stops there, as raft-engine's
/// does (it logs and goes on).
fn prefill_reserved(
    fs: &dyn shale_base::fs::FileSystem,
    dir: &Path,
    format: LogFileFormat,
    size: u64,
    rec: &mut Recycled,
    target: usize,
    in_place: bool,
) -> Result<()> {
    let mut changed = false;
    let zeros = vec![0u8; 1 << 20];
    while rec.seqs.len() < target {
        let n = free_name(fs, dir, rec.next_name)?;
        let path = dir.join(build_reserved_file_name(n));
        let r = (|| -> Result<()> {
            let mut w = fs.new_writable_file(&path)?;
            let mut header = Vec::with_capacity(LogFileFormat::max_encoded_len());
            format.encode(&mut header);
            w.append(&header)?;
            let mut at = header.len() as u64;
            while at < size {
                let k = (size - at).min(zeros.len() as u64) as usize;
                w.append(&zeros[..k])?;
                at += k as u64;
            }
            w.sync()?;
            Ok(())
        })();
        changed = true;
        rec.next_name = n + 1;
        if r.is_err() {
            let _ = fs.remove_file(&path);
            break;
        }
        rec.seqs.push_back(n);
        if in_place {
            rec.clean.insert(n);
        }
    }
    while rec.seqs.len() > target {
        if let Some(n) = rec.seqs.pop_back() {
            rec.clean.remove(&n);
            fs.remove_file(&dir.join(build_reserved_file_name(n)))?;
            changed = true;
        }
    }
    if changed {
        fs.sync_dir(dir)?;
    }
    Ok(())
}

pub(crate) struct SinglePipe {
    queue: LogQueue,
    dir: PathBuf,
    fs: FileSystemRef,
    target_file_size: u64,
    format: LogFileFormat,
    files: RwLock<VecDeque<LogFile>>,
    active: Mutex<ActiveFile>,
    recycled: Mutex<Recycled>,
    recycle_capacity: usize,
    /// Write a recovery index for each sealed file (`Config::recovery_index_files`).
    write_index: bool,
    /// Zeros written ahead of the active file's batches (`prefill.rs`); None: off.
    prefill: Option<Prefiller>,
    /// The next file, zeroed ahead (`prefill.rs`, `prefill_next_file`); None: off.
    next: Option<NextFiles>,
    /// The engine's stored error, shared by both queues (`halt.rs`): set by a failed write,
    /// sync or poisoned active-file lock here, checked before every write, sync and rotation.
    halt: Arc<Halt>,
}

impl SinglePipe {
    #[allow(clippy::too_many_arguments)]
    /// Opens the queue after recovery: `files` are the recovered files (valid, in order);
    /// a new active file `last seq + 1` is created (Shale never appends to a file it did
    /// not create in this run).
    pub fn open(
        queue: LogQueue,
        dir: &Path,
        fs: FileSystemRef,
        target_file_size: u64,
        format: LogFileFormat,
        files: Vec<LogFile>,
        recycled: Vec<FileSeq>,
        recycle_capacity: usize,
        write_index: bool,
        prefill_ahead: u64,
        prefill_next: Option<u64>,
        prefill_recycle: Option<usize>,
        posix: bool,
        halt: Arc<Halt>,
    ) -> Result<SinglePipe> {
        let mut recycled = Recycled::new(recycled);
        if let Some(target) = prefill_recycle {
            prefill_reserved(&*fs, dir, format, target_file_size, &mut recycled, target, posix)?;
        }
        let next_files = if let Some(first) = prefill_next {
            let mut header = Vec::with_capacity(LogFileFormat::max_encoded_len());
            format.encode(&mut header);
            NextFiles::start(dir, header, target_file_size, first)
        } else {
            None
        };
        let next = files.last().map_or(1, |f| f.seq + 1);
        let (active, file) = open_active(
            &*fs,
            dir,
            FileId::new(queue, next),
            format,
            None,
            next_files.as_ref(),
            true,
            target_file_size,
        )?;
        let prefill =
            if prefill_ahead > 0 { Prefiller::start(prefill_ahead, target_file_size) } else { None };
        if let Some(p) = &prefill {
            p.attach(&FileId::new(queue, next).build_file_path(dir), active.written)?;
        }
        let mut files: VecDeque<LogFile> = files.into();
        files.push_back(file);
        Ok(SinglePipe {
            queue,
            dir: dir.to_path_buf(),
            fs,
            target_file_size,
            format,
            files: RwLock::new(files),
            active: Mutex::new(active),
            recycled: Mutex::new(recycled),
            recycle_capacity,
            write_index,
            prefill,
            next: next_files,
            halt,
        })
    }

    /// Appends an encoded batch (signing it for the file it lands in).
    pub fn append(&self, batch: &mut EncodedBatch) -> Result<FileBlockHandle> {
        let mut active = self.lock_active()?;
        if active.written >= active.limit {
            self.rotate_locked(&mut active)?;
        }
        let id = FileId::new(self.queue, active.seq);
        batch.sign(signature_of(id, active.format.version));
        let offset = active.written;
        if let Some(p) = &self.prefill {
            p.reserve(offset + batch.bytes.len() as u64)?;
        }
        let r = active.writer.append(&batch.bytes).and_then(|_| active.writer.flush());
        if let Err(e) = r {
            return Err(self.halt.halt(e.into()));
        }
        active.written += batch.bytes.len() as u64;
        if self.write_index {
            let footer = &batch.bytes[batch.header.footer_offset..];
            crate::index_file::push_record(&mut active.index, offset, &batch.bytes, footer);
            active.index_count += 1;
        }
        let written = active.written;
        drop(active);
        if let Some(n) = &self.next {
            n.progress(written);
        }
        self.set_size(id.seq, written)?;
        Ok(FileBlockHandle { id, offset, len: batch.bytes.len() })
    }

    fn set_size(&self, seq: FileSeq, size: u64) -> Result<()> {
        let mut files = poison::write(&self.files, "file list")?;
        if let Some(f) = files.back_mut() {
            if f.seq == seq {
                f.size = size;
            }
        }
        Ok(())
    }

    /// The active file, once the engine is known not to be stopped (`halt.rs`); a
    /// poisoned lock stops it.
    fn lock_active(&self) -> Result<MutexGuard<'_, ActiveFile>> {
        let active = poison::lock(&self.active, "active file").map_err(|e| self.halt.halt(e))?;
        self.halt.check()?;
        Ok(active)
    }

    pub fn sync(&self) -> Result<()> {
        let mut active = self.lock_active()?;
        if let Err(e) = active.writer.sync() {
            return Err(self.halt.halt(e.into()));
        }
        Ok(())
    }

    pub fn rotate(&self) -> Result<()> {
        let mut active = self.lock_active()?;
        self.rotate_locked(&mut active)
    }

    /// Seals the active file and starts the next (active file locked by `lock_active`).
    fn rotate_locked(&self, active: &mut ActiveFile) -> Result<()> {
        if let Err(e) = active.writer.sync() {
            return Err(self.halt.halt(e.into()));
        }
        if let Some(f) = &active.zeroed {
            // Zeroed ahead: cut back to its batches (synced), before the index records
            // its size. A failed cut leaves the zeros, read as the file's end.
            let _ = cut_file(f, active.written, true);
        }
        if let Some(p) = &self.prefill {
            // Its zeros past the batches go (synced), before the index records its size.
            // A failed cut leaves a zero tail, which readers take as the end; the index
            // then does not match the file and is not used.
            p.seal(active.written)?;
        }
        if self.write_index {
            // The file is sealed (synced above): its recovery index. One that fails to be
            // written only means the file is scanned at the next open.
            let _ = crate::index_file::write(
                &*self.fs,
                &self.dir,
                FileId::new(self.queue, active.seq),
                active.format,
                active.written,
                active.index_count,
                &active.index,
            );
            active.index = Vec::new();
            active.index_count = 0;
        }
        let seq = active.seq + 1;
        if seq > MAX_FILE_SEQ {
            return Err(Error::InvalidArgument(format!("file sequence number {seq} exceeds {MAX_FILE_SEQ}")));
        }
        let reuse = {
            let mut rec = poison::lock(&self.recycled, "recycled files")?;
            rec.seqs.pop_front().map(|n| (n, rec.clean.remove(&n)))
        };
        let (new_active, file) = open_active(
            &*self.fs,
            &self.dir,
            FileId::new(self.queue, seq),
            self.format,
            reuse,
            self.next.as_ref(),
            false,
            self.target_file_size,
        )?;
        if let Some(p) = &self.prefill {
            if new_active.zeroed.is_none() {
                p.attach(&FileId::new(self.queue, seq).build_file_path(&self.dir), new_active.written)?;
            }
        }
        *active = new_active;
        poison::write(&self.files, "file list")?.push_back(file);
        Ok(())
    }

    /// Reads `len` bytes at `offset` of file `seq`.
    pub fn read(&self, seq: FileSeq, offset: u64, len: usize) -> Result<Vec<u8>> {
        let reader = {
            let files = poison::read(&self.files, "file list")?;
            let first = files.front().map_or(0, |f| f.seq);
            match files.get(seq.wrapping_sub(first) as usize) {
                Some(f) if f.seq == seq => f.reader.clone(),
                _ => {
                    return Err(Error::corruption(format!(
                        "{} is not a live file of the {} queue",
                        FileId::new(self.queue, seq),
                        queue_name(self.queue)
                    )))
                }
            }
        };
        let mut buf = vec![0u8; len];
        let n = reader.read_at(offset, &mut buf)?;
        if n != len {
            return Err(Error::corruption(format!(
                "{}: {len} bytes at offset {offset} asked, {n} read",
                FileId::new(self.queue, seq)
            )));
        }
        Ok(buf)
    }

    /// (first seq, active seq).
    pub fn file_span(&self) -> Result<(FileSeq, FileSeq)> {
        let files = poison::read(&self.files, "file list")?;
        Ok((files.front().map_or(0, |f| f.seq), files.back().map_or(0, |f| f.seq)))
    }

    pub fn total_size(&self) -> Result<u64> {
        Ok(poison::read(&self.files, "file list")?.iter().map(|f| f.size).sum())
    }

    /// The seq of the file at `position` (0.0 = first, 1.0 = active) of the span.
    pub fn file_at(&self, position: f64) -> Result<FileSeq> {
        let (first, active) = self.file_span()?;
        let count = active - first + 1;
        Ok(first + (count as f64 * position.clamp(0.0, 1.0)) as u64)
    }

    /// Removes every file below `seq` (never the active one); returns how many.
    pub fn purge_to(&self, seq: FileSeq) -> Result<usize> {
        let active_seq = poison::lock(&self.active, "active file")?.seq;
        let seq = seq.min(active_seq);
        let mut purged = 0;
        loop {
            let first = {
                let files = poison::read(&self.files, "file list")?;
                match files.front() {
                    Some(f) if f.seq < seq => (f.seq, f.format.version.has_log_signing()),
                    _ => break,
                }
            };
            let path = FileId::new(self.queue, first.0).build_file_path(&self.dir);
            let recycle = self.queue == LogQueue::Append
                && first.1
                && poison::lock(&self.recycled, "recycled files")?.seqs.len() < self.recycle_capacity;
            if recycle {
                // A number no reserved file has: the counter, past any name taken on disk
                // (a reserved file whose removal failed keeps its name).
                // The name is found and taken outside the lock (rotation takes it on the
                // write path); purges are one at a time (the engine's purge lock).
                let from = poison::lock(&self.recycled, "recycled files")?.next_name;
                let n = free_name(&*self.fs, &self.dir, from)?;
                poison::lock(&self.recycled, "recycled files")?.next_name = n + 1;
                self.fs.rename(&path, &self.dir.join(build_reserved_file_name(n)))?;
                poison::lock(&self.recycled, "recycled files")?.seqs.push_back(n);
            } else {
                self.fs.remove_file(&path)?;
            }
            // Its recovery index, if any, goes with it (a leftover is removed at open).
            let idx = crate::index_file::path_of(&self.dir, FileId::new(self.queue, first.0));
            if self.fs.file_exists(&idx) {
                self.fs.remove_file(&idx)?;
            }
            poison::write(&self.files, "file list")?.pop_front();
            purged += 1;
            // One directory sync per file: a crash leaves a contiguous suffix.
            self.fs.sync_dir(&self.dir)?;
        }
        Ok(purged)
    }

    pub fn recycled_count(&self) -> Result<usize> {
        Ok(poison::lock(&self.recycled, "recycled files")?.seqs.len())
    }
}

impl Drop for SinglePipe {
    fn drop(&mut self) {
        // A zeroed-ahead active file loses its zero tail (not synced: a crash before the
        // cut reaches the disk leaves zeros, which recovery cuts).
        // A poisoned active file is left as it is (recovery cuts a zero tail).
        if let Ok(active) = poison::lock(&self.active, "active file") {
            if let Some(f) = &active.zeroed {
                let _ = cut_file(f, active.written, false);
            }
        }
    }
}

fn queue_name(q: LogQueue) -> &'static str {
    match q {
        LogQueue::Append => "append",
        LogQueue::Rewrite => "rewrite",
    }
}

/// The new active file `id`: the zeroed-ahead one renamed when `next` has it ready,
/// else created fresh (`create_file`). `wait`: wait for the zeroed file being prepared
/// (open does; rotation does not, see `prefill.rs`). `target`: the target file size,
/// the new file's limit unless `next` gives one.
#[allow(clippy::too_many_arguments)]
fn open_active(
    fs: &dyn shale_base::fs::FileSystem,
    dir: &Path,
    id: FileId,
    format: LogFileFormat,
    reuse: Option<(FileSeq, bool)>,
    next: Option<&NextFiles>,
    wait: bool,
    target: u64,
) -> Result<(ActiveFile, LogFile)> {
    let path = id.build_file_path(dir);
    let in_place = match reuse {
        Some((old, true)) => take_reserved(dir, old, &path, format),
        _ => None,
    };
    let reuse = reuse.map(|r| r.0);
    let mut limit = target;
    let taken = match (in_place, next) {
        (Some(t), _) => Some(t),
        (None, Some(next)) => {
            let t = next.take(&path, wait)?;
            limit = t.limit;
            t.file
        }
        (None, None) => None,
    };
    let Some((file, written)) = taken else {
        return create_file(fs, dir, id, format, reuse, limit);
    };
    if let Some(old) = reuse {
        // As in `create_file`: the new file does not reuse the reserved one's blocks
        // (unless it was taken in place above: then it is gone already).
        let reserved = dir.join(build_reserved_file_name(old));
        if fs.file_exists(&reserved) {
            let _ = fs.remove_file(&reserved);
        }
    }
    let writer = OffsetWriter::new(file.try_clone()?, written, &path);
    let reader = fs.new_random_access_file(&path)?;
    Ok((
        ActiveFile {
            seq: id.seq,
            writer: Box::new(writer),
            written,
            format,
            index: Vec::new(),
            index_count: 0,
            zeroed: Some(file),
            limit,
        },
        LogFile { seq: id.seq, reader, format, size: written },
    ))
}

/// A clean reserved file (a header and zeros, written and synced by this run's
/// `prefill_for_recycle`) taken in place as the new active file `path`: renamed, the
/// directory synced, opened for writes at offsets past its header. After a crash the file
/// is either still reserved or the new log file holding a header and zeros (the zero tail
/// recovery cuts), the states a renamed next file leaves (`prefill.rs`). None when that
/// failed (the caller then creates the file fresh).
fn take_reserved(
    dir: &Path,
    old: FileSeq,
    path: &Path,
    format: LogFileFormat,
) -> Option<(std::fs::File, u64)> {
    let from = dir.join(build_reserved_file_name(old));
    std::fs::rename(&from, path).ok()?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).ok()?;
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).ok()?;
    Some((f, LogFileFormat::encoded_len(format.version) as u64))
}

/// Creates file `id` (from a reserved file when `reuse` names one), writes and syncs its
/// header, and syncs the directory. It is sealed at `limit` bytes.
fn create_file(
    fs: &dyn shale_base::fs::FileSystem,
    dir: &Path,
    id: FileId,
    format: LogFileFormat,
    reuse: Option<FileSeq>,
    limit: u64,
) -> Result<(ActiveFile, LogFile)> {
    let path = id.build_file_path(dir);
    if let Some(old) = reuse {
        // Renaming the reserved file to the new name and overwriting it would leave, after
        // a crash between the two, a file under the new name holding the old batches; a
        // fresh file has no such window. The reserved file goes first.
        let _ = fs.remove_file(&dir.join(build_reserved_file_name(old)));
    }
    let mut writer = fs.new_writable_file(&path)?;
    let mut header = Vec::with_capacity(LogFileFormat::max_encoded_len());
    format.encode(&mut header);
    writer.append(&header)?;
    writer.sync()?;
    fs.sync_dir(dir)?;
    let reader = fs.new_random_access_file(&path)?;
    let written = header.len() as u64;
    Ok((
        ActiveFile {
            seq: id.seq,
            writer,
            written,
            format,
            index: Vec::new(),
            index_count: 0,
            zeroed: None,
            limit,
        },
        LogFile { seq: id.seq, reader, format, size: written },
    ))
}
