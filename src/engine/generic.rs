//! Generic merge (spec §1): the `openjiuwen` and `delta` policies, in linear time.
//!
//! This is the Rust half of `python/fastmerge/_pure/generic.py`, function for function; the
//! twin's docstrings explain each rule. The fold keeps builders ([`Node`]) for the exact
//! `str` / `list` / `dict` values it is still growing and merges everything else eagerly with
//! the operations openJiuwen performs, so `merge_all(items)` equals
//! `functools.reduce(merge, items)` at a cost linear in the total size.

use smallvec::SmallVec;

use crate::engine::error::{EngineError, OptionError, PathItem};
use crate::engine::host::{Class, Host, Kind};
use crate::engine::nodes::{DictAcc, Found, ListAcc, Node, Side};
use crate::engine::text::is_absent_text;

/// How many dict levels one merge may descend; deeper input gives `EngineError::DepthLimit`.
pub const MAX_DEPTH: usize = 256;

/// Below this much free stack a recursive step first moves to a new stack segment ...
const STACK_RED_ZONE: usize = 128 * 1024;
/// ... of this size.
const STACK_GROWTH: usize = 2 * 1024 * 1024;

pub const POLICIES: &[&str] = &["openjiuwen", "delta"];
pub const LIST_MERGES: &[&str] = &["concat", "by_index"];

/// delta policy: values under these keys are identities or states, never concatenated [E15].
pub const ATOMIC_KEYS: &[&str] = &[
    "id",
    "object",
    "model",
    "system_fingerprint",
    "role",
    "type",
    "index",
    "created",
    "service_tier",
    "finish_reason",
    "stop_reason",
    "name",
];

/// The options of one merge call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Config {
    pub delta: bool,
    pub by_index: bool,
    pub strict: bool,
}

impl Config {
    /// The openJiuwen drop-in policy.
    pub const OPENJIUWEN: Config = Config {
        delta: false,
        by_index: false,
        strict: false,
    };

    /// Checks option values in the twin's order (`_Config.__init__`, after its type checks).
    pub fn parse(policy: &str, list_merge: &str, strict: bool) -> Result<Config, OptionError> {
        if !POLICIES.contains(&policy) {
            return Err(OptionError::Invalid {
                name: "policy",
                valid: POLICIES,
            });
        }
        if !LIST_MERGES.contains(&list_merge) {
            return Err(OptionError::Invalid {
                name: "list_merge",
                valid: LIST_MERGES,
            });
        }
        let delta = policy == "delta";
        if !delta && list_merge != "concat" {
            return Err(OptionError::RequiresDelta { name: "list_merge" });
        }
        if !delta && strict {
            return Err(OptionError::RequiresDelta { name: "strict" });
        }
        Ok(Config {
            delta,
            by_index: list_merge == "by_index",
            strict,
        })
    }
}

/// `merge(left, right)`.
pub fn merge<H: Host>(
    host: &H,
    cfg: Config,
    left: H::Obj,
    right: H::Obj,
) -> Result<H::Obj, H::Err> {
    Walk::new(host, cfg).apply(None, left, right, 0)
}

/// `functools.reduce(merge, items)`, linear in the total size; the host's `None` if empty.
pub fn merge_all<H, I>(host: &H, cfg: Config, items: I) -> Result<H::Obj, H::Err>
where
    H: Host,
    I: IntoIterator<Item = Result<H::Obj, H::Err>>,
{
    let mut walk = Walk::new(host, cfg);
    let mut items = items.into_iter();
    let mut node = match items.next() {
        None => return Ok(host.none()),
        Some(first) => Node::Leaf(first?),
    };
    for right in items {
        node = walk.fold(None, node, right?, 0)?;
    }
    walk.finish(node)
}

/// openJiuwen's `merge_dicts(left, right)`.
pub fn merge_dicts<H: Host>(host: &H, left: H::Obj, right: H::Obj) -> Result<H::Obj, H::Err> {
    for (name, value) in [("left", &left), ("right", &right)] {
        if !host.class(value).is(Kind::Dict) {
            return Err(host.error(EngineError::WrongType {
                name,
                expected: "dict",
                value: value.clone(),
            }));
        }
    }
    Walk::new(host, Config::OPENJIUWEN).apply_dict(left, right, 1)
}

