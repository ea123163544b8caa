//! The committed man pages and completions are what the clap tree generates today, and the pages
//! say what the product contract requires of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use stella_cli::docs;

use crate::common::{have, repo_root};

/// Every file under the generated folders of `root`, relative to it.
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for folder in docs::FOLDERS {
        let Ok(entries) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_file() {
                let rel = path.strip_prefix(root).unwrap().to_owned();
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn committed_man_pages_and_completions_are_fresh() {
    let tmp = tempfile::tempdir().unwrap();
    let written = docs::generate(tmp.path()).unwrap();
    let fresh = tree(tmp.path());
    assert_eq!(written.len(), fresh.len());
    let committed = tree(repo_root());
    let mut stale = Vec::new();
    for (path, bytes) in &fresh {
        match committed.get(path) {
            None => stale.push(format!("{} is missing", path.display())),
            Some(b) if b != bytes => stale.push(format!("{} is out of date", path.display())),
            Some(_) => {}
        }
    }
    for path in committed.keys().filter(|p| !fresh.contains_key(*p)) {
        stale.push(format!("{} has no command any more", path.display()));
    }
    assert!(
        stale.is_empty(),
        "the generated docs are stale:\n  {}\nrefresh them with `{}` and commit man/ and completions/",
        stale.join("\n  "),
        docs::REFRESH
    );
}

#[test]
fn generate_removes_pages_of_commands_that_are_gone() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("man")).unwrap();
    std::fs::write(tmp.path().join("man/git-stella-gone.1"), "old").unwrap();
    docs::generate(tmp.path()).unwrap();
    assert!(!tmp.path().join("man/git-stella-gone.1").exists());
    assert!(tmp.path().join("man/git-stella.1").exists());
}

fn page(name: &str) -> Option<String> {
    docs::render_all()
        .into_iter()
        .find(|(p, _)| p == &Path::new("man").join(format!("{name}.1")))
        .map(|(_, b)| String::from_utf8(b).unwrap())
}

