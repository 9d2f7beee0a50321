//! Usage (spec §5): how a leaf's `usage` / `final_usage` folds into the state per key under
//! each `usage` mode, and whether a kept total is a per-chunk one (the twin's `_fold_usage`,
//! `_note_total`, `_merge_usage`, `_keeps`, `_counts_total`). Separate because its modes and
//! total bookkeeping are a rule set of their own, shared by the fold and the read.

use crate::engine::error::EngineError;
use crate::engine::host::{Host, Kind};

use super::map::{HMap, Val};
use super::state::State;
use super::UsageMode;

fn is_number<H: Host>(host: &H, value: &H::Obj) -> bool {
    matches!(host.class(value).kind, Kind::Int | Kind::Float)
}

/// `usage`, or `final_usage`: counts the provider calls final (Anthropic's cumulative
/// `message_delta`), which replace zeros included (spec §5).
pub(super) fn fold_usage<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    right: &H::Obj,
    is_final: bool,
) -> Result<(), H::Err> {
    let mut mode = state.options.usage;
    if is_final && mode == UsageMode::Merge {
        mode = UsageMode::Last;
    }
    let usage = state.usage.get_or_insert_with(HMap::default);
    note_total(host, usage, &mut state.per_chunk_total, right, mode)?;
    merge_usage(host, usage, right, mode, 0)
}

/// Whether the total `right` brings (when it is kept) is a per-chunk one: equal to its own
/// chunk's counts. A summed total stays per-chunk only while every summand was.
fn note_total<H: Host>(
    host: &H,
    usage: &HMap<H::Obj, Val<H::Obj>>,
    per_chunk_total: &mut bool,
    right: &H::Obj,
    mode: UsageMode,
) -> Result<(), H::Err> {
    let total = match host.dict_get_str(right, "total_tokens")? {
        Some(total) if !host.class(&total).is(Kind::Null) => total,
        _ => return Ok(()),
    };
    let key = host.str_obj("total_tokens");
    let hash = host.key_hash(&key)?;
    let current_number = match usage.get(host, &key, hash)? {
        Some(current) => {
            let number = current.obj().is_some_and(|c| is_number(host, c));
            if keeps(host, mode, number, &total)? {
                return Ok(());
            }
            number
        }
        None => false,
    };
    let agrees = match counts_total(host, right)? {
        Some(Ok(own)) if is_number(host, &total) => host.eq(&total, &own)?,
        _ => false,
    };
    let summed = mode == UsageMode::Sum && current_number && is_number(host, &total);
    *per_chunk_total = agrees && (*per_chunk_total || !summed);
    Ok(())
}

/// Usage (spec §5), per key.
fn merge_usage<H: Host>(
    host: &H,
    left: &mut HMap<H::Obj, Val<H::Obj>>,
    right: &H::Obj,
    mode: UsageMode,
    depth: usize,
) -> Result<(), H::Err> {
    if depth > super::map::MAX_COPY_DEPTH {
        return Err(host.error(EngineError::Recursion));
    }
    for (key, value) in host.dict_items(right)? {
        let value_class = host.class(&value);
        if value_class.is(Kind::Null) {
            continue; // [E58]
        }
        let hash = host.key_hash(&key)?;
        let Some(current) = left.get_mut(host, &key, hash)? else {
            left.push(key, hash, Val::Obj(value));
            continue;
        };
        if value_class.is(Kind::Dict) && current.is_dict(host) {
            let inner = current.open_dict(host)?;
            stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
                merge_usage(host, inner, &value, mode, depth + 1)
            })?; // *_details per key [E59]
            continue;
        }
        let current_number = current.obj().filter(|c| is_number(host, c)).cloned();
        let value_number = is_number(host, &value);
        if mode == UsageMode::Sum && value_number {
            if let Some(c) = current_number {
                *current = Val::Obj(host.add(&c, &value)?);
                continue;
            }
        }
        if keeps(host, mode, current_number.is_some(), &value)? {
            continue;
        }
        *current = Val::Obj(value);
    }
    Ok(())
}

/// A zero never overwrites an earlier count [E54], nor does an empty string (`merge`).
fn keeps<H: Host>(
    host: &H,
    mode: UsageMode,
    current_number: bool,
    value: &H::Obj,
) -> Result<bool, H::Err> {
    if mode != UsageMode::Merge {
        return Ok(false);
    }
    if is_number(host, value) && current_number && host.eq(value, &host.int_obj(0))? {
        return Ok(true);
    }
    Ok(host.class(value).is(Kind::Str) && !host.truthy(value)?)
}

/// A sum of ints that may not fit (see [`counts_total`]).
pub(crate) type Sum<H> = Result<<H as Host>::Obj, <H as Host>::Err>;

/// input + output (absent or not a number counts 0); None when neither is given. The sum is a
/// result of its own: it fails only where ints overflow (the native host), which is an error
/// only where the sum is kept, as the twin's Python int is (a reported total, within 64 bits,
/// differs from it).
pub(crate) fn counts_total<H: Host>(host: &H, usage: &H::Obj) -> Result<Option<Sum<H>>, H::Err> {
    let given = |key: &str| -> Result<Option<H::Obj>, H::Err> {
        let value = host.dict_get_str(usage, key)?;
        Ok(value.filter(|v| !host.class(v).is(Kind::Null)))
    };
    let (inputs, outputs) = (given("input_tokens")?, given("output_tokens")?);
    if inputs.is_none() && outputs.is_none() {
        return Ok(None);
    }
    let term = |v: Option<H::Obj>| match v {
        Some(v) if is_number(host, &v) => v,
        _ => host.int_obj(0),
    };
    Ok(Some(host.add(&term(inputs), &term(outputs))))
}

/// The total a finished usage dict stands for (rules §5): a reported total, unless it is
/// missing or zero where counts were given: then input + output (absent counts 0). What
/// [`super::materialize`] leaves when no chunk's total was a per-chunk one; read by the
/// renderers and the session log, which state no rule of their own. The twin's `usage_total`.
pub fn usage_total<H: Host>(host: &H, usage: &H::Obj) -> Result<H::Obj, H::Err> {
    if !host.class(usage).is(Kind::Dict) {
        return Err(host.error(EngineError::WrongType {
            name: "usage",
            expected: "a dict",
            value: usage.clone(),
        }));
    }
    let total = host
        .dict_get_str(usage, "total_tokens")?
        .filter(|t| !host.class(t).is(Kind::Null));
    let missing_or_zero = match &total {
        None => true,
        Some(t) => is_number(host, t) && host.eq(t, &host.int_obj(0))?,
    };
    if missing_or_zero {
        if let Some(computed) = counts_total(host, usage)? {
            return computed;
        }
    }
    Ok(total.unwrap_or_else(|| host.none()))
}
