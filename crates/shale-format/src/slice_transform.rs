//! rust-rocksdb's `SliceTransform` (prefix extractors), with RocksDB's built-in transforms.
//!
//! A prefix extractor maps a user key to its prefix. RocksDB uses it for prefix Bloom
//! filters (in SSTs, `table/builder.rs` and `table/reader.rs`, and in memtables,
//! `memtable/bloom.rs`) and for prefix seeks (`ReadOptions::set_prefix_same_as_start`,
//! `iter/db_iter.rs`). Its name is recorded in every table's
//! "rocksdb.prefix.extractor.name" property, so a reader knows whether a table's filter
//! holds the prefixes of the extractor in use; the names are RocksDB's:
//!
//! ```text
//! kind               name (AsString)            in_domain(key)        transform(key)
//! fixed prefix N     "rocksdb.FixedPrefix.N"    key.len() >= N        key[..N]
//! capped prefix N    "rocksdb.CappedPrefix.N"   always                key[..min(N, len)]
//! noop               "rocksdb.Noop"             always                key
//! custom             the name given             in_domain_fn or true  transform_fn(key)
//! ```
//! A table written with a built-in extractor other than the one in use is read with its
//! own (rebuilt from the property, as RocksDB's `SliceTransform::CreateFromString`); a
//! custom one cannot be rebuilt, so such a table's filter is not used for prefix checks.

use std::sync::Arc;

/// A function from a key to its prefix.
pub type TransformFn<'a> = fn(&'a [u8]) -> &'a [u8];
/// Whether a key has a prefix at all.
pub type InDomainFn = fn(&[u8]) -> bool;

/// A prefix extractor, as rust-rocksdb's `SliceTransform`.
#[derive(Clone)]
pub struct SliceTransform {
    pub name: String,
    pub kind: TransformKind,
}

#[derive(Clone, Copy)]
pub enum TransformKind {
    Fixed(usize),
    Capped(usize),
    Noop,
    Custom { transform: TransformFn<'static>, in_domain: Option<InDomainFn> },
}

/// A shared prefix extractor (what options, tables and memtables hold).
pub type SliceTransformRef = Arc<SliceTransform>;

impl SliceTransform {
    pub fn create(
        name: impl AsRef<str>,
        transform_fn: TransformFn<'static>,
        in_domain_fn: Option<InDomainFn>,
    ) -> SliceTransform {
        SliceTransform {
            name: name.as_ref().to_string(),
            kind: TransformKind::Custom { transform: transform_fn, in_domain: in_domain_fn },
        }
    }

    pub fn create_fixed_prefix(len: usize) -> SliceTransform {
        SliceTransform { name: format!("rocksdb.FixedPrefix.{len}"), kind: TransformKind::Fixed(len) }
    }

    /// RocksDB's `NewCappedPrefixTransform` (a Shale extension to rust-rocksdb's API): the
    /// first `len` bytes of a key, or the whole key when it is shorter.
    pub fn create_capped_prefix(len: usize) -> SliceTransform {
        SliceTransform { name: format!("rocksdb.CappedPrefix.{len}"), kind: TransformKind::Capped(len) }
    }

    pub fn create_noop() -> SliceTransform {
        SliceTransform { name: "rocksdb.Noop".to_string(), kind: TransformKind::Noop }
    }

    /// The built-in transform RocksDB's `SliceTransform::CreateFromString` makes of `name`
    /// ("rocksdb.FixedPrefix.N", "fixed:N", "rocksdb.CappedPrefix.N", "capped:N",
    /// "rocksdb.Noop"); None for "nullptr", an empty name or a custom extractor's name.
    pub fn from_name(name: &str) -> Option<SliceTransform> {
        let num = |s: &str| s.parse::<usize>().ok();
        if name == "rocksdb.Noop" {
            return Some(Self::create_noop());
        }
        if let Some(n) = name.strip_prefix("rocksdb.FixedPrefix.").or_else(|| name.strip_prefix("fixed:")) {
            return num(n).map(Self::create_fixed_prefix);
        }
        if let Some(n) = name.strip_prefix("rocksdb.CappedPrefix.").or_else(|| name.strip_prefix("capped:")) {
            return num(n).map(Self::create_capped_prefix);
        }
        None
    }

    /// The name recorded in table properties and OPTIONS (RocksDB's `AsString()`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `key` has a prefix. A custom `in_domain` function that panics answers false.
    pub fn in_domain(&self, key: &[u8]) -> bool {
        match self.kind {
            TransformKind::Fixed(n) => key.len() >= n,
            TransformKind::Capped(_) | TransformKind::Noop => true,
            TransformKind::Custom { transform, in_domain } => {
                let in_domain = match in_domain {
                    None => true,
                    Some(f) => std::panic::catch_unwind(|| f(key)).unwrap_or(false),
                };
                // A transform that cannot take the key (it panics) leaves it without a
                // prefix: filters then never exclude it, and reads stay correct.
                in_domain && call_custom(transform, key).is_some()
            }
        }
    }

