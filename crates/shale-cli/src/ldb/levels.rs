//! ldb's commands that rearrange the levels of a closed database: `reduce_levels`
//! (ReduceDBLevelsCommand + VersionSet::ReduceNumberOfLevels) and `change_compaction_style`
//! (ChangeCompactionStyleCommand), RocksDB 11.8.1's steps and words.
//!
//! Both compact with the engine, then move whole levels with a MANIFEST written offline
//! ([`super::manifest::new_manifest`]), as RocksDB moves them (ReduceNumberOfLevels
//! rewrites the MANIFEST; CompactRange's `change_level` is a version edit moving the
//! files). Moving a whole level keeps its files' order and key ranges, so the tree stays
//! valid.

use std::path::Path;

use shale_format::version::edit::VersionEdit;

use super::db_cmds::{cf, cf_name, missing_db, open_opts, with_progress};
use super::fmt::{Failure, Res};
use super::{Out, Parsed};

fn w(out: &mut Out<'_>, s: &str) -> Res<()> {
    out.write_all(s.as_bytes()).map_err(Failure::io)?;
    out.flush().map_err(Failure::io)
}

/// `std::stoi` as ldb's ParseIntOption uses it: leading white space, a sign, digits.
/// None when there is no number (ldb: invalid) or it does not fit an int (out of range).
fn stoi(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, d) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = d.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(d.len());
    let v: i64 = d[..end].parse().ok()?;
    let v = if neg { -v } else { v };
    (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&v).then_some(v)
}

fn int_option(p: &Parsed, name: &str) -> i64 {
    p.opt(name).and_then(stoi).unwrap_or(-1)
}

/// The files of family `id` per level of a recovered MANIFEST.
fn files_per_level(
    m: &shale_engine::version::manifest::RecoveredManifest,
    name: &str,
    levels: usize,
) -> Option<(u32, Vec<usize>)> {
    let (id, cf) = m.column_families.iter().find(|(_, c)| c.name == name)?;
    let mut n = vec![0usize; levels];
    for (l, _) in &cf.files {
        let l = *l as usize;
        if l >= n.len() {
            n.resize(l + 1, 0);
        }
        n[l] += 1;
    }
    Some((*id, n))
}

fn recover(db: &str) -> Res<shale_engine::version::manifest::RecoveredManifest> {
    shale_engine::version::manifest::recover(&*shale_format::fs::default_fs(), Path::new(db))
        .map_err(Failure::db)
}

/// Moves every file of family `cf_id` at level `from` to level `to` in a new MANIFEST.
fn move_level(db: &str, cf_id: u32, from: u32, to: u32) -> Res<()> {
    let mut state = recover(db)?;

    if let Some(cf) = state.column_families.get_mut(&cf_id) {
        for (l, _) in cf.files.iter_mut() {
            if *l == from {
                *l = to;
            }
        }
        cf.files.sort_by_key(|(l, f)| (*l, f.number));
    }
    // The state written is the moved one, as ReduceNumberOfLevels writes it; the edit that
    // follows it names no file.
    let edit = VersionEdit { column_family: cf_id, ..VersionEdit::default() };
    super::manifest::new_manifest(Path::new(db), state, edit).map_err(Failure::db)
}

/// `reduce_levels --new_levels=<n> [--print_old_levels]`.
pub fn reduce_levels(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["new_levels", "print_old_levels"])?;
    let new_levels = int_option(p, "new_levels");
    if new_levels <= 0 {
        return Err(Failure::new(" Use --new_levels to specify a new level number\n"));
    }
    if new_levels <= 1 {
        return Err(Failure::new("Invalid number of levels.\n"));
    }
    let db = super::db_cmds::db_path(p)?;
    missing_db(&db, true)?;
    // GetOldNumOfLevels: one past the deepest level of the default family with a file. It
    // recovers the MANIFEST with the default family alone, which fails when there are
    // others (in the order of RocksDB's unordered_map of them).
    let m = recover(&db)?;
    let others: Vec<(u64, &str)> = m
        .column_families
        .iter()
        .filter(|(id, _)| **id != 0)
        .map(|(id, c)| (u64::from(*id), c.name.as_str()))
        .collect();
    if !others.is_empty() {
        let ids: Vec<u64> = others.iter().map(|o| o.0).collect();
        let names: Vec<&str> =
            super::manifest::unordered_map_order(&ids).into_iter().map(|i| others[i].1).collect();
        return Err(Failure::new(format!(
            "Invalid argument: Column families not opened: {}",
            names.join(", ")
        )));
    }
    let old = files_per_level(&m, "default", 1)
        .map(|(_, n)| n.iter().rposition(|&c| c > 0).map_or(0, |l| l + 1))
        .unwrap_or(0) as i64;
    if p.flag("print_old_levels") {
        w(out, &format!("The old number of levels in use is {old}\n"))?;
    }
    if old <= new_levels {
        return Ok(());
    }
    // Compact the whole family so that its files are in one level (the deepest).
    // ldb's `ReduceDBLevelsCommand::OverrideBaseCFOptions`.
    let tune = |o: &mut shale::Options| {
        o.set_num_levels(old as i32);
        o.set_max_bytes_for_level_base(1 << 50);
        o.set_max_bytes_for_level_multiplier(1.0);
    };
    {
        let d = open_opts(p, false, &|_| {}, &tune)?;
        w(out, "Compacting the db...\n")?;
        let c = cf(&d, p)?;
        with_progress("compacting", || d.try_compact_range_cf(c, None::<&[u8]>, None::<&[u8]>))
            .map_err(Failure::db)?;
    }
    // ReduceNumberOfLevels, on the default family: the levels from new_levels - 1 on may
    // hold files in one level only, which becomes level new_levels - 1.
    let m = recover(&db)?;
    let Some((id, n)) = files_per_level(&m, "default", old as usize) else { return Ok(()) };
    let current = (old as usize).max(n.len());
    let nl = new_levels as usize;
    let mut first: Option<(usize, usize)> = None;
    for (l, &c) in n.iter().enumerate().take(current).skip(nl - 1) {
        if c == 0 {
            continue;
        }
        match first {
            None => first = Some((l, c)),
            Some((fl, fc)) => {
                return Err(Failure::new(format!(
                    "Invalid argument: Found at least two levels containing files: [{fl}:{fc}],[{l}:{c}].\n"
                )))
            }
        }
    }
    let from = first.map_or(nl - 1, |(l, _)| l);
    move_level(&db, id, from as u32, (nl - 1) as u32)
}

