//! The engine's [`Host`] for Python objects: each method is the one CPython operation the
//! twin performs at that point (`+`, `dict.copy()`, `key in d`, `hash`, `==`, ...), so both
//! backends run the same operations on the same objects. No merge rule lives here.

use std::borrow::Cow;
use std::os::raw::c_int;

use pyo3::exceptions::{PyException, PyNotImplementedError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::{ffi, intern};

use crate::engine::error::EngineError;
use crate::engine::host::{Class, Host, Kind, Pairs};
use crate::py::errors::engine_error;

/// `hasattr(obj, name)` without creating the AttributeError a miss raises inside: that
/// exception costs more than the whole merge of two small dicts.
#[cfg(Py_3_13)]
unsafe fn has_attr_raw(obj: *mut ffi::PyObject, name: *mut ffi::PyObject) -> c_int {
    ffi::PyObject_HasAttrWithError(obj, name)
}

#[cfg(not(Py_3_13))]
unsafe fn has_attr_raw(obj: *mut ffi::PyObject, name: *mut ffi::PyObject) -> c_int {
    extern "C" {
        // CPython 3.7-3.12; 3.13 made it public as PyObject_GetOptionalAttr.
        fn _PyObject_LookupAttr(
            obj: *mut ffi::PyObject,
            name: *mut ffi::PyObject,
            result: *mut *mut ffi::PyObject,
        ) -> c_int;
    }
    let mut found: *mut ffi::PyObject = std::ptr::null_mut();
    let rc = _PyObject_LookupAttr(obj, name, &mut found);
    ffi::Py_XDECREF(found);
    rc
}

/// `a == b` for two exact `str`: what `str.__eq__` computes. CPython keeps every str in its
/// narrowest kind, so equal strings have equal kinds and equal bytes.
unsafe fn exact_str_eq(a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> bool {
    let len = ffi::PyUnicode_GET_LENGTH(a);
    if len != ffi::PyUnicode_GET_LENGTH(b) {
        return false;
    }
    let kind = ffi::PyUnicode_KIND(a);
    if kind != ffi::PyUnicode_KIND(b) {
        return false;
    }
    let bytes = len as usize * kind as usize;
    let (x, y) = (
        ffi::PyUnicode_DATA(a) as *const u8,
        ffi::PyUnicode_DATA(b) as *const u8,
    );
    std::slice::from_raw_parts(x, bytes) == std::slice::from_raw_parts(y, bytes)
}

pub struct PyHost<'py> {
    pub py: Python<'py>,
}

impl<'py> Host for PyHost<'py> {
    type Obj = Bound<'py, PyAny>;
    type Err = PyErr;

    fn error(&self, err: EngineError<Self::Obj>) -> PyErr {
        engine_error(self.py, err)
    }

    fn model_rule_swallows(&self, err: &PyErr) -> bool {
        let py = self.py;
        if !err.is_instance_of::<PyException>(py) {
            return false;
        }
        // The same test as the twin's `except (DepthLimitError, CycleError): raise`.
        let Ok(errors) = py.import("fastmerge.errors") else {
            return true;
        };
        let value = err.value(py);
        !["DepthLimitError", "CycleError"].iter().any(|name| {
            errors
                .getattr(*name)
                .is_ok_and(|cls| value.is_instance(&cls).unwrap_or(false))
        })
    }

    fn class(&self, obj: &Self::Obj) -> Class {
        // Exact checks first: they are pointer compares, and cover nearly every value.
        let (kind, exact) = if obj.is_none() {
            (Kind::Null, true)
        } else if obj.is_exact_instance_of::<PyString>() {
            (Kind::Str, true)
        } else if obj.is_exact_instance_of::<PyDict>() {
            (Kind::Dict, true)
        } else if obj.is_exact_instance_of::<PyList>() {
            (Kind::List, true)
        } else if obj.is_instance_of::<PyBool>() {
            (Kind::Bool, true)
        } else if obj.is_instance_of::<PyInt>() {
            (Kind::Int, obj.is_exact_instance_of::<PyInt>())
        } else if obj.is_instance_of::<PyFloat>() {
            (Kind::Float, obj.is_exact_instance_of::<PyFloat>())
        } else if obj.is_instance_of::<PyString>() {
            (Kind::Str, false)
        } else if obj.is_instance_of::<PyDict>() {
            (Kind::Dict, false)
        } else if obj.is_instance_of::<PyList>() {
            (Kind::List, false)
        } else {
            (Kind::Other, false)
        };
        Class { kind, exact }
    }

    fn type_name(&self, obj: &Self::Obj) -> String {
        obj.get_type()
            .getattr("__name__")
            .and_then(|name| name.extract::<String>())
            .unwrap_or_else(|_| String::from("object"))
    }

    fn identity(&self, obj: &Self::Obj) -> Option<usize> {
        Some(obj.as_ptr() as usize)
    }

    fn none(&self) -> Self::Obj {
        self.py.None().into_bound(self.py)
    }

    fn str_obj(&self, text: &str) -> Self::Obj {
        PyString::new(self.py, text).into_any()
    }

    fn str_text<'a>(&self, obj: &'a Self::Obj) -> Option<Cow<'a, str>> {
        let text = obj.cast::<PyString>().ok()?;
        // `to_str` fails on a lone surrogate; such text is neither blank nor a keyword.
        text.to_str().ok().map(Cow::Borrowed)
    }

    fn int_i64(&self, obj: &Self::Obj) -> Option<i64> {
        if obj.is_exact_instance_of::<PyInt>() {
            obj.extract::<i64>().ok()
        } else {
            None
        }
    }

    fn add(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<Self::Obj> {
        a.add(b)
    }

    fn try_add(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<Option<Self::Obj>> {
        match a.add(b) {
            Ok(sum) => Ok(Some(sum)),
            Err(err)
                if err.is_instance_of::<PyTypeError>(self.py)
                    || err.is_instance_of::<PyNotImplementedError>(self.py) =>
            {
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    fn eq(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<bool> {
        if a.is(b) {
            return Ok(true);
        }
        if a.is_exact_instance_of::<PyString>() && b.is_exact_instance_of::<PyString>() {
            // SAFETY: both are exact, live str objects.
            return Ok(unsafe { exact_str_eq(a.as_ptr(), b.as_ptr()) });
        }
        // `PyObject_RichCompareBool`: identity first, then `==`, as dict lookups compare.
        // SAFETY: both pointers are live objects held by `a` and `b`.
        match unsafe { ffi::PyObject_RichCompareBool(a.as_ptr(), b.as_ptr(), ffi::Py_EQ) } {
            -1 => Err(PyErr::fetch(self.py)),
            rc => Ok(rc == 1),
        }
    }

    fn truthy(&self, obj: &Self::Obj) -> PyResult<bool> {
        obj.is_truthy()
    }

    fn has_attr(&self, obj: &Self::Obj, name: &str) -> PyResult<bool> {
        let py = self.py;
        let name = match name {
            "__add__" => intern!(py, "__add__").clone(),
            "model_fields" => intern!(py, "model_fields").clone(),
            "model_dump" => intern!(py, "model_dump").clone(),
            other => PyString::new(py, other),
        };
        // SAFETY: `obj` and `name` are live objects; `has_attr_raw` returns -1 only with an
        // exception set.
        match unsafe { has_attr_raw(obj.as_ptr(), name.as_ptr()) } {
            -1 => Err(PyErr::fetch(py)),
            rc => Ok(rc == 1),
        }
    }

    fn same_type(&self, a: &Self::Obj, b: &Self::Obj) -> bool {
        a.get_type().is(b.get_type())
    }

    fn join(&self, pieces: &[Self::Obj]) -> PyResult<Self::Obj> {
        if let [first, second] = pieces {
            return first.add(second);
        }
        let list = PyList::new(self.py, pieces)?;
        let empty = PyString::new(self.py, "");
        // SAFETY: both arguments are live str / list objects; the result is a new reference
        // or NULL with an exception set, which `from_owned_ptr_or_err` turns into a PyErr.
        unsafe {
            Bound::from_owned_ptr_or_err(
                self.py,
                pyo3::ffi::PyUnicode_Join(empty.as_ptr(), list.as_ptr()),
            )
        }
    }

    fn list_items(&self, list: &Self::Obj) -> PyResult<Vec<Self::Obj>> {
        Ok(list.cast::<PyList>()?.iter().collect())
    }

    fn new_list(&self, items: Vec<Self::Obj>) -> PyResult<Self::Obj> {
        Ok(PyList::new(self.py, items)?.into_any())
    }

    fn dict_items(&self, dict: &Self::Obj) -> PyResult<Pairs<Self::Obj>> {
        if let Ok(exact) = dict.cast_exact::<PyDict>() {
            let mut pairs = Vec::with_capacity(exact.len());
            pairs.extend(exact.iter());
            return Ok(pairs);
        }
        // A subclass: iterate what its own `items()` gives, as `for k, v in d.items()` does.
        let mut pairs = Vec::new();
        for item in dict.call_method0("items")?.try_iter()? {
            let item = item?;
            let pair = item.cast::<PyTuple>()?;
            if pair.len() != 2 {
                return Err(PyTypeError::new_err(format!(
                    "items() gave a tuple of length {}, expected 2",
                    pair.len()
                )));
            }
            pairs.push((pair.get_item(0)?, pair.get_item(1)?));
        }
        Ok(pairs)
    }

    fn dict_get_str(&self, dict: &Self::Obj, key: &str) -> PyResult<Option<Self::Obj>> {
        dict.cast::<PyDict>()?.get_item(key)
    }

    fn new_dict(&self, pairs: Vec<(Self::Obj, Self::Obj)>) -> PyResult<Self::Obj> {
        let dict = PyDict::new(self.py);
        for (key, value) in pairs {
            dict.set_item(key, value)?;
        }
        Ok(dict.into_any())
    }

    fn dict_of(&self, dict: &Self::Obj) -> PyResult<Self::Obj> {
        self.py.get_type::<PyDict>().call1((dict,))
    }

    fn key_hash(&self, key: &Self::Obj) -> PyResult<i64> {
        Ok(key.hash()? as i64)
    }

    fn call_copy(&self, mapping: &Self::Obj) -> PyResult<Self::Obj> {
        if mapping.is_exact_instance_of::<PyDict>() {
            return Ok(mapping.cast::<PyDict>()?.copy()?.into_any());
        }
        mapping.call_method0("copy")
    }

    fn lookup(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<Option<Self::Obj>> {
        if mapping.is_exact_instance_of::<PyDict>() {
            return mapping.cast::<PyDict>()?.get_item(key);
        }
        // Whatever `copy()` returned: `key in m`, then `m[key]`, as openJiuwen does.
        if mapping.contains(key)? {
            Ok(Some(mapping.get_item(key)?))
        } else {
            Ok(None)
        }
    }

    fn get_or_none(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<Self::Obj> {
        mapping.call_method1("get", (key,))
    }

    fn set_item(&self, mapping: &mut Self::Obj, key: Self::Obj, value: Self::Obj) -> PyResult<()> {
        mapping.set_item(key, value)
    }

    fn model_dump(&self, obj: &Self::Obj) -> PyResult<Self::Obj> {
        if obj.hasattr("model_dump")? {
            obj.call_method0("model_dump")
        } else {
            obj.call_method0("dict")
        }
    }

    fn keys_union(&self, a: &Self::Obj, b: &Self::Obj) -> PyResult<Vec<Self::Obj>> {
        let union = a.call_method0("keys")?.bitor(b.call_method0("keys")?)?;
        union.try_iter()?.collect()
    }

    fn construct_like(
        &self,
        like: &Self::Obj,
        fields: Vec<(Self::Obj, Self::Obj)>,
    ) -> PyResult<Self::Obj> {
        let kwargs = PyDict::new(self.py);
        for (name, value) in fields {
            kwargs.set_item(name, value)?;
        }
        like.get_type().call((), Some(&kwargs))
    }
}
