//! Output as git shows it: colour on a terminal only (and as `color.*`, `NO_COLOR` and `--color`
//! say), git's pager rules, `--date`, one JSON object per command, paths from the current folder.
//! A terminal is a real one: each command runs under `script`, which gives it a pseudo-terminal.
//!
//! Not per command: each checks a rule of output that every command follows, through several
//! commands at once.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

const ESC: &str = "\x1b[";

/// A session `s` that read `f` and `sub/g`, and a change to `f` by someone else; its write of
/// `f` refused.
fn world() -> World {
    let w = World::new();
    w.write("f", "one\n");
    w.write("sub/g", "two\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "f", "sub/g"]);
    w.write("f", "one\ntheirs\n");
    assert_eq!(
        code(&w.run_stdin(&["--session", "s", "write", "f"], b"mine\n")),
        1
    );
    w
}

/// Run git-stella with `args` on a terminal, in the repository with `env` added; what the
/// terminal showed.
fn on_tty(w: &World, args: &[&str], env: &[(&str, &str)]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut line = vec![quote(bin.to_str().unwrap())];
    line.extend(args.iter().map(|a| quote(a)));
    let mut cmd = Command::new("script");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    cmd.env("TERM", "xterm")
        .envs(env.iter().copied())
        .args(["-qec", &line.join(" "), "/dev/null"])
        .current_dir(&w.repo);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{:?}: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

#[test]
fn colour_only_on_a_terminal_and_as_config_and_no_color_say() {
    if !have("script", "a pseudo-terminal") {
        return skipped("script");
    }
    let w = world();
    // A pipe: plain text, whatever the command.
    for args in [
        &["--session", "s", "log"][..],
        &["--session", "s", "status"],
        &["--session", "s", "diff", "f"],
    ] {
        let out = w.ok(args);
        assert!(!out.contains(ESC), "{args:?}: {out:?}");
    }
    // A terminal: the commit id in yellow, the refusal in red, the states and the diff coloured.
    let log = on_tty(&w, &["--no-pager", "--session", "s", "log"], &[]);
    assert!(log.contains("\x1b[33m"), "{log:?}");
    assert!(log.contains("\x1b[31mrefused write f\x1b[m"), "{log:?}");
    let status = on_tty(&w, &["--session", "s", "status"], &[]);
    assert!(status.contains("\x1b[31mchanged\x1b[m    f"), "{status:?}");
    assert!(
        status.contains("\x1b[32munchanged\x1b[m  sub/g"),
        "{status:?}"
    );
    let diff = on_tty(&w, &["--no-pager", "--session", "s", "diff", "f"], &[]);
    assert!(diff.contains("\x1b[32m+theirs\x1b[m"), "{diff:?}");
    assert!(diff.contains("\x1b[36m@@"), "{diff:?}");
    // NO_COLOR, TERM=dumb and color.ui=never turn it off on a terminal.
    let plain = |env: &[(&str, &str)]| on_tty(&w, &["--no-pager", "--session", "s", "log"], env);
    assert!(!plain(&[("NO_COLOR", "1")]).contains(ESC));
    assert!(!plain(&[("TERM", "dumb")]).contains(ESC));
    w.git(&["config", "color.ui", "never"]);
    assert!(!plain(&[]).contains(ESC));
    // color.stella wins over color.ui; `always` colours a pipe too, even under NO_COLOR.
    w.git(&["config", "color.stella", "always"]);
    assert!(w.ok(&["--session", "s", "log"]).contains(ESC));
    // --color wins over both.
    assert!(
        !w.ok(&["--color", "never", "--session", "s", "log"])
            .contains(ESC)
    );
    w.git(&["config", "--unset", "color.stella"]);
    assert!(!w.ok(&["--session", "s", "log"]).contains(ESC));
    assert!(
        w.ok(&["--color=always", "--session", "s", "log"])
            .contains(ESC)
    );
    // `git -c` reaches it, as git passes it on to the commands it runs.
    let bin = assert_cmd::cargo::cargo_bin("git-stella");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let mut git = Command::new("git");
    clean_env(&mut git, &w.home, &w.stella_home);
    let out = git
        .env("PATH", path)
        .args([
            "-c",
            "color.stella=always",
            "stella",
            "--session",
            "s",
            "log",
        ])
        .current_dir(&w.repo)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(ESC));
    // JSON is never coloured.
    let json = w.ok(&["--color=always", "--session", "s", "log", "--json"]);
    assert!(!json.contains(ESC), "{json}");
}

#[test]
fn log_diff_and_recover_page_on_a_terminal_as_git_would() {
    if !have("script", "a pseudo-terminal") {
        return skipped("script");
    }
    let w = world();
    let paged = w.base().join("paged");
    let pager = format!("cat > '{}'; env >> '{}'", paged.display(), paged.display());
    let take = || {
        let text = std::fs::read_to_string(&paged).unwrap_or_default();
        let _ = std::fs::remove_file(&paged);
        text
    };
    w.git(&["config", "core.pager", &pager]);
    // log, diff and recover go to the pager, with git's LESS and LV.
    for (args, expect) in [
        (&["--session", "s", "log"][..], "refused write f"),
        (&["--session", "s", "diff", "f"], "+theirs"),
        (&["recover", "f"], "VERSION"),
    ] {
        let tty = on_tty(&w, args, &[]);
        let got = take();
        assert!(got.contains(expect), "{args:?} paged {got:?}");
        assert!(got.contains("LESS=FRX") && got.contains("LV=-c"), "{got}");
        assert!(
            !tty.contains(expect),
            "{args:?} reached the terminal: {tty:?}"
        );
        // Coloured, as git colours what it pages (color.pager).
        assert!(got.contains(ESC) || args[0] == "recover", "{got:?}");
    }
    // A person's LESS is kept.
    on_tty(&w, &["--session", "s", "log"], &[("LESS", "-R")]);
    assert!(take().contains("LESS=-R"));
    // --no-pager, pager.stella.log=false, GIT_PAGER=cat, and a pipe: no pager.
    let tty = on_tty(&w, &["--no-pager", "--session", "s", "log"], &[]);
    assert!(tty.contains("refused write f") && take().is_empty());
    on_tty(&w, &["--session", "s", "log"], &[("GIT_PAGER", "cat")]);
    assert!(take().is_empty());
    w.ok(&["--session", "s", "log"]);
    assert!(take().is_empty());
    w.git(&["config", "pager.stella.log", "false"]);
    let tty = on_tty(&w, &["--session", "s", "log"], &[]);
    assert!(tty.contains("refused write f") && take().is_empty());
    // GIT_PAGER wins over core.pager; pager.stella.<command> may name its own pager.
    let other = w.base().join("other");
    let other_pager = format!("cat > '{}'", other.display());
    on_tty(
        &w,
        &["--session", "s", "diff", "f"],
        &[("GIT_PAGER", &other_pager)],
    );
    assert!(std::fs::read_to_string(&other).unwrap().contains("+theirs"));
    assert!(take().is_empty());
    // status does not page unless asked to.
    on_tty(&w, &["--session", "s", "status"], &[]);
    assert!(take().is_empty());
    w.git(&["config", "pager.stella.status", &pager]);
    on_tty(&w, &["--session", "s", "status"], &[]);
    assert!(take().contains("changed"));
}

#[test]
fn log_session_list_and_show_print_dates_in_the_format_asked_for() {
    let w = world();
    let relative = w.ok(&["--session", "s", "log", "--date=relative", "-n", "1"]);
    assert!(
        relative.contains(" seconds ago refused") || relative.contains(" second ago refused"),
        "{relative}"
    );
    let unix = w.ok(&["--session", "s", "log", "--date", "unix", "-n", "1"]);
    let secs: i64 = unix.split(' ').nth(1).unwrap().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - secs).abs() < 600, "{unix}");
    let short = w.ok(&["session", "list", "--date=short"]);
    let day = short
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap();
    assert_eq!(day.len(), 10, "{short}");
    assert_eq!(&day[4..5], "-");
    // The default is what Stella always printed: ISO 8601, strict.
    let default = w.ok(&["session", "show", "s"]);
    assert!(default.contains("+00:00"), "{default}");
    // local is this machine's zone (TZ), as git's.
    let mut cmd = w.stella();
    cmd.env("TZ", "JST-9")
        .args(["--session", "s", "log", "--date=iso-local", "-n", "1"]);
    let out = cmd.output().unwrap();
    assert!(stdout(&out).contains(" +0900 "), "{}", stdout(&out));
    let out = w.run(&["--session", "s", "log", "--date=yesterday"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown date format 'yesterday' (one of: relative, local,"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn status_all_and_recover_print_dates_in_the_format_asked_for() {
    let w = world();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // Every command that prints a time takes it: status --all and recover too.
    let all = w.ok(&["status", "--all", "--date=unix"]);
    let secs: i64 = all
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!((now - secs).abs() < 600, "{all}");
    let versions = w.ok(&["recover", "f", "--date=relative"]);
    assert!(versions.contains(" ago"), "{versions}");
    w.write("blind", "a person's\n");
    w.ok(&["--session", "s", "rm", "blind"]);
    let kept = w.ok(&["recover", "--all", "--date=short"]);
    let day = kept
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    assert_eq!((day.len(), &day[4..5]), (10, "-"), "{kept}");
}

#[test]
fn inspect_session_drop_undrop_prune_and_gc_print_dates_in_the_format_asked_for() {
    let w = world();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // Inspect, session drop and undrop, prune and gc: each time in the format asked for.
    let artifact = w.base().join("s.stella");
    w.checkpoint_to("s", &artifact);
    let shown = w.ok(&["inspect", artifact.to_str().unwrap(), "--date=relative"]);
    assert!(
        shown.contains("started     ") && shown.contains(" ago"),
        "{shown}"
    );
    let unix_in = |text: &str| {
        text.split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse::<i64>().ok())
            .any(|n| (now - n).abs() < 600)
    };
    let out = w.run(&["session", "drop", "s", "--dry-run", "--date=unix"]);
    assert!(unix_in(&stdout(&out)), "{}", stdout(&out));
    let out = w.run(&["session", "drop", "s", "--date=unix"]);
    assert!(unix_in(&stderr(&out)), "{}", stderr(&out));
    let out = w.run(&["session", "undrop", "s", "--date=unix"]);
    assert!(unix_in(&stderr(&out)), "{}", stderr(&out));
    // Idle longer than no time at all: a second after its last step.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = w.run(&[
        "session",
        "prune",
        "--older-than",
        "0s",
        "--dry-run",
        "--date=unix",
    ]);
    assert!(unix_in(&stdout(&out)), "{}", stdout(&out));
    w.ok(&["session", "drop", "s"]);
    let out = w.run(&["gc", "--expire-dropped", "now", "--dry-run", "--date=unix"]);
    assert!(
        stdout(&out).starts_with("would forget dropped session s (dropped ")
            && unix_in(&stdout(&out)),
        "{}",
        stdout(&out)
    );
}

