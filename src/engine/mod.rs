//! The merge engine: pure Rust, no PyO3.
