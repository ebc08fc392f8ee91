//! What the proxy saw: one record per connection the command asked for, allowed or refused,
//! with the bytes relayed each way; and the run's shared budget of connections and bytes.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How the command asked for a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetProtocol {
    /// A plain `http://` request forwarded by the proxy.
    Http,
    /// An HTTP `CONNECT` tunnel.
    Connect,
    /// A SOCKS5 `CONNECT`.
    Socks5,
}

/// Whether the proxy connected.
#[expect(
    missing_docs,
    reason = "a wire type: doc comments become part of its JSON schema"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NetDecision {
    Allow,
    Deny,
}

/// One connection the command asked the proxy for.
#[expect(
    missing_docs,
    reason = "a wire type: doc comments become part of its JSON schema"
)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetRecord {
    pub host: String,
    pub port: u16,
    pub protocol: NetProtocol,
    pub decision: NetDecision,
    /// The rule that decided, or why the connection was refused.
    pub rule: String,
    /// The address the proxy connected to, when it did.
    pub address: Option<String>,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

/// A record being filled while its connection runs.
#[derive(Debug)]
pub(super) struct Live {
    pub(super) head: Mutex<NetRecord>,
    pub(super) up: AtomicU64,
    pub(super) down: AtomicU64,
}

impl Live {
    /// Note on the record that the run's byte budget cut this connection short.
    pub(super) fn limit_reached(&self) {
        let mut g = match self.head.lock() {
            Ok(g) => g,
            Err(e) => e.into_inner(),
        };
        if !g.rule.contains("network.bytes") {
            g.rule.push_str("; cut off: network.bytes limit reached");
        }
    }

    fn snapshot(&self) -> NetRecord {
        let mut r = self
            .head
            .lock()
            .map_or_else(|e| e.into_inner().clone(), |g| g.clone());
        r.bytes_up = self.up.load(Ordering::Relaxed);
        r.bytes_down = self.down.load(Ordering::Relaxed);
        r
    }
}

/// Refused attempts kept per run: past this, they are counted, not kept (a command can make
/// refused attempts as fast as it likes, and the records live in sbx, outside its limits).
const MAX_REFUSED: u64 = 1000;
/// A recorded host name is cut to this many bytes (a DNS name has at most 253).
const MAX_HOST: usize = 256;

/// The run's records and what is left of its limits.
#[derive(Debug, Default)]
pub(super) struct Ledger {
    records: Mutex<Vec<Arc<Live>>>,
    /// Refused attempts so far, and those past [`MAX_REFUSED`] left out.
    refused: AtomicU64,
    left_out: AtomicU64,
    opened: AtomicU64,
    bytes: AtomicU64,
    max_connections: Option<u64>,
    max_bytes: Option<u64>,
}

impl Ledger {
    pub(super) fn new(max_connections: Option<u64>, max_bytes: Option<u64>) -> Self {
        Self {
            max_connections,
            max_bytes,
            ..Self::default()
        }
    }

    pub(super) fn add(&self, mut rec: NetRecord) -> Arc<Live> {
        if rec.host.len() > MAX_HOST {
            let mut cut = MAX_HOST;
            while !rec.host.is_char_boundary(cut) {
                cut -= 1;
            }
            rec.host.truncate(cut);
            rec.host.push_str("...");
        }
        let refused = rec.decision == NetDecision::Deny;
        let live = Arc::new(Live {
            head: Mutex::new(rec),
            up: AtomicU64::new(0),
            down: AtomicU64::new(0),
        });
        if refused && self.refused.fetch_add(1, Ordering::Relaxed) >= MAX_REFUSED {
            self.left_out.fetch_add(1, Ordering::Relaxed);
            return live;
        }
        match self.records.lock() {
            Ok(mut v) => v.push(live.clone()),
            Err(e) => e.into_inner().push(live.clone()),
        }
        live
    }

    /// Take one connection from the budget; `Err` names the limit when none is left.
    pub(super) fn open_connection(&self) -> Result<(), String> {
        let n = self.opened.fetch_add(1, Ordering::Relaxed) + 1;
        match self.max_connections {
            Some(max) if n > max => Err(format!("network.connections limit ({max}) reached")),
            _ => Ok(()),
        }
    }

    /// Count `n` relayed bytes; `false` once the run's byte budget is spent.
    pub(super) fn spend(&self, n: u64) -> bool {
        let total = self.bytes.fetch_add(n, Ordering::Relaxed) + n;
        self.max_bytes.is_none_or(|m| total <= m)
    }

    pub(super) fn snapshot(&self) -> Vec<NetRecord> {
        let v = match self.records.lock() {
            Ok(v) => v.clone(),
            Err(e) => e.into_inner().clone(),
        };
        let mut out: Vec<NetRecord> = v.iter().map(|l| l.snapshot()).collect();
        let left_out = self.left_out.load(Ordering::Relaxed);
        if left_out > 0 {
            out.push(NetRecord {
                host: String::new(),
                port: 0,
                protocol: NetProtocol::Http,
                decision: NetDecision::Deny,
                rule: format!("{left_out} more refused attempts, not recorded one by one"),
                address: None,
                bytes_up: 0,
                bytes_down: 0,
            });
        }
        out
    }
}

#[cfg(test)]
mod ledger_tests {
    use super::*;

    fn refused(host: &str) -> NetRecord {
        NetRecord {
            host: host.into(),
            port: 443,
            protocol: NetProtocol::Connect,
            decision: NetDecision::Deny,
            rule: "not in network.allow".into(),
            address: None,
            bytes_up: 0,
            bytes_down: 0,
        }
    }

    /// A flood of refused attempts with long names keeps at most [`MAX_REFUSED`] records, each
    /// name cut short, and says how many more there were; an allowed one is still kept.
    #[test]
    fn refused_attempts_are_bounded() {
        let ledger = Ledger::new(None, None);
        let long = "a".repeat(60_000);
        for _ in 0..MAX_REFUSED + 5 {
            ledger.add(refused(&long));
        }
        let mut ok = refused("allowed.test");
        ok.decision = NetDecision::Allow;
        ledger.add(ok);
        let r = ledger.snapshot();
        assert_eq!(r.len() as u64, MAX_REFUSED + 2);
        assert!(r.iter().all(|x| x.host.len() <= MAX_HOST + 3));
        assert!(r.iter().any(|x| x.host == "allowed.test"));
        assert_eq!(
            r.last().map(|x| x.rule.as_str()),
            Some("5 more refused attempts, not recorded one by one")
        );
    }
}
