//! Value merges shared by several fields and parts: [`deep_merge`] (metadata,
//! provider_metadata, a call's extra and object arguments), [`fold_logprobs`] (a leaf's
//! logprobs, and the token fast path's) and [`merge_payload`] (the opaque payload of a text,
//! reasoning or tool-call part). Separate so that the part, call and field rules that use them
//! do not depend on one another (the twin's `_deep_merge`, `_fold_logprobs`, `_merge_payload`).

use crate::engine::host::{Host, Kind};

use super::leaf::Payload;
use super::map::Val;
use super::state::PayloadState;

/// metadata, provider_metadata, a call's extra fields [E72]: dicts merge per key, the last
/// non-None leaf wins, strings never concatenate.
pub(crate) fn deep_merge<H: Host>(
    host: &H,
    left: Option<Val<H::Obj>>,
    right: &H::Obj,
    depth: usize,
) -> Result<Val<H::Obj>, H::Err> {
    let right_is_dict = host.class(right).is(Kind::Dict);
    match left {
        Some(mut left) if right_is_dict && left.is_dict(host) => {
            super::map::depth_limit(host, depth)?;
            let map = left.open_dict(host)?;
            for (key, value) in host.dict_items(right)? {
                if host.class(&value).is(Kind::Null) {
                    continue;
                }
                let hash = host.key_hash(&key)?;
                match map.find(host, &key, hash)? {
                    Some(i) => {
                        let slot = map.values_mut().nth(i);
                        if let Some(slot) = slot {
                            let current = std::mem::replace(slot, Val::List(Vec::new()));
                            let merged = stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
                                deep_merge(host, Some(current), &value, depth + 1)
                            })?;
                            *slot = merged;
                        }
                    }
                    None => {
                        super::map::check_depth(host, &value, 0)?;
                        map.push(key, hash, Val::Obj(value))
                    }
                }
            }
            Ok(left)
        }
        left => {
            if host.class(right).is(Kind::Null) {
                Ok(left.unwrap_or(Val::Obj(right.clone())))
            } else {
                super::map::check_depth(host, right, 0)?;
                Ok(Val::Obj(right.clone()))
            }
        }
    }
}

/// Every list-valued key concatenates; a None never resets [E60–E62].
pub(super) fn fold_logprobs<H: Host>(
    host: &H,
    left: Option<Val<H::Obj>>,
    right: &H::Obj,
) -> Result<Val<H::Obj>, H::Err> {
    let Some(mut left) = left else {
        return Ok(Val::Obj(right.clone()));
    };
    let right_kind = host.class(right).kind;
    if right_kind == Kind::Dict && left.is_dict(host) {
        let map = left.open_dict(host)?;
        for (key, value) in host.dict_items(right)? {
            if host.class(&value).is(Kind::Null) {
                continue;
            }
            let hash = host.key_hash(&key)?;
            let value_is_list = host.class(&value).is(Kind::List);
            match map.get_mut(host, &key, hash)? {
                Some(current) if value_is_list && current.is_list(host) => {
                    let items = host.list_items(&value)?;
                    current.open_list(host)?.extend(items);
                }
                Some(current) => *current = Val::Obj(value),
                None => map.push(key, hash, Val::Obj(value)),
            }
        }
        return Ok(left);
    }
    if right_kind == Kind::List && left.is_list(host) {
        let items = host.list_items(right)?;
        left.open_list(host)?.extend(items);
        return Ok(left);
    }
    Ok(Val::Obj(right.clone()))
}

/// Opaque payloads: the last non-empty replaces; `signature_merge="concat"` joins the data
/// of two string payloads of the same provider and kind.
pub(super) fn merge_payload<H: Host>(
    host: &H,
    signature_concat: bool,
    left: Option<PayloadState<H::Obj>>,
    right: &Payload<H::Obj>,
) -> Result<PayloadState<H::Obj>, H::Err> {
    let Some(right_data) = &right.data else {
        return Ok(left.unwrap_or_else(|| PayloadState {
            base: right.obj.clone(),
            data: None,
        }));
    };
    if let (true, Some(left)) = (signature_concat, &left) {
        let left_data = match &left.data {
            Some(d) => Some(d.clone()),
            None => host.dict_get_str(&left.base, "data")?,
        };
        if let Some(left_data) = left_data {
            let none = host.none();
            let opt = |o: &Option<H::Obj>| o.clone().unwrap_or_else(|| none.clone());
            let left_provider = opt(&host.dict_get_str(&left.base, "provider")?);
            let left_kind = opt(&host.dict_get_str(&left.base, "kind")?);
            if host.class(&left_data).is(Kind::Str)
                && host.class(right_data).is(Kind::Str)
                && host.eq(&left_provider, &opt(&right.provider))?
                && host.eq(&left_kind, &opt(&right.kind))?
            {
                let data = host.add(&left_data, right_data)?;
                return Ok(PayloadState {
                    base: left.base.clone(),
                    data: Some(data),
                });
            }
        }
    }
    Ok(PayloadState {
        base: right.obj.clone(),
        data: None,
    })
}
