//! Shale's low-level pieces, shared by the KV engine (`shale`) and the Raft log engine
//! (`shale-raftlog`) so neither depends on the other: the file-system layer (`fs`), integer
//! coding (`coding`), CRC masking (`checksum`), block compression codecs (`compression`)
//! and typed errors (`error`).

pub mod checksum;
pub mod coding;
pub mod compression;
pub mod error;
pub mod fs;

pub use error::{Error, ErrorKind, Result};
