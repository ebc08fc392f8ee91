//! The `proxy` network mode: a sandboxed command reaches only the host names its profile
//! allows. The command keeps its own network namespace with only loopback; sbx runs an HTTP
//! and SOCKS5 proxy outside it, on a listening socket that the sandbox's init opens on the
//! namespace's loopback and hands to sbx. The proxy resolves names itself and checks the
//! address of every socket it connects before relaying a byte.
#![forbid(unsafe_code)]

pub use crate::capability::{
    Cidr, HostRule, NameVerdict, NetRules, PrivateRange, RuleError, UNLISTED, normalize_host,
    parse_cidr, parse_host_rule, special_kind,
};

mod connect;
mod http;
mod record;
mod relay;
mod server;
mod socks;

pub use record::{NetDecision, NetProtocol, NetRecord};
pub use server::{Approver, HostAnswer, ListenerSource, ProxyHandle, start};
