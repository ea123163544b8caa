//! End to end with the real Gemini CLI, offline: a loopback mock of the Gemini API
//! (`streamGenerateContent`) plays the model and scripts every tool call; Stella's hooks are
//! installed by `git stella hooks install --agent gemini`; real files change under the client.
//! The hooks guard the file tools and rewrite every `run_shell_command` to run under
//! `git stella exec`, the shell guard, in the same session.
//!
//! The client is found through `STELLA_GEMINI_BIN`: an executable that runs Gemini CLI, such as
//! the package's `bundle/gemini.js` (its `#!/usr/bin/env node` line runs it with the `node` on
//! PATH), npm's `node_modules/.bin/gemini` link to it, or a wrapper script. `.ci/run` installs
//! `@google/gemini-cli` and sets it. Unset, the test says it was skipped — unless `CI` is set,
//! where a missing client fails the test.
//!
//! The client runs as a user runs it headless: the folder trusted with
//! `GEMINI_CLI_TRUST_WORKSPACE=true` (so the project's `.gemini/settings.json`, and with it
//! Stella's hooks, is loaded; `--skip-trust` would load no project settings), the API key auth
//! chosen in the user's settings, usage statistics, telemetry, auto-update and the IDE turned
//! off there, a pinned model (no routing call) and `--approval-mode yolo` (the mode that declares
//! the write and shell tools). The scenarios run one after another in one test: the machine has
//! 2 cores. Each run of the client starts node afresh: 4 to 7 s a run, 20 to 30 s in all.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::model_mock::{self, ModelApi, Turn, rewrite};

/// The model every run pins (the default, `auto`, would first ask a router model).
const MODEL: &str = "gemini-2.5-pro";

/// The Gemini API's `streamGenerateContent` as Gemini CLI speaks it.
struct GenerateContent;

/// The model: a loopback HTTP server answering `POST /v1beta/models/<model>:streamGenerateContent`
/// from a script.
type Mock = model_mock::Mock<GenerateContent>;

impl ModelApi for GenerateContent {
    /// A function's name and its arguments.
    type Call = (&'static str, Value);
    /// The `functionResponse`'s `response` (`{"output": …}`, or `{"error": …}` for a failed or
    /// blocked tool).
    type Result = Value;

    /// The main loop's requests declare the file tools; anything else (a router, a corrector, a
    /// usage logger) is other traffic.
    fn is_turn(request: &HttpRequest, body: &Value) -> bool {
        request.method == "POST"
            && request.path == format!("/v1beta/models/{MODEL}:streamGenerateContent")
            && body["tools"][0]["functionDeclarations"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["name"] == "replace"))
    }

    /// Every function response in a request: id → `response`.
    fn results(body: &Value) -> HashMap<String, Value> {
        let mut out = HashMap::new();
        for c in body["contents"].as_array().into_iter().flatten() {
            for part in c["parts"].as_array().into_iter().flatten() {
                let r = &part["functionResponse"];
                if let Some(id) = r["id"].as_str() {
                    out.insert(id.to_owned(), r["response"].clone());
                }
            }
        }
        out
    }

    fn answer(turn: &Turn<Self::Call>, _: &Value) -> String {
        let part = match &turn.call {
            Some((name, args)) => json!({
                "functionCall": {"id": turn.id, "name": name, "args": args}
            }),
            None => json!({"text": "Done."}),
        };
        let event = json!({
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
            "modelVersion": MODEL,
        });
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\ndata: {event}\r\n\r\n"
        )
    }

    /// An empty JSON object.
    fn answer_other(_: &HttpRequest, _: &Value) -> String {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".to_owned()
    }
}

struct Client<'a> {
    bin: &'a Path,
    w: &'a World,
    mock: &'a Mock,
}

impl Client<'_> {
    /// `gemini -p PROMPT`, headless, in the repository, with `git-stella`'s folder on PATH.
    fn command(&self, prompt: &str) -> Command {
        let mut cmd = Command::new(self.bin);
        clean_env(&mut cmd, &self.w.home, &self.w.stella_home);
        cmd.current_dir(&self.w.repo)
            .env("PATH", path_with_stella())
            .env("GEMINI_API_KEY", "x")
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", self.mock.port),
            )
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .args(["-p", prompt, "-m", MODEL, "--approval-mode", "yolo"])
            .args(["--output-format", "json"])
            .stdin(Stdio::null());
        cmd
    }

    /// Run the client to the end (bounded), returning its output and final JSON.
    fn run(&self, prompt: &str) -> (Output, Value) {
        let started = Instant::now();
        let out = run_bounded(&mut self.command(prompt), Duration::from_secs(120));
        let _ = writeln!(
            std::io::stderr().lock(),
            "gemini -p {prompt:?}: {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "the client printed no JSON (status {:?}):\nstdout: {}\nstderr: {}",
                out.status,
                stdout(&out),
                stderr(&out)
            )
        });
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        (out, json)
    }
}

