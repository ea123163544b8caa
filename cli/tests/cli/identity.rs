//! Workspace identity: init, ignore rules, copies, moves, symlinks, worktrees, corrupt state.

use crate::common::*;

#[test]
fn init_is_idempotent_and_private_state_is_ignored_by_git() {
    let w = World::new();
    let id = w.ok(&["init"]);
    assert_eq!(id.len(), 32);
    assert_eq!(w.ok(&["init"]), id);
    // No .gitignore in the repository: the folder carries its own.
    assert!(!w.repo.join(".gitignore").exists());
    assert_eq!(
        w.git(&["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(w.repo.join(".stella/private/.gitignore")).unwrap(),
        "*\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&w.stella_home)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn outside_a_repository_is_an_error() {
    let w = World::new();
    let out = w.stella_in(&w.home).args(["init"]).output().unwrap();
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).starts_with(&format!(
            "error: not a git repository (or any of the parent directories): {}\n",
            w.home.display()
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_copy_gets_a_fresh_id_and_none_of_the_sessions() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let s = w.start();
    let copy = w.base().join("copy");
    let status = std::process::Command::new("cp")
        .args(["-a"])
        .arg(&w.repo)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());

    let out = w.stella_in(&copy).args(["init"]).output().unwrap();
    assert!(out.status.success());
    let copy_id = stdout(&out).trim().to_owned();
    assert_ne!(copy_id, id);
    assert_eq!(
        stderr(&out),
        format!(
            "stella: this checkout is a copy of '{}': it gets its own workspace id and starts with no sessions\n",
            w.repo.display()
        )
    );
    let copy_sessions = w
        .stella_in(&copy)
        .args(["session", "list"])
        .output()
        .unwrap();
    assert_eq!(stdout(&copy_sessions), "");
    // The original keeps its id and its session; the copy is stable from now on.
    assert_eq!(w.ok(&["init"]), id);
    assert!(w.ok(&["session", "list"]).contains(&s));
    let again = w.stella_in(&copy).args(["init"]).output().unwrap();
    assert_eq!(stdout(&again).trim(), copy_id);
    assert_eq!(stderr(&again), "");
}

#[test]
fn a_move_keeps_id_and_sessions() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let s = w.start();
    let moved = w.base().join("moved");
    std::fs::rename(&w.repo, &moved).unwrap();
    let out = w.stella_in(&moved).args(["init"]).output().unwrap();
    assert_eq!(stdout(&out).trim(), id);
    assert_eq!(stderr(&out), "");
    let list = w
        .stella_in(&moved)
        .args(["session", "list"])
        .output()
        .unwrap();
    assert!(stdout(&list).contains(&s));
}

#[test]
fn a_symlinked_path_is_the_same_workspace() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let link = w.base().join("link");
    std::os::unix::fs::symlink(&w.repo, &link).unwrap();
    let out = w.stella_in(&link).args(["init"]).output().unwrap();
    assert_eq!(stdout(&out).trim(), id);
    assert_eq!(stderr(&out), "");
}

#[test]
fn two_worktrees_are_two_workspaces() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let wt = w.base().join("wt");
    w.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);
    let other = w.stella_in(&wt).args(["init"]).output().unwrap();
    assert!(other.status.success());
    assert_ne!(stdout(&other).trim(), id);
    assert_eq!(stderr(&other), "");
    // Sub-folders of a worktree belong to it.
    std::fs::create_dir_all(wt.join("sub")).unwrap();
    let sub = w
        .stella_in(&wt.join("sub"))
        .args(["init"])
        .output()
        .unwrap();
    assert_eq!(stdout(&sub), stdout(&other));
}

#[test]
fn git_dir_and_work_tree_from_the_environment_are_honoured() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let out = w
        .stella_in(&w.home)
        .env("GIT_DIR", w.repo.join(".git"))
        .env("GIT_WORK_TREE", &w.repo)
        .args(["init"])
        .output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), id, "{}", stderr(&out));
}

#[test]
fn a_work_tree_set_in_the_repository_config_is_honoured() {
    let w = World::new();
    let elsewhere = w.base().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    w.git(&["config", "core.worktree", elsewhere.to_str().unwrap()]);
    // git itself, run in the folder that holds .git, now works on `elsewhere`.
    assert_eq!(
        w.git(&["rev-parse", "--show-toplevel"]).trim(),
        elsewhere.to_str().unwrap()
    );
    std::fs::write(elsewhere.join("notes.txt"), "alpha\n").unwrap();
    let s = w.start();
    w.ok(&[
        "--session",
        &s,
        "read",
        &elsewhere.join("notes.txt").to_string_lossy(),
    ]);
    assert!(elsewhere.join(".stella/private/workspace.toml").is_file());
    assert!(!w.repo.join(".stella").exists());
    assert_eq!(w.ok(&["--session", &s, "status"]), "unchanged  notes.txt");
}

#[test]
fn a_removed_private_folder_adopts_the_id_again() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let s = w.start();
    w.git(&["clean", "-q", "-fdx"]);
    assert!(!w.repo.join(".stella").exists());
    let out = w.run(&["init"]);
    assert_eq!(stdout(&out).trim(), id);
    assert_eq!(
        stderr(&out),
        format!(
            "stella: '.stella/private' was missing; adopted this checkout's workspace id {id} again, with its sessions\n"
        )
    );
    assert!(w.ok(&["session", "list"]).contains(&s));
}

#[test]
fn a_corrupt_id_file_names_the_file_and_the_fix() {
    let w = World::new();
    w.ok(&["init"]);
    let file = w.repo.join(".stella/private/workspace.toml");
    std::fs::write(&file, "id = \"../../etc\"\n").unwrap();
    let out = w.run(&["session", "list"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: '{f}' is corrupt: '../../etc' is not a valid workspace id: it must be 32 lowercase hex characters\n\
             hint: remove '{f}' and run 'git stella init': the workspace id is adopted again from Stella's data dir\n",
            f = file.display()
        )
    );
    std::fs::write(&file, [0xff, 0xfe]).unwrap();
    let out = w.run(&["init"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("is corrupt: it is not UTF-8"));
    // The fix works.
    std::fs::remove_file(&file).unwrap();
    assert!(w.run(&["init"]).status.success());
}

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
fn a_bind_mount_of_the_same_folder_is_the_same_workspace() {
    let w = World::new();
    let id = w.ok(&["init"]);
    let probe = std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must be able to bind-mount in a user namespace"
        );
        crate::common::skipped("this machine cannot unshare a mount namespace");
        return;
    }
    let mnt = w.base().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let exe = assert_cmd::cargo::cargo_bin("git-stella");
    let mut cmd = std::process::Command::new("unshare");
    clean_env(&mut cmd, &w.home, &w.stella_home);
    let out = cmd
        .args([
            "-rm",
            "sh",
            "-c",
            "mount --bind \"$1\" \"$2\" && cd \"$2\" && \"$3\" init && \"$3\" session list",
            "sh",
        ])
        .arg(&w.repo)
        .arg(&mnt)
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().next(), Some(id.as_str()));
    assert_eq!(
        stderr(&out),
        "no sessions in this workspace ('git stella session start' starts one)\n",
        "no copy notice for the same folder"
    );
    // The original path keeps the same id too.
    assert_eq!(w.ok(&["init"]), id);
}
