//! Shale: an LSM-tree key-value store with RocksDB's on-disk formats and the API of the
//! `rocksdb` crate (rust-rocksdb).

pub mod cache;
mod cf_ref;
pub mod coding;
pub mod comparator;
mod error;
pub mod fs;
pub mod iter;
pub mod key;
pub mod options_file;
pub mod table;

pub use error::{Error, ErrorKind, Result};
pub use cf_ref::AsColumnFamilyRef;
