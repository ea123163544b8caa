//! End to end with the real Codex CLI, offline: a loopback mock of OpenAI's Responses API plays
//! the model and scripts every tool call; Stella's hooks are installed by
//! `git stella hooks install --agent codex`; real files change under the client.
//!
//! Codex gives a model one of two tool shapes, chosen by the model's slug in its bundled catalog:
//! `gpt-5.5` gets direct tools (the function `exec_command` and the freeform `apply_patch`), a
//! code-mode model such as `gpt-6.1-sol` only the freeform `exec`, which runs JavaScript calling
//! the same tools nested (`await tools.apply_patch(…)`). Both are driven here.
//!
//! The client is found through `STELLA_CODEX_BIN` (`.ci/run` installs it and sets it). Unset,
//! the test says it was skipped — unless `CI` is set, where a missing client fails the test.
//! The scenarios run one after another in one test: the machine has 2 cores. A second test runs
//! the same scenarios with no hooks, the whole agent under `git stella exec`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;
use crate::model_mock::{self, ModelApi, Turn, rewrite, text_parts};

/// One tool call of the scripted model.
#[derive(Clone)]
enum Call {
    /// A function tool (`exec_command`) and its JSON arguments.
    Function(&'static str, Value),
    /// A freeform tool (`apply_patch`, code mode's `exec`) and its raw input.
    Custom(&'static str, String),
}

/// OpenAI's Responses API as Codex speaks it.
struct Responses;

/// The model: a loopback HTTP server answering `POST /v1/responses` from a script.
type Mock = model_mock::Mock<Responses>;

impl ModelApi for Responses {
    type Call = Call;
    /// The output's text.
    type Result = String;

    fn is_turn(request: &HttpRequest, _: &Value) -> bool {
        request.method == "POST" && request.path == "/v1/responses"
    }

    /// Every tool output in a request's history: call id → text. A function's output is a
    /// string; a freeform tool's may be a list of text items (code mode's `exec`), joined here.
    fn results(body: &Value) -> HashMap<String, String> {
        let mut out = HashMap::new();
        for item in body["input"].as_array().into_iter().flatten() {
            if !matches!(
                item["type"].as_str(),
                Some("function_call_output" | "custom_tool_call_output")
            ) {
                continue;
            }
            let output = &item["output"];
            let text = text_parts(output).unwrap_or_else(|| output.to_string());
            out.insert(
                item["call_id"].as_str().unwrap_or_default().to_owned(),
                text,
            );
        }
        out
    }

    /// One streamed response: the script's next tool call, or the final message once every
    /// step's output came back.
    fn answer(turn: &Turn<Call>, _: &Value) -> String {
        let call_id = &turn.id;
        let item = match &turn.call {
            Some(Call::Function(name, arguments)) => json!({
                "type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
                "name": name, "arguments": arguments.to_string(),
            }),
            Some(Call::Custom(name, input)) => json!({
                "type": "custom_tool_call", "id": format!("ctc_{call_id}"), "call_id": call_id,
                "name": name, "input": input,
            }),
            None => json!({
                "type": "message", "role": "assistant", "id": format!("msg_{call_id}"),
                "content": [{"type": "output_text", "text": "Done."}],
            }),
        };
        let id = format!("resp_{}", turn.number);
        let mut events = vec![json!({"type": "response.created", "response": {"id": id}})];
        if item["type"] == "message" {
            let mut empty = item.clone();
            empty["content"] = json!([]);
            events.push(
                json!({"type": "response.output_item.added", "output_index": 0, "item": empty}),
            );
            events.push(json!({
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                "content_index": 0, "delta": "Done.",
            }));
        }
        events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
        events.push(
            json!({"type": "response.completed", "response": {"id": id, "usage": {
                "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 15,
            }}}),
        );
        let mut data = String::new();
        for e in events {
            data.push_str(&format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap()
            ));
        }
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{data}",
            data.len()
        )
    }

    fn answer_other(_: &HttpRequest, _: &Value) -> String {
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned()
    }
}

