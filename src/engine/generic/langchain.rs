//! Policy `langchain` (docs/langchain-policy.md): LangChain's merge_content / merge_dicts /
//! merge_lists on the merge core's builders, linear where LangChain's are quadratic. The
//! twin's `_lc_*` functions, one for one. `add_ai_message_chunks`, which adds whole chunks
//! with these rules, is in `langchain_chunks`.

use crate::engine::error::EngineError;
use crate::engine::host::{Class, Host, Kind};
use crate::engine::nodes::{DictAcc, Found, ListAcc, Node};

use super::walk::{LcKey, Walk};

/// merge_dicts: a string under these keys that equals the left one is kept, not doubled.
const LC_KEEP_EQUAL: &[&str] = &["id", "output_version", "model_provider"];

/// merge_dicts: an int under these keys is an identity or a time: the right one replaces.
const LC_LAST_WINS: &[&str] = &["index", "created", "timestamp"];

/// A value read from a dict node: absent, a host value, or a builder (a list or dict still
/// growing, which is truthy and equal to no string).
enum Got<O> {
    Missing,
    Value(O),
    Builder,
}

impl<'h, H: Host> Walk<'h, H> {
    /// The host string of `key`.
    fn lc_key(&self, key: LcKey) -> H::Obj {
        match &self.lc_keys {
            Some(keys) => keys[key as usize].clone(),
            None => self.host.str_obj(key.text()),
        }
    }

    /// `dict.get(d, key)`, bypassing any override: an exact dict is read with the key string
    /// made once; a subclass through `dict_get_str`.
    pub(super) fn lc_field(&self, dict: &H::Obj, key: LcKey) -> Result<Option<H::Obj>, H::Err> {
        if self.host.class(dict).is_exact(Kind::Dict) {
            self.host.lookup(dict, &self.lc_key(key))
        } else {
            self.host.dict_get_str(dict, key.text())
        }
    }

    pub(super) fn conflict(&self, code: &'static str, values: Vec<H::Obj>) -> H::Err {
        self.host.error(EngineError::Conflict { code, values })
    }

    fn is_text(&self, node: &Node<H::Obj>) -> bool {
        match node {
            Node::Text(_) => true,
            Node::Leaf(obj) => self.host.class(obj).is(Kind::Str),
            _ => false,
        }
    }

    fn is_list(&self, node: &Node<H::Obj>) -> bool {
        match node {
            Node::List(_) => true,
            Node::Leaf(obj) => self.host.class(obj).is(Kind::List),
            _ => false,
        }
    }

    fn is_dict(&self, node: &Node<H::Obj>) -> bool {
        match node {
            Node::Dict(_) => true,
            Node::Leaf(obj) => self.host.class(obj).is(Kind::Dict),
            _ => false,
        }
    }

    /// `type(left) is type(right)` as LangChain sees it (a builder is an exact str/list/dict).
    fn lc_same_type(&self, node: &Node<H::Obj>, right: &H::Obj) -> bool {
        let rc = self.host.class(right);
        match node {
            Node::Leaf(left) => self.host.same_type(left, right),
            Node::Text(_) => rc.is_exact(Kind::Str),
            Node::List(_) => rc.is_exact(Kind::List),
            Node::Dict(_) => rc.is_exact(Kind::Dict),
        }
    }

    /// A str key among `names` (valid Unicode only, as the twin reads it).
    fn lc_is_key(&self, key: &H::Obj, names: &[&str]) -> bool {
        self.host.class(key).is(Kind::Str)
            && self
                .host
                .str_text(key)
                .is_some_and(|t| names.contains(&t.as_ref()))
    }

    /// `value is not None and value == text`.
    pub(super) fn lc_equals(&self, value: &H::Obj, text: &str) -> Result<bool, H::Err> {
        if self.host.class(value).is(Kind::Null) {
            return Ok(false);
        }
        self.host.eq(value, &self.host.str_obj(text))
    }

    fn lc_starts_lc(&self, value: &H::Obj) -> bool {
        self.host.class(value).is(Kind::Str)
            && self
                .host
                .str_text(value)
                .is_some_and(|t| t.starts_with("lc_"))
    }

    /// A text node as one host str.
    fn lc_joined(&self, node: Node<H::Obj>) -> Result<H::Obj, H::Err> {
        match node {
            Node::Text(pieces) => self.host.join(&pieces),
            other => self.finish(other),
        }
    }

