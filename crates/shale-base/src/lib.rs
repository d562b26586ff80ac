//! Shale's low-level pieces, shared by the KV engine (`shale`) and the Raft log engine
//! (`shale-raftlog`) so neither depends on the other: the file-system layer (`fs`), integer
//! coding (`coding`), CRC masking (`checksum`), block compression codecs (`compression`),
//! typed errors (`error`), and where the tests find RocksDB's tools (`oracle`).

pub mod block_buf;
pub mod checksum;
pub mod coding;
pub mod compression;
pub mod error;
pub mod fs;
pub mod lock_rank;
pub mod oracle;
pub mod poison;
pub mod snappy;
pub mod sys;

pub use error::{Error, ErrorKind, Result};
