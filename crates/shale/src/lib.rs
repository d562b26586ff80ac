//! Shale: an LSM-tree key-value store with RocksDB's on-disk formats and the API of the
//! `rocksdb` crate (rust-rocksdb).

mod cf_ref;
pub mod coding;
pub mod comparator;
mod error;
pub mod fs;
pub mod iter;
pub mod key;
pub mod version;
pub mod wal;

pub use error::{Error, ErrorKind, Result};
pub use cf_ref::AsColumnFamilyRef;
