//! Engine errors as Python exceptions. The classes and their messages live in
//! `fastmerge.errors`; this passes the data, so both backends raise the same text.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::engine::aggregate::AggError;
use crate::engine::error::{EngineError, OptionError, PathItem};

/// `fastmerge.errors.<name>(*args)`: an exception class, or a function returning an exception.
/// If that cannot be built (a broken install), the reason is raised instead.
pub(crate) fn build<'py>(
    py: Python<'py>,
    name: &str,
    args: PyResult<Bound<'py, PyTuple>>,
) -> PyErr {
    let exc = args.and_then(|args| py.import("fastmerge.errors")?.getattr(name)?.call1(args));
    match exc {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

pub fn engine_error<'py>(py: Python<'py>, err: EngineError<Bound<'py, PyAny>>) -> PyErr {
    match err {
        EngineError::DepthLimit { limit } => {
            build(py, "DepthLimitError", (limit,).into_pyobject(py))
        }
        EngineError::Cycle { depth } => build(py, "CycleError", (depth,).into_pyobject(py)),
        EngineError::MergeType {
            path,
            left_kind,
            right_kind,
        } => {
            let keys = path
                .into_iter()
                .map(|item| match item {
                    PathItem::Key(key) => Ok(key),
                    PathItem::Slot(slot) => Ok(slot.into_pyobject(py)?.into_any()),
                })
                .collect::<PyResult<Vec<_>>>()
                .and_then(|keys| PyTuple::new(py, keys));
            let args = keys.and_then(|keys| (keys, left_kind, right_kind).into_pyobject(py));
            build(py, "MergeTypeError", args)
        }
        EngineError::WrongType {
            name,
            expected,
            value,
        } => build(py, "wrong_type", (name, expected, value).into_pyobject(py)),
        EngineError::Anomaly { code, detail } => {
            build(py, "anomaly", (code, detail).into_pyobject(py))
        }
        EngineError::Conflict { code, values } => {
            let mut args = vec![pyo3::types::PyString::new(py, code).into_any()];
            args.extend(values);
            build(py, "langchain_conflict", PyTuple::new(py, args))
        }
        EngineError::Recursion => {
            pyo3::exceptions::PyRecursionError::new_err("maximum recursion depth exceeded")
        }
    }
}

/// An option error; `value` is the Python object the caller passed for that option.
pub fn option_error<'py>(py: Python<'py>, err: OptionError, value: &Bound<'py, PyAny>) -> PyErr {
    match err {
        OptionError::Invalid { name, valid } => build(
            py,
            "invalid_option",
            (name, value, valid.to_vec()).into_pyobject(py),
        ),
        OptionError::RequiresDelta { name } => {
            build(py, "requires_delta", (name, value).into_pyobject(py))
        }
    }
}

/// `TypeError` for an argument of the wrong type.
pub fn wrong_type<'py>(
    py: Python<'py>,
    name: &str,
    expected: &str,
    value: &Bound<'py, PyAny>,
) -> PyErr {
    build(py, "wrong_type", (name, expected, value).into_pyobject(py))
}

/// `TypeError("Cannot add <name> to <type(other)>")` for `chunk + other`.
pub fn cannot_add<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyAny>,
    other: &Bound<'py, PyAny>,
) -> PyErr {
    build(py, "cannot_add", (name, other).into_pyobject(py))
}

/// `ValueError` naming the valid values of an option.
pub fn invalid_option<'py>(
    py: Python<'py>,
    name: &str,
    value: &Bound<'py, PyAny>,
    valid: &[&str],
) -> PyErr {
    build(
        py,
        "invalid_option",
        (name, value, valid.to_vec()).into_pyobject(py),
    )
}

/// An aggregator's error (an event it cannot read, a strict anomaly, no events, ...) as the
/// `fastmerge.errors` exception: raised by the aggregator and by a batch's items alike.
pub(crate) fn agg_error(py: Python<'_>, err: AggError) -> PyErr {
    match err {
        AggError::Event { event, detail } => {
            build(py, "event_error", (event, detail).into_pyobject(py))
        }
        AggError::Anomaly { code, detail } => {
            build(py, "anomaly", (code, detail).into_pyobject(py))
        }
        AggError::NoEvents(detail) => build(py, "no_events", (detail,).into_pyobject(py)),
        AggError::EmptyInput => build(py, "empty_input", Ok(PyTuple::empty(py))),
        AggError::TooLargeSum { event } => build(py, "too_large_sum", (event,).into_pyobject(py)),
        AggError::Closed(reason) => build(py, "closed", (reason,).into_pyobject(py)),
        AggError::Engine(text) => {
            pyo3::exceptions::PyRuntimeError::new_err(format!("fastmerge engine error: {text}"))
        }
    }
}
