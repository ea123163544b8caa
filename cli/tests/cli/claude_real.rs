//! End to end with the real Claude Code CLI, offline: a loopback mock of the Anthropic Messages
//! API plays the model and scripts every tool call; Stella's hooks are installed by
//! `git stella hooks install --agent claude-code`; real files change under the client.
//!
//! The client is found through `STELLA_CLAUDE_BIN` (`.ci/run` installs it and sets it). Unset,
//! the test says it was skipped — unless `CI` is set, where a missing client fails the test.
//! The scenarios run one after another in one test: the machine has 2 cores.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::model_mock::{self, ModelApi, Turn, rewrite, text_parts};

/// The Anthropic Messages API as Claude Code speaks it.
struct Messages;

/// The model: a loopback HTTP server answering `POST /v1/messages` from a script.
type Mock = model_mock::Mock<Messages>;

impl ModelApi for Messages {
    /// A tool's name and its input.
    type Call = (&'static str, Value);
    /// The result's text, and whether the tool failed.
    type Result = (String, bool);

    /// The main loop's requests offer the file tools and allow more than one token; any other
    /// message is a side call the script does not count.
    fn is_turn(request: &HttpRequest, body: &Value) -> bool {
        request.method == "POST"
            && request.path == "/v1/messages"
            && body["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "Edit"))
            && body["max_tokens"].as_u64().unwrap_or(100) > 1
    }

    /// Every tool result in a request: id → (text, is_error).
    fn results(body: &Value) -> HashMap<String, (String, bool)> {
        let mut out = HashMap::new();
        for m in body["messages"].as_array().into_iter().flatten() {
            for b in m["content"].as_array().into_iter().flatten() {
                if b["type"] != "tool_result" {
                    continue;
                }
                let text = text_parts(&b["content"]).unwrap_or_default();
                let id = b["tool_use_id"].as_str().unwrap_or_default().to_owned();
                out.insert(id, (text, b["is_error"] == true));
            }
        }
        out
    }

    fn answer(turn: &Turn<Self::Call>, body: &Value) -> String {
        let call = turn
            .call
            .as_ref()
            .map(|(name, input)| (turn.id.as_str(), *name, input));
        message(call, body["stream"] == true)
    }

    /// Any other message gets the final answer; the other endpoints an empty one, on a
    /// connection that stays open.
    fn answer_other(request: &HttpRequest, body: &Value) -> String {
        if request.method == "POST" && request.path == "/v1/messages" {
            return message(None, body["stream"] == true);
        }
        let reply = if request.path.ends_with("/count_tokens") {
            r#"{"input_tokens":10}"#
        } else {
            "{}"
        };
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        )
    }
}

/// The assistant's message making `call` (id, tool name, input), or saying "Done." without one:
/// streamed as server-sent events when `stream`, else whole; either closes the connection.
fn message(call: Option<(&str, &str, &Value)>, stream: bool) -> String {
    let (blocks, stop) = match call {
        Some((id, name, input)) => (
            vec![json!({"type": "tool_use", "id": id, "name": name, "input": input})],
            "tool_use",
        ),
        None => (vec![json!({"type": "text", "text": "Done."})], "end_turn"),
    };
    let message = json!({
        "id": "msg_mock", "type": "message", "role": "assistant", "model": "claude-mock",
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}, "content": []
    });
    if !stream {
        let mut full = message.clone();
        full["content"] = json!(blocks);
        full["stop_reason"] = json!(stop);
        let text = full.to_string();
        return format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
    }
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": message}),
    )];
    for (i, b) in blocks.iter().enumerate() {
        let (start, delta) = if b["type"] == "tool_use" {
            (
                json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": b["input"].to_string()}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": b["text"]}),
            )
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let mut text = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    );
    for (name, data) in events {
        text.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    text
}

struct Client<'a> {
    bin: PathBuf,
    w: &'a World,
    mock: &'a Mock,
}

