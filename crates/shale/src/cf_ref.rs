//! The trait every column-family handle implements, as rust-rocksdb's `AsColumnFamilyRef`:
//! methods that take a column family accept `&impl AsColumnFamilyRef`.

/// A reference to a column family. Implemented by `ColumnFamily` and references to it.
pub trait AsColumnFamilyRef {
    /// The column family's id, as recorded in the MANIFEST and in WAL records.
    #[doc(hidden)]
    fn cf_id(&self) -> u32;
}

impl<T: AsColumnFamilyRef + ?Sized> AsColumnFamilyRef for &T {
    fn cf_id(&self) -> u32 {
        (**self).cf_id()
    }
}

impl<T: AsColumnFamilyRef + ?Sized> AsColumnFamilyRef for std::sync::Arc<T> {
    fn cf_id(&self) -> u32 {
        (**self).cf_id()
    }
}
