//! rust-rocksdb's `merge_operator` module: `MergeFn` and `MergeOperands`, and Shale's
//! [`MergeOperator`], the object a column family's options hold (made by
//! `Options::set_merge_operator*` from closures, or by [`crate::merge_operators`] for
//! RocksDB's built-in operators).
//!
//! How merges resolve (RocksDB's `MergeHelper`, `db/merge_helper.cc`): the operands of a key,
//! newest first, are gathered down to the first Put (the base value), deletion or range
//! tombstone (no base), or the end of the key's history (no base); the full-merge function
//! gets the key, the base and the operands oldest first. A full merge that fails (returns
//! None) or panics is a Corruption error naming the key ("Merge operator failed", RocksDB's
//! `kMergeOperatorFailed`), never a panic. Flush and compaction (`compaction/job.rs`) combine
//! the operands of a snapshot stripe the same way onto a base they reach, and otherwise with
//! the partial-merge function (where the operator has one); a partial merge that fails
//! leaves the operands as they were, as RocksDB does.

use shale_engine::merge::MergeOperatorCore;

/// A merge function: `(key, existing value, operands) -> new value` (None fails the merge).
pub trait MergeFn:
    Fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>> + Send + Sync + 'static
{
}

impl<F> MergeFn for F where
    F: Fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>> + Send + Sync + 'static
{
}

/// The operands of one merge, oldest first.
pub struct MergeOperands {
    operands: Vec<Vec<u8>>,
}

impl MergeOperands {
    pub(crate) fn new(operands: Vec<Vec<u8>>) -> MergeOperands {
        MergeOperands { operands }
    }

    pub fn len(&self) -> usize {
        self.operands.len()
    }

    pub fn is_empty(&self) -> bool {
        self.operands.is_empty()
    }

    pub fn iter(&self) -> MergeOperandsIter<'_> {
        MergeOperandsIter { operands: self, cursor: 0 }
    }
}

/// An iterator over `MergeOperands`.
pub struct MergeOperandsIter<'a> {
    operands: &'a MergeOperands,
    cursor: usize,
}

impl<'a> Iterator for MergeOperandsIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let op = self.operands.operands.get(self.cursor)?;
        self.cursor += 1;
        Some(op)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.operands.len() - self.cursor;
        (n, Some(n))
    }
}

impl<'a> IntoIterator for &'a MergeOperands {
    type Item = &'a [u8];
    type IntoIter = MergeOperandsIter<'a>;

    fn into_iter(self) -> MergeOperandsIter<'a> {
        self.iter()
    }
}

/// A boxed merge function: `(key, existing value, operands oldest first)`.
pub type BoxedMergeFn = Box<dyn Fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>> + Send + Sync>;

/// A merge operator: a name (recorded in the OPTIONS file and in every table's
/// `rocksdb.merge.operator` property), a full-merge function and, optionally, a partial-merge
/// function (called with no existing value on two or more operands; its result replaces
/// them). A Shale extension; rust-rocksdb builds the same thing inside `set_merge_operator*`.
pub struct MergeOperator {
    name: String,
    /// The value of `merge_operator=` in the OPTIONS file (the name, or RocksDB's
    /// `{id=...;delimiter=...;}` form for operators with options).
    options_value: String,
    full: BoxedMergeFn,
    partial: Option<BoxedMergeFn>,
}

impl std::fmt::Debug for MergeOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeOperator").field("name", &self.name).finish_non_exhaustive()
    }
}

impl MergeOperator {
    /// An operator named `name` with a full-merge function and an optional partial-merge one.
    pub fn new<F: MergeFn>(
        name: impl Into<String>,
        full_merge: F,
        partial_merge: Option<BoxedMergeFn>,
    ) -> Self {
        let name = name.into();
        MergeOperator {
            options_value: name.clone(),
            name,
            full: Box::new(full_merge),
            partial: partial_merge,
        }
    }

    pub(crate) fn with_options_value(mut self, v: String) -> Self {
        self.options_value = v;
        self
    }

    /// The operator's name (RocksDB's `MergeOperator::Name()`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the OPTIONS file records for this operator.
    pub(crate) fn options_value(&self) -> &str {
        &self.options_value
    }
}

/// How the engine calls the operator (`shale_engine::merge`).
impl MergeOperatorCore for MergeOperator {
    fn name(&self) -> &str {
        &self.name
    }

