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

/// A column family named by id alone (crate-internal: snapshots pass the family on this way).
pub(crate) struct CfId(pub u32);

impl AsColumnFamilyRef for CfId {
    fn cf_id(&self) -> u32 {
        self.0
    }
}
