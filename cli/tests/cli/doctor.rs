//! `git stella doctor`: green on a good install, red and naming the command when a hook cannot run.

use serde_json::Value;

use crate::common::*;

/// `doctor` and `doctor --json` where Stella is installed on PATH (a project's hooks find it
/// there).
fn doctor(w: &World) -> (i32, String, Vec<Value>) {
    let installed = w.base().join("installed");
    if !installed.exists() {
        std::fs::create_dir_all(&installed).unwrap();
        std::os::unix::fs::symlink(
            assert_cmd::cargo::cargo_bin("git-stella"),
            installed.join("git-stella"),
        )
        .unwrap();
    }
    let path = std::env::join_paths(std::iter::once(installed).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let run = |args: &[&str]| w.stella().env("PATH", &path).args(args).output().unwrap();
    let out = run(&["doctor"]);
    let json = run(&["doctor", "--json"]);
    assert_eq!(code(&out), code(&json));
    let list: Value = serde_json::from_str(stdout(&json).trim()).unwrap();
    let findings = list["findings"].as_array().unwrap().clone();
    // The object's level is the worst of its findings.
    let rank = |l: &Value| ["ok", "warn", "error"].iter().position(|x| l == x).unwrap();
    let worst = findings
        .iter()
        .map(|f| rank(&f["level"]))
        .max()
        .unwrap_or(0);
    assert_eq!(rank(&list["level"]), worst, "{list}");
    (code(&out), stdout(&out), findings)
}

#[test]
fn green_on_a_good_install_and_red_naming_the_command_when_the_binary_is_gone() {
    let w = World::new();
    // Install from a copy of the binary, as an upgrade that later removes it would leave it.
    let bin = w.base().join("old-version/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("git-stella");
    copy_binary(&assert_cmd::cargo::cargo_bin("git-stella"), &copy);
    let mut install = std::process::Command::new(&copy);
    clean_env(&mut install, &w.home, &w.stella_home);
    let ok = install
        .args(["hooks", "install", "--agent", "claude-code", "--local"])
        .current_dir(&w.repo)
        .status()
        .unwrap();
    assert!(ok.success());

    let (status, text, list) = doctor(&w);
    assert_eq!(status, 0, "{text}");
    let settings = w.repo.join(".claude/settings.local.json");
    assert!(
        text.contains(&format!(
            "ok    claude-code (local, {}): hooks run {} (git-stella {} ({} {}))",
            settings.display(),
            copy.display(),
            env!("CARGO_PKG_VERSION"),
            env!("STELLA_COMMIT"),
            env!("STELLA_BUILD_DATE")
        )),
        "{text}"
    );
    assert!(list.iter().all(|f| f["level"] != "error"), "{list:?}");
    assert!(
        list.iter()
            .any(|f| f["check"] == "data" && f["level"] == "ok")
    );

    std::fs::remove_file(&copy).unwrap();
    let (status, text, list) = doctor(&w);
    assert_eq!(status, 1, "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            "hook claude-code' names '{}', which does not exist",
            copy.display()
        )),
        "{line}"
    );
    assert!(
        line.ends_with("every hook fails and claude-code runs tools unguarded"),
        "{line}"
    );
    assert!(
        text.contains("hint: run 'git stella hooks install --agent claude-code' again"),
        "{text}"
    );
    assert!(
        list.iter()
            .any(|f| f["level"] == "error" && f["check"] == "hooks")
    );
}

#[test]
fn a_projects_hooks_are_checked_with_the_git_stella_this_machine_would_run() {
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    let settings = w.repo.join(".claude/settings.json");
    let run = |path: &str| {
        let out = w.stella().env("PATH", path).arg("doctor").output().unwrap();
        (code(&out), stdout(&out))
    };
    // No git-stella on PATH or in the usual places: the hooks and the shell prefix are off.
    let (status, text) = run("/usr/bin:/bin");
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains(&format!(
            "error claude-code (project, {}): the hooks find no git-stella on PATH or in ~/.cargo/bin",
            settings.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("'git-stella --claude-code-shell' runs git-stella by name, and there is none on PATH: every Bash command fails"),
        "{text}"
    );
    // In cargo's folder, off PATH: the hooks find it; the shell prefix still needs PATH.
    let cargo_bin = w.home.join(".cargo/bin");
    std::fs::create_dir_all(&cargo_bin).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("git-stella"),
        cargo_bin.join("git-stella"),
    )
    .unwrap();
    let (status, text) = run("/usr/bin:/bin");
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains(&format!(
            "ok    claude-code (project, {}): hooks run {} (git-stella {} ({} {}))",
            settings.display(),
            cargo_bin.join("git-stella").display(),
            env!("CARGO_PKG_VERSION"),
            env!("STELLA_COMMIT"),
            env!("STELLA_BUILD_DATE")
        )),
        "{text}"
    );
    assert!(
        text.contains("there is none on PATH: every Bash command fails"),
        "{text}"
    );
    // On PATH: all on, said once for the hooks and the shell prefix that both run it.
    let (status, text) = run(&format!("{}:/usr/bin:/bin", cargo_bin.display()));
    assert_eq!(status, 0, "{text}");
    assert!(!text.contains("error"), "{text}");
    assert_eq!(text.matches("hooks run ").count(), 1, "{text}");
}

