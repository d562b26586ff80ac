//! Table metadata for the pickers' unit tests: one builder instead of a copy per test module.

use std::sync::Arc;

use crate::key::{make_internal_key, ValueType};
use crate::version::edit::FileMetaData;

/// Table `number` of `size` bytes holding user keys `lo` to `hi`, all written at `seq` as
/// values; a test sets the other fields with `..` over it (see `file`).
pub(crate) fn table(number: u64, lo: &str, hi: &str, seq: u64, size: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: size,
        smallest: make_internal_key(lo.as_bytes(), seq, ValueType::Value),
        largest: make_internal_key(hi.as_bytes(), seq, ValueType::Value),
        smallest_seqno: seq,
        largest_seqno: seq,
        ..Default::default()
    }
}

/// `table` shared, as versions hold it.
pub(crate) fn file(number: u64, lo: &str, hi: &str, seq: u64, size: u64) -> Arc<FileMetaData> {
    Arc::new(table(number, lo, hi, seq, size))
}
