//! `git stella hooks install` / `uninstall`: Claude Code's settings merged and restored, and
//! git's commit-trailer hook with real commits.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// The binary as the tests run it: the hooks name it by this path.
fn exe() -> PathBuf {
    assert_cmd::cargo::cargo_bin("git-stella")
}

fn settings(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The shell prefix Stella sets: for the binary at `exe` (a user's or a checkout's own
/// settings), or by name (a project's, committed).
fn stella_env(exe: Option<&Path>) -> Value {
    let program = exe.map_or("git-stella".into(), |e| e.display().to_string());
    json!({ "CLAUDE_CODE_SHELL_PREFIX": format!("{program} --claude-code-shell") })
}

/// The command of Stella's hook for `agent` in a project's settings; `blocks` for the event
/// that can refuse a tool call.
fn hook(agent: &str, blocks: bool) -> String {
    stella::hosts::install::portable_command(agent, blocks)
}

/// The entries Stella adds, for the binary at `exe`, or (`None`) a project's.
fn stella_entries(exe: Option<&Path>) -> Value {
    let cmd = |blocks| match exe {
        Some(exe) => format!("{} hook claude-code", exe.display()),
        None => hook("claude-code", blocks),
    };
    let plain = json!([{ "hooks": [{ "type": "command", "command": cmd(false) }] }]);
    let tools = |blocks| {
        json!([{
            "matcher": "Read|Edit|MultiEdit|Write|NotebookEdit|Bash|mcp__.*",
            "hooks": [{ "type": "command", "command": cmd(blocks) }]
        }])
    };
    json!({
        "SessionStart": plain,
        "UserPromptSubmit": plain,
        "PreToolUse": tools(true),
        "PostToolUse": tools(false),
        "Stop": plain,
        "SessionEnd": plain,
    })
}

#[test]
fn claude_settings_are_created_merged_idempotent_and_restored() {
    let w = World::new();
    let path = w.repo.join(".claude/settings.json");
    // A fresh install creates the file with exactly Stella's entries.
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr(&out),
        "installed Stella's hooks in .claude/settings.json
"
    );
    assert_eq!(
        settings(&path),
        json!({ "env": stella_env(None), "hooks": stella_entries(None) })
    );
    // Uninstall removes exactly that: the file Stella created goes.
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert!(!path.exists());

    // An existing file keeps every key and hook, in order.
    let original = r#"{
  "model": "opus",
  "env": { "FOO": "bar" },
  "permissions": { "allow": ["Bash(ls:*)"] },
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "echo mine" }] }
    ],
    "Notification": [{ "hooks": [{ "type": "command", "command": "notify-send hi" }] }]
  }
}
"#;
    w.write(".claude/settings.json", original);
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    let merged = settings(&path);
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["permissions"], json!({ "allow": ["Bash(ls:*)"] }));
    assert_eq!(
        merged["env"],
        json!({ "FOO": "bar", "CLAUDE_CODE_SHELL_PREFIX": stella_env(None)["CLAUDE_CODE_SHELL_PREFIX"] })
    );
    let keys: Vec<&String> = merged["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "PreToolUse",
            "Notification",
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    assert_eq!(
        merged["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "echo mine"
    );
    assert_eq!(
        merged["hooks"]["PreToolUse"][1],
        stella_entries(None)["PreToolUse"][0]
    );
    // Twice is once: not a byte changes.
    let before = std::fs::read(&path).unwrap();
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(
        stderr(&out),
        "Stella's hooks are already in .claude/settings.json
"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Uninstall gives back the user's settings.
    let out = w.run(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert_eq!(
        stderr(&out),
        "removed Stella's hooks from .claude/settings.json
"
    );
    assert_eq!(
        settings(&path),
        serde_json::from_str::<Value>(original).unwrap()
    );
    let out = w.run(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert_eq!(
        stderr(&out),
        "no Stella hooks in .claude/settings.json; nothing to remove
"
    );
}

#[test]
fn invalid_settings_are_refused_by_name_and_left_alone() {
    let w = World::new();
    w.write(".claude/settings.json", "{ \"model\": \"opus\", }\n");
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: '{}' is not valid JSON; nothing was changed\ncaused by: trailing comma at line 1 column 20\n",
            w.repo.join(".claude/settings.json").display()
        )
    );
    assert_eq!(
        w.read(".claude/settings.json"),
        "{ \"model\": \"opus\", }\n"
    );
    w.write(".claude/settings.json", "{ \"hooks\": [] }\n");
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: '{}' has an unexpected shape: 'hooks' is not an object; nothing was changed\n",
            w.repo.join(".claude/settings.json").display()
        )
    );
}

