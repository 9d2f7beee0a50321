//! Generic merge (spec §1): the `openjiuwen`, `delta` and `langchain` policies, in linear
//! time.
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

pub const POLICIES: &[&str] = &["openjiuwen", "delta", "langchain"];
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
    /// LangChain's merge_content / merge_dicts / merge_lists (docs/langchain-policy.md).
    pub langchain: bool,
    pub by_index: bool,
    pub strict: bool,
}

impl Config {
    /// The openJiuwen drop-in policy.
    pub const OPENJIUWEN: Config = Config {
        delta: false,
        langchain: false,
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
            langchain: policy == "langchain",
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
    let mut walk = Walk::new(host, cfg);
    if cfg.langchain {
        let node = walk.lc_top(Node::Leaf(left), right, 0)?;
        return walk.finish(node);
    }
    walk.apply(None, left, right, 0)
}

/// `functools.reduce(merge, items)`, linear in the total size; the host's `None` if empty.
pub fn merge_all<H, I>(host: &H, cfg: Config, items: I) -> Result<H::Obj, H::Err>
where
    H: Host,
    I: IntoIterator<Item = Result<H::Obj, H::Err>>,
{
    let mut walk = Walk::new(host, cfg);
    if cfg.langchain {
        return walk.lc_merge_all(items);
    }
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
    /// policy `langchain`: the host strings of the keys it reads, made once per call.
    lc_keys: Option<Box<[H::Obj]>>,
}

impl<'h, H: Host> Walk<'h, H> {
    fn new(host: &'h H, cfg: Config) -> Self {
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

// -------------------------------------------------------------------------------------------
// policy `langchain` (docs/langchain-policy.md): LangChain's merge_content / merge_dicts /
// merge_lists, and add_ai_message_chunks. The twin's `_lc_*` functions, one for one.

/// merge_dicts: a string under these keys that equals the left one is kept, not doubled.
const LC_KEEP_EQUAL: &[&str] = &["id", "output_version", "model_provider"];
/// merge_dicts: an int under these keys is an identity or a time: the right one replaces.
const LC_LAST_WINS: &[&str] = &["index", "created", "timestamp"];
/// add_usage gives up this deep, as LangChain's `_dict_int_op` does.
const LC_USAGE_MAX_DEPTH: usize = 100;

/// The fields of an `AIMessageChunk` that [`add_ai_message_chunks`] merges, in LangChain's
/// order (so the first error is LangChain's first error).
pub const LANGCHAIN_CHUNK_FIELDS: [&str; 7] = [
    "content",
    "additional_kwargs",
    "response_metadata",
    "tool_call_chunks",
    "usage_metadata",
    "id",
    "chunk_position",
];

/// The keys the `langchain` rules read, as host strings made once per call (a host string
/// made per read would be allocated and hashed at every chunk).
#[derive(Clone, Copy)]
enum LcKey {
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
    const ALL: [LcKey; 10] = [
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
    const FIELDS: [LcKey; 4] = [
        LcKey::Content,
        LcKey::AdditionalKwargs,
        LcKey::ResponseMetadata,
        LcKey::ToolCallChunks,
    ];

    fn text(self) -> &'static str {
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

/// A value read from a dict node: absent, a host value, or a builder (a list or dict still
/// growing, which is truthy and equal to no string).
enum Got<O> {
    Missing,
    Value(O),
    Builder,
}

/// LangChain's `reduce(operator.add, chunks)` over `AIMessageChunk` fields (the twin's
/// `add_ai_message_chunks`): the host's `None` for no items.
pub fn add_ai_message_chunks<H, I>(host: &H, items: I) -> Result<H::Obj, H::Err>
where
    H: Host,
    I: IntoIterator<Item = Result<H::Obj, H::Err>>,
{
    let cfg = Config {
        langchain: true,
        ..Config::OPENJIUWEN
    };
    let mut walk = Walk::new(host, cfg);
    let mut nodes: [Option<Node<H::Obj>>; 4] = [None, None, None, None];
    let mut usage: Option<H::Obj> = None;
    let mut best_id = host.none();
    let mut best_rank = -1;
    let mut last = false;
    let mut seen = false;
    for item in items {
        let item = item?;
        if !host.class(&item).is(Kind::Dict) {
            return Err(host.error(EngineError::WrongType {
                name: "items",
                expected: "an iterable of dict",
                value: item,
            }));
        }
        for (field, slot) in nodes.iter_mut().enumerate() {
            let value = walk
                .lc_field(&item, LcKey::FIELDS[field])?
                .unwrap_or_else(|| host.none());
            *slot = Some(match slot.take() {
                None => Node::Leaf(value),
                Some(node) => walk.lc_top(node, value, 0)?,
            });
        }
        if let Some(right) = walk.lc_field(&item, LcKey::UsageMetadata)? {
            if host.truthy(&right)? {
                if !host.class(&right).is(Kind::Dict) {
                    return Err(walk.conflict("usage_types", vec![right]));
                }
                match usage.as_mut() {
                    None => usage = Some(walk.lc_usage_copy(&right, 0)?),
                    Some(into) => walk.lc_usage_add(into, &right, 0)?,
                }
            }
        }
        let chunk_id = walk
            .lc_field(&item, LcKey::Id)?
            .unwrap_or_else(|| host.none());
        let rank = walk.lc_id_rank(&chunk_id)?;
        if rank > best_rank && best_rank < 2 {
            best_id = chunk_id;
            best_rank = rank;
        }
        if let Some(position) = walk.lc_field(&item, LcKey::ChunkPosition)? {
            if walk.lc_equals(&position, "last")? {
                last = true;
            }
        }
        seen = true;
    }
    if !seen {
        return Ok(host.none());
    }
    let mut pairs = Vec::with_capacity(7);
    for (field, node) in nodes.into_iter().enumerate() {
        let value = match node {
            Some(node) => walk.finish(node)?,
            None => host.none(),
        };
        pairs.push((host.str_obj(LANGCHAIN_CHUNK_FIELDS[field]), value));
    }
    pairs.push((
        host.str_obj("usage_metadata"),
        usage.unwrap_or_else(|| host.none()),
    ));
    pairs.push((host.str_obj("id"), best_id));
    let position = if last {
        host.str_obj("last")
    } else {
        host.none()
    };
    pairs.push((host.str_obj("chunk_position"), position));
    host.new_dict(pairs)
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
    fn lc_field(&self, dict: &H::Obj, key: LcKey) -> Result<Option<H::Obj>, H::Err> {
        if self.host.class(dict).is_exact(Kind::Dict) {
            self.host.lookup(dict, &self.lc_key(key))
        } else {
            self.host.dict_get_str(dict, key.text())
        }
    }

    fn conflict(&self, code: &'static str, values: Vec<H::Obj>) -> H::Err {
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
    fn lc_equals(&self, value: &H::Obj, text: &str) -> Result<bool, H::Err> {
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
    fn lc_top(
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
    fn lc_merge_all<I>(&mut self, items: I) -> Result<H::Obj, H::Err>
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

    /// LangChain's `_dict_int_op(into, right, operator.add)` into `into`, a private copy.
    fn lc_usage_add(&self, into: &mut H::Obj, right: &H::Obj, depth: usize) -> Result<(), H::Err> {
        let host = self.host;
        if depth >= LC_USAGE_MAX_DEPTH {
            return Err(self.conflict("usage_depth", Vec::new()));
        }
        let mut keys: Vec<H::Obj> = host.dict_items(into)?.into_iter().map(|(k, _)| k).collect();
        for (key, _) in host.dict_items(right)? {
            if host.lookup(into, &key)?.is_none() {
                keys.push(key);
            }
        }
        let is_int = |v: &Option<H::Obj>| {
            v.as_ref()
                .is_none_or(|v| matches!(host.class(v).kind, Kind::Int | Kind::Bool))
        };
        let is_dict = |v: &Option<H::Obj>| v.as_ref().is_none_or(|v| host.class(v).is(Kind::Dict));
        for key in keys {
            let left = host.lookup(into, &key)?;
            let right_value = host.lookup(right, &key)?;
            if is_int(&left) && is_int(&right_value) {
                let zero = host.int_obj(0);
                let sum = host.add(
                    left.as_ref().unwrap_or(&zero),
                    right_value.as_ref().unwrap_or(&zero),
                )?;
                host.set_item(into, key, sum)?;
            } else if is_dict(&left) && is_dict(&right_value) {
                let mut merged = match left {
                    Some(left) => left,
                    None => host.new_dict(Vec::new())?,
                };
                let empty;
                let right_dict = match &right_value {
                    Some(value) => value,
                    None => {
                        empty = host.new_dict(Vec::new())?;
                        &empty
                    }
                };
                self.lc_usage_add(&mut merged, right_dict, depth + 1)?;
                host.set_item(into, key, merged)?;
            } else {
                let present = [left, right_value].into_iter().flatten().collect();
                return Err(self.conflict("usage_types", present));
            }
        }
        Ok(())
    }

    /// A private copy of a usage dict (dicts copied at every depth).
    fn lc_usage_copy(&self, usage: &H::Obj, depth: usize) -> Result<H::Obj, H::Err> {
        let host = self.host;
        if depth > MAX_DEPTH {
            return Err(host.error(EngineError::DepthLimit { limit: MAX_DEPTH }));
        }
        let mut pairs = Vec::new();
        for (key, value) in host.dict_items(usage)? {
            let value = if host.class(&value).is(Kind::Dict) {
                stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || {
                    self.lc_usage_copy(&value, depth + 1)
                })?
            } else {
                value
            };
            pairs.push((key, value));
        }
        host.new_dict(pairs)
    }

    /// 2 for a provider's id, 1 for `lc_run-*`, 0 for another `lc_*`; -1 for none.
    fn lc_id_rank(&self, chunk_id: &H::Obj) -> Result<i32, H::Err> {
        let host = self.host;
        if !host.truthy(chunk_id)? {
            return Ok(-1);
        }
        if !host.class(chunk_id).is(Kind::Str) {
            return Ok(2);
        }
        Ok(match host.str_text(chunk_id) {
            Some(text) if text.starts_with("lc_run-") => 1,
            Some(text) if text.starts_with("lc_") => 0,
            _ => 2,
        })
    }
}