/// The user's own settings: API-key auth (with `GOOGLE_GEMINI_BASE_URL` set and no auth chosen,
/// Gemini CLI picks the `gateway` auth, which headless runs reject), and nothing that talks to
/// anything but the model (the usage logger, telemetry, the update check, the IDE).
fn user_settings(home: &Path) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "ide": {"enabled": false},
        "tools": {"disableLLMCorrection": true},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

fn read_file(path: &Path) -> Value {
    json!({"file_path": path})
}

fn write_file(path: &Path, content: &str) -> Value {
    json!({"file_path": path, "content": content})
}

fn replace(path: &Path, old: &str, new: &str) -> Value {
    json!({"file_path": path, "instruction": "Change it.", "old_string": old, "new_string": new})
}

fn shell(command: &str) -> Value {
    json!({"command": command, "description": "Run a command."})
}

/// The text of a tool's result, and whether it was an error.
fn told(result: &Value) -> (String, bool) {
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    match result.get("error") {
        Some(e) => (text(e), true),
        None => (text(&result["output"]), false),
    }
}

/// A file tool of step `i` that Stella refused: the tool did not run and the model got the
/// refusal, word for word, as the tool's error.
fn assert_refused(mock: &Mock, i: usize, file: &str, diff: &str) {
    assert_eq!(
        told(&mock.output(i)),
        (
            format!("Tool execution blocked: {}", write_refusal(file, diff)),
            true
        ),
        "step {i}: the model must receive Stella's refusal as the tool's error"
    );
}

/// How Gemini CLI ends a tool's result when a BeforeTool hook rewrote its input: here, the
/// shell command Stella wrapped in `git stella exec`.
const REWRITTEN: &str =
    "\n\n[System] Tool input parameters were modified by a hook before execution.";

/// The hunk of a refusal when another process appended `line` to `alpha\nbeta\n`.
fn appended(line: &str) -> String {
    format!("@@ -1,2 +1,3 @@\n alpha\n beta\n+{line}")
}

/// A tool of step `i` that ran: no error, no refusal.
fn assert_allowed(mock: &Mock, i: usize) -> String {
    let (text, is_error) = told(&mock.output(i));
    assert!(
        !is_error && !text.contains("refusing"),
        "step {i} must pass: {text}"
    );
    text
}