/// openJiuwen's `_concat_token_ids`.
pub fn concat_token_ids<H: Host>(host: &H, left: H::Obj, right: H::Obj) -> Result<H::Obj, H::Err> {
    if !host.truthy(&left)? {
        return Ok(right);
    }
    if !host.truthy(&right)? {
        return Ok(left);
    }
    if host.class(&left).is(Kind::List) && host.class(&right).is(Kind::List) {
        return host.add(&left, &right);
    }
    Ok(right)
}

/// openJiuwen's `_merge_logprobs`.
pub fn merge_logprobs<H: Host>(host: &H, left: H::Obj, right: H::Obj) -> Result<H::Obj, H::Err> {
    let (lc, rc) = (host.class(&left), host.class(&right));
    if lc.is(Kind::Null) {
        return Ok(right);
    }
    if rc.is(Kind::Null) {
        return Ok(left);
    }
    if lc.is(Kind::Dict) && rc.is(Kind::Dict) {
        // `merged = dict(left)`, then per right key: list + list concatenates, else right
        // (left's keys are not hashed again: the copy keeps their hashes).
        let mut merged = host.dict_of(&left)?;
        for (key, right_value) in host.dict_items(&right)? {
            let value = match host.lookup(&merged, &key)? {
                Some(left_value)
                    if host.class(&left_value).is(Kind::List)
                        && host.class(&right_value).is(Kind::List) =>
                {
                    host.add(&left_value, &right_value)?
                }
                _ => right_value,
            };
            host.set_item(&mut merged, key, value)?;
        }
        return Ok(merged);
    }
    if lc.is(Kind::List) && rc.is(Kind::List) {
        return host.add(&left, &right);
    }
    Ok(right)
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
struct Walk<'h, H: Host> {
    host: &'h H,
    cfg: Config,
    /// The keys down to the current value, for strict errors.
    path: Vec<PathItem<H::Obj>>,
    /// Identities of the right-hand dicts open along the current path (cycle detection);
    /// inline up to a typical nesting depth, so most merges allocate nothing for it.
    open_ids: SmallVec<[usize; 16]>,
}

impl<'h, H: Host> Walk<'h, H> {
    fn new(host: &'h H, cfg: Config) -> Self {
        Walk {
            host,
            cfg,
            path: Vec::new(),
            open_ids: SmallVec::new(),
        }
    }

    fn class_of(&self, side: Side<'_, H::Obj>) -> Class {
        match side {
            Side::Value(obj) => self.host.class(obj),
            Side::Builder(kind) => Class::exact(kind),
        }
    }

