//! rust-rocksdb's `SliceTransform` (prefix extractors). Prefix extractors are issue 15's:
//! `Options::set_prefix_extractor` is refused at open with NotSupported.

/// A function from a key to its prefix.
pub type TransformFn<'a> = fn(&'a [u8]) -> &'a [u8];
/// Whether a key has a prefix at all.
pub type InDomainFn = fn(&[u8]) -> bool;

/// A prefix extractor, as rust-rocksdb's `SliceTransform`.
#[allow(dead_code)] // read by the prefix extractors of issue 15
pub struct SliceTransform {
    pub(crate) name: String,
    pub(crate) kind: TransformKind,
}

#[allow(dead_code)] // read by the prefix extractors of issue 15
pub(crate) enum TransformKind {
    Fixed(usize),
    Noop,
    Custom { transform: TransformFn<'static>, in_domain: Option<InDomainFn> },
}

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

    pub fn create_noop() -> SliceTransform {
        SliceTransform { name: "rocksdb.Noop".to_string(), kind: TransformKind::Noop }
    }
}
