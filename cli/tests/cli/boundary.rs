//! How the packages are built: the library (`src/`) never reads the environment, prints or exits
//! (the command line, arguments, the environment, output and exit codes, is the `git-stella`
//! package in `cli/`, and reads the environment in one file: clippy holds every other file of
//! both packages to that); a host is named only by its own module; the library's modules import
//! each other without a circle, as docs/contributing.md draws them; and no command of the command
//! line imports from another, since what two share lies in a module beneath both.

use std::path::{Path, PathBuf};

use crate::common::repo_root;

/// The lines of `code` that `hit` picks, numbered from 1 and trimmed: comments (and doc
/// examples) left out.
fn lines_where(code: &str, hit: impl Fn(&str) -> bool) -> Vec<(usize, String)> {
    code.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//") && hit(line))
        .map(|(i, line)| (i + 1, line.trim().to_owned()))
        .collect()
}

/// `file:line: code` for each line `scan` finds in each of `files`.
fn found_in<'a>(
    files: impl IntoIterator<Item = &'a PathBuf>,
    scan: impl Fn(&str) -> Vec<(usize, String)>,
) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in scan(&text) {
            found.push(format!("{}:{line}: {code}", file.display()));
        }
    }
    found
}

#[test]
fn the_environment_is_read_in_one_file_and_clippy_holds_the_rest_to_it() {
    let root = repo_root();
    let config = std::fs::read_to_string(root.join("clippy.toml")).unwrap();
    for method in [
        "std::env::var",
        "std::env::var_os",
        "std::env::args_os",
        "std::env::current_dir",
        "std::env::temp_dir",
        "std::io::stdin",
        "std::io::stdout",
        "std::io::stderr",
        "std::process::exit",
    ] {
        assert!(
            config.contains(&format!("path = \"{method}\"")),
            "clippy.toml does not disallow {method}"
        );
    }
    let allowed = [
        root.join("cli/src/env.rs"),
        root.join("cli/tests/cli/main.rs"),
        // Cargo speaks to a build script through its environment.
        root.join("build.rs"),
        root.join("cli/build.rs"),
    ];
    // Every Rust file of both packages: the library at the root, the command line in `cli/`.
    let mut files = Vec::new();
    for package in [root.to_owned(), root.join("cli")] {
        files.push(package.join("build.rs"));
        for dir in ["src", "tests", "examples", "benches"] {
            if package.join(dir).is_dir() {
                all_sources(&package.join(dir), &mut files);
            }
        }
    }
    for file in [
        "src/lib.rs",
        "cli/src/lib.rs",
        "cli/src/main.rs",
        "cli/examples/gen-docs.rs",
    ] {
        assert!(files.contains(&root.join(file)), "{file} is not scanned");
    }
    assert!(files.len() > 100, "found only {} source files", files.len());
    // An `allow` or `expect` of the lint (named in two pieces, so this file does not name it).
    let lint = ["clippy::", "disallowed_methods"].concat();
    let allows = |text: &str| lines_where(text, |line| line.contains(&lint));
    // The list names files that allow it still: a file renamed away from it fails here.
    for file in &allowed {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            !allows(&text).is_empty(),
            "{} no longer allows it",
            file.display()
        );
    }
    let found = found_in(files.iter().filter(|f| !allowed.contains(f)), allows);
    assert!(
        found.is_empty(),
        "only cli/src/env.rs reads the environment (and the tests, which set up processes, and the build scripts):\n  {}",
        found.join("\n  ")
    );
}

