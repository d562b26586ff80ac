//! `CStrLike`, as rust-rocksdb's: what `property_value*`, `set_comparator` and a few other
//! calls accept as a name (`&str`, `String`, `&CStr`, `CString`, property names). Shale has
//! no C boundary, but the trait keeps those calls compiling unchanged; names are checked for
//! NUL bytes as RocksDB's C API would (InvalidArgument).

use std::ffi::{CStr, CString, NulError};

/// Something that can be turned into a C string, as rust-rocksdb's `CStrLike`.
pub trait CStrLike {
    type Baked: std::ops::Deref<Target = CStr>;
    type Error: std::fmt::Debug + std::fmt::Display;

    /// The value as a C string, borrowing where it can.
    fn bake(self) -> Result<Self::Baked, Self::Error>;

    /// The value as an owned C string.
    fn into_c_string(self) -> Result<CString, Self::Error>;
}

impl CStrLike for &str {
    type Baked = CString;
    type Error = NulError;

    fn bake(self) -> Result<CString, NulError> {
        CString::new(self)
    }

    fn into_c_string(self) -> Result<CString, NulError> {
        CString::new(self)
    }
}

impl CStrLike for &String {
    type Baked = CString;
    type Error = NulError;

    fn bake(self) -> Result<CString, NulError> {
        CString::new(self.as_bytes())
    }

    fn into_c_string(self) -> Result<CString, NulError> {
        CString::new(self.as_bytes())
    }
}

impl CStrLike for String {
    type Baked = CString;
    type Error = NulError;

    fn bake(self) -> Result<CString, NulError> {
        CString::new(self)
    }

    fn into_c_string(self) -> Result<CString, NulError> {
        CString::new(self)
    }
}

impl<'a> CStrLike for &'a CStr {
    type Baked = &'a CStr;
    type Error = std::convert::Infallible;

    fn bake(self) -> Result<&'a CStr, Self::Error> {
        Ok(self)
    }

    fn into_c_string(self) -> Result<CString, Self::Error> {
        Ok(self.to_owned())
    }
}

impl CStrLike for CString {
    type Baked = CString;
    type Error = std::convert::Infallible;

    fn bake(self) -> Result<CString, Self::Error> {
        Ok(self)
    }

    fn into_c_string(self) -> Result<CString, Self::Error> {
        Ok(self)
    }
}

impl<'a> CStrLike for &'a CString {
    type Baked = &'a CStr;
    type Error = std::convert::Infallible;

    fn bake(self) -> Result<&'a CStr, Self::Error> {
        Ok(self)
    }

    fn into_c_string(self) -> Result<CString, Self::Error> {
        Ok(self.clone())
    }
}

/// The name as a Rust string, or InvalidArgument naming what is wrong with it.
pub(crate) fn name_of(name: impl CStrLike, what: &str) -> crate::Result<String> {
    let c = name.into_c_string().map_err(|e| crate::Error::invalid_argument(format!("{what}: {e}")))?;
    c.into_string().map_err(|e| crate::Error::invalid_argument(format!("{what} is not UTF-8: {e}")))
}

/// A value returned by `key_may_exist_cf_opt_value`, as rust-rocksdb's `CSlice`: reads as
/// `[u8]`.
pub struct CSlice {
    data: Vec<u8>,
}

impl CSlice {
    pub(crate) fn new(data: Vec<u8>) -> CSlice {
        CSlice { data }
    }
}

impl std::ops::Deref for CSlice {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.data
    }
}

impl AsRef<[u8]> for CSlice {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}
