//! `.git/` and `.stella/` are refused by every way in, and a config Stella cannot read whole never
//! lets a write through.

use serde_json::Value;

use crate::common::*;

const PRIVATE: [&str; 4] = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".stella/private/workspace.toml",
    "vendor/lib/.git/HEAD",
];

#[test]
fn every_command_refuses_git_and_stella_paths() {
    let w = World::new();
    let s = w.start();
    std::fs::create_dir_all(w.repo.join("vendor/lib/.git")).unwrap();
    w.write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    let before: Vec<Vec<u8>> = PRIVATE
        .iter()
        .map(|p| std::fs::read(w.repo.join(p)).unwrap_or_default())
        .collect();
    for path in PRIVATE {
        let area = if path.starts_with(".stella") {
            ".stella"
        } else {
            ".git"
        };
        let said = format!(
            "error: '{path}' is inside {area}/, which Stella never reads or writes on an agent's behalf\n"
        );
        for args in [
            vec!["write", path],
            vec!["rm", path],
            vec!["read", path],
            vec!["wrote", path],
            vec!["guard", path],
            vec!["recover", path],
        ] {
            let mut full = vec!["--session", s.as_str()];
            full.extend(&args);
            let out = w.run_stdin(&full, b"#!/bin/sh\necho owned\n");
            assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
            assert_eq!(stderr(&out), said, "{args:?}");
        }
    }
    let after: Vec<Vec<u8>> = PRIVATE
        .iter()
        .map(|p| std::fs::read(w.repo.join(p)).unwrap_or_default())
        .collect();
    assert_eq!(before, after);
    assert!(!w.repo.join(".git/hooks/pre-commit").exists());
    // A symbolic link into .git is refused as what it reaches.
    std::os::unix::fs::symlink(".git/config", w.repo.join("innocent")).unwrap();
    let out = w.run_stdin(&["--session", &s, "write", "innocent"], b"x\n");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("is inside .git/"), "{}", stderr(&out));
}

fn deny_reason(out: &std::process::Output) -> String {
    assert_eq!(code(out), 0, "{}", stderr(out));
    let v: Value =
        serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)));
    v.pointer("/hookSpecificOutput/permissionDecisionReason")
        .or_else(|| v.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no deny reason in {v}"))
        .to_owned()
}

/// A captured payload of `agent` (under `tests/fixtures/`), its paths moved into `w`.
fn captured(w: &World, file: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(repo_root().join("tests/fixtures").join(file)).unwrap();
    text.replace("/home/user/project", w.repo.to_str().unwrap())
        .replace("/home/user", w.home.to_str().unwrap())
        .replace(from, to)
}

#[test]
fn every_host_adapter_denies_a_write_into_git_or_stella() {
    let w = World::new();
    let hook = |agent: &str, payload: &str| {
        let mut cmd = w.stella();
        cmd.args(["hook", agent]);
        feed(cmd, payload.as_bytes())
    };
    let claude = claude_fixture_text(&w, "PreToolUse-Write.json")
        .replace("new.txt", ".git/hooks/pre-commit");
    let reason = deny_reason(&hook("claude-code", &claude));
    assert!(reason.starts_with("'"), "{reason}");
    assert!(
        reason.contains(".git/hooks/pre-commit' is inside .git/"),
        "{reason}"
    );
    assert!(reason.ends_with("Nothing was written."), "{reason}");

    let codex = captured(
        &w,
        "codex-0.169.0/PreToolUse-apply_patch-add.json",
        "Add File: notes.txt",
        "Add File: .stella/private/workspace.toml",
    );
    let denied = |agent: &str, payload: &str, area: &str| {
        let out = hook(agent, payload);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let said = stdout(&out);
        assert!(said.contains(&format!("is inside {area}/")), "{said}");
        assert!(said.contains("\"deny\""), "{said}");
    };
    denied("codex", &codex, ".stella");

    let gemini = captured(
        &w,
        "gemini-cli-0.61.0/BeforeTool-write_file.json",
        "\"notes.txt\"",
        "\".git/config\"",
    );
    denied("gemini", &gemini, ".git");
    assert!(!w.repo.join(".git/hooks/pre-commit").exists());
}