#[test]
fn user_settings_live_in_home() {
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code", "--user"]);
    let path = w.home.join(".claude/settings.json");
    assert_eq!(
        settings(&path),
        json!({ "env": stella_env(Some(&exe())), "hooks": stella_entries(Some(&exe())) })
    );
    assert!(!w.repo.join(".claude").exists());
    w.ok(&["hooks", "uninstall", "--agent", "claude-code", "--user"]);
    assert!(!path.exists());
}

#[test]
fn a_shell_prefix_that_is_not_stellas_is_kept_and_named() {
    let w = World::new();
    let path = w.repo.join(".claude/settings.json");
    let original = "{\n  \"env\": { \"CLAUDE_CODE_SHELL_PREFIX\": \"/opt/audit/wrap\" }\n}\n";
    w.write(".claude/settings.json", original);
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr(&out),
        format!(
            "stella: warning: '{0}' already sets CLAUDE_CODE_SHELL_PREFIX to '/opt/audit/wrap'; it was kept, so Claude Code's shell commands run without Stella's shell guard\ninstalled Stella's hooks in .claude/settings.json\n",
            path.display()
        )
    );
    assert_eq!(
        settings(&path)["env"],
        json!({ "CLAUDE_CODE_SHELL_PREFIX": "/opt/audit/wrap" })
    );
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert_eq!(
        settings(&path),
        serde_json::from_str::<Value>(original).unwrap()
    );
    // Stella's own prefix from an older binary path is replaced, not kept.
    w.write(
        ".claude/settings.json",
        "{\"env\": {\"CLAUDE_CODE_SHELL_PREFIX\": \"/old/bin/git-stella --claude-code-shell\"}}",
    );
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    assert_eq!(settings(&path)["env"], stella_env(None));
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Hand-formatted settings for each host, the way people write them: tabs, four spaces, CRLF,
/// one-line arrays and groups, no final newline, a compact one-liner.
const HAND_FORMATTED: [(&str, &str, &str); 6] = [
    (
        "claude-code",
        ".claude/settings.json",
        "{\r\n    \"model\": \"opus\",\r\n    \"env\": {\"FOO\": \"bar\"},\r\n    \"permissions\": { \"allow\": [\"Bash(ls:*)\", \"Read\"] },\r\n    \"hooks\": {\r\n        \"PreToolUse\": [\r\n            { \"matcher\": \"Bash\", \"hooks\": [{ \"type\": \"command\", \"command\": \"echo mine\" }] }\r\n        ]\r\n    }\r\n}",
    ),
    (
        "codex",
        ".codex/hooks.json",
        "{\n\t\"hooks\": {\n\t\t\"PreToolUse\": [{\"matcher\": \"apply_patch\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}],\n\t\t\"Stop\": [ ]\n\t}\n}\n",
    ),
    (
        "gemini",
        ".gemini/settings.json",
        "{\n  \"theme\": \"dark\",\n  \"general\": { \"vimMode\": true },\n  \"hooks\": {\n    \"AfterTool\": [\n      {\n        \"matcher\": \"run_shell_command\",\n        \"hooks\": [ { \"type\": \"command\", \"command\": \"./audit.sh\" } ]\n      }\n    ]\n  }\n}\n",
    ),
    (
        "cursor",
        ".cursor/hooks.json",
        "{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"./done.sh\"}]}}\n",
    ),
    (
        "copilot",
        ".github/hooks/stella.json",
        "{\"version\": 1,\n  \"hooks\": {\"sessionEnd\": [{\"type\": \"command\", \"bash\": \"./notify.sh\"}]}}",
    ),
    (
        "qwen",
        ".qwen/settings.json",
        "{\n\t\"model\": {\"name\": \"qwen3-coder-plus\"},\n\t\"hooks\": {\"PostToolUse\": [{\"matcher\": \"edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"./fmt.sh\"}]}]}\n}",
    ),
];

