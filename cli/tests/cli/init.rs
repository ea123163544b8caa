//! `git stella init` and the workspace identity it prints: ignore rules, copies, moves, symlinks,
//! worktrees, a work tree set by the environment or the config, corrupt state.

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
