//! ldb's `checkpoint`, `backup` and `restore` commands over Shale's Checkpoint and
//! BackupEngine (flags as RocksDB 7.8.3's ldb: `--checkpoint_dir`, `--backup_dir`,
//! `--num_threads`; restore restores the latest backup into `--db`).

use shale::backup::{BackupEngine, BackupEngineOptions, RestoreOptions};
use shale::checkpoint::Checkpoint;
use shale::Env;

use super::db_cmds::{db_path, open};
use super::fmt::{Failure, Res};
use super::{Out, Parsed};

fn required<'a>(p: &'a Parsed, name: &str) -> Res<&'a str> {
    p.opt(name).filter(|v| !v.is_empty()).ok_or_else(|| Failure::new(format!("--{name} must be specified")))
}

fn engine(p: &Parsed) -> Res<BackupEngine> {
    let mut o = BackupEngineOptions::new(required(p, "backup_dir")?).map_err(Failure::db)?;
    if let Some(n) = p.int_opt("num_threads")? {
        o.set_max_background_operations(n.clamp(1, 256) as i32);
    }
    BackupEngine::open(&o, &Env::new().map_err(Failure::db)?).map_err(Failure::db)
}

pub fn checkpoint(p: &Parsed, _out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["checkpoint_dir"])?;
    let dir = required(p, "checkpoint_dir")?;
    let db = open(p)?;
    Checkpoint::new(&db).and_then(|c| c.create_checkpoint(dir)).map_err(Failure::db)
}

pub fn backup(p: &Parsed, _out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["backup_dir", "num_threads", "backup_env_uri", "backup_fs_uri", "stderr_log_level"])?;
    let mut be = engine(p)?;
    let db = open(p)?;
    be.create_new_backup_flush(&db, true).map_err(Failure::db)
}

pub fn restore(p: &Parsed, _out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["backup_dir", "num_threads", "backup_env_uri", "backup_fs_uri", "stderr_log_level"])?;
    let mut be = engine(p)?;
    let to = db_path(p)?;
    be.restore_from_latest_backup(&to, &to, &RestoreOptions::default()).map_err(Failure::db)
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
    for line in std::io::stdin().lines() {
        let line = line.map_err(Failure::io)?;
        let Some((k, v)) = line.split_once(" ==> ") else { continue };
        w.put(h.key_in(k)?, h.value_in(v)?).map_err(Failure::db)?;
        n += 1;
    }
    if n == 0 {
        return Err(Failure::new("no `key ==> value` lines on stdin"));
    }
    w.finish().map_err(Failure::db)?;
    out.write_all(format!("external SST file written to {path}\n").as_bytes()).map_err(Failure::io)
}

/// Ingests external SST files (ldb's `ingest_extern_sst`, with its option defaults).
/// Shale never rewrites an ingested file, so `--write_global_seqno=true` is refused.
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
    if p.params.is_empty() {
        return Err(Failure::new("input SST file path must be specified"));
    }
    if p.opt("write_global_seqno").is_some() && p.bool_opt("write_global_seqno", false)? {
        return Err(Failure::new(
            "Not implemented: --write_global_seqno=true (Shale keeps ingested files unchanged; the MANIFEST holds their sequence number)",
        ));
    }
    let mut o = shale::IngestExternalFileOptions::default();
    o.set_move_files(p.bool_opt("move_files", false)?);
    o.set_snapshot_consistency(p.bool_opt("snapshot_consistency", true)?);
    o.set_allow_global_seqno(p.bool_opt("allow_global_seqno", true)?);
    o.set_allow_blocking_flush(p.bool_opt("allow_blocking_flush", true)?);
    o.set_ingest_behind(p.bool_opt("ingest_behind", false)?);
    let db = open(p)?;
    let c = super::db_cmds::cf(&db, p)?;
    db.ingest_external_file_cf_opts(c, &o, p.params.clone()).map_err(Failure::db)?;
    out.write_all(b"external SST files ingested\n").map_err(Failure::io)
}
