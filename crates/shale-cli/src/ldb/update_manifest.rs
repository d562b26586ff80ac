//! `ldb update_manifest --update_temperatures`: RocksDB 11.8.1's
//! `experimental::UpdateManifestForFilesState` (db/experimental.cc) on a closed database.
//!
//! It recovers the MANIFEST offline (no LOCK, no WAL replay, missing files tolerated), then
//! for every live table of every column family (families in creation order, levels 0 up,
//! each level in RocksDB's order) opens the file for sequential reading — a missing one
//! fails the command with RocksDB's words — and asks the file system for the file's
//! temperature. Where the file system knows one (not `kUnknown`) and it differs from the
//! MANIFEST's, the family's edit deletes the file and adds it back with the new temperature;
//! a family with such changes gets them written through LogAndApply, which on a VersionSet
//! recovered offline starts a new MANIFEST (see [`super::manifest::new_manifest`]).
//!
//! Neither RocksDB's POSIX file system nor Shale's knows file temperatures (both report
//! `kUnknown` for every file), so on a local database both tools check the files, write
//! nothing and print `Manifest updates successful`. The rewrite is still here, behind
//! [`files_state_edits`]'s temperature lookup, and its unit test checks the MANIFEST it
//! writes.

use std::path::Path;

use shale_format::fs::default_fs;
use shale_format::version::edit::VersionEdit;

use super::fmt::{Failure, Res};
use super::manifest::{current_manifest, new_manifest, replay};
use super::{Out, Parsed};

/// The temperature the file system reports for a table: RocksDB's `Temperature` byte,
/// 0 (kUnknown) when it does not know. Shale's file system, like RocksDB's POSIX one,
/// keeps no temperatures.
fn file_system_temperature(_path: &Path) -> u8 {
    0
}

pub fn update_manifest(p: &Parsed, _out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["verbose", "update_temperatures"])?;
    p.bool_opt("verbose", false)?;
    if !p.bool_opt("update_temperatures", false)? {
        return Err(Failure::new("No action like --update_temperatures specified for update_manifest"));
    }
    let db = super::db_cmds::db_path(p)?;
    let fail = |f: Failure| Failure::new(format!("failed to update manifest: {}", f.msg));
    super::db_cmds::missing_db(&db, true).map_err(fail)?;
    update_files_state(Path::new(&db), &file_system_temperature).map_err(fail)?;
    // ldb prints a command's success message on stderr.
    eprintln!("Manifest updates successful");
    Ok(())
}

/// Brings the MANIFEST of the closed database `db` in line with its files' temperatures as
/// `temperature_of` reports them; returns how many files changed (0: nothing written).
pub fn update_files_state(db: &Path, temperature_of: &dyn Fn(&Path) -> u8) -> Res<usize> {
    let edits = files_state_edits(db, temperature_of)?;
    let changed: usize = edits.iter().map(|e| e.new_files.len()).sum();
    if changed == 0 {
        return Ok(0);
    }
    // RocksDB applies one edit per column family, each through LogAndApply: the first starts
    // the new MANIFEST, the others follow it. Shale writes them in one new MANIFEST, after the
    // state it starts from, which reads back the same.
    let fs = default_fs();
    let mut rec = shale_engine::version::manifest::recover(&*fs, db).map_err(Failure::db)?;
    let mut edits = edits.into_iter();
    let Some(last) = edits.next_back() else { return Ok(0) };
    for e in edits {
        apply_to(&mut rec, &e);
    }
    new_manifest(db, rec, last).map_err(Failure::db)?;
    Ok(changed)
}

/// Replaces, in the recovered state, the files `e` deletes by those it adds.
fn apply_to(rec: &mut shale_engine::version::manifest::RecoveredManifest, e: &VersionEdit) {
    if let Some(cf) = rec.column_families.get_mut(&e.column_family) {
        cf.files.retain(|(l, f)| !e.deleted_files.contains(&(*l, f.number)));
        cf.files.extend(e.new_files.iter().cloned());
        cf.files.sort_by_key(|(l, f)| (*l, f.number));
    }
}

/// One edit per column family whose files' temperatures differ from the MANIFEST's, as
/// UpdateManifestForFilesState builds them; fails on the first table that cannot be opened.
pub fn files_state_edits(db: &Path, temperature_of: &dyn Fn(&Path) -> u8) -> Res<Vec<VersionEdit>> {
    let r = replay(&current_manifest(db)?)?;
    let fs = default_fs();
    let mut edits = Vec::new();
    for cf in &r.cfs {
        let mut edit = VersionEdit { column_family: cf.id, ..VersionEdit::default() };
        for (level, files) in r.levels(cf, 7).into_iter().enumerate() {
            for f in files {
                let path = db.join(format!("{:06}.sst", f.number));
                if fs.new_sequential_file(&path).is_err() {
                    return Err(Failure::new(format!(
                        "IO error: No such file or directory: While opening a file for sequentially \
                         reading: {}: No such file or directory",
                        path.display()
                    )));
                }
                let t = temperature_of(&path);
                if t != 0 && t != f.temperature {
                    let level = level as u32;
                    edit.deleted_files.push((level, f.number));
                    let mut g = f.clone();
                    g.temperature = t;
                    edit.new_files.push((level, g));
                }
            }
        }
        if !edit.new_files.is_empty() {
            edits.push(edit);
        }
    }
    Ok(edits)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn db_with_tables(dir: &Path) {
        let mut o = shale::Options::default();
        o.create_if_missing(true);
        o.set_disable_auto_compactions(true);
        let db = shale::DB::open(&o, dir).unwrap();
        for (k, v) in [("a", "1"), ("b", "2")] {
            db.put(k, v).unwrap();
            db.flush().unwrap();
        }
    }

    #[test]
    fn unknown_temperatures_change_nothing() {
        let d = tempfile::tempdir().unwrap();
        db_with_tables(d.path());
        let before = std::fs::read_to_string(d.path().join("CURRENT")).unwrap();
        assert_eq!(update_files_state(d.path(), &file_system_temperature).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(d.path().join("CURRENT")).unwrap(), before);
    }

    #[test]
    fn known_temperatures_are_written_to_a_new_manifest() {
        let d = tempfile::tempdir().unwrap();
        db_with_tables(d.path());
        let before = std::fs::read_to_string(d.path().join("CURRENT")).unwrap();
        // kCold (12) for every table.
        assert_eq!(update_files_state(d.path(), &|_| 12).unwrap(), 2);
        assert_ne!(std::fs::read_to_string(d.path().join("CURRENT")).unwrap(), before);
        let r = replay(&current_manifest(d.path()).unwrap()).unwrap();
        let files: Vec<_> = r.cfs[0].files.values().collect();
        assert_eq!(files.len(), 2);
        assert!(files.iter().all(|(_, f)| f.temperature == 12));
        // Nothing left to change; the database opens and reads.
        assert_eq!(update_files_state(d.path(), &|_| 12).unwrap(), 0);
        let db = shale::DB::open(&shale::Options::default(), d.path()).unwrap();
        assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"2"[..]));
    }

    #[test]
    fn a_missing_table_fails_naming_it() {
        let d = tempfile::tempdir().unwrap();
        db_with_tables(d.path());
        let sst = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "sst"))
            .unwrap();
        std::fs::remove_file(&sst).unwrap();
        let e = update_files_state(d.path(), &|_| 12).unwrap_err();
        assert!(e.msg.contains(&sst.display().to_string()), "{}", e.msg);
    }
}
