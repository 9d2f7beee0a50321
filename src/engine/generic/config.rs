//! The options of one generic merge call (the twin's `_Config`): the policy, the list merge
//! and strictness, checked in the twin's order. Separate from the merge itself so the bindings
//! check options without reaching into the walk.

use crate::engine::error::OptionError;

pub const POLICIES: &[&str] = &["openjiuwen", "delta", "langchain"];

pub const LIST_MERGES: &[&str] = &["concat", "by_index"];

/// The options of one merge call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Config {
    pub delta: bool,
    /// LangChain's merge_content / merge_dicts / merge_lists (docs/langchain-policy.md).
    pub langchain: bool,
    pub by_index: bool,
    pub strict: bool,
}

impl Config {
    /// The openJiuwen drop-in policy.
    pub const OPENJIUWEN: Config = Config {
        delta: false,
        langchain: false,
        by_index: false,
        strict: false,
    };

    /// Checks option values in the twin's order (`_Config.__init__`, after its type checks).
    pub fn parse(policy: &str, list_merge: &str, strict: bool) -> Result<Config, OptionError> {
        if !POLICIES.contains(&policy) {
            return Err(OptionError::Invalid {
                name: "policy",
                valid: POLICIES,
            });
        }
        if !LIST_MERGES.contains(&list_merge) {
            return Err(OptionError::Invalid {
                name: "list_merge",
                valid: LIST_MERGES,
            });
        }
        let delta = policy == "delta";
        if !delta && list_merge != "concat" {
            return Err(OptionError::RequiresDelta { name: "list_merge" });
        }
        if !delta && strict {
            return Err(OptionError::RequiresDelta { name: "strict" });
        }
        Ok(Config {
            delta,
            langchain: policy == "langchain",
            by_index: list_merge == "by_index",
            strict,
        })
    }
}
