//! Private containers of a chunk state: [`HMap`], an insertion-ordered map with Python dict
//! semantics for host keys (equal hash, then identity or `==`), and [`Val`], a value the state
//! owns: a leaf's object, copied only when read (the twin's `_own` at fold time and `_thaw` at
//! read time give the same data, since leaves never change), or a container the fold grows.

use std::collections::HashMap;

use smallvec::SmallVec;

use crate::engine::error::EngineError;
use crate::engine::generic::MAX_DEPTH;
use crate::engine::host::{Host, Kind};

/// Below this many keys a scan over the hashes beats a hash map.
const SCAN_LIMIT: usize = 8;

/// How deep the usage merge goes before it gives up like Python's recursion limit (also the
/// guard against a container that contains itself). Copies and metadata merges stop at
/// [`MAX_DEPTH`] instead ([`depth_limit`]).
pub const MAX_COPY_DEPTH: usize = 900;

/// The chunk state's limit, the generic merge's: a container at nesting level `depth + 1`
/// (the value copied or merged is level 1) beyond [`MAX_DEPTH`] is a `DepthLimitError`, on
/// both backends (the twin's `json_copy`, `_thaw` and `_deep_merge` count the same way).
pub(crate) fn depth_limit<H: Host>(host: &H, depth: usize) -> Result<(), H::Err> {
    if depth >= MAX_DEPTH {
        return Err(host.error(EngineError::DepthLimit { limit: MAX_DEPTH }));
    }
    Ok(())
}

/// A dict the state owns: keys in first-insertion order; assigning an existing key keeps the
/// key object and its position (Python `d[k] = v`).
pub struct HMap<O, V> {
    keys: Vec<O>,
    hashes: Vec<i64>,
    vals: Vec<V>,
    index: Option<HashMap<i64, SmallVec<[usize; 1]>>>,
}

impl<O, V> Default for HMap<O, V> {
    fn default() -> Self {
        HMap {
            keys: Vec::new(),
            hashes: Vec::new(),
            vals: Vec::new(),
            index: None,
        }
    }
}

