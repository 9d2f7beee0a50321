//! Builders for the values a fold is still growing (see `generic`): text pieces, list items,
//! dict entries. Each is turned into one host value at the end, so a fold of n deltas costs
//! O(total size) instead of openJiuwen's O(n²) copying.

use std::collections::HashMap;

use crate::engine::host::{Host, Kind};

/// A value in the middle of a fold.
pub(crate) enum Node<O> {
    /// A host value, never changed by the fold.
    Leaf(O),
    /// An exact `str` still growing: its pieces (all exact `str`).
    Text(Vec<O>),
    /// An exact `list` still growing (boxed: nodes are moved at every step, keep them small).
    List(Box<ListAcc<O>>),
    /// An exact `dict` still growing.
    Dict(Box<DictAcc<O>>),
}

/// A left value as the rules look at it: a host value, or a builder of a known kind.
pub(crate) enum Side<'a, O> {
    Value(&'a O),
    Builder(Kind),
}

// Copy for every O (a derive would ask O: Copy): it holds a reference or a kind.
impl<O> Clone for Side<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for Side<'_, O> {}

impl<O> Node<O> {
    pub(crate) fn side(&self) -> Side<'_, O> {
        match self {
            Node::Leaf(obj) => Side::Value(obj),
            Node::Text(_) => Side::Builder(Kind::Str),
            Node::List(_) => Side::Builder(Kind::List),
            Node::Dict(_) => Side::Builder(Kind::Dict),
        }
    }

    /// A cheap stand-in while a node is taken out of its parent to be merged.
    pub(crate) fn placeholder() -> Self {
        Node::Text(Vec::new())
    }
}

pub(crate) struct ListAcc<O> {
    pub(crate) items: Vec<Node<O>>,
    /// by_index: element `index` value -> position of the latest element with it.
    pub(crate) slots: HashMap<i64, usize>,
    /// policy `langchain`: the hash of an element's `index` -> the position and the `index`
    /// of every element with an index of that hash, in order.
    pub(crate) by_hash: HashMap<i64, Vec<(usize, O)>>,
}

impl<O> ListAcc<O> {
    pub(crate) fn new() -> Self {
        ListAcc {
            items: Vec::new(),
            slots: HashMap::new(),
            by_hash: HashMap::new(),
        }
    }
}

/// Below this many keys a linear scan over the cached hashes beats a hash map.
const SCAN_LIMIT: usize = 12;

/// An exact dict still growing: a private copy of the dict it started from (`dict(d)`, which
/// keeps the hashes the dict stored), and the entries a merge changed or added since, in the
/// order first touched. The copied keys are never hashed again (openJiuwen's `left.copy()`
/// does not, and a key's `__hash__` may fail or change after its insertion): a key of the
/// right side is looked up among the entries, then in the copy, by its own hash.
pub(crate) struct DictAcc<O> {
    /// The copy: it becomes the result, with the entries below set into it.
    pub(crate) base: O,
    /// Changed or added entries: the key (the right side's key that first touched it, hashed
    /// once here) and its value.
    pub(crate) keys: Vec<O>,
    pub(crate) vals: Vec<Node<O>>,
    hashes: Vec<i64>,
    by_hash: Option<HashMap<i64, Vec<usize>>>,
    /// Where the scan starts: just after the last key found. Deltas of one stream repeat
    /// their keys in one order, so the next key is usually the next entry.
    hint: std::cell::Cell<usize>,
}

/// Where [`DictAcc::find`] found a key.
pub(crate) enum Found<O> {
    /// Among the changed or added entries, at this position.
    Entry(usize),
    /// In the copy, unchanged so far: its value, and the key's hash.
    Base(O, i64),
    /// Nowhere: the key's hash (for [`DictAcc::push_hashed`]).
    New(i64),
}

impl<O: Clone> DictAcc<O> {
    /// An existing exact dict, to be extended: a copy of it is the result to be.
    pub(crate) fn open_copy<H: Host<Obj = O>>(host: &H, dict: &O) -> Result<Self, H::Err> {
        Ok(DictAcc {
            base: host.dict_of(dict)?,
            keys: Vec::new(),
            vals: Vec::new(),
            hashes: Vec::new(),
            by_hash: None,
            hint: std::cell::Cell::new(0),
        })
    }

    /// Where `key` is: among the entries (by its hash, then identity or `==`), else in the
    /// copy (a dict lookup, by the hashes the copy stored), else nowhere.
    pub(crate) fn find<H: Host<Obj = O>>(&self, host: &H, key: &O) -> Result<Found<O>, H::Err> {
        let hash = host.key_hash(key)?;
        match &self.by_hash {
            None => {
                // Every position once, from the hint on, wrapping around; the hint first
                // (the next key of a chunk shaped as the last one), without the loop's setup.
                let (len, start) = (self.hashes.len(), self.hint.get());
                if start < len && self.hashes[start] == hash && host.eq(&self.keys[start], key)? {
                    self.hint.set(start + 1);
                    return Ok(Found::Entry(start));
                }
                for i in (start..len).chain(0..start.min(len)) {
                    if self.hashes[i] == hash && host.eq(&self.keys[i], key)? {
                        self.hint.set(i + 1);
                        return Ok(Found::Entry(i));
                    }
                }
            }
            Some(map) => {
                if let Some(candidates) = map.get(&hash) {
                    for &i in candidates {
                        if host.eq(&self.keys[i], key)? {
                            return Ok(Found::Entry(i));
                        }
                    }
                }
            }
        }
        Ok(match host.lookup(&self.base, key)? {
            Some(value) => Found::Base(value, hash),
            None => Found::New(hash),
        })
    }

    pub(crate) fn push_hashed(&mut self, key: O, hash: i64, value: Node<O>) {
        let position = self.keys.len();
        self.keys.push(key);
        self.vals.push(value);
        self.hashes.push(hash);
        if let Some(map) = &mut self.by_hash {
            map.entry(hash).or_default().push(position);
        } else if self.keys.len() > SCAN_LIMIT {
            let mut map: HashMap<i64, Vec<usize>> = HashMap::with_capacity(self.keys.len() * 2);
            for (i, h) in self.hashes.iter().enumerate() {
                map.entry(*h).or_default().push(i);
            }
            self.by_hash = Some(map);
        }
    }
}
