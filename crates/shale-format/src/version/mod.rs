//! The MANIFEST's records: version edits (`edit.rs`: the fields, the encoder and the layout;
//! `edit_decode.rs`: the decoder). The versions they build, the MANIFEST writer and its
//! replay are the engine's (`shale::version`).

pub mod edit;
mod edit_decode;
