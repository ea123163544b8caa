//! The README's first command: the demonstration runs for real and checks itself.

use crate::common::*;

#[test]
fn the_demonstration_runs_and_shows_a_refused_write() {
    let w = World::new();
    let out = w.stella_in(&w.home).args(["demo"]).output().unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.matches("refusing to write: notes.txt").count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("(exit 1, as it should)").count(), 2, "{text}");
    assert!(text.contains("[bob] $ git stella replay --materialize --as agent-a-on-bob "));
    assert!(text.contains("replay of session agent-a from artifact "));
    assert!(text.ends_with(
        "# Done: two stale writes refused, every fresh one allowed, nothing uploaded anywhere.\n"
    ));
    // It used its own temp folders: nothing in this HOME or data dir.
    assert!(!w.stella_home.exists());
}

/// The `sh` blocks of a Markdown file under `heading` (the whole file when `None`), in order.
pub(crate) fn sh_blocks(file: &str, heading: Option<&str>) -> String {
    let text = std::fs::read_to_string(repo_root().join(file)).unwrap();
    let text = match heading {
        Some(h) => {
            let at = text
                .find(&format!("\n{h}\n"))
                .unwrap_or_else(|| panic!("{h}"));
            let rest = &text[at + h.len() + 2..];
            rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
        }
        None => text,
    };
    let mut blocks = String::new();
    let mut inside = false;
    for line in text.lines() {
        match (inside, line) {
            (false, "```sh") => inside = true,
            (true, "```") => inside = false,
            (true, l) => blocks.push_str(&format!("{l}\n")),
            _ => {}
        }
    }
    assert!(!blocks.is_empty(), "{file}: no sh block");
    blocks
}

/// Run shell text as a person pastes it: bash, in `w`'s HOME, with the built Stella on PATH.
fn pasted(w: &World, script: &str, stop_on_error: bool) -> std::process::Output {
    let mut cmd = std::process::Command::new("bash");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.env("PATH", path_with_stella())
        .env("TMPDIR", w.base())
        .current_dir(&w.home)
        .arg(if stop_on_error { "-ec" } else { "-c" })
        .arg(script)
        .output()
        .unwrap()
}

#[test]
fn the_readmes_by_hand_block_runs_as_pasted() {
    let w = World::new();
    let out = pasted(
        &w,
        &sh_blocks(
            "README.md",
            Some("## By hand: sessions, checkpoint and replay"),
        ),
        true,
    );
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("unchanged  notes.txt"), "{text}");
    assert!(
        text.contains("replay of session agent-a from artifact "),
        "{text}"
    );
    assert!(
        text.contains(" exec sh -c sed -i s/alpha/ALPHA/ notes.txt"),
        "{text}"
    );
}

#[test]
fn the_walkthrough_runs_as_pasted_and_refuses_where_it_says() {
    let w = World::new();
    let out = pasted(&w, &sh_blocks("docs/walkthrough.md", None), false);
    // Its two stale writes are refused, as the text between the blocks says; the rest runs.
    assert_eq!(code(&out), 1, "{}\n{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("refusing to write: notes.txt").count(),
        2,
        "{err}"
    );
    assert!(
        err.contains("session agent-b wrote it at "),
        "the refusal names the writer: {err}"
    );
    assert!(
        stdout(&out).contains("replay of session agent-a from artifact "),
        "{}",
        stdout(&out)
    );
}

