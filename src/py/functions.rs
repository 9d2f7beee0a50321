//! The module's functions: check arguments, run the engine on Python objects.

use pyo3::prelude::*;

use crate::engine::{chunks, generic};
use crate::py::args::{config, Arg};
use crate::py::host::PyHost;

/// Merge two values (rules §1): `policy="openjiuwen"` is a drop-in for openJiuwen's
/// `merge_parser_content`; `policy="delta"` keeps a left value against a right None, never
/// concatenates the atomic keys, can merge list elements by `index`
/// (`list_merge="by_index"`) and refuses mismatched kinds with `strict=True`.
#[pyfunction]
#[pyo3(
    signature = (left, right, *, policy = Arg::Default, list_merge = Arg::Default, strict = Arg::Default),
    text_signature = "(left, right, *, policy='openjiuwen', list_merge='concat', strict=False)"
)]
fn merge<'py>(
    py: Python<'py>,
    left: Bound<'py, PyAny>,
    right: Bound<'py, PyAny>,
    policy: Arg<'py>,
    list_merge: Arg<'py>,
    strict: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = config(py, &policy, &list_merge, &strict)?;
    generic::merge(&PyHost { py }, cfg, left, right)
}

/// `functools.reduce(merge, items)` in time linear in the total size; None if empty.
#[pyfunction]
#[pyo3(
    signature = (items, *, policy = Arg::Default, list_merge = Arg::Default, strict = Arg::Default),
    text_signature = "(items, *, policy='openjiuwen', list_merge='concat', strict=False)"
)]
fn merge_all<'py>(
    py: Python<'py>,
    items: Bound<'py, PyAny>,
    policy: Arg<'py>,
    list_merge: Arg<'py>,
    strict: Arg<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = config(py, &policy, &list_merge, &strict)?;
    let iterator = items.try_iter()?;
    generic::merge_all(&PyHost { py }, cfg, iterator)
}

/// openJiuwen's `merge_dicts`: str and list values concatenate, dicts recurse.
#[pyfunction]
fn merge_dicts<'py>(
    py: Python<'py>,
    left: Bound<'py, PyAny>,
    right: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    generic::merge_dicts(&PyHost { py }, left, right)
}

/// Streamed token ids: an empty side gives the other, two lists concatenate, else right.
#[pyfunction]
fn concat_token_ids<'py>(
    py: Python<'py>,
    left: Bound<'py, PyAny>,
    right: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    generic::concat_token_ids(&PyHost { py }, left, right)
}

/// Per-chunk logprobs: dicts merge per key (lists concatenate), lists concatenate.
#[pyfunction]
fn merge_logprobs<'py>(
    py: Python<'py>,
    left: Bound<'py, PyAny>,
    right: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    generic::merge_logprobs(&PyHost { py }, left, right)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(merge_all, m)?)?;
    m.add_function(wrap_pyfunction!(merge_dicts, m)?)?;
    m.add_function(wrap_pyfunction!(concat_token_ids, m)?)?;
    m.add_function(wrap_pyfunction!(merge_logprobs, m)?)?;
    m.add_function(wrap_pyfunction!(copy_tree, m)?)?;
    Ok(())
}

/// A copy of `value` for a reader: every dict and list at every depth (instances of
/// subclasses become `dict` / `list`), other values shared: the engine's `own`, the twin's
/// `copy_tree` (`fastmerge.parts.json_copy`).
#[pyfunction]
fn copy_tree<'py>(py: Python<'py>, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let _pause = crate::py::aggregate::GcPause::new(py);
    chunks::map::own(&PyHost { py }, &value)
}
