//! The MANIFEST and the versions it describes: immutable per-column-family file sets, the
//! builder that applies edits, and the manifest writer and recovery. The version edits (the
//! MANIFEST's records and their encoding) are `shale_format::version::edit`, re-exported here.

pub mod blob_files;
pub mod builder;
pub use shale_format::version::edit;
pub mod manifest;
pub use shale_format::version::progress;
mod replay;
pub mod set;
#[allow(clippy::module_inception)]
pub mod version;

pub use blob_files::link_entity_blob_files;
pub use builder::{FileSetBuilder, VersionBuilder};
pub use edit::{FileMetaData, VersionEdit, WalAddition};
pub use manifest::{
    current_file_path, descriptor_file_name, read_current, recover, set_current_file, ManifestWriter,
    RecoveredCf, RecoveredManifest,
};
pub use version::Version;
