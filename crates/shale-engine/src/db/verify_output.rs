//! RocksDB 11.8.1's `CompactionJob::VerifyOutputFiles`: what a compaction checks of its
//! output tables before they are installed, as the family's `verify_output_flags` say
//! (RocksDB's `VerifyOutputFlags` bits), `paranoid_file_checks` adding kVerifyIteration for
//! local and remote compactions alike:
//!
//! ```text
//! bit 0  kVerifyBlockChecksum        every block read back, its checksum checked
//! bit 1  kVerifyIteration            every point entry read back in order, hashed, and
//!                                    the hash compared with the one made while writing
//! bit 2  kVerifyFileChecksum         the whole-file checksum read back and compared with
//!                                    the one made while writing; only with a
//!                                    file_checksum_gen_factory and an output that
//!                                    recorded one (RocksDB's condition)
//! bit 10 kEnableForLocalCompaction   the checks above run for compactions made here
//! bit 11 kEnableForRemoteCompaction  ... for those a compaction service made
//! ```
//!
//! A table's meta blocks (index, filter, properties) are read with their checksums checked
//! when the table is opened, which every compaction does; its data blocks are read by a
//! walk of the table (the table cache's readers check every block they read).

use super::{CfHandle, DbInner};
use crate::compaction::job::{output_hash_step, JobResult};
use crate::config::CfConfig;
use crate::error::{Error, Result};

const VERIFY_BLOCK_CHECKSUM: u32 = 1 << 0;
const VERIFY_ITERATION: u32 = 1 << 1;
const VERIFY_FILE_CHECKSUM: u32 = 1 << 2;
const ENABLE_FOR_LOCAL: u32 = 1 << 10;
const ENABLE_FOR_REMOTE: u32 = 1 << 11;

/// The flags in force: `verify_output_flags`, with `paranoid_file_checks`' kVerifyIteration
/// for both kinds of compaction (RocksDB's "for backward compatibility").
fn flags(c: &CfConfig) -> u32 {
    let mut f = c.verify_output_flags;
    if c.paranoid_file_checks {
        f |= VERIFY_ITERATION | ENABLE_FOR_LOCAL | ENABLE_FOR_REMOTE;
    }
    f
}

/// Whether a compaction of this family hashes its outputs as it writes them (RocksDB's
/// `enable_output_hash`).
pub(crate) fn wants_hash(c: &CfConfig) -> bool {
    c.paranoid_file_checks || c.verify_output_flags & VERIFY_ITERATION != 0
}

impl DbInner {
    /// RocksDB's `VerifyOutputFiles` for the outputs of one compaction (`local`: made here,
    /// not by a compaction service). Corruption in RocksDB's words when a check fails.
    pub(crate) fn verify_compaction_outputs(&self, cf: &CfHandle, r: &JobResult, local: bool) -> Result<()> {
        let cfg = cf.config();
        let f = flags(cfg);
        let enabled = if local { f & ENABLE_FOR_LOCAL != 0 } else { f & ENABLE_FOR_REMOTE != 0 };
        if !enabled || f & (VERIFY_BLOCK_CHECKSUM | VERIFY_ITERATION | VERIFY_FILE_CHECKSUM) == 0 {
            return Ok(());
        }
        let iteration = f & VERIFY_ITERATION != 0;
        let file_checksum = f & VERIFY_FILE_CHECKSUM != 0 && self.config.file_checksum_crc32c;
        for (i, meta) in r.outputs.iter().enumerate() {
            if f & (VERIFY_BLOCK_CHECKSUM | VERIFY_ITERATION) == 0 {
                if file_checksum {
                    self.verify_output_file_checksum(cf, meta)?;
                }
                continue;
            }
            let t = self.table_cache.get(cf, meta)?;
            let mut it = t.table.iter(false);
            it.seek_to_first();
            let mut hash = 0u64;
            let mut count = 0u64;
            let mut prev: Vec<u8> = Vec::new();
            while it.valid() {
                if iteration {
                    // RocksDB's OutputValidator::Add.
                    if count > 0 && cf.icmp.compare(it.key(), &prev).is_lt() {
                        return Err(Error::corruption("Compaction sees out-of-order keys."));
                    }
                    prev.clear();
                    prev.extend_from_slice(it.key());
                    hash = output_hash_step(hash, it.key(), it.value());
                }
                count += 1;
                it.next();
            }
            it.status()?;
            if iteration {
                let written = r.output_hashes.get(i).copied().unwrap_or(0);
                if hash != written {
                    return Err(Error::corruption(
                        "Key-value checksum of compaction output doesn't match what was computed when written",
                    ));
                }
                // Shale's paranoid_file_checks also compares the count with the table's
                // properties (as its flush check does).
                if cfg.paranoid_file_checks {
                    let props = t.table.properties();
                    let expected = props.num_entries.saturating_sub(props.num_range_deletions);
                    if count != expected {
                        return Err(Error::corruption(format!(
                            "paranoid_file_checks: table #{} holds {count} entries, its properties say {expected}",
                            meta.number
                        )));
                    }
                }
            }
            if file_checksum {
                self.verify_output_file_checksum(cf, meta)?;
            }
        }
        Ok(())
    }

    /// kVerifyFileChecksum of one output, after its block and iteration checks: RocksDB
    /// reads the file back only where the output recorded a checksum (not
    /// `kUnknownFileChecksum`) and compares the two.
    fn verify_output_file_checksum(
        &self,
        cf: &CfHandle,
        meta: &crate::version::edit::FileMetaData,
    ) -> Result<()> {
        if meta.file_checksum.is_empty() {
            return Ok(());
        }
        let path = super::filename::table_file(cf.table_dir(&self.path, meta.path_id), meta.number);
        let read = crate::file_checksum::file_checksum_of(&*self.fs, &path, 0)?;
        if read != meta.file_checksum {
            return Err(Error::corruption(format!(
                "File checksum mismatch for compaction output file {}",
                path.display()
            )));
        }
        Ok(())
    }
}
