//! Addresses the proxy never connects to unless `network.private` lists them: loopback,
//! private, link-local, CGNAT, multicast, cloud metadata and reserved ranges, v4 and v6
//! (v4-mapped and NAT64 v6 addresses are judged by the v4 address inside).
#![forbid(unsafe_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// v4 ranges: (first octets, prefix length, kind). Checked in order, so the metadata address
/// is named before the link-local range that holds it.
const V4: &[([u8; 4], u8, &str)] = &[
    ([169, 254, 169, 254], 32, "cloud-metadata"),
    ([100, 100, 100, 200], 32, "cloud-metadata"),
    ([0, 0, 0, 0], 8, "unspecified"),
    ([10, 0, 0, 0], 8, "private"),
    ([100, 64, 0, 0], 10, "cgnat"),
    ([127, 0, 0, 0], 8, "loopback"),
    ([169, 254, 0, 0], 16, "link-local"),
    ([172, 16, 0, 0], 12, "private"),
    ([192, 0, 0, 0], 24, "reserved"),
    ([192, 0, 2, 0], 24, "documentation"),
    ([192, 88, 99, 0], 24, "reserved"),
    ([192, 168, 0, 0], 16, "private"),
    ([198, 18, 0, 0], 15, "benchmarking"),
    ([198, 51, 100, 0], 24, "documentation"),
    ([203, 0, 113, 0], 24, "documentation"),
    ([224, 0, 0, 0], 4, "multicast"),
    ([240, 0, 0, 0], 4, "reserved"),
];

fn v4_kind(a: Ipv4Addr) -> Option<&'static str> {
    let x = u32::from(a);
    V4.iter().find_map(|(net, len, kind)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
        (x & mask == u32::from(Ipv4Addr::from(*net)) & mask).then_some(*kind)
    })
}

fn v6_kind(a: Ipv6Addr) -> Option<&'static str> {
    let seg = a.segments();
    let x = u128::from(a);
    if let Some(v4) = a.to_ipv4_mapped() {
        return v4_kind(v4);
    }
    if x >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        // NAT64: the gateway would connect to the v4 address inside.
        let v4 = Ipv4Addr::from((x & 0xffff_ffff) as u32);
        return v4_kind(v4).or(Some("nat64"));
    }
    if a == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("cloud-metadata");
    }
    match seg[0] {
        _ if a.is_unspecified() => Some("unspecified"),
        _ if a.is_loopback() => Some("loopback"),
        _ if x >> 96 == 0 => Some("v4-compatible"),
        s if s & 0xfe00 == 0xfc00 => Some("private"),
        s if s & 0xffc0 == 0xfe80 => Some("link-local"),
        s if s & 0xffc0 == 0xfec0 => Some("site-local"),
        s if s & 0xff00 == 0xff00 => Some("multicast"),
        0x2001 if seg[1] == 0x0db8 => Some("documentation"),
        0x2001 if seg[1] < 0x0200 => Some("reserved"),
        0x2002 => Some("6to4"),
        _ => None,
    }
}

/// The kind of a special address, or `None` for a public one.
pub fn special_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => v4_kind(a),
        IpAddr::V6(a) => v6_kind(a),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::special_kind;

    fn kind(s: &str) -> Option<&'static str> {
        special_kind(s.parse().unwrap())
    }

    #[test]
    fn special_ranges_are_named() {
        for (a, k) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.31.0.1", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "cgnat"),
            ("169.254.169.254", "cloud-metadata"),
            ("169.254.1.1", "link-local"),
            ("224.0.0.1", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "cloud-metadata"),
            ("64:ff9b::a9fe:a9fe", "cloud-metadata"),
            ("fd00:ec2::254", "cloud-metadata"),
            ("fc00::1", "private"),
            ("fe80::1", "link-local"),
            ("ff02::1", "multicast"),
        ] {
            assert_eq!(kind(a), Some(k), "{a}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for a in [
            "93.184.215.14",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
        ] {
            assert_eq!(kind(a), None, "{a}");
        }
    }
}
