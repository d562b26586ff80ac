//! Integrated BlobDB (key-value separation), in RocksDB's formats (docs/blob-format.md).
//!
//! ```text
//! flush / compaction ──(value >= min_blob_size)──> BlobFileBuilder (writer.rs) ──> NNNNNN.blob
//!        │                                                  │
//!        └── SST entry: kTypeBlobIndex (0x11) + BlobIndex ──┘  MANIFEST: BlobFileAddition (400),
//!                                                               BlobFileGarbage (401)
//! get / iterator / merge / compaction ── BlobIndex ──> BlobFileCache (reader.rs) ──> value
//! ```
//!
//! - format.rs: header, record, footer, blob index encodings (layout drawn there).
//! - reader.rs: opening a blob file and reading one blob, every check a Corruption naming
//!   the file and offset.
//! - writer.rs: writing blob files at flush and compaction, rolled at `blob_file_size`.
//! - Which blob files a Version holds, and when a blob file goes: `version/blob_files.rs`.

pub mod format;
pub mod reader;
pub mod writer;

pub use format::BlobIndex;
pub use reader::{blob_file_name, blob_file_path, BlobFetcher, BlobFileCache, BlobFileReader};
pub use writer::{BlobFileBuilder, BlobWriteOptions};
