//! rust-rocksdb's property calls (`property_value`, `property_int_value` and their `_cf`
//! forms), over the engine's `DbInner::string_property` / `int_property` (`properties.rs`).

use crate::db::HandleOf;
use std::sync::Arc;

use super::cf::CfHandle;
use super::{DBCommon, DBInner, ThreadMode};
use crate::cf_ref::AsColumnFamilyRef;
use crate::error::Result;
use crate::ffi_util::CStrLike;

impl<T: ThreadMode, D: DBInner> DBCommon<T, D> {
    /// A property of the default column family, e.g. `rocksdb.stats`; None if unknown.
    /// A halted database (`halt.rs`) returns its error, as every property call.
    pub fn property_value(&self, name: impl CStrLike) -> Result<Option<String>> {
        let v = self.inner.string_property(
            &self.default_handle().handle,
            &crate::ffi_util::name_of(name, "property name")?,
        );
        self.inner.check_halted()?;
        Ok(v)
    }

    pub fn property_value_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        name: impl CStrLike,
    ) -> Result<Option<String>> {
        let h: Arc<CfHandle> = self.inner.handle_of(cf)?;
        let v = self.inner.string_property(&h, &crate::ffi_util::name_of(name, "property name")?);
        self.inner.check_halted()?;
        Ok(v)
    }

    /// An integer property, e.g. `rocksdb.estimate-num-keys`; None if unknown.
    pub fn property_int_value(&self, name: impl CStrLike) -> Result<Option<u64>> {
        let v = self
            .inner
            .int_property(&self.default_handle().handle, &crate::ffi_util::name_of(name, "property name")?);
        self.inner.check_halted()?;
        Ok(v)
    }

    pub fn property_int_value_cf(
        &self,
        cf: &impl AsColumnFamilyRef,
        name: impl CStrLike,
    ) -> Result<Option<u64>> {
        let h = self.inner.handle_of(cf)?;
        let v = self.inner.int_property(&h, &crate::ffi_util::name_of(name, "property name")?);
        self.inner.check_halted()?;
        Ok(v)
    }
}
