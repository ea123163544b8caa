//! A host of the registry named on the command line (`hooks --agent`, `doctor --agent`, `exec
//! --host`): the values each flag takes, each with its help, parsed to the host's [`Spec`].

use stella::hosts::registry::{self, HOSTS, Spec};

/// A host of the registry, named on the command line (`--agent`, `exec --host`).
#[derive(Clone, Copy)]
pub struct HostParser {
    /// Which hosts the flag takes.
    only: fn(&Spec) -> bool,
    /// Whether each value's help names the host's files.
    files: bool,
}

impl HostParser {
    /// Every host, each with the files Stella's hooks go in.
    pub fn any() -> Self {
        HostParser {
            only: |_| true,
            files: true,
        }
    }

    /// The hosts whose shell commands run under the shell guard.
    pub fn routed() -> Self {
        HostParser {
            only: Spec::routes_shell,
            files: false,
        }
    }

    fn values(self) -> impl Iterator<Item = clap::builder::PossibleValue> {
        HOSTS
            .into_iter()
            .filter(move |h| (self.only)(h))
            .map(move |h| {
                let value = clap::builder::PossibleValue::new(h.flag);
                if !self.files {
                    return value;
                }
                value.help(match h.local {
                    Some(local) => format!("{}: {} (--local: {local})", h.name, h.project),
                    None => format!("{}: {}", h.name, h.project),
                })
            })
    }
}

impl clap::builder::TypedValueParser for HostParser {
    type Value = &'static Spec;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<&'static Spec, clap::Error> {
        let name =
            clap::builder::PossibleValuesParser::new(self.values()).parse_ref(cmd, arg, value)?;
        Ok(registry::host(&name).expect("a possible value is a host"))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(self.values()))
    }
}
