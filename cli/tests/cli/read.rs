//! `git stella read`: many files read at once are stored as packs, whole or not at all.

use crate::common::*;

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