/// `change_compaction_style --old_compaction_style=0 --new_compaction_style=1`: compacts
/// the family into one file and moves it to level 0, ready for universal compaction
/// (which Shale's engine does not run yet: opening with it is NotSupported).
pub fn change_compaction_style(p: &Parsed, out: &mut Out<'_>) -> Res<()> {
    p.check_known(&["old_compaction_style", "new_compaction_style"])?;
    let old = int_option(p, "old_compaction_style");
    if old != 0 && old != 1 {
        return Err(Failure::new(
            "Use --old_compaction_style to specify old compaction style. Check ldb help for proper compaction \
             style value.\n",
        ));
    }
    let new = int_option(p, "new_compaction_style");
    if new != 0 && new != 1 {
        return Err(Failure::new(
            "Use --new_compaction_style to specify new compaction style. Check ldb help for proper compaction \
             style value.\n",
        ));
    }
    if new == old {
        return Err(Failure::new(
            "Old compaction style is the same as new compaction style. Nothing to do.\n",
        ));
    }
    if old == 1 {
        return Err(Failure::new("Convert from universal compaction to level compaction. Nothing to do.\n"));
    }
    // A database to open (its errors come first).
    super::db_cmds::db_path(p)?;
    let name = cf_name(p);
    let levels = super::manifest::levels_of(p).get(&name).copied().unwrap_or(7);
    // ldb's options for the conversion: everything compacted into a single file.
    // ldb's `ChangeCompactionStyleCommand::OverrideBaseCFOptions`.
    let tune = |o: &mut shale::Options| {
        o.set_disable_auto_compactions(true);
        o.set_target_file_size_base(i32::MAX as u64);
        o.set_target_file_size_multiplier(1);
        o.set_max_bytes_for_level_base(i32::MAX as u64);
        o.set_max_bytes_for_level_multiplier(1.0);
        o.set_max_compaction_bytes(u64::MAX / 4);
    };
    {
        let d = open_opts(p, false, &|_| {}, &tune)?;
        let c = cf(&d, p)?;
        let before: Vec<String> = (0..levels)
            .map(|l| {
                d.property_value_cf(c, format!("rocksdb.num-files-at-level{l}"))
                    .map(|v| v.unwrap_or_default())
                    .map_err(Failure::db)
            })
            .collect::<Res<_>>()?;
        w(out, &format!("files per level before compaction: {}\n", before.join(",")))?;
        // As ldb: one manual compaction with `change_level` to level 0 (`ReFitLevel` moves
        // the level the compaction ends on, or refuses with its Status).
        let mut co = shale::CompactOptions::default();
        co.set_change_level(true);
        co.set_target_level(0);
        with_progress("compacting", || d.try_compact_range_cf_opt(c, None::<&[u8]>, None::<&[u8]>, &co))
            .map_err(|e| Failure::new(format!("Compaction failed: {e}")))?;
        // ldb's check of the result: one table on level 0, none below.
        let mut after = Vec::new();
        for l in 0..levels {
            let v = d
                .property_value_cf(c, format!("rocksdb.num-files-at-level{l}"))
                .map_err(Failure::db)?
                .unwrap_or_default();
            let n: u64 = v.trim().parse().unwrap_or(0);
            if l == 0 && n != 1 {
                return Err(Failure::new(format!(
                    "Number of db files at level 0 after compaction is {n}, not 1.\n"
                )));
            }
            if l > 0 && n != 0 {
                return Err(Failure::new(format!(
                    "Number of db files at level {l} after compaction is {n}, not 0.\n"
                )));
            }
            after.push(v);
        }
        w(out, &format!("files per level after compaction: {}\n", after.join(",")))
    }
}
