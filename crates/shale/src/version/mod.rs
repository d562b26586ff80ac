//! The MANIFEST and the versions it describes: version edits (its records), immutable
//! per-column-family file sets, the builder that applies edits, and the manifest writer and
//! recovery.

pub mod builder;
pub mod edit;
// TEMP pub mod manifest;
#[allow(clippy::module_inception)]
pub mod version;

pub use builder::{FileSetBuilder, VersionBuilder};
pub use edit::{FileMetaData, VersionEdit, WalAddition};
pub use version::Version;
