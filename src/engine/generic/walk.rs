//! The merge core every policy runs on (the twin's `_Walk`, `_decide`, `_apply`, `_fold`,
//! `_merge_objects`, `_merge_models`, `_enter`, `_apply_dict`, `_merge_dict`, `_concat_text`,
//! `_concat_list`, `_finish`): what a left and a right value make, carried out at once on
//! plain values or on builders, with the depth limit, cycle check and stack growth every
//! descent passes through. The `delta` and `langchain` rules are methods of the same
//! [`Walk`], in their own files.

use smallvec::SmallVec;

use crate::engine::error::{EngineError, PathItem};
use crate::engine::host::{Class, Host, Kind};
use crate::engine::nodes::{DictAcc, Found, ListAcc, Node, Side};

use super::config::Config;
use super::{MAX_DEPTH, STACK_GROWTH, STACK_RED_ZONE};

/// The keys the `langchain` rules read, as host strings made once per call (a host string
/// made per read would be allocated and hashed at every chunk).
#[derive(Clone, Copy)]
pub(super) enum LcKey {
    Content,
    AdditionalKwargs,
    ResponseMetadata,
    ToolCallChunks,
    UsageMetadata,
    Id,
    ChunkPosition,
    Index,
    Type,
    Value,
}

impl LcKey {
    pub(super) const ALL: [LcKey; 10] = [
        LcKey::Content,
        LcKey::AdditionalKwargs,
        LcKey::ResponseMetadata,
        LcKey::ToolCallChunks,
        LcKey::UsageMetadata,
        LcKey::Id,
        LcKey::ChunkPosition,
        LcKey::Index,
        LcKey::Type,
        LcKey::Value,
    ];
    /// The chunk fields, in `LANGCHAIN_CHUNK_FIELDS` order.
    pub(super) const FIELDS: [LcKey; 4] = [
        LcKey::Content,
        LcKey::AdditionalKwargs,
        LcKey::ResponseMetadata,
        LcKey::ToolCallChunks,
    ];

    pub(super) fn text(self) -> &'static str {
        match self {
            LcKey::Content => "content",
            LcKey::AdditionalKwargs => "additional_kwargs",
            LcKey::ResponseMetadata => "response_metadata",
            LcKey::ToolCallChunks => "tool_call_chunks",
            LcKey::UsageMetadata => "usage_metadata",
            LcKey::Id => "id",
            LcKey::ChunkPosition => "chunk_position",
            LcKey::Index => "index",
            LcKey::Type => "type",
            LcKey::Value => "value",
        }
    }
}

/// What a left and a right value make (spec §1.1, §1.2): decided once by `Walk::decide`,
/// carried out at once by `Walk::apply` or on builders by `Walk::fold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Keep,
    Right,
    Text,
    List,
    Dict,
    Atomic,
    Objects,
}

/// The state of one merge call (the twin's `_Walk`).
pub(super) struct Walk<'h, H: Host> {
    pub(super) host: &'h H,
    pub(super) cfg: Config,
    /// The keys down to the current value, for strict errors.
    pub(super) path: Vec<PathItem<H::Obj>>,
    /// Identities of the right-hand dicts open along the current path (cycle detection);
    /// inline up to a typical nesting depth, so most merges allocate nothing for it.
    pub(super) open_ids: SmallVec<[usize; 16]>,
    /// policy `langchain`: the host strings of the keys it reads, made once per call.
    pub(super) lc_keys: Option<Box<[H::Obj]>>,
}

impl<'h, H: Host> Walk<'h, H> {
    pub(super) fn new(host: &'h H, cfg: Config) -> Self {
        let lc_keys = cfg
            .langchain
            .then(|| LcKey::ALL.iter().map(|k| host.str_obj(k.text())).collect());
        Walk {
            host,
            cfg,
            path: Vec::new(),
            open_ids: SmallVec::new(),
            lc_keys,
        }
    }

    pub(super) fn class_of(&self, side: Side<'_, H::Obj>) -> Class {
        match side {
            Side::Value(obj) => self.host.class(obj),
            Side::Builder(kind) => Class::exact(kind),
        }
    }

