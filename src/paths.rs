//! Paths as the journal records them: relative to the workspace root, `/`-separated, resolved
//! through symlinks and `..` first so nothing outside the workspace is ever journaled.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// A path inside the workspace, relative to its root, with `/` separators and only normal
/// components.
///
/// Shared, not copied, when cloned: the shell guard keeps a path in several tables (what the
/// command did with it, its signature, what the session knew of it), for each of the 100,000
/// files a command may read.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelPath(std::sync::Arc<[u8]>);

impl RelPath {
    /// Validate bytes read from a journal or an artifact.
    pub fn from_bytes(bytes: &[u8]) -> Option<RelPath> {
        if bytes.is_empty() || bytes.contains(&0) {
            return None;
        }
        bytes
            .split(|b| *b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b"..")
            .then(|| RelPath(bytes.into()))
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path as the OS sees it, relative to the root.
    pub(crate) fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// The absolute path under `root`.
    pub fn under(&self, root: &Path) -> PathBuf {
        root.join(self.as_path())
    }

    /// The folder holding the path (`None` for a path at the root).
    pub(crate) fn parent(&self) -> Option<RelPath> {
        let at = self.0.iter().rposition(|b| *b == b'/')?;
        Some(RelPath(self.0[..at].into()))
    }
}

impl RelPath {
    /// The path as text for machines (JSON, keys): invalid UTF-8 replaced, nothing escaped.
    pub fn to_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
}

/// For people: control characters are escaped, so a newline in a name cannot split a line.
impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::text::escape_controls(&self.to_lossy()))
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

/// The error returned by [`resolve`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The path, once resolved, lies outside the workspace (through `..` or a symbolic link).
    #[error("'{}' is outside the workspace '{}'", .path.display(), .root.display())]
    Outside {
        /// The path as the caller gave it.
        path: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path is the workspace root itself.
    #[error("'{}' is the workspace root, not a file in it", .path.display())]
    Root {
        /// The path as the caller gave it.
        path: PathBuf,
    },
    /// The path lies in a private area (`private_area`), and the caller is a way in.
    #[error("'{}' is inside {area}/, which Stella never reads or writes on an agent's behalf", .path.display())]
    Private {
        /// The path as the caller gave it.
        path: PathBuf,
        /// The area: `.git` or `.stella`.
        area: &'static str,
    },
    /// A part of the path that exists could not be resolved.
    #[error("could not resolve '{}'", .path.display())]
    Io {
        /// The path as the caller gave it.
        path: PathBuf,
        /// The I/O error that stopped it.
        #[source]
        source: io::Error,
    },
}

/// Resolve `path` (relative to `cwd`, or absolute) against the canonical workspace `root`.
///
/// Existing parts are canonicalised (symlinks and `..` resolved as the OS resolves them); a tail
/// that does not exist yet (a file about to be created), or that sits in a folder this user
/// cannot search, is appended as written, after the same checks. A symlink whose target lies
/// outside the workspace is outside.
pub fn resolve(root: &Path, cwd: &Path, path: &Path) -> Result<RelPath, Error> {
    let abs = absolute(cwd, path);
    let resolved = canonicalize_lenient(&abs, 0).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    relative(root, &resolved, path)
}

/// `path` (relative to the workspace root) as seen from the folder `here` (also relative to the
/// root), the way `git status` shows paths: `sub/b.txt` from `sub` is `b.txt`, `a.txt` from `sub`
/// is `../a.txt`.
pub fn relative_from(path: &RelPath, here: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
    let mut from: Vec<_> = here.components().collect();
    let mut to: Vec<_> = path.components().collect();
    while let (Some(a), Some(b)) = (from.first(), to.first()) {
        if a != b {
            break;
        }
        from.remove(0);
        to.remove(0);
    }
    let mut out = PathBuf::new();
    for _ in &from {
        out.push("..");
    }
    for c in to {
        out.push(c.as_os_str());
    }
    out
}

