//! `git stella session`: ids checked up front, `list`, `drop` kept for `undrop` until `gc`
//! expires it, and `prune` by age.

use std::time::Duration;

use crate::common::*;

#[test]
fn session_ids_are_validated_and_unknown_ones_get_a_hint() {
    let w = World::new();
    for bad in ["../x", ".hidden", "a.lock", "a..b", "-x"] {
        let out = w.run(&["session", "start", &format!("--id={bad}")]);
        assert_eq!(code(&out), 2, "{bad}");
        assert!(
            stderr(&out).contains("is not a valid session id"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(w.ok(&["session", "start", "--id", "agent-1"]), "agent-1");
    let out = w.run(&["session", "start", "--id", "agent-1"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: a session 'agent-1' already exists in this workspace\nhint: use it with '--session agent-1' or STELLA_SESSION=agent-1\n"
    );
    w.write("a.txt", "a");
    let out = w.run(&["--session", "nope", "read", "a.txt"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: no session 'nope' in this workspace\nhint: start a session with 'git stella session start', or list them with 'git stella session list'\n"
    );
}

#[test]
fn a_drop_is_previewed_kept_for_undrop_and_forgotten_when_gc_expires_it() {
    let w = World::new();
    let s = w.start();
    w.write("a.txt", "a\n");
    w.ok(&["--session", &s, "read", "a.txt"]);
    w.write("a.txt", "someone's\n");
    let stale = |w: &World| code(&w.run_stdin(&["--session", &s, "write", "a.txt"], b"mine\n"));
    assert_eq!(stale(&w), 1);
    let store = w.store();
    let out = w.run(&["session", "drop"]);
    assert_eq!(code(&out), 2, "drop without an id drops nothing");

    // A preview changes nothing.
    let out = w.run(&["session", "drop", &s, "--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!(
            "would drop session {s} (3 steps, 1 file tracked, 0 of them written by it; last step "
        )),
        "{}",
        stdout(&out)
    );
    assert_eq!(stale(&w), 1);

    // Dropped: gone from the list and from the guard, its reflog with it; kept aside.
    let out = w.run(&["session", "drop", &s]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("'git stella session undrop {s}' brings it back")),
        "{}",
        stderr(&out)
    );
    assert!(!store.join("logs/refs/stella/sessions").join(&s).exists());
    assert_eq!(w.ok(&["session", "list"]), "");
    assert_eq!(code(&w.run(&["session", "drop", &s])), 2);
    let dropped = w.ok(&["session", "list", "--dropped"]);
    assert!(dropped.lines().nth(1).unwrap().starts_with(&s), "{dropped}");

    // A session started under the id is a new one; undrop will not replace it.
    w.ok(&["session", "start", "--id", &s]);
    let out = w.run(&["session", "undrop", &s]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    w.ok(&["session", "drop", &s]);

    // gc with its usual expiry keeps both drops; undrop brings back the last one dropped.
    w.ok(&["gc", "--grace", "0"]);
    let out = w.run(&["session", "list", "--dropped", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let steps: Vec<_> = list["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["step_count"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [1, 4], "{list}");
    w.ok(&["session", "undrop", &s]);
    assert_eq!(w.steps(&s), 1);
    w.ok(&["session", "drop", &s]);
    let out = w.run(&["gc", "--expire-dropped", "now", "--grace", "0", "--dry-run"]);
    assert_eq!(
        stdout(&out).matches("would forget dropped session").count(),
        2
    );
    assert_eq!(w.ok(&["session", "list", "--dropped"]).lines().count(), 3);

    // Forgotten when gc expires it: nothing left, and undrop says so.
    w.ok(&["gc", "--expire-dropped", "now", "--grace", "0"]);
    let count = w.store_git(&["count-objects", "-v"]);
    assert!(
        count.starts_with("count: 0\n") && count.contains("\nin-pack: 0\n"),
        "{count}"
    );
    let out = w.run(&["session", "undrop", &s]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("'git stella session list --dropped'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn undrop_brings_a_session_back_exactly_as_it_was() {
    let w = World::new();
    let s = w.start();
    w.write("a.txt", "a\n");
    w.write("b.txt", "b\n");
    w.ok(&["--session", &s, "read", "a.txt", "b.txt"]);
    w.ok_stdin(&["--session", &s, "write", "b.txt"], b"mine\n");
    w.write("a.txt", "someone's\n");
    let log = w.ok(&["log", &s]);
    let status = w.ok(&["--session", &s, "status"]);
    w.ok(&["session", "drop", &s]);
    w.ok(&["gc", "--grace", "0"]);
    let out = w.run(&["session", "undrop", &s]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "brought back session {s} (3 steps, 2 files tracked;"
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(w.ok(&["log", &s]), log);
    assert_eq!(w.ok(&["--session", &s, "status"]), status);
    // It guards what it guarded: its stale write is refused, and its own work is protected
    // from a session that never read it.
    let out = w.run_stdin(&["--session", &s, "write", "a.txt"], b"stale\n");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let other = w.start();
    let out = w.run_stdin(&["--session", &other, "write", "b.txt"], b"blind\n");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(w.read("b.txt"), "mine\n");
    assert!(w.ok(&["session", "list", "--dropped"]).is_empty());
}

#[test]
fn session_prune_drops_what_is_idle_longer_and_a_dry_run_only_lists_it() {
    let w = World::new();
    two_sessions_apart(&w, Duration::from_millis(3100));
    let out = w.run(&["session", "prune", "--older-than", "2s", "--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("would drop session old (last step "),
        "{}",
        stdout(&out)
    );
    assert_eq!(stdout(&out).lines().count(), 1);
    assert_eq!(sessions(&w), ["new", "old"]);
    // What the shell guard kept of each session's files goes with the session; its mark in the
    // workspace stays, so that an agent coming back to it reads its files again first.
    let private = w.repo.join(".stella/private");
    let kept = |id: &str| private.join("exec").join(format!("{id}.signatures"));
    std::fs::create_dir_all(private.join("exec")).unwrap();
    for id in ["old", "new"] {
        std::fs::write(kept(id), "a cache").unwrap();
    }
    assert!(private.join("sessions/old").exists());
    let out = w.run(&["session", "prune", "--older-than", "2s"]);
    assert!(
        stdout(&out).starts_with("dropped session old (last step "),
        "{}",
        stdout(&out)
    );
    assert_eq!(sessions(&w), ["new"]);
    assert!(!kept("old").exists() && kept("new").exists());
    assert!(private.join("sessions/old").exists());
    let out = w.run(&["session", "prune", "--older-than", "1w"]);
    assert_eq!(
        (code(&out), stdout(&out), stderr(&out)),
        (0, String::new(), "no session is idle that long\n".into())
    );
    let out = w.run(&["session", "prune", "--older-than", "30 days"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("'30 days' is not a duration"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn session_list_fits_long_ids_names_every_column_and_puts_the_latest_first() {
    let w = World::new();
    let empty = w.run(&["session", "list"]);
    assert_eq!(code(&empty), 0);
    assert_eq!(stdout(&empty), "");
    assert_eq!(
        stderr(&empty),
        "no sessions in this workspace ('git stella session start' starts one)\n"
    );
    let long = "e6c55faa-d7b7-44f5-8458-fd227d2da938";
    w.ok(&["session", "start", "--id", long]);
    w.ok(&["session", "start", "--id", "b"]);
    // b acts last: it is listed first.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    w.write("f", "x\n");
    w.ok(&["--session", "b", "read", "f"]);
    let list = w.ok(&["session", "list"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["ID", "STARTED", "STEPS", "TRACKED", "ORIGIN"]
    );
    assert!(lines[1].starts_with("b  "), "{list}");
    assert!(lines[2].starts_with(&format!("{long}  ")), "{list}");
    // Every column starts at the same place on every line.
    let started = lines[0].find("STARTED").unwrap();
    assert!(
        lines[1..].iter().all(|l| l[started..].starts_with("2")),
        "{list}"
    );
}

#[test]
fn a_session_id_ending_in_a_dot_is_refused_up_front() {
    let w = World::new();
    let out = w.run(&["session", "start", "--id", "a."]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: 'a.' is not a valid session id: it must not end in '.'\n"
    );
}
