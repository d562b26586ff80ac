//! Model tests: random operations against a BTreeMap model, with reopens and crash steps.
//!
//! One test binary (each file under `tests/` is one more binary linking the whole engine);
//! each file of this folder is a module of it, named as the file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may unwrap: a failure is the test failing

mod iterator_refresh_model;
mod model;
mod model_merge;
mod prefix_model;
mod timestamps_model;