/// The client's native binary, or `None` (skipped) — a failure under CI.
fn codex_bin() -> Option<PathBuf> {
    client_bin("STELLA_CODEX_BIN", "the real Codex CLI")
}

/// The code-mode model: its only tool is `exec` (JavaScript calling the nested tools).
const CODE_MODE: &str = "gpt-6.1-sol";
/// The direct-tools model: `exec_command` and `apply_patch` are tools of their own.
const DIRECT: &str = "gpt-5.5";

/// The real client in `w`'s repository, talking to `mock` only.
struct Codex<'a> {
    bin: PathBuf,
    w: &'a World,
    /// Its own `CODEX_HOME`. Not under the system temp folder: there Codex refuses to create the
    /// helpers it puts on PATH for the shell (`apply_patch` among them).
    home: tempfile::TempDir,
}

impl<'a> Codex<'a> {
    fn new(bin: &Path, w: &'a World, mock: &Mock) -> Codex<'a> {
        let home = tempfile::Builder::new()
            .prefix("codex-home-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        // The first half of the trust step `hooks install` names: the project is trusted, so
        // Codex loads its `.codex/` layer (the hooks install wrote); the second half is in
        // `command`. Analytics and metrics are off: they would reach for chatgpt.com.
        let config = format!(
            r#"model = "{DIRECT}"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[otel]
metrics_exporter = "none"

[features]
plugins = false

[projects."{repo}"]
trust_level = "trusted"
"#,
            port = mock.port,
            repo = w.repo.display(),
        );
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        Codex {
            bin: bin.to_owned(),
            w,
            home,
        }
    }

    /// `codex exec` with `model` and `prompt`, run by `wrapper` when there is one (strace).
    fn command(&self, wrapper: &[&str], model: &str, prompt: &str) -> Command {
        let (program, wrapped) = match wrapper.split_first() {
            Some((first, rest)) => (PathBuf::from(first), rest),
            None => (self.bin.clone(), &[][..]),
        };
        let mut cmd = Command::new(program);
        clean_env(&mut cmd, &self.w.home, &self.w.stella_home);
        cmd.args(wrapped);
        if !wrapper.is_empty() {
            cmd.arg(&self.bin);
        }
        cmd.current_dir(&self.w.repo)
            .env("PATH", path_with_stella())
            .env("CODEX_HOME", self.home.path())
            .env("MOCK_API_KEY", "sk-offline-test")
            .args(["exec", "--json", "--skip-git-repo-check", "-C"])
            .arg(&self.w.repo)
            // No approvals and no sandbox: what a person running an agent unattended chooses, and
            // Stella's guard is what stands between the model and a stale write.
            .arg("--dangerously-bypass-approvals-and-sandbox")
            // The second half: Codex runs each hook only once a person trusted it by its hash in
            // the interactive `/hooks` screen, which install leaves to them (trust is theirs to
            // give); here the test vouches for the hooks it just installed.
            .arg("--dangerously-bypass-hook-trust")
            // A misspelt key in the config above fails the run instead of being ignored.
            .arg("--strict-config")
            .args(["-m", model, prompt])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Run the client to the end (bounded); it must exit 0. Its output and Codex's thread id
    /// (the Stella session's name).
    fn run(&self, model: &str, prompt: &str) -> (Output, String) {
        self.run_wrapped(&[], model, prompt)
    }

    fn run_wrapped(&self, wrapper: &[&str], model: &str, prompt: &str) -> (Output, String) {
        let started = Instant::now();
        let out = run_bounded(
            &mut self.command(wrapper, model, prompt),
            Duration::from_secs(120),
        );
        eprintln!("codex exec -m {model} {prompt:?}: {:?}", started.elapsed());
        assert!(
            out.status.success(),
            "the client failed ({:?}):\nstdout: {}\nstderr: {}",
            out.status,
            stdout(&out),
            stderr(&out)
        );
        let thread = stdout(&out)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| e["type"] == "thread.started")
            .and_then(|e| e["thread_id"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no thread.started event: {}", stdout(&out)));
        (out, thread)
    }
}

fn exec_command(cmd: &str) -> Call {
    Call::Function("exec_command", json!({"cmd": cmd}))
}

fn apply_patch(patch: &str) -> Call {
    Call::Custom("apply_patch", patch.to_owned())
}

/// Code mode's one tool: JavaScript that runs `call` and prints what it returned, or what it
/// threw (`ERR …`), so the model's view of a refusal is the exception's text.
fn code(call: &str) -> Call {
    Call::Custom(
        "exec",
        format!(
            "try {{\n  const r = await {call};\n  text(\"OK \" + JSON.stringify(r));\n}} catch (e) {{\n  text(\"ERR \" + String(e));\n}}\n"
        ),
    )
}

/// An `apply_patch` envelope of one file section.
fn patch(section: &str) -> String {
    format!("*** Begin Patch\n{section}*** End Patch\n")
}

fn update(path: &str, hunk: &str) -> String {
    patch(&format!("*** Update File: {path}\n@@\n{hunk}"))
}

/// The steps of the Stella session `id`, newest first, as `git stella log` words them.
fn steps(w: &World, id: &str) -> Vec<String> {
    w.ok(&["log", id])
        .lines()
        .map(|l| l.splitn(3, ' ').nth(2).unwrap_or_default().to_owned())
        .collect()
}

/// The first lines of Stella's refusal to `verb` (`write`, `delete`) the file `path` another
/// process changed after the session read it.
fn refusal(verb: &str, path: &str) -> String {
    let (noun, nothing, fix) = match verb {
        "delete" => (
            "Deleting it",
            "deleted",
            "decide again against what is there now",
        ),
        _ => (
            "This write",
            "written",
            "redo the change against what is there now",
        ),
    };
    format!(
        "refusing to {verb}: {path}\n\
         {path} changed since this session last read it: another process or a person edited it after this session looked.\n\
         {noun} would overwrite their work with a plan formed against content that no longer exists.\n\
         Nothing was {nothing}. To recover, re-read {path} and {fix}."
    )
}

/// `text` as it appears inside a JSON string (code mode hands the model a nested tool's result as
/// JSON).
fn in_json(text: &str) -> String {
    let quoted = Value::from(text).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// What the model is told when Codex's PreToolUse hook denies a call: Stella's refusal as the
/// reason.
fn assert_denied(told: &str, verb: &str, path: &str) {
    let expected = format!(
        "Command blocked by PreToolUse hook: {}",
        refusal(verb, path)
    );
    assert!(
        told.starts_with(&expected),
        "the model must receive Stella's refusal as the hook's reason:\n{told}"
    );
}

/// A step the model was told succeeded, with no refusal anywhere in it.
fn assert_allowed(told: &str, what: &str) {
    assert!(
        !told.contains("refusing") && !told.contains("blocked"),
        "{what} must pass: {told}"
    );
}

/// The real Codex CLI, driven offline against a mock of its model API, guarded by Stella's hooks.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_codex_cli_is_guarded_by_stella() {
    let Some(bin) = codex_bin() else {
        return;
    };
    let mock = Mock::start();
    let w = World::new();
    let out = w.run(&["hooks", "install", "--agent", "codex"]);
    assert!(
        out.status.success()
            && stderr(&out).contains(
                "next: Codex runs a project's hooks only in a project it trusts, and each only once you trust it"
            ),
        "install names the trust step the client below is given: {}",
        stderr(&out)
    );
    let c = Codex::new(&bin, &w, &mock);
    let notes = w.repo.join("notes.txt");
    let other = "alpha\nbeta\ngamma (another process)\n";
    let beta = update("notes.txt", " alpha\n-beta\n+BETA\n");

    // (1) `cat` → another process edits → the patch is refused: the other process's bytes stay,
    // the model is told, and the turn goes on to the final answer.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "call_1_",
        vec![exec_command("cat notes.txt"), apply_patch(&beta)],
        vec![(1, rewrite(&notes, other))],
    );
    let (out, thread) = c.run(DIRECT, "Please update notes.txt");
    assert!(
        mock.output(0).ends_with("Output:\nalpha\nbeta\n"),
        "{}",
        mock.output(0)
    );
    assert_denied(&mock.output(1), "write", "notes.txt");
    assert_eq!(w.read("notes.txt"), other);
    assert_eq!(mock.requests(), 3, "the turn went on after the refusal");
    assert!(stdout(&out).contains(r#""type":"agent_message","text":"Done.""#));
    // The `cat` ran under the shell guard, in the session the patch hooks use: that read is
    // what the refusal was measured against.
    assert_eq!(
        steps(&w, &thread),
        [
            "refused write notes.txt",
            "exec cat notes.txt (1 read, 0 changed)",
            "session start"
        ]
    );

    // (2) The same stale file, written three other ways: a patch adding it anew, a patch deleting
    // it, a shell redirection. Each is refused and the other process's bytes stay.
    let stale = |name: &str, write: Call| {
        w.write("notes.txt", "alpha\nbeta\n");
        mock.script(
            name,
            vec![exec_command("cat notes.txt"), write],
            vec![(1, rewrite(&notes, other))],
        );
        c.run(DIRECT, "Please replace notes.txt");
        let kept = std::fs::read_to_string(&notes).ok();
        assert_eq!(kept.as_deref(), Some(other), "{name}");
        mock.output(1)
    };
    let told = stale(
        "call_2a_",
        apply_patch(&patch("*** Add File: notes.txt\n+x\n")),
    );
    assert_denied(&told, "write", "notes.txt");
    let told = stale(
        "call_2b_",
        apply_patch(&patch("*** Delete File: notes.txt\n")),
    );
    assert_denied(&told, "delete", "notes.txt");
    let told = stale("call_2c_", exec_command("printf 'x\\n' > notes.txt"));
    assert!(
        told.contains("Process exited with code 1\n")
            && told.contains(&format!("\nOutput:\n{}", refusal("write", "notes.txt")))
            && told.ends_with("\nbash: line 1: notes.txt: Permission denied\n"),
        "the command's output, which the model reads, must carry Stella's refusal and the \
         failed write:\n{told}"
    );

    // (3) The session's own patches never stale the file: read, patch, patch again.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "call_3_",
        vec![
            exec_command("cat notes.txt"),
            apply_patch(&beta),
            apply_patch(&update("notes.txt", "-alpha\n+ALPHA\n BETA\n")),
        ],
        vec![],
    );
    let (_, thread) = c.run(DIRECT, "Edit notes.txt twice");
    for i in 1..3 {
        let told = mock.output(i);
        assert_allowed(&told, &format!("patch {i}"));
        assert!(
            told.contains("Success. Updated the following files:\nM notes.txt"),
            "{told}"
        );
    }
    assert_eq!(w.read("notes.txt"), "ALPHA\nBETA\n");
    assert_eq!(
        steps(&w, &thread),
        [
            "wrote notes.txt",
            "wrote notes.txt",
            "exec cat notes.txt (1 read, 0 changed)",
            "session start"
        ],
        "the Codex thread is a Stella session, each patch one step"
    );

    // (4) A file the session never read is patched, and a new one added: both allowed, the
    // untracked bytes the blind patch replaced kept first (a step of their own). Under
    // strace, when installed: nothing but the mock is contacted, by Codex, the hooks it runs or
    // a command under the shell guard.
    w.write("other.txt", "one\ntwo\n");
    mock.script(
        "call_4_",
        vec![
            apply_patch(&update("other.txt", " one\n-two\n+TWO\n")),
            apply_patch(&patch("*** Add File: fresh.txt\n+new file\n")),
            exec_command("cat README"),
        ],
        vec![],
    );
    let traced = have(
        "strace",
        "checking that Codex contacts nothing but the mock",
    );
    let log = w.base().join("codex.strace");
    let log_arg = log.to_str().unwrap();
    let strace = [
        "strace",
        "-f",
        "-qq",
        "-e",
        "signal=none",
        "-e",
        "trace=connect,sendto,sendmsg",
        "-o",
        log_arg,
    ];
    let (_, thread) = c.run_wrapped(
        if traced { &strace } else { &[] },
        DIRECT,
        "Write the files",
    );
    assert_allowed(&mock.output(0), "a patch of a file never read");
    assert_allowed(&mock.output(1), "a patch adding a new file");
    assert!(
        mock.output(2).ends_with("Output:\nhello\n"),
        "{}",
        mock.output(2)
    );
    assert_eq!(w.read("other.txt"), "one\nTWO\n");
    assert_eq!(w.read("fresh.txt"), "new file\n");
    // Under strace too, the command ran under the shell guard.
    assert_eq!(
        steps(&w, &thread),
        [
            "exec cat README (1 read, 0 changed)",
            "wrote fresh.txt",
            "wrote other.txt",
            "keep before a blind change: other.txt",
            "session start"
        ]
    );
    if traced {
        let mock_addr = format!(
            "sin_port=htons({}), sin_addr=inet_addr(\"127.0.0.1\")",
            mock.port
        );
        let trace = std::fs::read_to_string(&log).unwrap();
        let reached: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("AF_INET") && !l.contains(&mock_addr))
            .collect();
        assert!(
            reached.is_empty(),
            "something but the mock was contacted:\n{}",
            reached.join("\n")
        );
        assert!(
            trace.contains(&mock_addr),
            "the trace saw the mock's connection:\n{trace}"
        );
    }

    // (5) Patch → another process edits → the next patch is refused → `cat` re-reads → the
    // redone patch is allowed, on top of the other process's line.
    w.write("notes.txt", "alpha\nbeta\n");
    let alpha = update("notes.txt", "-alpha\n+ALPHA\n BETA\n");
    mock.script(
        "call_5_",
        vec![
            apply_patch(&beta),
            apply_patch(&alpha),
            exec_command("cat notes.txt"),
            apply_patch(&alpha),
        ],
        vec![(1, rewrite(&notes, "alpha\nBETA\ndelta (another process)\n"))],
    );
    c.run(DIRECT, "Edit notes.txt");
    assert_allowed(&mock.output(0), "the first patch");
    assert_denied(&mock.output(1), "write", "notes.txt");
    assert!(
        mock.output(2)
            .ends_with("Output:\nalpha\nBETA\ndelta (another process)\n"),
        "{}",
        mock.output(2)
    );
    assert_allowed(&mock.output(3), "the patch redone after re-reading");
    assert_eq!(
        w.read("notes.txt"),
        "ALPHA\nBETA\ndelta (another process)\n"
    );

    // (6) A patch sent through the shell (`apply_patch <<'EOF'`, which Codex applies itself
    // without firing its apply_patch hooks) over a stale file: refused.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "call_6_",
        vec![
            exec_command("cat notes.txt"),
            exec_command(&format!("apply_patch <<'EOF'\n{beta}EOF")),
        ],
        vec![(1, rewrite(&notes, other))],
    );
    c.run(DIRECT, "Patch notes.txt from the shell");
    assert_denied(&mock.output(1), "write", "notes.txt");
    assert_eq!(w.read("notes.txt"), other);

    // (7) Code mode: the model's one tool runs JavaScript calling the same tools nested. `cat`
    // → another process edits → `tools.apply_patch` throws Stella's refusal, and a shell
    // overwrite through `tools.exec_command` is refused too.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "call_7_",
        vec![
            code(r#"tools.exec_command({cmd: "cat notes.txt"})"#),
            code(&format!("tools.apply_patch({})", json!(beta))),
            code(r#"tools.exec_command({cmd: "printf 'x\\n' > notes.txt"})"#),
        ],
        vec![(1, rewrite(&notes, other))],
    );
    let (_, thread) = c.run(CODE_MODE, "Please update notes.txt");
    assert!(
        mock.output(0).contains(r#""output":"alpha\nbeta\n""#),
        "{}",
        mock.output(0)
    );
    let told = mock.output(1);
    let expected = format!(
        "ERR Command blocked by PreToolUse hook: {}",
        refusal("write", "notes.txt")
    );
    assert!(
        told.contains(&expected),
        "the exception the model's code catches must carry Stella's refusal:\n{told}"
    );
    let told = mock.output(2);
    assert!(
        told.contains(r#""exit_code":1,"#)
            && told.contains(&format!(
                r#""output":"{}"#,
                in_json(&refusal("write", "notes.txt"))
            ))
            && told.contains(r#"bash: line 1: notes.txt: Permission denied\n"}"#),
        "the nested command's result must carry Stella's refusal and the failed write:\n{told}"
    );
    assert_eq!(w.read("notes.txt"), other);
    // The nested `exec_command` fires the same Bash hook as a direct one, and Codex runs the
    // command the hook rewrote: the `cat` ran under the shell guard in this session, and so did
    // the refused `printf`.
    let log = steps(&w, &thread);
    assert!(
        log.ends_with(&[
            "refused write notes.txt".to_owned(),
            "exec cat notes.txt (1 read, 0 changed)".to_owned(),
            "session start".to_owned()
        ]) && log[0].starts_with("exec printf 'x\\n' > notes.txt "),
        "{log:?}"
    );

    // Nothing but the Responses API endpoint was ever asked for.
    let others = mock.others();
    assert!(
        others.is_empty(),
        "the client asked the mock for more than the model: {others:?}"
    );
}

/// What Codex tells the model when the shell guard refused its own write (`apply_patch` runs in
/// Codex's process, so the refusal itself goes to Codex's stderr, for the person).
fn assert_failed_write(told: &str) {
    assert!(
        !told.contains("Success.") && told.to_lowercase().contains("fail"),
        "the patch must fail: {told}"
    );
}

/// The real Codex CLI, driven offline against a mock of its model API, run whole under the shell
/// guard.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_codex_cli_run_whole_under_the_shell_guard() {
    let Some(bin) = codex_bin() else {
        return;
    };
    let mock = Mock::start();
    let w = World::new();
    if !guarded_here(&w) {
        return;
    }
    // No hooks: the whole agent runs under `git stella exec`, as the docs describe for any agent.
    let c = Codex::new(&bin, &w, &mock);
    let stella = assert_cmd::cargo::cargo_bin("git-stella");
    let stella = stella.to_str().unwrap();
    let notes = w.repo.join("notes.txt");
    let other = "alpha\nbeta\ngamma (another process)\n";
    let beta = update("notes.txt", " alpha\n-beta\n+BETA\n");
    let whole = |name: &str, model: &str, calls: Vec<Call>, edits| {
        let s = w.start();
        mock.script(name, calls, edits);
        let (out, _) = c.run_wrapped(&[stella, "--session", &s, "exec", "--"], model, "Go");
        (s, out)
    };

    // (1) `cat` → another process edits → the patch is refused, their bytes kept.
    w.write("notes.txt", "alpha\nbeta\n");
    let (s, out) = whole(
        "whole_1_",
        DIRECT,
        vec![exec_command("cat notes.txt"), apply_patch(&beta)],
        vec![(1, rewrite(&notes, other))],
    );
    assert_failed_write(&mock.output(1));
    assert_eq!(w.read("notes.txt"), other);
    // The person sees Stella's refusal on Codex's stderr, and `log` keeps it.
    assert!(
        stderr(&out).contains("refusing to write: notes.txt\n"),
        "{}",
        stderr(&out)
    );
    // In one of the command's steps: one that runs past a second is recorded in several.
    let log = steps(&w, &s);
    assert!(
        log.iter()
            .any(|step| step.starts_with("exec ") && step.contains("1 refused")),
        "{log:?}"
    );

    // (2) The stale file written three other ways: added anew, deleted, a shell redirection.
    for (name, write, verb) in [
        (
            "whole_2a_",
            apply_patch(&patch("*** Add File: notes.txt\n+x\n")),
            "write",
        ),
        (
            "whole_2b_",
            apply_patch(&patch("*** Delete File: notes.txt\n")),
            "delete",
        ),
        (
            "whole_2c_",
            exec_command("printf 'x\\n' > notes.txt"),
            "write",
        ),
    ] {
        w.write("notes.txt", "alpha\nbeta\n");
        let (_, out) = whole(
            name,
            DIRECT,
            vec![exec_command("cat notes.txt"), write],
            vec![(1, rewrite(&notes, other))],
        );
        assert_eq!(w.read("notes.txt"), other, "{name}");
        assert!(
            stderr(&out).contains(&format!("refusing to {verb}: notes.txt\n"))
                || mock
                    .output(1)
                    .contains(&format!("refusing to {verb}: notes.txt")),
            "{name}: {}",
            mock.output(1)
        );
    }

    // (3) The agent's own patches never stale the file: read, patch, patch again.
    w.write("notes.txt", "alpha\nbeta\n");
    whole(
        "whole_3_",
        DIRECT,
        vec![
            exec_command("cat notes.txt"),
            apply_patch(&beta),
            apply_patch(&update("notes.txt", "-alpha\n+ALPHA\n BETA\n")),
        ],
        vec![],
    );
    for i in 1..3 {
        assert_allowed(&mock.output(i), &format!("patch {i}"));
    }
    assert_eq!(w.read("notes.txt"), "ALPHA\nBETA\n");

    // (4) A file never read is patched, and a new one added: both allowed.
    w.write("other.txt", "one\ntwo\n");
    whole(
        "whole_4_",
        DIRECT,
        vec![
            apply_patch(&update("other.txt", " one\n-two\n+TWO\n")),
            apply_patch(&patch("*** Add File: fresh.txt\n+new file\n")),
        ],
        vec![],
    );
    assert_allowed(&mock.output(0), "a patch of a file never read");
    assert_allowed(&mock.output(1), "a patch adding a new file");
    assert_eq!(w.read("other.txt"), "one\nTWO\n");
    assert_eq!(w.read("fresh.txt"), "new file\n");

    // (5) Patch → another process edits → the next patch is refused → `cat` re-reads → the
    // redone patch is allowed, on top of the other process's line.
    w.write("notes.txt", "alpha\nbeta\n");
    let alpha = update("notes.txt", "-alpha\n+ALPHA\n BETA\n");
    whole(
        "whole_5_",
        DIRECT,
        vec![
            apply_patch(&beta),
            apply_patch(&alpha),
            exec_command("cat notes.txt"),
            apply_patch(&alpha),
        ],
        vec![(1, rewrite(&notes, "alpha\nBETA\ndelta (another process)\n"))],
    );
    assert_allowed(&mock.output(0), "the first patch");
    assert_failed_write(&mock.output(1));
    assert_allowed(&mock.output(3), "the patch redone after re-reading");
    assert_eq!(
        w.read("notes.txt"),
        "ALPHA\nBETA\ndelta (another process)\n"
    );

    // (6) A patch sent through the shell over a stale file: refused.
    w.write("notes.txt", "alpha\nbeta\n");
    whole(
        "whole_6_",
        DIRECT,
        vec![
            exec_command("cat notes.txt"),
            exec_command(&format!("apply_patch <<'EOF'\n{beta}EOF")),
        ],
        vec![(1, rewrite(&notes, other))],
    );
    assert_eq!(w.read("notes.txt"), other);

    // (7) Code mode: a nested patch and a nested shell overwrite of a stale file.
    w.write("notes.txt", "alpha\nbeta\n");
    whole(
        "whole_7_",
        CODE_MODE,
        vec![
            code(r#"tools.exec_command({cmd: "cat notes.txt"})"#),
            code(&format!("tools.apply_patch({})", json!(beta))),
            code(r#"tools.exec_command({cmd: "printf 'x\\n' > notes.txt"})"#),
        ],
        vec![(1, rewrite(&notes, other))],
    );
    assert!(
        mock.output(2)
            .contains(&in_json(&refusal("write", "notes.txt"))),
        "{}",
        mock.output(2)
    );
    assert_eq!(w.read("notes.txt"), other);
}
