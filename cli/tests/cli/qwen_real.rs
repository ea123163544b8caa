//! End to end with the real Qwen Code, offline: a loopback mock of the OpenAI Chat Completions
//! API plays the model and scripts every tool call; Stella's hooks are installed by `git stella
//! hooks install --agent qwen`; real files change under the client.
//!
//! The client is found through `STELLA_QWEN_BIN`: an executable that runs Qwen Code, such as
//! the package's `cli-entry.js` (its `#!/usr/bin/env node` line runs it with the `node` on PATH)
//! or npm's `node_modules/.bin/qwen` link to it. `.ci/run` installs `@qwen-code/qwen-code` and
//! sets it. Unset, the test says it was skipped — unless `CI` is set, where a missing client
//! fails the test.
//!
//! The client runs as a user runs it headless: `qwen -p PROMPT --yolo --output-format json`
//! (yolo is the mode that declares the write and shell tools), the OpenAI endpoint given by
//! `OPENAI_BASE_URL`, and usage statistics, telemetry, auto-update, the IDE and the background
//! memory agent turned off in the user's settings. Each run starts node afresh, about 4 s.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use crate::model_mock::{self, ChatCompletions, assert_allowed, rewrite};

/// The model: a loopback HTTP server answering `POST /v1/chat/completions` from a script.
pub(crate) type Mock = model_mock::Mock<ChatCompletions>;

/// The user's own settings: nothing that talks to anything but the model, and no background
/// memory agent (its requests would take the script's steps).
pub(crate) fn user_settings(home: &Path) {
    let dir = home.join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "openai"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {"enableAutoUpdate": false},
        "ide": {"enabled": false},
        "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

pub(crate) struct Client<'a> {
    pub bin: &'a Path,
    pub w: &'a World,
    pub mock: &'a Mock,
}

impl Client<'_> {
    /// `qwen -p PROMPT --yolo`, headless, in the repository, with `git-stella`'s folder on PATH.
    pub(crate) fn run(&self, prompt: &str) -> (Output, Value) {
        self.run_in(Command::new(self.bin), prompt, &[])
    }

    /// The client run whole under the shell guard, in `session`: `git stella exec -- qwen …`.
    fn run_guarded(&self, session: &str, prompt: &str) -> (Output, Value) {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("git-stella"));
        cmd.args(["--session", session, "exec", "--"]).arg(self.bin);
        self.run_in(cmd, prompt, &[])
    }

    fn run_in(&self, mut cmd: Command, prompt: &str, env: &[(&str, &str)]) -> (Output, Value) {
        clean_env(&mut cmd, &self.w.home, &self.w.stella_home);
        cmd.envs(env.iter().copied())
            .current_dir(&self.w.repo)
            .env("PATH", path_with_stella())
            .env(
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", self.mock.port),
            )
            .env("OPENAI_API_KEY", "sk-offline-test")
            .env("OPENAI_MODEL", "qwen3-coder-plus")
            .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
            .args(["-p", prompt, "--yolo", "--output-format", "json"])
            .stdin(Stdio::null());
        let out = run_bounded(&mut cmd, Duration::from_secs(120));
        assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
        let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "the client printed no JSON:\nstdout: {}\nstderr: {}",
                stdout(&out),
                stderr(&out)
            )
        });
        (out, json)
    }
}

fn read_file(path: &Path) -> Value {
    json!({"file_path": path})
}

fn write_file(path: &Path, content: &str) -> Value {
    json!({"file_path": path, "content": content})
}

fn edit(path: &Path, old: &str, new: &str) -> Value {
    json!({"file_path": path, "old_string": old, "new_string": new})
}

