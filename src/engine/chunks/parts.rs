//! Parts (spec §3): text, reasoning and other (tool_result, media, unknown) parts: which part
//! a fragment continues, a new part, the fields beside the text, and the `kind_change` anomaly
//! (the twin's `_fold_part` for those kinds, `_new_part`, `_fill_text_fields`). Tool calls,
//! which have their own resolver, are in `calls`.

use crate::engine::host::{Host, Kind};

use super::leaf::{Key, OtherPart, TextPart};
use super::map::HMap;
use super::merge::merge_payload;
use super::state::{detail, Part, PartKind, Piece, State};

fn kind_name<O: Clone, H: Host<Obj = O>>(host: &H, kind: &PartKind<O>) -> Result<O, H::Err> {
    match kind {
        PartKind::Text(obj) | PartKind::Reasoning(obj) | PartKind::Other(obj) => host.format(obj),
        PartKind::Call => Ok(host.str_obj("tool_call")),
    }
}

/// `last.kind == kind`.
fn same_kind<H: Host>(
    host: &H,
    a: &PartKind<H::Obj>,
    b: &PartKind<H::Obj>,
) -> Result<bool, H::Err> {
    Ok(match (a, b) {
        (PartKind::Text(_), PartKind::Text(_))
        | (PartKind::Reasoning(_), PartKind::Reasoning(_))
        | (PartKind::Call, PartKind::Call) => true,
        (PartKind::Other(x), PartKind::Other(y)) => host.eq(x, y)?,
        _ => false,
    })
}

fn kind_change<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    index: &H::Obj,
    kind: &PartKind<H::Obj>,
    last: usize,
) -> Result<(), H::Err> {
    let last_kind = kind_name(host, &state.parts[last].kind)?;
    state.anomaly(host, "kind_change", || {
        detail(
            host,
            vec![
                Piece::Lit("part index "),
                Piece::Obj(host.repr(index)?),
                Piece::Lit(": "),
                Piece::Obj(kind_name(host, kind)?),
                Piece::Lit(" after "),
                Piece::Obj(last_kind),
            ],
        )
    })
}

pub(super) fn fold_text<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    part: &TextPart<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    let mut last = None;
    if let Some(index) = &part.index {
        last = state.by_index.get(host, &index.obj, index.hash)?.copied();
        if let Some(i) = last {
            let matches = matches!(
                (&state.parts[i].kind, part.reasoning),
                (PartKind::Text(_), false) | (PartKind::Reasoning(_), true)
            );
            if !matches {
                let kind = text_kind(part);
                kind_change(host, state, &index.obj, &kind, i)?;
                last = None;
            }
        }
    } else if !state.parts.is_empty() && !part.has_attributes {
        let i = state.parts.len() - 1;
        let p = &state.parts[i];
        let same = matches!(
            (&p.kind, part.reasoning),
            (PartKind::Text(_), false) | (PartKind::Reasoning(_), true)
        );
        if same && p.index.is_none() {
            last = Some(i);
        }
    }
    let i = match last {
        Some(i) => i,
        None => new_part(host, state, text_kind(part), part.index.as_ref())?,
    };
    let target = &mut state.parts[i];
    if part.settled {
        // a done event's text, authoritative over the deltas (spec §6.1)
        target.pieces.clear();
        if part.extras.as_ref().is_some_and(|e| e.summary.is_some()) {
            target.summary = None;
        }
    }
    if let Some(text) = &part.text {
        target.pieces.push(text.clone());
    }
    if let Some(extras) = &part.extras {
        fill_text_fields(host, state, i, extras)?;
    }
    Ok(())
}

pub(super) fn text_kind<O: Clone, E>(part: &TextPart<O, E>) -> PartKind<O> {
    if part.reasoning {
        PartKind::Reasoning(part.kind.clone())
    } else {
        PartKind::Text(part.kind.clone())
    }
}

pub(super) fn new_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    kind: PartKind<H::Obj>,
    index: Option<&Key<H::Obj>>,
) -> Result<usize, H::Err> {
    let position = state.parts.len();
    if let Some(index) = index {
        state
            .by_index
            .set(host, index.obj.clone(), index.hash, position)?;
    }
    state.parts.push(Part {
        kind,
        index: index.map(|k| k.obj.clone()),
        pieces: Vec::new(),
        summary: None,
        fields: None,
        other: HMap::default(),
        call: None,
    });
    Ok(position)
}

/// Text and reasoning fields beside the text: citations append [E68], summary appends,
/// payload replaces (or concatenates) [E65], attributes fill if absent, redacted sticks.
pub(super) fn fill_text_fields<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    i: usize,
    extras: &super::leaf::TextExtras<H::Obj, H::Err>,
) -> Result<(), H::Err> {
    if let Some(err) = &extras.late {
        return Err(host.clone_err(err));
    }
    let signature_concat = state.options.signature_concat;
    let part = &mut state.parts[i];
    if let Some(citations) = &extras.citations {
        part.fields()
            .citations
            .get_or_insert_with(Vec::new)
            .extend(citations.iter().cloned());
    }
    if let Some(summary) = &extras.summary {
        part.summary
            .get_or_insert_with(Vec::new)
            .push(summary.clone());
    }
    if let Some(payload) = &extras.payload {
        let fields = part.fields();
        let merged = merge_payload(host, signature_concat, fields.payload.take(), payload)?;
        fields.payload = Some(merged);
    }
    if extras.redacted {
        part.fields().redacted = true;
    }
    if let Some(attributes) = &extras.attributes {
        let current = part.fields().attributes.get_or_insert_with(HMap::default);
        for (key, hash, value) in attributes {
            if current.find(host, key, *hash)?.is_none() {
                current.push(key.clone(), *hash, value.clone());
            }
        }
    }
    Ok(())
}

/// tool_result, media, unknown: a part of its own; at a known index, fields fill if absent.
pub(super) fn fold_other<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    part: &OtherPart<H::Obj>,
) -> Result<(), H::Err> {
    let kind = PartKind::Other(part.kind.clone());
    if let Some(index) = &part.index {
        if let Some(&i) = state.by_index.get(host, &index.obj, index.hash)? {
            if same_kind(host, &state.parts[i].kind, &kind)? {
                let fields = &mut state.parts[i].other;
                for (key, hash, value, is_part, is_index) in &part.items {
                    if *is_part || *is_index || host.class(value).is(Kind::Null) {
                        continue;
                    }
                    match fields.get_mut(host, key, *hash)? {
                        Some(current) if !host.class(current).is(Kind::Null) => {}
                        Some(current) => *current = value.clone(),
                        None => fields.push(key.clone(), *hash, value.clone()),
                    }
                }
                return Ok(());
            }
            kind_change(host, state, &index.obj, &kind, i)?;
        }
    }
    new_other_part(host, state, part)
}

/// A tool_result / media / unknown part of its own, with the fields given.
pub(super) fn new_other_part<H: Host>(
    host: &H,
    state: &mut State<H::Obj>,
    part: &OtherPart<H::Obj>,
) -> Result<(), H::Err> {
    let kind = PartKind::Other(part.kind.clone());
    let i = new_part(host, state, kind, part.index.as_ref())?;
    let fields = &mut state.parts[i].other;
    for (key, hash, value, is_part, is_index) in &part.items {
        if !*is_part && !*is_index {
            fields.set(host, key.clone(), *hash, value.clone())?;
        }
    }
    Ok(())
}