impl Client<'_> {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        clean_env(&mut cmd, &self.w.home, &self.w.stella_home);
        cmd.current_dir(&self.w.repo)
            .env("PATH", path_with_stella())
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", self.mock.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-offline-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .args([
                "--output-format",
                "json",
                "--permission-mode",
                "acceptEdits",
            ])
            .args(["--allowedTools", "Read,Edit,Write,Bash"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Run the client to the end (bounded), returning its output and final JSON.
    fn run(&self, args: &[&str]) -> (Output, Value) {
        let out = run_bounded(&mut self.command(args), Duration::from_secs(180));
        let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "the client printed no JSON (status {:?}):\nstdout: {}\nstderr: {}",
                out.status,
                stdout(&out),
                stderr(&out)
            )
        });
        (out, json)
    }
}

fn read(path: &Path) -> Value {
    json!({"file_path": path})
}

fn edit(path: &Path, old: &str, new: &str) -> Value {
    json!({"file_path": path, "old_string": old, "new_string": new, "replace_all": false})
}

/// What the model was told when Stella refused an edit of notes.txt.
fn assert_refused_by_stella(result: Option<(String, bool)>) {
    assert_refused_by_stella_on(result, "notes.txt");
}

/// What the model was told when Stella refused an edit of `file`.
fn assert_refused_by_stella_on(result: Option<(String, bool)>, file: &str) {
    let (text, is_error) = result.expect("the client sent the Edit's result back to the model");
    assert!(
        is_error,
        "the refused Edit must be a failed tool call: {text}"
    );
    assert!(
        text.contains("PreToolUse:Edit hook error")
            && text.contains(&format!(
                "refusing to write: {file}\n{file} changed since this session last read it"
            ))
            && text.contains(&format!("Nothing was written. To recover, re-read {file}")),
        "the model must receive Stella's refusal: {text}"
    );
}

/// Where the client keeps the transcript of a session started in `cwd`:
/// `$HOME/.claude/projects/<cwd with every character but ASCII letters and digits turned into
/// '-'>/<session id>.jsonl` (for paths up to 200 characters; longer ones are cut and hashed).
fn transcript_file(home: &Path, cwd: &Path, session: &str) -> PathBuf {
    let folder: String = cwd
        .to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects")
        .join(folder)
        .join(format!("{session}.jsonl"))
}

