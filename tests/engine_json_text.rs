//! JSON kept as its text (`engine::json_text`): what it accepts, and that reading accepted text
//! gives what the generic reading (`events::parse`) gives, numbers and escapes included.

use fastmerge::engine::events::{self, MAX_JSON_DEPTH};
use fastmerge::engine::json_text::JsonText;
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

/// A small deterministic generator (xorshift).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
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
