//! The openai-chat adapter's typed fast path against its generic path (`cargo test
//! --no-default-features --test engine_fastpath`): on every openai-chat and Mistral corpus
//! stream and on generated chunk streams, event by event (the same leaves from the bytes as
//! from the parsed event) and whole (the same messages, anomalies and errors, however split).

mod common;
use common::*;

use fastmerge::engine::aggregate::AggregatorCore;
use fastmerge::engine::chunks::Options;
use fastmerge::engine::events;

fn corpus_streams() -> Vec<(String, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut out = Vec::new();
    for dir in ["openai_chat", "mistral"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("corpus dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).expect("read");
            out.push((path.display().to_string(), bytes));
        }
    }
    out
}

/// Two adapters in lockstep over the stream's lines, one reading each event through
/// `fast_event` (the generic `event` where it declines), one always through `event`: the
/// same leaves after every event. Returns how many events the fast path read.
fn lockstep(bytes: &[u8]) -> usize {
    let mut fast = adapter_for("openai-chat");
    let mut generic = adapter_for("openai-chat");
    let mut hits = 0;
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(event) = events::parse(line) else {
            assert!(fast.fast_event(line).is_none(), "read what is not an event");
            continue;
        };
        if !generic.knows(&event) || generic.new_response(&event).is_some() {
            assert!(
                fast.fast_event(line).is_none(),
                "read a foreign or new response"
            );
            continue;
        }
        let expected = generic.event(&event).map(|l| show_leaves(&l));
        let got = match fast.fast_event(line) {
            Some(leaves) => {
                hits += 1;
                let built: Vec<_> = leaves.into_iter().map(|(c, l)| (c, l.build())).collect();
                Ok(show_leaves(&built))
            }
            None => fast.event(&event).map(|l| show_leaves(&l)),
        };
        assert_eq!(got, expected, "{}", String::from_utf8_lossy(line));
    }
    assert_eq!(show_leaves(&fast.end()), show_leaves(&generic.end()));
    hits
}

/// The messages (or the error) of `bytes` fed `piece` bytes at a time.
fn aggregated(bytes: &[u8], piece: usize, fast: bool, strict: bool) -> String {
    let mut options = Options::DEFAULT;
    options.strict = strict;
    let mut core = AggregatorCore::new(Some("openai-chat"), options);
    core.set_fast_events(fast);
    for chunk in bytes.chunks(piece.max(1)) {
        if let Err(err) = core.feed(chunk) {
            return format!("{err:?}");
        }
    }
    match core.finish() {
        Ok(messages) => {
            serde_json::to_string(&messages.iter().map(to_json).collect::<Vec<_>>()).expect("json")
        }
        Err(err) => format!("{err:?}"),
    }
}

fn assert_same_whole(name: &str, bytes: &[u8]) {
    for piece in [bytes.len(), 7] {
        for strict in [false, true] {
            assert_eq!(
                aggregated(bytes, piece, true, strict),
                aggregated(bytes, piece, false, strict),
                "{name} piece {piece} strict {strict}"
            );
        }
    }
}

#[test]
fn corpus_fast_path_equals_generic_path() {
    let mut total = 0;
    for (name, bytes) in corpus_streams() {
        total += lockstep(&bytes);
        assert_same_whole(&name, &bytes);
    }
    // the fast path does read most corpus events (else this test compares nothing)
    assert!(total > 500, "fast path read only {total} corpus events");
}

#[test]
fn hot_chunks_take_the_fast_path() {
    let stream = concat!(
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","service_tier":"default","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x"}"#,
        "\n",
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi \u00e9\n"},"logprobs":null,"finish_reason":null}]}"#,
        "\n",
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"why"},"finish_reason":null}]}"#,
        "\n",
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "\n",
    );
    assert_eq!(lockstep(stream.as_bytes()), 4);
    assert_eq!(
        aggregated(stream.as_bytes(), stream.len(), true, false),
        aggregated(stream.as_bytes(), stream.len(), false, false)
    );
}

/// A small deterministic generator (xorshift): chunks that vary every field the fast path
/// reads between its hot shape and the shapes it must leave to the generic path.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// One of `options`; only of those before the "|" unless `hostile`.
    fn pick<'a>(&mut self, hostile: bool, options: &[&'a str]) -> &'a str {
        let good = options
            .iter()
            .position(|o| *o == "|")
            .unwrap_or(options.len());
        let options: Vec<&str> = options.iter().copied().filter(|o| *o != "|").collect();
        let n = if hostile { options.len() } else { good };
        options[(self.next() % n as u64) as usize]
    }
}

