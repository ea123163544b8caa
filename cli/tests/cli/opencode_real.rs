//! End to end with the real OpenCode, offline: an OpenAI-compatible provider pointed at a loopback
//! mock of the Chat Completions API, which plays the model and scripts every tool call; Stella's
//! plugin is installed by `git stella hooks install --agent opencode`; real files change under
//! the client.
//!
//! The client is found through `STELLA_OPENCODE_BIN`: the platform package's native binary
//! (`opencode-linux-x64/bin/opencode`, a Bun executable). `.ci/run` installs `opencode-ai` and
//! sets it. Unset, the test says it was skipped — unless `CI` is set, where a missing client
//! fails the test.
//!
//! The client runs as a user runs it headless: `opencode run --format json PROMPT`, its config
//! and data folders fresh, the provider given by `OPENCODE_CONFIG`, and nothing else reached
//! (`npm_config_offline` for the plugin's dependency install, no model catalog, no update
//! check). A model id without `gpt-` gets `read`, `write`, `edit` and `bash`; one with it gets
//! `apply_patch` instead of `write` and `edit`.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::*;
use crate::model_mock::{ChatCompletions, Mock, assert_allowed, rewrite};

struct Client<'a> {
    bin: &'a Path,
    w: &'a World,
    mock: &'a Mock<ChatCompletions>,
}

impl Client<'_> {
    /// `opencode run PROMPT` with `model`, in the repository, `git-stella` on PATH.
    fn run(&self, model: &str, prompt: &str) -> Output {
        let out = run_bounded(
            &mut self.command(model, prompt, &path_with_stella()),
            Duration::from_secs(120),
        );
        assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
        out
    }

    /// The `opencode run` command, with `path` for `PATH`.
    fn command(&self, model: &str, prompt: &str, path: &std::ffi::OsStr) -> Command {
        let base = self.w.base();
        let config = base.join("opencode-provider.json");
        let provider = json!({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": format!("http://127.0.0.1:{}/v1", self.mock.port), "apiKey": "x"},
                "models": {(model): {}},
            }},
            "model": format!("mock/{model}"),
            "autoupdate": false,
            "share": "disabled",
        });
        std::fs::write(&config, provider.to_string()).unwrap();
        let mut cmd = Command::new(self.bin);
        clean_env(&mut cmd, &self.w.home, &self.w.stella_home);
        cmd.current_dir(&self.w.repo)
            .env("PATH", path)
            .env("XDG_CONFIG_HOME", base.join("xdg-config"))
            .env("XDG_DATA_HOME", base.join("xdg-data"))
            .env("XDG_CACHE_HOME", base.join("xdg-cache"))
            .env("XDG_STATE_HOME", base.join("xdg-state"))
            .env("OPENCODE_CONFIG", &config)
            .env("npm_config_offline", "true")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .args(["run", "--format", "json", prompt])
            .stdin(Stdio::null());
        cmd
    }
}

