//! fastmerge: merge streamed LLM output back into complete messages.
//!
//! Two halves: [`engine`] is pure Rust (no PyO3) and holds every merge rule; `py` (behind the
//! `python` feature) converts between Python objects and the engine and maps errors.

pub mod engine;

#[cfg(feature = "python")]
mod py;

#[cfg(feature = "python")]
mod alloc;
