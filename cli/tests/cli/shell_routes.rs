//! Codex CLI and Gemini CLI run the model's shell commands under the shell guard: their hooks
//! rewrite each command into `git-stella exec --host HOST --session ID -- 'COMMAND'`. Driven here
//! from the captured payloads, then by running the rewritten command the way the host would
//! (`bash -c`); the real clients run the same in codex_real.rs and gemini_real.rs.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// A captured payload, its paths moved into `w`'s repository.
fn captured(w: &World, file: &str) -> Value {
    let path = repo_root().join("tests/fixtures").join(file);
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("/home/user/project", w.repo.to_str().unwrap());
    serde_json::from_str(&text).unwrap()
}

/// The hook's answer to `payload`, as JSON (`Null` for nothing), with `env` set.
fn hook(w: &World, agent: &str, payload: &Value, env: &[(&str, &str)]) -> Value {
    let mut cmd = w.stella();
    cmd.args(["hook", agent]).envs(env.iter().copied());
    let out = feed(cmd, payload.to_string().as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    }
}

/// Run `command` as the host runs a shell command: `bash -c`, in the repository.
fn host_runs(w: &World, command: &str) -> std::process::Output {
    let mut cmd = Command::new("bash");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.args(["-c", command])
        .current_dir(&w.repo)
        .output()
        .unwrap()
}

fn guard_works(w: &World) -> bool {
    code(&w.run(&["exec", "--check"])) == 0
}

