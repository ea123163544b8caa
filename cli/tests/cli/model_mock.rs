//! A scripted model for the real-client tests: a loopback HTTP server that plays a model API and
//! answers the client's main loop with one scripted tool call a turn, then a final message.
//!
//! The script, the actions run between steps and the lookup of what the client sent back are the
//! same for every API; what differs — which requests are turns, where a request carries the tool
//! results, how a call is put on the wire — is a [`ModelApi`], kept beside its test.

use std::collections::HashMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::{HttpRequest, serve_loopback};

/// Something to do when the mock is about to answer a step: another process editing a file, or
/// telling the test to kill the client.
pub type Action = Box<dyn FnOnce() + Send>;

/// A file change made by "another process" when the mock reaches a step.
pub fn rewrite(path: &Path, content: &'static str) -> Action {
    let path = path.to_owned();
    Box::new(move || std::fs::write(path, content).unwrap())
}

/// The text of a tool result that is a string, or a list of parts whose `text` is joined; `None`
/// for any other JSON.
pub fn text_parts(result: &Value) -> Option<String> {
    match result {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
}

/// One model API as a client speaks it.
pub trait ModelApi: Send + Sync + 'static {
    /// One scripted tool call.
    type Call: Clone + Send;
    /// What the client sent back for a call.
    type Result;

    /// Whether `request` (its JSON `body` beside it) is a turn of the client's main loop, the
    /// requests the script answers; everything else is other traffic.
    fn is_turn(request: &HttpRequest, body: &Value) -> bool;

    /// Every tool result a turn's request carries: call id → result.
    fn results(body: &Value) -> HashMap<String, Self::Result>;

    /// The whole HTTP response to a turn. A response that says `Connection: close` ends the
    /// connection; any other keeps it open for the next request.
    fn answer(turn: &Turn<Self::Call>, body: &Value) -> String;

    /// The whole HTTP response to other traffic (as in [`ModelApi::answer`]).
    fn answer_other(request: &HttpRequest, body: &Value) -> String;
}

/// What the model does in a turn.
pub struct Turn<C> {
    /// The id of the step this turn is at: the script's prefix and the step's number.
    pub id: String,
    /// The step's tool call, or `None` once every step's result came back: the final message.
    pub call: Option<C>,
    /// How many turns the current run has had, this one included.
    pub number: usize,
}

struct Script<C> {
    /// Call ids of this run start with it, so a call of an earlier run (after a resume) never
    /// counts.
    prefix: String,
    steps: Vec<C>,
    /// Run before answering step `i`, i.e. once the results of steps `0..i` arrived.
    actions: HashMap<usize, Action>,
}

struct Shared<A: ModelApi> {
    script: Mutex<Script<A::Call>>,
    /// Every turn's request body of the current run, as received.
    requests: Mutex<Vec<Value>>,
    /// Every other request the mock saw in the whole test: `METHOD PATH?QUERY`.
    others: Mutex<Vec<String>>,
}

/// The model: a loopback HTTP server answering the client from a script.
pub struct Mock<A: ModelApi> {
    pub port: u16,
    shared: Arc<Shared<A>>,
}