fn generated_chunk(g: &mut Gen) -> String {
    let h = g.next() % 3 == 0; // a chunk with values off the hot shape
    let text = [
        "",
        "\"\"",
        "\"a\"",
        "\"null\"",
        "\" \"",
        "null",
        "\"\\u00e9\\n\"",
        "|",
        "1",
        "[]",
        "\"\\ud800\"",
    ];
    let mut top: Vec<String> = Vec::new();
    for (key, values) in [
        (
            "id",
            &[
                "", "\"c\"", "\"c\"", "\"c\"", "\"d\"", "null", "\"\"", "|", "7",
            ][..],
        ),
        (
            "object",
            &["", "\"chat.completion.chunk\"", "\"\"", "null", "|", "2"][..],
        ),
        (
            "created",
            &[
                "",
                "1",
                "1",
                "2",
                "null",
                "|",
                "1.0",
                "-0",
                "\"1\"",
                "99999999999999999999",
            ][..],
        ),
        (
            "model",
            &["", "\"m\"", "\"m\"", "\"n\"", "null", "|", "[]"][..],
        ),
        ("system_fingerprint", &["", "\"fp\"", "null", "\"\""][..]),
        ("service_tier", &["", "\"default\"", "null"][..]),
        ("usage", &["", "", "null", "|", "{\"prompt_tokens\":1}"][..]),
        ("obfuscation", &["", "\"zz\"", "null", "|", "3"][..]),
        ("x_other", &["", "|", "1"][..]),
    ] {
        let value = g.pick(h, values);
        if !value.is_empty() {
            top.push(format!("\"{key}\":{value}"));
        }
    }
    let mut choices = Vec::new();
    for _ in 0..(1 + g.next() % 2) {
        let mut delta: Vec<String> = Vec::new();
        for key in [
            "role",
            "content",
            "reasoning_content",
            "reasoning",
            "refusal",
        ] {
            let value = g.pick(h, &text);
            if !value.is_empty() {
                delta.push(format!("\"{key}\":{value}"));
            }
        }
        let call = g.pick(h, &[
            "",
            "",
            "",
            r#"{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}"#,
            r#"{"index":0,"function":{"arguments":"{\"a\""}}"#,
            r#"{"index":1,"function":{"arguments":"1}"}}"#,
            r#"{"index":0,"id":null,"type":null,"function":{"arguments":"x","name":null}}"#,
            "|",
            r#"{"index":null,"function":{"arguments":"x"}}"#,
            r#"{"index":0,"function":{"arguments":null}}"#,
        ]);
        if !call.is_empty() {
            delta.push(format!("\"tool_calls\":[{call}]"));
        }
        let mut choice: Vec<String> = Vec::new();
        for (key, values) in [
            ("index", &["", "0", "0", "1", "|", "null", "\"0\""][..]),
            (
                "finish_reason",
                &[
                    "",
                    "null",
                    "null",
                    "null",
                    "\"stop\"",
                    "\"\"",
                    "\"null\"",
                    "\" \"",
                    "\"tool_calls\"",
                    "|",
                    "1",
                ][..],
            ),
            ("logprobs", &["", "null", "|", "{\"content\":[]}"][..]),
            ("token_ids", &["", "", "null", "|", "[1]", "[]"][..]),
        ] {
            let value = g.pick(h, values);
            if !value.is_empty() {
                choice.push(format!("\"{key}\":{value}"));
            }
        }
        match g.next() % 8 {
            0 => {}
            1 => choice.push("\"delta\":null".to_owned()),
            _ => choice.push(format!("\"delta\":{{{}}}", delta.join(","))),
        }
        choices.push(format!("{{{}}}", choice.join(",")));
    }
    if !h || g.next() % 10 != 0 {
        top.push(format!("\"choices\":[{}]", choices.join(",")));
    }
    if h && g.next() % 20 == 0 {
        top.push("\"id\":\"dup\"".to_owned()); // a duplicate key (or not)
    }
    format!("{{{}}}\n", top.join(","))
}

#[test]
fn generated_streams_fast_path_equals_generic_path() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut hits = 0;
    for _ in 0..400 {
        let stream: String = (0..(1 + g.next() % 12))
            .map(|_| generated_chunk(&mut g))
            .collect();
        hits += lockstep(stream.as_bytes());
        assert_same_whole("generated", stream.as_bytes());
    }
    assert!(hits > 100, "fast path read only {hits} generated events");
}
