//! Keyword options, checked in the twin's order: all types first, then the values.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use crate::engine::error::OptionError;
use crate::engine::generic::Config;
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

fn text<'py>(
    py: Python<'py>,
    name: &str,
    arg: &Arg<'py>,
    default: &str,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let obj = match arg {
        Arg::Default => return Ok((PyString::new(py, default).into_any(), default.to_owned())),
        Arg::Given(obj) => obj,
    };
    let Ok(text) = obj.cast::<PyString>() else {
        return Err(wrong_type(py, name, "str", obj));
    };
    // A lone surrogate cannot spell a valid option: keep it unmatched, reported by repr.
    let value = text.to_str().map(str::to_owned).unwrap_or_default();
    Ok((obj.clone(), value))
}

/// The [`Config`] for `policy`, `list_merge` and `strict`, or the twin's exception.
pub fn config<'py>(
    py: Python<'py>,
    policy: &Arg<'py>,
    list_merge: &Arg<'py>,
    strict: &Arg<'py>,
) -> PyResult<Config> {
    let (policy_obj, policy) = text(py, "policy", policy, "openjiuwen")?;
    let (list_merge_obj, list_merge) = text(py, "list_merge", list_merge, "concat")?;
    let (strict_obj, strict) = match strict {
        Arg::Default => (PyBool::new(py, false).to_owned().into_any(), false),
        Arg::Given(obj) => match obj.cast::<PyBool>() {
            Ok(flag) => (obj.clone(), flag.is_true()),
            Err(_) => return Err(wrong_type(py, "strict", "bool", obj)),
        },
    };
    Config::parse(&policy, &list_merge, strict).map_err(|err| {
        let name = match &err {
            OptionError::Invalid { name, .. } | OptionError::RequiresDelta { name } => *name,
        };
        let value = match name {
            "policy" => &policy_obj,
            "list_merge" => &list_merge_obj,
            _ => &strict_obj,
        };
        option_error(py, err, value)
    })
}