/// `path` with `.` and `..` taken out by their names alone (`/a/b/../c` is `/a/c`), the way a
/// person reads it; nothing on disk is consulted, so a `..` after a symbolic link is taken as
/// written. For paths shown to people and files the command line names, not for the guard.
pub fn lexical_clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Why a write into a private folder is refused, for the agent that asked: `e` is
/// [`Error::Private`].
pub(crate) fn private_refusal(e: &Error) -> String {
    format!(
        "{e}: writing there could run code (git hooks, git config) or switch Stella's guard off. Nothing was written."
    )
}

/// The private area `rel` lies in: `.git` (any folder of that name: the repository's, a
/// submodule's) or `.stella` (the workspace's own state, at the root). Writes there on an agent's
/// behalf could run code (`.git/hooks`, `.git/config`) or switch the guard off for everyone.
/// Names are compared without case, as git's own path check does: on a case-folding file system
/// `.GIT` is `.git`. Every way in asks this one function: the commands, MCP, the hooks, the shell
/// guard (which leaves these folders unrecorded) and replay (which refuses an artifact naming one).
pub(crate) fn private_area(rel: &RelPath) -> Option<&'static str> {
    let mut parts = rel.as_bytes().split(|b| *b == b'/');
    if parts
        .next()
        .is_some_and(|c| c.eq_ignore_ascii_case(b".stella"))
    {
        return Some(".stella");
    }
    rel.as_bytes()
        .split(|b| *b == b'/')
        .any(|c| c.eq_ignore_ascii_case(b".git"))
        .then_some(".git")
}

/// [`resolve`] for a way in (a command, an MCP tool, a host's hook): a path in a private area
/// (see [`private_area`]) is an error.
pub(crate) fn resolve_public(root: &Path, cwd: &Path, path: &Path) -> Result<RelPath, Error> {
    let rel = resolve(root, cwd, path)?;
    match private_area(&rel) {
        Some(area) => Err(Error::Private {
            path: path.to_owned(),
            area,
        }),
        None => Ok(rel),
    }
}

/// A path as the caller named it: the file it reaches and, when its last component is a symbolic
/// link, the link itself (its folders resolved).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Named {
    /// The file the path reaches, every link followed.
    pub path: RelPath,
    /// The link the caller named, when that is what the last component is.
    pub link: Option<RelPath>,
}

impl From<RelPath> for Named {
    /// A path named directly, not through a link.
    fn from(path: RelPath) -> Named {
        Named { path, link: None }
    }
}

/// [`resolve`], keeping the link the caller named (a delete removes the link, like `rm(1)`, and
/// a refusal names both).
pub(crate) fn resolve_named(root: &Path, cwd: &Path, path: &Path) -> Result<Named, Error> {
    let target = resolve_public(root, cwd, path)?;
    let abs = absolute(cwd, path);
    let link = match (abs.symlink_metadata(), abs.parent(), abs.file_name()) {
        (Ok(meta), Some(parent), Some(name)) if meta.file_type().is_symlink() => {
            let parent = canonicalize_lenient(parent, 0).map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })?;
            let link = relative(root, &parent.join(name), path)?;
            if let Some(area) = private_area(&link) {
                return Err(Error::Private {
                    path: path.to_owned(),
                    area,
                });
            }
            Some(link)
        }
        _ => None,
    };
    Ok(Named { path: target, link })
}

fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    }
}

/// `resolved` (canonical) relative to `root`, or why it is not a file in the workspace.
fn relative(root: &Path, resolved: &Path, path: &Path) -> Result<RelPath, Error> {
    let rel = resolved.strip_prefix(root).map_err(|_| Error::Outside {
        path: path.to_owned(),
        root: root.to_owned(),
    })?;
    let mut bytes = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => {
                if !bytes.is_empty() {
                    bytes.push(b'/');
                }
                bytes.extend_from_slice(n.as_bytes());
            }
            _ => {
                return Err(Error::Outside {
                    path: path.to_owned(),
                    root: root.to_owned(),
                });
            }
        }
    }
    RelPath::from_bytes(&bytes).ok_or_else(|| Error::Root {
        path: path.to_owned(),
    })
}