/// The real OpenCode, driven offline against a mock of its model API, guarded by Stella's plugin.
///
/// One test, not several: it is one session of the real client, whose start is expensive and
/// whose steps build on each other.
#[test]
fn the_real_opencode_is_guarded_by_stellas_plugin() {
    let Some(bin) = client_bin("STELLA_OPENCODE_BIN", "the real OpenCode test") else {
        return;
    };
    let mock: Mock<ChatCompletions> = Mock::start();
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "opencode"]);
    let c = Client {
        bin: &bin,
        w: &w,
        mock: &mock,
    };
    let notes = w.repo.join("notes.txt");
    let appended = "@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma (another process)";
    let other = "alpha\nbeta\ngamma (another process)\n";

    // (1) read → another process appends → edit and write refused, the model reading Stella's
    // refusal word for word; the file untouched.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "o1_",
        vec![
            ("read", json!({"filePath": notes})),
            (
                "edit",
                json!({"filePath": notes, "oldString": "beta", "newString": "BETA"}),
            ),
            ("write", json!({"filePath": notes, "content": "mine\n"})),
        ],
        vec![(1, rewrite(&notes, other))],
    );
    c.run("mock-model", "Update notes.txt");
    assert_allowed(&mock, 0);
    assert_eq!(mock.output(1), write_refusal("notes.txt", appended));
    assert_eq!(mock.output(2), write_refusal("notes.txt", appended));
    assert_eq!(w.read("notes.txt"), other);

    // (2) The shell runs under the shell guard: a `cat` is a read; after another process's
    // change, a `sed -i` is refused, the refusal in the command's output.
    w.write("notes.txt", "alpha\nbeta\n");
    mock.script(
        "o2_",
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
        ],
        vec![(1, rewrite(&notes, other))],
    );
    c.run("mock-model", "Update notes.txt");
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
    assert_eq!(w.read("notes.txt"), other);

    // (3) No false refusal: a new file, a re-read then edits, a blind write of a file never
    // read.
    w.write("committed.txt", "one\n");
    w.git(&["add", "committed.txt"]);
    w.git(&["commit", "-q", "-m", "committed"]);
    mock.script(
        "o3_",
        vec![
            (
                "write",
                json!({"filePath": w.repo.join("fresh.txt"), "content": "new file\n"}),
            ),
            ("read", json!({"filePath": notes})),
            (
                "edit",
                json!({"filePath": notes, "oldString": "beta", "newString": "BETA"}),
            ),
            (
                "edit",
                json!({"filePath": notes, "oldString": "BETA", "newString": "BETA!"}),
            ),
            (
                "write",
                json!({"filePath": w.repo.join("committed.txt"), "content": "ONE\n"}),
            ),
        ],
        vec![],
    );
    c.run("mock-model", "Write the files");
    for i in 0..5 {
        assert_allowed(&mock, i);
    }
    assert_eq!(w.read("fresh.txt"), "new file\n");
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nBETA!\ngamma (another process)\n"
    );
    assert_eq!(w.read("committed.txt"), "ONE\n");

    // (4) apply_patch (a `gpt-` model): a stale update and a delete refused; after a read, the
    // update passes.
    w.write("notes.txt", "alpha\nbeta\n");
    let update =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+PATCHED\n*** End Patch";
    let delete = "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch";
    mock.script(
        "o4_",
        vec![
            ("read", json!({"filePath": notes})),
            ("apply_patch", json!({"patchText": update})),
            ("apply_patch", json!({"patchText": delete})),
        ],
        vec![(1, rewrite(&notes, other))],
    );
    c.run("gpt-5.5", "Patch notes.txt");
    assert_eq!(mock.output(1), write_refusal("notes.txt", appended));
    assert!(
        mock.output(2).starts_with("refusing to delete: notes.txt"),
        "{}",
        mock.output(2)
    );
    assert_eq!(w.read("notes.txt"), other);
    mock.script(
        "o5_",
        vec![
            ("read", json!({"filePath": notes})),
            ("apply_patch", json!({"patchText": update})),
        ],
        vec![],
    );
    c.run("gpt-5.5", "Patch notes.txt");
    assert_allowed(&mock, 1);
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nPATCHED\ngamma (another process)\n"
    );

    // (5) Where the plugin cannot reach Stella (not installed on this machine), a write is
    // refused, not let through.
    let bare = std::env::join_paths(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .filter(|d| !d.join("git-stella").exists()),
    )
    .unwrap();
    mock.script(
        "o6_",
        vec![("write", json!({"filePath": notes, "content": "blind\n"}))],
        vec![],
    );
    let out = run_bounded(
        &mut c.command("mock-model", "Write notes.txt", &bare),
        Duration::from_secs(120),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        mock.output(0).starts_with(
            "Stella could not check this call, so it was refused: Stella is not installed"
        ),
        "{}",
        mock.output(0)
    );
    assert_eq!(
        w.read("notes.txt"),
        "alpha\nPATCHED\ngamma (another process)\n"
    );
}

#[test]
fn the_opencode_plugin_installs_whole_and_uninstalls_leaving_the_folder_as_it_was() {
    let w = World::new();
    w.write(
        ".opencode/plugins/mine.js",
        "export const Mine = async () => ({})\n",
    );
    w.ok(&["hooks", "install", "--agent", "opencode"]);
    let plugin = w.read(".opencode/plugins/stella.js");
    assert!(
        plugin.contains("hook opencode") && plugin.contains("spawnSync"),
        "{plugin}"
    );
    assert!(
        !plugin.contains(&*w.base().to_string_lossy()),
        "no path of this machine"
    );
    let doctor = doctor_on_path(&w);
    assert!(
        stdout(&doctor).contains("ok    opencode (project, ")
            && stdout(&doctor).contains("stella.js): hooks run "),
        "{}",
        stdout(&doctor)
    );
    // Changed by hand (or by an older Stella): doctor says so, install writes it again.
    w.write(".opencode/plugins/stella.js", &plugin.replace("30000", "1"));
    let doctor = doctor_on_path(&w);
    assert_eq!(code(&doctor), 1, "{}", stdout(&doctor));
    w.ok(&["hooks", "install", "--agent", "opencode"]);
    assert_eq!(w.read(".opencode/plugins/stella.js"), plugin);
    // A file of someone else's under the name is never replaced.
    w.ok(&["hooks", "uninstall", "--agent", "opencode"]);
    assert!(!w.repo.join(".opencode/plugins/stella.js").exists());
    assert_eq!(
        w.read(".opencode/plugins/mine.js"),
        "export const Mine = async () => ({})\n"
    );
    w.write(".opencode/plugins/stella.js", "export const Theirs = 1\n");
    assert_eq!(
        code(&w.run(&["hooks", "install", "--agent", "opencode"])),
        2
    );
    assert_eq!(
        w.read(".opencode/plugins/stella.js"),
        "export const Theirs = 1\n"
    );
}