    /// `merge_content` for str and list values, `merge_obj` for the rest (the twin's
    /// `_lc_top`).
    pub(super) fn lc_top(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let host = self.host;
        let rc = host.class(&right);
        if rc.is(Kind::Null) {
            return Ok(node);
        }
        if let Node::Leaf(left) = &node {
            if host.class(left).is(Kind::Null) {
                return Ok(Node::Leaf(right));
            }
        }
        if rc.is(Kind::Str) {
            if self.is_text(&node) {
                return self.concat_text(node, right, rc);
            }
            if self.is_list(&node) {
                return self.lc_list_plus_text(node, right, rc);
            }
        } else if rc.is(Kind::List) {
            if self.is_list(&node) {
                return self.lc_merge_lists(node, right, depth);
            }
            if self.is_text(&node) {
                // merge_content: `[merged, *content]`, the text first even when empty
                let mut acc = Box::new(ListAcc::new());
                acc.items.push(node);
                for item in host.list_items(&right)? {
                    self.lc_register(&mut acc, item)?;
                }
                return Ok(Node::List(acc));
            }
        } else if rc.is(Kind::Dict) && self.is_dict(&node) {
            return self.lc_merge_dict(node, right, depth + 1);
        }
        if !self.lc_same_type(&node, &right) {
            let left = self.finish(node)?;
            return Err(self.conflict("types", vec![left, right]));
        }
        let left = self.finish(node)?;
        if host.eq(&left, &right)? {
            return Ok(Node::Leaf(left));
        }
        Err(self.conflict("unequal", vec![left, right]))
    }

    /// merge_content of a list and a str (the twin's `_lc_list_plus_text`).
    fn lc_list_plus_text(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        rc: Class,
    ) -> Result<Node<H::Obj>, H::Err> {
        let mut acc = self.lc_open_list(node)?;
        if acc.items.last().is_some_and(|last| self.is_text(last)) {
            let last = acc.items.pop().unwrap_or_else(Node::placeholder);
            let joined = self.concat_text(last, right, rc)?;
            acc.items.push(joined);
        } else if self.host.eq(&right, &self.host.str_obj(""))? {
        } else if !acc.items.is_empty() {
            self.lc_register(&mut acc, right)?;
        }
        Ok(Node::List(acc))
    }

    fn lc_open_list(&mut self, node: Node<H::Obj>) -> Result<Box<ListAcc<H::Obj>>, H::Err> {
        match node {
            Node::List(acc) => Ok(acc),
            other => {
                let left = self.finish(other)?;
                let mut acc = Box::new(ListAcc::new());
                for item in self.host.list_items(&left)? {
                    self.lc_register(&mut acc, item)?;
                }
                Ok(acc)
            }
        }
    }

    /// Appends `item`; a dict with an `index` is remembered under it for merge_lists.
    fn lc_register(&mut self, acc: &mut ListAcc<H::Obj>, item: H::Obj) -> Result<(), H::Err> {
        let host = self.host;
        let position = acc.items.len();
        if host.class(&item).is(Kind::Dict) {
            if let Some(index) = self.lc_field(&item, LcKey::Index)? {
                if matches!(
                    host.class(&index).kind,
                    Kind::Int | Kind::Bool | Kind::Float | Kind::Str
                ) {
                    let hash = host.key_hash(&index)?;
                    acc.by_hash.entry(hash).or_default().push((position, index));
                }
            }
        }
        acc.items.push(Node::Leaf(item));
        Ok(())
    }

    /// The index merge_lists merges an element by: an int, or a str starting with `lc_`.
    fn lc_right_index(&self, item: &H::Obj) -> Result<Option<H::Obj>, H::Err> {
        let host = self.host;
        if !host.class(item).is(Kind::Dict) {
            return Ok(None);
        }
        Ok(self.lc_field(item, LcKey::Index)?.filter(|index| {
            matches!(host.class(index).kind, Kind::Int | Kind::Bool) || self.lc_starts_lc(index)
        }))
    }

    /// merge_lists (the twin's `_lc_merge_lists`).
    fn lc_merge_lists(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let host = self.host;
        let mut acc = self.lc_open_list(node)?;
        for item in host.list_items(&right)? {
            let Some(index) = self.lc_right_index(&item)? else {
                self.lc_register(&mut acc, item)?;
                continue;
            };
            let hash = host.key_hash(&index)?;
            let count = acc.by_hash.get(&hash).map_or(0, Vec::len);
            let mut merged = false;
            for candidate in 0..count {
                let Some((slot, left_index)) = acc
                    .by_hash
                    .get(&hash)
                    .and_then(|slots| slots.get(candidate))
                    .cloned()
                else {
                    break;
                };
                if host.eq(&left_index, &index)? && self.lc_ids_consistent(&mut acc, slot, &item)? {
                    let (element, skip_type) = self.lc_element(&mut acc, slot, &item)?;
                    let target = std::mem::replace(&mut acc.items[slot], Node::placeholder());
                    acc.items[slot] =
                        self.lc_merge_dict_skipping(target, element, depth + 1, skip_type)?;
                    merged = true;
                    break;
                }
            }
            if !merged {
                self.lc_register(&mut acc, item)?;
            }
        }
        Ok(Node::List(acc))
    }

