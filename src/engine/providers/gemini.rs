//! The `"gemini"` adapter (the twin's `_pure/providers/gemini.py`).

use crate::engine::providers::common::{self, Leaves};
use crate::engine::value::Value;

/// Not written yet.
#[derive(Debug, Default)]
pub struct Adapter {}

impl Adapter {
    pub fn new() -> Self {
        Self::default()
    }
}

impl common::Adapter for Adapter {
    fn event(&mut self, _event: &Value) -> Result<Leaves, String> {
        Err("the gemini adapter is not written yet".to_owned())
    }
}
