//! A profile's `[network]` table: the mode, and for `proxy` mode the allowed and denied host
//! names, the private ranges the proxy may reach, a hosts file and the per-run limits.
#![forbid(unsafe_code)]

use super::Profile;
use super::ProfileError;
use super::limits::{parse_count, parse_size};
use super::raw::RawNetwork;
use crate::capability::Origin;
use crate::capability::{PrivateRange, parse_cidr, parse_host_rule};
use std::ops::Range;
use std::path::{Path, PathBuf};

type OriginAt<'a> = &'a dyn Fn(Range<usize>, &str) -> Origin;

fn invalid(o: &Origin, message: String) -> ProfileError {
    ProfileError::Invalid {
        at: o.clone(),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::capability::NetworkMode;
    use crate::profile::{Profile, ProfileError};

    #[test]
    fn a_proxy_table_parses_with_origins() {
        let p = Profile::parse(
            "/p/x.toml",
            "[network]\nmode = \"proxy\"\nallow = [\"Example.org.\", \"*.a.org:443\"]\ndeny = [\"b.a.org\"]\nprivate = [\"10.0.0.0/8\"]\nhosts = \"h\"\nconnections = 5\nbytes = \"1MiB\"\n",
        )
        .unwrap();
        assert_eq!(p.network.0, NetworkMode::Proxy);
        let r = &p.net_rules;
        assert_eq!(r.allow[0].pattern, "example.org");
        assert_eq!(r.allow[1].port, Some(443));
        assert_eq!(r.allow[1].origin.line, 3);
        assert_eq!(r.deny[0].pattern, "b.a.org");
        assert_eq!(r.private[0].range.to_string(), "10.0.0.0/8");
        assert_eq!(r.hosts.as_deref(), Some(std::path::Path::new("/p/h")));
        assert_eq!((r.max_connections, r.max_bytes), (Some(5), Some(1 << 20)));
    }

    #[test]
    fn bad_entries_name_their_line_and_key() {
        for (text, key) in [
            (
                "[network]\nmode = \"proxy\"\nallow = [\"10.0.0.1\"]\n",
                "network.allow",
            ),
            (
                "[network]\nmode = \"proxy\"\ndeny = [\"a.*.b\"]\n",
                "network.deny",
            ),
            (
                "[network]\nmode = \"proxy\"\nprivate = [\"10.0.0.0/33\"]\n",
                "network.private",
            ),
            (
                "[network]\nmode = \"proxy\"\nbytes = \"lots\"\n",
                "network.bytes",
            ),
        ] {
            match Profile::parse("x.toml", text) {
                Err(ProfileError::Invalid { at, .. }) => {
                    assert_eq!((at.line, &*at.key), (3, key), "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_extending_profile_appends_names() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("base.toml");
        std::fs::write(&base, "[network]\nmode = \"proxy\"\nallow = [\"a.org\"]\n").unwrap();
        let p = Profile::parse(
            &dir.path().join("x.toml").display().to_string(),
            "extends = \"base.toml\"\n[network]\nallow = [\"b.org\"]\n",
        )
        .unwrap();
        assert_eq!(p.network.0, NetworkMode::Proxy);
        let names: Vec<&str> = p
            .net_rules
            .allow
            .iter()
            .map(|r| r.pattern.as_str())
            .collect();
        assert_eq!(names, ["a.org", "b.org"]);
    }
}
