//! What the merge rules need from a value model: classification and the few primitive
//! operations openJiuwen's Python code performs (`+`, `dict.copy()`, `key in d`, ...).
//!
//! A host implements primitives only. Which primitive runs when is decided by the rules in
//! [`crate::engine::generic`], once for every host.

use crate::engine::error::EngineError;

/// The kind of a value, as the rules see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    List,
    Dict,
    Other,
}

/// A value's kind, and whether its type is exactly the built-in one (not a subclass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class {
    pub kind: Kind,
    pub exact: bool,
}

impl Class {
    pub const fn exact(kind: Kind) -> Self {
        Class { kind, exact: true }
    }
    pub fn is(self, kind: Kind) -> bool {
        self.kind == kind
    }
    pub fn is_exact(self, kind: Kind) -> bool {
        self.kind == kind && self.exact
    }
}

/// A dict's items, in order.
pub type Pairs<O> = Vec<(O, O)>;

/// Primitive operations on one value model.
///
/// Methods that mirror a Python operation say which; an error they return is the error that
/// operation raises in Python (for the engine's own values, the operation cannot fail or is
/// never reached).
pub trait Host {
    type Obj: Clone;
    type Err;

    /// An engine error, as this host reports errors.
    fn error(&self, err: EngineError<Self::Obj>) -> Self::Err;
    /// Whether the model rule's `except Exception` swallows this error: an `Exception`, but
    /// neither `DepthLimitError` nor `CycleError` (the merge's own limits always propagate).
    fn model_rule_swallows(&self, err: &Self::Err) -> bool;

    fn class(&self, obj: &Self::Obj) -> Class;
    /// `type(obj).__name__`.
    fn type_name(&self, obj: &Self::Obj) -> String;
    /// Pointer identity (`id(obj)`); `None` where values have no identity (owned values).
    fn identity(&self, obj: &Self::Obj) -> Option<usize>;
    fn none(&self) -> Self::Obj;
    fn str_obj(&self, text: &str) -> Self::Obj;

    /// The text of a `str` value, if it is valid Unicode (a lone surrogate makes it `None`).
    fn str_text<'a>(&self, obj: &'a Self::Obj) -> Option<std::borrow::Cow<'a, str>>;
    /// The value of an exact `int` that fits in 64 bits.
    fn int_i64(&self, obj: &Self::Obj) -> Option<i64>;

    /// `a + b`, Python's binary operator (exceptions propagate).
    fn add(&self, a: &Self::Obj, b: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `a + b`, with `TypeError` / `NotImplementedError` turned into `None`.
    fn try_add(&self, a: &Self::Obj, b: &Self::Obj) -> Result<Option<Self::Obj>, Self::Err>;
    /// `a is b or bool(a == b)`.
    fn eq(&self, a: &Self::Obj, b: &Self::Obj) -> Result<bool, Self::Err>;
    /// `bool(obj)`.
    fn truthy(&self, obj: &Self::Obj) -> Result<bool, Self::Err>;
    /// `hasattr(obj, name)`.
    fn has_attr(&self, obj: &Self::Obj, name: &str) -> Result<bool, Self::Err>;
    /// `type(a) is type(b)`.
    fn same_type(&self, a: &Self::Obj, b: &Self::Obj) -> bool;

    /// `repr(obj)`, as a host string.
    fn repr(&self, obj: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `format(obj, "")` (what an f-string's `{obj}` gives), as a host string.
    fn format(&self, obj: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `True` / `False`.
    fn bool_obj(&self, value: bool) -> Self::Obj;
    /// An exact `int`.
    fn int_obj(&self, value: i64) -> Self::Obj;
    /// The same error again (an error a chunk leaf raises each time it is folded).
    fn clone_err(&self, err: &Self::Err) -> Self::Err;
    /// `list(obj)`: the items `for item in obj` yields.
    fn iterate(&self, obj: &Self::Obj) -> Result<Vec<Self::Obj>, Self::Err>;
    /// `getattr(obj, name)(*args)`.
    fn call_method(
        &self,
        obj: &Self::Obj,
        name: &str,
        args: Vec<Self::Obj>,
    ) -> Result<Self::Obj, Self::Err>;
    /// `obj[key]` for a `str` key.
    fn get_item_str(&self, obj: &Self::Obj, key: &str) -> Result<Self::Obj, Self::Err>;

    /// `"".join(pieces)`: exact `str` pieces (generic merge), or any objects (chunk merge: a
    /// piece that is not a `str` raises join's `TypeError`).
    fn join(&self, pieces: &[Self::Obj]) -> Result<Self::Obj, Self::Err>;
    /// The elements of a list (any `list`).
    fn list_items(&self, list: &Self::Obj) -> Result<Vec<Self::Obj>, Self::Err>;
    fn new_list(&self, items: Vec<Self::Obj>) -> Result<Self::Obj, Self::Err>;

    /// `list(d.items())`: the pairs of an exact dict, or what a subclass's `items()` yields.
    fn dict_items(&self, dict: &Self::Obj) -> Result<Pairs<Self::Obj>, Self::Err>;
    /// `dict.get(d, key)` for a `str` key, bypassing any override.
    fn dict_get_str(&self, dict: &Self::Obj, key: &str) -> Result<Option<Self::Obj>, Self::Err>;
    /// A new exact dict from pairs, in order (a later equal key overwrites the value).
    fn new_dict(&self, pairs: Vec<(Self::Obj, Self::Obj)>) -> Result<Self::Obj, Self::Err>;
    /// `dict(d)`: a new exact dict with `d`'s items.
    fn dict_of(&self, dict: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `hash(key)`, as a dict uses it.
    fn key_hash(&self, key: &Self::Obj) -> Result<i64, Self::Err>;

    // The mapping protocol, as openJiuwen's merge_dicts uses it (any dict, subclasses too).
    /// `m.copy()`.
    fn call_copy(&self, mapping: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `m[key] if key in m else <absent>`.
    fn lookup(&self, mapping: &Self::Obj, key: &Self::Obj) -> Result<Option<Self::Obj>, Self::Err>;
    /// `m.get(key)`.
    fn get_or_none(&self, mapping: &Self::Obj, key: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `m[key] = value`.
    fn set_item(
        &self,
        mapping: &mut Self::Obj,
        key: Self::Obj,
        value: Self::Obj,
    ) -> Result<(), Self::Err>;

    // Pydantic models (openJiuwen's `merge_pydantic_models`).
    /// `obj.model_dump() if hasattr(obj, "model_dump") else obj.dict()`.
    fn model_dump(&self, obj: &Self::Obj) -> Result<Self::Obj, Self::Err>;
    /// `list(a.keys() | b.keys())`, in the set's iteration order.
    fn keys_union(&self, a: &Self::Obj, b: &Self::Obj) -> Result<Vec<Self::Obj>, Self::Err>;
    /// `type(like)(**dict(fields))`.
    fn construct_like(
        &self,
        like: &Self::Obj,
        fields: Vec<(Self::Obj, Self::Obj)>,
    ) -> Result<Self::Obj, Self::Err>;
}
