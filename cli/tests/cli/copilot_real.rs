//! End to end with the real GitHub Copilot CLI, offline: its BYOK mode against a loopback mock of
//! the OpenAI Chat Completions API, which plays the model and scripts every tool call; Stella's
//! hooks are installed by `git stella hooks install --agent copilot`; real files change under the
//! client.
//!
//! The client is found through `STELLA_COPILOT_BIN`: the platform package's native binary
//! (`@github/copilot-linux-x64/copilot`, a Node SEA; the npm entry point only spawns it). `.ci/run`
//! installs `@github/copilot` and sets it. Unset, the test says it was skipped — unless `CI` is
//! set, where a missing client fails the test. The binary unpacks its code into
//! `COPILOT_PKG_CACHE_HOME` on first start: one folder under `target/` serves every run.
//!
//! The client runs as a CI job runs it: `copilot -p PROMPT --allow-all-tools --no-auto-update`,
//! `COPILOT_OFFLINE=true` (no GitHub account, no telemetry), the repository's folder trusted in
//! the user's `config.json` (prompt mode skips a repository's hooks otherwise, which `doctor`
//! reports), a Claude model slug (the `view`/`create`/`edit`/`bash` tools) or `gpt-5.4` (the
//! freeform `apply_patch` tool instead of `create`/`edit`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use crate::model_mock::{ChatCompletions, Mock, assert_allowed, rewrite};

struct Client<'a> {
    bin: &'a Path,
    w: &'a World,
    mock: &'a Mock<ChatCompletions>,
}

impl Client<'_> {
    /// `copilot -p PROMPT` with `model`, headless, in the repository, `git-stella` on PATH.
    fn run(&self, model: &str, prompt: &str) -> Output {
        let mut cmd = Command::new(self.bin);
        clean_env(&mut cmd, &self.w.home, &self.w.stella_home);
        let cache: PathBuf = repo_root().join("target/copilot-pkg");
        cmd.current_dir(&self.w.repo)
            .env("PATH", path_with_stella())
            .env("COPILOT_OFFLINE", "true")
            .env(
                "COPILOT_PROVIDER_BASE_URL",
                format!("http://127.0.0.1:{}/v1", self.mock.port),
            )
            .env("COPILOT_PROVIDER_API_KEY", "sk-offline-test")
            .env("COPILOT_MODEL", model)
            .env("COPILOT_PKG_CACHE_HOME", cache)
            .args(["-p", prompt, "--allow-all-tools", "--no-auto-update"])
            .stdin(Stdio::null());
        let out = run_bounded(&mut cmd, Duration::from_secs(120));
        assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
        out
    }
}

/// The model reads `Denied by preToolUse hook: R` for a call a hook denied.
fn denied(file: &str, diff: &str) -> String {
    format!("Denied by preToolUse hook: {}", write_refusal(file, diff))
}

/// The real Copilot CLI, driven offline against a mock of its model API, guarded by Stella.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_copilot_cli_is_guarded_by_stella() {
    let Some(bin) = client_bin("STELLA_COPILOT_BIN", "the real Copilot CLI test") else {
        return;
    };
    let mock: Mock<ChatCompletions> = Mock::start();
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "copilot"]);
    // The folder trusted, as Copilot CLI records it when a person says so.
    std::fs::create_dir_all(w.home.join(".copilot")).unwrap();
    std::fs::write(
        w.home.join(".copilot/config.json"),
        json!({ "trustedFolders": [w.repo] }).to_string(),
    )
    .unwrap();
    let c = Client {
        bin: &bin,
        w: &w,
        mock: &mock,
    };
    let notes = w.repo.join("notes.txt");
    let appended = "@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma (another process)";
    let claude = "claude-sonnet-4.5";

    // (1) view → another process appends → edit denied with Stella's refusal; the turn goes on.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "c1_",
        vec![
            ("view", json!({"path": notes})),
            (
                "edit",
                json!({"path": notes, "old_str": "beta", "new_str": "BETA"}),
            ),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    c.run(claude, "Update notes.txt");
    assert_allowed(&mock, 0);
    assert_eq!(mock.output(1), denied("notes.txt", appended));
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );
    assert_eq!(mock.requests(), 3, "the turn went on after the refusal");

    // (2) The shell is routed through the shell guard: `cat` is a read, and after another
    // process's change a `sed -i` is refused, the refusal in the command's output; `create`
    // over the changed file is denied too.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "c2_",
        vec![
            (
                "bash",
                json!({"command": "cat notes.txt", "description": "show"}),
            ),
            (
                "bash",
                json!({"command": "sed -i s/beta/BETA/ notes.txt", "description": "edit"}),
            ),
            (
                "bash",
                json!({"command": "printf 'mine\\n' > notes.txt", "description": "write"}),
            ),
            ("create", json!({"path": notes, "file_text": "mine\n"})),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    c.run(claude, "Update notes.txt");
    assert!(mock.output(0).contains("alpha\nbeta"), "{}", mock.output(0));
    assert!(
        mock.output(1).contains("refusing to write: notes.txt"),
        "{}",
        mock.output(1)
    );
    // A redirect over it too.
    assert!(
        mock.output(2).contains("refusing to write: notes.txt"),
        "{}",
        mock.output(2)
    );
    assert!(
        mock.output(3)
            .starts_with("Denied by preToolUse hook: refusing to write: notes.txt")
    );
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );

    // (3) No false refusal: a new file, a re-read then edits, a blind write of a file never
    // read.
    w.write("other.txt", "one\n");
    w.git(&["add", "other.txt"]);
    w.git(&["commit", "-q", "-m", "other"]);
    let fresh = w.repo.join("fresh.txt");
    mock.script(
        "c3_",
        vec![
            ("create", json!({"path": fresh, "file_text": "new file\n"})),
            ("view", json!({"path": notes})),
            (
                "edit",
                json!({"path": notes, "old_str": "beta", "new_str": "BETA"}),
            ),
            (
                "edit",
                json!({"path": notes, "old_str": "BETA", "new_str": "BETA!"}),
            ),
            (
                "edit",
                json!({"path": w.repo.join("other.txt"), "old_str": "one", "new_str": "ONE"}),
            ),
        ],
        vec![],
    );
    c.run(claude, "Write the files");
    for i in 0..5 {
        assert_allowed(&mock, i);
    }
    assert_eq!(w.read("fresh.txt"), "new file\n");
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nBETA!\ngamma (another process)\n"
    );
    assert_eq!(w.read("other.txt"), "ONE\n");

    // (4) The patch tool (gpt-5.4): a stale update and a delete of a changed file are denied,
    // the file untouched; after a read, the same patch passes.
    w.write("notes.txt", "alpha\nbeta\n");
    let patch =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+PATCHED\n*** End Patch\n";
    let delete = "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n";
    mock.script(
        "c4_",
        vec![
            ("view", json!({"path": notes})),
            ("apply_patch", json!(patch)),
            ("apply_patch", json!(delete)),
        ],
        vec![(1, rewrite(&notes, "alpha\nbeta\ngamma (another process)\n"))],
    );
    c.run("gpt-5.4", "Patch notes.txt");
    assert_eq!(mock.output(1), denied("notes.txt", appended));
    assert!(
        mock.output(2)
            .starts_with("Denied by preToolUse hook: refusing to delete: notes.txt"),
        "{}",
        mock.output(2)
    );
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nbeta\ngamma (another process)\n"
    );
    mock.script(
        "c5_",
        vec![
            ("view", json!({"path": notes})),
            ("apply_patch", json!(patch)),
        ],
        vec![],
    );
    c.run("gpt-5.4", "Patch notes.txt");
    assert_allowed(&mock, 1);
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nPATCHED\ngamma (another process)\n"
    );
}