impl<A: ModelApi> Mock<A> {
    pub fn start() -> Mock<A> {
        let shared = Arc::new(Shared {
            script: Mutex::new(Script {
                prefix: String::new(),
                steps: Vec::new(),
                actions: HashMap::new(),
            }),
            requests: Mutex::new(Vec::new()),
            others: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        let port = serve_loopback(move |request, conn| serve(request, conn, &s));
        Mock { port, shared }
    }

    /// Start a run: its call ids begin with `prefix`, the model makes the calls of `steps` one a
    /// turn, and `actions` run before the step of their number is answered.
    pub fn script(&self, prefix: &str, steps: Vec<A::Call>, actions: Vec<(usize, Action)>) {
        *self.shared.script.lock().unwrap() = Script {
            prefix: prefix.to_owned(),
            steps,
            actions: actions.into_iter().collect(),
        };
        self.shared.requests.lock().unwrap().clear();
    }

    /// What the client sent back for step `i` of the current script, from its latest request.
    pub fn result(&self, i: usize) -> Option<A::Result> {
        let id = format!("{}{i}", self.shared.script.lock().unwrap().prefix);
        let requests = self.shared.requests.lock().unwrap();
        requests
            .iter()
            .rev()
            .find_map(|r| A::results(r).remove(&id))
    }

    /// What the client sent back for step `i`, which it must have sent.
    pub fn output(&self, i: usize) -> A::Result {
        self.result(i).unwrap_or_else(|| {
            let prefix = &self.shared.script.lock().unwrap().prefix;
            panic!("the client sent no result for step {i} ({prefix}{i})")
        })
    }

    /// How many turns the current run made.
    pub fn requests(&self) -> usize {
        self.shared.requests.lock().unwrap().len()
    }

    /// Whether any turn of the current run contains `text` anywhere.
    pub fn sent(&self, text: &str) -> bool {
        self.shared
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.to_string().contains(text))
    }

    /// The body of the current run's latest turn.
    pub fn last_request(&self) -> Value {
        let requests = self.shared.requests.lock().unwrap();
        requests.last().expect("the client made a turn").clone()
    }

    /// Every request but the turns, in the whole test: `METHOD PATH?QUERY`.
    pub fn others(&self) -> Vec<String> {
        self.shared.others.lock().unwrap().clone()
    }
}

fn serve<A: ModelApi>(
    request: HttpRequest,
    conn: &mut TcpStream,
    shared: &Shared<A>,
) -> std::io::Result<bool> {
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let reply = if A::is_turn(&request, &body) {
        A::answer(&next_turn(shared, &body), &body)
    } else {
        shared.others.lock().unwrap().push(format!(
            "{} {}?{}",
            request.method, request.path, request.query
        ));
        A::answer_other(&request, &body)
    };
    conn.write_all(reply.as_bytes())?;
    conn.flush()?;
    let head = reply.split("\r\n\r\n").next().unwrap_or_default();
    Ok(!head
        .lines()
        .any(|h| h.eq_ignore_ascii_case("connection: close")))
}

/// Record a turn's request, run the action due before its step, and say what the model does: the
/// first step whose result has not come back yet, or the final message.
fn next_turn<A: ModelApi>(shared: &Shared<A>, body: &Value) -> Turn<A::Call> {
    shared.requests.lock().unwrap().push(body.clone());
    let results = A::results(body);
    let (n, action) = {
        let mut script = shared.script.lock().unwrap();
        let n = (0..script.steps.len())
            .take_while(|i| results.contains_key(&format!("{}{i}", script.prefix)))
            .count();
        (n, script.actions.remove(&n))
    };
    if let Some(action) = action {
        action();
    }
    let (id, call) = {
        let script = shared.script.lock().unwrap();
        (
            format!("{}{n}", script.prefix),
            script.steps.get(n).cloned(),
        )
    };
    let number = shared.requests.lock().unwrap().len();
    Turn { id, call, number }
}

/// The OpenAI Chat Completions API, streamed, as Qwen Code and Copilot CLI speak it.
pub struct ChatCompletions;

impl ModelApi for ChatCompletions {
    /// A tool's name and its arguments.
    type Call = (&'static str, Value);
    /// The tool message's text.
    type Result = String;

    /// The main loop's requests declare the edit tool (`edit`, or `apply_patch` for the models
    /// Copilot CLI gives a patch tool instead).
    fn is_turn(request: &HttpRequest, body: &Value) -> bool {
        request.method == "POST"
            && request.path == "/v1/chat/completions"
            && body["tools"].as_array().is_some_and(|tools| {
                tools.iter().any(|t| {
                    [&t["function"]["name"], &t["custom"]["name"], &t["name"]]
                        .iter()
                        .any(|n| *n == "edit" || *n == "apply_patch")
                })
            })
    }

    /// Every tool message in a request: call id → its text (a string, or a list of parts).
    fn results(body: &Value) -> HashMap<String, String> {
        let mut out = HashMap::new();
        for m in body["messages"].as_array().into_iter().flatten() {
            if m["role"] == "tool" {
                let content = &m["content"];
                out.insert(
                    m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                    text_parts(content).unwrap_or_else(|| content.to_string()),
                );
            }
        }
        out
    }

    /// One streamed completion: the script's next tool call, or "Done." once every step's
    /// result came back.
    fn answer(turn: &Turn<Self::Call>, _: &Value) -> String {
        let chunk = |delta: Value, finish: Value| {
            json!({
                "id": format!("chatcmpl-{}", turn.number), "object": "chat.completion.chunk",
                "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            })
        };
        let events = match &turn.call {
            Some((name, args)) => vec![
                chunk(
                    json!({"role": "assistant", "tool_calls": [match args {
                        // A freeform tool's input is text (Copilot CLI's `apply_patch`).
                        Value::String(input) => json!({
                            "index": 0, "id": turn.id, "type": "custom",
                            "custom": {"name": name, "input": input},
                        }),
                        _ => json!({
                            "index": 0, "id": turn.id, "type": "function",
                            "function": {"name": name, "arguments": args.to_string()},
                        }),
                    }]}),
                    Value::Null,
                ),
                chunk(json!({}), json!("tool_calls")),
            ],
            None => vec![
                chunk(
                    json!({"role": "assistant", "content": "Done."}),
                    Value::Null,
                ),
                chunk(json!({}), json!("stop")),
            ],
        };
        let usage = json!({
            "id": format!("chatcmpl-{}", turn.number), "object": "chat.completion.chunk",
            "created": 0, "model": "m", "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        });
        let mut data = String::new();
        for e in events.iter().chain([&usage]) {
            data.push_str(&format!("data: {e}\n\n"));
        }
        data.push_str("data: [DONE]\n\n");
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n{data}"
        )
    }

    /// Nothing else is asked of the model; anything that is gets an empty object.
    fn answer_other(_: &HttpRequest, body: &Value) -> String {
        if body["stream"] == true {
            // A side request (OpenCode's title for the session): a short streamed answer.
            let chunk = json!({
                "id": "chatcmpl-side", "object": "chat.completion.chunk", "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Title"}, "finish_reason": "stop"}],
            });
            return format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: {chunk}\n\ndata: [DONE]\n\n"
            );
        }
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".to_owned()
    }
}

/// What the client sent back for step `i`, which must be a tool that ran: neither Stella's
/// refusal nor a host's or plugin's denial.
pub fn assert_allowed(mock: &Mock<ChatCompletions>, i: usize) -> String {
    let text = mock.output(i);
    assert!(
        !text.contains("refusing")
            && !text.starts_with("Denied")
            && !text.contains("Stella could not"),
        "step {i} must pass: {text}"
    );
    text
}