    /// The prefix of `key`; None when `key` is not in the domain.
    pub fn transform<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match self.kind {
            TransformKind::Fixed(n) => key.get(..n),
            TransformKind::Capped(n) => Some(&key[..n.min(key.len())]),
            TransformKind::Noop => Some(key),
            TransformKind::Custom { transform, in_domain } => {
                if let Some(f) = in_domain {
                    if !std::panic::catch_unwind(|| f(key)).unwrap_or(false) {
                        return None;
                    }
                }
                call_custom(transform, key)
            }
        }
    }

    /// RocksDB's `FullLengthEnabled`: the length every full prefix has (fixed and capped
    /// transforms), which lets an upper bound one past a prefix prove a range stays in it.
    pub fn full_length(&self) -> Option<usize> {
        match self.kind {
            TransformKind::Fixed(n) | TransformKind::Capped(n) => Some(n),
            _ => None,
        }
    }
}

impl std::fmt::Debug for SliceTransform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SliceTransform").field("name", &self.name).finish()
    }
}

/// Calls a custom transform on `key`; None if it panics.
fn call_custom<'k>(f: TransformFn<'static>, key: &'k [u8]) -> Option<&'k [u8]> {
    // SAFETY: rust-rocksdb's API types the function as `fn(&'a [u8]) -> &'a [u8]` for a
    // caller-chosen 'a (Shale's `create` names 'static, which every such function coerces
    // to); rust-rocksdb calls it through FFI with a key borrowed only for the call, exactly
    // as here. Functions written for that API are generic over the lifetime (a key in,
    // a sub-slice or a 'static slice out), and for those this signature is the true one.
    // The result is used only while `key` is borrowed.
    let f: for<'a> fn(&'a [u8]) -> &'a [u8] = unsafe { std::mem::transmute::<TransformFn<'static>, _>(f) };
    std::panic::catch_unwind(|| f(key)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_transforms_follow_rocksdb() {
        let f = SliceTransform::create_fixed_prefix(3);
        assert_eq!(f.name(), "rocksdb.FixedPrefix.3");
        assert!(!f.in_domain(b"ab"));
        assert_eq!(f.transform(b"ab"), None);
        assert_eq!(f.transform(b"abcd"), Some(&b"abc"[..]));
        assert_eq!(f.full_length(), Some(3));

        let c = SliceTransform::create_capped_prefix(3);
        assert_eq!(c.name(), "rocksdb.CappedPrefix.3");
        assert!(c.in_domain(b"a"));
        assert_eq!(c.transform(b"a"), Some(&b"a"[..]));
        assert_eq!(c.transform(b"abcd"), Some(&b"abc"[..]));

        let n = SliceTransform::create_noop();
        assert_eq!(n.name(), "rocksdb.Noop");
        assert_eq!(n.transform(b"abcd"), Some(&b"abcd"[..]));
        assert_eq!(n.full_length(), None);
    }

    #[test]
    fn from_name_rebuilds_built_ins_only() {
        assert_eq!(
            SliceTransform::from_name("rocksdb.FixedPrefix.8").map(|t| t.name),
            Some("rocksdb.FixedPrefix.8".into())
        );
        assert_eq!(
            SliceTransform::from_name("fixed:2").map(|t| t.name),
            Some("rocksdb.FixedPrefix.2".into())
        );
        assert_eq!(
            SliceTransform::from_name("capped:4").map(|t| t.name),
            Some("rocksdb.CappedPrefix.4".into())
        );
        assert_eq!(SliceTransform::from_name("rocksdb.Noop").map(|t| t.name), Some("rocksdb.Noop".into()));
        assert!(SliceTransform::from_name("nullptr").is_none());
        assert!(SliceTransform::from_name("").is_none());
        assert!(SliceTransform::from_name("my_transform").is_none());
        assert!(SliceTransform::from_name("rocksdb.FixedPrefix.x").is_none());
    }

    #[test]
    fn custom_transform_and_domain() {
        fn first_two(k: &[u8]) -> &[u8] {
            &k[..2]
        }
        fn long_enough(k: &[u8]) -> bool {
            k.len() >= 2
        }
        let t = SliceTransform::create("two", first_two, Some(long_enough));
        assert_eq!(t.name(), "two");
        assert_eq!(t.transform(b"xyz"), Some(&b"xy"[..]));
        assert!(!t.in_domain(b"x"));
        assert_eq!(t.transform(b"x"), None);
        // Without an in_domain function every key is in the domain, unless the transform
        // cannot take it (it panics): such a key has no prefix.
        let t = SliceTransform::create("two", first_two, None);
        assert!(t.in_domain(b"xy"));
        assert!(!t.in_domain(b"x"));
        assert_eq!(t.transform(b"x"), None);
    }
}
