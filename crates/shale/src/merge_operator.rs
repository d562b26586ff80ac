//! rust-rocksdb's `merge_operator` module: `MergeFn` and `MergeOperands`. Merge operators are
//! issue 15's: setting one is refused at open, and `DB::merge` returns NotSupported.

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
