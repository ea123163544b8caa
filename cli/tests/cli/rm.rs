//! `git stella rm`: a symlink is removed as a link, its target kept.

use crate::common::*;

#[test]
fn rm_of_a_symlink_removes_the_link_and_keeps_its_target() {
    let w = World::new();
    let s = session(&w);
    w.write("real.txt", "real\n");
    std::os::unix::fs::symlink("real.txt", w.repo.join("link.txt")).unwrap();
    w.ok(&["--session", &s, "read", "link.txt"]);
    w.ok(&["--session", &s, "rm", "link.txt"]);
    assert!(w.repo.join("link.txt").symlink_metadata().is_err());
    assert_eq!(w.read("real.txt"), "real\n");
    // The session still tracks the file it read, which is still there and fresh.
    let status = w.ok(&["--session", &s, "status"]);
    assert_eq!(status, "unchanged  real.txt");
    fsck_clean(&w);
}
