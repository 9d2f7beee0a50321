//! Generic merge (spec §1): the `openjiuwen`, `delta` and `langchain` policies, in linear
//! time.
//!
//! This is the Rust half of `python/fastmerge/_pure/generic/`, function for function; the
//! twin's docstrings explain each rule. The fold keeps builders ([`Node`]) for the exact
//! `str` / `list` / `dict` values it is still growing and merges everything else eagerly with
//! the operations openJiuwen performs, so `merge_all(items)` equals
//! `functools.reduce(merge, items)` at a cost linear in the total size.
//!
//! This file holds the limits and the entry points; one concern per file below it: `config`
//! (the options and their checks), `walk` (the merge core every policy runs on), `delta` (the
//! `delta` policy's own rules: atomic keys, `list_merge="by_index"`, strict kind checks),
//! `langchain` (policy `langchain`: LangChain's merge_content / merge_dicts / merge_lists) and
//! `langchain_chunks` (LangChain's `AIMessageChunk` addition, `add_ai_message_chunks`).

pub mod config;
pub mod delta;
mod langchain;
pub mod langchain_chunks;
mod walk;

use crate::engine::error::EngineError;
use crate::engine::host::{Host, Kind};
use crate::engine::nodes::Node;

use config::Config;
use walk::Walk;

/// How many dict levels one merge may descend; deeper input gives `EngineError::DepthLimit`.
pub const MAX_DEPTH: usize = 256;

/// Below this much free stack a recursive step first moves to a new stack segment ...
const STACK_RED_ZONE: usize = 128 * 1024;

/// ... of this size.
const STACK_GROWTH: usize = 2 * 1024 * 1024;

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
