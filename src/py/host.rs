//! The engine's [`Host`] for Python objects: each method is the one CPython operation the
//! twin performs at that point (`+`, `dict.copy()`, `key in d`, `hash`, `==`, ...), so both
//! backends run the same operations on the same objects. No merge rule lives here.

use std::borrow::Cow;

use pyo3::exceptions::{PyException, PyNotImplementedError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::engine::error::EngineError;
use crate::engine::host::{Class, Host, Kind};
use crate::py::errors::engine_error;

pub struct PyHost<'py> {
    pub py: Python<'py>,
}

impl<'py> Host for PyHost<'py> {
    type Obj = Bound<'py, PyAny>;
    type Err = PyErr;

    fn error(&self, err: EngineError<Self::Obj>) -> PyErr {
        engine_error(self.py, err)
    }

    fn is_exception(&self, err: &PyErr) -> bool {
        err.is_instance_of::<PyException>(self.py)
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

    fn int_obj(&self, value: i64) -> Self::Obj {
        PyInt::new(self.py, value).into_any()
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
        Ok(a.is(b) || a.eq(b)?)
    }

    fn truthy(&self, obj: &Self::Obj) -> PyResult<bool> {
        obj.is_truthy()
    }

    fn has_attr(&self, obj: &Self::Obj, name: &str) -> PyResult<bool> {
        obj.hasattr(name)
    }

    fn same_type(&self, a: &Self::Obj, b: &Self::Obj) -> bool {
        a.get_type().is(b.get_type())
    }

    fn join(&self, pieces: &[Self::Obj]) -> PyResult<Self::Obj> {
        let list = PyList::new(self.py, pieces)?;
        PyString::new(self.py, "").call_method1("join", (list,))
    }

    fn list_items(&self, list: &Self::Obj) -> PyResult<Vec<Self::Obj>> {
        Ok(list.cast::<PyList>()?.iter().collect())
    }

    fn new_list(&self, items: Vec<Self::Obj>) -> PyResult<Self::Obj> {
        Ok(PyList::new(self.py, items)?.into_any())
    }

    fn dict_items(&self, dict: &Self::Obj) -> PyResult<Vec<(Self::Obj, Self::Obj)>> {
        if dict.is_exact_instance_of::<PyDict>() {
            return Ok(dict.cast::<PyDict>()?.iter().collect());
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
        mapping.call_method0("copy")
    }

    fn contains(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<bool> {
        mapping.contains(key)
    }

    fn get_item(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<Self::Obj> {
        mapping.get_item(key)
    }

    fn get_or_none(&self, mapping: &Self::Obj, key: &Self::Obj) -> PyResult<Self::Obj> {
        mapping.call_method1("get", (key,))
    }

    fn set_item(&self, mapping: &Self::Obj, key: Self::Obj, value: Self::Obj) -> PyResult<()> {
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