#[test]
fn hand_formatted_settings_come_back_byte_for_byte_for_every_host() {
    let w = World::new();
    for (agent, rel, original) in HAND_FORMATTED {
        w.write(rel, original);
        w.ok(&["hooks", "install", "--agent", agent]);
        let installed = w.read(rel);
        // Valid JSON the host reads, with every setting of the user's still there.
        let v: Value = serde_json::from_str(&installed).unwrap();
        let before: Value = serde_json::from_str(original).unwrap();
        for (key, value) in before.as_object().unwrap() {
            if key != "hooks" && key != "env" {
                assert_eq!(&v[key], value, "{agent}: {key}");
            }
        }
        let ours = serde_json::to_string(&hook(agent, false)).unwrap();
        assert!(installed.contains(&ours), "{agent}: {installed}");
        assert_eq!(installed.contains('\r'), original.contains('\r'), "{agent}");
        w.ok(&["hooks", "install", "--agent", agent]);
        assert_eq!(w.read(rel), installed, "{agent}: twice is once");
        w.ok(&["hooks", "uninstall", "--agent", agent]);
        assert_eq!(w.read(rel), original, "{agent}");

        // Without the record of what install did (a clone, another machine), Stella's
        // entries are found and taken out by their command: the same bytes come back.
        w.ok(&["hooks", "install", "--agent", agent]);
        std::fs::remove_file(w.repo.join(".stella/private/hooks-installed.json")).unwrap();
        w.ok(&["hooks", "uninstall", "--agent", agent]);
        assert_eq!(w.read(rel), original, "{agent}, without the record");
    }
}

#[test]
fn a_symlinked_settings_file_stays_a_link_and_its_target_comes_back() {
    let w = World::new();
    let dotfiles = w.base().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    let original = "{\n\t\"model\": \"x\",\n\t\"permissions\": {\"allow\": [\"Read\"]}\n}";
    std::fs::write(&real, original).unwrap();
    std::fs::create_dir_all(w.repo.join(".claude")).unwrap();
    let link = w.repo.join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with("{\n\t\"model\": \"x\",\n\t\"permissions\": {\"allow\": [\"Read\"]},\n\t\"env\": {\n\t\t\"CLAUDE_CODE_SHELL_PREFIX\": "), "{text}");
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), original);

    // A linked file that held nothing but Stella's hooks keeps its link: it is the user's.
    std::fs::write(&real, "{}").unwrap();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    std::fs::remove_file(w.repo.join(".stella/private/hooks-installed.json")).unwrap();
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "{}");
}

#[test]
fn a_private_settings_file_keeps_its_mode_and_its_empty_object() {
    let w = World::new();
    for (agent, rel) in [
        ("claude-code", ".claude/settings.json"),
        ("cursor", ".cursor/hooks.json"),
    ] {
        w.write(rel, "{}");
        let path = w.repo.join(rel);
        set_mode(&path, 0o600);
        w.ok(&["hooks", "install", "--agent", agent]);
        assert_eq!(mode(&path), 0o600, "{agent}");
        let ours = serde_json::to_string(&hook(agent, true)).unwrap();
        assert!(w.read(rel).contains(&ours), "{agent}");
        // The file was there before: uninstall gives it back, mode and all, and does not
        // take an empty settings file for one Stella created.
        w.ok(&["hooks", "uninstall", "--agent", agent]);
        assert_eq!(w.read(rel), "{}", "{agent}");
        assert_eq!(mode(&path), 0o600, "{agent}");
    }
}

