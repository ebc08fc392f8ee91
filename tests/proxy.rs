//! The `proxy` network mode, end to end: loopback fixture servers stand in for allowed and
//! refused hosts, named through a hosts file that only the proxy reads. Every refusal is
//! paired with the same fixture reached under a wider rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod proxy_common;

use common::{Scratch, text, users};
use proxy_common::{BODY, curl, decision, fixture, records, serve, setup};
use std::net::TcpListener;

#[test]
fn an_allowed_name_is_reached_over_http_and_through_a_connect_tunnel() {
    for user in users() {
        let t = setup(user);
        let narrow = t.narrow();
        let url = format!("http://allowed.test:{}/x", t.port);
        let script = format!("{} ; curl -sS -p --max-time 20 {url}; echo", curl(&url));
        let (out, rep, all) = t.run(&narrow, &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
        let recs = records(&rep, "allowed.test");
        let protocols: Vec<&str> = recs
            .iter()
            .map(|r| r["protocol"].as_str().unwrap())
            .collect();
        assert_eq!(protocols, ["http", "connect"], "{rep}");
        for r in recs {
            assert_eq!(r["decision"], "allow");
            assert_eq!(r["port"], t.port);
            assert!(
                r["rule"]
                    .as_str()
                    .unwrap()
                    .contains("network.allow allowed.test"),
                "{r}"
            );
            assert_eq!(r["address"], format!("127.0.0.1:{}", t.port));
            assert!(r["bytes_up"].as_u64().unwrap() > 0, "{r}");
            assert!(
                r["bytes_down"].as_u64().unwrap() >= BODY.len() as u64,
                "{r}"
            );
        }
    }
}

#[test]
fn a_name_not_listed_is_refused_and_reached_once_listed() {
    for user in users() {
        let t = setup(user);
        let script = curl(&format!("http://other.test:{}/", t.port));
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert!(!out.contains(BODY), "{}: {all}", t.s.label());
        assert_eq!(
            decision(&rep, "other.test"),
            ("deny".into(), "not in network.allow".into())
        );
        let (out, rep, all) = t.run(&t.wide(), &script);
        assert!(out.contains(BODY), "{}: {all}", t.s.label());
        assert_eq!(decision(&rep, "other.test").0, "allow");
    }
}

#[test]
fn a_denied_subdomain_under_an_allowed_wildcard_is_refused() {
    for user in users() {
        let t = setup(user);
        let script = format!(
            "{} ; {}",
            curl(&format!("http://a.wild.test:{}/", t.port)),
            curl(&format!("http://blocked.wild.test:{}/", t.port))
        );
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        assert_eq!(decision(&rep, "a.wild.test").0, "allow");
        let (d, rule) = decision(&rep, "blocked.wild.test");
        assert_eq!(d, "deny");
        assert!(rule.starts_with("network.deny blocked.wild.test"), "{rule}");
        let (out, _, all) = t.run(&t.wide(), &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
    }
}

#[test]
fn an_allowed_name_that_resolves_to_a_private_address_is_refused_unless_listed() {
    for user in users() {
        let t = setup(user);
        let script = curl(&format!("http://priv.test:{}/", t.port2));
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert!(!out.contains(BODY), "{}: {all}", t.s.label());
        let (d, rule) = decision(&rep, "priv.test");
        assert_eq!(d, "deny");
        assert!(rule.contains("loopback address 127.0.0.2"), "{rule}");
        let (out, rep, all) = t.run(&t.wide(), &script);
        assert!(out.contains(BODY), "{}: {all}", t.s.label());
        assert_eq!(decision(&rep, "priv.test").0, "allow");
    }
}

/// The metadata address is never connected to, so the pairing is the reason: the refusal
/// names the metadata range, found before any connection was tried.
#[test]
fn the_metadata_address_is_refused_also_as_a_v4_mapped_address() {
    for user in users() {
        let t = setup(user);
        let script = format!(
            "{} ; {}",
            curl("http://meta.test/latest/meta-data/"),
            curl("http://meta6.test/latest/meta-data/")
        );
        let (_, rep, _) = t.run(&t.narrow(), &script);
        for host in ["meta.test", "meta6.test"] {
            let (d, rule) = decision(&rep, host);
            assert_eq!(d, "deny", "{host}");
            assert!(
                rule.starts_with("cloud-metadata address 169.254.169.254"),
                "{host}: {rule}"
            );
        }
    }
}

#[test]
fn an_ip_literal_is_refused_and_the_same_fixture_is_reached_by_name() {
    for user in users() {
        let t = setup(user);
        let script = format!(
            "curl -sS --max-time 20 --noproxy '' http://127.0.0.1:{p}/; echo; {}",
            curl(&format!("http://allowed.test:{}/", t.port)),
            p = t.port
        );
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        let (d, rule) = decision(&rep, "127.0.0.1");
        assert_eq!(d, "deny");
        assert!(rule.starts_with("ip-literal"), "{rule}");
    }
}

#[test]
fn a_program_that_ignores_the_proxy_variables_cannot_connect() {
    for user in users() {
        let t = setup(user);
        let py = format!(
            "import socket\ntry:\n    s = socket.create_connection(('127.0.0.1', {}), timeout=10)\n    s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')\n    got = b''\n    while chunk := s.recv(4096):\n        got += chunk\n    print(got.decode())\nexcept OSError as e:\n    print('refused', e)\n",
            t.port
        );
        let script = format!(
            "python3 -c \"$PY\"; curl -sS --max-time 10 --noproxy '*' http://127.0.0.1:{}/; echo",
            t.port
        );
        let mut c = t.s.json_command(&t.narrow(), &script);
        c.env("PY", &py);
        let out = c.output().unwrap();
        assert!(
            !text(&out).contains(BODY),
            "{}: {}",
            t.s.label(),
            text(&out)
        );
        // Paired: the same program reaches the fixture under the host's network.
        let mut c = t.s.command("workspace-net", &script);
        c.env("PY", &py);
        let out = c.output().unwrap();
        assert_eq!(
            text(&out).matches(BODY).count(),
            2,
            "{}: {}",
            t.s.label(),
            text(&out)
        );
    }
}

#[test]
fn socks5_with_host_names_follows_the_same_rules() {
    for user in users() {
        let t = setup(user);
        let socks = |h: &str| {
            format!(
                "curl -sS --max-time 20 --socks5-hostname 127.0.0.1:3128 http://{h}:{}/; echo",
                t.port
            )
        };
        let script = format!("{}; {}", socks("allowed.test"), socks("other.test"));
        let (out, rep, all) = t.run(&t.narrow(), &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        assert_eq!(records(&rep, "allowed.test")[0]["protocol"], "socks5");
        assert_eq!(decision(&rep, "allowed.test").0, "allow");
        assert_eq!(decision(&rep, "other.test").0, "deny");
        let (out, _, all) = t.run(&t.wide(), &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
    }
}

#[test]
fn the_connection_limit_refuses_the_connection_past_it() {
    for user in users() {
        let t = setup(user);
        let one = t.profile(
            "one",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nconnections = 1",
        );
        let two = t.profile(
            "two",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nconnections = 2",
        );
        let url = format!("http://allowed.test:{}/", t.port);
        let script = format!("{} ; {}", curl(&url), curl(&url));
        let (out, rep, all) = t.run(&one, &script);
        assert_eq!(out.matches(BODY).count(), 1, "{}: {all}", t.s.label());
        let recs = records(&rep, "allowed.test");
        assert_eq!(recs[1]["decision"], "deny", "{rep}");
        assert!(
            recs[1]["rule"]
                .as_str()
                .unwrap()
                .contains("network.connections"),
            "{rep}"
        );
        let (out, _, all) = t.run(&two, &script);
        assert_eq!(out.matches(BODY).count(), 2, "{}: {all}", t.s.label());
    }
}

#[test]
fn the_byte_limit_cuts_a_download_short() {
    for user in users() {
        let t = setup(user);
        let big = fixture("127.0.0.1", vec![b'x'; 4 << 20]);
        let small = t.profile(
            "small",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nbytes = \"1MiB\"",
        );
        let large = t.profile(
            "large",
            "allow = [\"allowed.test\"]\nprivate = [\"127.0.0.1/32\"]\nbytes = \"8MiB\"",
        );
        let script = format!("curl -sS --max-time 20 http://allowed.test:{big}/ | wc -c");
        let (out, rep, all) = t.run(&small, &script);
        let got: u64 = out.trim().parse().unwrap_or(u64::MAX);
        assert!(got < 1 << 20, "{}: {got} bytes: {all}", t.s.label());
        let (_, rule) = decision(&rep, "allowed.test");
        assert!(rule.contains("network.bytes limit reached"), "{rule}");
        let (out, _, all) = t.run(&large, &script);
        assert_eq!(
            out.trim(),
            (4u64 << 20).to_string(),
            "{}: {all}",
            t.s.label()
        );
    }
}

#[test]
fn the_report_says_how_the_proxy_is_reached() {
    for user in users() {
        let t = setup(user);
        let (_, rep, _) = t.run(&t.narrow(), "true");
        let net = rep["enforcement"]["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == "network")
            .unwrap()
            .clone();
        assert_eq!(net["status"], "enforced", "{net}");
        assert!(
            net["detail"]
                .as_str()
                .unwrap()
                .contains("proxy on 127.0.0.1:3128"),
            "{net}"
        );
        let out =
            t.s.json_command(&t.narrow(), "true")
                .env("SBX_DISABLE_USERNS", "1")
                .output()
                .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        let rep: serde_json::Value =
            serde_json::from_str(all.trim_end().lines().last().unwrap()).unwrap();
        let net = rep["enforcement"]["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == "network")
            .unwrap()
            .clone();
        assert_eq!(net["status"], "partial", "{net}");
        assert!(
            net["detail"].as_str().unwrap().contains("Landlock"),
            "{net}"
        );
        let doctor = |disable: bool| {
            let mut c = t.s.sbx(&["doctor"]);
            if disable {
                c.env("SBX_DISABLE_USERNS", "1");
            }
            let out = text(&c.output().unwrap());
            out.lines()
                .find(|l| l.contains("proxy network mode"))
                .unwrap_or_else(|| panic!("no proxy line: {out}"))
                .to_string()
        };
        let with = doctor(false);
        assert!(with.contains("own network namespace"), "{with}");
        let without = doctor(true);
        assert!(
            without.contains("Landlock allows TCP only to the proxy's port"),
            "{without}"
        );
    }
}

/// The built-in `workspace-registries` profile, with its names pointed at a loopback fixture
/// on port 443 by a hosts file (a profile that extends it): a listed registry is reached over
/// a CONNECT tunnel, the same fixture under an unlisted name or another port is not.
#[test]
fn workspace_registries_reaches_the_registries_and_nothing_else() {
    let Ok(l) = TcpListener::bind(("127.0.0.1", 443)) else {
        eprintln!("SKIP: cannot bind 127.0.0.1:443 for the registry fixture");
        return;
    };
    let p443 = serve(l, BODY.as_bytes().to_vec());
    let port = fixture("127.0.0.1", BODY.as_bytes().to_vec());
    for user in users() {
        let s = Scratch::new(user);
        s.write_profile("hosts", "127.0.0.1 pypi.org static.crates.io example.com\n");
        let hosts = s.root.path().join("hosts.toml");
        let prof = s.write_profile(
            "reg",
            &format!(
                "extends = \"workspace-registries\"\n[network]\nhosts = \"{}\"\nprivate = [\"127.0.0.1/32\"]\n",
                hosts.display()
            ),
        );
        let tunnel = |h: &str, p: u16| format!("curl -sS -p --max-time 20 http://{h}:{p}/; echo");
        let script = format!(
            "{}; {}; {}; {}",
            tunnel("pypi.org", p443),
            tunnel("static.crates.io", p443),
            tunnel("example.com", p443),
            tunnel("pypi.org", port)
        );
        let out = s
            .json_command(prof.to_str().unwrap(), &script)
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            all.matches(BODY).count(),
            2,
            "{}: {}",
            s.label(),
            text(&out)
        );
        let rep: serde_json::Value =
            serde_json::from_str(all.trim_end().lines().last().unwrap()).unwrap();
        let d: Vec<(String, u64, String)> = rep["network"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["host"].as_str().unwrap().into(),
                    r["port"].as_u64().unwrap(),
                    r["decision"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            d,
            [
                ("pypi.org".into(), 443, "allow".into()),
                ("static.crates.io".into(), 443, "allow".into()),
                ("example.com".into(), 443, "deny".into()),
                ("pypi.org".into(), u64::from(port), "deny".into()),
            ],
            "{rep}"
        );
    }
}

#[test]
fn explain_lists_the_registries_with_their_origins() {
    let out = std::process::Command::new(common::sbx_bin())
        .args(["explain", "--profile", "workspace-registries"])
        .output()
        .unwrap();
    let t = text(&out);
    for name in [
        "index.crates.io:443",
        "registry.npmjs.org:443",
        "pypi.org:443",
        "proxy.golang.org:443",
        "repo.maven.apache.org:443",
        "github.com:443",
    ] {
        let line = t
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{name} missing: {t}"));
        assert!(line.contains("builtin:workspace-registries:"), "{line}");
    }
}