    /// `target.get(key)` of a list element (a text builder is joined and kept joined).
    fn lc_get(
        &self,
        acc: &mut ListAcc<H::Obj>,
        slot: usize,
        key: LcKey,
    ) -> Result<Got<H::Obj>, H::Err> {
        let host = self.host;
        match &mut acc.items[slot] {
            Node::Leaf(dict) => Ok(match self.lc_field(dict, key)? {
                Some(value) => Got::Value(value),
                None => Got::Missing,
            }),
            Node::Dict(dict) => match dict.find(host, &self.lc_key(key))? {
                Found::Entry(i) => match &dict.vals[i] {
                    Node::Leaf(value) => Ok(Got::Value(value.clone())),
                    Node::Text(pieces) => {
                        let joined = host.join(pieces)?;
                        dict.vals[i] = Node::Leaf(joined.clone());
                        Ok(Got::Value(joined))
                    }
                    _ => Ok(Got::Builder),
                },
                Found::Base(value, _) => Ok(Got::Value(value)),
                Found::New(_) => Ok(Got::Missing),
            },
            _ => Ok(Got::Missing),
        }
    }

    fn lc_no_id(&self, value: &Got<H::Obj>) -> Result<bool, H::Err> {
        Ok(match value {
            Got::Missing => true,
            Got::Builder => false,
            Got::Value(v) => {
                let class = self.host.class(v);
                class.is(Kind::Null)
                    || (class.is(Kind::Str) && self.host.eq(v, &self.host.str_obj(""))?)
            }
        })
    }

    fn lc_ids_consistent(
        &self,
        acc: &mut ListAcc<H::Obj>,
        slot: usize,
        item: &H::Obj,
    ) -> Result<bool, H::Err> {
        let left_id = self.lc_get(acc, slot, LcKey::Id)?;
        let right_id = match self.lc_field(item, LcKey::Id)? {
            Some(value) => Got::Value(value),
            None => Got::Missing,
        };
        if self.lc_no_id(&left_id)? || self.lc_no_id(&right_id)? {
            return Ok(true);
        }
        match (left_id, right_id) {
            (Got::Value(l), Got::Value(r)) => self.host.eq(&l, &r),
            _ => Ok(false),
        }
    }

    /// What merge_lists merges into the element at `slot`, and whether its `type` is left out
    /// (the twin's `_lc_element`).
    fn lc_element(
        &self,
        acc: &mut ListAcc<H::Obj>,
        slot: usize,
        item: &H::Obj,
    ) -> Result<(H::Obj, bool), H::Err> {
        let host = self.host;
        let left_type = self.lc_get(acc, slot, LcKey::Type)?;
        let left_truthy = match &left_type {
            Got::Missing => false,
            Got::Builder => true,
            Got::Value(v) => host.truthy(v)?,
        };
        let value = self.lc_field(item, LcKey::Value)?;
        let without_type = |dict: &H::Obj| -> Result<H::Obj, H::Err> {
            let pairs = host
                .dict_items(dict)?
                .into_iter()
                .filter(|(k, _)| !self.lc_is_key(k, &["type"]))
                .collect();
            host.new_dict(pairs)
        };
        if left_truthy {
            if let Some(value) = value.filter(|v| host.class(v).is(Kind::Dict)) {
                let item_type = self.lc_field(item, LcKey::Type)?;
                if let Some(item_type) = item_type {
                    if self.lc_equals(&item_type, "non_standard")? {
                        let inner = without_type(&value)?;
                        let left_standard = match &left_type {
                            Got::Value(v) => !self.lc_equals(v, "non_standard")?,
                            _ => true,
                        };
                        if left_standard {
                            let extras = host.new_dict(vec![(host.str_obj("extras"), inner)])?;
                            return Ok((extras, false));
                        }
                        let index = self
                            .lc_field(item, LcKey::Index)?
                            .unwrap_or_else(|| host.none());
                        let value = host.new_dict(vec![
                            (host.str_obj("value"), inner),
                            (host.str_obj("index"), index),
                        ])?;
                        return Ok((value, false));
                    }
                }
            }
        }
        let has_type = host.lookup(item, &self.lc_key(LcKey::Type))?.is_some();
        Ok((item.clone(), has_type))
    }

