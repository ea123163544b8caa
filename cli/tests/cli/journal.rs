//! The journal store: plain git reads it, concurrent writers lose nothing, a killed writer
//! wedges nothing.

use std::process::Stdio;

use crate::common::*;

#[test]
fn plain_git_reads_the_session_history() {
    let w = World::new();
    let s = w.start();
    w.write("src/a.rs", "fn main() {}\n");
    w.ok(&["--session", &s, "read", "src/a.rs"]);
    w.write("src/a.rs", "fn main() { run() }\n");
    w.ok(&["--session", &s, "wrote", "src/a.rs"]);
    let log = w.store_git(&["log", "--format=%s", &format!("refs/stella/sessions/{s}")]);
    assert_eq!(log, "wrote src/a.rs\nread src/a.rs\nsession start");
    let reflog = w.store_git(&[
        "reflog",
        "show",
        "--format=%gs",
        &format!("refs/stella/sessions/{s}"),
    ]);
    assert_eq!(reflog.lines().count(), 3, "{reflog}");
    w.store_git(&["fsck", "--strict"]);
    let ours = w.ok(&["log", &s]);
    let lines: Vec<&str> = ours.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].ends_with(" wrote src/a.rs"), "{ours}");
    assert!(lines[2].ends_with(" session start"), "{ours}");
}

#[test]
fn sixteen_concurrent_writers_lose_no_step() {
    let w = World::new();
    let s = w.start();
    for i in 0..16 {
        w.write(&format!("f{i}"), &format!("{i}"));
    }
    let children: Vec<_> = (0..16)
        .map(|i| {
            w.stella()
                .args(["--session", &s, "read", &format!("f{i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(w.steps(&s), 17);
    let show = w.ok(&["session", "show", &s, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&show).unwrap();
    assert_eq!(v["tracked_count"], 16);
    assert_eq!(v["step_count"], 17);
}

#[test]
fn a_killed_writer_leaves_a_store_the_next_command_uses() {
    let w = World::new();
    let s = w.start();
    w.write("big", &"x".repeat(4 << 20));
    let mut killed = 0;
    for i in 0..20u64 {
        let mut child = w
            .stella()
            .args(["--session", &s, "read", "big"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2 + (i * 7) % 25));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        w.store_git(&["fsck", "--no-dangling"]);
        // A lock file a dead writer left must not wedge the next one.
        let store = w.store();
        std::fs::write(store.join(format!("refs/stella/sessions/{s}.lock")), "junk").unwrap();
        w.write("small", &format!("{i}"));
        w.ok(&["--session", &s, "read", "small"]);
    }
    assert!(killed > 0, "no kill landed while the writer ran");
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
fn a_read_of_many_files_stores_them_as_packs_or_not_at_all() {
    let w = World::new();
    let s = w.start();
    let names: Vec<String> = (0..40).map(|i| format!("many/f{i}.txt")).collect();
    for (i, n) in names.iter().enumerate() {
        w.write(n, &format!("file {i}\n").repeat(100));
    }
    let store = w.store();
    let loose_blobs = || {
        w.store_git(&["count-objects", "-v"])
            .lines()
            .find_map(|l| l.strip_prefix("count: "))
            .unwrap()
            .parse::<u32>()
            .unwrap()
    };
    // Every file in the pack folder (a pack, its index, a temporary file index-pack left).
    let packs = || {
        let mut names: Vec<_> = std::fs::read_dir(store.join("objects/pack"))
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    let (loose, before) = (loose_blobs(), packs());

    // One unreadable path: nothing is recorded and no pack is left, finished or not.
    let mut args = vec!["--session", &s, "read"];
    args.extend(names.iter().map(String::as_str));
    args.push("missing.txt");
    let out = w.run(&args);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert_eq!(w.steps(&s), 1);
    assert_eq!(packs(), before);
    assert_eq!(loose_blobs(), loose);

    args.pop();
    w.ok(&args);
    assert_eq!(w.steps(&s), 2);
    // Two packs (the files' blobs, then the step's other objects), no new loose object.
    let new_packs = packs()
        .iter()
        .filter(|n| !before.contains(n) && n.to_string_lossy().ends_with(".pack"))
        .count();
    assert_eq!(new_packs, 2, "{:?}", packs());
    assert_eq!(loose_blobs(), loose);
    w.store_git(&["fsck", "--full", "--strict", "--no-progress"]);
    for n in &names {
        let id = w.git(&["hash-object", n]);
        assert_eq!(w.store_git(&["cat-file", "-t", &id]), "blob");
    }
    // The same session checkpoints to the same bytes.
    let a = w.base().join("a.bundle");
    let b = w.base().join("b.bundle");
    w.checkpoint_to(&s, &a);
    w.checkpoint_to(&s, &b);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn a_read_of_many_files_checks_the_objects_it_finds_in_the_store() {
    // A step stored as one pack names some objects the store holds already, loose, and gix
    // writes those nowhere. After a power cut such a file can be there with none of its bytes
    // (a step cut before it synced them): here the path blob of `f00`. The read must not
    // record a step that names it.
    let w = World::new();
    let names: Vec<String> = (0..16).map(|i| format!("f{i:02}")).collect();
    for n in &names {
        w.write(n, &format!("file {n}\n"));
    }
    let s = w.start();
    let bytes = w.base().join("path-bytes");
    std::fs::write(&bytes, "f00").unwrap();
    let path_blob = w.store_git(&["hash-object", "-w", bytes.to_str().unwrap()]);
    w.empty_loose_object(&path_blob);

    let mut args = vec!["--session", &s, "read"];
    args.extend(names.iter().map(String::as_str));
    w.ok(&args);
    let status = w.run(&["--session", &s, "status"]);
    assert!(status.status.success(), "{}", stderr(&status));
    assert_eq!(w.steps(&s), 2);
    w.store_git(&["fsck", "--full", "--strict", "--no-progress"]);
}
