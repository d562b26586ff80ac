//! Reading log files back: the batch scanner (shared by recovery and the `dump` tool) and
//! the recovery driver.
//!
//! A file is scanned header to end: for each batch, the 16-byte header, then the item
//! footer (checksum verified); the entries blob is skipped, except for the last batch of
//! each file, whose blob checksum is verified too (a torn write damages the last batch).
//! The scanner stops at:
//! - the end of the file: clean end;
//! - zero bytes up to the end (a preallocated tail, as raft-engine's `fallocate` or
//!   Shale's zero prefill leave after a crash): clean end, and recovery cuts the zeros;
//! - anything else undecodable: damage at that offset, handled by the recovery mode.
//!
//! Recovery lists the directory, replays the rewrite queue and chunks of the append queue
//! on up to `recovery_threads` threads (each into its own table, see `memtable.rs`), then
//! merges the tables oldest first. Damage that a mode tolerates is cut off on disk (the
//! valid prefix is copied to a temporary file, synced and renamed over the damaged one),
//! since later opens must not find it in a file that is no longer the newest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale_base::fs::{FileSystem, RandomAccessFile};

use crate::config::RecoveryMode;
use crate::format::{parse_reserved_file_name, FileId, FileSeq, LogFileFormat, LogQueue};
use crate::log_batch::{
    decode_entries_block, decode_items, is_internal_key, signature_of, BatchHeader, LogItem, LogItemContent,
    OpType, LOG_BATCH_HEADER_LEN,
};
use crate::memtable::{BlobLoc, MemTables, NewRun, Op};
use crate::pipe::LogFile;
use crate::{Error, Result};

const MIN_WINDOW: usize = 1 << 20;

/// A read window over a file.
struct Window {
    file: Arc<dyn RandomAccessFile>,
    size: u64,
    start: u64,
    buf: Vec<u8>,
    block: usize,
}

impl Window {
    /// `len` bytes at `offset`, or None when the file ends first.
    fn peek(&mut self, offset: u64, len: usize) -> Result<Option<&[u8]>> {
        if offset + len as u64 > self.size {
            return Ok(None);
        }
        let end = self.start + self.buf.len() as u64;
        if offset < self.start || offset + len as u64 > end {
            let want = len.max(self.block).min((self.size - offset) as usize);
            self.buf.resize(want, 0);
            let n = self.file.read_at(offset, &mut self.buf)?;
            self.buf.truncate(n);
            self.start = offset;
            if n < len {
                return Ok(None);
            }
        }
        let at = (offset - self.start) as usize;
        Ok(Some(&self.buf[at..at + len]))
    }