#[test]
fn a_codex_shell_command_runs_under_the_guard_in_the_hooks_session() {
    let w = World::new();
    if !guard_works(&w) {
        return skipped("the shell guard (seccomp user notification)");
    }
    w.write("notes.txt", "alpha\nbeta\n");
    let mut pre = captured(&w, "codex-0.169.0/PreToolUse-Bash-redirect.json");
    assert_eq!(pre["tool_input"]["command"], "cat notes.txt");
    let answer = hook(&w, "codex", &pre, &[]);
    let out = &answer["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "allow");
    let session = pre["session_id"].as_str().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    let rewritten = out["updatedInput"]["command"].as_str().unwrap();
    assert_eq!(
        rewritten,
        format!(
            "'{}' exec --host codex --session '{session}' -- 'cat notes.txt'",
            bin.display()
        )
    );
    // The host runs it: the model sees the file, and the session has read it.
    let ran = host_runs(&w, rewritten);
    assert_eq!((code(&ran), stdout(&ran)), (0, "alpha\nbeta\n".to_owned()));
    assert_eq!(
        w.ok(&["--session", session, "status"]),
        "unchanged  notes.txt"
    );
    // Someone edits it; the model's shell overwrite is refused, their bytes kept, and the
    // refusal is in the command's output, which the host gives the model.
    w.write("notes.txt", "alpha\nbeta\ntheirs\n");
    pre["tool_input"]["command"] = json!("printf 'mine\\n' > notes.txt");
    let answer = hook(&w, "codex", &pre, &[]);
    let rewritten = answer["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    assert!(
        rewritten.ends_with(r"-- 'printf '\''mine\n'\'' > notes.txt'"),
        "{rewritten}"
    );
    let ran = host_runs(&w, rewritten);
    assert_ne!(code(&ran), 0);
    assert!(
        stderr(&ran).starts_with("refusing to write: notes.txt\n"),
        "{}",
        stderr(&ran)
    );
    assert_eq!(w.read("notes.txt"), "alpha\nbeta\ntheirs\n");
    // A re-read through the shell settles it: the redone overwrite goes through.
    pre["tool_input"]["command"] =
        json!("cat notes.txt >/dev/null && printf 'mine\\n' > notes.txt");
    let answer = hook(&w, "codex", &pre, &[]);
    let ran = host_runs(
        &w,
        answer["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(w.read("notes.txt"), "mine\n");
    // After the command, nothing is left for the hook to do.
    let post = captured(&w, "codex-0.169.0/PostToolUse-Bash-cat.json");
    assert_eq!(hook(&w, "codex", &post, &[]), Value::Null);
}

#[test]
fn a_codex_apply_patch_heredoc_is_checked_and_recorded_by_the_next_call() {
    let w = World::new();
    w.write("notes.txt", "ALPHA\nbeta\n");
    let heredoc = captured(&w, "codex-0.169.0/PreToolUse-Bash-apply_patch-heredoc.json");
    let session = heredoc["session_id"].as_str().unwrap().to_owned();
    let patch = heredoc["tool_input"]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    w.ok(&["session", "start", "--id", &session]);
    w.ok(&["--session", &session, "read", "notes.txt"]);
    // Someone changed it since: the heredoc is denied whole, like an apply_patch call.
    w.write("notes.txt", "ALPHA\nbeta\ntheirs\n");
    let answer = hook(&w, "codex", &heredoc, &[]);
    let out = &answer["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny");
    assert!(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("refusing to write: notes.txt\n"),
        "{answer}"
    );
    // After a re-read it passes untouched (Codex applies a heredoc patch itself)...
    w.ok(&["--session", &session, "read", "notes.txt"]);
    assert_eq!(hook(&w, "codex", &heredoc, &[]), Value::Null);
    assert!(patch.contains("+BETA"));
    w.write("notes.txt", "ALPHA\nBETA\ntheirs\n");
    // ... and what it wrote is recorded by the session's next hook call, whatever it is: the
    // session's next patch of the file is its own and passes.
    let mut next = captured(&w, "codex-0.169.0/PreToolUse-apply_patch-update.json");
    next["session_id"] = json!(session);
    next["tool_input"]["command"] = json!(
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n ALPHA\n-BETA\n+BETA2\n*** End Patch\n"
    );
    assert_eq!(hook(&w, "codex", &next, &[]), Value::Null);
    let log = w.ok(&["log", &session]);
    assert!(
        log.lines().next().unwrap().ends_with(" wrote notes.txt"),
        "{log}"
    );
    assert_eq!(
        w.ok(&["--session", &session, "status"]),
        "unchanged  notes.txt"
    );
}

#[test]
fn a_gemini_shell_command_is_rewritten_through_its_tool_input() {
    let w = World::new();
    if !guard_works(&w) {
        return skipped("the shell guard (seccomp user notification)");
    }
    w.write("notes.txt", "alpha\n");
    let pre = captured(
        &w,
        "gemini-cli-0.61.0/BeforeTool-run_shell_command-cat.json",
    );
    let answer = hook(&w, "gemini", &pre, &[]);
    let session = pre["session_id"].as_str().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    assert_eq!(
        answer,
        json!({"hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            // The model's input whole, only its command replaced.
            "tool_input": {"command": format!(
                "'{}' exec --host gemini --session '{session}' -- 'cat notes.txt'",
                bin.display()
            ), "description": "Run a command."},
        }})
    );
    let ran = host_runs(
        &w,
        answer["hookSpecificOutput"]["tool_input"]["command"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(stdout(&ran), "alpha\n");
    assert_eq!(
        w.ok(&["--session", session, "status"]),
        "unchanged  notes.txt"
    );
    // The after-event has nothing left to do.
    let post = captured(&w, "gemini-cli-0.61.0/AfterTool-run_shell_command-cat.json");
    assert_eq!(hook(&w, "gemini", &post, &[]), json!({}));
}

#[test]
fn where_the_machine_cannot_guard_a_command_it_runs_as_it_is_and_a_cat_still_arms_the_guard() {
    let w = World::new();
    let no_guard = [("STELLA_TEST_NO_SHELL_GUARD", "1")];
    // Codex: the command runs as sent; what `cat` printed, the whole file, is a read.
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    let pre = captured(&w, "codex-0.169.0/PreToolUse-Bash-redirect.json");
    assert_eq!(hook(&w, "codex", &pre, &no_guard), Value::Null);
    let post = captured(&w, "codex-0.169.0/PostToolUse-Bash-cat.json");
    let session = post["session_id"].as_str().unwrap().to_owned();
    assert_eq!(post["tool_response"], "alpha\nbeta\ngamma\n");
    assert_eq!(hook(&w, "codex", &post, &no_guard), Value::Null);
    assert_eq!(
        w.ok(&["--session", &session, "status"]),
        "unchanged  notes.txt"
    );
    // Someone edits it: the session's patch is refused; a `cat` re-read clears it.
    w.write("notes.txt", "alpha\nbeta\ngamma\ntheirs\n");
    let mut patch = captured(&w, "codex-0.169.0/PreToolUse-apply_patch-update.json");
    patch["session_id"] = json!(session);
    let denied = hook(&w, "codex", &patch, &no_guard);
    assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
    let mut reread = post.clone();
    reread["tool_response"] = json!("alpha\nbeta\ngamma\ntheirs\n");
    hook(&w, "codex", &reread, &no_guard);
    assert_eq!(hook(&w, "codex", &patch, &no_guard), Value::Null);
    // Output that is not the whole file (a part, or a file changed since) records nothing.
    w.write("other.txt", "one\ntwo\n");
    let mut partial = post.clone();
    partial["session_id"] = json!("partial");
    partial["tool_input"]["command"] = json!("head -n 1 other.txt");
    partial["tool_response"] = json!("one\n");
    hook(&w, "codex", &partial, &no_guard);
    assert_eq!(
        code(&w.run(&["--session", "partial", "status"])),
        2,
        "no session was made"
    );

    // Gemini CLI: the same from AfterTool's returnDisplay (its last newline trimmed).
    let pre = captured(
        &w,
        "gemini-cli-0.61.0/BeforeTool-run_shell_command-cat.json",
    );
    assert_eq!(hook(&w, "gemini", &pre, &no_guard), json!({}));
    let post = captured(&w, "gemini-cli-0.61.0/AfterTool-run_shell_command-cat.json");
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    assert_eq!(hook(&w, "gemini", &post, &no_guard), json!({}));
    let session = post["session_id"].as_str().unwrap();
    assert_eq!(
        w.ok(&["--session", session, "status"]),
        "unchanged  notes.txt"
    );
}

#[test]
fn an_install_brings_an_older_matcher_up_to_date_and_keeps_a_widened_one() {
    let w = World::new();
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    let cmd = |agent: &str| format!("{} hook {agent}", bin.display());
    // What earlier versions wrote.
    let old = |matcher: &str, agent: &str, events: [&str; 2]| {
        json!({"hooks": {
            events[0]: [{"matcher": matcher, "hooks": [{"type": "command", "command": cmd(agent)}]}],
            events[1]: [{"matcher": matcher, "hooks": [{"type": "command", "command": cmd(agent)}]}],
        }})
    };
    w.write(
        ".codex/hooks.json",
        &old("apply_patch", "codex", ["PreToolUse", "PostToolUse"]).to_string(),
    );
    w.write(
        ".gemini/settings.json",
        &old(
            "^(read_file|write_file|replace)$",
            "gemini",
            ["BeforeTool", "AfterTool"],
        )
        .to_string(),
    );
    w.ok(&["hooks", "install", "--agent", "codex"]);
    w.ok(&["hooks", "install", "--agent", "gemini"]);
    let read = |rel: &str| -> Value { serde_json::from_str(&w.read(rel)).unwrap() };
    let codex = read(".codex/hooks.json");
    assert_eq!(
        codex["hooks"]["PreToolUse"][0]["matcher"],
        "^(apply_patch|Bash)$"
    );
    assert_eq!(
        codex["hooks"]["PostToolUse"][0]["matcher"],
        "^(apply_patch|Bash)$"
    );
    assert_eq!(codex["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
    let gemini = read(".gemini/settings.json");
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["matcher"],
        "^(read_file|write_file|replace|run_shell_command)$"
    );
    // A matcher the user chose stays theirs.
    w.write(
        ".codex/hooks.json",
        &old(
            "apply_patch|Bash|mine",
            "codex",
            ["PreToolUse", "PostToolUse"],
        )
        .to_string(),
    );
    w.ok(&["hooks", "install", "--agent", "codex"]);
    assert_eq!(
        read(".codex/hooks.json")["hooks"]["PreToolUse"][0]["matcher"],
        "apply_patch|Bash|mine"
    );
}