    /// merge_dicts (the twin's `_lc_merge_dict`).
    fn lc_merge_dict(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        self.lc_merge_dict_skipping(node, right, depth, false)
    }

    /// merge_dicts, with `right`'s `type` left out if `skip_type` (merge_lists).
    fn lc_merge_dict_skipping(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
        skip_type: bool,
    ) -> Result<Node<H::Obj>, H::Err> {
        self.descend(right, depth, |walk, right| {
            let host = walk.host;
            let mut acc = match node {
                Node::Dict(acc) => acc,
                other => {
                    let left = walk.finish(other)?;
                    Box::new(DictAcc::open_copy(host, &left)?)
                }
            };
            for (key, right_value) in host.dict_items(&right)? {
                if skip_type && walk.lc_is_key(&key, &["type"]) {
                    continue;
                }
                let right_null = host.class(&right_value).is(Kind::Null);
                match acc.find(host, &key)? {
                    Found::New(hash) => acc.push_hashed(key, hash, Node::Leaf(right_value)),
                    Found::Entry(i) => {
                        let left_null =
                            matches!(&acc.vals[i], Node::Leaf(v) if host.class(v).is(Kind::Null));
                        if left_null {
                            if !right_null {
                                acc.vals[i] = Node::Leaf(right_value);
                            }
                        } else if !right_null {
                            let left = std::mem::replace(&mut acc.vals[i], Node::placeholder());
                            acc.vals[i] = walk.lc_value(&key, left, right_value, depth)?;
                        }
                    }
                    Found::Base(left, hash) => {
                        if host.class(&left).is(Kind::Null) {
                            if !right_null {
                                acc.push_hashed(key, hash, Node::Leaf(right_value));
                            }
                        } else if !right_null {
                            let merged =
                                walk.lc_value(&key, Node::Leaf(left), right_value, depth)?;
                            acc.push_hashed(key, hash, merged);
                        }
                    }
                }
            }
            Ok(Node::Dict(acc))
        })
    }

    /// One value of merge_dicts whose two sides are both set (the twin's `_lc_value`).
    fn lc_value(
        &mut self,
        key: &H::Obj,
        left: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let host = self.host;
        if !self.lc_same_type(&left, &right) {
            return Err(self.conflict("kwargs_type", vec![key.clone()]));
        }
        let rc = host.class(&right);
        if rc.is(Kind::Str) {
            if self.lc_is_key(key, &["index"]) {
                let joined = self.lc_joined(left)?;
                if self.lc_starts_lc(&joined) {
                    return Ok(Node::Leaf(joined));
                }
                return self.concat_text(Node::Leaf(joined), right, rc);
            }
            if self.lc_is_key(key, LC_KEEP_EQUAL) {
                let joined = self.lc_joined(left)?;
                if host.eq(&joined, &right)? {
                    return Ok(Node::Leaf(joined));
                }
                return self.concat_text(Node::Leaf(joined), right, rc);
            }
            return self.concat_text(left, right, rc);
        }
        if rc.is(Kind::Dict) {
            return self.lc_merge_dict(left, right, depth + 1);
        }
        if rc.is(Kind::List) {
            return self.lc_merge_lists(left, right, depth);
        }
        let left = self.finish(left)?;
        if host.eq(&left, &right)? {
            return Ok(Node::Leaf(left));
        }
        if host.class(&left).kind == Kind::Int {
            if self.lc_is_key(key, LC_LAST_WINS) {
                return Ok(Node::Leaf(right));
            }
            return Ok(Node::Leaf(host.add(&left, &right)?));
        }
        Err(self.conflict("kwargs_unsupported", vec![key.clone(), left]))
    }

    /// `policy="langchain"` merge_all (the twin's `_lc_merge_all`).
    pub(super) fn lc_merge_all<I>(&mut self, items: I) -> Result<H::Obj, H::Err>
    where
        I: IntoIterator<Item = Result<H::Obj, H::Err>>,
    {
        let mut items = items.into_iter();
        let mut node = match items.next() {
            None => return Ok(self.host.none()),
            Some(first) => Node::Leaf(first?),
        };
        for right in items {
            node = self.lc_top(node, right?, 0)?;
        }
        self.finish(node)
    }
}