/// How the snippets test treats one `sh` block, named by its file and first line.
enum Snippet {
    /// Run in a project of the reader's (`~/src/your-project`, a git repository holding
    /// `notes.txt` and `api.rs`, with sessions agent-1, agent-2 and agent-7 started), after
    /// `setup`; it must exit 0.
    /// `needs`: programs it runs that a machine may lack (skipped without them, but under CI).
    Run {
        needs: &'static [&'static str],
        setup: &'static str,
    },
    /// Run by the named test, as pasted, with the blocks around it.
    RunBy(&'static str),
    /// Not run here, and why: each says where what it does is tested instead.
    Not(&'static str),
}

/// Every `sh` and `bash` block of the README and docs: (file, first line, how it is tested).
const SNIPPETS: &[(&str, &str, Snippet)] = {
    use Snippet::*;
    &[
        (
            "README.md",
            "./install.sh && git stella demo",
            Not(
                "installs this checkout and runs this suite: install.rs runs install.sh, and the demonstration is the_demonstration_runs_and_shows_a_refused_write",
            ),
        ),
        (
            "README.md",
            "cd ~/src/your-project",
            Run {
                needs: &[],
                setup: "",
            },
        ),
        (
            "README.md",
            "cd \"$(mktemp -d)\" && git init -q demo && cd demo",
            RunBy("the_readmes_by_hand_block_runs_as_pasted"),
        ),
        (
            "docs/agents.md",
            "cd ~/src/your-project",
            Not(
                "its last line starts Claude Code (claude_real.rs); its first two are the README's, run here",
            ),
        ),
        (
            "docs/agents.md",
            "git stella --session agent-7 mcp",
            Not(
                "its first line is a server a host starts and talks to on stdio: mcp.rs drives it with the Python SDK's client",
            ),
        ),
        (
            "docs/agents.md",
            "git stella --session agent-1 exec -- sh -c 'cat notes.txt; sed -i s/draft/final/ notes.txt'",
            Run {
                needs: &[],
                setup: "mkdir -p ~/bin && printf '#!/bin/sh\\ncat notes.txt\\n' > ~/bin/my-agent && chmod +x ~/bin/my-agent && export PATH=\"$PATH:$HOME/bin\"",
            },
        ),
        (
            "docs/agents.md",
            "git stella doctor",
            Not(
                "runs your agent with its model: claude_real::the_ci_recipe_runs_as_pasted_around_the_real_client runs it with the real client",
            ),
        ),
        (
            "docs/artifacts.md",
            "# machine A: put the checkpoint ref into a repository, push it",
            Run {
                needs: &[],
                setup: "git stella --session agent-1 read notes.txt && git stella --session agent-1 checkpoint -o ../agent-a.stella.bundle && git stella session start --id agent-a && git stella --session agent-a read api.rs && git stella --session agent-a checkpoint -o ../agent-a.stella.bundle && git clone -q --bare . ../origin.git && git remote add origin ../origin.git && git stella -q session drop agent-a",
            },
        ),
        (
            "docs/claude-code.md",
            "cargo install --locked --path cli",
            Not("installs, then starts Claude Code: install.rs and claude_real"),
        ),
        (
            "docs/claude-code.md",
            "s=$(PATH=",
            Not(
                "the command a host runs with its payload on stdin: hooks_install.rs runs it as each host does",
            ),
        ),
        (
            "docs/claude-code.md",
            "git stella --session <id> checkpoint -o session.stella.bundle",
            Not(
                "a template: <id> is the conversation's id; claude_real.rs checkpoints a real one, case (f)",
            ),
        ),
        (
            "docs/claude-code.md",
            "git stella hooks install --agent claude-code      # once per clone",
            Not(
                "a template ending in claude --resume: claude_real.rs replays and resumes a real conversation, case (f)",
            ),
        ),
        (
            "docs/claude-code.md",
            "git stella hooks install --git",
            Run {
                needs: &[],
                setup: "",
            },
        ),
        (
            "docs/claude-code.md",
            "npm install --prefix target/claude-code",
            Not("installs the client and runs claude_real.rs of this suite"),
        ),
        (
            "docs/contributing.md",
            "cargo test --locked",
            Not("this suite: main.rs and every test it names"),
        ),
        ("docs/install.md", "./install.sh", Not("install.rs runs it")),
        (
            "docs/install.md",
            "git stella --help        # the man page",
            Run {
                needs: &["man"],
                setup: "mkdir -p ~/man/man1 && cp \"$STELLA_REPO\"/man/*.1 ~/man/man1/ && export MANPATH=\"$HOME/man:\"  # as install.sh installs them",
            },
        ),
        (
            "docs/install.md",
            "source scripts/release.sh",
            Not("a release build, minutes long; install.rs installs from a folder as it does"),
        ),
        (
            "docs/install.md",
            "git stella hooks uninstall --agent claude-code",
            Run {
                needs: &[],
                setup: "git stella -q hooks install --agent claude-code && git stella -q hooks install --git",
            },
        ),
        (
            "docs/install.md",
            "cargo uninstall git-stella",
            Not(
                "removes an installed Stella: install.rs checks each place it names is where install.sh put something",
            ),
        ),
        (
            "docs/install.md",
            "source ~/.local/share/bash-completion/completions/git-stella",
            Not("needs an installed Stella: completion.rs sources the same script"),
        ),
        (
            "docs/install.md",
            "cargo run --example gen-docs",
            Not("rewrites man/ and completions/: docs.rs checks they are what it writes"),
        ),
        (
            "docs/shell-guard.md",
            "git stella --session agent-1 exec -- sh -c 'cat notes.txt; sed -i s/draft/final/ notes.txt'",
            Run {
                needs: &[],
                setup: "",
            },
        ),
        (
            "docs/uncommitted-work.md",
            "git stella recover --all --since 1h",
            Not("names a version from the example above it: uncommitted.rs recovers one"),
        ),
        (
            "docs/walkthrough.md",
            "cd \"$(mktemp -d)\" && git init -q demo && cd demo",
            RunBy("the_walkthrough_runs_as_pasted_and_refuses_where_it_says"),
        ),
        (
            "docs/walkthrough.md",
            "git stella --session agent-a read notes.txt",
            RunBy("the_walkthrough_runs_as_pasted_and_refuses_where_it_says"),
        ),
    ]
};

/// Every `sh`/`bash` block of the README and of docs/, as (file, text).
fn every_block() -> Vec<(String, String)> {
    let root = repo_root();
    let mut files = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        let mut block: Option<String> = None;
        for line in text.lines() {
            match (&mut block, line) {
                (None, "```sh" | "```bash") => block = Some(String::new()),
                (Some(b), "```") => {
                    out.push((file.clone(), std::mem::take(b)));
                    block = None;
                }
                (Some(b), l) => b.push_str(&format!("{l}\n")),
                _ => {}
            }
        }
    }
    out
}