#[test]
fn a_users_hook_in_stellas_group_survives_install_and_uninstall() {
    let w = World::new();
    for (agent, rel) in [
        ("claude-code", ".claude/settings.json"),
        ("gemini", ".gemini/settings.json"),
    ] {
        let original = "{\n  \"theme\": \"dark\"\n}\n";
        w.write(rel, original);
        w.ok(&["hooks", "install", "--agent", agent]);
        // The user puts a hook of their own beside Stella's, in Stella's group.
        let event = if agent == "gemini" {
            "BeforeTool"
        } else {
            "PreToolUse"
        };
        let text = w.read(rel);
        let ours = format!(
            "\"command\": {}",
            serde_json::to_string(&hook(agent, true)).unwrap()
        );
        let at = text.find(&format!("\"{event}\"")).unwrap();
        let at = at + text[at..].find(&ours).unwrap() + ours.len();
        let at = at + text[at..].find('}').unwrap() + 1;
        let mine = ",\n          { \"type\": \"command\", \"command\": \"./mine.sh\" }";
        let edited = format!("{}{mine}{}", &text[..at], &text[at..]);
        w.write(rel, &edited);
        // Installing again finds Stella's entry in place and changes nothing.
        let out = w.run(&["hooks", "install", "--agent", agent]);
        assert!(
            stderr(&out).contains("already"),
            "{agent}: {}",
            stderr(&out)
        );
        assert_eq!(w.read(rel), edited, "{agent}");
        w.ok(&["hooks", "uninstall", "--agent", agent]);
        let left = w.read(rel);
        let v: Value = serde_json::from_str(&left).unwrap();
        assert_eq!(v["theme"], "dark");
        assert_eq!(
            v["hooks"][event],
            json!([{
                "matcher": if agent == "gemini" { "^(read_file|write_file|replace|run_shell_command)$" } else { "Read|Edit|MultiEdit|Write|NotebookEdit|Bash|mcp__.*" },
                "hooks": [{ "type": "command", "command": "./mine.sh" }]
            }]),
            "{agent}: {left}"
        );
        assert!(!left.contains("git-stella"), "{agent}: {left}");
        assert!(
            left.contains("\n          { \"type\": \"command\", \"command\": \"./mine.sh\" }\n"),
            "{agent}: the user's line as they wrote it: {left}"
        );
    }
}

#[test]
fn a_matcher_widened_in_stellas_group_is_kept() {
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    let stella = "\"matcher\": \"Read|Edit|MultiEdit|Write|NotebookEdit|Bash|mcp__.*\"";
    let widened = w.read(".claude/settings.json").replacen(
        stella,
        "\"matcher\": \"Read|Edit|MultiEdit|Write|NotebookEdit|Bash|mcp__.*|MyTool\"",
        1,
    );
    w.write(".claude/settings.json", &widened);
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(
        stderr(&out),
        "Stella's hooks are already in .claude/settings.json
"
    );
    assert_eq!(w.read(".claude/settings.json"), widened);
}

#[test]
fn folders_stella_created_go_and_folders_that_were_there_stay() {
    let w = World::new();
    // Nothing there: install creates the file and its folder, uninstall removes both.
    for (agent, dir) in [
        ("claude-code", ".claude"),
        ("codex", ".codex"),
        ("gemini", ".gemini"),
        ("cursor", ".cursor"),
    ] {
        w.ok(&["hooks", "install", "--agent", agent]);
        assert!(w.repo.join(dir).is_dir(), "{agent}");
        w.ok(&["hooks", "uninstall", "--agent", agent]);
        assert!(!w.repo.join(dir).exists(), "{agent}");
    }
    // An empty folder that was there stays, and so does one holding something else.
    std::fs::create_dir_all(w.repo.join(".codex")).unwrap();
    w.write(".claude/commands/review.md", "Review this.\n");
    for agent in ["codex", "claude-code"] {
        w.ok(&["hooks", "install", "--agent", agent]);
        w.ok(&["hooks", "uninstall", "--agent", agent]);
    }
    assert!(w.repo.join(".codex").is_dir());
    assert_eq!(listing(&w.repo.join(".codex")), Vec::<PathBuf>::new());
    assert_eq!(
        listing(&w.repo.join(".claude")),
        [
            w.repo.join(".claude/commands"),
            w.repo.join(".claude/commands/review.md")
        ]
    );
    // A project install and a local one share '.claude': it goes with the last of them.
    std::fs::remove_dir_all(w.repo.join(".claude")).unwrap();
    w.ok(&["hooks", "install", "--agent", "claude-code", "--local"]);
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    w.ok(&["hooks", "uninstall", "--agent", "claude-code", "--local"]);
    assert!(w.repo.join(".claude/settings.json").exists());
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert!(!w.repo.join(".claude").exists());
    // The user's folders too: '~/.codex' was not there, '~/.claude' was.
    std::fs::create_dir_all(w.home.join(".claude")).unwrap();
    for agent in ["codex", "claude-code"] {
        w.ok(&["hooks", "install", "--agent", agent, "--user"]);
        w.ok(&["hooks", "uninstall", "--agent", agent, "--user"]);
    }
    assert!(!w.home.join(".codex").exists());
    assert!(w.home.join(".claude").is_dir());
}

