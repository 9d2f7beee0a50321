//! JSON kept as its text (`engine::json_text`): what it accepts, and that reading accepted text
//! gives what the generic reading (`events::parse`) gives, numbers and escapes included.

use crate::common;

use common::Gen;
use fastmerge::engine::events::{self, kept_items_at, KeptItems, MAX_JSON_DEPTH};
use fastmerge::engine::value::JsonText;
use fastmerge::engine::value::{py_repr, Value};

/// The generic reading of `text` as a value (inside an object, as events are read).
fn generic(text: &str) -> Result<Value, String> {
    let event = events::parse(format!(r#"{{"k":{text}}}"#).as_bytes()).map_err(|e| e.0)?;
    match event {
        Value::Dict(map) => Ok(map.get("k").cloned().expect("the key")),
        _ => unreachable!(),
    }
}

/// `py_repr` tells what `==` does not: 0 from -0.0 and from 0.0, 1 from 1.0.
fn same(a: &Value, b: &Value) -> bool {
    py_repr(a) == py_repr(b)
}

const KEPT: &[&str] = &[
    r#"{"token":"Hi","logprob":-0.25,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.25,"bytes":[72,105]}]}"#,
    r#"{"token":"é\n\"\\\/\b\f\r\t\u00e9\u0000\u20ac","logprob":-1.5e-7,"bytes":[]}"#,
    r#"{"a":-0,"b":-0.0,"c":-0e5,"d":0.0,"e":1E2,"f":1e+2,"g":-1.0e-99,"h":123456789012345678901234567890}"#,
    r#"{"i":9223372036854775807,"j":-9223372036854775808,"k":9223372036854775808,"l":-9223372036854775809}"#,
    r#"{"m":18446744073709551616,"n":0.1,"o":0.30000000000000004,"p":1.7976931348623157e+30}"#,
    r#"{"dup":1,"x":2,"dup":3}"#,
    r#" { "spaced" : [ 1 , 2 , [ ] , { } ] , "t" : true , "f" : false , "n" : null } "#,
    r#"[1,-2,3]"#,
    r#"[ 1, 2 ,3 ]"#,
    r#"[1,2.5,3]"#,
    r#"[-0,0]"#,
    r#"["a",{"k\u00e9y":"v","k\"":"w"}]"#,
    r#""just a string""#,
    r#"42"#,
    r#"null"#,
    r#"{"deep":[[[[[[[[[[1]]]]]]]]]]}"#,
];

#[test]
fn kept_text_reads_as_the_generic_reading() {
    for text in KEPT {
        let kept = JsonText::accept(text, MAX_JSON_DEPTH).unwrap_or_else(|| panic!("{text}"));
        let expected = generic(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(
            same(kept.value(), &expected),
            "{text}: {} != {}",
            py_repr(kept.value()),
            py_repr(&expected)
        );
        assert_eq!(kept.text(), *text);
        // a kept value compares as the value it holds
        assert_eq!(Value::Json(std::sync::Arc::new(kept)), expected);
    }
}

#[test]
fn text_the_reading_could_get_wrong_is_declined() {
    for text in [
        r#""\ud800""#,                      // a lone surrogate: an error there
        r#""\uD83D\uDE00""#,                // a pair: rare, read the generic way
        r#"{"x":"\udfff"}"#,                //
        "1e400",                            // out of range: an error there
        "-1e-400",                          // three exponent digits
        &format!("1{}", "0".repeat(100)),   // a long number
        &format!("0.{}1", "0".repeat(330)), // underflows
    ] {
        assert!(JsonText::accept(text, MAX_JSON_DEPTH).is_none(), "{text}");
    }
    // nesting: at most `room` levels
    let nested = format!("{}1{}", "[".repeat(5), "]".repeat(5));
    assert!(JsonText::accept(&nested, 5).is_some());
    assert!(JsonText::accept(&nested, 4).is_none());
    assert!(JsonText::accept("[]", 0).is_none());
    assert!(JsonText::accept("7", 0).is_some());
}

trait Pick {
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str;
}

impl Pick for Gen {
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[(self.next() % options.len() as u64) as usize]
    }
}

/// Random JSON text near a logprobs entry: containers, escapes, numbers of every form.
fn generated(g: &mut Gen, depth: usize) -> String {
    let leaf = [
        "0",
        "-0",
        "-0.0",
        "1",
        "-7",
        "0.5",
        "-0.25",
        "1e5",
        "2E-3",
        "-1.5e+2",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567",
        "1.000000000000000000001",
        "true",
        "false",
        "null",
        r#""""#,
        r#""tok""#,
        r#""\n\t\"""#,
        r#""\u00e9\u4e2d""#,
        r#""é中😀""#,
        r#""\\u0041""#,
        r#""\/\b\f\r""#,
    ];
    let space = [" ", "", "", "\n"];
    if depth == 0 || g.next() % 3 == 0 {
        return g.pick(&leaf).to_owned();
    }
    let n = (g.next() % 4) as usize;
    let mut out = String::new();
    let object = g.next() % 2 == 0;
    out.push(if object { '{' } else { '[' });
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(g.pick(&space));
        if object {
            out.push_str(g.pick(&[r#""token""#, r#""logprob""#, r#""k\"ey""#, r#""token""#]));
            out.push(':');
            out.push_str(g.pick(&space));
        }
        out.push_str(&generated(g, depth - 1));
    }
    out.push_str(g.pick(&space));
    out.push(if object { '}' } else { ']' });
    out
}

#[test]
fn generated_text_reads_as_the_generic_reading() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let text = generated(&mut g, 4);
        let expected = generic(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let kept = JsonText::accept(&text, MAX_JSON_DEPTH).unwrap_or_else(|| panic!("{text}"));
        assert!(
            same(kept.value(), &expected),
            "{text}: {} != {}",
            py_repr(kept.value()),
            py_repr(&expected)
        );
    }
}

/// `text` mutated `n` times: bytes deleted, replaced or inserted, near JSON's grammar.
fn mutated(g: &mut Gen, text: &str, n: usize) -> Vec<u8> {
    let snippets = [
        ",", "]", "}", "[", "{", "\"", ":", "0", "-", "e", ".", "\\", "u", " ", "\u{1}", "tru",
        "nul", "1e999", "\\ud800", "00", "+", "E", "\\x", "\t", "é", "\"\"", ",]", "[]", "{}",
    ];
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..n {
        let at = (g.next() as usize) % (bytes.len() + 1);
        let snippet = g.pick(&snippets).as_bytes();
        match g.next() % 3 {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => {
                bytes.splice(at..=at, snippet.iter().copied());
            }
            _ => {
                bytes.splice(at..at, snippet.iter().copied());
            }
        }
    }
    bytes
}

/// What serde reads (`KeptItems`, the reference): the value, or None for an error.
fn kept_by_serde(text: &[u8]) -> Option<Value> {
    serde_json::from_slice::<KeptItems<4>>(text)
        .ok()
        .map(|kept| kept.0)
}

#[test]
fn what_the_scan_keeps_is_valid_json_read_alike() {
    let (kept, read_fast) = scan_against_serde(0x2545_f491_4f6c_dd1d, 20_000);
    // both paths were taken, on mutated text too
    assert!(
        kept > 5_000 && read_fast > 5_000,
        "kept {kept}, read {read_fast}"
    );
}

/// The long run of the differential above (`make fuzz`): `FASTMERGE_FUZZ_ROUNDS` rounds
/// (default 1,000,000) from the seed `FASTMERGE_FUZZ_SEED` (default: from the clock; printed,
/// so that a failure can be run again).
#[test]
#[ignore = "long: make fuzz runs it"]
fn what_the_scan_keeps_is_valid_json_read_alike_long() {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let rounds = env("FASTMERGE_FUZZ_ROUNDS").unwrap_or(1_000_000);
    let seed = env("FASTMERGE_FUZZ_SEED").unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(1, |d| d.as_nanos() as u64) | 1
    });
    println!("FASTMERGE_FUZZ_SEED={seed} FASTMERGE_FUZZ_ROUNDS={rounds}");
    let (kept, read_fast) = scan_against_serde(seed, rounds as usize);
    println!("{rounds} inputs: {kept} kept as text, {read_fast} read without serde");
}

/// `rounds` logprobs-like objects, generated and mutated from `seed`: what the engine's own
/// readers (`kept_items_at`, `JsonText::accept`) read is what serde_json reads; how many each
/// read (kept as text, read without serde).
fn scan_against_serde(seed: u64, rounds: usize) -> (usize, usize) {
    let mut g = Gen(seed);
    let (mut kept, mut read_fast) = (0, 0);
    for round in 0..rounds {
        let entries: Vec<String> = (0..1 + g.next() % 3)
            .map(|_| generated(&mut g, 3))
            .collect();
        let text = format!(
            r#"{{"content":[{}],"refusal":null{}}}"#,
            entries.join(","),
            g.pick(&["", r#","x":[]"#, r#", "y" : [ 1 ] "#])
        );
        let bytes = if round % 4 == 0 {
            text.clone().into_bytes()
        } else {
            let n = 1 + (g.next() % 3) as usize;
            mutated(&mut g, &text, n)
        };
        // the logprobs object, read without serde: the same value serde reads, or left to it
        if let Some((value, end)) = kept_items_at(&bytes, 0, 4) {
            if end == bytes.len() {
                read_fast += 1;
                let reference = kept_by_serde(&bytes).unwrap_or_else(|| {
                    panic!(
                        "read what serde rejects: {}",
                        String::from_utf8_lossy(&bytes)
                    )
                });
                assert!(
                    same(&value, &reference),
                    "{}",
                    String::from_utf8_lossy(&bytes)
                );
            }
        }
        // a value kept as text: valid JSON, read as the generic reading reads it
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Some(json) = JsonText::accept(text, MAX_JSON_DEPTH) {
            kept += 1;
            let expected = generic(text).unwrap_or_else(|e| panic!("kept invalid {text}: {e}"));
            assert!(same(json.value(), &expected), "{text}");
        }
    }
    (kept, read_fast)
}
