//! Vertex AI's streamed arguments (`partialArgs`): each fragment a JSON path and a value,
//! written as the call's arguments JSON text as they arrive (the twin's `_Streamed`), and the
//! anomaly of a call the stream cut before its arguments ended.

use super::*;

/// The inside of a JSON string literal (`json.dumps(text, ensure_ascii=False)[1:-1]`).
pub(super) fn json_string(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(i64),
}

/// `$.a.b[0]['c d']` -> `[a, b, 0, "c d"]`; None if it is not such a path.
pub(super) fn parse_path(path: &str) -> Option<Vec<Seg>> {
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'$') {
        return None;
    }
    let n = bytes.len();
    let mut segments = Vec::new();
    let mut i = 1;
    while i < n {
        match bytes[i] {
            b'.' => {
                let mut j = i + 1;
                while j < n && bytes[j] != b'.' && bytes[j] != b'[' {
                    j += 1;
                }
                if j == i + 1 {
                    return None;
                }
                segments.push(Seg::Key(path.get(i + 1..j)?.to_owned()));
                i = j;
            }
            b'[' => {
                let end = i + path.get(i..)?.find(']')?;
                let inner = path.get(i + 1..end)?;
                let ib = inner.as_bytes();
                if ib.len() >= 2 && ib[0] == ib[ib.len() - 1] && (ib[0] == b'\'' || ib[0] == b'"') {
                    segments.push(Seg::Key(inner.get(1..inner.len() - 1)?.to_owned()));
                } else if !ib.is_empty() && ib.len() <= 18 && ib.iter().all(u8::is_ascii_digit) {
                    segments.push(Seg::Index(inner.parse().ok()?));
                } else {
                    return None;
                }
                i = end + 1;
            }
            _ => return None,
        }
    }
    if segments.is_empty() {
        None
    } else {
        Some(segments)
    }
}

#[derive(Debug)]
pub(super) struct Container {
    segment: Option<Seg>,
    array: bool,
    count: i64,
}

/// A call whose arguments arrive as `partialArgs` (the twin's `_Streamed`).
#[derive(Debug)]
pub(super) struct Streamed {
    pub(super) number: i64,
    name: Option<String>,
    stack: Vec<Container>,
    string_path: Option<Vec<Seg>>,
}

impl Streamed {
    pub(super) fn new(number: i64, name: Option<&str>) -> Self {
        Streamed {
            number,
            name: name.map(str::to_owned),
            stack: Vec::new(),
            string_path: None,
        }
    }

