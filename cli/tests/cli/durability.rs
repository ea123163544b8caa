//! A step is on disk before the command that recorded it returns: its objects synced, then the
//! session's ref renamed into place, then the ref's folder synced; `stella.fsync false` trades it
//! away. Checked from an `strace` of the real command.

use crate::common::*;

/// The durability system calls of `git-stella ARGS` and its children, one line each.
fn traced(w: &World, args: &[&str]) -> Vec<String> {
    strace(
        w,
        args,
        "fsync,fdatasync,rename,renameat,renameat2",
        true,
        &[],
    )
}

/// A repository with session `s`, where strace runs; `None` (the test says it skipped) where it
/// does not.
fn strace_world() -> Option<World> {
    if !have(
        "strace",
        "the order of the durability system calls (the strace package)",
    ) {
        return None;
    }
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    Some(w)
}

#[test]
fn objects_are_synced_before_the_ref_moves_and_its_folder_after() {
    let Some(w) = strace_world() else {
        return;
    };
    w.write("f.txt", "bytes\n");
    let calls = traced(&w, &["--session", "s", "read", "f.txt"]);
    let store = w.store();
    let store = store.to_str().unwrap();
    let ref_rename = calls
        .iter()
        .position(|l| {
            l.starts_with("rename") && l.contains(&format!("\"{store}/refs/stella/sessions/s\""))
        })
        .unwrap_or_else(|| panic!("no rename of the session's ref in:\n{}", calls.join("\n")));
    // Every object the step wrote into the store…
    let objects: Vec<String> = calls[..ref_rename]
        .iter()
        .filter(|l| l.starts_with("rename") && l.contains("/objects/"))
        .map(|l| l.rsplit('"').nth(1).unwrap().to_owned())
        .collect();
    assert!(
        objects.len() >= 5,
        "a read step writes a handful of objects: {objects:?}"
    );
    for object in &objects {
        // …is synced, and so is its folder, before the ref names it.
        let synced = |path: &str| {
            calls[..ref_rename]
                .iter()
                .any(|l| l.starts_with("fsync(") && l.contains(&format!("<{path}>")))
        };
        assert!(
            synced(object),
            "{object} not synced before the ref moved:\n{}",
            calls.join("\n")
        );
        let folder = object.rsplit_once('/').unwrap().0;
        assert!(synced(folder), "{folder} not synced before the ref moved");
    }
    // After the rename, the ref and its folder are synced.
    let after = &calls[ref_rename + 1..];
    assert!(
        after
            .iter()
            .any(|l| l.starts_with("fsync(")
                && l.contains(&format!("<{store}/refs/stella/sessions>"))),
        "the ref's folder is not synced after the rename:\n{}",
        calls.join("\n")
    );

    // Traded away: no sync at all.
    w.store_git(&["config", "stella.fsync", "false"]);
    w.write("g.txt", "more\n");
    let calls = traced(&w, &["--session", "s", "read", "g.txt"]);
    assert!(
        calls
            .iter()
            .all(|l| !l.starts_with("fsync(") && !l.starts_with("fdatasync(")),
        "{}",
        calls.join("\n")
    );
    assert!(calls.iter().any(|l| l.contains("refs/stella/sessions/s\"")));
}

#[test]
fn a_step_written_as_one_pack_syncs_it_before_the_ref_moves() {
    if !have(
        "strace",
        "the order of the durability system calls (the strace package)",
    ) || stella::exec::support().is_err()
    {
        return;
    }
    let w = World::new();
    w.ok(&["session", "start", "--id", "s"]);
    for i in 0..80 {
        w.write(&format!("d/f{i}.txt"), &format!("{i}\n"));
    }
    // One command that reads 80 files: its step goes into the store as one pack. Only the
    // supervisor is traced (the guarded command and git's children are not: no -f).
    let args = [
        "--session",
        "s",
        "exec",
        "--",
        "sh",
        "-c",
        "cat d/*.txt >/dev/null",
    ];
    assert_packs_synced_before_the_ref_moves(&w, &args);
}

