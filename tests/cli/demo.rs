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
fn sh_blocks(file: &str, heading: Option<&str>) -> String {
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
        .unwrap();
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
