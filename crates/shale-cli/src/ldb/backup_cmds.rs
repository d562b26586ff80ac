//! ldb's `checkpoint`, `backup` and `restore` commands over Shale's Checkpoint and
//! BackupEngine (flags and progress lines as RocksDB 11.8.1's ldb: `--checkpoint_dir`,
//! `--backup_dir`, `--num_threads`; restore restores the latest backup into `--db`), and
//! `write_extern_sst` / `ingest_extern_sst`, whose success ldb reports on stderr.

use shale::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};
use shale::checkpoint::Checkpoint;
use shale::Env;

use super::db_cmds::{db_path, open};
use super::fmt::{Failure, Res};
use super::{Out, Parsed};

fn backup_dir(p: &Parsed) -> Res<&str> {
    p.opt("backup_dir").ok_or_else(|| Failure::new("--backup_dir: missing backup directory"))
}

fn w(out: &mut Out<'_>, s: &str) -> Res<()> {
    out.write_all(s.as_bytes()).map_err(Failure::io)
}

fn engine(p: &Parsed) -> Res<BackupEngine> {
    let mut o = BackupEngineOptions::new(backup_dir(p)?).map_err(Failure::db)?;
    if let Some(n) = p.int_opt("num_threads")? {
        o.set_max_background_operations(n.clamp(1, 256) as i32);
    }
    BackupEngine::open(&o, &Env::new().map_err(Failure::db)?).map_err(Failure::db)
}

pub fn checkpoint(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["checkpoint_dir"])?;
    let db = open(p)?;
    let Some(dir) = p.opt("checkpoint_dir").filter(|d| !d.is_empty()) else {
        return Err(Failure::new("Invalid argument: invalid checkpoint directory name"));
    };
    Checkpoint::new(&db).and_then(|c| c.create_checkpoint(dir)).map_err(Failure::db)?;
    w(out, "OK\n")
}

pub fn backup(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["backup_dir", "num_threads", "backup_env_uri", "backup_fs_uri", "stderr_log_level"])?;
    backup_dir(p)?;
    let db = open(p)?;
    w(out, "open db OK\n")?;
    let mut be = engine(p)?;
    w(out, "open backup engine OK\n")?;
    // As RocksDB's ldb (BackupEngine::CreateNewBackup): no flush first; the live WAL is copied.
    super::db_cmds::with_progress("backing up", || be.create_new_backup(&db)).map_err(Failure::db)?;
    w(out, "create new backup OK\n")
}

pub fn restore(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["backup_dir", "num_threads", "backup_env_uri", "backup_fs_uri", "stderr_log_level"])?;
    let dir = backup_dir(p)?;
    let to = db_path(p)?;
    // ldb opens a read-only backup engine, which needs the backup directory's `meta`
    // (and creates nothing).
    let sep = if dir.ends_with('/') { "" } else { "/" };
    if !std::path::Path::new(dir).join("meta").is_dir() {
        return Err(Failure::new(format!("NotFound: {dir}{sep}meta is missing")));
    }
    let mut be = engine(p)?;
    w(out, "open restore engine OK\n")?;
    super::db_cmds::with_progress("restoring", || {
        be.restore_from_latest_backup(&to, &to, &RestoreOptions::default())
    })
    .map_err(Failure::db)?;
    w(out, "restore from backup OK\n")
}

/// Writes an external SST file from `key ==> value` lines on stdin (ldb's
/// `write_extern_sst`; keys must come in order).
pub fn write_extern_sst(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&[])?;
    let [path] = p.params.as_slice() else {
        return Err(Failure::new("output SST file path must be specified"));
    };
    let h = super::db_cmds::Hex::of(p);
    let o = shale::Options::default();
    let mut w = shale::SstFileWriter::create(&o);
    w.open(path).map_err(Failure::db)?;
    let mut n = 0u64;
    let mut bad_lines = 0u64;
    for line in std::io::stdin().lines() {
        let line = line.map_err(Failure::io)?;
        match line.split_once(" ==> ") {
            Some((k, v)) => {
                w.put(h.key_in(k)?, h.value_in(v)?)
                    .map_err(|e| Failure::new(format!("failed to write record to file: {e}")))?;
                n += 1;
            }
            None if line.starts_with("Keys in range:") || line.starts_with("Created bg thread 0x") => {}
            None => bad_lines += 1,
        }
    }
    if n == 0 {
        return Err(Failure::new(
            "Failed to finish writing to file: Invalid argument: Cannot create sst file with no entries",
        ));
    }
    w.finish().map_err(|e| Failure::new(format!("Failed to finish writing to file: {e}")))?;
    if bad_lines > 0 {
        eprintln!("Warning: {bad_lines} bad lines ignored.");
    }
    // ldb reports success on stderr.
    let _ = out;
    eprintln!("external SST file written to {path}");
    Ok(())
}

/// Ingests external SST files (ldb's `ingest_extern_sst`, with its option defaults:
/// `--write_global_seqno` is true unless set false, and then ldb warns that older RocksDB
/// versions may not open the file; with `--allow_global_seqno=false` it must be false).
pub fn ingest_extern_sst(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    let flags = [
        "move_files",
        "snapshot_consistency",
        "allow_global_seqno",
        "allow_blocking_flush",
        "ingest_behind",
        "write_global_seqno",
    ];
    p.check_known(&flags)?;
    let allow_global_seqno = p.bool_opt("allow_global_seqno", true)?;
    let write_global_seqno = p.bool_opt("write_global_seqno", true)?;
    if allow_global_seqno && !write_global_seqno {
        eprintln!(
            "Warning: not writing global_seqno to the ingested SST can\n\
             prevent older versions of RocksDB from being able to open it"
        );
    }
    // RocksDB's constructor records the path check after the global seqno one: it wins.
    if p.params.len() != 1 {
        return Err(Failure::new("input SST path must be specified"));
    }
    if !allow_global_seqno && write_global_seqno {
        return Err(Failure::new(
            "ldb cannot write global_seqno to the ingested SST when global_seqno is not allowed",
        ));
    }
    let mut o = shale::IngestExternalFileOptions::default();
    o.set_move_files(p.bool_opt("move_files", false)?);
    o.set_snapshot_consistency(p.bool_opt("snapshot_consistency", true)?);
    o.set_allow_global_seqno(allow_global_seqno);
    o.set_allow_blocking_flush(p.bool_opt("allow_blocking_flush", true)?);
    o.set_ingest_behind(p.bool_opt("ingest_behind", false)?);
    o.set_write_global_seqno(write_global_seqno);
    let db = open(p)?;
    let c = super::db_cmds::cf(&db, p)?;
    db.ingest_external_file_cf_opts(c, &o, p.params.clone())
        .map_err(|e| Failure::new(format!("failed to ingest external SST: {e}")))?;
    // ldb reports success on stderr.
    let _ = out;
    eprintln!("external SST files ingested");
    Ok(())
}
