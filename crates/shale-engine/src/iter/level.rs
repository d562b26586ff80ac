//! A concatenating iterator over one sorted run: files whose key ranges do not overlap,
//! ordered by key (any level below 0).
//!
//! ```text
//! files:   [smallest0 .. largest0] [smallest1 .. largest1] ... (internal keys, ascending)
//! cursor:  file index + that file's iterator, opened lazily through `opener`
//! ```
//! A seek binary-searches `largest` for the first file that can hold the target;
//! `seek_for_prev` binary-searches `smallest` for the last one. Moving off either end of a
//! file opens its neighbour; empty files are skipped. An error opening a file stops the
//! cursor there and is reported by `status` until the next positioning call.
//!
//! In prefix-seek mode ([`LevelIterator::set_prefix_seek`], RocksDB's LevelIterator with a
//! prefix extractor and no total-order seek) a seek that exhausts its file does not go on
//! into a next file whose smallest key has another prefix than the target's: the cursor
//! becomes invalid instead, without opening that file (RocksDB opens it and reads its first
//! key to decide the same).

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::{BoxedIterator, InternalIterator};
use crate::key::InternalKeyComparator;

/// One file of a sorted run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelFile {
    pub number: u64,
    /// Internal keys bounding the file's entries (inclusive).
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

/// Opens the iterator of one file.
pub type FileOpener = Arc<dyn Fn(&LevelFile) -> Result<BoxedIterator> + Send + Sync>;

/// A cursor over the concatenation of a sorted run's files.
pub struct LevelIterator {
    icmp: InternalKeyComparator,
    files: Arc<[LevelFile]>,
    opener: FileOpener,
    /// The file `file_iter` (or `open_err`) belongs to; `files.len()` when none.
    file_index: usize,
    file_iter: Option<BoxedIterator>,
    open_err: Option<Error>,
    /// Prefix-seek mode: the family's prefix extractor.
    prefix_seek: Option<crate::slice_transform::SliceTransformRef>,
    /// Where a file's iterator goes when this one moves off it while pinning is on, and
    /// what every file iterator opened is given (`InternalIterator::set_pinned_data`).
    pins: Option<crate::iter::PinRef>,
    /// The metadata of `files` (same order) whose sampled read counts this cursor feeds
    /// (RocksDB's `LevelIterator::SampleRead`; `read_triggered_compaction_threshold`).
    /// None: no sampling.
    sampled: Option<Arc<[Arc<crate::version::FileMetaData>]>>,
}

impl LevelIterator {
    /// `files` must be sorted by key and must not overlap.
    pub fn new(icmp: InternalKeyComparator, files: impl Into<Arc<[LevelFile]>>, opener: FileOpener) -> Self {
        let files: Arc<[LevelFile]> = files.into();
        let file_index = files.len();
        LevelIterator {
            icmp,
            files,
            opener,
            file_index,
            file_iter: None,
            open_err: None,
            prefix_seek: None,
            pins: None,
            sampled: None,
        }
    }

    /// Feeds the sampled read counts of `metas` (the run's files, in order) from now on;
    /// ignored unless there is one per file.
    pub fn set_read_sampling(&mut self, metas: Arc<[Arc<crate::version::FileMetaData>]>) {
        if metas.len() == self.files.len() {
            self.sampled = Some(metas);
        }
    }

    /// RocksDB's `LevelIterator::SampleRead`: one seek in 1024 (at random) or one step in
    /// 65536 (per thread) that lands on a deletion or a merge operand counts 1024
    /// collapsible reads for the file it is in.
    #[inline]
    fn sample_read(&self, is_seek: bool) {
        let Some(metas) = &self.sampled else { return };
        let hit = if is_seek { crate::read_sample::sample_read() } else { crate::read_sample::sample_step() };
        if !hit || !self.file_valid() {
            return;
        }
        let Some(it) = self.file_iter.as_ref() else { return };
        let key = it.key();
        let Some(&kind) = key.len().checked_sub(8).and_then(|i| key.get(i)) else { return };
        let collapsible = kind == crate::key::ValueType::Deletion as u8
            || kind == crate::key::ValueType::SingleDeletion as u8
            || kind == crate::key::DELETION_WITH_TIMESTAMP
            || kind == crate::key::ValueType::Merge as u8;
        if collapsible {
            if let Some(m) = metas.get(self.file_index) {
                m.sampled.add_collapsible(crate::read_sample::FILE_READ_SAMPLE_RATE);
            }
        }
    }