    /// True when every byte from `offset` to the end of the file is zero.
    fn zero_to_end(&mut self, offset: u64) -> Result<bool> {
        let mut at = offset;
        while at < self.size {
            let n = ((self.size - at) as usize).min(self.block);
            match self.peek(at, n)? {
                Some(b) if b.iter().all(|&x| x == 0) => at += n as u64,
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// One decoded batch.
pub struct ScannedBatch {
    pub offset: u64,
    pub header: BatchHeader,
    pub items: Vec<LogItem>,
    /// The batch's header and item footer as on disk (header first), kept only when a
    /// recovery index is being built.
    raw: Vec<u8>,
}

/// How a scan ended.
#[derive(Debug)]
pub enum ScanEnd {
    /// The file ended cleanly.
    Clean,
    /// The batches end cleanly at `offset`, followed by zeros to the end of the file (a
    /// preallocated or prefilled tail left by a crash): recovery cuts them off.
    ZeroTail { offset: u64 },
    /// Damage at `offset` (the valid prefix ends there).
    Damaged { offset: u64, error: Error },
    /// The file header itself is damaged.
    BadHeader(Error),
}

/// Scans one file, calling `f` for each valid batch. `verify_all_blobs` checks every
/// entries blob (the `check` tool), not only the last one.
pub fn scan_file(
    file: Arc<dyn RandomAccessFile>,
    id: FileId,
    block: usize,
    verify_all_blobs: bool,
    f: impl FnMut(ScannedBatch) -> Result<()>,
) -> Result<(Option<LogFileFormat>, ScanEnd)> {
    scan_file_indexing(file, id, block, verify_all_blobs, None, f)
}

/// [`scan_file`], also appending each valid batch's recovery-index record to `index`
/// (records, count) when given.
fn scan_file_indexing(
    file: Arc<dyn RandomAccessFile>,
    id: FileId,
    block: usize,
    verify_all_blobs: bool,
    mut index: Option<&mut (Vec<u8>, u64)>,
    mut f: impl FnMut(ScannedBatch) -> Result<()>,
) -> Result<(Option<LogFileFormat>, ScanEnd)> {
    let keep_raw = index.is_some();
    let mut emit = |p: ScannedBatch| -> Result<()> {
        if let Some(ix) = index.as_deref_mut() {
            let (h, footer) = p.raw.split_at(LOG_BATCH_HEADER_LEN.min(p.raw.len()));
            crate::index_file::push_record(&mut ix.0, p.offset, h, footer);
            ix.1 += 1;
        }
        f(p)
    };
    let size = file.size()?;
    let mut w = Window { file, size, start: 0, buf: Vec::new(), block: block.max(MIN_WINDOW) };
    let head_len = LogFileFormat::max_encoded_len().min(size as usize);
    let format = match w.peek(0, head_len)?.map(LogFileFormat::decode) {
        Some(Ok(fmt)) => fmt,
        Some(Err(e)) => return Ok((None, ScanEnd::BadHeader(e))),
        None => return Ok((None, ScanEnd::BadHeader(Error::corruption("file shorter than its header")))),
    };
    let sig = signature_of(id, format.version);
    let mut offset = LogFileFormat::encoded_len(format.version) as u64;
    let mut pending: Option<ScannedBatch> = None;
    let end = loop {
        if offset >= size {
            break ScanEnd::Clean;
        }
        let step = (|| -> Result<Option<ScannedBatch>> {
            let hb = match w.peek(offset, LOG_BATCH_HEADER_LEN)? {
                Some(b) => b,
                None => return Err(Error::corruption("truncated batch header")),
            };
            let mut hb_copy = [0u8; LOG_BATCH_HEADER_LEN];
            hb_copy.copy_from_slice(&hb[..LOG_BATCH_HEADER_LEN]);
            let header = match BatchHeader::decode(hb) {
                Ok(h) => h,
                Err(e) => {
                    // V2 alignment padding: zeros up to the next aligned offset.
                    if format.alignment > 0 {
                        let next = crate::util::round_up(offset as usize, format.alignment as usize) as u64;
                        if next > offset && next <= size {
                            if let Some(pad) = w.peek(offset, (next - offset) as usize)? {
                                if pad.iter().all(|&b| b == 0) {
                                    return Ok(Some(ScannedBatch {
                                        offset: next,
                                        header: BatchHeader {
                                            len: 0,
                                            compression: crate::log_batch::CompressionType::None,
                                            footer_offset: 0,
                                        },
                                        items: Vec::new(),
                                        raw: Vec::new(),
                                    }));
                                }
                            }
                        }
                    }
                    return Err(e);
                }
            };
            if offset + header.len as u64 > size {
                return Err(Error::corruption(format!(
                    "log batch of {} bytes runs past the end of the file",
                    header.len
                )));
            }
            let footer = w
                .peek(offset + header.footer_offset as u64, header.len - header.footer_offset)?
                .ok_or_else(|| Error::corruption("truncated item footer"))?;
            let items = decode_items(footer, sig)?;
            let mut raw = Vec::new();
            if keep_raw {
                raw.reserve(LOG_BATCH_HEADER_LEN + footer.len());
                raw.extend_from_slice(&hb_copy);
                raw.extend_from_slice(footer);
            }
            if verify_all_blobs && header.entries_len() > 0 {
                let blob = w
                    .peek(offset + LOG_BATCH_HEADER_LEN as u64, header.entries_len())?
                    .ok_or_else(|| Error::corruption("truncated entries blob"))?;
                decode_entries_block(blob, header.compression)?;
            }
            Ok(Some(ScannedBatch { offset, header, items, raw }))
        })();
        match step {
            Ok(Some(b)) if b.header.len == 0 => {
                offset = b.offset; // padding skipped
            }
            Ok(Some(b)) => {
                offset += b.header.len as u64;
                if let Some(p) = pending.replace(b) {
                    emit(p)?;
                }
            }
            Ok(None) => break ScanEnd::Clean,
            Err(e @ Error::Io(_)) => return Err(e),
            Err(e) => {
                if w.zero_to_end(offset)? {
                    break ScanEnd::ZeroTail { offset };
                }
                break ScanEnd::Damaged { offset, error: e };
            }
        }
    };
    // The last batch: verify its entries blob too (a torn write shows there).
    let mut end = end;
    if let Some(p) = pending.take() {
        let mut ok = true;
        if p.header.entries_len() > 0 && !verify_all_blobs {
            let blob = w.peek(p.offset + LOG_BATCH_HEADER_LEN as u64, p.header.entries_len())?;
            let r = match blob {
                Some(b) => decode_entries_block(b, p.header.compression).map(|_| ()),
                None => Err(Error::corruption("truncated entries blob")),
            };
            if let Err(e) = r {
                ok = false;
                end = ScanEnd::Damaged { offset: p.offset, error: e };
            }
        }
        if ok {
            emit(p)?;
        }
    }
    Ok((Some(format), end))
}

/// Turns a batch's items into index operations.
pub(crate) fn batch_ops(
    id: FileId,
    batch_offset: u64,
    header: &BatchHeader,
    items: Vec<LogItem>,
) -> Result<Vec<(u64, Op)>> {
    let blob_offset = batch_offset + LOG_BATCH_HEADER_LEN as u64;
    let mut ops = Vec::with_capacity(items.len());
    for item in items {
        let region = item.raft_group_id;
        let op = match item.content {
            LogItemContent::Entries { first_index, start, ends } => {
                if ends.is_empty() {
                    continue;
                }
                let blob = BlobLoc::new(id, blob_offset, header.entries_len(), header.compression)?;
                Op::Append(NewRun::new(first_index, blob, start, ends)?)
            }
            LogItemContent::Command(crate::Command::Clean) => Op::Clean,
            LogItemContent::Command(crate::Command::Compact { index }) => Op::Compact(index),
            LogItemContent::Kv { key, .. } if is_internal_key(&key) => continue,
            LogItemContent::Kv { op: OpType::Put, key, value } => Op::Put(key, value.unwrap_or_default(), id),
            LogItemContent::Kv { op: OpType::Del, key, .. } => Op::Del(key),
        };
        ops.push((region, op));
    }
    Ok(ops)
}

/// What recovery found on disk.
pub(crate) struct Recovered {
    pub memtables: MemTables,
    pub append: Vec<LogFile>,
    pub rewrite: Vec<LogFile>,
    pub reserved: Vec<FileSeq>,
}

struct FileName {
    seq: FileSeq,
    path: PathBuf,
}

/// Lists the log files of `dir`: (append, rewrite, reserved), each ascending, with the
/// files before a gap in the sequence left out (stale leftovers, as raft-engine does).
fn list(fs: &dyn FileSystem, dir: &Path) -> Result<(Vec<FileName>, Vec<FileName>, Vec<FileSeq>)> {
    let mut append = BTreeMap::new();
    let mut rewrite = BTreeMap::new();
    let mut reserved = Vec::new();
    for name in fs.children(dir)? {
        if let Some(id) = FileId::parse_file_name(&name) {
            let target = if id.queue == LogQueue::Append { &mut append } else { &mut rewrite };
            target.insert(id.seq, dir.join(&name));
        } else if let Some(seq) = parse_reserved_file_name(&name) {
            reserved.push(seq);
        }
    }
    reserved.sort_unstable();
    let contiguous = |m: BTreeMap<u64, PathBuf>| -> Vec<FileName> {
        let v: Vec<FileName> = m.into_iter().map(|(seq, path)| FileName { seq, path }).collect();
        let mut start = 0;
        for i in 1..v.len() {
            if v[i].seq != v[i - 1].seq + 1 {
                start = i;
            }
        }
        v.into_iter().skip(start).collect()
    };
    Ok((contiguous(append), contiguous(rewrite), reserved))
}

/// A file after its scan.
struct Scanned {
    id: FileId,
    reader: Arc<dyn RandomAccessFile>,
    format: Option<LogFileFormat>,
    end: ScanEnd,
    size: u64,
}

/// Replays `files` (one queue, in order) into a fresh table.
fn replay_chunk(
    fs: &dyn FileSystem,
    dir: &Path,
    queue: LogQueue,
    files: &[FileName],
    block: usize,
    index: bool,
) -> Result<(MemTables, Vec<Scanned>)> {
    let table = MemTables::new(true);
    let mut scanned = Vec::with_capacity(files.len());
    let readers = files
        .iter()
        .map(|f| fs.new_random_access_file(&f.path))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    // Files with a usable recovery index are not scanned (see `index_file.rs`).
    let mut indexes: Vec<Option<(LogFileFormat, Vec<ScannedBatch>)>> = files
        .iter()
        .zip(&readers)
        .map(|(f, r)| if index { load_index(fs, dir, FileId::new(queue, f.seq), r) } else { None })
        .collect();
    // Read-ahead hints for the files to scan: the one being scanned and the next, so the
    // device always has a whole file's reads queued per thread (one sequential reader
    // waits on each window's read in turn; queued, the reads of all threads overlap). A
    // hint that fails changes nothing read, so its error is dropped.
    let to_scan: Vec<usize> = (0..files.len()).filter(|&i| indexes[i].is_none()).collect();
    let hint = |i: usize| {
        let r = &readers[i];
        let _ = r.size().and_then(|n| r.prefetch(0, n));
    };
    if let Some(&i) = to_scan.first() {
        hint(i);
    }
    let mut next_hint = 1;
    for (i, f) in files.iter().enumerate() {
        let id = FileId::new(queue, f.seq);
        let reader = readers[i].clone();
        let size = reader.size()?;
        if let Some((fmt, batches)) = indexes[i].take() {
            for b in batches {
                for (region, op) in batch_ops(id, b.offset, &b.header, b.items)? {
                    table.apply(region, op)?;
                }
            }
            scanned.push(Scanned { id, reader, format: Some(fmt), end: ScanEnd::Clean, size });
            continue;
        }
        if let Some(&j) = to_scan.get(next_hint) {
            hint(j);
            next_hint += 1;
        }
        let mut records = index.then(|| (Vec::new(), 0u64));
        let (format, end) = scan_file_indexing(reader.clone(), id, block, false, records.as_mut(), |b| {
            for (region, op) in batch_ops(id, b.offset, &b.header, b.items)? {
                table.apply(region, op)?;
            }
            Ok(())
        })?;
        if let (Some((rec, count)), Some(fmt), ScanEnd::Clean) = (&records, format, &end) {
            // Sealed from now on (Shale never appends to a file after reopening): index
            // it. Failing to only means scanning it again next time.
            let _ = crate::index_file::write(fs, dir, id, fmt, size, *count, rec);
        }
        scanned.push(Scanned { id, reader, format, end, size });
    }
    Ok((table, scanned))
}

/// The batches of file `id` from its recovery index, footers decoded and checked; None
/// when there is no usable index (then the file is scanned).
fn load_index(
    fs: &dyn FileSystem,
    dir: &Path,
    id: FileId,
    reader: &Arc<dyn RandomAccessFile>,
) -> Option<(LogFileFormat, Vec<ScannedBatch>)> {
    let loaded = crate::index_file::load(fs, dir, id, reader)?;
    let sig = signature_of(id, loaded.format.version);
    let mut out = Vec::new();
    for rec in loaded.records() {
        let rec = rec.ok()?;
        let items = decode_items(rec.footer, sig).ok()?;
        out.push(ScannedBatch { offset: rec.offset, header: rec.header, items, raw: Vec::new() });
    }
    Some((loaded.format, out))
}

/// Recovers the index from `dir`.
pub(crate) fn recover(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    mode: RecoveryMode,
    threads: usize,
    block: usize,
    repair: bool,
    index: bool,
) -> Result<Recovered> {
    let index = index && repair;
    if repair {
        // A repair interrupted by a crash leaves its temporary file behind; a purge
        // interrupted between a log file and its recovery index leaves the index.
        let names = fs.children(dir)?;
        for name in &names {
            // A next file being zeroed ahead (`prefill.rs`): never part of the log.
            if name == crate::prefill::NEXT_FILE_NAME {
                fs.remove_file(&dir.join(name))?;
            }
            if let Some(stem) = name.strip_suffix(".tmp") {
                if FileId::parse_file_name(stem).is_some() {
                    fs.remove_file(&dir.join(name))?;
                }
            }
            if let Some(id) = crate::index_file::parse_name(name) {
                if !names.contains(&id.build_file_name()) {
                    fs.remove_file(&dir.join(name))?;
                }
            }
        }
    }
    let (append, rewrite, reserved) = list(&**fs, dir)?;
    let threads = threads.max(1);
    // Rewrite queue: one chunk. Append queue: up to `threads` chunks.
    let chunk_len = append.len().div_ceil(threads).max(1);
    let chunks: Vec<&[FileName]> = append.chunks(chunk_len).collect();
    let results: Vec<Result<(MemTables, Vec<Scanned>)>> = std::thread::scope(|s| {
        let rw = s.spawn(|| replay_chunk(&**fs, dir, LogQueue::Rewrite, &rewrite, block, index));
        let handles: Vec<_> = chunks
            .iter()
            .map(|c| s.spawn(|| replay_chunk(&**fs, dir, LogQueue::Append, c, block, index)))
            .collect();
        let mut out =
            vec![rw.join().unwrap_or_else(|_| Err(Error::Other("recovery thread panicked".into())))];
        for h in handles {
            out.push(h.join().unwrap_or_else(|_| Err(Error::Other("recovery thread panicked".into()))));
        }
        out
    });
    let mut tables = Vec::with_capacity(results.len());
    let mut scanned_rewrite = Vec::new();
    let mut scanned_append = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        let (t, s) = r?;
        tables.push(t);
        if i == 0 {
            scanned_rewrite = s;
        } else {
            scanned_append.extend(s);
        }
    }
    // Damage: decide per mode, repair on disk, and drop what follows a damaged file in
    // modes that stop there. A damaged non-last file in TolerateAnyCorruption keeps its
    // prefix and later files still count, as raft-engine does.
    let mut files_out = [Vec::new(), Vec::new()];
    for (qi, scanned) in [scanned_rewrite, scanned_append].into_iter().enumerate() {
        let n = scanned.len();
        for (i, s) in scanned.into_iter().enumerate() {
            let last = i + 1 == n;
            let tolerate = mode == RecoveryMode::TolerateAnyCorruption
                || (mode == RecoveryMode::TolerateTailCorruption && last);
            let name = s.id.build_file_name();
            let (format, keep) = match s.end {
                ScanEnd::Clean => (s.format.unwrap_or_default(), s.size),
                ScanEnd::BadHeader(e) => {
                    if !repair {
                        continue;
                    }
                    if !tolerate {
                        return Err(Error::corruption(format!(
                            "{}: bad file header: {e}",
                            dir.join(&name).display()
                        )));
                    }
                    let fmt = LogFileFormat::default();
                    let mut hdr = Vec::new();
                    fmt.encode(&mut hdr);
                    if repair {
                        replace_file(&**fs, dir, &name, &hdr)?;
                    }
                    let reader = fs.new_random_access_file(&dir.join(&name))?;
                    files_out[qi].push(LogFile {
                        seq: s.id.seq,
                        reader,
                        format: fmt,
                        size: hdr.len() as u64,
                    });
                    continue;
                }
                ScanEnd::ZeroTail { offset } => {
                    // No damage: cut the zeros, so that the file (sealed from now on)
                    // ends at its last batch, as raft-engine expects of a sealed file.
                    if repair {
                        let mut prefix = vec![0u8; offset as usize];
                        let n = s.reader.read_at(0, &mut prefix)?;
                        prefix.truncate(n);
                        replace_file(&**fs, dir, &name, &prefix)?;
                    }
                    (s.format.unwrap_or_default(), offset)
                }
                ScanEnd::Damaged { offset, error } => {
                    if !tolerate {
                        return Err(Error::corruption(format!(
                            "{} at offset {offset}: {}",
                            dir.join(&name).display(),
                            match error {
                                Error::Corruption(m) => m,
                                e => e.to_string(),
                            }
                        )));
                    }
                    let mut prefix = vec![0u8; offset as usize];
                    let n = s.reader.read_at(0, &mut prefix)?;
                    prefix.truncate(n);
                    if repair {
                        replace_file(&**fs, dir, &name, &prefix)?;
                    }
                    (s.format.unwrap_or_default(), offset)
                }
            };
            let reader = fs.new_random_access_file(&dir.join(&name))?;
            files_out[qi].push(LogFile { seq: s.id.seq, reader, format, size: keep });
        }
    }
    // Merge: the append chunks among themselves first, oldest first, then the result over
    // the rewrite table. (Laying a chunk straight over the rewrite table could meet a
    // stale middle state, entries a later chunk cuts off again, that does not join the
    // rewrite table's entries; merged chunk to chunk, a newer chunk's tombstones always
    // apply first.)
    let mut it = tables.into_iter();
    let base = it.next().unwrap_or_default();
    // The rewrite queue's own Cleans are durable already: not dirty.
    base.take_dirty()?;
    if let Some(acc) = it.next() {
        for t in it {
            acc.merge_newer(t)?;
        }
        base.merge_newer(acc)?;
    }
    let [rewrite_files, append_files] = files_out;
    Ok(Recovered { memtables: base.into_live()?, append: append_files, rewrite: rewrite_files, reserved })
}

/// Replaces `dir/name` with `data` durably (temporary file, sync, rename, directory sync).
fn replace_file(fs: &dyn FileSystem, dir: &Path, name: &str, data: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut w = fs.new_writable_file(&tmp)?;
    w.append(data)?;
    w.sync()?;
    drop(w);
    fs.rename(&tmp, &dir.join(name))?;
    fs.sync_dir(dir)?;
    Ok(())
}