/// `git stella hook copilot` on the payload captured as `name`; its stdout.
fn hook_copilot(w: &World, name: &str) -> String {
    let mut payload = captured_payload(w, "copilot-1.0.102", name);
    // The patch was captured in a run of its own: one session for all of them here.
    payload["sessionId"] = "b95a7486-3927-47a2-be68-05e986e99038".into();
    hook_stdout(w, "copilot", &payload)
}

#[test]
fn copilots_captured_payloads_are_read_recorded_and_a_stale_edit_denied() {
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    for name in ["preToolUse-view", "postToolUse-view"] {
        assert_eq!(hook_copilot(&w, name), "", "{name}");
    }
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    let deny: Value = serde_json::from_str(&hook_copilot(&w, "preToolUse-edit")).unwrap();
    let reason = write_refusal("notes.txt", "@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma");
    assert_eq!(deny["permissionDecision"], "deny");
    assert_eq!(deny["permissionDecisionReason"], reason);
    assert_eq!(
        deny["hookSpecificOutput"]["permissionDecisionReason"],
        reason
    );
    // The patch over it too; a create of a new file is not.
    assert!(hook_copilot(&w, "preToolUse-apply_patch").contains("\"deny\""));
    assert_eq!(hook_copilot(&w, "preToolUse-create"), "");
    // A ranged view with the disk unchanged around it re-arms the guard.
    for name in ["preToolUse-view-range", "postToolUse-view-range"] {
        assert_eq!(hook_copilot(&w, name), "", "{name}");
    }
    assert_eq!(hook_copilot(&w, "preToolUse-edit"), "");
    // A shell command is rewritten to run under the shell guard, in the session.
    let routed: Value = serde_json::from_str(&hook_copilot(&w, "preToolUse-bash")).unwrap();
    let command = routed["modifiedArgs"]["command"].as_str().unwrap();
    assert!(
        command.contains(" exec --host copilot --session ")
            && command.ends_with(" -- 'cat notes.txt'"),
        "{command}"
    );
    assert_eq!(routed["modifiedArgs"]["description"], "show");
}

#[test]
fn installing_copilot_hooks_then_uninstalling_leaves_the_users_hooks_and_doctor_reads_trust() {
    let w = World::new();
    let mine = "{\"version\": 1, \"hooks\": {\"postToolUse\": [{\"type\": \"command\", \"bash\": \"./fmt.sh\"}]}}\n";
    w.write(".github/hooks/mine.json", mine);
    w.ok(&["hooks", "install", "--agent", "copilot"]);
    let ours = w.read(".github/hooks/stella.json");
    assert!(
        ours.contains("hook copilot") && ours.contains("\"version\": 1"),
        "{ours}"
    );
    let doctor = doctor_on_path;
    let out = doctor(&w);
    assert!(
        stdout(&out)
            .contains("in prompt mode (-p) it skips this repository's hooks without a word"),
        "{}",
        stdout(&out)
    );
    std::fs::create_dir_all(w.home.join(".copilot")).unwrap();
    std::fs::write(
        w.home.join(".copilot/config.json"),
        json!({ "trustedFolders": [w.repo] }).to_string(),
    )
    .unwrap();
    let out = doctor(&w);
    assert!(
        stdout(&out).contains("Copilot CLI runs this repository's hooks"),
        "{}",
        stdout(&out)
    );
    w.ok(&["hooks", "uninstall", "--agent", "copilot"]);
    assert!(!w.repo.join(".github/hooks/stella.json").exists());
    assert_eq!(w.read(".github/hooks/mine.json"), mine);
}