    /// The full merge of `operands` (oldest first) onto `existing`: Corruption ("Merge
    /// operator failed", not naming the key) when the function fails or panics, counted in `stats` as
    /// rocksdb.number.merge.failures (RocksDB's MergeHelper::TimedFullMerge counts every
    /// failed FullMergeV3: reads, iterators, flushes, compactions, successive merges).
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: Vec<Vec<u8>>,
        stats: Option<&crate::statistics::Statistics>,
    ) -> crate::Result<Vec<u8>> {
        let ops = MergeOperands::new(operands);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.full)(key, existing, &ops)));
        let how = match r {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => "returned no value",
            Err(_) => "panicked",
        };
        crate::statistics::record_tick(stats, crate::statistics::Ticker::NumberMergeFailures, 1);
        Err(merge_failed(&self.name, how))
    }

    /// The partial merge of two or more operands (oldest first): Ok(None) when the operator
    /// has no partial merge or its function declines (returns None); an error when it panics.
    fn partial_merge(&self, key: &[u8], operands: &[Vec<u8>]) -> crate::Result<Option<Vec<u8>>> {
        let Some(partial) = &self.partial else { return Ok(None) };
        if operands.len() < 2 {
            return Ok(None);
        }
        let ops = MergeOperands::new(operands.to_vec());
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| partial(key, None, &ops)))
            .map_err(|_| merge_failed(&self.name, "panicked in a partial merge"))
    }
}

/// RocksDB's Corruption "Merge operator failed" (sub-code `kMergeOperatorFailed`), with the
/// operator's name and what went wrong; never the key, as RocksDB's.
fn merge_failed(name: &str, how: &str) -> crate::Error {
    crate::Error::corruption(format!("{}: merge operator '{name}' {how}", shale_engine::merge::MERGE_FAILED))
}

/// A TTL database's merge operator (RocksDB's `TtlMergeOperator`, which `DBWithTTL` puts
/// around the family's own): every stored value and operand ends with its 4-byte write time
/// (`db/ttl.rs`). The user's operator sees them without it, and the result gets the time of
/// the merge, as RocksDB's: a full merge of operands whose write times have all passed is
/// as fresh as a new Put.
///
/// An operand or existing value shorter than the suffix fails the full merge (RocksDB's
/// "Could not remove timestamp"); a partial merge then declines and keeps the operands.
/// Its name, in each table's `rocksdb.merge.operator`, is RocksDB's "TtlMergeOperator".
pub(crate) struct TtlMergeOperator {
    pub(crate) user: std::sync::Arc<dyn MergeOperatorCore>,
}

/// Bytes of a TTL database's write-time suffix (RocksDB's `DBWithTTLImpl::kTSLength`).
const TTL_TS_LEN: usize = 4;

impl TtlMergeOperator {
    pub(crate) const NAME: &'static str = "TtlMergeOperator";

    /// The current time as the suffix: fixed32 little-endian seconds (RocksDB's
    /// `EncodeFixed32((int32_t)curtime)`).
    fn now_suffix() -> crate::Result<[u8; TTL_TS_LEN]> {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| {
                crate::Error::corruption(
                    "Error: Could not get current time to be attached internally to the new value.",
                )
            })?
            .as_secs();
        Ok((secs as i32).to_le_bytes())
    }

    fn strip(v: &[u8]) -> Option<&[u8]> {
        v.get(..v.len().checked_sub(TTL_TS_LEN)?)
    }
}

