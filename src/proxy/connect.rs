//! Deciding and opening one upstream connection: the name against the rules, the name
//! resolved by the proxy (a hosts file first, when the profile names one), every address
//! against the special ranges, and the address of the socket actually connected checked
//! again before a byte is relayed.
#![forbid(unsafe_code)]

use crate::capability::{NetRules, normalize_host};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use tokio::net::TcpStream;

/// An allowed, connected upstream, with the rule that allowed it.
pub(super) struct Upstream {
    pub(super) stream: TcpStream,
    pub(super) rule: String,
    pub(super) addr: SocketAddr,
}

/// Why a connection was refused, and the rule or reason to record.
#[derive(Debug)]
pub(super) struct Refused(pub(super) String);

/// The profile's hosts file, read once when the proxy starts: `(address, names)` per line.
#[derive(Debug, Default)]
pub(super) struct Hosts(Vec<(IpAddr, Vec<String>)>);

impl Hosts {
    /// `address name...` lines, `#` comments; an unreadable file holds nothing.
    pub(super) fn load(path: Option<&Path>) -> Self {
        let text = path
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        Self(
            text.lines()
                .filter_map(|l| {
                    let mut words = l.split('#').next().unwrap_or("").split_whitespace();
                    let ip: IpAddr = words.next()?.parse().ok()?;
                    Some((ip, words.map(normalize_host).collect()))
                })
                .collect(),
        )
    }

    fn lookup(&self, host: &str) -> Vec<IpAddr> {
        self.0
            .iter()
            .filter(|(_, names)| names.iter().any(|n| n == host))
            .map(|(ip, _)| *ip)
            .collect()
    }
}

async fn resolve(hosts: &Hosts, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refused> {
    let found = hosts.lookup(host);
    if !found.is_empty() {
        return Ok(found
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect());
    }
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => Ok(addrs.collect()),
        Err(e) => Err(Refused(format!("cannot resolve {host}: {e}"))),
    }
}

/// Connect to `host:port`, whose name `rule` allowed, at an address the rules admit.
pub(super) async fn open(
    rules: &NetRules,
    hosts: &Hosts,
    host: &str,
    port: u16,
    rule: String,
) -> Result<Upstream, Refused> {
    let host = normalize_host(host);
    let addrs = resolve(hosts, &host, port).await?;
    let mut last = Refused(format!("{host} has no address"));
    for addr in addrs {
        if let Some(why) = rules.judge_addr(addr.ip()) {
            last = Refused(why);
            continue;
        }
        let stream = match TcpStream::connect(addr).await {
            Ok(s) => s,
            Err(e) => {
                last = Refused(format!("connecting to {addr}: {e}"));
                continue;
            }
        };
        // The address of the socket itself, not of the lookup: a resolver that answers
        // differently the second time gains nothing.
        let peer = stream
            .peer_addr()
            .map_err(|e| Refused(format!("connected to {addr} but cannot read the peer: {e}")))?;
        if let Some(why) = rules.judge_addr(peer.ip()) {
            return Err(Refused(why));
        }
        let _ = stream.set_nodelay(true);
        return Ok(Upstream {
            stream,
            rule,
            addr: peer,
        });
    }
    Err(last)
}
