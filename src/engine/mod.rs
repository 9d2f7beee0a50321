//! The merge engine: pure Rust, no PyO3.
//!
//! The rules work on values through the [`host::Host`] trait, so the same code merges Python
//! objects in place (the `py` layer's host: no conversion, Python's own `+`, `copy()` and key
//! equality where openJiuwen uses them) and the engine's own JSON values ([`value::Value`],
//! used by `cargo test` and by Rust callers).

pub mod aggregate;
pub mod batch;
pub mod chunks;
pub mod error;
pub mod events;
pub mod generic;
pub mod host;
pub mod json_text;
mod nodes;
mod printable;
pub mod providers;
pub mod text;
pub mod transport;
pub mod value;
