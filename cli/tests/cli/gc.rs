//! `git stella gc`: data that does not pile up, sessions expired by the project's `[retention]`
//! setting and the stores of checkouts that are gone removed by `gc --all`, each listed by a dry run
//! first.

use std::time::Duration;

use crate::common::*;

#[test]
fn gc_applies_the_projects_retention_setting() {
    let w = World::new();
    two_sessions_apart(&w, Duration::from_millis(3100));
    w.write(
        ".stella/config.toml",
        "[retention]\nsessions-older-than = \"2s\"\n",
    );
    let out = w.run(&["gc", "--dry-run"]);
    assert!(
        stdout(&out).starts_with("would drop session old"),
        "{}",
        stdout(&out)
    );
    assert_eq!(sessions(&w), ["new", "old"]);
    let out = w.run(&["gc"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("dropped session old"),
        "{}",
        stdout(&out)
    );
    assert_eq!(sessions(&w), ["new"]);
    // A setting nobody can read stops gc rather than dropping anything.
    w.write(
        ".stella/config.toml",
        "[retention]\nsessions-older-than = \"soon\"\n",
    );
    let out = w.run(&["gc"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("'soon' is not a duration"),
        "{}",
        stderr(&out)
    );
    assert_eq!(sessions(&w), ["new"]);
}

#[test]
fn gc_all_removes_the_stores_of_checkouts_that_are_gone_after_a_dry_run() {
    let w = World::new();
    w.ok(&["session", "start", "--id", "here"]);
    // A second checkout with its own store, then deleted.
    let gone = w.base().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    git_in(&gone, &w.home, &["init", "-q"]);
    let mut cmd = w.stella_in(&gone);
    cmd.args(["session", "start", "--id", "there"]);
    assert!(cmd.output().unwrap().status.success());
    let workspaces = w.stella_home.join("workspaces");
    let count = || std::fs::read_dir(&workspaces).unwrap().count();
    assert_eq!(count(), 2);
    std::fs::remove_dir_all(&gone).unwrap();

    // This checkout lost only its .stella/private (a git clean -fdx): its store stays.
    std::fs::remove_dir_all(w.repo.join(".stella/private")).unwrap();
    let out = w.run(&["gc", "--all", "--dry-run"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.starts_with(&format!("would remove the store of {} (", gone.display()))
            && said.trim_end().ends_with("its checkout no longer exists"),
        "{said}"
    );
    assert_eq!(count(), 2);
    let out = w.run(&["gc", "--all"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("removed the store of "),
        "{}",
        stdout(&out)
    );
    assert_eq!(count(), 1);
    // This checkout's store and session are untouched; outside any repository it works too.
    assert_eq!(sessions(&w), ["here"]);
    let mut cmd = w.stella_in(&w.base());
    cmd.args(["gc", "--all"]);
    let out = cmd.output().unwrap();
    assert_eq!(
        (code(&out), stdout(&out)),
        (0, String::new()),
        "{}",
        stderr(&out)
    );
}

#[test]
fn packs_piled_up_in_the_store_are_consolidated_when_a_session_starts() {
    piled_packs_consolidated(World::new(), None);
}

#[test]
fn a_git_without_geometric_repack_consolidates_piled_up_packs_with_gc() {
    // git before 2.33: `repack --geometric` is an unknown option (usage, exit 129).
    let w = World::new();
    let bin = w.base().join("old-git");
    std::fs::create_dir_all(&bin).unwrap();
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let shim = bin.join("git");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh
for a in \"$@\"; do
  case \"$a\" in --geometric*) echo \"error: unknown option '${{a#--}}'\" >&2; exit 129;; esac
done
exec {} \"$@\"
",
            real.trim()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&shim).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&shim, perms).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    piled_packs_consolidated(w, Some(path));
}

/// 51 packs piled up in the store (as commands recorded in bulk leave them) are consolidated by
/// the next `session start`, run with `path` as its `PATH` when given, and nothing is lost.
fn piled_packs_consolidated(w: World, path: Option<String>) {
    w.ok(&["session", "start", "--id", "first"]);
    let store = w.store();
    let packs = || {
        std::fs::read_dir(store.join("objects/pack"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".pack")
            })
            .count()
    };
    let before = packs();
    // Commands recorded in bulk leave a pack a step and no loose object: 51 packs more, made
    // with stock git, one object each (and its loose copy, a handful: not git's loose limit).
    let git = |args: &[&str], stdin: &str| {
        let mut cmd = std::process::Command::new("git");
        clean_env(&mut cmd, &w.home, &w.home.join("unused"));
        cmd.arg("--git-dir").arg(&store).args(args);
        let out = feed(cmd, stdin.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).trim().to_owned()
    };
    let prefix = store.join("objects/pack/pack");
    let mut ids = Vec::new();
    for i in 0..51 {
        let id = git(&["hash-object", "-w", "--stdin"], &format!("piled {i}\n"));
        git(&["pack-objects", "-q", prefix.to_str().unwrap()], &id);
        ids.push(id);
    }
    assert_eq!(packs(), before + 51);
    // The next session start rolls them into one (past 50 packs).
    let mut start = w.stella_in(&w.repo);
    start.args(["session", "start", "--id", "second"]);
    if let Some(path) = &path {
        start.env("PATH", path);
    }
    let out = start.output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(packs() <= 2, "{} packs left", packs());
    // Nothing lost: every object still there, the store whole, both sessions as they were.
    for id in &ids {
        assert_eq!(git(&["cat-file", "-t", id], ""), "blob");
    }
    git(&["fsck", "--no-progress", "--no-dangling"], "");
    assert_eq!(sessions(&w), ["first", "second"]);
}