#[test]
fn a_read_of_many_files_syncs_its_packs_before_the_ref_moves() {
    let Some(w) = strace_world() else {
        return;
    };
    let names: Vec<String> = (0..80).map(|i| format!("d/f{i}.txt")).collect();
    for (i, n) in names.iter().enumerate() {
        w.write(n, &format!("{i}\n"));
    }
    // The files' blobs stream into one pack, the step's other objects go into a second.
    let mut args = vec!["--session", "s", "read"];
    args.extend(names.iter().map(String::as_str));
    assert_packs_synced_before_the_ref_moves(&w, &args);
}

/// Run `args` traced: the store's pack folder is synced before the session's ref moves, and a
/// pack is there after.
fn assert_packs_synced_before_the_ref_moves(w: &World, args: &[&str]) {
    let calls = strace(
        w,
        args,
        "fsync,fdatasync,rename,renameat,renameat2",
        false,
        &[],
    );
    let store = w.store();
    let pack_dir = format!("<{}/objects/pack>", store.to_str().unwrap());
    let ref_rename = calls
        .iter()
        .position(|l| l.starts_with("rename") && l.contains("refs/stella/sessions/s\""))
        .unwrap_or_else(|| panic!("no rename of the session's ref in:\n{}", calls.join("\n")));
    assert!(
        calls[..ref_rename]
            .iter()
            .any(|l| l.starts_with("fsync(") && l.contains(&pack_dir)),
        "the pack's folder is not synced before the ref moved:\n{}",
        calls.join("\n")
    );
    assert!(
        std::fs::read_dir(store.join("objects/pack"))
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".pack"))
    );
}

#[test]
fn a_new_store_and_its_first_session_reach_the_disk_with_every_folder_that_names_them() {
    if !have(
        "strace",
        "the order of the durability system calls (the strace package)",
    ) {
        return;
    }
    let w = World::new();
    // No store yet: `session start` creates it, then the first session's ref and its folders.
    let calls = traced(&w, &["session", "start", "--id", "s"]);
    let store = w.store();
    let store = store.to_str().unwrap();
    let store_rename = calls
        .iter()
        .position(|l| l.starts_with("rename") && l.contains(&format!("\"{store}\"")))
        .unwrap_or_else(|| {
            panic!(
                "the store was not renamed into place:\n{}",
                calls.join("\n")
            )
        });
    // Before its name appears, the new store's files are on disk…
    for file in ["HEAD", "config"] {
        assert!(
            calls[..store_rename].iter().any(|l| l.starts_with("fsync(")
                && l.contains("/.store-init-")
                && l.contains(&format!("/store.git/{file}>"))),
            "{file} not synced before the store was named:\n{}",
            calls.join("\n")
        );
    }
    // …and after the first session's ref, every folder down to it.
    let ref_rename = calls
        .iter()
        .position(|l| {
            l.starts_with("rename") && l.contains(&format!("\"{store}/refs/stella/sessions/s\""))
        })
        .unwrap_or_else(|| panic!("no rename of the session's ref in:\n{}", calls.join("\n")));
    for folder in [
        "refs/stella/sessions",
        "refs/stella",
        "refs",
        "logs/refs/stella",
        "logs",
    ] {
        assert!(
            calls[ref_rename..]
                .iter()
                .any(|l| l.starts_with("fsync(") && l.contains(&format!("<{store}/{folder}>"))),
            "{folder} not synced after the first ref:\n{}",
            calls.join("\n")
        );
    }
    assert!(
        calls[ref_rename..]
            .iter()
            .any(|l| l.starts_with("fsync(") && l.contains(&format!("<{store}>"))),
        "the store folder is not synced after the first ref:\n{}",
        calls.join("\n")
    );
}
