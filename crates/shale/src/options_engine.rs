//! From rust-rocksdb's names to the engine's: a family's `Options` become the engine's
//! `CfConfig` and `MemTableConfig` (resolved as RocksDB's `SanitizeCfOptions` leaves them),
//! the facade's `MergeOperator` serves as the engine's `MergeOperatorCore`, and a
//! `CompactionDecision` becomes the engine's `FilterDecision`.
//!
//! The `CfConfig` is built when a family's options are published (`db/dyn_options.rs`: at
//! open and at every `set_options`), never per pick.

use std::sync::Arc;

use shale_engine::compaction::job::FilterDecision;
use shale_engine::config::{BlobGc, CfConfig, CompactionPri as EnginePri, CompactionStyle, MemTableConfig};
use shale_engine::merge::MergeOperatorCore;

use crate::compaction_filter::Decision;
use crate::options::Options;
use crate::options_api::CompactionPri;
use crate::DBCompactionStyle;

impl Options {
    /// What the engine's pickers and compaction outputs read of this family.
    pub(crate) fn engine_cf_config(&self) -> CfConfig {
        let (age_ttl, age_periodic) = self.age_compaction_seconds();
        CfConfig {
            style: match self.compaction_style {
                DBCompactionStyle::Level => CompactionStyle::Level,
                DBCompactionStyle::Universal => CompactionStyle::Universal,
                DBCompactionStyle::Fifo => CompactionStyle::Fifo,
            },
            pri: match self.compaction_pri {
                CompactionPri::ByCompensatedSize => EnginePri::ByCompensatedSize,
                CompactionPri::OldestLargestSeqFirst => EnginePri::OldestLargestSeqFirst,
                CompactionPri::OldestSmallestSeqFirst => EnginePri::OldestSmallestSeqFirst,
                CompactionPri::MinOverlappingRatio => EnginePri::MinOverlappingRatio,
                CompactionPri::RoundRobin => EnginePri::RoundRobin,
            },
            disable_auto_compactions: self.disable_auto_compactions,
            max_output_level: self.max_output_level(),
            level0_file_num_compaction_trigger: self.level0_file_num_compaction_trigger,
            level0_stop_writes_trigger: self.level0_stop_writes_trigger,
            write_buffer_size: self.write_buffer_size,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            max_bytes_for_level_multiplier: self.max_bytes_for_level_multiplier,
            max_bytes_for_level_multiplier_additional: self.max_bytes_for_level_multiplier_additional.clone(),
            level_compaction_dynamic_level_bytes: self.level_compaction_dynamic_level_bytes,
            max_compaction_bytes: self.max_compaction_bytes(),
            ttl: self.sanitized_ttl(),
            age_ttl,
            age_periodic,
            fifo_max_table_files_size: self.fifo_max_table_files_size,
            fifo_allow_compaction: self.fifo_allow_compaction,
            universal: self.universal.clone(),
            compression: self.compression.to_table(),
            compression_opts: self.compression_opts.clone(),
            compression_per_level: self.compression_per_level.iter().map(|c| c.to_table()).collect(),
            bottommost_compression: self.bottommost_compression.map(|c| c.to_table()),
            bottommost_compression_opts: self
                .bottommost_compression_opts_enabled
                .then(|| self.bottommost_compression_opts.clone()),
            blob_gc: BlobGc {
                enable: self.blob.enable_gc,
                age_cutoff: self.blob.gc_age_cutoff,
                force_threshold: self.blob.gc_force_threshold,
            },
        }
    }

    /// What a new memtable of this family takes.
    pub(crate) fn memtable_config(&self) -> MemTableConfig {
        MemTableConfig {
            max_successive_merges: self.max_successive_merges,
            huge_page_size: self.memtable_huge_page_size,
            write_buffer_size: self.write_buffer_size,
            prefix_bloom_ratio: self.memtable_prefix_bloom_ratio,
            whole_key_filtering: self.memtable_whole_key_filtering,
            prefix_extractor: self.prefix_extractor.clone(),
            hash_rep: self.memtable_rep.is_hash(),
            vector_rep: match self.memtable_rep {
                crate::options::MemtableRep::Vector { count } => Some(count),
                _ => None,
            },
            inplace_update_support: self.inplace_update_support,
            inplace_update_num_locks: self.inplace_update_num_locks,
            statistics: self.statistics.clone(),
            max_range_deletions: self.memtable_max_range_deletions,
        }
    }

    /// The family's merge operator, as the engine calls it.
    pub(crate) fn merge_core(&self) -> Option<&dyn MergeOperatorCore> {
        self.merge_operator.as_deref().map(|m| m as &dyn MergeOperatorCore)
    }

    /// The family's merge operator, for an iterator that keeps it.
    pub(crate) fn merge_core_arc(&self) -> Option<Arc<dyn MergeOperatorCore>> {
        self.merge_operator.clone().map(|m| m as Arc<dyn MergeOperatorCore>)
    }
}

impl From<Decision> for FilterDecision {
    fn from(d: Decision) -> FilterDecision {
        match d {
            Decision::Keep => FilterDecision::Keep,
            Decision::Remove => FilterDecision::Remove,
            Decision::Change(v) => FilterDecision::Change(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_options_resolve_to_the_engines_defaults() {
        // The engine's defaults are RocksDB 11.8.1's as the facade resolves them (the default
        // codec is LZ4, the crate's default features having it).
        assert_eq!(Options::default().engine_cf_config(), CfConfig::default());
    }

    #[test]
    fn sanitized_values_reach_the_engine() {
        let mut o = Options::default();
        o.set_target_file_size_base(1 << 20);
        o.set_ttl(0);
        let c = o.engine_cf_config();
        assert_eq!(c.max_compaction_bytes, 25 << 20, "0 means 25 target files");
        assert_eq!((c.ttl, c.age_ttl), (0, 0));
        o.set_compaction_style(DBCompactionStyle::Fifo);
        o.set_ttl(u64::MAX - 1);
        assert_eq!(o.engine_cf_config().age_ttl, 30 * 24 * 3600, "RocksDB's 30-day FIFO default");
        assert_eq!(o.engine_cf_config().style, CompactionStyle::Fifo);
        o.set_bottommost_compression_type(crate::DBCompressionType::Zstd);
        assert_eq!(
            o.engine_cf_config().bottommost_compression,
            Some(shale_base::compression::CompressionType::Zstd)
        );
        assert_eq!(o.engine_cf_config().bottommost_compression_opts, None, "not enabled");
    }
}
