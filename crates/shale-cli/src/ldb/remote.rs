//! `remote_compaction_primary` and `remote_compaction_worker`: RocksDB 11.8.1's pair in
//! tools/ldb_cmd.cc, which hand one compaction through files in `--job_dir`:
//! the primary's CompactRange writes `input.bin` (a serialized CompactionServiceInput,
//! `shale_engine::compaction::service`) and polls for `result.bin`; the worker polls for
//! `input.bin`, compacts the named tables of a secondary instance into `<job_dir>/output`
//! (`shale::db::open_and_compact`) and writes the serialized CompactionServiceResult to
//! `result.bin` (through `result.bin.tmp` and a rename, so a poller never reads it half
//! written); the primary moves the outputs into its directory and installs them.
//!
//! Polling as 11.8.1's: every 100 ms for at most 120 s, a file that exists and is not empty.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::db_cmds::db_path;
use super::fmt::{Failure, Res};
use super::{Out, Parsed};

const INPUT_FILE: &str = "input.bin";
const RESULT_FILE: &str = "result.bin";
const POLL_INTERVAL: Duration = Duration::from_millis(100);
const POLL_TIMEOUT_SECS: u64 = 120;

fn job_dir(p: &Parsed) -> Res<String> {
    p.check_known(&["job_dir"])?;
    match p.opt("job_dir") {
        Some(d) => Ok(d.to_string()),
        None => Err(Failure::new("--job_dir is required")),
    }
}

/// RocksDB's PollForFile: the contents of `path` once it exists and is not empty.
fn poll_for_file(path: &Path) -> Option<Vec<u8>> {
    let attempts = POLL_TIMEOUT_SECS * 1000 / POLL_INTERVAL.as_millis() as u64;
    for _ in 0..attempts {
        if let Ok(data) = std::fs::read(path) {
            if !data.is_empty() {
                return Some(data);
            }
        }
        // The protocol's own wait: the other process writes the file when it is done.
        std::thread::sleep(POLL_INTERVAL);
    }
    None
}

/// Writes through `<path>.tmp` and a rename, as 11.8.1's AtomicWriteStringToFile.
fn atomic_write(path: &str, data: &[u8]) -> bool {
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, data).is_ok() && std::fs::rename(&tmp, path).is_ok()
}

pub fn remote_compaction_worker(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    let dir = job_dir(p)?;
    let db = db_path(p)?;
    let input_path = format!("{dir}/{INPUT_FILE}");
    let Some(input) = poll_for_file(Path::new(&input_path)) else {
        return Err(Failure::new(format!("Timed out ({POLL_TIMEOUT_SECS}s) waiting for {input_path}")));
    };
    let output_dir = format!("{dir}/output");
    if let Err(e) = std::fs::create_dir_all(&output_dir) {
        return Err(Failure::new(format!("CreateDirIfMissing: IO error: {e}")));
    }
    let result = shale::db::open_and_compact(Path::new(&db), Path::new(&output_dir), &input)
        .map_err(|e| Failure::new(format!("OpenAndCompact: {e}")))?;
    let result_path = format!("{dir}/{RESULT_FILE}");
    if !atomic_write(&result_path, &result) {
        return Err(Failure::new(format!("Failed to write {result_path}")));
    }
    writeln!(out, "remote_compaction_worker: OK ({} bytes result)", result.len()).map_err(Failure::io)
}

/// ldb's LocalFileCompactionService: hands the compaction out through `<job_dir>` and
/// waits for the worker's result. It takes one compaction (its job_dir holds one input).
struct LocalFileService {
    dir: String,
    scheduled: AtomicBool,
}

impl shale::db::CompactionService for LocalFileService {
    fn compact(&self, input: &[u8]) -> shale::Result<Vec<u8>> {
        if self.scheduled.swap(true, Ordering::SeqCst) {
            return Err(shale::Error::not_supported(
                "a second compaction through ldb's local file compaction service (its job_dir holds one)",
            ));
        }
        let input_path = format!("{}/{INPUT_FILE}", self.dir);
        if !atomic_write(&input_path, input) {
            return Err(shale::Error::io_msg(format!(
                "CompactionService failed to schedule a remote compaction job: cannot write {input_path}"
            )));
        }
        let result_path = format!("{}/{RESULT_FILE}", self.dir);
        poll_for_file(Path::new(&result_path)).ok_or_else(|| {
            shale::Error::io_msg(format!(
                "CompactionService failed to run the compaction job: timed out ({POLL_TIMEOUT_SECS}s) waiting for {result_path}"
            ))
        })
    }
}

pub fn remote_compaction_primary(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    let dir = job_dir(p)?;
    let db_dir = db_path(p)?;
    let mut opts = shale::Options::default();
    opts.set_disable_auto_compactions(true);
    let db = shale::DB::open(&opts, &db_dir).map_err(|e| Failure::new(format!("Open: {e}")))?;
    db.set_compaction_service(Some(Arc::new(LocalFileService { dir, scheduled: AtomicBool::new(false) })));
    let cf =
        db.cf_handle(shale::DEFAULT_COLUMN_FAMILY_NAME).ok_or_else(|| Failure::new("no default family"))?;
    db.try_compact_range_cf(&cf, None::<&[u8]>, None::<&[u8]>)
        .map_err(|e| Failure::new(format!("CompactRange: {e}")))?;
    writeln!(out, "remote_compaction_primary: OK").map_err(Failure::io)
}