impl<O: Clone, V> HMap<O, V> {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The position of `key` (whose hash is `hash`).
    pub fn find<H: Host<Obj = O>>(
        &self,
        host: &H,
        key: &O,
        hash: i64,
    ) -> Result<Option<usize>, H::Err> {
        match &self.index {
            None => {
                for i in 0..self.hashes.len() {
                    if self.hashes[i] == hash && host.eq(&self.keys[i], key)? {
                        return Ok(Some(i));
                    }
                }
            }
            Some(map) => {
                if let Some(candidates) = map.get(&hash) {
                    for &i in candidates {
                        if host.eq(&self.keys[i], key)? {
                            return Ok(Some(i));
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    pub fn get<H: Host<Obj = O>>(
        &self,
        host: &H,
        key: &O,
        hash: i64,
    ) -> Result<Option<&V>, H::Err> {
        Ok(self.find(host, key, hash)?.map(|i| &self.vals[i]))
    }

    pub fn get_mut<H: Host<Obj = O>>(
        &mut self,
        host: &H,
        key: &O,
        hash: i64,
    ) -> Result<Option<&mut V>, H::Err> {
        Ok(self.find(host, key, hash)?.map(|i| &mut self.vals[i]))
    }

    /// `d[key] = value`.
    pub fn set<H: Host<Obj = O>>(
        &mut self,
        host: &H,
        key: O,
        hash: i64,
        value: V,
    ) -> Result<(), H::Err> {
        match self.find(host, &key, hash)? {
            Some(i) => self.vals[i] = value,
            None => self.push(key, hash, value),
        }
        Ok(())
    }

    /// A key known to be absent.
    pub fn push(&mut self, key: O, hash: i64, value: V) {
        let position = self.keys.len();
        self.keys.push(key);
        self.hashes.push(hash);
        self.vals.push(value);
        if let Some(map) = &mut self.index {
            map.entry(hash).or_default().push(position);
        } else if self.keys.len() > SCAN_LIMIT {
            let mut map: HashMap<i64, SmallVec<[usize; 1]>> =
                HashMap::with_capacity(self.keys.len() * 2);
            for (i, h) in self.hashes.iter().enumerate() {
                map.entry(*h).or_default().push(i);
            }
            self.index = Some(map);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&O, &V)> {
        self.keys.iter().zip(self.vals.iter())
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.vals.iter_mut()
    }
}

/// A value the state owns.
pub enum Val<O> {
    /// A leaf's value as given (its containers are copied when read).
    Obj(O),
    /// A dict the fold grows (deep merge, usage, logprobs).
    Dict(HMap<O, Val<O>>),
    /// A list the fold grows; its items are leaf values (copied when read).
    List(Vec<O>),
}

impl<O: Clone> Val<O> {
    /// `isinstance(v, dict)`.
    pub fn is_dict<H: Host<Obj = O>>(&self, host: &H) -> bool {
        match self {
            Val::Obj(obj) => host.class(obj).is(Kind::Dict),
            Val::Dict(_) => true,
            Val::List(_) => false,
        }
    }

    /// `isinstance(v, list)`.
    pub fn is_list<H: Host<Obj = O>>(&self, host: &H) -> bool {
        match self {
            Val::Obj(obj) => host.class(obj).is(Kind::List),
            Val::Dict(_) => false,
            Val::List(_) => true,
        }
    }

    /// The host object of a value that is not a container the fold built.
    pub fn obj(&self) -> Option<&O> {
        match self {
            Val::Obj(obj) => Some(obj),
            _ => None,
        }
    }

    /// `bool(v)`.
    pub fn truthy<H: Host<Obj = O>>(&self, host: &H) -> Result<bool, H::Err> {
        match self {
            Val::Obj(obj) => host.truthy(obj),
            Val::Dict(map) => Ok(!map.is_empty()),
            Val::List(items) => Ok(!items.is_empty()),
        }
    }

    /// This value as a dict the fold may change (`self` must be dict-like).
    pub fn open_dict<H: Host<Obj = O>>(
        &mut self,
        host: &H,
    ) -> Result<&mut HMap<O, Val<O>>, H::Err> {
        if let Val::Obj(obj) = self {
            let mut map = HMap::default();
            for (key, value) in host.dict_items(obj)? {
                let hash = host.key_hash(&key)?;
                map.set(host, key, hash, Val::Obj(value))?;
            }
            *self = Val::Dict(map);
        }
        match self {
            Val::Dict(map) => Ok(map),
            // not reached: callers open dict-like values only
            _ => Err(host.error(EngineError::Recursion)),
        }
    }

    /// This value as a list the fold may extend (`self` must be list-like).
    pub fn open_list<H: Host<Obj = O>>(&mut self, host: &H) -> Result<&mut Vec<O>, H::Err> {
        if let Val::Obj(obj) = self {
            *self = Val::List(host.list_items(obj)?);
        }
        match self {
            Val::List(items) => Ok(items),
            _ => Err(host.error(EngineError::Recursion)),
        }
    }

    /// A fresh host value with fresh containers (the twin's `_thaw`).
    pub fn thaw<H: Host<Obj = O>>(&self, host: &H) -> Result<O, H::Err> {
        thaw_at(host, self, 0)
    }
}

/// Only what the fold may still change is copied: the dicts and lists it built. A leaf's
/// value (`Val::Obj`) is never changed, so it is shared, as are the items of a list; readers
/// copy again before handing values to users (`copy_tree`).
fn thaw_at<H: Host>(host: &H, val: &Val<H::Obj>, depth: usize) -> Result<H::Obj, H::Err> {
    match val {
        Val::Obj(obj) => Ok(obj.clone()),
        Val::List(items) => host.new_list(items.clone()),
        Val::Dict(map) => {
            depth_limit(host, depth)?;
            let mut pairs = Vec::with_capacity(map.len());
            for (key, value) in map.iter() {
                let value = stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
                    thaw_at(host, value, depth + 1)
                })?;
                pairs.push((key.clone(), value));
            }
            host.new_dict(pairs)
        }
    }
}

/// The depth check of the twin's `_own` (a copy, from level 1) where the fold keeps a leaf's
/// value uncopied (it is copied when read): the same `DepthLimitError` at the same `+`.
pub(crate) fn check_depth<H: Host>(host: &H, obj: &H::Obj, depth: usize) -> Result<(), H::Err> {
    let kind = host.class(obj).kind;
    if kind != Kind::Dict && kind != Kind::List {
        return Ok(());
    }
    depth_limit(host, depth)?;
    stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
        if kind == Kind::Dict {
            for (_, value) in host.dict_items(obj)? {
                check_depth(host, &value, depth + 1)?;
            }
        } else {
            for item in host.list_items(obj)? {
                check_depth(host, &item, depth + 1)?;
            }
        }
        Ok(())
    })
}

/// The twin's `_own`: a copy of the dicts and lists of `obj` (subclasses become the built-in
/// types), other values shared.
pub fn own<H: Host>(host: &H, obj: &H::Obj) -> Result<H::Obj, H::Err> {
    own_at(host, obj, 0)
}

pub(crate) fn own_at<H: Host>(host: &H, obj: &H::Obj, depth: usize) -> Result<H::Obj, H::Err> {
    let kind = host.class(obj).kind;
    if kind != Kind::Dict && kind != Kind::List {
        return Ok(obj.clone());
    }
    depth_limit(host, depth)?;
    stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
        if kind == Kind::Dict {
            let mut pairs = Vec::new();
            for (key, value) in host.dict_items(obj)? {
                pairs.push((key, own_at(host, &value, depth + 1)?));
            }
            host.new_dict(pairs)
        } else {
            let mut items = Vec::new();
            for item in host.iterate(obj)? {
                items.push(own_at(host, &item, depth + 1)?);
            }
            host.new_list(items)
        }
    })
}