/// Parse `text` as exactly one JSON object on one line.
fn object(args: &[&str], text: &str) -> Value {
    assert_eq!(text.trim_end().lines().count(), 1, "{args:?}: {text}");
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"));
    assert!(v.is_object(), "{args:?}: {v}");
    v
}

#[test]
fn every_json_is_one_object_with_its_lists_inside() {
    let w = world();
    let bundle = w.base().join("s.stella.bundle");
    let bundle = bundle.to_str().unwrap();
    let json = |args: &[&str]| {
        let out = w.run(args);
        assert!(code(&out) <= 1, "{args:?}: {}", stderr(&out));
        object(args, &stdout(&out))
    };
    assert_eq!(
        json(&["--session", "s", "guard", "--json", "f"])["checks"][0]["decision"],
        "refuse"
    );
    assert_eq!(
        json(&["--session", "s", "status", "--json"])["files"][0]["state"],
        "changed"
    );
    assert_eq!(
        json(&["status", "--all", "--json"])["sessions"][0]["session"],
        "s"
    );
    assert_eq!(
        json(&["--session", "s", "log", "--json"])["steps"][0]["summary"],
        "refused write f"
    );
    let diff = json(&["--session", "s", "diff", "--json", "f", "sub/g"]);
    assert_eq!(diff["files"][0]["state"], "changed");
    assert!(
        diff["files"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+theirs")
    );
    assert_eq!(diff["files"][1]["state"], "unchanged");
    assert_eq!(
        json(&["session", "list", "--json"])["sessions"][0]["session"],
        "s"
    );
    assert_eq!(json(&["session", "show", "--json", "s"])["session"], "s");
    assert!(
        !json(&["recover", "--json", "f"])["versions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(json(&["doctor", "--json"])["findings"].is_array());
    assert!(json(&["--session", "s", "resume", "--json"]).is_object());
    let cp = json(&["--session", "s", "checkpoint", "--json", "-o", bundle]);
    assert_eq!(
        (cp["artifact"].as_str(), cp["file_count"].as_u64()),
        (Some(bundle), Some(2))
    );
    assert_eq!(json(&["inspect", "--json", bundle])["session"], "s");
    let verify = json(&["verify", "--json", bundle]);
    assert_eq!(verify["matches"], false);
    assert_eq!(
        verify["files"][0],
        serde_json::json!({"path": "f", "state": "changed"})
    );
    assert_eq!(verify["files"][1]["state"], "unchanged");
    // The artifact was made from the tree as it is: it matches, and replays.
    w.ok(&["--session", "s", "read", "f"]);
    w.ok(&["--session", "s", "checkpoint", "-q", "-o", bundle]);
    let replay = json(&["replay", "--json", "--as", "again", bundle]);
    assert_eq!(
        (replay["outcome"].as_str(), replay["session"].as_str()),
        (Some("started"), Some("again"))
    );
    assert_eq!(replay["from"]["session"], "s");
    assert_eq!(
        code(&w.run_stdin(&["--session", "s", "write", "f"], b"mine\n")),
        0
    );
    let undo = json(&["--session", "s", "undo", "--json"]);
    assert_eq!(undo["restored"][0]["path"], "f");
    let prune = json(&[
        "session",
        "prune",
        "--older-than",
        "1w",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(prune, serde_json::json!({"dry_run": true, "sessions": []}));
    let gc = json(&["gc", "--all", "--dry-run", "--json"]);
    assert!(gc["stores"].is_array() && gc["sessions"].is_array(), "{gc}");
    // The artifact cannot share stdout with JSON.
    let out = w.run(&["--session", "s", "checkpoint", "--json", "-o", "-"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("--json cannot share stdout"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn lists_show_paths_from_the_current_folder_and_json_from_the_root() {
    let w = world();
    let sub = w.repo.join("sub");
    let run = |dir: &Path, args: &[&str]| {
        let mut cmd = w.stella_in(dir);
        cmd.args(args);
        let out = cmd.output().unwrap();
        (stdout(&out), stderr(&out))
    };
    w.write("sub/g", "two\nmore\n");
    let (diff, _) = run(&sub, &["--session", "s", "diff", "g", "../f"]);
    assert!(diff.contains("+more") && diff.contains("+theirs"), "{diff}");
    let (_, err) = run(&sub, &["--session", "s", "diff", "nope"]);
    assert_eq!(err, "stella: 'nope' is not tracked by this session\n");
    let (json, _) = run(&sub, &["--session", "s", "diff", "--json", "g"]);
    assert_eq!(object(&[], &json)["files"][0]["path"], "sub/g");
    // undo names what it restored from here.
    w.ok(&["--session", "s", "read", "sub/g"]);
    let mut cmd = w.stella_in(&sub);
    cmd.args(["--session", "s", "write", "g"]);
    assert_eq!(code(&feed(cmd, b"new\n")), 0);
    let (undo, _) = run(&sub, &["--session", "s", "undo", "g"]);
    assert!(undo.starts_with("restored g (version "), "{undo}");
}

#[test]
fn checkpoint_replay_and_gc_show_progress_on_a_terminal_only() {
    if !have("script", "a pseudo-terminal") {
        return skipped("script");
    }
    let w = world();
    w.ok(&["--session", "s", "read", "f"]);
    let bundle = w.base().join("s.stella.bundle");
    let bundle = bundle.to_str().unwrap();
    // A terminal: git's own progress lines, then Stella's one-line summary.
    let tty = on_tty(&w, &["--session", "s", "checkpoint", "-o", bundle], &[]);
    assert!(tty.contains("Counting objects: 100%"), "{tty:?}");
    assert!(
        tty.contains("stella: checkpoint of session s: 2 files"),
        "{tty:?}"
    );
    let tty = on_tty(&w, &["replay", "--as", "again", bundle], &[]);
    assert!(tty.contains("Receiving objects: 100%"), "{tty:?}");
    assert!(
        tty.contains("stella: replayed session s as again: 2 files guarded"),
        "{tty:?}"
    );
    let tty = on_tty(&w, &["gc"], &[]);
    assert!(tty.contains("objects: 100%"), "{tty:?}");
    assert!(tty.contains("stella: store repacked"), "{tty:?}");
    // -q on a terminal, and any pipe: no progress.
    let quiet = on_tty(
        &w,
        &["-q", "--session", "s", "checkpoint", "-o", bundle],
        &[],
    );
    assert_eq!(quiet.trim(), bundle, "{quiet:?}");
    let out = w.run(&["--session", "s", "checkpoint", "-o", bundle]);
    assert!(!stderr(&out).contains("objects:"), "{}", stderr(&out));
    let out = w.run(&["replay", "--as", "again-2", bundle]);
    assert!(!stderr(&out).contains("objects:"), "{}", stderr(&out));
    let out = w.run(&["gc"]);
    assert_eq!(stderr(&out), "stella: store repacked\n");
}

#[test]
fn a_refusal_is_coloured_as_git_colours_a_diff_and_only_where_colour_is_on() {
    let w = World::new();
    w.write("f", "alpha\nbeta\n");
    w.ok(&["session", "start", "--id", "s"]);
    w.ok(&["--session", "s", "read", "f"]);
    w.write("f", "alpha\nbetamax\n");
    // Into a pipe: plain text, as a script greps it.
    let plain = w.run_stdin(&["--session", "s", "write", "f"], b"x\n");
    assert_eq!(code(&plain), 1);
    assert!(!stderr(&plain).contains('\x1b'), "{}", stderr(&plain));
    // Asked for: the first line red, the diff as git diff colours it, the same words.
    let out = w.run_stdin(&["--color=always", "--session", "s", "write", "f"], b"x\n");
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(
        err.starts_with("\x1b[31mrefusing to write: f\x1b[m\n"),
        "{err:?}"
    );
    assert!(err.contains("\x1b[31m-beta\x1b[m\n"), "{err:?}");
    assert!(err.contains("\x1b[32m+betamax\x1b[m"), "{err:?}");
    assert!(err.contains("\x1b[36m@@ "), "{err:?}");
    let stripped = err
        .replace("\x1b[31m", "")
        .replace("\x1b[32m", "")
        .replace("\x1b[36m", "")
        .replace("\x1b[1m", "")
        .replace("\x1b[m", "");
    assert_eq!(stripped, stderr(&plain));
}

#[test]
fn warnings_into_a_pipe_carry_no_colour_codes() {
    let w = World::new();
    let s = session(&w);
    w.write("a", "a\n");
    // A ref lock left by a killed writer: the next writer removes it, with a warning.
    let lock = w.store().join("refs/stella/sessions/s.lock");
    std::fs::write(&lock, "").unwrap();
    let out = w.run(&["--session", &s, "read", "a"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("removed a stale lock"), "{err}");
    assert!(!err.contains('\x1b'), "{err:?}");
}
