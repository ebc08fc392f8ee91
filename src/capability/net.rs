//! The `proxy` network mode's rules: which host names the command may reach, which private
//! address ranges the proxy may connect to, and the per-run limits. Pure data and matching.
#![forbid(unsafe_code)]

use super::Origin;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::path::PathBuf;

/// One `allow` or `deny` entry: an exact name or `*.` for subdomains at any depth (not the
/// apex), with an optional port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRule {
    /// Lower-case, without a trailing dot; `*.example.org` for subdomains.
    pub pattern: String,
    /// `None`: any port.
    pub port: Option<u16>,
    /// The profile line it comes from.
    pub origin: Origin,
}

/// An address range, `10.0.0.0/8` or `fd00::/8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cidr {
    /// The first address of the range.
    pub addr: IpAddr,
    /// How many leading bits are fixed.
    pub prefix: u8,
}

/// A `private` entry with its origin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrivateRange {
    /// The range the proxy may connect to.
    pub range: Cidr,
    /// The profile line it comes from.
    pub origin: Origin,
}

/// Everything the proxy decides by. Empty outside `proxy` mode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetRules {
    /// Names the command may reach.
    pub allow: Vec<HostRule>,
    /// Names refused even where an allow entry matches.
    pub deny: Vec<HostRule>,
    /// Private, loopback and other special ranges the proxy may connect to.
    pub private: Vec<PrivateRange>,
    /// A hosts file consulted before the host's resolver (tests, air-gapped mirrors).
    #[serde(default)]
    pub hosts: Option<PathBuf>,
    /// Connections the proxy opens per run.
    #[serde(default)]
    pub max_connections: Option<u64>,
    /// Bytes relayed per run, both directions together.
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// Why a rule text is not a host rule.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleError {
    /// An empty host name.
    #[error("`{0}`: an empty host name")]
    Empty(String),
    /// A `*` elsewhere than as a leading `*.`.
    #[error("`{0}`: `*` is allowed only as a leading `*.`")]
    Wildcard(String),
    /// A port that is not a number from 1 to 65535.
    #[error("`{0}`: the port is not a number from 1 to 65535")]
    Port(String),
    /// An address where a host name belongs.
    #[error("`{0}`: an address, not a host name (the proxy reaches names only)")]
    Address(String),
    /// Characters no host name has.
    #[error("`{0}`: not a host name (letters, digits, `-`, `_` and `.` only)")]
    Name(String),
    /// A `private` entry that is no address range.
    #[error("`{0}`: not an address range such as 10.0.0.0/8 or fd00::/8")]
    Range(String),
}

/// Lower-case a host name and drop one trailing dot.
pub fn normalize_host(host: &str) -> String {
    let h = host.strip_suffix('.').unwrap_or(host);
    h.to_ascii_lowercase()
}

/// Parse `name`, `*.name`, `name:port` or `*.name:port`.
pub fn parse_host_rule(text: &str, origin: Origin) -> Result<HostRule, RuleError> {
    let err_text = || text.to_string();
    let (name, port) = match text.rsplit_once(':') {
        Some((n, p)) => {
            let port: u16 = p.parse().map_err(|_| RuleError::Port(err_text()))?;
            if port == 0 {
                return Err(RuleError::Port(err_text()));
            }
            (n, Some(port))
        }
        None => (text, None),
    };
    let pattern = normalize_host(name);
    let bare = pattern.strip_prefix("*.").unwrap_or(&pattern);
    if bare.is_empty() {
        return Err(RuleError::Empty(err_text()));
    }
    if bare.contains('*') {
        return Err(RuleError::Wildcard(err_text()));
    }
    if bare.parse::<IpAddr>().is_ok() || bare.starts_with('[') {
        return Err(RuleError::Address(err_text()));
    }
    let ok = bare.split('.').all(|l| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if !ok {
        return Err(RuleError::Name(err_text()));
    }
    Ok(HostRule {
        pattern,
        port,
        origin,
    })
}

/// Parse `10.0.0.0/8`, `fd00::/8`, or a bare address (a single-address range).
pub fn parse_cidr(text: &str) -> Result<Cidr, RuleError> {
    let bad = || RuleError::Range(text.to_string());
    let (a, p) = text.split_once('/').unwrap_or((text, ""));
    let addr: IpAddr = a.parse().map_err(|_| bad())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = if p.is_empty() {
        max
    } else {
        p.parse::<u8>().map_err(|_| bad())?
    };
    if prefix > max {
        return Err(bad());
    }
    Ok(Cidr { addr, prefix })
}

impl Cidr {
    /// Whether `ip` (v4-mapped v6 taken as v4) lies in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr.to_canonical(), ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                let shift = 32 - u32::from(self.prefix.min(32));
                let mask = u32::MAX.checked_shl(shift).unwrap_or(0);
                u32::from(net) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                let shift = 128 - u32::from(self.prefix.min(128));
                let mask = u128::MAX.checked_shl(shift).unwrap_or(0);
                u128::from(net) & mask == u128::from(a) & mask
            }
            (IpAddr::V4(_), IpAddr::V6(_)) | (IpAddr::V6(_), IpAddr::V4(_)) => false,
        }
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl HostRule {
    /// Whether `host` (normalised) and `port` fall under this rule.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match self.pattern.strip_prefix("*.") {
            Some(suffix) => host
                .strip_suffix(suffix)
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            None => host == self.pattern,
        }
    }

    /// The rule as written: `*.example.org:443`.
    pub fn text(&self) -> String {
        match self.port {
            Some(p) => format!("{}:{p}", self.pattern),
            None => self.pattern.clone(),
        }
    }
}