/// `canonicalize`, except that a missing tail is kept: the longest existing prefix is resolved
/// and the rest appended. A dangling symlink is followed through its target, so a write through
/// it is judged by where it lands.
fn canonicalize_lenient(abs: &Path, depth: u32) -> io::Result<PathBuf> {
    if depth > 40 {
        return Err(io::Error::other("too many levels of symbolic links"));
    }
    match abs.canonicalize() {
        Ok(p) => return Ok(p),
        // A folder this user cannot search hides what is in it: keep the tail as written, and
        // let the read or write that follows fail as it would without Stella.
        Err(e)
            if !matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
            ) =>
        {
            return Err(e);
        }
        Err(_) => {}
    }
    // A dangling symlink: resolve where it points.
    if let Ok(meta) = abs.symlink_metadata()
        && meta.file_type().is_symlink()
    {
        let target = std::fs::read_link(abs)?;
        let parent = abs.parent().unwrap_or(Path::new("/"));
        return canonicalize_lenient(&parent.join(target), depth + 1);
    }
    let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    };
    // `file_name` is None for `..` and `.`, so the name here is a normal component.
    Ok(canonicalize_lenient(parent, depth + 1)?.join(name))
}

#[cfg(test)]
mod tests {
    #[test]
    fn private_areas_are_git_anywhere_and_stella_at_the_root_whatever_the_case() {
        let area =
            |p: &str| super::private_area(&super::RelPath::from_bytes(p.as_bytes()).unwrap());
        assert_eq!(area(".git/config"), Some(".git"));
        assert_eq!(area("sub/.git/hooks/pre-commit"), Some(".git"));
        assert_eq!(area("sub/.GIT/config"), Some(".git"));
        assert_eq!(area(".stella/private/workspace.toml"), Some(".stella"));
        assert_eq!(area(".Stella/config.toml"), Some(".stella"));
        assert_eq!(area("sub/.stella/x"), None);
        assert_eq!(area(".github/workflows/ci.yml"), None);
        assert_eq!(area("src/.git-keep"), None);
        assert_eq!(area(".gitignore"), None);
    }

    use super::*;

    #[test]
    fn paths_read_from_a_folder_and_cleaned_by_name() {
        let p = |s: &str| RelPath::from_bytes(s.as_bytes()).unwrap();
        assert_eq!(
            relative_from(&p("sub/b.txt"), Path::new("sub")),
            Path::new("b.txt")
        );
        assert_eq!(
            relative_from(&p("a.txt"), Path::new("sub/x")),
            Path::new("../../a.txt")
        );
        assert_eq!(
            relative_from(&p("subway/c"), Path::new("sub")),
            Path::new("../subway/c")
        );
        assert_eq!(
            relative_from(&p("a.txt"), Path::new("")),
            Path::new("a.txt")
        );
        assert_eq!(lexical_clean(Path::new("/w/demo/../x")), Path::new("/w/x"));
        assert_eq!(
            lexical_clean(Path::new("/w/./a/b/../c")),
            Path::new("/w/a/c")
        );
    }

    #[test]
    fn rel_paths_reject_non_normal_components() {
        for bad in ["", "/a", "a/", "a//b", "./a", "a/../b", "..", "a\0b"] {
            assert!(RelPath::from_bytes(bad.as_bytes()).is_none(), "{bad:?}");
        }
        assert!(RelPath::from_bytes(b"a/b.c/d").is_some());
    }

    #[test]
    fn resolve_handles_missing_tails_symlinks_and_dotdot() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(root.join("src/a.rs"), "x").unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("src/a.rs"), root.join("link")).unwrap();

        let r = |p: &str| resolve(&root, &root.join("src"), Path::new(p));
        assert_eq!(r("a.rs").unwrap().to_string(), "src/a.rs");
        assert_eq!(r("new/deep/file").unwrap().to_string(), "src/new/deep/file");
        assert_eq!(r("../link").unwrap().to_string(), "src/a.rs");
        assert!(matches!(r("../out/x"), Err(Error::Outside { .. })));
        assert!(matches!(r("../../x"), Err(Error::Outside { .. })));
        assert!(matches!(r(".."), Err(Error::Root { .. })));
        assert_eq!(
            resolve(&root, Path::new("/"), &root.join("src/../src/a.rs"))
                .unwrap()
                .to_string(),
            "src/a.rs"
        );
    }
}