/// A page as `man` shows it, plain text at 80 columns.
fn rendered(name: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(format!("{name}.1"));
    std::fs::write(&file, page(name).expect("no such page")).unwrap();
    let out = std::process::Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANWIDTH", "80")
        .env("MANROFFOPT", "-rHY=0")
        .env("MANPAGER", "cat")
        .env("LC_ALL", "C")
        .output()
        .expect("man (man-db) runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Filled text with its line breaks and runs of spaces made single spaces.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn guard_pages_carry_the_decision_table() {
    if !have("man", "rendering the man pages (the man-db package)") {
        return;
    }
    for name in ["git-stella-guard", "git-stella-write", "git-stella-rm"] {
        let text = rendered(name);
        for line in [
            "DECISION TABLE",
            "session's map   disk now             update   delete",
            "not tracked     anything             allow    allow",
            "tracked         cannot be read       allow    allow",
            "tracked         gone                 REFUSE   allow",
            "tracked         the bytes to write   allow    -",
            "tracked         the bytes it saw     allow    allow",
            "tracked         other bytes          REFUSE   REFUSE",
            "EXIT STATUS",
            "EXAMPLES",
        ] {
            assert!(text.contains(line), "{name} lacks '{line}':\n{text}");
        }
    }
}

#[test]
fn pages_explain_in_prose_with_examples_and_exit_status() {
    if !have("man", "rendering the man pages (the man-db package)") {
        return;
    }
    let text = rendered("git-stella-read");
    assert!(
        text.contains("NAME\n       git-stella-read - Record that the session read these files")
    );
    assert!(
        squash(&text).contains(
            "Call it when the agent has read a file (an agent host does so after its Read tool)"
        ),
        "{text}"
    );
    assert!(text.contains("EXAMPLES\n           git stella read src/lib.rs src/main.rs"));
    assert!(text.contains("EXIT STATUS\n           0  recorded\n           2  an error"));
    let top = rendered("git-stella");
    for want in [
        "git-stella-guard(1)",
        "1  refused by a check",
        "STELLA_SESSION  the session to act on",
        "git stella write src/lib.rs <new.rs    # refused, exit 1",
    ] {
        assert!(top.contains(want), "git-stella(1) lacks '{want}':\n{top}");
    }
}

/// SPEC section 6: the man page of `checkpoint` warns what an artifact carries. The text lives in
/// the checkpoint command's own help (`after_long_help`, a `Contents warning:` section); this
/// holds from the moment the command exists.
#[test]
fn checkpoint_page_carries_the_contents_warning_when_the_command_exists() {
    if !have("man", "rendering the man pages (the man-db package)") {
        return;
    }
    let Some(raw) = page("git-stella-checkpoint") else {
        assert!(
            !docs::render_all()
                .iter()
                .any(|(p, _)| p.to_string_lossy().contains("checkpoint")),
            "a checkpoint page under another name"
        );
        return;
    };
    assert!(raw.contains(".SH \"CONTENTS WARNING\""), "{raw}");
    let text = squash(&rendered("git-stella-checkpoint"));
    for want in ["verbatim", "secrets", "does not encrypt", "0600"] {
        assert!(
            text.contains(want),
            "the checkpoint page lacks '{want}':\n{text}"
        );
    }
}

#[test]
fn every_page_says_its_own_name_and_exit_status() {
    let name_line = |p: &str| {
        let page = page(p).unwrap();
        let i = page.find(".SH NAME\n").unwrap() + ".SH NAME\n".len();
        page[i..].lines().next().unwrap().to_owned()
    };
    assert_ne!(
        name_line("git-stella-hooks-install"),
        name_line("git-stella-hooks-uninstall")
    );
    assert!(name_line("git-stella-hooks-uninstall").contains("Take Stella's hooks out"));
    let exit_status = |p: &str| {
        let page = page(p).unwrap();
        let i = page
            .find(".SH \"EXIT STATUS\"")
            .unwrap_or_else(|| panic!("{p}: no EXIT STATUS"));
        page[i..].split(".SH ").nth(1).unwrap().to_owned()
    };
    // A hook never exits 2 (hosts read it as "block"): its page must not promise 2.
    for p in [
        "git-stella-hook",
        "git-stella-hook-claude-code",
        "git-stella-hook-codex",
        "git-stella-hook-gemini",
        "git-stella-hook-cursor",
    ] {
        let status = exit_status(p);
        assert!(!status.contains("\n2 "), "{p}: {status}");
        assert!(status.contains("Never 2."), "{p}: {status}");
    }
    for p in [
        "git-stella-hooks-install",
        "git-stella-hooks-uninstall",
        "git-stella-mcp",
    ] {
        assert!(
            !exit_status(p).contains("refused by a check"),
            "{p}: the generic exit status"
        );
    }
}

#[test]
fn synopsis_names_the_values_and_every_json_option_its_object() {
    let synopsis = |p: &str| {
        let page = page(p).unwrap();
        let i = page.find(".SH SYNOPSIS\n").unwrap() + ".SH SYNOPSIS\n".len();
        page[i..].lines().next().unwrap().to_owned()
    };
    let log = synopsis("git-stella-log");
    for part in [
        r"[\fB\-C\fR \fIDIR\fR]",
        r"[\fB\-\-session\fR \fIID\fR]",
        r"[\fB\-n\fR|\fB\-\-max\-count\fR \fIN\fR]",
        r"[\fB\-\-date\fR \fIFORMAT\fR]",
        r"[\fIID\fR]",
    ] {
        assert!(log.contains(part), "{part} not in {log}");
    }
    assert!(synopsis("git-stella-read").contains(r"\fIPATH\fR..."));
    assert!(synopsis("git-stella-session").ends_with(r"\fICOMMAND\fR"));
    // Each --json option says the one object it prints.
    let root = repo_root().join("man");
    let mut pages_with_json = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        if text.contains(r"\fB\-\-json\fR") {
            pages_with_json += 1;
            assert!(text.contains("Print JSON: {"), "{text}");
        }
    }
    assert_eq!(pages_with_json, 16);
    // session show promises what it prints: counts, and where the files are listed.
    let show = page("git-stella-session-show").unwrap();
    assert!(show.contains("how many files it tracks"), "{show}");
}