impl MergeOperatorCore for TtlMergeOperator {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: Vec<Vec<u8>>,
        stats: Option<&crate::statistics::Statistics>,
    ) -> crate::Result<Vec<u8>> {
        let fail = |what: &str| {
            crate::statistics::record_tick(stats, crate::statistics::Ticker::NumberMergeFailures, 1);
            Err(merge_failed(Self::NAME, what))
        };
        let base = match existing {
            Some(v) => match Self::strip(v) {
                Some(b) => Some(b),
                None => return fail("could not remove the timestamp from the existing value"),
            },
            None => None,
        };
        let mut ops = Vec::with_capacity(operands.len());
        for mut o in operands {
            if o.len() < TTL_TS_LEN {
                return fail("could not remove the timestamp from an operand");
            }
            o.truncate(o.len() - TTL_TS_LEN);
            ops.push(o);
        }
        let mut v = self.user.full_merge(key, base, ops, stats)?;
        v.extend_from_slice(&Self::now_suffix()?);
        Ok(v)
    }

    fn partial_merge(&self, key: &[u8], operands: &[Vec<u8>]) -> crate::Result<Option<Vec<u8>>> {
        let mut ops = Vec::with_capacity(operands.len());
        for o in operands {
            match Self::strip(o) {
                Some(b) => ops.push(b.to_vec()),
                None => return Ok(None),
            }
        }
        match self.user.partial_merge(key, &ops)? {
            Some(mut v) => {
                v.extend_from_slice(&Self::now_suffix()?);
                Ok(Some(v))
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn concat(_k: &[u8], existing: Option<&[u8]>, ops: &MergeOperands) -> Option<Vec<u8>> {
        let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
        for o in ops {
            v.extend_from_slice(o);
        }
        Some(v)
    }

    #[test]
    fn full_merge_orders_operands_oldest_first() {
        let m = MergeOperator::new("concat", concat, None);
        let r = m.full_merge(b"k", Some(b"a"), vec![b"b".to_vec(), b"c".to_vec()], None).unwrap();
        assert_eq!(r, b"abc");
        assert_eq!(m.partial_merge(b"k", &[b"x".to_vec(), b"y".to_vec()]).unwrap(), None);
    }

    #[test]
    fn failing_and_panicking_functions_give_corruption() {
        let m = MergeOperator::new("none", |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| None, None);
        let e = m.full_merge(b"\x01k", None, vec![b"x".to_vec()], None).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        assert!(e.to_string().contains("Merge operator failed"), "{e}");
        // The key is left out, as RocksDB's; the database adds it with allow_data_in_errors.
        assert!(!e.to_string().contains("016B"), "{e}");
        let p = MergeOperator::new(
            "panics",
            |_: &[u8], _: Option<&[u8]>, _: &MergeOperands| -> Option<Vec<u8>> { panic!("boom") },
            Some(Box::new(|_: &[u8], _: Option<&[u8]>, _: &MergeOperands| -> Option<Vec<u8>> {
                panic!("boom")
            })),
        );
        assert_eq!(
            p.full_merge(b"k", None, vec![b"x".to_vec()], None).unwrap_err().kind(),
            crate::ErrorKind::Corruption
        );
        assert!(p.partial_merge(b"k", &[b"x".to_vec(), b"y".to_vec()]).is_err());
    }

    fn with_ts(v: &[u8], t: i32) -> Vec<u8> {
        let mut out = v.to_vec();
        out.extend_from_slice(&t.to_le_bytes());
        out
    }

    #[test]
    fn ttl_merge_strips_write_times_and_appends_the_merge_time() {
        let user = std::sync::Arc::new(MergeOperator::new(
            "concat",
            concat,
            Some(Box::new(|_: &[u8], _: Option<&[u8]>, ops: &MergeOperands| {
                Some(ops.iter().flatten().copied().collect())
            })),
        ));
        let ttl = TtlMergeOperator { user };
        assert_eq!(ttl.name(), "TtlMergeOperator");
        let before =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i32;
        let r = ttl
            .full_merge(b"k", Some(&with_ts(b"a", 1_400_000_000)), vec![with_ts(b"b", 1_400_000_001)], None)
            .unwrap();
        assert_eq!(&r[..2], b"ab");
        let t = i32::from_le_bytes(r[2..].try_into().unwrap());
        assert!(t >= before && t - before < 3600, "{t} {before}");
        let p =
            ttl.partial_merge(b"k", &[with_ts(b"x", 1_400_000_000), with_ts(b"y", 1_400_000_000)]).unwrap();
        let p = p.unwrap();
        assert_eq!((&p[..2], p.len()), (&b"xy"[..], 6));
        // A value or operand without room for the suffix: the full merge fails, the
        // partial merge declines.
        let e = ttl.full_merge(b"k", Some(b"ab"), vec![with_ts(b"b", 1)], None).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corruption);
        assert!(ttl.full_merge(b"k", None, vec![b"xyz".to_vec()], None).is_err());
        assert_eq!(ttl.partial_merge(b"k", &[b"x".to_vec(), with_ts(b"y", 1)]).unwrap(), None);
    }
}