/// The real Gemini CLI, driven offline against a mock of its model API, guarded by Stella.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_gemini_cli_is_guarded_by_stella() {
    let Some(bin) = client_bin("STELLA_GEMINI_BIN", "the real Gemini CLI test") else {
        return;
    };
    let started = Instant::now();
    let mock = Mock::start();
    let w = World::new();
    user_settings(&w.home);
    w.ok(&["hooks", "install", "--agent", "gemini"]);
    let c = Client {
        bin: &bin,
        w: &w,
        mock: &mock,
    };
    let notes = w.repo.join("notes.txt");

    // (1) `cat` through the shell arms the guard: another process edits the file, the
    // session's write_file is refused.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "s1_",
        vec![
            ("run_shell_command", shell("cat notes.txt")),
            ("write_file", write_file(&notes, "mine\n")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    let (_, result) = c.run("Rewrite notes.txt");
    // The command ran, rewritten by Stella's hook, under the shell guard: the model saw what
    // `cat` printed, and the session recorded the read.
    let shown = assert_allowed(&mock, 0);
    assert!(
        shown.starts_with("<untrusted_context>\nOutput: alpha\nbeta\nProcess Group PGID: ")
            && shown.ends_with(&format!("</untrusted_context>{REWRITTEN}")),
        "{shown}"
    );
    assert_refused(&mock, 1, "notes.txt", &appended("gamma (another process)"));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );
    // The turn went on: the model answered after the refusal, and the run ended normally.
    assert_eq!(mock.requests(), 3);
    assert_eq!(result["response"], "Done.");
    let log = w.ok(&["log", result["session_id"].as_str().unwrap()]);
    assert!(
        log.contains("exec cat notes.txt (1 read, 0 changed)")
            && log.contains("refused write notes.txt"),
        "{log}"
    );

    // (2) read_file → another process edits → the shell overwrites the file: refused by the
    // shell guard, the other process's bytes kept, the refusal in the command's output.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "s2_",
        vec![
            ("read_file", read_file(&notes)),
            ("run_shell_command", shell("printf 'x\\n' > notes.txt")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ndelta (another process)\n"))],
    );
    let (_, result) = c.run("Overwrite notes.txt");
    assert_allowed(&mock, 0);
    // A shell command that fails is no failed tool call: the model reads the refusal (the
    // command's stderr), the shell's own error and the exit code in the command's output.
    let (text, is_error) = told(&mock.output(1));
    assert!(
        !is_error
            && text.starts_with(&format!(
                "<untrusted_context>\nOutput: {}\n",
                write_refusal("notes.txt", &appended("delta (another process)"))
            ))
            && text.contains(": notes.txt: Permission denied\nExit Code: 1\nProcess Group PGID: ")
            && text.ends_with(&format!("</untrusted_context>{REWRITTEN}")),
        "the model must see the refusal in the command's output: {text}"
    );
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ndelta (another process)\n"
    );
    assert_eq!(result["response"], "Done.");

    // (3) A file with CRLF line endings: write_file of LF content (Gemini CLI keeps the file's
    // CRLF on disk), then the session's replace of its own file: allowed, no false refusal.
    std::fs::write(w.repo.join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    let crlf = w.repo.join("crlf.txt");
    mock.script(
        "s3_",
        vec![
            ("read_file", read_file(&crlf)),
            ("write_file", write_file(&crlf, "one\ntwo\nthree\n")),
            ("replace", replace(&crlf, "two", "TWO")),
        ],
        vec![],
    );
    let (_, result) = c.run("Edit crlf.txt");
    for i in 0..3 {
        assert_allowed(&mock, i);
    }
    assert_eq!(
        std::fs::read(&crlf).unwrap(),
        b"one\r\nTWO\r\nthree\r\n".to_vec()
    );
    let sid = result["session_id"].as_str().unwrap().to_owned();
    assert_eq!(w.ok(&["--session", &sid, "status"]), "unchanged  crlf.txt");

    // (4) read_file → another process edits → a stale replace and a stale write_file are
    // refused; after a re-read the redone replace is allowed.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "s4_",
        vec![
            ("read_file", read_file(&notes)),
            ("replace", replace(&notes, "beta", "BETA")),
            ("write_file", write_file(&notes, "mine\n")),
            ("read_file", read_file(&notes)),
            ("replace", replace(&notes, "beta", "BETA")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    let (_, result) = c.run("Please update notes.txt");
    assert_refused(&mock, 1, "notes.txt", &appended("gamma (another process)"));
    assert_refused(&mock, 2, "notes.txt", &appended("gamma (another process)"));
    let reread = assert_allowed(&mock, 3);
    assert!(reread.contains("gamma (another process)"), "{reread}");
    assert_allowed(&mock, 4);
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nBETA\ngamma (another process)\n"
    );
    // The turn went on after each refusal, and the run ended normally.
    assert_eq!(mock.requests(), 6);
    assert_eq!(result["response"], "Done.");
    let stats = &result["stats"]["tools"];
    assert_eq!(
        (&stats["totalCalls"], &stats["totalFail"]),
        (&json!(5), &json!(2))
    );

    // (5) A shell command the model runs in a subfolder (`dir_path`) runs there under the shell
    // guard too: the hook's rewrite keeps the model's other arguments.
    std::fs::create_dir_all(w.repo.join("sub")).unwrap();
    mock.script(
        "s5_",
        vec![(
            "run_shell_command",
            json!({
                "command": "pwd && printf 'made here\\n' > made.txt",
                "description": "Make a file.",
                "dir_path": "sub",
            }),
        )],
        vec![],
    );
    let (_, result) = c.run("Make a file in sub");
    let shown = assert_allowed(&mock, 0);
    let log = w.ok(&["log", result["session_id"].as_str().unwrap()]);
    assert!(
        log.contains("exec pwd && printf 'made here\\n' > made.txt (0 read, 1 changed)"),
        "the command ran under the shell guard: {log}"
    );
    // Gemini CLI 0.61.0 builds the tool call from `hookSpecificOutput.tool_input` alone (its
    // scheduler calls `tool.build(tool_input)`; the documented merge happens only between
    // sequential hooks), so the hook returns the model's whole input with only `command`
    // replaced: `dir_path` holds, and the command runs in `sub/`.
    assert!(
        shown.starts_with(&format!(
            "<untrusted_context>\nOutput: {}\n",
            w.repo.join("sub").display()
        )),
        "the command must run in the folder the model named: {shown}"
    );
    assert_eq!(w.read("sub/made.txt"), "made here\n");
    assert!(!w.repo.join("made.txt").exists());

    // (6) A large file: the model reads five lines of a 12 MiB log; the hooks record the file
    // as `read` stores it (streamed, never held whole), and a change to it refuses the write.
    let line = "a line of a large log file, one of very many of them\n";
    let big = line.repeat((12 << 20) / line.len());
    let big_log = w.repo.join("big.log");
    std::fs::write(&big_log, &big).unwrap();
    mock.script(
        "s6_",
        vec![
            (
                "read_file",
                json!({"file_path": big_log, "start_line": 1, "end_line": 5}),
            ),
            ("write_file", write_file(&big_log, "trimmed\n")),
        ],
        vec![(1, rewrite(&big_log, "changed by another process\n"))],
    );
    c.run("Trim the log");
    let (text, is_error) = told(&mock.output(0));
    assert!(!is_error && text.contains(line.trim_end()), "{text}");
    let (text, is_error) = told(&mock.output(1));
    assert!(
        is_error && text.starts_with("Tool execution blocked: refusing to write: big.log\n"),
        "{text}"
    );
    assert_eq!(w.read("big.log"), "changed by another process\n");

    // Nothing but the main loop reached the model's endpoint in the whole test.
    assert_eq!(mock.others(), Vec::<String>::new());
    let _ = writeln!(
        std::io::stderr().lock(),
        "the real Gemini CLI test: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Two writers at the same moment where the host writes: another session writes notes.txt
/// after Stella's BeforeTool check of the client's write_file and before the client writes. The
/// client makes its write (the host's to make), and the model is told in the tool's result (the
/// AfterTool answer) whose write it replaced and how to get it back; the other session's next
/// write is refused, naming this one.
#[test]
fn the_real_gemini_cli_is_told_when_its_write_replaced_another_sessions() {
    let Some(bin) = client_bin("STELLA_GEMINI_BIN", "the real Gemini CLI test") else {
        return;
    };
    let mock = Mock::start();
    let w = World::new();
    user_settings(&w.home);
    w.ok(&["hooks", "install", "--agent", "gemini"]);
    w.ok(&["session", "start", "--id", "other"]);
    let notes = w.repo.join("notes.txt");
    w.write("notes.txt", "alpha\nbeta\n");
    w.ok(&["--session", "other", "read", "notes.txt"]);
    // The installed hook, wrapped: right after its BeforeTool answer to a write_file, the other
    // session writes the file through Stella; the times around the client's own write are kept.
    let times = w.base().join("times");
    wrap_hook_with_other_writer(
        &w,
        ".gemini/settings.json",
        "gemini",
        ("BeforeTool", "AfterTool", "write_file"),
        &times,
    );
    let c = Client {
        bin: &bin,
        w: &w,
        mock: &mock,
    };
    mock.script(
        "r_",
        vec![
            ("read_file", read_file(&notes)),
            ("write_file", write_file(&notes, "alpha\nBETA\n")),
        ],
        vec![],
    );
    c.run("Rewrite notes.txt");
    let shown = assert_allowed(&mock, 1);
    assert_eq!(w.read("notes.txt"), "alpha\nBETA\n");
    assert!(
        shown.contains("<hook_context>Stella: session other wrote notes.txt at ")
            && shown.contains("so write_file replaced their write"),
        "the model must be told whose write it replaced: {shown}"
    );
    eprintln!(
        "Gemini CLI's window from its BeforeTool answer to its AfterTool call: {:.1} ms",
        window_ms(&times)
    );
    // The replaced version comes back as the answer says.
    let versions = w.ok(&["recover", "notes.txt"]);
    let theirs = versions
        .lines()
        .find(|l| l.contains("written by other"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{versions}"));
    assert!(shown.contains(&format!("--show {theirs}")), "{shown}");
    assert_eq!(
        w.ok(&["recover", "notes.txt", "--show", theirs]),
        "alpha\nbeta\nthe other session"
    );
    // The other session's next write is refused, naming the client's session.
    let out = w.run_stdin(&["--session", "other", "write", "notes.txt"], b"x\n");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("changed since this session last read it: session "),
        "{}",
        stderr(&out)
    );
}