#[test]
fn an_invalid_config_a_double_install_and_untrusted_codex_hooks_are_named() {
    let w = World::new();
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    w.ok(&["hooks", "install", "--agent", "claude-code", "--user"]);
    w.write(".stella/config.toml", "[hooks]\non-error = \"dney\"\n");
    let (status, text, _) = doctor(&w);
    assert_eq!(status, 1, "{text}");
    assert!(text.contains("runs each hook twice"), "{text}");
    assert!(
        text.contains(".stella/config.toml' is not a valid Stella config"),
        "{text}"
    );
    assert!(text.contains("unknown variant `dney`"), "{text}");
    // The parse error on real lines, its caret under the place, never a literal "\n".
    w.write(".stella/config.toml", "[hooks]\n[[nope\n");
    let (status, text, _) = doctor(&w);
    assert_eq!(status, 1, "{text}");
    assert!(!text.contains("\\n"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("error '") && l.contains("is not a valid Stella config"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        lines[at + 1].trim_start(),
        "caused by: TOML parse error at line 2, column 7",
        "{text}"
    );
    assert!(
        lines[at + 2..]
            .iter()
            .any(|l| l.trim_start() == "2 | [[nope"),
        "{text}"
    );
    std::fs::remove_file(w.repo.join(".stella/config.toml")).unwrap();

    w.ok(&["hooks", "install", "--agent", "codex"]);
    let (status, text, _) = doctor(&w);
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains(&format!(
            "error Codex does not trust the project {}",
            w.repo.display()
        )),
        "{text}"
    );
    std::fs::create_dir_all(w.home.join(".codex")).unwrap();
    let hooks = w.repo.join(".codex/hooks.json");
    std::fs::write(
        w.home.join(".codex/config.toml"),
        format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"{}:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:00\"\n",
            w.repo.display(),
            hooks.display()
        ),
    )
    .unwrap();
    let (_, text, _) = doctor(&w);
    assert!(text.contains("ok    Codex trusts Stella's hooks"), "{text}");
}

