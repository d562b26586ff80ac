//! A family's merged internal iterator over one SuperVersion (memtables, level-0 tables,
//! one level iterator per deeper level, range tombstones), which `DBIter` reads; and how
//! a read's prefix seek uses the prefix filters (`PrefixMode`). The user-facing
//! iterators over it are the facade's (`shale::db::iterator`).

use std::collections::HashMap;
use std::sync::Arc;

use super::cf::{CfHandle, SuperVersion};
use super::table_cache::TableEntry;
use super::DbInner;
use crate::config::ReadSettings;
use crate::error::Result;
use crate::iter::level::{LevelFile, LevelIterator};
use crate::iter::merging::MergingIterator;
use crate::iter::range_del::{self, FragmentedTombstones, RangeTombstone};
use crate::iter::BoxedIterator;
use crate::table::reader::BlockReads;
use crate::version::edit::FileMetaData;

/// Files of a level by number, for opening them from a `LevelFile`.
type FilesByNumber = Arc<HashMap<u64, Arc<FileMetaData>>>;
/// A level run's file metadata, in run order.
type RunMetas = Arc<[Arc<FileMetaData>]>;

/// How an iterator's seeks use prefix filters (RocksDB's prefix seek), from its
/// ReadOptions and the family's prefix extractor.
#[derive(Clone, Default)]
pub struct PrefixMode {
    /// Table seeks check prefix filters: `!total_order_seek || auto_prefix_mode ||
    /// prefix_same_as_start` (RocksDB's `check_filter`).
    table: Option<Arc<crate::table::PrefixSeek>>,
    /// Memtable seeks check the memtable's prefix Bloom: `prefix_same_as_start ||
    /// (!total_order_seek && !auto_prefix_mode)`.
    memtable: bool,
    /// Level iterators stop at the end of the target's prefix (legacy prefix seek).
    level_stop: Option<crate::slice_transform::SliceTransformRef>,
    /// The family's prefix extractor in force when the iterator was made.
    extractor: Option<crate::slice_transform::SliceTransformRef>,
}

impl PrefixMode {
    /// `prefix_seek_opt_in_only` (the database's): every iterator is made as with
    /// `total_order_seek`, as RocksDB's `ArenaWrappedDBIter::Init` sets it.
    pub fn of(cf: &CfHandle, ro: &ReadSettings, prefix_seek_opt_in_only: bool) -> PrefixMode {
        let Some(pe) = &cf.config().prefix_extractor else { return PrefixMode::default() };
        let total_order_seek = ro.total_order_seek || prefix_seek_opt_in_only;
        let legacy = !total_order_seek && !ro.auto_prefix_mode;
        let table = (legacy || ro.auto_prefix_mode || ro.prefix_same_as_start).then(|| {
            Arc::new(crate::table::PrefixSeek {
                extractor: pe.clone(),
                upper_bound: ro.upper_bound.clone(),
                auto_prefix_mode: ro.auto_prefix_mode,
            })
        });
        let stop = legacy || (ro.prefix_same_as_start && !ro.auto_prefix_mode);
        PrefixMode {
            table,
            memtable: ro.prefix_same_as_start || legacy,
            level_stop: stop.then(|| pe.clone()),
            extractor: Some(pe.clone()),
        }
    }
}

/// What iterators of one SuperVersion share: its tables, level runs and range tombstones.
pub struct IterParts {
    l0: Vec<Arc<TableEntry>>,
    /// Each level's run, its files by number, and their metadata in run order (whose
    /// sampled read counts the run's iterators feed).
    levels: Vec<(Arc<[LevelFile]>, FilesByNumber, RunMetas)>,
    tombstones: Vec<RangeTombstone>,
    /// `tombstones` fragmented, for views whose memtables hold none.
    fragmented: Arc<FragmentedTombstones>,
}

