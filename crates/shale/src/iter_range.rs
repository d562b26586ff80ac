//! Iterator bounds from Rust ranges, as rust-rocksdb's `IterateBounds` and `PrefixRange`
//! (for `ReadOptions::set_iterate_range`).

/// A key range usable as an iterator's lower and upper bounds.
pub trait IterateBounds {
    /// `(lower bound, upper bound)`, each inclusive and exclusive respectively.
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>);
}

impl IterateBounds for std::ops::RangeFull {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (None, None)
    }
}

impl<K: Into<Vec<u8>>> IterateBounds for std::ops::Range<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (Some(self.start.into()), Some(self.end.into()))
    }
}

impl<K: Into<Vec<u8>>> IterateBounds for std::ops::RangeFrom<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (Some(self.start.into()), None)
    }
}

impl<K: Into<Vec<u8>>> IterateBounds for std::ops::RangeTo<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (None, Some(self.end.into()))
    }
}

/// Every key starting with the prefix: from the prefix up to (not including) the next
/// prefix of the same length, or unbounded if the prefix is all 0xff bytes.
#[derive(Clone, Copy)]
pub struct PrefixRange<K>(pub K);

impl<K: Into<Vec<u8>>> IterateBounds for PrefixRange<K> {
    fn into_bounds(self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let start: Vec<u8> = self.0.into();
        if start.is_empty() {
            return (None, None);
        }
        let mut end = start.clone();
        while let Some(last) = end.pop() {
            if last < 0xff {
                end.push(last + 1);
                return (Some(start), Some(end));
            }
        }
        (Some(start), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_range_ends_at_the_next_prefix() {
        assert_eq!(PrefixRange(&b"ab"[..]).into_bounds(), (Some(b"ab".to_vec()), Some(b"ac".to_vec())));
        assert_eq!(PrefixRange(vec![1u8, 0xff]).into_bounds(), (Some(vec![1, 0xff]), Some(vec![2])));
        assert_eq!(PrefixRange(vec![0xffu8]).into_bounds(), (Some(vec![0xff]), None));
    }
}