#[test]
fn every_snippet_in_the_readme_and_docs_runs_as_pasted_or_says_where_it_is_tested() {
    let blocks = every_block();
    let mut failures = Vec::new();
    for (file, text) in &blocks {
        let first = text.lines().next().unwrap_or_default();
        let known: Vec<&Snippet> = SNIPPETS
            .iter()
            .filter(|(f, start, _)| f == file && first.starts_with(start))
            .map(|(_, _, how)| how)
            .collect();
        let [how] = known[..] else {
            failures.push(format!(
                "{file}: a block starting {first:?} matches {} entries of SNIPPETS: say how it is tested",
                known.len()
            ));
            continue;
        };
        let Snippet::Run { needs, setup } = how else {
            continue;
        };
        if !needs
            .iter()
            .all(|tool| have(tool, &format!("{file}: the block starting {first:?}")))
        {
            continue;
        }
        let w = World::new();
        let project = w.home.join("src/your-project");
        std::fs::create_dir_all(&project).unwrap();
        let prepare = format!(
            "set -e; export STELLA_REPO='{}'; cd ~/src/your-project; git init -q -b main; \
             printf 'a draft\\n' > notes.txt; printf 'fn api() {{}}\\n' > api.rs; \
             git add . && git commit -qm start; \
             for s in agent-1 agent-2 agent-7; do git stella session start --id $s >/dev/null; done; \
             {setup}\n",
            repo_root().display()
        );
        let script = format!("{prepare}set +e\ncd ~/src/your-project\nset -e\n{text}");
        let out = pasted(&w, &script, true);
        if code(&out) != 0 {
            failures.push(format!(
                "{file}: the block starting {first:?} exited {}:\n{}\n{}",
                code(&out),
                stdout(&out),
                stderr(&out)
            ));
        }
    }
    // What an entry says covers a block is there: the named test, the test files its reason
    // names.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli");
    let sources: String = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    for (file, start, how) in SNIPPETS {
        let named: Vec<String> = match how {
            Snippet::RunBy(test) => vec![(*test).to_owned()],
            Snippet::Not(why) => why
                .split(|c: char| !(c.is_alphanumeric() || "_.:".contains(c)))
                .filter(|w| w.ends_with(".rs") || w.contains("::"))
                .map(str::to_owned)
                .collect(),
            Snippet::Run { .. } => continue,
        };
        if let Snippet::Not(why) = how
            && named.is_empty()
        {
            failures.push(format!("{file}: {start:?}: {why:?} names no test"));
        }
        for name in named {
            let found = match name.strip_suffix(".rs") {
                Some(module) => dir.join(format!("{module}.rs")).exists(),
                None => sources.contains(&format!(
                    "fn {}(",
                    name.rsplit("::").next().unwrap_or(&name)
                )),
            };
            if !found {
                failures.push(format!(
                    "{file}: {start:?} names {name}, which is not a test"
                ));
            }
        }
    }
    // Every entry names a block that is still there.
    for (file, start, _) in SNIPPETS {
        if !blocks
            .iter()
            .any(|(f, text)| f == file && text.starts_with(start))
        {
            failures.push(format!("SNIPPETS names no block of {file}: {start:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