    /// Seeks stop at the end of the target's prefix (see the module doc).
    pub fn set_prefix_seek(&mut self, extractor: Option<crate::slice_transform::SliceTransformRef>) {
        self.prefix_seek = extractor;
    }

    /// Prefix-seek mode: after a seek to `target` left the current file exhausted, whether
    /// the next file may hold keys of the target's prefix (false: stop here).
    fn next_file_may_hold_prefix(&self, target: &[u8]) -> bool {
        let Some(t) = &self.prefix_seek else { return true };
        if self.file_valid() || self.file_failed() || target.len() < 8 {
            return true;
        }
        // Prefixes are of user keys without timestamps (RocksDB's LevelIterator strips them
        // before its extractor, and compares prefixes without timestamps).
        let strip = |k: &'_ [u8]| -> Vec<u8> { self.icmp.strip_ts(crate::key::user_key(k)).to_vec() };
        let target_uk = strip(target);
        let Some(prefix) = t.transform(&target_uk) else { return true };
        let Some(next) = self.files.get(self.file_index + 1) else { return true };
        if next.smallest.len() < 8 {
            return true;
        }
        let next_uk = strip(&next.smallest);
        match t.transform(&next_uk) {
            Some(p) if self.icmp.timestamp_size() == 0 => {
                self.icmp.compare_user(p, prefix) == Ordering::Equal
            }
            Some(p) => {
                self.icmp.user_comparator().compare_without_timestamp(p, false, prefix, false)
                    == Ordering::Equal
            }
            None => false,
        }
    }

    /// Makes file `index` current, reusing its iterator when it is already open. Returns
    /// false when opening it failed (the error is kept for `status`).
    fn open_file(&mut self, index: usize) -> bool {
        if index == self.file_index && self.file_iter.is_some() {
            return true;
        }
        self.file_index = index;
        self.drop_file_iter();
        self.open_err = None;
        match (self.opener)(&self.files[index]) {
            Ok(mut it) => {
                if let Some(p) = &self.pins {
                    it.set_pinned_data(p);
                }
                self.file_iter = Some(it);
                true
            }
            Err(e) => {
                self.open_err = Some(e);
                false
            }
        }
    }

    /// Lets go of the current file's iterator: to the pinned data while pinning is on
    /// (values it handed out may lie in what it holds), dropped otherwise.
    fn drop_file_iter(&mut self) {
        if let Some(it) = self.file_iter.take() {
            if let Some(p) = self.pins.as_ref().filter(|p| p.enabled()) {
                p.pin_iter(it);
            }
        }
    }

    /// Leaves the cursor invalid, with no error.
    fn clear(&mut self) {
        self.file_index = self.files.len();
        self.drop_file_iter();
        self.open_err = None;
    }

    fn file_valid(&self) -> bool {
        self.file_iter.as_ref().is_some_and(|it| it.valid())
    }

    /// True when the current file iterator stopped on an error (iteration must stop too).
    fn file_failed(&self) -> bool {
        self.open_err.is_some() || self.file_iter.as_ref().is_some_and(|it| it.status().is_err())
    }

    /// While the current file is exhausted, moves to the start of the next one.
    fn skip_empty_forward(&mut self) {
        while !self.file_valid() && !self.file_failed() {
            let next = self.file_index + 1;
            if next >= self.files.len() {
                self.clear();
                return;
            }
            if self.open_file(next) {
                if let Some(it) = self.file_iter.as_mut() {
                    it.seek_to_first();
                }
            }
        }
    }

