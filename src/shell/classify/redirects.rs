//! Redirections of one simple command: writes, reads of secrets, network
//! sockets, and what standard input carries.

use super::{Cmd, Judge, Stdin};
use crate::shell::Class;
use crate::shell::evaluated::names_run_code;
use crate::shell::paths;
use crate::shell::walk::{Scope, Walker};
use crate::shell::words;
use rable::NodeKind;

pub(super) fn redirect_targets(
    j: &mut Judge,
    w: &Walker<'_>,
    cmd: &Cmd<'_>,
    scope: &Scope,
) -> Stdin {
    let mut stdin = Stdin::Inherited;
    for r in cmd.redirects {
        match &r.kind {
            NodeKind::Redirect { op, target, .. } => {
                let t = words::convert(target, &w.env(scope));
                let dup = t.value.chars().all(|c| c.is_ascii_digit() || c == '-');
                match op.as_str() {
                    ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => {
                        j.write(&t, cmd.cwd, w.ctx, "redirection to")
                    }
                    ">&" | "<&" if !dup => j.write(&t, cmd.cwd, w.ctx, "redirection to"),
                    ">&" | "<&" => {}
                    "<" => {
                        if t.value.starts_with("/dev/tcp/") || t.value.starts_with("/dev/udp/") {
                            j.raise(
                                Class::Malicious,
                                "[shell.malicious.reverse-shell] input from a network socket",
                            );
                        }
                        if paths::is_secret(&t.value, w.ctx) {
                            j.t.reads_secret = true;
                            j.raise(
                                Class::SecretRead,
                                format!("[shell.secret.read] reads `{}`", t.display),
                            );
                        }
                        if t.var_unknown {
                            j.raise(
                                Class::Opaque,
                                format!("[shell.var.unknown] input `{}` depends on a variable whose value is not known before running", t.display),
                            );
                        }
                        j.read(&t, cmd.cwd, w.ctx);
                        stdin = Stdin::File;
                    }
                    "<<<" => {
                        if let Some(name) = super::secret_expanded(&t.raw, true) {
                            super::secret_variable(j, &name);
                        }
                        stdin = Stdin::Text(t.display.clone());
                    }
                    _ => j.raise(
                        Class::Opaque,
                        format!("[shell.redirect] redirection `{op}` not understood"),
                    ),
                }
            }
            NodeKind::HereDoc {
                content, quoted, ..
            } => {
                if !quoted && (content.contains("$(") || content.contains('`')) {
                    j.raise(Class::Opaque, "[shell.subst.heredoc] command substitution inside an unquoted here-document");
                }
                if !quoted && expands_code(content, scope) {
                    j.raise(Class::Opaque, "[shell.eval.heredoc] an unquoted here-document expands a prompt, or arithmetic or a subscript naming a variable whose value runs code");
                }
                if let Some(name) = (!quoted)
                    .then(|| super::secret_expanded(content, false))
                    .flatten()
                {
                    super::secret_variable(j, &name);
                }
                stdin = Stdin::Text(content.clone());
            }
            _ => j.raise(Class::Opaque, "[shell.redirect] redirection not understood"),
        }
    }
    stdin
}

/// An unquoted here-document's text expands `${x@P}`, or arithmetic or a subscript (`$((x))`,
/// `$[x]`, `${a[x]}`) that names a variable whose value runs code (see `shell::evaluated`).
fn expands_code(content: &str, scope: &Scope) -> bool {
    let arithmetic = ["$((", "$[", "${"].iter().any(|m| content.contains(m));
    content.contains("@P}") || (arithmetic && names_run_code(content, &scope.vars))
}
