//! The tool-call resolver (spec §4): which call a tool-call fragment belongs to (the eight
//! rules of [`resolve_call`]), a new call, and how a fragment's fields merge into its call
//! (the twin's `_resolve_call`, `_open_call`, `_new_call`, `_merge_into`). Separate from the
//! other parts: a call is found by id, name and provider index, not by part index.

use crate::engine::host::Host;

use super::leaf::{Args, Fragment, Key};
use super::map::{HMap, Val};
use super::merge::{deep_merge, merge_payload};
use super::parts::new_part;
use super::state::{detail, Call, PartKind, Piece, State};

pub(super) fn resolve_call<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    fragment: &Fragment<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let has_args = !matches!(fragment.args, Args::Absent);
    let index = fragment.index.as_ref();
    let at_index = match index {
        Some(k) => state.calls_by_index.get(host, &k.obj, k.hash)?.copied(),
        None => None,
    };
    let call_id = fragment.id.as_ref();
    let name = fragment.name.as_ref();
    if call_id.is_none() && name.is_none() && !has_args {
        // 1. vacuous: ignored [E33]; metadata alone (a thought signature [E69]) attaches to
        // the call at its index, or the most recent call, and is never dropped
        if !fragment.has_meta {
            return Ok(());
        }
        let call = if index.is_some() {
            at_index
        } else {
            state.calls.len().checked_sub(1)
        };
        let call = match call {
            Some(c) => c,
            None => new_call(host, state, index)?,
        };
        return merge_into(host, state, call, fragment, None, None);
    }
    let known = match call_id {
        Some(k) => state.calls_by_id.get(host, &k.obj, k.hash)?.copied(),
        None => None,
    };
    let call: Option<usize> = if let Some(known) = known {
        // 2. a known id, unless a name comes with it and this index holds another call [E28]
        if name.is_some() && index.is_some() && at_index != Some(known) {
            None
        } else {
            Some(known)
        }
    } else if let (Some(_), Some(name)) = (call_id, name) {
        // 3. a new id with a name: a new call, unless it is the late id of this index's call
        match at_index {
            Some(c) if state.calls[c].id.is_none() && name_fits(host, &state.calls[c], name)? => {
                Some(c)
            }
            _ => None,
        }
    } else if call_id.is_some() {
        // 4. a new id without a name cannot start a call [E35]
        if index.is_some() {
            at_index
        } else {
            open_call(host, state)?
        }
    } else if let (Some(name), Some(_)) = (name, index) {
        // 5. late or repeated name at an index [E29]; another name is another call [E27]
        match at_index {
            Some(c) if name_fits(host, &state.calls[c], name)? => Some(c),
            _ => None,
        }
    } else if name.is_some() {
        // 6. a name without id or index: a new call unless the only call has no name yet
        if state.calls.len() == 1 && state.calls[0].name.is_none() {
            Some(0)
        } else {
            None
        }
    } else if index.is_some() {
        // 7. the call at this index, else a pending call that becomes real with its name
        at_index
    } else {
        // 8. arguments alone: the most recent call [E26], ambiguous among several [E34]
        let call = open_call(host, state)?;
        if call.is_none() {
            state.anomaly(host, "ambiguous_fragment", || {
                Ok(host.str_obj(
                    "arguments before any call: kept on a call without a name until one arrives",
                ))
            })?;
        }
        call
    };
    let call = match call {
        Some(c) => c,
        None => new_call(host, state, index)?,
    };
    merge_into(host, state, call, fragment, call_id, name)
}

/// A fragment with no index and no name: the single open call, else the most recent one
/// with an `ambiguous_fragment` anomaly [E34]; None when there is no call yet.
fn open_call<H: Host>(host: &H, state: &mut State<H::Obj>) -> Result<Option<usize>, H::Err> {
    let n = state.calls.len();
    if n > 1 {
        state.anomaly(host, "ambiguous_fragment", || {
            Ok(host.str_obj(&format!(
                "a fragment with no index and no name among {n} calls went to the most recent one"
            )))
        })?;
    }
    Ok(n.checked_sub(1))
}

pub(super) fn new_call<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    index: Option<&Key<H::Obj>>,
) -> Result<usize, H::Err> {
    let part = new_part(host, state, PartKind::Call, None)?;
    let call = state.calls.len();
    state.parts[part].call = Some(call);
    state.calls.push(Call {
        id: None,
        name: None,
        type_: None,
        provider_index: index.map(|k| k.obj.clone()),
        args_dict: None,
        part,
    });
    if let Some(k) = index {
        state
            .calls_by_index
            .set(host, k.obj.clone(), k.hash, call)?;
    }
    Ok(call)
}

