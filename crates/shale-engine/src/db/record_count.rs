//! RocksDB's `compaction_verify_record_count` (default true; `CompactionJob::
//! VerifyInputRecordCount`): once a compaction ran, the point entries it read are compared
//! with the entries its input tables hold (each table's `num_entries` less its
//! `num_range_deletions`, from the table properties). A difference is Corruption in RocksDB's
//! words and the compaction fails (its outputs are removed, nothing is installed); false
//! logs the message as a warning and goes on, as RocksDB does.
//!
//! Not done, as in RocksDB: for a compaction a remote service ran (the worker checks its
//! own). RocksDB's second check (`VerifyOutputRecordCount`: records written against the
//! outputs' properties) has no counterpart: Shale's job does not count what it writes apart
//! from its table builders, which set those properties.

use std::sync::Arc;

use super::cf::CfHandle;
use super::DbInner;
use crate::compaction::picker::CompactionPlan;
use crate::error::{Error, Result};

/// RocksDB's `Compaction::Summary` without the version number: the base level and each
/// input level's files as `number(sizeB)`.
fn summary(plan: &CompactionPlan) -> String {
    let level = |files: &[Arc<crate::version::edit::FileMetaData>]| {
        files.iter().map(|f| format!("{}({}B)", f.number, f.file_size)).collect::<Vec<_>>().join(" ")
    };
    let mut s = format!("Base level {}, inputs: [{}]", plan.level, level(&plan.inputs));
    for (_, files) in &plan.middle {
        s.push_str(&format!(", [{}]", level(files)));
    }
    if !plan.next_inputs.is_empty() {
        s.push_str(&format!(", [{}]", level(&plan.next_inputs)));
    }
    s
}

/// The check itself, on counts: Some(message) when they differ.
fn mismatch(expected: u64, processed: u64, plan: &CompactionPlan) -> Option<String> {
    (expected != processed).then(|| {
        format!(
            "Compaction number of input keys does not match number of keys processed. Expected \
             {expected} but processed {processed}. Compaction summary: {}",
            summary(plan)
        )
    })
}

impl DbInner {
    /// Compares `processed` (the job's `entries_in`) with the inputs' point entries.
    pub fn verify_input_records(&self, cf: &CfHandle, plan: &CompactionPlan, processed: u64) -> Result<()> {
        let mut expected = 0u64;
        let middle = plan.middle.iter().flat_map(|(_, files)| files.iter());
        for f in plan.inputs.iter().chain(middle).chain(plan.next_inputs.iter()) {
            let e = self.table_cache.get(cf, f)?;
            let p = e.table.properties();
            expected += p.num_entries.saturating_sub(p.num_range_deletions);
        }
        let Some(msg) = mismatch(expected, processed, plan) else { return Ok(()) };
        if self.config.compaction_verify_record_count {
            return Err(Error::corruption(msg));
        }
        self.info_log.log_at(
            crate::config::LogLevel::Warn,
            format_args!("[{}] VerifyInputRecordCount() Status: {msg}", cf.name),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::version::edit::FileMetaData;

    #[test]
    fn a_count_mismatch_names_both_counts_and_the_inputs() {
        let f = |number, file_size| Arc::new(FileMetaData { number, file_size, ..Default::default() });
        let plan = CompactionPlan {
            level: 0,
            inputs: vec![f(12, 100)],
            next_inputs: vec![f(7, 50)],
            ..Default::default()
        };
        assert_eq!(mismatch(5, 5, &plan), None);
        let m = mismatch(5, 4, &plan).unwrap_or_default();
        assert!(
            m.starts_with("Compaction number of input keys does not match number of keys processed."),
            "{m}"
        );
        assert!(
            m.contains(
                "Expected 5 but processed 4. Compaction summary: Base level 0, inputs: [12(100B)], [7(50B)]"
            ),
            "{m}"
        );
    }
}