    /// While the current file is exhausted, moves to the end of the previous one.
    fn skip_empty_backward(&mut self) {
        while !self.file_valid() && !self.file_failed() {
            if self.file_index == 0 || self.file_index > self.files.len() {
                self.clear();
                return;
            }
            let prev = self.file_index - 1;
            if self.open_file(prev) {
                if let Some(it) = self.file_iter.as_mut() {
                    it.seek_to_last();
                }
            }
        }
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.file_valid()
    }

    fn seek_to_first(&mut self) {
        if self.files.is_empty() {
            self.clear();
            return;
        }
        if self.open_file(0) {
            if let Some(it) = self.file_iter.as_mut() {
                it.seek_to_first();
            }
        }
        self.skip_empty_forward();
        self.sample_read(true);
    }

    fn seek_to_last(&mut self) {
        if self.files.is_empty() {
            self.clear();
            return;
        }
        if self.open_file(self.files.len() - 1) {
            if let Some(it) = self.file_iter.as_mut() {
                it.seek_to_last();
            }
        }
        self.skip_empty_backward();
        self.sample_read(true);
    }

    fn seek(&mut self, target: &[u8]) {
        let icmp = &self.icmp;
        let index = self.files.partition_point(|f| icmp.compare(&f.largest, target) == Ordering::Less);
        if index >= self.files.len() {
            self.clear();
            return;
        }
        if self.open_file(index) {
            if let Some(it) = self.file_iter.as_mut() {
                it.seek(target);
            }
        }
        if !self.next_file_may_hold_prefix(target) {
            self.clear();
            return;
        }
        self.skip_empty_forward();
        self.sample_read(true);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let icmp = &self.icmp;
        let n = self.files.partition_point(|f| icmp.compare(&f.smallest, target) != Ordering::Greater);
        if n == 0 {
            self.clear();
            return;
        }
        if self.open_file(n - 1) {
            if let Some(it) = self.file_iter.as_mut() {
                it.seek_for_prev(target);
            }
        }
        self.skip_empty_backward();
        self.sample_read(true);
    }

    fn next(&mut self) {
        if let Some(it) = self.file_iter.as_mut() {
            it.next();
        }
        self.skip_empty_forward();
        self.sample_read(false);
    }

    fn prev(&mut self) {
        if let Some(it) = self.file_iter.as_mut() {
            it.prev();
        }
        self.skip_empty_backward();
        self.sample_read(false);
    }

    fn key(&self) -> &[u8] {
        self.file_iter.as_ref().map_or(&[][..], |it| it.key()) // empty when not valid
    }

    fn value(&self) -> &[u8] {
        self.file_iter.as_ref().map_or(&[][..], |it| it.value())
    }

    /// The current file's answer: a file iterator this one leaves while pinning is on is
    /// kept in the pinned data.
    fn value_pinned(&self) -> bool {
        self.file_iter.as_ref().is_some_and(|it| it.value_pinned())
    }

    fn value_if_pinned(&self) -> Option<&[u8]> {
        self.file_iter.as_ref().and_then(|it| it.value_if_pinned())
    }

