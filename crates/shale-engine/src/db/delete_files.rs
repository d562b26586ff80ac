//! `delete_file_in_range`: RocksDB's `DeleteFilesInRange` (db/db_impl/db_impl.cc) with its
//! default `include_end = true`. On every level but 0, the tables lying wholly inside
//! `[from, to]` (by user key) leave the Version in one MANIFEST record, without reading or
//! writing any data; a table that a running compaction reads is left alone. As RocksDB's
//! `GetCleanInputsWithinInterval`, the run taken on a level is a "clean cut": a table that
//! shares its first user key with the previous table (or its last with the next), one of
//! which stays, is left too, so no key's history is split. The keys go with their tables:
//! older versions in deeper levels, or in level 0 and the memtables, become visible again.
//! The tables are deleted by the usual purge once nothing reads them (`obsolete.rs`).

use std::cmp::Ordering;
use std::sync::Arc;

use super::cf::CfHandle;
use super::DbInner;
use crate::error::{Error, Result};
use crate::key::user_key;
use crate::version::edit::{FileMetaData, VersionEdit};

/// The clean-cut run of `files` (one sorted level) inside `[from, to]`, as indexes.
fn clean_run(
    files: &[Arc<FileMetaData>],
    cmp: &dyn Fn(&[u8], &[u8]) -> Ordering,
    from: &[u8],
    to: &[u8],
) -> std::ops::Range<usize> {
    let inside = |f: &FileMetaData| {
        cmp(user_key(&f.smallest), from) != Ordering::Less
            && cmp(user_key(&f.largest), to) != Ordering::Greater
    };
    let Some(mut lo) = files.iter().position(|f| inside(f)) else { return 0..0 };
    let mut hi = lo;
    while hi < files.len() && inside(&files[hi]) {
        hi += 1;
    }
    while lo < hi
        && lo > 0
        && cmp(user_key(&files[lo - 1].largest), user_key(&files[lo].smallest)) == Ordering::Equal
    {
        lo += 1;
    }
    while lo < hi
        && hi < files.len()
        && cmp(user_key(&files[hi - 1].largest), user_key(&files[hi].smallest)) == Ordering::Equal
    {
        hi -= 1;
    }
    lo..hi
}

impl DbInner {
    pub fn delete_files_in_range(&self, cf: &Arc<CfHandle>, from: &[u8], to: &[u8]) -> Result<()> {
        self.check_writable()?;
        let ucmp = cf.icmp.user_comparator();
        let cmp = |a: &[u8], b: &[u8]| ucmp.compare(a, b);
        let mut st = self.lock_state();
        let c = st.cfs.get(&cf.id).ok_or_else(|| Error::invalid_argument("column family dropped"))?;
        let mut edit = VersionEdit { column_family: cf.id, ..Default::default() };
        let mut held: Vec<Arc<FileMetaData>> = Vec::new();
        for level in 1..c.current.num_levels() {
            let files = c.current.files(level);
            for f in &files[clean_run(files, &cmp, from, to)] {
                if !c.being_compacted.contains(&f.number) {
                    edit.deleted_files.push((level as u32, f.number));
                    held.push(f.clone());
                }
            }
        }
        if held.is_empty() {
            return Ok(());
        }
        // No compaction picks them while the MANIFEST is written.
        if let Some(c) = st.cfs.get_mut(&cf.id) {
            c.being_compacted.extend(held.iter().map(|f| f.number));
        }
        let n = held.len();
        let r = self.log_and_apply(&mut st, vec![edit], |_| {});
        if let Some(c) = st.cfs.get_mut(&cf.id) {
            for f in &held {
                c.being_compacted.remove(&f.number);
            }
        }
        drop(held);
        if r.is_ok() {
            // Under the DB mutex: buffered, written by the purge below.
            self.info_log.buffer_line(format_args!("[{}] delete_file_in_range removed {n} tables", cf.name));
        }
        self.purge_obsolete_files(&mut st);
        self.schedule_compaction(&mut st, cf.id);
        self.done_cv.notify_all();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(n: u64, lo: &str, hi: &str) -> Arc<FileMetaData> {
        let ik = |k: &str| crate::key::make_internal_key(k.as_bytes(), 1, crate::key::ValueType::Value);
        Arc::new(FileMetaData { number: n, smallest: ik(lo), largest: ik(hi), ..Default::default() })
    }

    #[test]
    fn clean_cut_runs() {
        let cmp = |a: &[u8], b: &[u8]| a.cmp(b);
        let files = vec![meta(1, "a", "c"), meta(2, "d", "f"), meta(3, "f", "h"), meta(4, "i", "k")];
        assert_eq!(clean_run(&files, &cmp, b"a", b"z"), 0..4);
        assert_eq!(clean_run(&files, &cmp, b"b", b"k"), 1..4);
        // Table 3 shares "f" with table 2, which is outside: both stay.
        assert_eq!(clean_run(&files, &cmp, b"e", b"k"), 3..4);
        // Table 2 shares "f" with table 3, which is outside.
        assert_eq!(clean_run(&files, &cmp, b"a", b"g"), 0..1);
        assert_eq!(clean_run(&files, &cmp, b"x", b"z"), 0..0);
    }
}