/// id, type and name are set once; arguments append; other fields deep-merge (spec §4).
fn merge_into<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    c: usize,
    fragment: &Fragment<H::Obj, H::Err>,
    call_id: Option<&Key<H::Obj>>,
    name: Option<&H::Obj>,
) -> Result<(), H::Err> {
    if let Some(id) = call_id {
        if state.calls[c].id.is_none() {
            state.calls[c].id = Some(id.obj.clone());
            if state.calls_by_id.find(host, &id.obj, id.hash)?.is_none() {
                state.calls_by_id.push(id.obj.clone(), id.hash, c);
            }
        }
    }
    if let Some(name) = name {
        match &state.calls[c].name {
            None => state.calls[c].name = Some(name.clone()),
            Some(current) => {
                // `call.name != name`
                if !host.eq(current, name)? {
                    let (id, current) = (state.calls[c].id.clone(), current.clone());
                    state.anomaly(host, "name_conflict", || {
                        detail(
                            host,
                            vec![
                                Piece::Lit("call "),
                                Piece::Obj(repr_opt(host, &id)?),
                                Piece::Lit(": name "),
                                Piece::Obj(host.repr(name)?),
                                Piece::Lit(" after "),
                                Piece::Obj(host.repr(&current)?),
                                Piece::Lit(" ignored"),
                            ],
                        )
                    })?;
                }
            }
        }
    }
    if state.calls[c].type_.is_none() {
        if let Some(kind) = &fragment.type_ {
            state.calls[c].type_ = Some(kind.clone());
        }
    }
    if state.calls[c].provider_index.is_none() {
        if let Some(index) = &fragment.index {
            state.calls[c].provider_index = Some(index.obj.clone());
            state
                .calls_by_index
                .set(host, index.obj.clone(), index.hash, c)?;
        }
    }
    let part = state.calls[c].part;
    match &fragment.args {
        Args::Text(text) => {
            if state.calls[c].args_dict.is_some() {
                mismatched_arguments(host, state, c, ": text arguments after object ones")?;
            } else if fragment.settled {
                // a done event's arguments, authoritative over the deltas (spec §6.1)
                let pieces = &mut state.parts[part].pieces;
                pieces.clear();
                pieces.push(text.clone());
            } else {
                state.parts[part].pieces.push(text.clone());
            }
        }
        Args::Dict(dict) => {
            if !state.parts[part].pieces.is_empty() {
                mismatched_arguments(host, state, c, ": object arguments after text ones")?;
            } else {
                let left = state.calls[c]
                    .args_dict
                    .take()
                    .unwrap_or_else(|| Val::Dict(HMap::default()));
                state.calls[c].args_dict = Some(deep_merge(host, Some(left), dict, 0)?);
            }
        }
        Args::Absent | Args::Other => {}
    }
    if let Some(err) = &fragment.late {
        return Err(host.clone_err(err));
    }
    let signature_concat = state.options.signature_concat;
    let fields = state.parts[part].fields();
    if let Some(payload) = &fragment.payload {
        let merged = merge_payload(host, signature_concat, fields.payload.take(), payload)?;
        fields.payload = Some(merged);
    }
    if fields.response_item_id.is_none() {
        if let Some(item_id) = &fragment.item_id {
            fields.response_item_id = Some(item_id.clone());
        }
    }
    // set once: a later fragment of the call keeps the index the first one gave
    if fields.call_index.is_none() {
        if let Some(call_index) = &fragment.call_index {
            fields.call_index = Some(call_index.clone());
        }
    }
    if let Some(extra) = &fragment.extra {
        // `fields.get("extra") or {}`
        let left = match fields.extra.take() {
            Some(v) if v.truthy(host)? => v,
            _ => Val::Dict(HMap::default()),
        };
        fields.extra = Some(deep_merge(host, Some(left), extra, 0)?);
    }
    Ok(())
}

/// `at_index.name in (None, name)`.
fn name_fits<H: Host>(host: &H, call: &Call<H::Obj>, name: &H::Obj) -> Result<bool, H::Err> {
    match &call.name {
        None => Ok(true),
        Some(current) => host.eq(name, current),
    }
}

fn repr_opt<H: Host>(host: &H, value: &Option<H::Obj>) -> Result<H::Obj, H::Err> {
    match value {
        Some(v) => host.repr(v),
        None => Ok(host.str_obj("None")),
    }
}

/// The `mismatched_delta` anomaly of a call whose arguments change from text to an object or
/// back [E39]; `what` ends the detail.
fn mismatched_arguments<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    call: usize,
    what: &'static str,
) -> Result<(), H::Err> {
    let id = state.calls[call].id.clone();
    state.anomaly(host, "mismatched_delta", || {
        detail(
            host,
            vec![
                Piece::Lit("call "),
                Piece::Obj(repr_opt(host, &id)?),
                Piece::Lit(what),
            ],
        )
    })
}
