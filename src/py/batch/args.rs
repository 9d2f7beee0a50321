//! The batch binding's arguments read as the twin reads them, in its order of checks, with its
//! errors (`BatchCore`'s and `split_file`'s options, paths, counts, timeouts); and a batch
//! error as Python sees it.

use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString, PyTuple};

use crate::engine::batch::{
    max_line_bytes, too_many_jobs, BatchError, MAX_JOBS, MAX_LINE_VARIABLE,
};
use crate::py::args::Arg;
use crate::py::errors::{build, wrong_type};

/// A batch error as `BatchCore` raises it (also `split_file`'s).
pub(crate) fn batch_error(py: Python<'_>, err: BatchError) -> PyErr {
    match err {
        BatchError::File { source, errno } => {
            build(py, "file_error", (source, errno).into_pyobject(py))
        }
        BatchError::Compressed {
            source,
            format,
            truncated,
            offset,
        } => build(
            py,
            "compressed_error",
            (source, format, truncated, offset).into_pyobject(py),
        ),
        BatchError::TooManyStreams {
            limit,
            source,
            line,
        } => build(
            py,
            "too_many_streams",
            (limit, source, line).into_pyobject(py),
        ),
        BatchError::LongLine {
            source,
            line,
            limit,
        } => build(py, "long_line", (source, line, limit).into_pyobject(py)),
        BatchError::Option(detail) => build(py, "batch_option", (detail,).into_pyobject(py)),
        BatchError::Internal(text) => {
            PyRuntimeError::new_err(format!("fastmerge engine error: {text}"))
        }
    }
}

/// A path's text, `obj` an exact `str`: a name the file system holds as bytes that are not
/// UTF-8 comes as lone surrogates, which the engine cannot name its items and errors by:
/// refused by name, as the twin refuses it (never a `UnicodeEncodeError` from deep inside).
pub(super) fn path_text(py: Python<'_>, obj: &Bound<'_, PyString>) -> PyResult<String> {
    match obj.to_str() {
        Ok(text) => Ok(text.to_owned()),
        Err(_) => {
            let detail = format!(
                "{}: the file name is not UTF-8: rename the file (the batch engine names each \
                 input by its text)",
                obj.repr()?
            );
            Err(batch_error(py, BatchError::Option(detail)))
        }
    }
}

/// An exact `str` argument naming a file: its text (see [`path_text`]), or the twin's
/// `TypeError`.
pub(super) fn path_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(text) if obj.get_type().is(py.get_type::<PyString>()) => path_text(py, text),
        _ => Err(wrong_type(py, name, "a str", obj)),
    }
}

/// An exact `str` argument's text, or the twin's `TypeError`.
pub(crate) fn text_arg(py: Python<'_>, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(text) if obj.get_type().is(py.get_type::<PyString>()) => Ok(text.to_str()?.to_owned()),
        _ => Err(wrong_type(py, name, "a str", obj)),
    }
}

/// A count: an exact int (not a bool nor a subclass, as the twin checks; None for anything
/// else), `least` or more, as a usize (beyond any count: as large as one can be, which the
/// engine's checks still hold to; the twin names the same number).
pub(super) fn count_of(
    py: Python<'_>,
    name: &str,
    obj: &Bound<'_, PyAny>,
    least: u8,
) -> PyResult<Option<usize>> {
    if !obj.is_exact_instance_of::<PyInt>() {
        return Ok(None);
    }
    if obj.lt(least)? {
        let detail = format!("{name} must be {least} or more, not {}", obj.str()?);
        return Err(batch_error(py, BatchError::Option(detail)));
    }
    Ok(Some(obj.extract::<usize>().unwrap_or(usize::MAX)))
}

/// `jobs` / `max_open_streams`: an int, 0 or more (`jobs` at most [`MAX_JOBS`]).
pub(super) fn count_arg(py: Python<'_>, name: &str, arg: &Arg<'_>) -> PyResult<usize> {
    let Arg::Given(obj) = arg else { return Ok(0) };
    let value = count_of(py, name, obj, 0)?.ok_or_else(|| wrong_type(py, name, "an int", obj))?;
    if name == "jobs" && value > MAX_JOBS {
        return Err(batch_error(py, too_many_jobs(value)));
    }
    Ok(value)
}

/// `BatchCore`'s `bucket`: a tuple `(bucket, buckets)` of two ints, 0 or more (the engine
/// checks the rest).
pub(super) fn bucket_arg(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let wrong = || wrong_type(py, "bucket", "a tuple (bucket, buckets) of int", obj);
    let tuple = match obj.cast::<PyTuple>() {
        Ok(tuple) if obj.get_type().is(py.get_type::<PyTuple>()) && tuple.len() == 2 => tuple,
        _ => return Err(wrong()),
    };
    let mut values = [0usize; 2];
    for (at, name) in ["bucket", "buckets"].into_iter().enumerate() {
        values[at] = count_of(py, name, &tuple.get_item(at)?, 0)?.ok_or_else(wrong)?;
    }
    Ok((values[0], values[1]))
}

/// The longest record line read, as [`MAX_LINE_VARIABLE`] sets it (an option error when its
/// value is not a number of bytes).
pub(super) fn max_line_arg(py: Python<'_>) -> PyResult<usize> {
    max_line_bytes(std::env::var_os(MAX_LINE_VARIABLE).as_deref()).map_err(|e| batch_error(py, e))
}

/// A timeout in seconds as a wait: a negative one is none, NaN or an infinite one forever.
pub(super) fn timeout_arg(timeout: Option<f64>) -> Option<Duration> {
    match timeout {
        None => None,
        Some(t) if t.is_finite() && t >= 0.0 => Some(Duration::from_secs_f64(t.min(1e9))),
        Some(t) if t.is_finite() => Some(Duration::ZERO),
        Some(_) => None,
    }
}