/// What the rules say about a name, before any address is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameVerdict {
    /// Allowed by this rule (`network.allow` entry).
    Allow(String),
    /// Refused by a `network.deny` entry, or an IP literal: the reason names which.
    Deny(String),
    /// No entry matches: refused, unless the run has someone to ask.
    Unlisted,
}

/// The reason recorded for a name no entry matches.
pub const UNLISTED: &str = "not in network.allow";

impl NetRules {
    /// Names both allow (as written), denials of either, ranges both admit, the smaller limits.
    pub fn meet(&self, o: &Self) -> Self {
        let same = |a: &HostRule, b: &HostRule| a.pattern == b.pattern && a.port == b.port;
        let mut deny = self.deny.clone();
        deny.extend(
            o.deny
                .iter()
                .filter(|d| !self.deny.iter().any(|x| same(x, d)))
                .cloned(),
        );
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        Self {
            allow: self
                .allow
                .iter()
                .filter(|a| o.allow.iter().any(|b| same(a, b)))
                .cloned()
                .collect(),
            deny,
            private: self
                .private
                .iter()
                .filter(|p| o.private.iter().any(|q| q.range == p.range))
                .cloned()
                .collect(),
            hosts: self.hosts.clone().filter(|h| o.hosts.as_ref() == Some(h)),
            max_connections: min(self.max_connections, o.max_connections),
            max_bytes: min(self.max_bytes, o.max_bytes),
        }
    }