#[test]
fn the_hooks_of_this_machine_name_the_binary_by_the_symlink_it_was_run_by() {
    let w = World::new();
    let bin = w.base().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("git-stella");
    std::os::unix::fs::symlink(exe(), &link).unwrap();
    // Run by its absolute path, into Claude Code's settings for this checkout.
    let mut cmd = Command::new(&link);
    clean_env(&mut cmd, &w.home, &w.stella_home);
    let out = cmd
        .current_dir(&w.repo)
        .args(["hooks", "install", "--agent", "claude-code", "--local"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        settings(&w.repo.join(".claude/settings.local.json")),
        json!({ "env": stella_env(Some(&link)), "hooks": stella_entries(Some(&link)) })
    );
    // Run by git, which finds it on the PATH (`git stella`), into the user's settings.
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    for agent in ["codex", "gemini", "cursor"] {
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, &w.home, &w.stella_home);
        let out = cmd
            .env("PATH", &path)
            .current_dir(&w.repo)
            .args(["stella", "hooks", "install", "--agent", agent, "--user"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let codex = settings(&w.home.join(".codex/hooks.json"));
    let command = format!("{} hook codex", link.display());
    assert_eq!(
        codex["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        command
    );
    let gemini = settings(&w.home.join(".gemini/settings.json"));
    let command = format!("{} hook gemini", link.display());
    assert_eq!(
        gemini["hooks"]["AfterTool"][0]["hooks"][0]["command"],
        command
    );
    let cursor = settings(&w.home.join(".cursor/hooks.json"));
    let command = format!("{} hook cursor", link.display());
    assert_eq!(cursor["hooks"]["beforeReadFile"][0]["command"], command);
    // Installing from the real path later rewrites the command where it stands.
    w.ok(&["hooks", "install", "--agent", "codex", "--user"]);
    let codex = settings(&w.home.join(".codex/hooks.json"));
    let command = format!("{} hook codex", exe().display());
    assert_eq!(
        codex["hooks"]["PreToolUse"],
        json!([{"matcher": "^(apply_patch|Bash)$", "hooks": [{"type": "command", "command": command}]}])
    );
    // A project's settings, installed over a hook of this machine's, name no path of it.
    std::fs::copy(
        w.home.join(".codex/hooks.json"),
        w.repo.join(".codex/hooks.json"),
    )
    .or_else(|_| {
        std::fs::create_dir_all(w.repo.join(".codex"))?;
        std::fs::copy(
            w.home.join(".codex/hooks.json"),
            w.repo.join(".codex/hooks.json"),
        )
    })
    .unwrap();
    w.ok(&["hooks", "install", "--agent", "codex"]);
    let text = w.read(".codex/hooks.json");
    assert!(!text.contains(&*exe().to_string_lossy()), "{text}");
    assert_eq!(
        settings(&w.repo.join(".codex/hooks.json"))["hooks"]["PreToolUse"],
        json!([{"matcher": "^(apply_patch|Bash)$", "hooks": [{"type": "command", "command": hook("codex", true)}]}])
    );
}

#[test]
fn a_projects_claude_code_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella(
        "claude-code",
        ".claude/settings.json",
        "/hooks/PreToolUse/0/hooks/0/command",
    );
}

#[test]
fn a_projects_codex_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella(
        "codex",
        ".codex/hooks.json",
        "/hooks/PreToolUse/0/hooks/0/command",
    );
}

#[test]
fn a_projects_gemini_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella(
        "gemini",
        ".gemini/settings.json",
        "/hooks/BeforeTool/0/hooks/0/command",
    );
}

#[test]
fn a_projects_cursor_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella(
        "cursor",
        ".cursor/hooks.json",
        "/hooks/preToolUse/0/command",
    );
}

#[test]
fn a_projects_qwen_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella(
        "qwen",
        ".qwen/settings.json",
        "/hooks/PreToolUse/0/hooks/0/command",
    );
}

#[test]
fn a_projects_copilot_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella(
        "copilot",
        ".github/hooks/stella.json",
        "/hooks/preToolUse/0/command",
    );
}

#[test]
fn a_projects_opencode_hooks_run_each_machines_stella_and_say_when_there_is_none() {
    runs_each_machines_stella("opencode", ".opencode/plugins/stella.js", "");
}

