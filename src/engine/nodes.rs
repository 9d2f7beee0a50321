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
}

impl<O> ListAcc<O> {
    pub(crate) fn new() -> Self {
        ListAcc {
            items: Vec::new(),
            slots: HashMap::new(),
        }
    }
}

/// Below this many keys a linear scan over the cached hashes beats a hash map.
const SCAN_LIMIT: usize = 12;

/// An exact dict still growing: entries in first-insertion order, found by Python dict
/// semantics (equal hash, then identity or `==`).
pub(crate) struct DictAcc<O> {
    pub(crate) keys: Vec<O>,
    pub(crate) vals: Vec<Node<O>>,
    hashes: Vec<i64>,
    by_hash: Option<HashMap<i64, Vec<usize>>>,
    /// Where the scan starts: just after the last key found. Deltas of one stream repeat
    /// their keys in one order, so the next key is usually the next entry.
    hint: std::cell::Cell<usize>,
    /// For an accumulator opened from an existing dict: a private copy of it (`dict(d)`,
    /// which keeps the hashes the dict stored). It becomes the result, so finishing sets only
    /// the entries a merge changed or added and never hashes the copied keys a second time.
    pub(crate) base: Option<O>,
    /// Per copied entry, the key a merge changed it under (the right side's key, already
    /// hashed by that lookup), or `None` while it is unchanged.
    pub(crate) changed: Vec<Option<O>>,
}

impl<O: Clone> DictAcc<O> {
    /// The entries of an existing exact dict.
    pub(crate) fn open<H: Host<Obj = O>>(host: &H, pairs: Vec<(O, O)>) -> Result<Self, H::Err> {
        let mut acc = DictAcc {
            keys: Vec::with_capacity(pairs.len()),
            vals: Vec::with_capacity(pairs.len()),
            hashes: Vec::with_capacity(pairs.len()),
            by_hash: None,
            hint: std::cell::Cell::new(0),
            base: None,
            changed: Vec::new(),
        };
        for (key, value) in pairs {
            let hash = host.key_hash(&key)?;
            acc.push_hashed(key, hash, Node::Leaf(value));
        }
        Ok(acc)
    }

    /// An existing exact dict, to be extended: its copy is the result to be (see `base`).
    pub(crate) fn open_copy<H: Host<Obj = O>>(host: &H, dict: &O) -> Result<Self, H::Err> {
        let copy = host.dict_of(dict)?;
        let mut acc = Self::open(host, host.dict_items(&copy)?)?;
        acc.changed = vec![None; acc.keys.len()];
        acc.base = Some(copy);
        Ok(acc)
    }

    /// Entry `i` now holds `value`, merged under `key`.
    pub(crate) fn replace(&mut self, i: usize, key: O, value: Node<O>) {
        if let Some(slot) = self.changed.get_mut(i) {
            *slot = Some(key);
        }
        self.vals[i] = value;
    }

    /// The position of `key`, if present, and its hash (for a following `push`).
    pub(crate) fn find<H: Host<Obj = O>>(
        &self,
        host: &H,
        key: &O,
    ) -> Result<(Option<usize>, i64), H::Err> {
        let hash = host.key_hash(key)?;
        match &self.by_hash {
            None => {
                // Every position once, from the hint on, wrapping around.
                let (len, start) = (self.hashes.len(), self.hint.get());
                for i in (start..len).chain(0..start.min(len)) {
                    if self.hashes[i] == hash && host.eq(&self.keys[i], key)? {
                        self.hint.set(i + 1);
                        return Ok((Some(i), hash));
                    }
                }
            }
            Some(map) => {
                if let Some(candidates) = map.get(&hash) {
                    for &i in candidates {
                        if host.eq(&self.keys[i], key)? {
                            return Ok((Some(i), hash));
                        }
                    }
                }
            }
        }
        Ok((None, hash))
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
