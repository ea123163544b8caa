//! `git stella show`: a session's timeline as text and as one HTML page, the page checked in a
//! real browser (headless Chromium) as well as byte by byte.

use std::process::Command;

use crate::common::*;

/// The file whose name is markup: it must come out as text, never as an element.
const HOSTILE: &str = "<b>x</b>.txt";

/// Two sessions in one repository: `a` reads three files inside a turn, has a write refused
/// because `b` changed one of them meanwhile, deletes one, re-reads and writes; then a person
/// edits the file and `b`'s next write is refused too. The turn's id.
fn two_sessions(w: &World) -> String {
    w.write("notes.txt", "alpha\nbeta\ngamma\n");
    w.write("old.txt", "old\n");
    w.write(HOSTILE, "bold\n");
    w.ok(&["session", "start", "--id", "a"]);
    w.ok(&["session", "start", "--id", "b"]);
    let turn = w.ok(&["--session", "a", "turn", "begin"]);
    w.ok(&["--session", "a", "read", "notes.txt", "old.txt", HOSTILE]);
    w.ok(&["--session", "b", "read", "notes.txt"]);
    w.ok_stdin(
        &["--session", "b", "write", "notes.txt"],
        b"alpha\nbetamax\ngamma\n",
    );
    let refused = w.run_stdin(
        &["--session", "a", "write", "notes.txt"],
        b"alpha\nBETA\ngamma\n",
    );
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    w.ok(&["--session", "a", "rm", "old.txt"]);
    w.ok(&["--session", "a", "read", "notes.txt"]);
    w.ok_stdin(&["--session", "a", "write", HOSTILE], b"plain\n");
    w.ok(&["--session", "a", "turn", "end"]);
    w.write("notes.txt", "by a person\n");
    let refused = w.run_stdin(&["--session", "b", "write", "notes.txt"], b"by b\n");
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    turn
}

/// `text` with every run of ten digits (a Unix time) written as ten `T`s, widths kept.
fn untimed(text: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for c in text.chars().chain(std::iter::once('\n')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if digits.len() == 10 {
            out.push_str("TTTTTTTTTT");
        } else {
            out.push_str(&digits);
        }
        digits.clear();
        out.push(c);
    }
    out.pop();
    out
}

#[test]
fn the_text_names_every_step_its_paths_and_the_refusal_with_its_diff() {
    let w = World::new();
    let turn = two_sessions(&w);
    let seen = &b3(b"alpha\nbeta\ngamma\n")[..12];
    let found = &b3(b"alpha\nbetamax\ngamma\n")[..12];
    let shown = untimed(&w.ok(&["show", "a", "--date=unix"]));
    assert_eq!(
        shown,
        format!(
            "\
session   a
started   TTTTTTTTTT
steps     8, 1 refused, 1 turn

TTTTTTTTTT   start       session start
TTTTTTTTTT   turn begin  turn begin {turn}
TTTTTTTTTT | read        read 3 paths: notes.txt, old.txt, <b>x</b>.txt
           |             read    <b>x</b>.txt
           |             read    notes.txt
           |             read    old.txt
TTTTTTTTTT | refused     refused write notes.txt
           |             refused write notes.txt: seen {seen}, found {found}, written by session b at TTTTTTTTTT
           |             --- notes.txt (seen by this session)
           |             +++ notes.txt (on disk now)
           |             @@ -1,3 +1,3 @@
           |              alpha
           |             -beta
           |             +betamax
           |              gamma
TTTTTTTTTT | delete      rm old.txt
           |             deleted old.txt
TTTTTTTTTT | read        read notes.txt
           |             read    notes.txt
TTTTTTTTTT | write       write <b>x</b>.txt
           |             wrote   <b>x</b>.txt
TTTTTTTTTT   turn end    turn end {turn}"
        )
    );
    // The other session's timeline is its own; the bytes a person wrote were never kept, so its
    // refusal says why it shows no diff.
    let found = &b3(b"by a person\n")[..12];
    let seen = &b3(b"alpha\nbetamax\ngamma\n")[..12];
    assert_eq!(
        untimed(&w.ok(&["--session", "b", "show", "--date=unix"])),
        format!(
            "\
session   b
started   TTTTTTTTTT
steps     4, 1 refused, 0 turns

TTTTTTTTTT start    session start
TTTTTTTTTT read     read notes.txt
                    read    notes.txt
TTTTTTTTTT write    write notes.txt
                    wrote   notes.txt
TTTTTTTTTT refused  refused write notes.txt
                    refused write notes.txt: seen {seen}, found {found}
                    (no diff: no session of this workspace kept the bytes found)"
        )
    );
}

#[test]
fn show_needs_a_session_it_knows() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "a"]);
    let out = w.run(&["show"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: no session given\nhint: pass '--session ID' or set STELLA_SESSION; 'git stella session start' starts one\n"
    );
    let out = w.run(&["show", "nosuch", "--html"]);
    assert_eq!(code(&out), 2);
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).starts_with("error: no session 'nosuch' in this workspace\n"),
        "{}",
        stderr(&out)
    );
}

