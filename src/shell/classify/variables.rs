//! Arguments built from a variable whose value is not known before running (`cat $X`,
//! `cat ${X:-~/.netrc}`, `cat ${a[0]}`, a `read` variable): the path they name cannot be
//! compared with the profile's plan or the secrets, so the command asks, and no wildcard rule
//! lifts it. Variables assigned a literal earlier on the line are substituted instead (see
//! `walk::vars`).

use super::{Cmd, Judge};
use crate::shell::Class;

/// Commands whose arguments are text, not paths, or that only set or test variables.
const TEXT_ONLY: &[&str] = &[
    "echo", "printf", "test", "[", "true", "false", ":", "read", "export", "local", "declare",
    "typeset", "readonly", "unset", "shift", "exit", "return", "let", "sleep",
];

pub(super) fn variables(j: &mut Judge, cmd: &Cmd<'_>, leader: usize) {
    let Some(lead) = cmd.argv.get(leader) else {
        return;
    };
    let name = lead.value.rsplit('/').next().unwrap_or("");
    if TEXT_ONLY.contains(&name) {
        return;
    }
    let mut message = false;
    for a in cmd.argv.iter().skip(leader + 1) {
        if a.var_unknown && !message {
            j.raise(
                Class::Opaque,
                format!(
                    "[shell.var.unknown] `{}` depends on a variable whose value is not known before running",
                    a.display
                ),
            );
            return;
        }
        message = name == "git" && matches!(a.value.as_str(), "-m" | "--message");
    }
}