/// Every `.rs` file under `dir`.
fn all_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` that name `host` in code (not in comments or help text, not in tests):
/// its name as a string, or its module.
fn names_of(text: &str, flag: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let quoted = format!("\"{flag}\"");
    let module = format!("{}::", flag.replace('-', "_"));
    lines_where(code, |line| {
        line.contains(&quoted) || line.contains(&module)
    })
}

#[test]
fn a_host_is_named_only_in_its_own_module_and_the_registry() {
    let src = repo_root().join("src");
    let registry = src.join("hosts/registry.rs");
    // The library's sources and the command line's.
    let mut files = Vec::new();
    all_sources(&src, &mut files);
    all_sources(&repo_root().join("cli/src"), &mut files);
    let mut found = Vec::new();
    for host in stella::hosts::registry::HOSTS {
        let own = src
            .join("hosts")
            .join(format!("{}.rs", host.flag.replace('-', "_")));
        assert!(own.is_file(), "{} has no module of its own", host.flag);
        let others = files.iter().filter(|f| **f != own && **f != registry);
        found.extend(found_in(others, |text| names_of(text, host.flag)));
    }
    assert!(
        found.is_empty(),
        "a host is known by its registry entry, not by name:\n  {}",
        found.join("\n  ")
    );
    // The check finds a branch on a name, and not a help text that mentions one.
    let branch = "match h {\n    \"codex\" => 1,\n    _ => hosts::codex::x(),\n}\n/// \"codex\"\n";
    let lines: Vec<usize> = names_of(branch, "codex")
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    assert_eq!(lines, vec![2, 3]);
}

/// The library's top-level modules and, for each, the others its code names (`crate::m`):
/// comments and test modules left out.
fn module_imports() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let src = repo_root().join("src");
    let mut files = Vec::new();
    all_sources(&src, &mut files);
    let module_of = |file: &Path| -> Option<String> {
        let rel = file.strip_prefix(&src).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        let name = first.strip_suffix(".rs").unwrap_or(first);
        (name != "lib").then(|| name.to_owned())
    };
    let mut graph = std::collections::BTreeMap::new();
    for file in &files {
        if let Some(m) = module_of(file) {
            graph.insert(m, std::collections::BTreeSet::new());
        }
    }
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        // The crate's root as this file can name it: `crate::`, or `super::` as many times as
        // the file is deep (`src/a.rs` and `src/a/mod.rs` once, `src/a/b.rs` twice).
        let rel = file.strip_prefix(&src).unwrap();
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        let roots = ["crate::".to_owned(), "super::".repeat(depth)];
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for name in roots.iter().flat_map(|r| named_after(line, r)) {
                if name != module && graph.contains_key(&name) {
                    graph.get_mut(&module).unwrap().insert(name);
                }
            }
        }
    }
    graph
}

/// The first names after each `root` in `line`: `a` of `crate::a::b`, and `a`, `b` of
/// `crate::{a::x, b}`. The `super::` a deeper `super::super::` starts with is not a root.
fn named_after(line: &str, root: &str) -> Vec<String> {
    let word = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (i, _) in line.match_indices(root) {
        let before = &line[..i];
        let after = &line[i + root.len()..];
        if before.ends_with("super::") || after.starts_with("super::") {
            continue;
        }
        match after.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or_default();
                names.extend(group.split(',').map(word));
            }
            None => names.push(word(after)),
        }
    }
    names
}

/// Each module's floor in the house: 0 for one that names no other, else one above the highest
/// module it names; `Err` with a circle when there is one.
fn floors(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Result<std::collections::BTreeMap<String, usize>, Vec<String>> {
    fn visit(
        m: &str,
        graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        done: &mut std::collections::BTreeMap<String, usize>,
        path: &mut Vec<String>,
    ) -> Result<usize, Vec<String>> {
        if let Some(f) = done.get(m) {
            return Ok(*f);
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut circle = path[at..].to_vec();
            circle.push(m.to_owned());
            return Err(circle);
        }
        path.push(m.to_owned());
        let mut floor = 0;
        for dep in &graph[m] {
            floor = floor.max(visit(dep, graph, done, path)? + 1);
        }
        path.pop();
        done.insert(m.to_owned(), floor);
        Ok(floor)
    }
    let mut done = std::collections::BTreeMap::new();
    for m in graph.keys() {
        visit(m, graph, &mut done, &mut Vec::new())?;
    }
    Ok(done)
}

/// The house as docs/contributing.md draws it: one line per floor, top floor first.
fn drawing(floors: &std::collections::BTreeMap<String, usize>) -> String {
    let top = floors.values().copied().max().unwrap_or(0);
    (0..=top)
        .rev()
        .map(|f| {
            let rooms: Vec<&str> = floors
                .iter()
                .filter(|(_, n)| **n == f)
                .map(|(m, _)| m.as_str())
                .collect();
            format!("{f}: {}\n", rooms.join(" "))
        })
        .collect()
}

#[test]
fn the_library_modules_import_each_other_without_a_circle_as_the_docs_draw_them() {
    let graph = module_imports();
    assert!(graph.len() > 20, "the modules were not found: {graph:?}");
    let floors = match floors(&graph) {
        Ok(f) => f,
        Err(circle) => panic!(
            "the library's modules import each other in a circle: {}; a lower module must not name a higher one",
            circle.join(" -> ")
        ),
    };
    let drawn = drawing(&floors);
    let doc = std::fs::read_to_string(repo_root().join("docs/contributing.md")).unwrap();
    let start = "<!-- the house: written by a test's failure message, checked by it -->\n```text\n";
    let body = doc
        .split_once(start)
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(body, _)| body)
        .expect("docs/contributing.md draws the house");
    assert_eq!(
        body, drawn,
        "docs/contributing.md draws the modules' floors as they are not; the floors now:\n{drawn}"
    );
    // Every way of naming a module is seen: in full, in a group, from a file one or two deep.
    assert_eq!(
        named_after("use crate::journal::Tip;", "crate::"),
        ["journal"]
    );
    assert_eq!(
        named_after("use crate::{guard::Check, paths};", "crate::"),
        ["guard", "paths"]
    );
    assert_eq!(
        named_after("use super::super::store;", "super::super::"),
        ["store"]
    );
    assert!(named_after("use super::super::store;", "super::").is_empty());
    // The check finds a circle.
    let mut circled = graph.clone();
    circled.get_mut("paths").unwrap().insert("session".into());
    let circle = floors_or_circle(&circled);
    assert!(
        circle.first() == circle.last() && circle.len() > 2,
        "{circle:?}"
    );
}