/// The real Qwen Code, driven offline against a mock of its model API, guarded by Stella.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_qwen_code_is_guarded_by_stella() {
    let Some(bin) = client_bin("STELLA_QWEN_BIN", "the real Qwen Code test") else {
        return;
    };
    let mock = Mock::start();
    let w = World::new();
    user_settings(&w.home);
    w.ok(&["hooks", "install", "--agent", "qwen"]);
    let c = Client {
        bin: &bin,
        w: &w,
        mock: &mock,
    };
    let notes = w.repo.join("notes.txt");
    let appended = "@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma (another process)";

    // (1) read → another process appends → the edit is refused; the model reads Stella's
    // refusal, word for word, and the turn goes on.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "q1_",
        vec![
            ("read_file", read_file(&notes)),
            ("edit", edit(&notes, "beta", "BETA")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    let (_, result) = c.run("Update notes.txt");
    assert_allowed(&mock, 0);
    assert_eq!(mock.output(1), write_refusal("notes.txt", appended));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );
    assert!(
        result.to_string().contains("permission_denials"),
        "{result}"
    );
    assert_eq!(mock.requests(), 3, "the turn went on after the refusal");

    // (2) The same through write_file.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "q2_",
        vec![
            ("read_file", read_file(&notes)),
            ("write_file", write_file(&notes, "mine\n")),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    c.run("Rewrite notes.txt");
    assert_eq!(mock.output(1), write_refusal("notes.txt", appended));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );

    // (3) No false refusal: a new file, a re-read then a write, and the session's own edit
    // after its own write.
    let fresh = w.repo.join("fresh.txt");
    mock.script(
        "q3_",
        vec![
            ("write_file", write_file(&fresh, "new file\n")),
            ("read_file", read_file(&notes)),
            ("edit", edit(&notes, "beta", "BETA")),
            ("edit", edit(&notes, "BETA", "BETA!")),
        ],
        vec![],
    );
    c.run("Write the files");
    for i in 0..4 {
        assert_allowed(&mock, i);
    }
    assert_eq!(w.read("fresh.txt"), "new file\n");
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nBETA!\ngamma (another process)\n"
    );

    // (4) A file the session never read: Qwen Code itself refuses to change an existing file
    // it has not read; Stella lets it through (nothing of anyone's is lost by a blind write
    // of a committed file).
    w.write("other.txt", "one\n");
    w.git(&["add", "other.txt"]);
    w.git(&["commit", "-q", "-m", "other"]);
    let other = w.repo.join("other.txt");
    mock.script(
        "q4_",
        vec![("write_file", write_file(&other, "replaced\n"))],
        vec![],
    );
    c.run("Replace other.txt");
    // Qwen Code's own refusal, not Stella's: Stella's hook let the call through (checked in
    // the session's log below: no refusal of other.txt).
    let own = assert_allowed(&mock, 0);
    assert!(own.contains("has not been read"), "{own}");

    // (5) Its shell is not routed through the shell guard, but the whole agent can run under
    // it. Qwen Code reads the file (so it lets its shell edit it); another process changes it
    // keeping its size and mtime, which Qwen Code's own check compares; the `sed -i` is refused
    // by Stella, which compares the bytes.
    w.write("notes.txt", "alpha\nbeta\n");
    w.ok(&["session", "start", "--id", "guarded"]);
    let same_size = {
        let notes = notes.clone();
        Box::new(move || {
            let mtime = std::fs::metadata(&notes).unwrap().modified().unwrap();
            std::fs::write(&notes, "alpha\nbetA\n").unwrap();
            let f = std::fs::File::options().write(true).open(&notes).unwrap();
            f.set_modified(mtime).unwrap();
        }) as model_mock::Action
    };
    mock.script(
        "q5_",
        vec![
            ("read_file", read_file(&notes)),
            (
                "run_shell_command",
                json!({"command": "sed -i s/beta/BETA/ notes.txt"}),
            ),
            // A delete of the stale file: Qwen Code checks none, Stella refuses it.
            ("run_shell_command", json!({"command": "rm notes.txt"})),
        ],
        vec![(1, same_size)],
    );
    let (out, _) = c.run_guarded("guarded", "Update notes.txt");
    // The model sees the write fail (the whole agent is the guarded command, so the refusal is
    // said where its runner reads: exec's stderr), and the other process's bytes stay.
    let failed = mock.output(1);
    assert!(
        failed.contains("Permission denied") && failed.contains("Exit Code: 4"),
        "{failed}"
    );
    assert!(
        stderr(&out).contains("refusing to write: notes.txt")
            && stderr(&out).contains("refusing to delete: notes.txt"),
        "{}",
        stderr(&out)
    );
    assert!(
        mock.output(2).contains("Permission denied"),
        "{}",
        mock.output(2)
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbetA\n");

    // Everything went through the session the hooks named after Qwen Code's session.
    let sid = result["session_id"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            result.as_array().and_then(|events| {
                events
                    .iter()
                    .find_map(|e| e["session_id"].as_str().map(str::to_owned))
            })
        })
        .unwrap_or_else(|| panic!("no session id in {result}"));
    let log = w.ok(&["log", &sid]);
    assert!(
        log.contains("read notes.txt") && log.contains("refused write notes.txt"),
        "{log}"
    );
    assert!(!log.contains("other.txt"), "{log}");

    // (6) Last, since the workspace stays locked: a slow store, the hook's budget running out
    // before it can check. Qwen Code would run
    // the tool on a failed or late hook; Stella's answer is the explicit deny, in time.
    let mut holder = hold_owner_lock(&w);
    mock.script(
        "q6_",
        vec![("edit", edit(&notes, "alpha", "ALPHA"))],
        vec![],
    );
    c.run_in(
        Command::new(&bin),
        "Update notes.txt",
        &[("STELLA_HOOK_TIMEOUT_MS", "500")],
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(
        mock.output(0).ends_with(
            "the hook did not finish within its time budget of 500ms; nothing more was done"
        ),
        "{}",
        mock.output(0)
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbetA\n");
}

#[test]
fn installing_then_uninstalling_qwen_hooks_gives_the_settings_back_byte_for_byte() {
    let w = World::new();
    let mine = "{\n  // my own\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]},\n  \"model\": {\"name\": \"m\"}\n}\n";
    w.write(".qwen/settings.json", mine);
    w.ok(&["hooks", "install", "--agent", "qwen"]);
    let installed = w.read(".qwen/settings.json");
    assert!(
        installed.contains("hook qwen") && installed.contains("echo mine"),
        "{installed}"
    );
    assert!(installed.contains("// my own"), "{installed}");
    let doctor = stdout(&doctor_on_path(&w));
    assert!(
        doctor.contains("Qwen Code cannot run its shell tool through Stella's shell guard"),
        "{doctor}"
    );
    // With folder trust on, an untrusted folder loads no project hooks: doctor fails, until
    // the folder is trusted.
    let doctor = doctor_on_path;
    std::fs::create_dir_all(w.home.join(".qwen")).unwrap();
    std::fs::write(
        w.home.join(".qwen/settings.json"),
        "{\"security\": {\"folderTrust\": {\"enabled\": true}}}",
    )
    .unwrap();
    let out = doctor(&w);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Qwen Code's folder trust is on and it does not trust"),
        "{}",
        stdout(&out)
    );
    std::fs::write(
        w.home.join(".qwen/trustedFolders.json"),
        json!({ w.repo.to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let out = doctor(&w);
    assert!(
        stdout(&out).contains("Qwen Code trusts"),
        "{}",
        stdout(&out)
    );

    w.ok(&["hooks", "uninstall", "--agent", "qwen"]);
    assert_eq!(w.read(".qwen/settings.json"), mine);
}

/// `git stella hook qwen` on the payload captured as `name`; its stdout.
fn hook_qwen(w: &World, name: &str) -> String {
    hook_stdout(w, "qwen", &captured_payload(w, "qwen-code-0.24.4", name))
}

#[test]
fn qwen_codes_captured_payloads_are_read_recorded_and_a_stale_edit_denied() {
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    for name in ["PreToolUse-read_file", "PostToolUse-read_file"] {
        assert_eq!(hook_qwen(&w, name), "", "{name}");
    }
    // Someone edits: the edit is denied, in Claude Code's shape, with Stella's refusal.
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    let deny: Value = serde_json::from_str(&hook_qwen(&w, "PreToolUse-edit")).unwrap();
    assert_eq!(
        deny,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason":
                write_refusal("notes.txt", "@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma"),
        }})
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbeta\ngamma\n");
    // So is a write_file over it; a create of a new file is not.
    assert!(hook_qwen(&w, "PreToolUse-write_file-update").contains("\"deny\""));
    assert_eq!(hook_qwen(&w, "PreToolUse-write_file-create"), "");
    // A ranged read with the disk unchanged around it re-arms the guard: the edit passes.
    for name in ["PreToolUse-read_file-range", "PostToolUse-read_file-range"] {
        assert_eq!(hook_qwen(&w, name), "", "{name}");
    }
    assert_eq!(hook_qwen(&w, "PreToolUse-edit"), "");
    // A tool that failed, a shell command and the events Stella does not ask for: nothing.
    for name in [
        "PostToolUseFailure-edit-nomatch",
        "PreToolUse-run_shell_command",
        "PostToolUse-run_shell_command",
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
    ] {
        assert_eq!(hook_qwen(&w, name), "", "{name}");
    }
}
