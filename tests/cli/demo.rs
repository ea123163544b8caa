//! The README's first command: the demonstration runs for real and checks itself.

use crate::common::*;

#[test]
fn the_demonstration_runs_and_shows_a_refused_write() {
    let w = World::new();
    let out = w.stella_in(&w.home).args(["demo"]).output().unwrap();
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.matches("refusing to write: notes.txt").count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("(exit 1, as it should)").count(), 2, "{text}");
    assert!(text.contains("[bob] $ git stella replay --materialize --as agent-a-on-bob "));
    assert!(text.contains("replay of session agent-a from artifact "));
    assert!(text.ends_with(
        "# Done: two stale writes refused, every fresh one allowed, nothing uploaded anywhere.\n"
    ));
    // It used its own temp folders: nothing in this HOME or data dir.
    assert!(!w.stella_home.exists());
}
