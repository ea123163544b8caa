//! Session and workspace ids: validated before they become ref names or path components.

use std::fmt;

/// Why an id was rejected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("'{id}' is not a valid {what} id: {why}")]
pub struct InvalidId {
    pub(crate) id: String,
    pub(crate) what: &'static str,
    pub(crate) why: &'static str,
}

/// What both ids share: minting `$bytes` random bytes as hex, the text, and its display.
macro_rules! minted_id {
    ($id:ident, $bytes:expr) => {
        impl $id {
            /// Mint a fresh random id.
            pub(crate) fn mint() -> Self {
                $id(random_hex($bytes))
            }

            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $id {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

/// A session id: `[A-Za-z0-9._-]{1,128}`, not starting with `.` or `-`, without `..`, not ending
/// in `.` or `.lock`, so it is always a safe ref name and path component.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct SessionId(String);

impl SessionId {
    /// Validate a caller-supplied id.
    pub fn parse(id: &str) -> Result<Self, InvalidId> {
        let bad = |why| {
            Err(InvalidId {
                id: id.to_owned(),
                what: "session",
                why,
            })
        };
        if id.is_empty() || id.len() > 128 {
            return bad("it must be 1 to 128 characters long");
        }
        if !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return bad("only letters, digits, '.', '_' and '-' are allowed");
        }
        if id.starts_with('.') || id.starts_with('-') {
            return bad("it must not start with '.' or '-'");
        }
        if id.contains("..") {
            return bad("it must not contain '..'");
        }
        if id.ends_with(".lock") {
            return bad("it must not end in '.lock'");
        }
        if id.ends_with('.') {
            return bad("it must not end in '.'");
        }
        Ok(SessionId(id.to_owned()))
    }
}

minted_id!(SessionId, 8);

/// A workspace id: 32 lowercase hex characters, minted on this machine.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct WorkspaceId(String);

impl WorkspaceId {
    /// Validate an id read from disk.
    pub(crate) fn parse(id: &str) -> Result<Self, InvalidId> {
        if id.len() == 32
            && id
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            Ok(WorkspaceId(id.to_owned()))
        } else {
            Err(InvalidId {
                id: id.to_owned(),
                what: "workspace",
                why: "it must be 32 lowercase hex characters",
            })
        }
    }
}

minted_id!(WorkspaceId, 16);

/// `n` random bytes from the operating system, as hex.
pub(crate) fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_follow_the_spec() {
        for ok in ["a", "abc-DEF_1.2", "x".repeat(128).as_str(), "a.lockx"] {
            assert!(SessionId::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".a",
            "-a",
            "a..b",
            "a.lock",
            "a.",
            "a/b",
            "a b",
            "é",
            "x".repeat(129).as_str(),
        ] {
            assert!(SessionId::parse(bad).is_err(), "{bad}");
        }
        let minted = SessionId::mint();
        assert!(SessionId::parse(minted.as_str()).is_ok());
        assert_ne!(minted, SessionId::mint());
    }

    #[test]
    fn workspace_ids_are_hex() {
        let id = WorkspaceId::mint();
        assert_eq!(WorkspaceId::parse(id.as_str()), Ok(id));
        assert!(WorkspaceId::parse("../../etc").is_err());
        assert!(WorkspaceId::parse(&"A".repeat(32)).is_err());
    }
}