    fn set_pinned_data(&mut self, pins: &crate::iter::PinRef) {
        if let Some(it) = self.file_iter.as_mut() {
            it.set_pinned_data(pins);
        }
        self.pins = Some(pins.clone());
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.open_err {
            return Err(e.clone());
        }
        match &self.file_iter {
            Some(it) => it.status(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::VecIterator;
    use crate::key::{bytewise_internal_comparator, make_internal_key, ValueType};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    fn ikey(k: u32) -> Vec<u8> {
        make_internal_key(format!("k{k:05}").as_bytes(), 1, ValueType::Value)
    }

    /// Builds a run of files (some empty, bounded by keys no entry has) and the full model.
    fn build(rng: &mut SmallRng, nfiles: usize) -> (Vec<LevelFile>, Arc<Vec<Entries>>, Entries) {
        let mut files = Vec::new();
        let mut contents = Vec::new();
        let mut all = Vec::new();
        let mut next_key = 0u32;
        for number in 0..nfiles as u64 {
            let lo = next_key;
            let span = rng.gen_range(1..8);
            let mut entries = Vec::new();
            let empty = rng.gen_bool(0.2);
            for k in lo + 1..lo + span {
                if !empty && rng.gen_bool(0.7) {
                    let e = (ikey(k), format!("v{k}").into_bytes());
                    entries.push(e.clone());
                    all.push(e);
                }
            }
            // File bounds may be wider than the entries (as after a compaction's cut).
            files.push(LevelFile { number, smallest: ikey(lo), largest: ikey(lo + span) });
            contents.push(entries);
            next_key = lo + span + 1;
        }
        (files, Arc::new(contents), all)
    }

    /// Seeks landing on a deletion in file 0 and on a value in file 1, 100 000 of each:
    /// with sampling on, about one in 1024 of the first counts 1024 for file 0 (RocksDB's
    /// `SampleRead`), none for file 1; without it nothing is counted.
    #[test]
    fn sampled_seeks_count_collapsible_entries_of_their_file() {
        let icmp = bytewise_internal_comparator();
        let del = make_internal_key(b"a", 2, ValueType::Deletion);
        let val = make_internal_key(b"b", 1, ValueType::Value);
        let contents: Arc<Vec<Entries>> =
            Arc::new(vec![vec![(del.clone(), Vec::new())], vec![(val.clone(), b"v".to_vec())]]);
        let files = vec![
            LevelFile { number: 0, smallest: del.clone(), largest: del.clone() },
            LevelFile { number: 1, smallest: val.clone(), largest: val.clone() },
        ];
        let i2 = icmp.clone();
        let opener: FileOpener = Arc::new(move |f: &LevelFile| {
            Ok(Box::new(VecIterator::new(contents[f.number as usize].clone(), i2.clone())) as BoxedIterator)
        });
        let metas: Vec<Arc<crate::version::FileMetaData>> = (0..2)
            .map(|n| Arc::new(crate::version::FileMetaData { number: n, ..Default::default() }))
            .collect();
        let mut off = LevelIterator::new(icmp.clone(), files.clone(), opener.clone());
        let mut on = LevelIterator::new(icmp, files, opener);
        on.set_read_sampling(metas.clone().into());
        for _ in 0..100_000 {
            off.seek(&del);
            assert!(off.valid());
            off.seek(&val);
        }
        assert_eq!((metas[0].sampled.collapsible(), metas[1].sampled.collapsible()), (0, 0));
        for _ in 0..100_000 {
            on.seek(&del);
            assert_eq!(on.key(), &del[..]);
            on.seek(&val);
        }
        let counted = metas[0].sampled.collapsible();
        assert!(counted > 0 && counted.is_multiple_of(1024) && counted < 400 * 1024, "{counted}");
        assert_eq!(metas[1].sampled.collapsible(), 0);
    }

    #[test]
    fn matches_model_across_many_files() {
        let icmp = bytewise_internal_comparator();
        let mut rng = SmallRng::seed_from_u64(11);
        for case in 0..300 {
            let (files, contents, all) = build(&mut rng, case % 25);
            let upper = (files.len() as u32) * 9 + 3;
            let (c2, i2) = (contents.clone(), icmp.clone());
            let opener: FileOpener = Arc::new(move |f: &LevelFile| {
                Ok(Box::new(VecIterator::new(c2[f.number as usize].clone(), i2.clone())) as BoxedIterator)
            });
            let mut it = LevelIterator::new(icmp.clone(), files, opener);
            let mut pos: Option<usize> = None;
            for _ in 0..150 {
                match rng.gen_range(0..8) {
                    0 => {
                        it.seek_to_first();
                        pos = (!all.is_empty()).then_some(0);
                    }
                    1 => {
                        it.seek_to_last();
                        pos = all.len().checked_sub(1);
                    }
                    2 => {
                        let t = ikey(rng.gen_range(0..upper));
                        it.seek(&t);
                        let p = all.partition_point(|(k, _)| icmp.compare(k, &t).is_lt());
                        pos = (p < all.len()).then_some(p);
                    }
                    3 => {
                        let t = ikey(rng.gen_range(0..upper));
                        it.seek_for_prev(&t);
                        let p = all.partition_point(|(k, _)| icmp.compare(k, &t).is_le());
                        pos = p.checked_sub(1);
                    }
                    4 | 5 => {
                        if let Some(p) = pos {
                            it.next();
                            pos = (p + 1 < all.len()).then_some(p + 1);
                        }
                    }
                    _ => {
                        if let Some(p) = pos {
                            it.prev();
                            pos = p.checked_sub(1);
                        }
                    }
                }
                assert_eq!(it.valid(), pos.is_some(), "case {case}");
                if let Some(p) = pos {
                    assert_eq!(it.key(), &all[p].0[..]);
                    assert_eq!(it.value(), &all[p].1[..]);
                }
                it.status().unwrap();
            }
        }
    }

    #[test]
    fn opens_files_lazily() {
        let icmp = bytewise_internal_comparator();
        let files: Vec<LevelFile> = (0..100u32)
            .map(|i| LevelFile { number: i as u64, smallest: ikey(i * 10), largest: ikey(i * 10 + 5) })
            .collect();
        let opens = Arc::new(AtomicUsize::new(0));
        let (o2, i2) = (opens.clone(), icmp.clone());
        let opener: FileOpener = Arc::new(move |f: &LevelFile| {
            o2.fetch_add(1, AtOrd::Relaxed);
            let k = f.number as u32 * 10;
            let e = vec![(ikey(k), b"a".to_vec()), (ikey(k + 5), b"b".to_vec())];
            Ok(Box::new(VecIterator::new(e, i2.clone())) as BoxedIterator)
        });
        let mut it = LevelIterator::new(icmp, files, opener);
        it.seek(&ikey(503));
        assert_eq!(it.key(), &ikey(505)[..]);
        assert_eq!(opens.load(AtOrd::Relaxed), 1);
        it.next();
        assert_eq!(it.key(), &ikey(510)[..]);
        assert_eq!(opens.load(AtOrd::Relaxed), 2);
        it.seek_for_prev(&ikey(513));
        assert_eq!(it.key(), &ikey(510)[..]);
        assert_eq!(opens.load(AtOrd::Relaxed), 2, "same file reused");
        it.seek_for_prev(&ikey(508));
        assert_eq!(it.key(), &ikey(505)[..]);
        it.seek(&ikey(996));
        assert!(!it.valid());
        it.status().unwrap();
    }

    #[test]
    fn open_error_stops_and_is_reported() {
        let icmp = bytewise_internal_comparator();
        let files: Vec<LevelFile> = (0..3u32)
            .map(|i| LevelFile { number: i as u64, smallest: ikey(i * 10), largest: ikey(i * 10 + 1) })
            .collect();
        let i2 = icmp.clone();
        let opener: FileOpener = Arc::new(move |f: &LevelFile| {
            if f.number == 1 {
                return Err(Error::io_msg("open 000001.sst: no such file"));
            }
            let k = f.number as u32 * 10;
            Ok(Box::new(VecIterator::new(vec![(ikey(k), b"x".to_vec())], i2.clone())) as BoxedIterator)
        });
        let mut it = LevelIterator::new(icmp, files, opener);
        it.seek_to_first();
        assert!(it.valid());
        it.status().unwrap();
        it.next();
        assert!(!it.valid());
        assert_eq!(it.status().unwrap_err().kind(), crate::ErrorKind::IOError);
        it.seek_to_last();
        assert!(it.valid());
        it.status().unwrap();
        it.prev();
        assert!(!it.valid());
        assert!(it.status().is_err());
        it.seek(&ikey(10));
        assert!(!it.valid());
        assert!(it.status().is_err());
    }
}