/// A project's hooks as a teammate's machine runs them: the first `git-stella` on PATH or in the
/// usual places, whoever installed them and wherever; where there is none, the host is told so,
/// and a project that chose fail-closed refuses the tool call.
///
/// `agent`'s hooks, installed in `rel`; `pointer` finds, in that settings file, the command of
/// the event that can refuse a tool call (OpenCode's plugin holds its command in code).
fn runs_each_machines_stella(agent: &str, rel: &str, pointer: &str) {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    // A git-stella that says where it was found, then is Stella.
    let install = |dir: &Path, name: &str| {
        std::fs::create_dir_all(dir).unwrap();
        let f = dir.join("git-stella");
        std::fs::write(
            &f,
            format!(
                "#!/bin/sh\necho {name} >> '{}'\nexec '{}' \"$@\"\n",
                w.base().join("ran").display(),
                exe().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // Two teammates: one with cargo's folder off PATH, one with Stella in a folder on PATH.
    let cargo_home = w.base().join("home-cargo");
    install(&cargo_home.join(".cargo/bin"), "cargo");
    let path_home = w.base().join("home-path");
    std::fs::create_dir_all(&path_home).unwrap();
    install(&w.base().join("tools"), "path");
    let bare_home = w.base().join("home-bare");
    std::fs::create_dir_all(&bare_home).unwrap();
    let system = "/usr/bin:/bin";
    let on_path = format!("{}:{system}", w.base().join("tools").display());
    let payload = claude_fixture_text(&w, "PreToolUse-Write.json");
    w.ok(&["hooks", "install", "--agent", agent]);
    let text = w.read(rel);
    assert!(
        !text.contains(&*w.base().to_string_lossy()),
        "{agent}: {text}"
    );
    // OpenCode's plugin runs its command as every other host's hook runs its own.
    let command = match agent {
        "opencode" => stella::hosts::opencode::command_of(&text).unwrap(),
        _ => settings(&w.repo.join(rel))
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap()
            .to_owned(),
    };
    let run = |home: &Path, path: &str| {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&w.repo)
            .env_clear()
            .env("HOME", home)
            .env("PATH", path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        // A hook that finds no Stella may exit before it reads its payload.
        let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
        child.wait_with_output().unwrap()
    };
    let _ = std::fs::remove_file(w.base().join("ran"));
    for (home, path) in [(&cargo_home, system), (&path_home, on_path.as_str())] {
        let out = run(home, path);
        assert!(
            !stderr(&out).contains("Stella is not installed"),
            "{agent}: {}",
            stderr(&out)
        );
        if agent == "claude-code" {
            // Stella itself answered: a new file may be written.
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
    }
    assert_eq!(
        std::fs::read_to_string(w.base().join("ran")).unwrap(),
        "cargo\npath\n",
        "{agent}"
    );
    // Nowhere: said plainly; the host goes on (exit 1), or refuses under fail-closed (2).
    let out = run(&bare_home, system);
    assert_eq!(code(&out), 1, "{agent}");
    assert!(
        stderr(&out).starts_with("Stella is not installed: "),
        "{agent}: {}",
        stderr(&out)
    );
    // OpenCode's plugin refuses a write on any failure of its command (opencode_real.rs
    // runs it so); the hooks of the others exit 2 where the project chose fail-closed.
    if agent != "opencode" {
        w.git(&["config", "stella.hookOnError", "deny"]);
        let out = run(&bare_home, system);
        w.git(&["config", "--unset", "stella.hookOnError"]);
        assert_eq!(code(&out), 2, "{agent}: {}", stderr(&out));
        assert!(stderr(&out).contains("(fail-closed)"), "{agent}");
    }
    // Uninstalled by its command, as any other Stella hook.
    w.ok(&["hooks", "uninstall", "--agent", agent]);
    assert!(!w.repo.join(rel).exists(), "{agent}");
}

#[test]
fn local_installs_go_to_settings_local_json() {
    let w = World::new();
    let out = w.run(&["hooks", "install", "--agent", "claude-code", "--local"]);
    let local = w.repo.join(".claude/settings.local.json");
    assert_eq!(
        stderr(&out),
        "installed Stella's hooks in .claude/settings.local.json
"
    );
    assert_eq!(
        settings(&local),
        json!({ "env": stella_env(Some(&exe())), "hooks": stella_entries(Some(&exe())) })
    );
    assert!(!w.repo.join(".claude/settings.json").exists());
    let out = w.run(&["hooks", "uninstall", "--agent", "claude-code"]);
    assert_eq!(
        stderr(&out),
        "no Stella hooks in .claude/settings.json; nothing to remove
"
    );
    assert!(local.exists());
    w.ok(&["hooks", "uninstall", "--agent", "claude-code", "--local"]);
    assert!(!w.repo.join(".claude").exists());
    let out = w.run(&["hooks", "install", "--agent", "codex", "--local"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: --local goes with --agent claude-code only; the other agents have no settings file for one checkout\n"
    );
}

#[test]
fn a_second_install_in_another_scope_is_warned_about() {
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code", "--user"]);
    let user = w.home.join(".claude/settings.json");
    let project = w.repo.join(".claude/settings.json");
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr(&out),
        format!(
            "stella: warning: Stella's hooks are also in '{}': Claude Code would run each of them twice (take one copy out: 'git stella hooks uninstall --agent claude-code --user')\ninstalled Stella's hooks in .claude/settings.json\n",
            user.display(),
        )
    );
    assert!(settings(&project)["hooks"]["PreToolUse"].is_array());
    // The other way round, for another host.
    w.ok(&["hooks", "install", "--agent", "gemini"]);
    let out = w.run(&["hooks", "install", "--agent", "gemini", "--user"]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr(&out),
        format!(
            "stella: warning: Stella's hooks are also in '{}': Gemini CLI would run each of them twice (take one copy out: 'git stella hooks uninstall --agent gemini')\ninstalled Stella's hooks in {}\n",
            w.repo.join(".gemini/settings.json").display(),
            w.home.join(".gemini/settings.json").display()
        )
    );
    // One place only: no warning.
    w.ok(&["hooks", "uninstall", "--agent", "claude-code", "--user"]);
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert_eq!(
        stderr(&out),
        "Stella's hooks are already in .claude/settings.json
"
    );
}

/// `git commit` in `w`, with `$STELLA_SESSION` when given.
fn commit(w: &World, session: Option<&str>, args: &[&str]) {
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    if let Some(s) = session {
        cmd.env("STELLA_SESSION", s);
    }
    let out = cmd
        .current_dir(&w.repo)
        .args(["commit", "-q", "--allow-empty"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git commit failed: {}", stderr(&out));
}

fn last_message(w: &World) -> String {
    w.git(&["log", "-1", "--format=%B"])
}

#[test]
fn the_git_hook_adds_one_session_trailer_and_amend_does_not_repeat_it() {
    let w = World::new();
    let out = w.run(&["hooks", "install", "--git"]);
    assert_eq!(code(&out), 0);
    let hook = w.repo.join(".git/hooks/prepare-commit-msg");
    assert_eq!(
        stderr(&out),
        format!("stella: installed Stella's hooks in '{}'\n", hook.display())
    );
    commit(&w, None, &["-m", "by a person"]);
    assert_eq!(last_message(&w), "by a person");
    commit(&w, Some("s-1"), &["-m", "by an agent"]);
    assert_eq!(last_message(&w), "by an agent\n\nStella-Session: s-1");
    commit(
        &w,
        Some("s-1"),
        &[
            "--amend",
            "-m",
            "by an agent, amended\n\nStella-Session: s-1",
        ],
    );
    assert_eq!(
        last_message(&w),
        "by an agent, amended\n\nStella-Session: s-1"
    );
    commit(&w, Some("s-1"), &["--amend", "--no-edit"]);
    assert_eq!(
        last_message(&w),
        "by an agent, amended\n\nStella-Session: s-1"
    );
    // Idempotent, and uninstall leaves no hook behind.
    let before = std::fs::read(&hook).unwrap();
    w.ok(&["hooks", "install", "--git"]);
    assert_eq!(std::fs::read(&hook).unwrap(), before);
    w.ok(&["hooks", "uninstall", "--git"]);
    assert!(!hook.exists());
    commit(&w, Some("s-1"), &["-m", "after uninstall"]);
    assert_eq!(last_message(&w), "after uninstall");
}

#[test]
fn an_existing_hook_is_chained_and_restored_and_core_hooks_path_is_honoured() {
    let w = World::new();
    w.git(&["config", "core.hooksPath", "githooks"]);
    let dir = w.repo.join("githooks");
    std::fs::create_dir_all(&dir).unwrap();
    let theirs = "#!/bin/sh\necho \"Ticket: T-7\" >> \"$1\"\n";
    let hook = dir.join("prepare-commit-msg");
    std::fs::write(&hook, theirs).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = w.run(&["hooks", "install", "--git"]);
    assert_eq!(
        stderr(&out),
        format!("stella: installed Stella's hooks in '{}'\n", hook.display())
    );
    assert!(!w.repo.join(".git/hooks/prepare-commit-msg").exists());
    commit(&w, Some("s-2"), &["-m", "work"]);
    assert_eq!(last_message(&w), "work\nTicket: T-7\n\nStella-Session: s-2");
    commit(&w, None, &["-m", "plain"]);
    assert_eq!(last_message(&w), "plain\nTicket: T-7");
    w.ok(&["hooks", "uninstall", "--git"]);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), theirs);
    assert!(!dir.join("prepare-commit-msg.stella-chained").exists());
}

#[test]
fn settings_files_keep_their_link_and_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let dotfiles = w.base().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, "{\"model\": \"x\"}\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::create_dir_all(w.repo.join(".claude")).unwrap();
    let link = w.repo.join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        text.contains("\"model\": \"x\"") && text.contains("PreToolUse"),
        "{text}"
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let left: Vec<_> = std::fs::read_dir(&dotfiles).unwrap().collect();
    assert_eq!(left.len(), 1, "no temp file beside the settings");
}

#[test]
fn agent_hooks_install_merges_is_idempotent_and_uninstall_removes_exactly_that() {
    let w = World::new();
    let user = json!({"theme": "dark", "hooks": {"BeforeTool": [
        {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh"}]}]}});
    w.write(
        ".gemini/settings.json",
        &serde_json::to_string_pretty(&user).unwrap(),
    );
    let read = |rel: &str| -> Value { serde_json::from_str(&w.read(rel)).unwrap() };
    // A project's hooks find git-stella on each machine; the event that can refuse a tool
    // call refuses it where the project chose fail-closed and Stella is missing.
    let cmd = |agent: &str, blocks: bool| stella::hosts::install::portable_command(agent, blocks);

    let out = w.run(&["hooks", "install", "--agent", "gemini"]);
    let said = stderr(&out);
    let mut lines = said.lines();
    assert_eq!(
        lines.next(),
        Some("installed Stella's hooks in .gemini/settings.json")
    );
    // Then the trust step Gemini CLI needs, and nothing else.
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("next: Gemini CLI runs a project's hooks")
    );
    assert_eq!(lines.next(), None, "{said}");
    let installed = read(".gemini/settings.json");
    assert_eq!(installed["theme"], "dark");
    assert_eq!(
        installed["hooks"]["BeforeTool"][0],
        user["hooks"]["BeforeTool"][0]
    );
    assert_eq!(
        installed["hooks"]["BeforeTool"][1],
        json!({"matcher": "^(read_file|write_file|replace|run_shell_command)$",
            "hooks": [{"type": "command", "command": cmd("gemini", true), "name": "stella"}]})
    );
    let out = w.run(&["hooks", "install", "--agent", "gemini"]);
    assert_eq!(
        stderr(&out),
        "Stella's hooks are already in .gemini/settings.json\n"
    );
    assert_eq!(read(".gemini/settings.json"), installed);
    w.ok(&["hooks", "uninstall", "--agent", "gemini"]);
    assert_eq!(read(".gemini/settings.json"), user);

    // Files Stella created are removed again whole.
    w.ok(&["hooks", "install", "--agent", "codex"]);
    assert_eq!(
        read(".codex/hooks.json"),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": [{"type": "command", "command": cmd("codex", true)}]}],
            "PostToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": [{"type": "command", "command": cmd("codex", false)}]}],
        }})
    );
    w.ok(&["hooks", "install", "--agent", "cursor"]);
    assert_eq!(
        read(".cursor/hooks.json"),
        json!({"version": 1, "hooks": {
            "preToolUse": [{"command": cmd("cursor", true), "matcher": "Write|Edit|StrReplace|MultiEdit|Delete"}],
            "postToolUse": [{"command": cmd("cursor", false), "matcher": "Write|Delete"}],
            "beforeReadFile": [{"command": cmd("cursor", false)}],
            "afterFileEdit": [{"command": cmd("cursor", false)}],
        }})
    );
    for agent in ["codex", "cursor"] {
        w.ok(&["hooks", "uninstall", "--agent", agent]);
    }
    assert!(!w.repo.join(".codex/hooks.json").exists());
    assert!(!w.repo.join(".cursor/hooks.json").exists());
    let out = w.run(&["hooks", "uninstall", "--agent", "cursor"]);
    assert_eq!(
        stderr(&out),
        "no Stella hooks in .cursor/hooks.json; nothing to remove\n"
    );
}
