//! Keyword options, checked in the twin's order: all types first, then the values.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use crate::engine::error::OptionError;
use crate::engine::generic::config::Config;
use crate::py::errors::{option_error, wrong_type};

/// An optional argument as the caller gave it (or not), so that a wrong type gets the twin's
/// `TypeError` instead of PyO3's own conversion message.
pub enum Arg<'py> {
    Default,
    Given(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg::Given(obj.to_owned()))
    }
}

/// The text of a `str` option, or the twin's `TypeError`. A lone surrogate cannot spell a
/// valid option: such text is left unmatched and reported by its repr.
fn text<'a, 'py>(
    py: Python<'py>,
    name: &str,
    arg: &'a Arg<'py>,
    default: &'static str,
) -> PyResult<Cow<'a, str>> {
    match arg {
        Arg::Default => Ok(Cow::Borrowed(default)),
        Arg::Given(obj) => match obj.cast::<PyString>() {
            Ok(text) => Ok(text.to_cow().unwrap_or(Cow::Borrowed(""))),
            Err(_) => Err(wrong_type(py, name, "str", obj)),
        },
    }
}

/// The object the caller passed, for an error message (the default's value if none).
fn given<'py>(py: Python<'py>, arg: &Arg<'py>, default: &str) -> Bound<'py, PyAny> {
    match arg {
        Arg::Given(obj) => obj.clone(),
        Arg::Default => PyString::new(py, default).into_any(),
    }
}

/// The [`Config`] for `policy`, `list_merge` and `strict`, or the twin's exception.
pub fn config<'py>(
    py: Python<'py>,
    policy: &Arg<'py>,
    list_merge: &Arg<'py>,
    strict: &Arg<'py>,
) -> PyResult<Config> {
    if let (Arg::Default, Arg::Default, Arg::Default) = (policy, list_merge, strict) {
        return Ok(Config::OPENJIUWEN); // the common call, without string compares
    }
    let policy_text = text(py, "policy", policy, "openjiuwen")?;
    let list_merge_text = text(py, "list_merge", list_merge, "concat")?;
    let strict_flag = match strict {
        Arg::Default => false,
        Arg::Given(obj) => match obj.cast::<PyBool>() {
            Ok(flag) => flag.is_true(),
            Err(_) => return Err(wrong_type(py, "strict", "bool", obj)),
        },
    };
    Config::parse(&policy_text, &list_merge_text, strict_flag).map_err(|err| {
        let value = match &err {
            OptionError::Invalid { name: "policy", .. } => given(py, policy, "openjiuwen"),
            OptionError::Invalid {
                name: "list_merge", ..
            }
            | OptionError::RequiresDelta { name: "list_merge" } => given(py, list_merge, "concat"),
            _ => match strict {
                Arg::Given(obj) => obj.clone(),
                Arg::Default => PyBool::new(py, false).to_owned().into_any(),
            },
        };
        option_error(py, err, &value)
    })
}