#[test]
fn the_shell_guard_lets_git_write_its_own_folder_and_nobody_but_stella_write_stella() {
    let w = World::new();
    if code(&w.run(&["exec", "--check"])) != 0 {
        assert!(
            std::env::var_os("CI").is_none(),
            "the shell guard must run under CI"
        );
        skipped("the shell guard cannot run on this machine");
        return;
    }
    let s = w.start();
    w.ok(&["--session", &s, "read", "README"]);
    let out = w.run(&[
        "--session",
        &s,
        "exec",
        "--",
        "sh",
        "-c",
        "echo x > .stella/private/workspace.toml",
    ]);
    assert_ne!(code(&out), 0);
    assert!(
        stderr(&out).contains(
            "refusing to change .stella/private/workspace.toml: it is Stella's own state (.stella/), which only Stella writes"
        ),
        "{}",
        stderr(&out)
    );
    assert_ne!(w.read(".stella/private/workspace.toml"), "x\n");
    // git writes its own folder as it always does, and Stella itself still runs inside.
    let out = w.run(&[
        "--session",
        &s,
        "exec",
        "--",
        "sh",
        "-c",
        &format!(
            "git add README && '{}' --session other session start --id other",
            assert_cmd::cargo::cargo_bin("git-stella").display()
        ),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn an_invalid_config_denies_every_write_with_its_error() {
    let w = World::new();
    w.write("notes.txt", "alpha\n");
    let pre_write = || claude_fixture_text(&w, "PreToolUse-Write.json");
    let run = |payload: String| {
        let mut cmd = w.stella();
        cmd.args(["hook", "claude-code"]);
        feed(cmd, payload.as_bytes())
    };
    for (config, says) in [
        (
            "[hooks]\non-error = \"dney\"\n",
            "unknown variant `dney`, expected `allow` or `deny`",
        ),
        ("[hooks\n", "unclosed table"),
        (
            "[[hooks.tools]]\nname = \"save\"\npath = \"target\"\naccess = \"wirte\"\n",
            "unknown variant `wirte`, expected `read` or `write`",
        ),
        ("[hook]\non-error = \"deny\"\n", "unknown field `hook`"),
    ] {
        w.write(".stella/config.toml", config);
        let reason = deny_reason(&run(pre_write()));
        assert!(
            reason.starts_with("Stella's configuration is invalid"),
            "{config}: {reason}"
        );
        assert!(
            reason.contains(".stella/config.toml' is not a valid Stella config"),
            "{reason}"
        );
        assert!(reason.contains("line "), "the line is named: {reason}");
        assert!(reason.contains(says), "{config}: {reason}");
    }
    std::fs::remove_file(w.repo.join(".stella/config.toml")).unwrap();
    // A valid config: the same write passes.
    let out = run(pre_write());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn a_mistyped_git_config_is_fail_closed_when_the_hook_fails() {
    let w = World::new();
    w.write("notes.txt", "alpha\nbeta\n");
    let hook = |payload: String| {
        let mut cmd = w.stella();
        cmd.args(["hook", "claude-code"]);
        feed(cmd, payload.as_bytes())
    };
    hook(claude_fixture_text(&w, "SessionStart-startup.json"));
    hook(claude_fixture_text(&w, "PostToolUse-Read.json"));
    // Make the hook fail on every call: no step of the session is whole any more (the last lost
    // its map, every one the session.toml they share), so there is nothing to repair it to.
    let sid = "e6c55faa-d7b7-44f5-8458-fd227d2da938";
    let store = w.store();
    for object in [
        format!("refs/stella/sessions/{sid}^{{tree}}:map"),
        format!("refs/stella/sessions/{sid}^{{tree}}:session.toml"),
    ] {
        let id = w.store_git(&["rev-parse", &object]);
        std::fs::remove_file(store.join("objects").join(&id[..2]).join(&id[2..])).unwrap();
    }
    let pre = || claude_fixture_text(&w, "PreToolUse-Write.json").replace("new.txt", "notes.txt");
    // Nothing configured: the failure lets the tool run (exit 1, the host's rule).
    assert_eq!(code(&hook(pre())), 1);
    for (key, value, says) in [
        (
            "stella.hookOnError",
            "denyy",
            "git config stella.hookOnError is 'denyy'; it must be 'allow' or 'deny'",
        ),
        (
            "stella.hookOnErorr",
            "deny",
            "git config has an unknown key 'stella.hookOnErorr' (Stella reads only stella.hookOnError)",
        ),
    ] {
        w.git(&["config", key, value]);
        let reason = deny_reason(&hook(pre()));
        assert!(
            reason.starts_with("Stella's configuration is invalid"),
            "{reason}"
        );
        assert!(reason.contains(says), "{reason}");
        w.git(&["config", "--unset", key]);
    }
}

/// One rule for every entry point: while `.stella/config.toml` is invalid, every write Stella
/// checks is refused, naming the error, and reads still work.
#[test]
fn an_invalid_stella_config_toml_refuses_every_write_at_every_entry_point() {
    every_write_is_refused_while_broken(
        &|w| w.write(".stella/config.toml", "[hooks]\non-error = \"dney\"\n"),
        &|w| std::fs::remove_file(w.repo.join(".stella/config.toml")).unwrap(),
        "unknown variant `dney`",
    );
}

/// One rule for every entry point: while `git config stella.*` is invalid, every write Stella
/// checks is refused, naming the error, and reads still work.
#[test]
fn an_invalid_git_config_stella_key_refuses_every_write_at_every_entry_point() {
    every_write_is_refused_while_broken(
        &|w| {
            w.git(&["config", "stella.hookOnErorr", "deny"]);
        },
        &|w| {
            w.git(&["config", "--unset", "stella.hookOnErorr"]);
        },
        "unknown key 'stella.hookOnErorr'",
    );
}

/// Break the config with `break_it`: every entry point's write is refused saying `says`, and
/// reads still work; mended with `mend`, the same write goes through.
fn every_write_is_refused_while_broken(
    break_it: &dyn Fn(&World),
    mend: &dyn Fn(&World),
    says: &str,
) {
    let w = World::new();
    w.write("notes.txt", "alpha\n");
    w.git(&["add", "notes.txt"]);
    w.git(&["commit", "-qm", "notes"]);
    let s = w.start();
    w.ok(&["--session", &s, "read", "notes.txt"]);
    let mcp = crate::mcp::python();
    break_it(&w);
    let refused = |out: &std::process::Output, what: &str| {
        // exec's own errors are 125, every other command's 2.
        let own = if what.starts_with("exec") { 125 } else { 2 };
        assert_eq!(code(out), own, "{what}: {}", stderr(out));
        let err = stderr(out);
        assert!(
            err.contains("Stella's configuration is invalid") && err.contains(says),
            "{what}: {err}"
        );
        assert!(err.contains("git stella doctor"), "{what}: {err}");
    };
    // Reads are still recorded.
    w.ok(&["--session", &s, "read", "notes.txt"]);
    let out = w.run_stdin(&["--session", &s, "write", "notes.txt"], b"written\n");
    refused(&out, "write");
    refused(
        &w.run(&["--session", &s, "write", "new.txt"]),
        "write of a new file",
    );
    refused(&w.run(&["--session", &s, "rm", "notes.txt"]), "rm");
    refused(&w.run(&["--session", &s, "undo"]), "undo");
    refused(&w.run(&["--session", &s, "guard", "notes.txt"]), "guard");
    let out = w.run(&[
        "--session",
        &s,
        "exec",
        "--",
        "sh",
        "-c",
        "echo written > notes.txt; touch ran",
    ]);
    refused(&out, "exec");
    let mut shell = w.stella();
    shell
        .env("CLAUDE_CODE_SESSION_ID", &s)
        .args(["exec", "--host", "claude-code"])
        .arg(format!(
            "eval 'echo written > notes.txt; touch ran' < /dev/null && pwd -P >| {}/cwd-file",
            w.tmp.path().display()
        ));
    refused(&shell.output().unwrap(), "exec as Claude Code's shell");
    assert!(!w.repo.join("ran").exists(), "no command ran");
    let pre = claude_fixture_text(&w, "PreToolUse-Write.json").replace("new.txt", "notes.txt");
    let reason = deny_reason(&feed(
        {
            let mut c = w.stella();
            c.args(["hook", "claude-code"]);
            c
        },
        pre.as_bytes(),
    ));
    assert!(
        reason.starts_with("Stella's configuration is invalid") && reason.contains(says),
        "{reason}"
    );
    if let Some(python) = &mcp {
        let steps = crate::mcp::drive(&w, python, "tools", &["notes.txt"]);
        for (step, v) in &steps {
            let text = v["text"].as_str().unwrap();
            if step == "read_file" {
                assert_eq!(v["error"], false, "{text}");
                assert!(text.contains("alpha"), "{text}");
            } else {
                assert_eq!(v["error"], true, "{step}: {text}");
                assert!(
                    text.contains("Stella's configuration is invalid") && text.contains(says),
                    "{step}: {text}"
                );
            }
        }
        assert_eq!(steps.len(), 4);
    }
    assert_eq!(w.read("notes.txt"), "alpha\n", "nothing was written");
    assert!(!w.repo.join("new.txt").exists());
    mend(&w);
    // Mended, the same write goes through.
    let out = w.run_stdin(&["--session", &s, "write", "notes.txt"], b"written\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(w.read("notes.txt"), "written\n");
}

/// A passing check of `git config stella.*` is remembered (reading git's configuration is most
/// of a guarded command's wait), and while it is, a change in any place the configuration comes
/// from is still seen at the next write: the repository's file, the user's two, the
/// environment's keys. Configuration that includes another file is never remembered.
#[test]
fn a_remembered_pass_of_git_config_still_sees_every_change() {
    let (w, s) = read_notes();
    let remembered = w.repo.join(".stella/private/git-config-checked");
    let write = |w: &World, env: &[(&str, &str)]| write_notes(w, &s, env);
    let passes = |w: &World, env: &[(&str, &str)]| {
        let out = write(w, env);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let refused = |w: &World, env: &[(&str, &str)], says: &str| {
        let out = write(w, env);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    };
    // Files changed in the last two seconds are not remembered by: a change in the same tick
    // of the clock would not move their times (here one dated a minute ahead).
    let ahead = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 60;
    let touched = std::process::Command::new("touch")
        .arg("-m")
        .arg("-d")
        .arg(format!("@{ahead}"))
        .arg(w.repo.join(".git/config"))
        .status()
        .unwrap();
    assert!(touched.success());
    passes(&w, &[]);
    assert!(!remembered.exists(), "remembered while a file was fresh");
    w.git(&["config", "core.quotePath", "true"]);
    // Each change below comes after a pass was remembered anew.
    let remember = |w: &World| {
        let _ = std::fs::remove_file(&remembered);
        std::thread::sleep(std::time::Duration::from_millis(2100));
        passes(w, &[]);
        assert!(remembered.exists(), "a settled pass is remembered");
        // And the next write takes it instead of reading git's configuration.
        let out = write(w, &[("STELLA_LOG", "stella=debug")]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("the pass remembered for what it is read from holds"),
            "{}",
            stderr(&out)
        );
    };

    // The repository's configuration.
    remember(&w);
    w.git(&["config", "stella.repoTypo", "1"]);
    refused(&w, &[], "stella.repoTypo");
    w.git(&["config", "--unset", "stella.repoTypo"]);
    // The environment's.
    remember(&w);
    refused(
        &w,
        &[
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "stella.envTypo"),
            ("GIT_CONFIG_VALUE_0", "1"),
        ],
        "stella.envTypo",
    );
    // The user's, in both places git looks.
    for (file, key) in [
        (w.home.join(".gitconfig"), "userTypo"),
        (w.home.join(".config/git/config"), "xdgTypo"),
    ] {
        remember(&w);
        let before = std::fs::read(&file).ok();
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let mut text = before.clone().unwrap_or_default();
        text.extend_from_slice(format!("[stella]\n\t{key} = 1\n").as_bytes());
        std::fs::write(&file, text).unwrap();
        refused(&w, &[], &format!("stella.{key}"));
        match before {
            Some(b) => std::fs::write(&file, b).unwrap(),
            None => std::fs::remove_file(&file).unwrap(),
        }
    }

    // An include: its file is not among those the pass is remembered by, so it is never
    // remembered, and a change there is seen.
    std::fs::write(
        w.tmp.path().join("extra.gitconfig"),
        "[core]\n\tquotePath = true\n",
    )
    .unwrap();
    w.git(&[
        "config",
        "include.path",
        &w.tmp.path().join("extra.gitconfig").display().to_string(),
    ]);
    std::fs::remove_file(&remembered).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    passes(&w, &[]);
    assert!(
        !remembered.exists(),
        "a configuration with an include is never remembered"
    );
    std::fs::write(
        w.tmp.path().join("extra.gitconfig"),
        "[stella]\n\tincludedTypo = 1\n",
    )
    .unwrap();
    refused(&w, &[], "stella.includedTypo");
}

/// What is put where a pass is remembered, when it is not Stella's fingerprint (a FIFO, other
/// bytes), is no pass: the configuration is read in full, and the check never waits on it.
#[test]
fn a_hostile_remembered_pass_is_no_pass() {
    let (w, s) = read_notes();
    w.git(&["config", "stella.typo", "1"]);
    let remembered = w.repo.join(".stella/private/git-config-checked");
    std::fs::create_dir_all(remembered.parent().unwrap()).unwrap();
    mkfifo(&remembered);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let write = || write_notes(&w, &s, &[]);
    let out = write();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("stella.typo"), "{}", stderr(&out));
    std::fs::remove_file(&remembered).unwrap();
    std::fs::write(&remembered, "0".repeat(64)).unwrap();
    let out = write();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("stella.typo"), "{}", stderr(&out));
}

/// A workspace with `notes.txt`, read by a new session (its id).
fn read_notes() -> (World, String) {
    let w = World::new();
    w.write("notes.txt", "alpha\n");
    let s = w.start();
    w.ok(&["--session", &s, "read", "notes.txt"]);
    (w, s)
}

/// `write notes.txt` by session `s`, with `env` set.
fn write_notes(w: &World, s: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = w.stella();
    c.args(["--session", s, "write", "notes.txt"]);
    for (k, v) in env {
        c.env(k, v);
    }
    feed(c, b"written\n")
}

/// A FIFO where `.stella/config.toml` goes is a configuration that cannot be read: every write
/// is refused naming it, and nothing waits on it.
#[test]
fn a_fifo_for_a_config_file_is_an_invalid_config_not_a_hang() {
    let (w, s) = read_notes();
    std::fs::create_dir_all(w.repo.join(".stella")).unwrap();
    mkfifo(&w.repo.join(".stella/config.toml"));
    let out = write_notes(&w, &s, &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Stella's configuration is invalid") && err.contains("config.toml"),
        "{err}"
    );
    assert_eq!(w.read("notes.txt"), "alpha\n");
}