impl DbInner {
    fn iter_parts(&self, cf: &Arc<CfHandle>, sv: &SuperVersion) -> Result<Arc<IterParts>> {
        if let Some(p) = sv.iter_parts.get() {
            return Ok(p.clone());
        }
        let v = &sv.current;
        let mut tombstones = Vec::new();
        let mut l0 = Vec::new();
        for f in v.files(0) {
            let e = self.table_cache.get(cf, f)?;
            tombstones.extend(range_del::from_table_entries(e.table.range_tombstones())?);
            l0.push(e);
        }
        let mut levels = Vec::new();
        for level in 1..v.num_levels() {
            let files = v.files(level);
            if files.is_empty() {
                continue;
            }
            for f in files {
                let e = self.table_cache.get(cf, f)?;
                tombstones.extend(range_del::from_table_entries(e.table.range_tombstones())?);
            }
            let run: Arc<[LevelFile]> = files
                .iter()
                .map(|f| LevelFile {
                    number: f.number,
                    smallest: f.smallest.clone(),
                    largest: f.largest.clone(),
                })
                .collect();
            let by_number = Arc::new(files.iter().map(|f| (f.number, f.clone())).collect());
            let metas: RunMetas = files.iter().cloned().collect();
            levels.push((run, by_number, metas));
        }
        let fragmented =
            Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), tombstones.clone()));
        let parts = Arc::new(IterParts { l0, levels, tombstones, fragmented });
        let _ = sv.iter_parts.set(parts.clone());
        Ok(parts)
    }

    /// The merged internal iterator and all range tombstones of one column family's view,
    /// read as `ro` says: its block reads (`fill_cache`, checksums, the block-cache tier,
    /// deadline and I/O timeout), `ReadTier::Memtable` (memtables only) and
    /// `ignore_range_deletions` (no tombstones returned). `ReadTier::Persisted` is refused
    /// with NotSupported, as RocksDB 11.8.1's `NewIterator`.
    pub fn internal_iterator(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        sv: &SuperVersion,
        ro: &ReadSettings,
        prefix: &PrefixMode,
    ) -> Result<(BoxedIterator, Arc<FragmentedTombstones>)> {
        // A halted database (a panic or a poisoned lock, `halt.rs`) serves no read.
        self.check_halted()?;
        use crate::config::ReadTier;
        if ro.read_tier == ReadTier::Persisted {
            return Err(crate::Error::not_supported(
                "ReadTier::kPersistedData is not yet supported in iterators.",
            ));
        }
        let mut reads = ro.block_reads();
        reads.auto_readahead = cf.config().auto_readahead;
        let upper = ro.readahead_upper();
        let with_files = ro.read_tier != ReadTier::Memtable;
        let parts = self.iter_parts(cf, sv)?;
        let mut children: Vec<BoxedIterator> = Vec::new();
        let mut mem_tombstones: Vec<RangeTombstone> = Vec::new();
        for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
            // A memtable made under another prefix extractor (set_options changed it since)
            // is read without its prefix Bloom, as RocksDB's.
            let filtered =
                prefix.memtable && prefix.extractor.as_ref().is_none_or(|pe| mem.prefix_bloom_matches(pe));
            children.push(if filtered { mem.iter_prefix_filtered() } else { mem.iter() });
            if mem.num_range_deletes() > 0 && !ro.ignore_range_deletions {
                mem_tombstones.extend(range_del::from_table_entries(&mem.range_tombstones())?);
            }
        }
        if with_files {
            for e in &parts.l0 {
                children.push(e.table.iter_bounded(reads, prefix.table.clone(), upper.clone()));
            }
            for (run, by_number, metas) in &parts.levels {
                let mut level = self.level_iterator_with(
                    cf,
                    run.clone(),
                    by_number.clone(),
                    reads,
                    prefix.table.clone(),
                    upper.clone(),
                );
                level.set_prefix_seek(prefix.level_stop.clone());
                // RocksDB's LevelIterator samples its reads whatever
                // `read_triggered_compaction_threshold` is, so turning it on by `set_options`
                // acts on the reads made before.
                level.set_read_sampling(metas.clone());
                children.push(Box::new(level));
            }
        }
        let tomb = if ro.ignore_range_deletions {
            Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), Vec::new()))
        } else if !with_files {
            Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), mem_tombstones))
        } else if mem_tombstones.is_empty() {
            parts.fragmented.clone()
        } else {
            mem_tombstones.extend(parts.tombstones.iter().cloned());
            Arc::new(FragmentedTombstones::new(cf.icmp.user_comparator().clone(), mem_tombstones))
        };
        Ok((Box::new(MergingIterator::new(cf.icmp.clone(), children)), tomb))
    }

    /// A concatenating iterator over one sorted level, opening tables as it reaches them,
    /// whose table seeks check prefix filters as `prefix_seek` says.
    fn level_iterator_with(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        run: Arc<[LevelFile]>,
        by_number: FilesByNumber,
        reads: impl Into<BlockReads>,
        prefix_seek: Option<Arc<crate::table::PrefixSeek>>,
        readahead_upper: Option<Arc<Vec<u8>>>,
    ) -> LevelIterator {
        let reads: BlockReads = reads.into();
        let icmp = cf.icmp.clone();
        let inner = self.clone();
        let cf = cf.clone();
        let opener = Arc::new(move |lf: &LevelFile| -> Result<BoxedIterator> {
            let meta = by_number
                .get(&lf.number)
                .ok_or_else(|| crate::Error::corruption(format!("level file {} vanished", lf.number)))?;
            Ok(inner.table_cache.get_for_read(&cf, meta, None, &reads)?.table.iter_bounded(
                reads,
                prefix_seek.clone(),
                readahead_upper.clone(),
            ))
        });
        LevelIterator::new(icmp, run, opener)
    }

    /// A level iterator over `files` of `level` reading each through a reader of its own
    /// opened with `direct` (`use_direct_io_for_compaction_reads`), one table at a time.
    pub fn ephemeral_level_iterator(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        files: &[Arc<FileMetaData>],
        level: usize,
        reads: BlockReads,
        direct: crate::fs::ReadFileOptions,
    ) -> LevelIterator {
        let run: Arc<[LevelFile]> = files
            .iter()
            .map(|f| LevelFile { number: f.number, smallest: f.smallest.clone(), largest: f.largest.clone() })
            .collect();
        let by_number: FilesByNumber = Arc::new(files.iter().map(|f| (f.number, f.clone())).collect());
        let inner = self.clone();
        let cf2 = cf.clone();
        let opener = Arc::new(move |lf: &LevelFile| -> Result<BoxedIterator> {
            let meta = by_number
                .get(&lf.number)
                .ok_or_else(|| crate::Error::corruption(format!("level file {} vanished", lf.number)))?;
            // The iterator holds the reader (closed when the iterator is dropped).
            Ok(inner.table_cache.open_ephemeral(&cf2, meta, Some(level), direct)?.table.iter(reads))
        });
        LevelIterator::new(cf.icmp.clone(), run, opener)
    }

    /// A level iterator over `files` (used by compaction).
    pub fn level_iterator_of(
        self: &Arc<Self>,
        cf: &Arc<CfHandle>,
        files: &[Arc<FileMetaData>],
        reads: impl Into<BlockReads>,
    ) -> LevelIterator {
        let run: Arc<[LevelFile]> = files
            .iter()
            .map(|f| LevelFile { number: f.number, smallest: f.smallest.clone(), largest: f.largest.clone() })
            .collect();
        let by_number = Arc::new(files.iter().map(|f| (f.number, f.clone())).collect());
        self.level_iterator_with(cf, run, by_number, reads, None, None)
    }
}
