//! The merge operator as the engine sees it: a name and two functions over operands, oldest
//! first. The facade's `MergeOperator` (rust-rocksdb's closures over `MergeOperands`)
//! implements it; reads (`iter::DBIter`, the facade's point lookups) and the compaction job
//! call it.

use crate::error::{Error, Result};
use crate::statistics::Statistics;

/// A family's merge operator.
pub trait MergeOperatorCore: Send + Sync {
    /// The operator's name (RocksDB's `MergeOperator::Name()`).
    fn name(&self) -> &str;

    /// The full merge of `operands` (oldest first) onto `existing`: Corruption starting
    /// [`MERGE_FAILED`], without the key, when the function fails or panics, counted in `stats` as
    /// rocksdb.number.merge.failures.
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: Vec<Vec<u8>>,
        stats: Option<&Statistics>,
    ) -> Result<Vec<u8>>;

    /// The partial merge of two or more operands (oldest first): Ok(None) when the operator
    /// has none or declines; an error when it panics.
    fn partial_merge(&self, key: &[u8], operands: &[Vec<u8>]) -> Result<Option<Vec<u8>>>;
}

/// The start of every failed merge's message: RocksDB's `Status::Corruption` of sub-code
/// `kMergeOperatorFailed` ("Merge operator failed"), which never names the key.
pub const MERGE_FAILED: &str = "Merge operator failed";

/// RocksDB's status for merge operands read without a merge operator.
pub fn no_merge_operator() -> Error {
    Error::invalid_argument("merge_operator is not properly initialized.")
}

#[cfg(test)]
pub mod testing {
    //! A concatenating operator for the engine's unit tests.
    use super::*;

    /// Concatenates the operands onto the base; `partial` also concatenates two or more
    /// operands; `fails` returns Corruption from every full merge.
    pub struct Concat {
        pub partial: bool,
        pub fails: bool,
    }

    impl Concat {
        pub fn full() -> Concat {
            Concat { partial: false, fails: false }
        }
    }

    impl MergeOperatorCore for Concat {
        fn name(&self) -> &str {
            if self.fails {
                "fails"
            } else {
                "concat"
            }
        }

        fn full_merge(
            &self,
            key: &[u8],
            existing: Option<&[u8]>,
            operands: Vec<Vec<u8>>,
            _: Option<&Statistics>,
        ) -> Result<Vec<u8>> {
            if self.fails {
                let _ = key;
                return Err(Error::corruption(
                    "Merge operator failed: merge operator 'fails' returned no value",
                ));
            }
            let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
            for o in operands {
                v.extend_from_slice(&o);
            }
            Ok(v)
        }

        fn partial_merge(&self, _key: &[u8], operands: &[Vec<u8>]) -> Result<Option<Vec<u8>>> {
            if !self.partial || operands.len() < 2 {
                return Ok(None);
            }
            Ok(Some(operands.concat()))
        }
    }
}
