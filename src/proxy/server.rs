//! The proxy of one run: a thread with its own small tokio runtime that accepts the command's
//! connections, speaks HTTP (forwarding and CONNECT) or SOCKS5 by the first byte, and relays.
//! It is a thread of sbx, so it cannot outlive sbx; [`ProxyHandle::finish`] stops it when the
//! run ends.
#![forbid(unsafe_code)]

use super::connect::{Hosts, Refused, Upstream, open};
use super::record::{Ledger, Live, NetDecision, NetProtocol, NetRecord};
use crate::capability::{NameVerdict, NetRules, UNLISTED};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// What someone asked about a name no `network.allow` entry matches answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostAnswer {
    /// Connect; the text is recorded as the rule.
    Allow(String),
    /// Refuse; the text is recorded as the reason.
    Deny(String),
}

/// Asks about `(host, port)` when no `network.allow` entry matches it (`sbx serve` turns this
/// into an approval request). Only the name check is lifted: addresses are judged as always.
pub type Approver =
    Arc<dyn Fn(String, u16) -> Pin<Box<dyn Future<Output = HostAnswer> + Send>> + Send + Sync>;

/// What every connection handler shares.
pub(super) struct Ctx {
    pub(super) rules: NetRules,
    pub(super) ledger: Ledger,
    hosts: Hosts,
    approver: Option<Approver>,
}

impl Ctx {
    /// The rule that lets `host:port` through by name, or why not.
    async fn judge(&self, host: &str, port: u16) -> Result<String, Refused> {
        match self.rules.judge_name(host, port) {
            NameVerdict::Allow(rule) => Ok(rule),
            NameVerdict::Deny(why) => Err(Refused(why)),
            NameVerdict::Unlisted => match &self.approver {
                None => Err(Refused(UNLISTED.into())),
                Some(ask) => match ask(crate::capability::normalize_host(host), port).await {
                    HostAnswer::Allow(rule) => Ok(rule),
                    HostAnswer::Deny(why) => Err(Refused(format!("{UNLISTED}; {why}"))),
                },
            },
        }
    }

    /// Decide and open `host:port`, recording the outcome either way.
    pub(super) async fn attempt(
        &self,
        host: &str,
        port: u16,
        protocol: NetProtocol,
    ) -> Result<(Upstream, Arc<Live>), Refused> {
        // Past the connection limit, nothing is resolved or connected.
        let outcome = match self.judge(host, port).await {
            Ok(rule) => match self.ledger.open_connection() {
                Ok(()) => open(&self.rules, &self.hosts, host, port, rule).await,
                Err(why) => Err(Refused(why)),
            },
            Err(r) => Err(r),
        };
        let mut rec = NetRecord {
            host: crate::capability::normalize_host(host),
            port,
            protocol,
            decision: NetDecision::Deny,
            rule: String::new(),
            address: None,
            bytes_up: 0,
            bytes_down: 0,
        };
        match outcome {
            Ok(up) => {
                rec.decision = NetDecision::Allow;
                rec.rule = up.rule.clone();
                rec.address = Some(up.addr.to_string());
                let live = self.ledger.add(rec);
                Ok((up, live))
            }
            Err(Refused(why)) => {
                rec.rule = why.clone();
                self.ledger.add(rec);
                Err(Refused(why))
            }
        }
    }
}

async fn handle(mut client: TcpStream, ctx: Arc<Ctx>) {
    let _ = client.set_nodelay(true);
    let mut first = [0u8; 1];
    match client.peek(&mut first).await {
        Ok(1) if first[0] == 5 => super::socks::serve(client, &ctx).await,
        Ok(1) => super::http::serve(client, &ctx).await,
        _ => {
            let _ = client.read(&mut first).await;
        }
    }
}

/// A running proxy. Dropping it stops it too; [`ProxyHandle::finish`] also returns the records.
pub struct ProxyHandle {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Vec<NetRecord>>>,
}

/// Where the proxy's listening socket comes from: called on the proxy's thread (it may block,
/// e.g. to receive the socket from the sandbox's init).
pub type ListenerSource = Box<dyn FnOnce() -> std::io::Result<std::net::TcpListener> + Send>;

async fn accept_loop(
    listener: std::net::TcpListener,
    ctx: Arc<Ctx>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = &mut stop => break,
            r = listener.accept() => match r {
                Ok((s, _)) => {
                    tokio::spawn(handle(s, ctx.clone()));
                }
                Err(_) => tokio::task::yield_now().await,
            },
        }
    }
}

/// Start the proxy on its own thread.
pub fn start(
    source: ListenerSource,
    rules: NetRules,
    approver: Option<Approver>,
) -> std::io::Result<ProxyHandle> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let ctx = Arc::new(Ctx {
        ledger: Ledger::new(rules.max_connections, rules.max_bytes),
        hosts: Hosts::load(rules.hosts.as_deref()),
        rules,
        approver,
    });
    let thread = std::thread::Builder::new()
        .name("sbx-proxy".into())
        .spawn(move || {
            let Ok(listener) = source() else {
                return Vec::new();
            };
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return Vec::new();
            };
            rt.block_on(accept_loop(listener, ctx.clone(), rx));
            // Ends every connection still open, without waiting for a name lookup in progress
            // on the blocking pool (it holds no socket of the command's).
            rt.shutdown_background();
            ctx.ledger.snapshot()
        })?;
    Ok(ProxyHandle {
        stop: Some(tx),
        thread: Some(thread),
    })
}

impl ProxyHandle {
    /// Stop accepting, end every connection, and return what the proxy recorded.
    pub fn finish(mut self) -> Vec<NetRecord> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