    /// The JSON text one `partialArgs` item adds.
    pub(super) fn write(
        &mut self,
        arg: &Value,
        at: At,
        item: usize,
        anomalies: &mut Vec<Value>,
    ) -> R<String> {
        let raw = get(arg, "jsonPath");
        expect(raw, "string", || format!("{}.jsonPath", at.arg(item)))?;
        let raw_path = match raw {
            Some(Value::Str(text)) => text.as_str(),
            _ => "",
        };
        let Some(segments) = parse_path(raw_path) else {
            return Err(format!(
                "{}.jsonPath {} is not a JSON path",
                at.arg(item),
                py_repr(&Value::Str(raw_path.to_owned()))
            ));
        };
        let Some((key, value)) = VALUE_KEYS
            .iter()
            .find_map(|k| field(arg, k).map(|v| (*k, v)))
        else {
            return Ok(String::new());
        };
        match key {
            "stringValue" => expect(Some(value), "string", || {
                format!("{}.stringValue", at.arg(item))
            })?,
            "numberValue" => expect(Some(value), "number", || {
                format!("{}.numberValue", at.arg(item))
            })?,
            "boolValue" => expect(Some(value), "boolean", || {
                format!("{}.boolValue", at.arg(item))
            })?,
            _ => {}
        }
        let more = is_true(get(arg, "willContinue"));
        let mut out = String::new();
        if let Some(open) = &self.string_path {
            if key == "stringValue" && *open == segments {
                if let Value::Str(text) = value {
                    json_string(&mut out, text);
                }
                if !more {
                    out.push('"');
                    self.string_path = None;
                }
                return Ok(out);
            }
            out.push('"');
            self.string_path = None;
        }
        if self.stack.is_empty() {
            out.push('{');
            self.stack.push(Container {
                segment: None,
                array: false,
                count: 0,
            });
        }
        let parent = &segments[..segments.len() - 1];
        let mut shared = 0;
        while shared < parent.len()
            && shared + 1 < self.stack.len()
            && self.stack[shared + 1].segment.as_ref() == Some(&parent[shared])
        {
            shared += 1;
        }
        while self.stack.len() > shared + 1 {
            if let Some(top) = self.stack.pop() {
                out.push(if top.array { ']' } else { '}' });
            }
        }
        for (position, segment) in parent.iter().enumerate().skip(shared) {
            self.member(segment, raw_path, &mut out, anomalies);
            let array = matches!(segments.get(position + 1), Some(Seg::Index(_)));
            out.push(if array { '[' } else { '{' });
            self.stack.push(Container {
                segment: Some(segment.clone()),
                array,
                count: 0,
            });
        }
        if let Some(last) = segments.last() {
            self.member(last, raw_path, &mut out, anomalies);
        }
        match (key, value) {
            ("stringValue", Value::Str(text)) => {
                out.push('"');
                json_string(&mut out, text);
                if more {
                    self.string_path = Some(segments);
                } else {
                    out.push('"');
                }
            }
            ("numberValue", Value::Int(i)) => out.push_str(&i.to_string()),
            ("numberValue", Value::Float(f)) => out.push_str(&py_float(*f)),
            ("boolValue", Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
            _ => out.push_str("null"),
        }
        Ok(out)
    }

    /// The separator and key of a new member of the innermost open container.
    pub(super) fn member(
        &mut self,
        segment: &Seg,
        path: &str,
        out: &mut String,
        anomalies: &mut Vec<Value>,
    ) {
        let name = &self.name;
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        if top.count != 0 {
            out.push(',');
        }
        let mismatch = |text: &str| {
            anomaly(
                "mismatched_delta",
                format!(
                    "call {}: jsonPath {} {text}",
                    opt_repr(name.as_deref()),
                    py_repr(&Value::Str(path.to_owned()))
                ),
            )
        };
        if top.array {
            if *segment != Seg::Index(top.count) {
                let text = format!("is not the next item ({}) of its array", top.count);
                anomalies.push(mismatch(&text));
            }
        } else {
            match segment {
                Seg::Index(i) => {
                    anomalies.push(mismatch("indexes an object"));
                    out.push_str(&format!("\"{i}\":"));
                }
                Seg::Key(k) => {
                    out.push('"');
                    json_string(out, k);
                    out.push_str("\":");
                }
            }
        }
        top.count += 1;
    }

    /// The text that ends the arguments.
    pub(super) fn close(&mut self) -> String {
        let mut out = String::new();
        if self.string_path.is_some() {
            out.push('"');
            self.string_path = None;
        }
        while let Some(top) = self.stack.pop() {
            out.push(if top.array { ']' } else { '}' });
        }
        out
    }
}

pub(super) fn cut(streamed: &Streamed) -> Value {
    let detail = format!(
        "call {}: the stream ended before its streamed arguments did",
        opt_repr(streamed.name.as_deref())
    );
    common::cut_call_anomaly(
        detail,
        None,
        streamed.name.as_deref(),
        Some(streamed.number),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_like_python() {
        for (f, text) in [
            (1.5, "1.5"),
            (2.0, "2.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (123456.789, "123456.789"),
            (1.2345e20, "1.2345e+20"),
        ] {
            assert_eq!(py_float(f), text);
        }
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("$.a[0]['b c']"),
            Some(vec![
                Seg::Key("a".into()),
                Seg::Index(0),
                Seg::Key("b c".into())
            ])
        );
        assert_eq!(parse_path("$"), None);
        assert_eq!(parse_path("a.b"), None);
        assert_eq!(parse_path("$.a["), None);
        assert_eq!(parse_path("$..a"), None);
    }
}
