//! The `delta` policy's own rules, as methods of the merge core's `Walk`: identity and
//! state keys never concatenated ([`ATOMIC_KEYS`], [E15]), `list_merge="by_index"` (list
//! elements merged by their `index` unless their ids differ), and `strict=True`'s kind checks
//! with the key path they report (the twin's `_atomic`, `_append`, `_element_index`,
//! `_ids_consistent`, `_absent`, `_kind`, `_check_kinds`). Both options require the policy.

use crate::engine::error::{EngineError, PathItem};
use crate::engine::host::{Host, Kind};
use crate::engine::nodes::{Found, ListAcc, Node, Side};
use crate::engine::text::is_absent_text;

use super::walk::Walk;

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

impl<'h, H: Host> Walk<'h, H> {
    /// [E15] never concatenated: whether the left value stays, because the right one is
    /// absent or equal to it (a builder, a private object in the twin, equals nothing).
    pub(super) fn atomic_keeps_left(
        &self,
        left: Side<'_, H::Obj>,
        right: &H::Obj,
    ) -> Result<bool, H::Err> {
        if self.absent(right) {
            return Ok(true);
        }
        match left {
            Side::Value(l) => self.host.eq(l, right),
            Side::Builder(_) => Ok(false),
        }
    }

    pub(super) fn is_atomic_key(&self, key: &H::Obj) -> bool {
        self.host.class(key).is(Kind::Str)
            && self
                .host
                .str_text(key)
                .is_some_and(|t| ATOMIC_KEYS.contains(&t.as_ref()))
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

    /// Records the key descended into; only strict errors read the path, so only strict
    /// merges keep it.
    pub(super) fn push_key(&mut self, key: Option<H::Obj>) -> bool {
        match key {
            Some(key) if self.cfg.strict => {
                self.path.push(PathItem::Key(key));
                true
            }
            _ => false,
        }
    }

    pub(super) fn pop_key(&mut self, pushed: bool) {
        if pushed {
            self.path.pop();
        }
    }

    /// Adds one element; with `list_merge="by_index"` it may merge into an earlier one.
    pub(super) fn append(
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
    pub(super) fn check_kinds(
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
