//! The MANIFEST's records: version edits (`edit.rs`: the fields, the encoder and the layout;
//! `edit_decode.rs`: the decoder) and RocksDB 11's compaction progress records
//! (`progress.rs`, the payload of edit tag 8202). The versions they build, the MANIFEST
//! writer and its replay are the engine's (`shale_engine::version`).

pub mod edit;
mod edit_decode;
pub mod progress;