fn floors_or_circle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<String> {
    floors(graph).err().unwrap_or_default()
}

/// The command line's commands: the modules `cli/src/lib.rs` dispatches to (`m::run(ctx, a, out)`).
fn command_modules(lib: &str) -> std::collections::BTreeSet<String> {
    lib.lines()
        .filter(|line| line.contains("=> "))
        .filter_map(|line| line.split_once("::run(ctx"))
        .filter_map(|(before, _)| before.rsplit(' ').next())
        .map(str::to_owned)
        .collect()
}

/// The lines of `text` (a file of `module`, whose code names the crate's root as one of `roots`)
/// that name another of `commands`: `crate::m::…`, `use crate::m`, `crate::{m, …}`. Comments are
/// left out; `super::` is a root only outside the file's test module, where it names the file.
fn borrowings(
    text: &str,
    module: &str,
    roots: &[String],
    commands: &std::collections::BTreeSet<String>,
) -> Vec<(usize, String)> {
    let test_start = text
        .lines()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .unwrap_or(usize::MAX);
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let roots = roots
            .iter()
            .filter(|r| i < test_start || r.starts_with("crate::"));
        let names = roots.flat_map(|r| named_after(line, r));
        if names
            .into_iter()
            .any(|n| n != module && commands.contains(&n))
        {
            found.push((i + 1, line.trim().to_owned()));
        }
    }
    found
}

#[test]
fn no_command_imports_from_another() {
    let src = repo_root().join("cli/src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let commands = command_modules(&lib);
    for (name, is_command) in [
        ("inspect", true),
        ("session_cmd", true),
        ("hooks", true),
        ("gc", true),
        ("ctx", false),
        ("output", false),
        ("mcp_server", false),
    ] {
        assert_eq!(
            commands.contains(name),
            is_command,
            "{name}: the commands found in cli/src/lib.rs are {commands:?}"
        );
    }
    let mut files = Vec::new();
    all_sources(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let module = first.strip_suffix(".rs").unwrap_or(first);
        // The root dispatches to every command; the binaries are crates of their own.
        if matches!(module, "lib" | "main" | "bin") {
            continue;
        }
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        let roots = ["crate::".to_owned(), "super::".repeat(depth)];
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in borrowings(&text, module, &roots, &commands) {
            found.push(format!("{}:{line}: {code}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "a command imports from another command (or a shared module from a command); move what they share into a module beneath both:\n  {}",
        found.join("\n  ")
    );
    // The check finds a borrowing however it is written, and not a test module's own `super::`.
    let roots = ["crate::".to_owned(), "super::".to_owned()];
    let planted = "use crate::inspect::open;\nlet x = super::gc::run();\nuse crate::{ctx, hooks};\nuse super::output;\n#[cfg(test)]\nmod tests {\n    use super::inspect;\n    use crate::wrote::x;\n}\n";
    let lines: Vec<usize> = borrowings(planted, "verify", &roots, &commands)
        .into_iter()
        .map(|(l, _)| l)
        .collect();
    assert_eq!(lines, vec![1, 2, 3, 8]);
}
