//! LangChain's `AIMessageChunk` addition over field dicts (the twin's `add_ai_message_chunks`,
//! `_lc_usage_add`, `_lc_usage_copy`, `_lc_id_rank`): the content and kwargs fields merged by
//! policy `langchain`'s rules, usage added, the best id kept, `chunk_position` carried.
//! Separate from the policy: it adds chunks, not values.

use crate::engine::error::EngineError;
use crate::engine::host::{Host, Kind};
use crate::engine::nodes::Node;

use super::config::Config;
use super::walk::LcKey;
use super::walk::Walk;
use super::{MAX_DEPTH, STACK_GROWTH, STACK_RED_ZONE};

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