/// Every start tag of a serialised document, as (name, attributes): text and attribute values
/// are skipped, so markup that is only text (escaped) is never taken for a tag.
fn start_tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut tags = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        if rest.starts_with('/') || rest.starts_with('!') {
            rest = &rest[rest.find('>').unwrap() + 1..];
            continue;
        }
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap();
        let name = rest[..name_end].to_ascii_lowercase();
        rest = &rest[name_end..];
        let mut attrs = Vec::new();
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
            if let Some(after) = rest.strip_prefix('>') {
                rest = after;
                break;
            }
            let key_end = rest.find(['=', '>', ' ', '\n']).unwrap();
            let key = rest[..key_end].to_owned();
            rest = &rest[key_end..];
            let value = match rest.strip_prefix("=\"") {
                Some(after) => {
                    let end = after.find('"').unwrap();
                    rest = &after[end + 1..];
                    after[..end].to_owned()
                }
                None => String::new(),
            };
            attrs.push((key, value));
        }
        // Raw text elements: their content is not markup.
        if name == "style" || name == "script" {
            rest = &rest[rest.find("</").unwrap()..];
        }
        tags.push((name, attrs));
    }
    tags
}

fn attr<'a>(tag: &'a (String, Vec<(String, String)>), key: &str) -> Option<&'a str> {
    tag.1
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What the page must hold, whether read as bytes or as a browser's DOM: one step element per
/// step, one of them the refusal with its path and diff, the hostile name as text only.
fn check_page(html: &str, steps: usize, what: &str) {
    let tags = start_tags(html);
    let step_tags: Vec<_> = tags
        .iter()
        .filter(|t| t.0 == "li" && attr(t, "class").is_some_and(|c| c.starts_with("step ")))
        .collect();
    assert_eq!(step_tags.len(), steps, "{what}: the steps");
    let refused: Vec<_> = step_tags
        .iter()
        .filter(|t| attr(t, "class") == Some("step refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{what}: one refused step");
    let refusal = tags
        .iter()
        .find(|t| attr(t, "class") == Some("refusal"))
        .unwrap_or_else(|| panic!("{what}: no refusal"));
    assert_eq!(attr(refusal, "data-path"), Some("notes.txt"), "{what}");
    assert_eq!(attr(refusal, "data-intent"), Some("write"), "{what}");
    for line in [
        "<span class=\"del\">-beta</span>",
        "<span class=\"add\">+betamax</span>",
        "<span class=\"meta\">--- notes.txt (seen by this session)</span>",
    ] {
        assert!(html.contains(line), "{what}: no {line}");
    }
    // The hostile name is text in its <code> and a value in data-path; never an element.
    assert!(
        !tags.iter().any(|t| t.0 == "b" || t.0 == "script"),
        "{what}: markup from the journal became an element"
    );
    assert!(
        html.contains("<code>&lt;b&gt;x&lt;/b&gt;.txt</code>"),
        "{what}: the hostile name is not shown as text"
    );
    let hostile_paths = tags
        .iter()
        .filter(|t| attr(t, "data-path").is_some_and(|p| p.contains("x&lt;/b&gt;") || p == HOSTILE))
        .count();
    assert_eq!(
        hostile_paths, 2,
        "{what}: the read and the write of the hostile name"
    );
    // The turn groups the steps taken inside it.
    assert_eq!(
        tags.iter()
            .filter(|t| attr(t, "class") == Some("turn"))
            .count(),
        1,
        "{what}: one turn"
    );
}

#[test]
fn the_page_is_one_self_contained_file_that_a_browser_renders() {
    let w = World::new();
    two_sessions(&w);
    let out = w.run(&["show", "a", "--html"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let html = stdout(&out);
    let steps = w.steps("a");
    assert_eq!(steps, 8);
    assert!(html.starts_with("<!DOCTYPE html>\n"));
    // Nothing to load: no address, no script, no external style, no image.
    let markup = html.replace("</", "<");
    for banned in [
        "http:", "https:", "//", "<script", "<link", "<img", "src=", "url(",
    ] {
        assert!(!markup.contains(banned), "the page holds {banned}");
    }
    assert!(
        html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\""),
        "the page forbids itself every load"
    );
    // As bytes: the hostile name escaped in text and in attributes alike.
    assert!(!html.contains(HOSTILE));
    assert!(html.contains("data-path=\"&lt;b&gt;x&lt;/b&gt;.txt\""));
    check_page(&html, steps, "the page");

    if !have(
        "chromium",
        "rendering 'git stella show --html' in a browser",
    ) {
        return;
    }
    let page = w.base().join("session a.html");
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}", page.display()).replace(' ', "%20");
    let dom = chromium(&w, &["--dump-dom", &url]);
    assert!(dom.status.success(), "{}", stderr(&dom));
    let dom = stdout(&dom);
    check_page(&dom, steps, "the rendered DOM");

    let shots = repo_root().join("target/show-html");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("session.png");
    let _ = std::fs::remove_file(&png);
    let shot = chromium(
        &w,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,1600",
            &url,
        ],
    );
    assert!(shot.status.success(), "{}", stderr(&shot));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // A blank 1200x1600 page compresses to a few kilobytes; the timeline is far more.
    assert!(
        bytes.len() > 20_000,
        "a screenshot of {} bytes",
        bytes.len()
    );
}

/// Headless Chromium on `args`, with a fresh profile, nothing from the environment but `PATH`
/// and the world's `HOME`, and every feature that would reach the network turned off.
fn chromium(w: &World, args: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir_in(w.base()).unwrap();
    let mut cmd = Command::new("chromium");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &w.home)
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args);
    run_bounded(&mut cmd, std::time::Duration::from_secs(120))
}
