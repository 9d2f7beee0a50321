//! The module's functions: check arguments, run the engine on Python objects.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::engine::generic::langchain_chunks;
use crate::engine::host::{Host, Kind};
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

/// LangChain's `reduce(operator.add, chunks)` over dicts of `AIMessageChunk` fields, in
/// linear time; None if empty (the twin's `add_ai_message_chunks`).
#[pyfunction]
fn add_ai_message_chunks<'py>(
    py: Python<'py>,
    items: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let iterator = items.try_iter()?;
    langchain_chunks::add_ai_message_chunks(&PyHost { py }, iterator)
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

/// The total a finished usage dict stands for (rules §5): the reported total, unless it is
/// missing or zero where counts were given: then input + output.
#[pyfunction]
fn usage_total<'py>(py: Python<'py>, usage: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    chunks::usage_total(&PyHost { py }, &usage)
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
    m.add_function(wrap_pyfunction!(add_ai_message_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(concat_token_ids, m)?)?;
    m.add_function(wrap_pyfunction!(merge_logprobs, m)?)?;
    m.add_function(wrap_pyfunction!(usage_total, m)?)?;
    m.add_function(wrap_pyfunction!(copy_tree, m)?)?;
    m.add_function(wrap_pyfunction!(freeze_tree, m)?)?;
    Ok(())
}

/// A copy of `value` for a reader: every dict and list at every depth (instances of
/// subclasses become `dict` / `list`), other values shared: the engine's `own`, the twin's
/// `copy_tree` (`fastmerge._frozen.json_copy`).
#[pyfunction]
fn copy_tree<'py>(py: Python<'py>, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let _pause = crate::py::convert::GcPause::new(py);
    copy_at(&PyHost { py }, &value, 0)
}

/// `value` with every dict and list copied read-only (`fastmerge._frozen.FrozenDict` /
/// `FrozenList`), other values shared; a tree already frozen as it is: the twin's
/// `freeze_tree`, with the same depth limit and the same order of reading (`items()` of a
/// dict subclass, iteration of a list subclass).
#[pyfunction]
fn freeze_tree<'py>(py: Python<'py>, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let frozen = crate::py::convert::Frozen::get(py)?;
    if frozen.is_frozen(&value) {
        return Ok(value);
    }
    freeze_at(&PyHost { py }, frozen, &value, 0)
}

fn freeze_at<'py>(
    host: &PyHost<'py>,
    frozen: &crate::py::convert::Frozen,
    obj: &Bound<'py, PyAny>,
    depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let py = host.py;
    let is_dict = obj.is_instance_of::<PyDict>();
    if !is_dict && !obj.is_instance_of::<PyList>() {
        return Ok(obj.clone());
    }
    chunks::map::depth_limit(host, depth)?;
    let deeper = |value: &Bound<'py, PyAny>| {
        stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
            freeze_at(host, frozen, value, depth + 1)
        })
    };
    if is_dict {
        let out = frozen.new_dict(py)?;
        let items = obj.call_method0("items")?;
        for pair in items.try_iter()? {
            let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = pair?.extract()?;
            let value = deeper(&value)?;
            // SAFETY: `out` is a FrozenDict (a dict); key and value are borrowed.
            if unsafe { ffi::PyDict_SetItem(out.as_ptr(), key.as_ptr(), value.as_ptr()) } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(out)
    } else {
        let out = frozen.new_list(py)?;
        for item in obj.try_iter()? {
            let item = deeper(&item?)?;
            // SAFETY: `out` is a FrozenList (a list); the item is borrowed.
            if unsafe { ffi::PyList_Append(out.as_ptr(), item.as_ptr()) } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(out)
    }
}

/// `own` for readers of large fields (20,000 logprobs entries): an exact dict or list is
/// cloned whole by CPython (`PyDict_Copy`, `PyList_GetSlice`: one table copy, no per-key
/// work) and only its containers are replaced by their copies; anything else, a subclass
/// included, takes the engine's `own_at`, so the result and the errors are the same.
fn copy_at<'py>(
    host: &PyHost<'py>,
    obj: &Bound<'py, PyAny>,
    depth: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let py = host.py;
    let is_dict = obj.is_exact_instance_of::<PyDict>();
    if !is_dict && !obj.is_exact_instance_of::<PyList>() {
        return chunks::map::own_at(host, obj, depth);
    }
    chunks::map::depth_limit(host, depth)?;
    // The copy is fresh and nobody else holds it, so replacing its values in place is safe
    // even if copying a value runs user code (a subclass's `items()`).
    let nested =
        |value: &Bound<'py, PyAny>| matches!(host.class(value).kind, Kind::Dict | Kind::List);
    let deeper = |value: &Bound<'py, PyAny>| {
        stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
            copy_at(host, value, depth + 1)
        })
    };
    if is_dict {
        let copy = obj.cast::<PyDict>()?.copy()?;
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: `copy` is a dict; PyDict_Next lends `key` and `value`, which are taken as
        // new references before use; assigning an existing key's value while iterating is
        // allowed (the set of keys does not change).
        while unsafe { ffi::PyDict_Next(copy.as_ptr(), &mut pos, &mut key, &mut value) } != 0 {
            let value = unsafe { Bound::from_borrowed_ptr(py, value) };
            if nested(&value) {
                let key = unsafe { Bound::from_borrowed_ptr(py, key) };
                copy.set_item(key, deeper(&value)?)?;
            }
        }
        Ok(copy.into_any())
    } else {
        let list = obj.cast::<PyList>()?;
        let copy = list.get_slice(0, list.len());
        for index in 0..copy.len() {
            let item = copy.get_item(index)?;
            if nested(&item) {
                copy.set_item(index, deeper(&item)?)?;
            }
        }
        Ok(copy.into_any())
    }
}