    /// The host value a node stands for (the twin's `_finish`).
    pub(super) fn finish(&self, node: Node<H::Obj>) -> Result<H::Obj, H::Err> {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.finish_here(node))
    }

    fn finish_here(&self, node: Node<H::Obj>) -> Result<H::Obj, H::Err> {
        match node {
            Node::Leaf(obj) => Ok(obj),
            Node::Text(pieces) => self.host.join(&pieces),
            Node::List(acc) => {
                let items = acc
                    .items
                    .into_iter()
                    .map(|item| self.finish(item))
                    .collect::<Result<Vec<_>, _>>()?;
                self.host.new_list(items)
            }
            Node::Dict(acc) => {
                // The copy holds every unchanged entry already: set the changed ones (under
                // the key that changed them: an equal key keeps its place and its key) and
                // append the new ones, in order.
                let acc = *acc;
                let mut result = acc.base;
                for (key, value) in acc.keys.into_iter().zip(acc.vals) {
                    self.host.set_item(&mut result, key, self.finish(value)?)?;
                }
                Ok(result)
            }
        }
    }

    /// The action for `left` + `right` (the twin's `_decide`); `top` for
    /// `merge_parser_content`, else a value of `merge_dicts` under `key`.
    fn decide(
        &self,
        key: Option<&H::Obj>,
        left: Side<'_, H::Obj>,
        right: &H::Obj,
        rc: Class,
    ) -> Result<Action, H::Err> {
        let top = key.is_none();
        if rc.is(Kind::Null) {
            // openJiuwen's merge_dicts stores a right None; merge_parser_content and delta
            // keep the left value.
            return Ok(if top || self.cfg.delta {
                Action::Keep
            } else {
                Action::Right
            });
        }
        if let Some(key) = key {
            if self.cfg.delta && self.is_atomic_key(key) {
                return Ok(Action::Atomic);
            }
        }
        let lc = self.class_of(left);
        if lc.is(Kind::Null) {
            return Ok(Action::Right);
        }
        if lc.is(Kind::Str) && rc.is(Kind::Str) {
            return Ok(Action::Text);
        }
        if lc.is(Kind::List) && rc.is(Kind::List) {
            return Ok(Action::List);
        }
        if lc.is(Kind::Dict) && rc.is(Kind::Dict) {
            return Ok(Action::Dict);
        }
        if self.cfg.strict {
            self.check_kinds(key, left, right)?;
        }
        Ok(if top { Action::Objects } else { Action::Right })
    }

    /// Merges two plain values now, as openJiuwen does (the twin's `_apply`).
    pub(super) fn apply(
        &mut self,
        key: Option<H::Obj>,
        left: H::Obj,
        right: H::Obj,
        depth: usize,
    ) -> Result<H::Obj, H::Err> {
        let rc = self.host.class(&right);
        let action = self.decide(key.as_ref(), Side::Value(&left), &right, rc)?;
        match action {
            Action::Keep => Ok(left),
            Action::Right => Ok(right),
            Action::Text => self.host.add(&left, &right),
            Action::Atomic if self.atomic_keeps_left(Side::Value(&left), &right)? => Ok(left),
            Action::Atomic => Ok(right),
            Action::Objects => self.merge_objects(left, right, depth),
            Action::List | Action::Dict => {
                let pushed = self.push_key(key);
                let merged = if action == Action::Dict {
                    self.apply_dict(left, right, depth + 1)
                } else if self.cfg.by_index {
                    self.concat_list(Node::Leaf(left), right, rc, depth)
                        .and_then(|node| self.finish(node))
                } else {
                    self.host.add(&left, &right)
                };
                self.pop_key(pushed);
                merged
            }
        }
    }

    /// Merges a right value into a node, growing builders (the twin's `_fold`).
    pub(super) fn fold(
        &mut self,
        key: Option<H::Obj>,
        node: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let rc = self.host.class(&right);
        match self.decide(key.as_ref(), node.side(), &right, rc)? {
            Action::Keep => Ok(node),
            Action::Right => Ok(Node::Leaf(right)),
            Action::Text => self.concat_text(node, right, rc),
            Action::Atomic if self.atomic_keeps_left(node.side(), &right)? => Ok(node),
            Action::Atomic => Ok(Node::Leaf(right)),
            Action::Objects => match node {
                // An exact str/list/dict met a value of another type: neither the same-type
                // `+` nor the model rule applies, so openJiuwen returns the right value.
                Node::Text(_) | Node::List(_) | Node::Dict(_) => Ok(Node::Leaf(right)),
                Node::Leaf(left) => Ok(Node::Leaf(self.merge_objects(left, right, depth)?)),
            },
            action => {
                let pushed = self.push_key(key);
                let merged = if action == Action::List {
                    self.concat_list(node, right, rc, depth)
                } else {
                    self.merge_dict(node, right, depth + 1)
                };
                self.pop_key(pushed);
                merged
            }
        }
    }

    /// Rules 4-6 of spec §1.1: same-type `+`, pydantic models, else the right value.
    fn merge_objects(
        &mut self,
        left: H::Obj,
        right: H::Obj,
        depth: usize,
    ) -> Result<H::Obj, H::Err> {
        let host = self.host;
        if host.has_attr(&left, "__add__")?
            && host.same_type(&left, &right)
            && !matches!(host.class(&left).kind, Kind::Int | Kind::Float | Kind::Bool)
        {
            if let Some(sum) = host.try_add(&left, &right)? {
                return Ok(sum);
            }
        }
        if host.has_attr(&left, "model_fields")? && host.has_attr(&right, "model_fields")? {
            let (path_mark, open_mark) = (self.path.len(), self.open_ids.len());
            match self.merge_models(&left, &right, depth) {
                Ok(merged) => return Ok(merged),
                // openJiuwen: a model that cannot be merged or rebuilt gives the right value.
                Err(err) if host.model_rule_swallows(&err) => {
                    self.path.truncate(path_mark);
                    self.open_ids.truncate(open_mark);
                }
                Err(err) => return Err(err),
            }
        }
        Ok(right)
    }

    fn merge_models(
        &mut self,
        left: &H::Obj,
        right: &H::Obj,
        depth: usize,
    ) -> Result<H::Obj, H::Err> {
        let host = self.host;
        if !host.same_type(left, right) {
            return Ok(right.clone());
        }
        let left_dict = host.model_dump(left)?;
        let right_dict = host.model_dump(right)?;
        let mut fields = Vec::new();
        for name in host.keys_union(&left_dict, &right_dict)? {
            let left_value = host.get_or_none(&left_dict, &name)?;
            let right_value = host.get_or_none(&right_dict, &name)?;
            let merged = stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || {
                self.apply(None, left_value, right_value, depth + 1)
            })?;
            fields.push((name, merged));
        }
        host.construct_like(left, fields)
    }

    /// Checks the depth limit and cycles before descending into `right` (the twin's
    /// `_enter`); the caller calls `leave` with the result.
    fn enter(&mut self, right: &H::Obj, depth: usize) -> Result<Option<usize>, H::Err> {
        if depth > MAX_DEPTH {
            return Err(self
                .host
                .error(EngineError::DepthLimit { limit: MAX_DEPTH }));
        }
        let right_id = self.host.identity(right);
        if let Some(id) = right_id {
            if self.open_ids.contains(&id) {
                return Err(self.host.error(EngineError::Cycle { depth }));
            }
            self.open_ids.push(id);
        }
        Ok(right_id)
    }

    fn leave(&mut self, entered: Option<usize>) {
        if entered.is_some() {
            self.open_ids.pop();
        }
    }

    /// Runs `step` one dict level down, into `right`: checks the depth limit and cycles
    /// first, and grows the stack when it runs low. Every recursion of the merge passes
    /// through here, `merge_models` or `finish`.
    pub(super) fn descend<T>(
        &mut self,
        right: H::Obj,
        depth: usize,
        step: impl FnOnce(&mut Self, H::Obj) -> Result<T, H::Err>,
    ) -> Result<T, H::Err> {
        let entered = self.enter(&right, depth)?;
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || step(self, right));
        self.leave(entered);
        result
    }

    /// openJiuwen's `merge_dicts`: works on `left.copy()`, whatever type that returns.
    pub(super) fn apply_dict(
        &mut self,
        left: H::Obj,
        right: H::Obj,
        depth: usize,
    ) -> Result<H::Obj, H::Err> {
        self.descend(right, depth, |walk, right| {
            walk.apply_dict_entered(left, right, depth)
        })
    }

    fn apply_dict_entered(
        &mut self,
        left: H::Obj,
        right: H::Obj,
        depth: usize,
    ) -> Result<H::Obj, H::Err> {
        let host = self.host;
        let mut result = host.call_copy(&left)?;
        for (key, right_value) in host.dict_items(&right)? {
            let merged = match host.lookup(&result, &key)? {
                Some(left_value) => {
                    self.apply(Some(key.clone()), left_value, right_value, depth)?
                }
                None => right_value,
            };
            host.set_item(&mut result, key, merged)?;
        }
        Ok(result)
    }

    /// `merge_dicts` on a builder: left's keys, then right's new keys, in order.
    pub(super) fn merge_dict(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let host = self.host;
        match node {
            Node::Dict(acc) => self.descend(right, depth, |walk, right| {
                walk.merge_dict_entered(acc, right, depth)
            }),
            Node::Leaf(left) if host.class(&left).exact => {
                self.descend(right, depth, |walk, right| {
                    // a copy that becomes the result: its keys are hashed once, to find them
                    let acc = DictAcc::open_copy(host, &left)?;
                    walk.merge_dict_entered(Box::new(acc), right, depth)
                })
            }
            // A dict subclass: its own copy().
            Node::Leaf(left) => Ok(Node::Leaf(self.apply_dict(left, right, depth)?)),
            // The callers only pass dict nodes.
            other => Ok(other),
        }
    }

    fn merge_dict_entered(
        &mut self,
        mut acc: Box<DictAcc<H::Obj>>,
        right: H::Obj,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let host = self.host;
        for (key, right_value) in host.dict_items(&right)? {
            match acc.find(host, &key)? {
                Found::Entry(i) => {
                    let left_value = std::mem::replace(&mut acc.vals[i], Node::placeholder());
                    acc.vals[i] = self.fold(Some(key), left_value, right_value, depth)?;
                }
                Found::Base(left_value, hash) => {
                    let merged = self.fold(
                        Some(key.clone()),
                        Node::Leaf(left_value),
                        right_value,
                        depth,
                    )?;
                    acc.push_hashed(key, hash, merged);
                }
                Found::New(hash) => acc.push_hashed(key, hash, Node::Leaf(right_value)),
            }
        }
        Ok(Node::Dict(acc))
    }

    pub(super) fn concat_text(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        rc: Class,
    ) -> Result<Node<H::Obj>, H::Err> {
        if rc.exact {
            match node {
                Node::Text(mut pieces) => {
                    pieces.push(right);
                    return Ok(Node::Text(pieces));
                }
                Node::Leaf(left) if self.host.class(&left).exact => {
                    return Ok(Node::Text(vec![left, right]));
                }
                other => return self.add_finished(other, right),
            }
        }
        // A str subclass on either side: its own `+` decides, as in openJiuwen.
        self.add_finished(node, right)
    }

    fn add_finished(&mut self, node: Node<H::Obj>, right: H::Obj) -> Result<Node<H::Obj>, H::Err> {
        let left = self.finish(node)?;
        Ok(Node::Leaf(self.host.add(&left, &right)?))
    }

    fn concat_list(
        &mut self,
        node: Node<H::Obj>,
        right: H::Obj,
        rc: Class,
        depth: usize,
    ) -> Result<Node<H::Obj>, H::Err> {
        let mut acc = match node {
            Node::List(acc) if rc.exact => acc,
            Node::Leaf(left) if rc.exact && self.host.class(&left).exact => {
                let mut acc = Box::new(ListAcc::new());
                for item in self.host.list_items(&left)? {
                    self.append(&mut acc, item, depth)?;
                }
                acc
            }
            // A list subclass on either side: its own `+` decides.
            other => return self.add_finished(other, right),
        };
        for item in self.host.list_items(&right)? {
            self.append(&mut acc, item, depth)?;
        }
        Ok(Node::List(acc))
    }
}