/// The real Claude Code client, driven offline against a mock of its model API, guarded by Stella.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_claude_code_client_is_guarded_by_stella() {
    let Some(bin) = client_bin("STELLA_CLAUDE_BIN", "the real Claude Code test") else {
        return;
    };
    let mock = Mock::start();

    // (a) Read → another process edits → Edit refused; the turn goes on.
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    let c = Client {
        bin: bin.clone(),
        w: &w,
        mock: &mock,
    };
    let notes = w.repo.join("notes.txt");
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "toolu_a_",
        vec![
            ("Read", read(&notes)),
            ("Edit", edit(&notes, "beta", "BETA")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    let (_, result) = c.run(&["-p", "Please update notes.txt"]);
    assert_refused_by_stella(mock.result(1));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );
    // The turn went on: the model answered after the refusal, and the run ended normally.
    assert_eq!(mock.requests(), 3);
    assert_eq!(result["result"], "Done.");
    assert_eq!(result["is_error"], false);
    let sid = result["session_id"].as_str().unwrap().to_owned();
    let log = w.ok(&["log", &sid]);
    assert!(
        log.contains("read notes.txt") && log.contains("turn end"),
        "{log}"
    );

    // (b) The betamax case: the change is inside the text the edit matches.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "toolu_b_",
        vec![
            ("Read", read(&notes)),
            ("Edit", edit(&notes, "beta", "BETA")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbetamax\n"))],
    );
    c.run(&["-p", "Please update notes.txt"]);
    assert_refused_by_stella(mock.result(1));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbetamax\n",
        "no BETAmax: Stella refused the edit"
    );

    // (d) Edit and Write of a file never read, and Write of a new file: allowed.
    w.write("other.txt", "one\ntwo\n");
    let other = w.repo.join("other.txt");
    let fresh = w.repo.join("fresh.txt");
    mock.script(
        "toolu_d_",
        vec![
            (
                "Write",
                json!({"file_path": fresh, "content": "new file\n"}),
            ),
            ("Edit", edit(&other, "two", "TWO")),
            (
                "Write",
                json!({"file_path": other, "content": "replaced\n"}),
            ),
        ],
        vec![],
    );
    c.run(&["-p", "Write the files"]);
    for i in 0..3 {
        let (text, is_error) = mock.result(i).unwrap();
        assert!(!is_error && !text.contains("refusing"), "step {i}: {text}");
    }
    assert_eq!(w.read("fresh.txt"), "new file\n");
    assert_eq!(w.read("other.txt"), "replaced\n");

    // (e) Read → Edit → Edit again: the session's own writes never stale it.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "toolu_e_",
        vec![
            ("Read", read(&notes)),
            ("Edit", edit(&notes, "beta", "BETA")),
            ("Edit", edit(&notes, "alpha", "ALPHA")),
        ],
        vec![],
    );
    c.run(&["-p", "Edit twice"]);
    for i in 1..3 {
        let (text, is_error) = mock.result(i).unwrap();
        assert!(!is_error, "edit {i} must pass: {text}");
    }
    assert_eq!(w.read("notes.txt"), "ALPHA\nBETA\n");

    // CRLF and invalid UTF-8: the client renders them as text; read, edit, edit again — no
    // false refusal, and the bytes Stella records are the ones on disk.
    std::fs::write(w.repo.join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    std::fs::write(w.repo.join("latin1.txt"), b"caf\xe9\nbar\n").unwrap();
    let crlf = w.repo.join("crlf.txt");
    let latin1 = w.repo.join("latin1.txt");
    mock.script(
        "toolu_f_",
        vec![
            ("Read", read(&crlf)),
            ("Edit", edit(&crlf, "two", "TWO")),
            ("Edit", edit(&crlf, "one", "ONE")),
            ("Read", read(&latin1)),
            ("Edit", edit(&latin1, "bar", "BAR")),
        ],
        vec![],
    );
    let (_, result) = c.run(&["-p", "Edit the odd files"]);
    for i in [0, 1, 2, 3] {
        let (text, is_error) = mock.result(i).unwrap();
        assert!(!is_error, "step {i}: {text}");
    }
    // The client itself refuses to edit a file that is not UTF-8 (nothing for Stella to do).
    let (text, _) = mock.result(4).unwrap();
    assert!(
        text.contains("File is not valid UTF-8") && !text.contains("refusing"),
        "{text}"
    );
    assert_eq!(std::fs::read(&crlf).unwrap(), b"ONE\r\nTWO\r\n");
    assert_eq!(std::fs::read(&latin1).unwrap(), b"caf\xe9\nbar\n");
    let sid = result["session_id"].as_str().unwrap().to_owned();
    assert_eq!(
        w.ok(&["--session", &sid, "status"]),
        "unchanged  crlf.txt\nunchanged  latin1.txt"
    );

    // (h) A large file: the client shows five lines of a 12 MiB log; the hooks record the file
    // as `read` stores it (streamed, never held whole), and a change to it refuses the Edit.
    // The change keeps the file's modification time: the client's own check (by that time,
    // for a partial read) passes it; Stella's, by the bytes, does not.
    let line = "a line of a large log file, one of very many of them\n";
    let big = format!(
        "the log of a long run\n{}",
        line.repeat((12 << 20) / line.len())
    );
    let big_log = w.repo.join("big.log");
    std::fs::write(&big_log, &big).unwrap();
    let append: model_mock::Action = {
        let path = big_log.clone();
        Box::new(move || {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
            let mtime = f.metadata().unwrap().modified().unwrap();
            f.write_all(b"theirs\n").unwrap();
            f.set_modified(mtime).unwrap();
        })
    };
    mock.script(
        "toolu_h_",
        vec![
            (
                "Read",
                json!({"file_path": big_log, "offset": 1, "limit": 5}),
            ),
            ("Edit", edit(&big_log, "of a long run", "of one run")),
        ],
        vec![(1, append)],
    );
    c.run(&["-p", "Trim the log"]);
    let (text, is_error) = mock.result(0).unwrap();
    assert!(!is_error && text.contains(line.trim_end()), "{text}");
    assert_refused_by_stella_on(mock.result(1), "big.log");
    assert_eq!(
        std::fs::metadata(&big_log).unwrap().len(),
        big.len() as u64 + 7
    );

    // The shell guard: `hooks install` set CLAUDE_CODE_SHELL_PREFIX, so every Bash command runs
    // under `git stella exec` in this Claude session's Stella session.
    let settings: Value =
        serde_json::from_slice(&std::fs::read(w.repo.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["env"]["CLAUDE_CODE_SHELL_PREFIX"], "git-stella --claude-code-shell",
        "{settings}"
    );
    let bash = |command: &str| json!({"command": command, "description": "shell"});

    // (g) Read → another process rewrites the file → the model overwrites it through Bash with a
    // heredoc: refused, the other process's bytes kept, the model told, the turn goes on.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "toolu_g_",
        vec![
            ("Read", read(&notes)),
            ("Bash", bash("cat > notes.txt <<'EOF'\nalpha\nBETA\nEOF")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ndelta (another process)\n"))],
    );
    let (_, result) = c.run(&["-p", "Rewrite notes.txt"]);
    let (text, is_error) = mock.result(1).unwrap();
    assert!(is_error, "{text}");
    assert!(
        text.contains(
            "refusing to write: notes.txt\nnotes.txt changed since this session last read it"
        ) && text.contains("Nothing was written. To recover, re-read notes.txt")
            && text.contains("Permission denied"),
        "the model must receive Stella's refusal: {text}"
    );
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ndelta (another process)\n"
    );
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Done.");

    // (h) A `cat` through Bash arms the guard: another process appends, the Bash overwrite is
    // refused.
    w.write("shell.txt", "from the shell\n");
    let appended = w.repo.join("shell.txt");
    mock.script(
        "toolu_h_",
        vec![
            ("Bash", bash("cat shell.txt")),
            ("Bash", bash("echo replaced > shell.txt")),
        ],
        vec![(
            1,
            Box::new(move || {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&appended)
                    .unwrap();
                f.write_all(b"appended by another process\n").unwrap();
            }),
        )],
    );
    c.run(&["-p", "Replace shell.txt"]);
    let (text, is_error) = mock.result(0).unwrap();
    assert!(!is_error && text.contains("from the shell"), "{text}");
    let (text, is_error) = mock.result(1).unwrap();
    assert!(
        is_error && text.contains("refusing to write: shell.txt"),
        "{text}"
    );
    assert_eq!(
        w.read("shell.txt"),
        "from the shell\nappended by another process\n"
    );

    // (i) Read → the model's own `sed -i` → Edit: allowed (its own change, not someone else's);
    // a file created through Bash is allowed, and so is an Edit of it.
    w.write("notes.txt", "alpha\nbeta\n");
    let created = w.repo.join("created.txt");
    mock.script(
        "toolu_i_",
        vec![
            ("Read", read(&notes)),
            ("Bash", bash("sed -i s/beta/bet/ notes.txt")),
            ("Edit", edit(&notes, "alpha", "ALPHA")),
            (
                "Bash",
                bash("mkdir -p made && printf 'one\\n' > created.txt"),
            ),
            ("Edit", edit(&created, "one", "ONE")),
        ],
        vec![],
    );
    let (_, result) = c.run(&["-p", "Tweak notes.txt"]);
    for i in 0..5 {
        let (text, is_error) = mock.result(i).unwrap();
        assert!(
            !is_error && !text.contains("refusing"),
            "step {i} must pass: {text}"
        );
    }
    assert_eq!(w.read("notes.txt"), "ALPHA\nbet\n");
    assert_eq!(w.read("created.txt"), "ONE\n");
    let sid = result["session_id"].as_str().unwrap().to_owned();
    let log = w.ok(&["log", &sid]);
    assert!(
        log.contains("exec sed -i s/beta/bet/ notes.txt (0 read, 1 changed)"),
        "each Bash command is one step of the session: {log}"
    );

    // (u) Another Stella session's uncommitted write, and a Claude session that never read the
    // file runs `git checkout -- .` through Bash: git cannot unlink it, the bytes stay, and the
    // model reads whose work it is and what to do.
    w.write("api.rs", "fn api() {}\n");
    w.git(&["add", "api.rs"]);
    w.git(&["commit", "-q", "-m", "api"]);
    w.ok(&["session", "start", "--id", "agent-a"]);
    let theirs = "fn api() { /* agent a's uncommitted work */ }\n";
    w.ok_stdin(
        &["--session", "agent-a", "write", "api.rs"],
        theirs.as_bytes(),
    );
    mock.script(
        "toolu_u_",
        vec![("Bash", bash("git checkout -- ."))],
        vec![],
    );
    let (_, result) = c.run(&["-p", "Throw away the changes in the tree"]);
    let (text, is_error) = mock.result(0).unwrap();
    assert!(is_error, "{text}");
    assert!(
        text.contains("refusing to delete: api.rs\napi.rs holds what session agent-a wrote at ")
            && text.contains("ask session agent-a to commit it")
            && text.contains("unable to unlink old 'api.rs'"),
        "the model must receive Stella's refusal: {text}"
    );
    assert_eq!(w.read("api.rs"), theirs);
    assert_eq!(result["result"], "Done.");

    // Someone writes after Stella's check passed and before the tool runs (here: another
    // PreToolUse hook that Claude Code runs beside Stella's, as a permission prompt would give
    // time for): the edit lands on bytes the session never saw. Stella keeps them, and the
    // model is told how to get them back.
    w.write("notes.txt", "alpha\nbeta\n");
    let settings_path = w.repo.join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_slice(&std::fs::read(&settings_path).unwrap()).unwrap();
    let sneak = format!(
        "sleep 3; printf 'alpha\\nbeta\\nsneaked in\\n' > '{}'",
        notes.display()
    );
    settings["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({"matcher": "Edit", "hooks": [{"type": "command", "command": sneak}]}));
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    mock.script(
        "toolu_h_",
        vec![
            ("Read", read(&notes)),
            ("Edit", edit(&notes, "beta", "BETA")),
        ],
        vec![],
    );
    c.run(&["-p", "Please update notes.txt"]);
    let (text, is_error) = mock.result(1).unwrap();
    assert!(!is_error, "{text}");
    assert_eq!(w.read("notes.txt"), "alpha\nBETA\nsneaked in\n");
    assert!(
        mock.sent(
            "Stella: notes.txt changed on disk after this session last read it and before Edit ran"
        ),
        "the model must be told its edit overwrote bytes it never saw"
    );
    let told = mock.last_request().to_string();
    // The way back it gives: `git stella recover 'notes.txt' --show <version>`.
    let version = told
        .split("recover 'notes.txt' --show ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    let shown = w.run(&["recover", "notes.txt", "--show", &version]);
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    assert_eq!(stdout(&shown), "alpha\nbeta\nsneaked in\n");
    let mut settings: Value =
        serde_json::from_slice(&std::fs::read(&settings_path).unwrap()).unwrap();
    settings["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .pop();
    std::fs::write(&settings_path, settings.to_string()).unwrap();

    // (c) Read, SIGKILL the client, edit the file, resume, Edit without re-reading: refused,
    // and the resumed session is told which file changed.
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    let c = Client {
        bin: bin.clone(),
        w: &w,
        mock: &mock,
    };
    let notes = w.repo.join("notes.txt");
    w.write("notes.txt", "alpha\nbeta\n");
    let sid = "3f0a1d6e-5b7c-4e1a-9d2b-7c8e9f0a1b2c";
    let (tx, rx) = mpsc::channel();
    let killed = Arc::new(AtomicBool::new(false));
    let held = Arc::clone(&killed);
    mock.script(
        "toolu_c1_",
        vec![
            ("Read", read(&notes)),
            ("Edit", edit(&notes, "beta", "BETA")),
        ],
        vec![(
            1,
            Box::new(move || {
                // The Read's result reached the model (its PostToolUse hook ran): kill the
                // client now, before it can do anything else.
                tx.send(()).unwrap();
                let until = Instant::now() + Duration::from_secs(30);
                while !held.load(Ordering::SeqCst) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }),
        )],
    );
    let mut child = c
        .command(&["-p", "Please update notes.txt", "--session-id", sid])
        .spawn()
        .unwrap();
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the client reached the model with the Read's result");
    // SIGKILL: no Stop, no SessionEnd.
    child.kill().unwrap();
    child.wait().unwrap();
    killed.store(true, Ordering::SeqCst);
    assert_eq!(w.read("notes.txt"), "alpha\nbeta\n");
    w.write(
        "notes.txt",
        "alpha\nbeta\nchanged while the agent was dead\n",
    );
    mock.script(
        "toolu_c2_",
        vec![("Edit", edit(&notes, "beta", "BETA"))],
        vec![],
    );
    let (_, result) = c.run(&["-p", "Go on", "--resume", sid]);
    assert_eq!(result["session_id"], sid);
    assert_refused_by_stella(mock.result(0));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\nchanged while the agent was dead\n"
    );
    assert!(
        mock.sent("Stella: while this session was away, files it had read or written changed on disk (another agent or a person edited them):\\n- notes.txt (changed)"),
        "the resumed model must be told notes.txt changed"
    );

    // (f) Cross-machine: a session works on machine A and is checkpointed; a colleague on
    // machine B (another HOME, another STELLA_HOME, a clone at another path) replays it with
    // `replay --materialize --as <id>`, puts the transcript where the client looks and runs
    // `claude --resume <id>`. B's session is guarded exactly as A's was.
    let a = World::new();
    a.ok(&["hooks", "install", "--agent", "claude-code"]);
    a.write("notes.txt", "alpha\nbeta\n");
    a.write("todo.txt", "one\ntwo\n");
    a.git(&["add", "notes.txt", "todo.txt"]);
    a.git(&["commit", "-q", "-m", "notes and todo"]);
    let ca = Client {
        bin: bin.clone(),
        w: &a,
        mock: &mock,
    };
    let sid = "7d4c2b1a-0e9f-4a8b-8c7d-6e5f4a3b2c1d";
    mock.script(
        "toolu_xa_",
        vec![
            ("Read", read(&a.repo.join("notes.txt"))),
            ("Read", read(&a.repo.join("todo.txt"))),
            ("Edit", edit(&a.repo.join("todo.txt"), "one", "ONE")),
        ],
        vec![],
    );
    let (_, result) = ca.run(&["-p", "Start on the notes", "--session-id", sid]);
    assert_eq!(result["session_id"], sid);
    for i in 0..3 {
        let (text, is_error) = mock.result(i).unwrap();
        assert!(!is_error, "A, step {i}: {text}");
    }
    assert_eq!(a.read("todo.txt"), "ONE\ntwo\n");
    let on_a = transcript_file(&a.home, &a.repo, sid);
    assert!(
        on_a.is_file(),
        "the client keeps its transcript at {on_a:?}"
    );
    let artifact = a.base().join("session.stella.bundle");
    a.checkpoint_to(sid, &artifact);

    let b = World::clone_of(&a);
    assert_ne!(a.repo, b.repo);
    b.ok(&["hooks", "install", "--agent", "claude-code"]);
    let copied = b.base().join("session.stella.bundle");
    std::fs::copy(&artifact, &copied).unwrap();
    let cb = Client {
        bin: bin.clone(),
        w: &b,
        mock: &mock,
    };
    // Without the transcript on B the client has nothing to resume (and no hook runs).
    let out = cb
        .command(&["-p", "Go on", "--resume", sid])
        .output()
        .unwrap();
    assert!(
        !out.status.success()
            && stderr(&out).contains(&format!("No conversation found with session ID: {sid}")),
        "{out:?}"
    );
    assert_eq!(
        b.ok(&[
            "replay",
            copied.to_str().unwrap(),
            "--materialize",
            "--as",
            sid
        ]),
        sid
    );
    assert_eq!(
        b.read("todo.txt"),
        "ONE\ntwo\n",
        "A's edit was materialized"
    );
    assert_eq!(b.read("notes.txt"), "alpha\nbeta\n");
    // The transcript as the session stored it, byte for byte, placed where B's client looks.
    let transcript_name = format!("{sid}.jsonl");
    let stored_transcript =
        || b.run(&["--session", sid, "resume", "--transcript", &transcript_name]);
    let out = stored_transcript();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let from_a = std::fs::read(&on_a).unwrap();
    assert!(out.stdout == from_a, "the stored transcript is A's file");
    let on_b = transcript_file(&b.home, &b.repo, sid);
    std::fs::create_dir_all(on_b.parent().unwrap()).unwrap();
    std::fs::write(&on_b, &out.stdout).unwrap();
    // Another process on B changes a file A read and wrote, before the session resumes.
    b.write("todo.txt", "ONE\ntwo\nthree (another process on B)\n");
    let notes_b = b.repo.join("notes.txt");
    mock.script(
        "toolu_xb_",
        vec![
            // A read notes.txt and nobody changed it: an Edit without re-reading passes.
            ("Edit", edit(&notes_b, "beta", "BETA")),
            // Another process changes it now: refused.
            ("Edit", edit(&notes_b, "alpha", "ALPHA")),
            // Changed before the resume: refused.
            ("Edit", edit(&b.repo.join("todo.txt"), "two", "TWO")),
        ],
        vec![(1, rewrite(&notes_b, "alpha\nBETA\nanother process on B\n"))],
    );
    let (_, result) = cb.run(&["-p", "Go on", "--resume", sid]);
    assert_eq!(result["session_id"], sid, "the same session continues on B");
    assert!(
        mock.sent("toolu_xa_0"),
        "the model on B gets the conversation from A"
    );
    assert!(
        mock.sent("Stella: while this session was away, files it had read or written changed on disk (another agent or a person edited them):\\n- todo.txt (changed)"),
        "the resumed model on B must be told todo.txt changed"
    );
    let (text, is_error) = mock.result(0).unwrap();
    assert!(
        !is_error,
        "the Edit of a file A read must pass on B: {text}"
    );
    assert_refused_by_stella(mock.result(1));
    assert_eq!(b.read("notes.txt"), "alpha\nBETA\nanother process on B\n");
    assert_refused_by_stella_on(mock.result(2), "todo.txt");
    assert_eq!(
        b.read("todo.txt"),
        "ONE\ntwo\nthree (another process on B)\n"
    );
    // B's journal continues A's: the replay, then B's steps; its transcript continues A's.
    let log = b.ok(&["log", sid]);
    assert!(
        log.contains(&format!("replay of session {sid}")) && log.contains("wrote notes.txt"),
        "{log}"
    );
    let out = stored_transcript();
    assert!(out.stdout.len() > from_a.len() && out.stdout.starts_with(&from_a));
}

/// Two writers at the same moment where the host writes: another session writes notes.txt
/// after Stella's PreToolUse check of the client's Write and before the client writes. Claude
/// Code checks the file itself after its PreToolUse hooks (its own "changed since it was last
/// read"), so the other session's write is not replaced: the model is told by the client, and
/// Stella's after-event report (tested with Claude Code's payloads in `hook_race.rs`) is left for
/// the moment between the client's own check and its write.
#[test]
fn the_real_claude_code_client_rechecks_a_file_written_after_the_pretooluse_check() {
    let Some(bin) = client_bin("STELLA_CLAUDE_BIN", "the real Claude Code test") else {
        return;
    };
    let mock = Mock::start();
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    w.ok(&["session", "start", "--id", "other"]);
    let notes = w.repo.join("notes.txt");
    w.write("notes.txt", "alpha\nbeta\n");
    w.ok(&["--session", "other", "read", "notes.txt"]);
    // The installed hook, wrapped: right after its PreToolUse answer to a Write, the other
    // session writes the file through Stella.
    let times = w.base().join("times");
    wrap_hook_with_other_writer(
        &w,
        ".claude/settings.json",
        "claude-code",
        ("PreToolUse", "PostToolUse", "Write"),
        &times,
    );
    let c = Client {
        bin,
        w: &w,
        mock: &mock,
    };
    mock.script(
        "toolu_r_",
        vec![
            ("Read", read(&notes)),
            (
                "Write",
                json!({"file_path": notes, "content": "alpha\nBETA\n"}),
            ),
        ],
        vec![],
    );
    c.run(&["-p", "Please update notes.txt"]);
    let (text, is_error) = mock.result(1).unwrap();
    assert!(
        is_error && text.contains("File content has changed since it was last read"),
        "{text}"
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbeta\nthe other session\n");
}

/// docs/agents.md's CI recipe, pasted into bash, around the real client: a job whose hooks are
/// committed passes it; one whose checkout lacks them stops at `doctor`, before the agent runs.
#[test]
fn the_ci_recipe_runs_as_pasted_around_the_real_client() {
    let Some(bin) = client_bin(
        "STELLA_CLAUDE_BIN",
        "the CI recipe with the real Claude Code",
    ) else {
        return;
    };
    if !have("jq", "the CI recipe") {
        return;
    }
    let recipe = crate::demo::sh_blocks(
        "docs/agents.md",
        Some("## In CI: check that every agent session was guarded"),
    );
    assert!(recipe.contains("claude -p \"$TASK\""), "{recipe}");
    let mock = Mock::start();
    let job = |w: &World| {
        // The runner: Stella and the client on PATH, the model at the mock.
        let tools = w.base().join("runner-bin");
        std::fs::create_dir_all(&tools).unwrap();
        let _ = std::os::unix::fs::symlink(&bin, tools.join("claude"));
        let mut path = std::ffi::OsString::from(&tools);
        path.push(":");
        path.push(path_with_stella());
        let mut cmd = Command::new("bash");
        clean_env(&mut cmd, &w.home, &w.stella_home);
        cmd.current_dir(&w.repo)
            .env("PATH", path)
            .env("TASK", "Please update notes.txt")
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", mock.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-offline-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .args(["-ec", &recipe])
            .stdin(Stdio::null());
        run_bounded(&mut cmd, Duration::from_secs(180))
    };
    let script = |notes: &Path| {
        mock.script(
            "toolu_ci_",
            vec![("Read", read(notes)), ("Edit", edit(notes, "beta", "BETA"))],
            vec![],
        );
    };

    // Hooks installed and committed: the agent runs guarded and the checks pass.
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    w.git(&["add", "."]);
    w.git(&["commit", "-q", "-m", "guard agents with Stella"]);
    let notes = w.repo.join("notes.txt");
    script(&notes);
    let out = job(&w);
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(w.read("notes.txt"), "alpha\nBETA\n");
    let (text, is_error) = mock.result(1).unwrap();
    assert!(!is_error, "{text}");

    // No hooks in the checkout: doctor stops the job before the agent touches anything.
    let bare = World::new();
    bare.write("notes.txt", "alpha\nbeta\n");
    script(&bare.repo.join("notes.txt"));
    let out = job(&bare);
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(mock.requests(), 0, "the agent never ran");
    assert_eq!(bare.read("notes.txt"), "alpha\nbeta\n");
}
