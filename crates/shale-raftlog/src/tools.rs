//! raft-engine's offline helpers: `dump` (every item of a directory), `consistency_check`
//! (the first damaged entry of each region) and `fork`.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale_base::fs::FileSystemRef;

use crate::config::{Config, RecoveryMode};
use crate::engine::CopyDetails;
use crate::format::{FileId, LogQueue};
use crate::log_batch::{decode_entries_block, LogItem};
use crate::recovery::{recover, scan_file, ScanEnd};
use crate::{Error, Result};

/// Every item of a log directory: rewrite files first, then append files, each oldest
/// first. Damage ends a file's items with one `Err`.
pub struct LogItemReader {
    fs: FileSystemRef,
    dir: PathBuf,
    files: VecDeque<FileId>,
    current: VecDeque<Result<(FileId, u64, LogItem)>>,
}

impl LogItemReader {
    pub(crate) fn open(fs: FileSystemRef, dir: &Path) -> Result<LogItemReader> {
        let mut ids: Vec<FileId> =
            fs.children(dir)?.iter().filter_map(|n| FileId::parse_file_name(n)).collect();
        ids.sort();
        Ok(LogItemReader { fs, dir: dir.to_path_buf(), files: ids.into(), current: VecDeque::new() })
    }

    fn load_next_file(&mut self) -> bool {
        let Some(id) = self.files.pop_front() else { return false };
        let path = id.build_file_path(&self.dir);
        let mut out = VecDeque::new();
        let r = self.fs.new_random_access_file(&path).map_err(Error::from).and_then(|f| {
            scan_file(f, id, 1 << 20, false, |b| {
                for item in b.items {
                    out.push_back(Ok((id, b.offset, item)));
                }
                Ok(())
            })
        });
        match r {
            Ok((_, ScanEnd::Clean)) | Ok((_, ScanEnd::ZeroTail { .. })) => {}
            Ok((_, ScanEnd::Damaged { offset, error })) => out
                .push_back(Err(Error::corruption(format!("{} at offset {offset}: {error}", path.display())))),
            Ok((_, ScanEnd::BadHeader(e))) => {
                out.push_back(Err(Error::corruption(format!("{}: bad file header: {e}", path.display()))))
            }
            Err(e) => out.push_back(Err(e)),
        }
        self.current = out;
        true
    }

    /// The next item with the file and batch offset it came from.
    pub fn next_with_location(&mut self) -> Option<Result<(FileId, u64, LogItem)>> {
        loop {
            if let Some(x) = self.current.pop_front() {
                return Some(x);
            }
            if !self.load_next_file() {
                return None;
            }
        }
    }
}

impl Iterator for LogItemReader {
    type Item = Result<LogItem>;

    fn next(&mut self) -> Option<Result<LogItem>> {
        self.next_with_location().map(|r| r.map(|(_, _, item)| item))
    }
}

/// Replays `dir` read-only and verifies the entries blob of every live entry; returns
/// (region, lowest damaged index) for each damaged region.
pub(crate) fn consistency_check(fs: FileSystemRef, dir: &Path) -> Result<Vec<(u64, u64)>> {
    let rec = recover(&fs, dir, RecoveryMode::TolerateAnyCorruption, 4, 1 << 20, false, false)?;
    let mut readers = HashMap::new();
    for (q, files) in [(LogQueue::Append, &rec.append), (LogQueue::Rewrite, &rec.rewrite)] {
        for f in files {
            readers.insert(FileId::new(q, f.seq), f.reader.clone());
        }
    }
    let mut regions = Vec::new();
    rec.memtables.for_each(|id, r| regions.push((id, r.first_index, r.locs().collect::<Vec<_>>())))?;
    regions.sort_by_key(|r| r.0);
    let mut out = Vec::new();
    let mut verdict: HashMap<(FileId, u64), bool> = HashMap::new();
    for (id, first, locs) in regions {
        for (i, l) in locs.iter().enumerate() {
            let key = (l.file(), l.blob_offset());
            let ok = match verdict.get(&key) {
                Some(v) => *v,
                None => {
                    let v = match readers.get(&l.file()) {
                        Some(f) => {
                            let mut buf = vec![0u8; l.blob_len() as usize];
                            matches!(f.read_at(l.blob_offset(), &mut buf), Ok(n) if n == buf.len())
                                && decode_entries_block(&buf, l.compression())
                                    .is_ok_and(|b| (l.entry_offset + l.entry_len) as usize <= b.len())
                        }
                        None => false,
                    };
                    verdict.insert(key, v);
                    v
                }
            };
            if !ok {
                out.push((id, first + i as u64));
                break;
            }
        }
    }
    Ok(out)
}

/// raft-engine's `fork`: symlinks every file of `source.dir` but the newest of each queue
/// into `target`, and copies the newest. Works on the real file system (symbolic links are
/// not part of Shale's `FileSystem`), as raft-engine's does.
pub(crate) fn fork(source: &Config, target: &Path) -> std::result::Result<CopyDetails, String> {
    if source.enable_log_recycle {
        return Err("enable_log_recycle should be false".to_owned());
    }
    if source.recovery_mode == RecoveryMode::TolerateAnyCorruption {
        return Err("recovery_mode shouldn't be TolerateAnyCorruption".to_owned());
    }
    let mut cfg = source.clone();
    cfg.sanitize().map_err(|e| format!("sanitize config: {e}"))?;
    std::fs::create_dir_all(target).map_err(|e| format!("create_dir_all({}): {e}", target.display()))?;
    let src = Path::new(&cfg.dir);
    let mut ids: Vec<FileId> = std::fs::read_dir(src)
        .map_err(|e| format!("scan files: {e}"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(FileId::parse_file_name))
        .collect();
    ids.sort();
    let mut details = CopyDetails::default();
    for queue in [LogQueue::Append, LogQueue::Rewrite] {
        let files: Vec<&FileId> = ids.iter().filter(|i| i.queue == queue).collect();
        let count = files.len();
        for (i, id) in files.into_iter().enumerate() {
            let from = id.build_file_path(src);
            let to = id.build_file_path(target);
            if i + 1 < count {
                std::os::unix::fs::symlink(&from, &to)
                    .map_err(|e| format!("symlink({}, {}): {e}", from.display(), to.display()))?;
                details.symlinked.push(canonical(&to)?);
            } else {
                std::fs::copy(&from, &to)
                    .map_err(|e| format!("copy({}, {}): {e}", from.display(), to.display()))?;
                details.copied.push(canonical(&to)?);
            }
        }
    }
    Ok(details)
}

fn canonical(p: &Path) -> std::result::Result<String, String> {
    let c = p.canonicalize().map_err(|e| format!("canonicalize({}): {e}", p.display()))?;
    c.to_str().map(|s| s.to_owned()).ok_or_else(|| format!("{} is not UTF-8", c.display()))
}

#[allow(dead_code)]
fn _assert_send(_: Arc<LogItemReader>) {}
