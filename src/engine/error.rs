//! Errors as data. The words are formatted in one place on the Python side
//! (`fastmerge.errors`), so both backends raise the same message.

/// One step of the path from the root to where a merge failed.
#[derive(Clone, Debug, PartialEq)]
pub enum PathItem<O> {
    /// A dict key.
    Key(O),
    /// A position in a list (by-index element merges).
    Slot(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum EngineError<O> {
    /// The merge would descend more than `limit` dict levels.
    DepthLimit { limit: usize },
    /// A right-hand container contains itself along the merge path.
    Cycle { depth: usize },
    /// `strict=True`: values of different kinds at `path`.
    MergeType {
        path: Vec<PathItem<O>>,
        left_kind: String,
        right_kind: String,
    },
    /// `strict=True` in a chunk merge: a provider quirk that is otherwise recorded as an
    /// anomaly (spec §8); `detail` is a host string.
    Anomaly { code: &'static str, detail: O },
    /// A value nested deeper than a chunk merge copies (Python's `RecursionError`).
    Recursion,
    /// policy `langchain`: values LangChain's merge refuses; `code` names the rule and
    /// `values` are what its message shows (`fastmerge.errors.langchain_conflict`).
    Conflict { code: &'static str, values: Vec<O> },
    /// A function argument of the wrong type (Python `TypeError`).
    WrongType {
        name: &'static str,
        expected: &'static str,
        value: O,
    },
}

/// A merge option that cannot be used (Python `ValueError`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// The option `name` is not one of `valid`.
    Invalid {
        name: &'static str,
        valid: &'static [&'static str],
    },
    /// The option needs `policy="delta"`.
    RequiresDelta { name: &'static str },
}