#[test]
fn gemini_trust_is_read_as_gemini_cli_reads_it_and_install_says_the_steps() {
    let w = World::new();
    let out = w.run(&["hooks", "install", "--agent", "gemini"]);
    assert!(
        stderr(&out).contains("next: Gemini CLI runs a project's hooks only in a folder you trust"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--skip-trust"), "{}", stderr(&out));
    let out = w.run(&["hooks", "install", "--agent", "codex"]);
    assert!(
        stderr(&out).contains("open /hooks and trust Stella's hooks"),
        "{}",
        stderr(&out)
    );
    w.ok(&["hooks", "uninstall", "--agent", "codex"]);
    let gemini_line = |w: &World| {
        let (_, text, _) = doctor(w);
        text.lines()
            .find(|l| l.contains("Gemini CLI") && l.contains("trust"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_owned()
    };
    assert!(gemini_line(&w).starts_with("warn  Gemini CLI has not been told to trust"));
    let folders = w.home.join(".gemini/trustedFolders.json");
    std::fs::create_dir_all(folders.parent().unwrap()).unwrap();
    let rules = |v: serde_json::Value| std::fs::write(&folders, v.to_string()).unwrap();
    let repo = w.repo.to_str().unwrap().to_owned();
    rules(serde_json::json!({ repo.clone(): "TRUST_FOLDER" }));
    assert!(gemini_line(&w).starts_with("ok    Gemini CLI trusts"));
    // TRUST_PARENT on a sibling trusts the parent, and so this folder.
    let sibling = w.base().join("sibling");
    rules(serde_json::json!({ sibling.to_str().unwrap(): "TRUST_PARENT" }));
    assert!(gemini_line(&w).starts_with("ok    Gemini CLI trusts"));
    // The longest rule wins.
    rules(serde_json::json!({
        w.base().to_str().unwrap(): "TRUST_FOLDER",
        repo.clone(): "DO_NOT_TRUST",
    }));
    let (status, text, _) = doctor(&w);
    assert_eq!(status, 1, "{text}");
    assert!(gemini_line(&w).starts_with("error Gemini CLI does not trust"));
    let mut cmd = w.stella();
    cmd.env("GEMINI_CLI_TRUST_WORKSPACE", "true").arg("doctor");
    let text = stdout(&cmd.output().unwrap());
    assert!(
        text.contains("ok    Gemini CLI trusts this folder (GEMINI_CLI_TRUST_WORKSPACE=true)"),
        "{text}"
    );
}

/// Each way protection is off gets its own finding, named in `--json`: a double install of the
/// project's and the local settings, a shell prefix of the user's that install kept, settings
/// moved by CLAUDE_CONFIG_DIR and CODEX_HOME, and Gemini CLI settings with comments.
#[test]
fn every_way_protection_is_off_is_a_named_finding() {
    let w = World::new();
    let check = |list: &[Value], name: &str, level: &str| {
        list.iter()
            .any(|f| f["check"] == name && f["level"] == level)
    };
    // The project's and the local settings: Claude Code reads both.
    w.ok(&["hooks", "install", "--agent", "claude-code"]);
    w.ok(&["hooks", "install", "--agent", "claude-code", "--local"]);
    let (_, text, list) = doctor(&w);
    assert!(check(&list, "hooks-twice", "warn"), "{text}");
    assert!(check(&list, "claude-shell", "ok"), "{text}");
    w.ok(&["hooks", "uninstall", "--agent", "claude-code", "--local"]);
    let (_, text, list) = doctor(&w);
    assert!(!list.iter().any(|f| f["check"] == "hooks-twice"), "{text}");

    // A shell prefix of the user's, kept by install: Bash runs unguarded.
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    w.write(
        ".claude/settings.json",
        "{\n  \"env\": {\n    \"CLAUDE_CODE_SHELL_PREFIX\": \"/usr/local/bin/audit-wrap\"\n  }\n}\n",
    );
    let out = w.run(&["hooks", "install", "--agent", "claude-code"]);
    assert!(stderr(&out).contains("it was kept"), "{}", stderr(&out));
    let (status, text, list) = doctor(&w);
    assert_eq!(status, 1, "{text}");
    assert!(check(&list, "claude-shell", "error"), "{text}");
    assert!(
        text.contains("CLAUDE_CODE_SHELL_PREFIX='/usr/local/bin/audit-wrap'")
            && text.contains("Bash is unguarded"),
        "{text}"
    );
    w.ok(&["hooks", "uninstall", "--agent", "claude-code"]);
    std::fs::remove_file(w.repo.join(".claude/settings.json")).unwrap();

    // CLAUDE_CONFIG_DIR and CODEX_HOME move the user's settings: install writes there, and
    // doctor reads there.
    let claude_dir = w.base().join("claude-config");
    let codex_home = w.base().join("codex-home");
    let moved = |args: &[&str]| {
        let mut cmd = w.stella();
        cmd.env("CLAUDE_CONFIG_DIR", &claude_dir)
            .env("CODEX_HOME", &codex_home)
            .args(args);
        cmd.output().unwrap()
    };
    for agent in ["claude-code", "codex"] {
        let out = moved(&["hooks", "install", "--agent", agent, "--user"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(claude_dir.join("settings.json").is_file());
    assert!(codex_home.join("hooks.json").is_file());
    assert!(!w.home.join(".claude").exists() && !w.home.join(".codex/hooks.json").exists());
    let out = moved(&["doctor"]);
    let text = stdout(&out);
    for file in [
        claude_dir.join("settings.json"),
        codex_home.join("hooks.json"),
    ] {
        assert!(
            text.contains(&format!("(user, {}): hooks run", file.display())),
            "{text}"
        );
    }
    for agent in ["claude-code", "codex"] {
        let out = moved(&["hooks", "uninstall", "--agent", agent, "--user"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(!claude_dir.join("settings.json").exists());

    // Gemini CLI reads its settings with comments: so do install, uninstall and doctor.
    let commented = "{\n  // the theme we like\n  \"ui\": { \"theme\": \"GitHub\" /* dark is too dark */ },\n  \"url\": \"http://x//not-a-comment\"\n}\n";
    w.write(".gemini/settings.json", commented);
    w.ok(&["hooks", "install", "--agent", "gemini"]);
    let installed = w.read(".gemini/settings.json");
    assert!(
        installed.contains("// the theme we like")
            && installed.contains("/* dark is too dark */")
            && installed.contains("\"url\": \"http://x//not-a-comment\"")
            && installed.contains("hook gemini"),
        "{installed}"
    );
    let (_, text, list) = doctor(&w);
    assert!(!text.contains("is not valid JSON"), "{text}");
    assert!(
        list.iter().any(|f| f["check"] == "hooks"
            && f["level"] == "ok"
            && f["message"]
                .as_str()
                .unwrap()
                .starts_with("gemini (project")),
        "{text}"
    );
    w.ok(&["hooks", "uninstall", "--agent", "gemini"]);
    assert_eq!(w.read(".gemini/settings.json"), commented);
}

#[test]
fn doctor_agent_fails_until_that_hosts_hooks_are_installed() {
    let w = World::new();
    let (code_before, _, _) = doctor(&w);
    assert_eq!(
        code_before, 0,
        "no hooks at all is a warning, not a failure"
    );
    let out = w.run(&["doctor", "--agent", "gemini"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("gemini: no Stella hooks here or in your user settings, and --agent gemini asks for them"),
        "{}",
        stdout(&out)
    );
    w.ok(&["hooks", "install", "--agent", "gemini"]);
    let out = w
        .stella()
        .env("PATH", path_with_stella())
        .args(["doctor", "--agent", "gemini"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    // Each host named must be there.
    let out = w
        .stella()
        .env("PATH", path_with_stella())
        .args(["doctor", "--agent", "gemini", "--agent", "codex"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("codex: no Stella hooks"),
        "{}",
        stdout(&out)
    );
}
