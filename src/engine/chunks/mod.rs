//! Chunk merge (spec §3–§5, §8): `left + right` for message chunks.
//!
//! The Rust half of `python/fastmerge/_pure/chunks.py`, function for function; the twin's
//! docstrings explain each rule. A chunk is the fold of its *leaves*: [`Leaf::parse`] reads a
//! leaf dict once into typed records (what the twin looks up at every fold is looked up
//! here once), [`fold`] folds a leaf into a [`State`], [`materialize`] reads a state back as
//! plain data. Values stay host objects throughout; text is kept as pieces and joined once
//! when read.
//!
//! One concern per file: `leaf` (a leaf read into records), `state` (what a fold holds),
//! `fold` (one leaf, field by field), `parts` (text, reasoning and other parts), `calls` (the
//! tool-call resolver), `usage` (usage modes and totals), `merge` (value merges those share),
//! `rebuild` (a described leaf folded first), `append` (the fold's shortcuts for hot
//! deltas), `read` (a state read back as data), `map` (the state's containers); this file
//! holds the options and the names the bindings check against.

mod append;
mod calls;
mod fold;
mod leaf;
pub mod map;
mod merge;
mod parts;
mod read;
mod rebuild;
mod state;
mod usage;

pub use append::{
    append_bare_str, append_bare_str_logprobs, append_bare_text, append_indexed_arguments,
    append_indexed_arguments_str, append_indexed_str, append_indexed_text, append_sole_text,
};
pub use fold::fold;
pub use leaf::Leaf;
pub use read::materialize;
pub use state::State;
pub use usage::usage_total;

use crate::engine::error::OptionError;

pub const FAMILIES: &[&str] = &["base", "assistant", "tool"];
pub const SIGNATURE_MERGES: &[&str] = &["replace", "concat"];
pub const USAGE_MERGES: &[&str] = &["merge", "sum", "last"];
pub const ANOMALY_CODES: &[&str] = &[
    "ambiguous_fragment",
    "name_conflict",
    "kind_change",
    "synthetic_id",
    "total_mismatch",
    "delta_before_start",
    "mismatched_delta",
    "truncated",
    "index_collision",
    "unrecognized_event",
    "new_response",
    "out_of_order",
    "delta_after_finish",
];
/// `finish_reason_normalized` (spec §3).
pub const FINISH_REASONS: &[(&str, &str)] = &[
    ("stop", "stop"),
    ("end_turn", "stop"),
    ("stop_sequence", "stop"),
    ("STOP", "stop"),
    ("length", "length"),
    ("max_tokens", "length"),
    ("MAX_TOKENS", "length"),
    ("tool_calls", "tool_calls"),
    ("tool_use", "tool_calls"),
    ("function_call", "tool_calls"),
    ("content_filter", "content_filter"),
    ("SAFETY", "content_filter"),
    ("refusal", "content_filter"),
    ("error", "error"),
];

/// A chunk family (the twin's `FAMILIES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Base,
    Assistant,
    Tool,
}

impl Family {
    pub fn parse(name: &str) -> Option<Family> {
        match name {
            "base" => Some(Family::Base),
            "assistant" => Some(Family::Assistant),
            "tool" => Some(Family::Tool),
            _ => None,
        }
    }

    /// Whether a chunk of this family can add one of `other` (the twin's `_compatible`).
    pub fn accepts(self, other: Family) -> bool {
        self == Family::Base || self == other
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageMode {
    Merge,
    Sum,
    Last,
}

/// How a fold treats signatures, usage and anomalies (the twin's `Options`); `+` uses
/// [`Options::DEFAULT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub strict: bool,
    pub signature_concat: bool,
    pub usage: UsageMode,
}

impl Options {
    pub const DEFAULT: Options = Options {
        strict: false,
        signature_concat: false,
        usage: UsageMode::Merge,
    };

    /// The value checks of the twin's `Options.__init__` (types are the caller's), in order.
    pub fn parse(strict: bool, signature_merge: &str, usage: &str) -> Result<Options, OptionError> {
        let signature_concat = match signature_merge {
            "replace" => false,
            "concat" => true,
            _ => {
                return Err(OptionError::Invalid {
                    name: "signature_merge",
                    valid: SIGNATURE_MERGES,
                })
            }
        };
        let usage = match usage {
            "merge" => UsageMode::Merge,
            "sum" => UsageMode::Sum,
            "last" => UsageMode::Last,
            _ => {
                return Err(OptionError::Invalid {
                    name: "usage",
                    valid: USAGE_MERGES,
                })
            }
        };
        Ok(Options {
            strict,
            signature_concat,
            usage,
        })
    }
}

/// The twin's `FINISH_REASONS.get(reason)` for a reason's text.
pub fn normalized_finish_reason(reason: &str) -> Option<&'static str> {
    FINISH_REASONS
        .iter()
        .find(|(raw, _)| *raw == reason)
        .map(|(_, normal)| *normal)
}
