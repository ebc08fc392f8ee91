//! A profile's `[network]` table: the mode, and for `proxy` mode the allowed and denied host
//! names, the private ranges the proxy may reach, a hosts file and the per-run limits.
#![forbid(unsafe_code)]

use super::Profile;
use super::ProfileError;
use super::limits::{parse_count, parse_size};
use super::raw::RawNetwork;
use crate::capability::Origin;
use crate::proxy::{PrivateRange, parse_cidr, parse_host_rule};
use std::ops::Range;
use std::path::{Path, PathBuf};

type OriginAt<'a> = &'a dyn Fn(Range<usize>, &str) -> Origin;

fn invalid(o: &Origin, message: String) -> ProfileError {
    ProfileError::Invalid {
        source_name: o.source.clone(),
        line: o.line,
        key: o.key.clone(),
        message,
    }
}

/// Apply one file's `[network]` table: `mode`, `hosts` and the limits replace the parent's;
/// `allow`, `deny` and `private` are appended.
pub(super) fn apply_network(
    p: &mut Profile,
    n: RawNetwork,
    source_name: &str,
    origin: OriginAt<'_>,
) -> Result<(), ProfileError> {
    if let Some(m) = n.mode {
        p.network = (*m.get_ref(), origin(m.span(), "network.mode"));
    }
    let rules = &mut p.net_rules;
    for (items, key, list) in [
        (n.allow, "network.allow", &mut rules.allow),
        (n.deny, "network.deny", &mut rules.deny),
    ] {
        for it in items {
            let o = origin(it.span(), key);
            let r =
                parse_host_rule(it.get_ref(), o.clone()).map_err(|e| invalid(&o, e.to_string()))?;
            if !list
                .iter()
                .any(|x| x.pattern == r.pattern && x.port == r.port)
            {
                list.push(r);
            }
        }
    }
    for it in n.private {
        let o = origin(it.span(), "network.private");
        let range = parse_cidr(it.get_ref()).map_err(|e| invalid(&o, e.to_string()))?;
        rules.private.push(PrivateRange { range, origin: o });
    }
    if let Some(h) = n.hosts {
        rules.hosts = Some(hosts_path(h.get_ref(), source_name));
    }
    type Parser = fn(&toml::Value) -> Result<Option<u64>, String>;
    let limits: [(_, _, Parser, _); 2] = [
        (
            n.connections,
            "network.connections",
            parse_count,
            &mut rules.max_connections,
        ),
        (n.bytes, "network.bytes", parse_size, &mut rules.max_bytes),
    ];
    for (v, key, parse, dst) in limits {
        if let Some(v) = v {
            let o = origin(v.span(), key);
            *dst = parse(v.get_ref()).map_err(|m| invalid(&o, m))?;
        }
    }
    Ok(())
}

/// A relative hosts file is taken from the profile file's directory.
fn hosts_path(text: &str, source_name: &str) -> PathBuf {
    let p = Path::new(text);
    if p.is_absolute() || source_name.starts_with("builtin:") {
        return p.to_path_buf();
    }
    Path::new(source_name)
        .parent()
        .unwrap_or(Path::new("."))
        .join(p)
}