    /// Whether everything `self` lets through, `o` lets through too.
    pub fn is_narrower_than(&self, o: &Self) -> bool {
        let same = |a: &HostRule, b: &HostRule| a.pattern == b.pattern && a.port == b.port;
        let le = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(x), Some(y)) => x <= y,
        };
        self.allow
            .iter()
            .all(|a| o.allow.iter().any(|b| same(a, b)))
            && o.deny.iter().all(|d| self.deny.iter().any(|x| same(x, d)))
            && self
                .private
                .iter()
                .all(|p| o.private.iter().any(|q| q.range == p.range))
            && (self.hosts.is_none() || self.hosts == o.hosts)
            && le(self.max_connections, o.max_connections)
            && le(self.max_bytes, o.max_bytes)
    }

    /// Deny before allow; an IP literal is never a name.
    pub fn judge_name(&self, host: &str, port: u16) -> NameVerdict {
        let h = normalize_host(host.trim_start_matches('[').trim_end_matches(']'));
        if h.parse::<IpAddr>().is_ok() {
            return NameVerdict::Deny("ip-literal: the proxy reaches names only".into());
        }
        if let Some(r) = self.deny.iter().find(|r| r.matches(&h, port)) {
            return NameVerdict::Deny(format!("network.deny {} ({})", r.text(), r.origin));
        }
        match self.allow.iter().find(|r| r.matches(&h, port)) {
            Some(r) => NameVerdict::Allow(format!("network.allow {} ({})", r.text(), r.origin)),
            None => NameVerdict::Unlisted,
        }
    }

    /// `None` when the proxy may connect to `ip`; else why not. Public addresses pass;
    /// special ones pass only inside a `private` range.
    pub fn judge_addr(&self, ip: IpAddr) -> Option<String> {
        let kind = super::addr::special_kind(ip)?;
        if self.private.iter().any(|p| p.range.contains(ip)) {
            return None;
        }
        Some(format!(
            "{kind} address {} (not in network.private)",
            ip.to_canonical()
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rule(t: &str) -> HostRule {
        parse_host_rule(t, Origin::builtin("t")).unwrap()
    }

    fn rules(allow: &[&str], deny: &[&str]) -> NetRules {
        NetRules {
            allow: allow.iter().map(|t| rule(t)).collect(),
            deny: deny.iter().map(|t| rule(t)).collect(),
            ..NetRules::default()
        }
    }

    fn allowed(r: &NetRules, h: &str, p: u16) -> bool {
        matches!(r.judge_name(h, p), NameVerdict::Allow(_))
    }

    #[test]
    fn wildcards_match_subdomains_at_any_depth_but_not_the_apex() {
        let r = rules(&["*.example.org"], &[]);
        assert!(allowed(&r, "a.example.org", 80));
        assert!(allowed(&r, "a.b.example.org", 443));
        assert!(!allowed(&r, "example.org", 80));
        assert!(!allowed(&r, "badexample.org", 80));
        assert!(!allowed(&r, "example.org.evil.io", 80));
    }

    #[test]
    fn names_are_case_insensitive_and_a_trailing_dot_is_ignored() {
        let r = rules(&["Example.ORG."], &[]);
        assert!(allowed(&r, "example.org", 80));
        assert!(allowed(&r, "EXAMPLE.org.", 80));
        assert!(!allowed(&r, "www.example.org", 80));
    }

    #[test]
    fn a_port_narrows_a_rule() {
        let r = rules(&["git.example.com:443"], &[]);
        assert!(allowed(&r, "git.example.com", 443));
        assert!(!allowed(&r, "git.example.com", 22));
    }

    #[test]
    fn deny_wins_over_allow() {
        let r = rules(&["*.example.org"], &["uploads.example.org"]);
        assert!(allowed(&r, "www.example.org", 443));
        match r.judge_name("uploads.example.org", 443) {
            NameVerdict::Deny(why) => assert!(why.contains("network.deny"), "{why}"),
            other => panic!("not denied: {other:?}"),
        }
        assert_eq!(r.judge_name("example.com", 443), NameVerdict::Unlisted);
    }

    #[test]
    fn ip_literals_are_never_names() {
        let r = rules(&["*.example.org"], &[]);
        for h in ["127.0.0.1", "[::1]", "::1", "169.254.169.254"] {
            match r.judge_name(h, 80) {
                NameVerdict::Deny(why) => assert!(why.starts_with("ip-literal"), "{why}"),
                other => panic!("{h}: {other:?}"),
            }
        }
        assert!(parse_host_rule("10.0.0.1", Origin::builtin("t")).is_err());
    }

    #[test]
    fn bad_rules_are_refused() {
        for t in ["", "*.", "a.*.b", "x:0", "x:70000", "a b", "*"] {
            assert!(parse_host_rule(t, Origin::builtin("t")).is_err(), "{t}");
        }
    }

    #[test]
    fn the_meet_of_two_rule_sets_is_narrower_than_both() {
        let mut a = rules(&["a.org", "*.b.org", "c.org:443"], &["x.b.org"]);
        let mut b = rules(&["a.org", "c.org"], &["y.a.org"]);
        a.max_connections = Some(10);
        b.max_bytes = Some(100);
        let m = a.meet(&b);
        let names: Vec<String> = m.allow.iter().map(HostRule::text).collect();
        assert_eq!(names, ["a.org"]);
        assert_eq!(m.deny.len(), 2);
        assert_eq!((m.max_connections, m.max_bytes), (Some(10), Some(100)));
        assert!(m.is_narrower_than(&a) && m.is_narrower_than(&b));
        assert!(!a.is_narrower_than(&b));
        assert!(allowed(&a, "z.b.org", 80));
        assert!(!allowed(&m, "z.b.org", 80));
    }

    #[test]
    fn private_ranges_admit_special_addresses() {
        let mut r = rules(&[], &[]);
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(r.judge_addr(lo).is_some());
        assert!(r.judge_addr(mapped).is_some());
        r.private.push(PrivateRange {
            range: parse_cidr("127.0.0.1/32").unwrap(),
            origin: Origin::builtin("t"),
        });
        assert_eq!(r.judge_addr(lo), None);
        assert_eq!(r.judge_addr(mapped), None);
        assert!(r.judge_addr("127.0.0.2".parse().unwrap()).is_some());
        assert!(r.judge_addr("169.254.169.254".parse().unwrap()).is_some());
        assert_eq!(r.judge_addr("93.184.215.14".parse().unwrap()), None);
    }
}