    /// The host value a node stands for (the twin's `_finish`).
    fn finish(&self, node: Node<H::Obj>) -> Result<H::Obj, H::Err> {
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

    /// [E15] never concatenated: whether the left value stays, because the right one is
    /// absent or equal to it (a builder, a private object in the twin, equals nothing).
    fn atomic_keeps_left(&self, left: Side<'_, H::Obj>, right: &H::Obj) -> Result<bool, H::Err> {
        if self.absent(right) {
            return Ok(true);
        }
        match left {
            Side::Value(l) => self.host.eq(l, right),
            Side::Builder(_) => Ok(false),
        }
    }

    /// Merges two plain values now, as openJiuwen does (the twin's `_apply`).
    fn apply(
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
    fn fold(
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

    /// Records the key descended into; only strict errors read the path, so only strict
    /// merges keep it.
    fn push_key(&mut self, key: Option<H::Obj>) -> bool {
        match key {
            Some(key) if self.cfg.strict => {
                self.path.push(PathItem::Key(key));
                true
            }
            _ => false,
        }
    }

    fn pop_key(&mut self, pushed: bool) {
        if pushed {
            self.path.pop();
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
    fn descend<T>(
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
    fn apply_dict(&mut self, left: H::Obj, right: H::Obj, depth: usize) -> Result<H::Obj, H::Err> {
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
    fn merge_dict(
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

    fn concat_text(
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

    /// Adds one element; with `list_merge="by_index"` it may merge into an earlier one.
    fn append(
        &mut self,
        acc: &mut ListAcc<H::Obj>,
        item: H::Obj,
        depth: usize,
    ) -> Result<(), H::Err> {
        if self.cfg.by_index {
            if let Some(index) = self.element_index(&item)? {
                if let Some(&slot) = acc.slots.get(&index) {
                    if self.ids_consistent(&acc.items[slot], &item)? {
                        if self.cfg.strict {
                            self.path.push(PathItem::Slot(slot));
                        }
                        let old = std::mem::replace(&mut acc.items[slot], Node::placeholder());
                        acc.items[slot] = self.merge_dict(old, item, depth + 1)?;
                        if self.cfg.strict {
                            self.path.pop();
                        }
                        return Ok(());
                    }
                }
                acc.slots.insert(index, acc.items.len());
            }
        }
        acc.items.push(Node::Leaf(item));
        Ok(())
    }

    fn element_index(&self, item: &H::Obj) -> Result<Option<i64>, H::Err> {
        if !self.host.class(item).is(Kind::Dict) {
            return Ok(None);
        }
        Ok(self
            .host
            .dict_get_str(item, "index")?
            .and_then(|index| self.host.int_i64(&index)))
    }

    /// Two elements with one index are the same element unless both carry different ids.
    fn ids_consistent(&self, node: &Node<H::Obj>, item: &H::Obj) -> Result<bool, H::Err> {
        let host = self.host;
        let left_id = match node {
            Node::Dict(acc) => {
                let key = host.str_obj("id");
                match acc.find(host, &key)? {
                    Found::Entry(i) => match &acc.vals[i] {
                        Node::Leaf(value) => Some(value.clone()),
                        // A builder (never under an atomic key, so never in practice) is
                        // neither absent nor equal to any id, as in the twin.
                        _ => {
                            let right_id = host.dict_get_str(item, "id")?;
                            return Ok(right_id.is_none_or(|r| self.absent(&r)));
                        }
                    },
                    Found::Base(value, _) => Some(value),
                    Found::New(_) => None,
                }
            }
            Node::Leaf(dict) => host.dict_get_str(dict, "id")?,
            _ => None,
        };
        let right_id = host.dict_get_str(item, "id")?;
        match (left_id, right_id) {
            (Some(l), Some(r)) if !self.absent(&l) && !self.absent(&r) => host.eq(&l, &r),
            _ => Ok(true),
        }
    }

    /// Missing, None, blank, or the placeholder `"null"`.
    fn absent(&self, value: &H::Obj) -> bool {
        let class = self.host.class(value);
        match class.kind {
            Kind::Null => true,
            Kind::Str => self
                .host
                .str_text(value)
                .is_some_and(|t| is_absent_text(&t)),
            _ => false,
        }
    }

    fn is_atomic_key(&self, key: &H::Obj) -> bool {
        self.host.class(key).is(Kind::Str)
            && self
                .host
                .str_text(key)
                .is_some_and(|t| ATOMIC_KEYS.contains(&t.as_ref()))
    }

    /// The kind a strict error names (the twin's `_kind`).
    fn kind_name(&self, side: Side<'_, H::Obj>) -> String {
        match (self.class_of(side).kind, side) {
            (Kind::Str, _) => "str".into(),
            (Kind::List, _) => "list".into(),
            (Kind::Dict, _) => "dict".into(),
            (Kind::Bool, _) => "bool".into(),
            (Kind::Int | Kind::Float, _) => "number".into(),
            (_, Side::Value(obj)) => self.host.type_name(obj),
            (kind, Side::Builder(_)) => format!("{kind:?}"), // builders are str, list or dict
        }
    }

    /// strict=True: values of different kinds cannot merge [E8, E9].
    fn check_kinds(
        &self,
        key: Option<&H::Obj>,
        left: Side<'_, H::Obj>,
        right: &H::Obj,
    ) -> Result<(), H::Err> {
        let left_kind = self.kind_name(left);
        let right_kind = self.kind_name(Side::Value(right));
        if left_kind == right_kind {
            return Ok(());
        }
        let mut path = self.path.clone();
        if let Some(key) = key {
            path.push(PathItem::Key(key.clone()));
        }
        Err(self.host.error(EngineError::MergeType {
            path,
            left_kind,
            right_kind,
        }))
    }
}
