#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use proptest::prelude::*;

fn filter(inherit: Inherit, pass: &[&str], deny: &[&str]) -> EnvFilter {
    EnvFilter {
        inherit,
        pass: pass.iter().map(|s| s.to_string()).collect(),
        deny: deny.iter().map(|s| s.to_string()).collect(),
        set: BTreeMap::new(),
    }
}

#[test]
fn secret_shaped_names_are_recognised_in_any_case() {
    for name in [
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_REGION",
        "GITHUB_TOKEN",
        "npm_config__authToken",
        "NPM_TOKEN",
        "PGPASSWORD",
        "DOCKER_PASS",
        "GIT_ASKPASS",
        "MYSQL_PWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SSH_AUTH_SOCK",
        "AUTHORIZATION",
        "HTTP_AUTHORIZATION",
        "PROXY_AUTHORIZATION",
        "API_AUTHORISATION",
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS",
        "ANTHROPIC_BASE_URL",
        "GH_HOST",
        "OP_SESSION_my",
        "VAULT_ADDR",
        "CI_JOB_JWT",
        "SENTRY_DSN",
        "DATABASE_URL",
        "STAGING_DATABASE_URL",
        "XDG_RUNTIME_DIR",
        "LD_PRELOAD",
        "LD_AUDIT",
        "VSCODE_IPC_HOOK_CLI",
        "TMUX",
        "tmux",
        "SLACK_WEBHOOK_URL",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "BUNDLE_RUBYGEMS__PKG__GITHUB__COM",
        "API_BEARER",
        "PW",
        "SMTP_PW",
        "HEROKU_API",
        "REQUEST_SIGNATURE",
        "MNEMONIC",
        "DEPLOYER_MNEMONIC",
        "SEED_PHRASE",
        "WALLET_SEED",
        "TOTP_SEED",
        "BLOB_SAS_URL",
    ] {
        assert!(
            secret_shaped(name.as_bytes()),
            "{name} should be secret-shaped"
        );
    }
}

#[test]
fn toolchain_and_ci_names_are_not_secret_shaped() {
    for name in [
        "PATH",
        "HOME",
        "PWD",
        "OLDPWD",
        "USER",
        "LANG",
        "LC_ALL",
        "TERM",
        "TZ",
        "TMPDIR",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        "CARGO_HOME",
        "CARGO_TERM_COLOR",
        "RUSTFLAGS",
        "JAVA_HOME",
        "VIRTUAL_ENV",
        "GOPATH",
        "GOFLAGS",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "LD_LIBRARY_PATH",
        "CI",
        "GITHUB_ACTIONS",
        "GITHUB_SHA",
        "GITHUB_WORKSPACE",
        "CI_COMMIT_SHA",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "XAUTHORITY",
        "SSL_CERT_FILE",
        "NODE_EXTRA_CA_CERTS",
        "BUNDLE_PATH",
        "BUNDLE_WITHOUT",
        "BUNDLE_GEMFILE",
        "POWERSHELL_TELEMETRY_OPTOUT",
        "TOKENIZERS_PARALLELISM",
        "KEYRING_BACKEND",
        "PYTHON_KEYRING_BACKEND",
        "KEYBOARD",
        "PYTHONHASHSEED",
        "RANDOM_SEED",
        "SASS_BINARY_PATH",
    ] {
        assert!(
            !secret_shaped(name.as_bytes()),
            "{name} should pass: matched {:?}",
            secret_rule(name.as_bytes())
        );
    }
}

#[test]
fn deny_beats_pass_and_pass_beats_the_secret_list() {
    let p = filter(
        Inherit::AllButSecrets,
        &["GITHUB_TOKEN", "CI_*"],
        &["CI_SECRET_*", "HTTP_PROXY"],
    );
    assert!(p.keeps(b"GITHUB_TOKEN"));
    assert!(!p.keeps(b"NPM_TOKEN"));
    assert!(p.keeps(b"CI_JOB_TOKEN"));
    assert!(!p.keeps(b"CI_SECRET_X"));
    assert!(!p.keeps(b"HTTP_PROXY"));
    assert!(p.keeps(b"JAVA_HOME"));
    let none = filter(Inherit::None, &["PATH", "LC_*"], &[]);
    assert!(none.keeps(b"PATH") && none.keeps(b"LC_ALL"));
    assert!(!none.keeps(b"JAVA_HOME"));
    assert!(!none.keeps(b"PATHX"));
}

#[test]
fn patterns_are_validated() {
    for ok in ["PATH", "LC_*", "*", "npm_config_cache", "weird.name"] {
        assert_eq!(pattern_error(ok), None, "{ok}");
    }
    for bad in ["", "A=B", "*_TOKEN", "A*B", "A**"] {
        assert!(pattern_error(bad).is_some(), "{bad}");
    }
}

fn pattern() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "*", "A*", "AB*", "AB", "ABC", "B*", "A_KEY", "A_*", "B_TOKEN", "PATH",
    ])
    .prop_map(str::to_string)
}

fn any_filter() -> impl Strategy<Value = EnvFilter> {
    (
        prop::bool::ANY,
        prop::collection::vec(pattern(), 0..4),
        prop::collection::vec(pattern(), 0..3),
    )
        .prop_map(|(inherit, pass, deny)| EnvFilter {
            inherit: if inherit {
                Inherit::AllButSecrets
            } else {
                Inherit::None
            },
            pass,
            deny,
            set: BTreeMap::new(),
        })
}

const NAMES: &[&str] = &[
    "A", "AB", "ABC", "ABD", "A_KEY", "A_X", "B", "B_TOKEN", "BX", "PATH", "Z",
];

proptest! {
    /// Narrowing only: the intersection keeps no variable that either side drops, and it is a
    /// subset of both.
    #[test]
    fn intersection_never_keeps_what_either_drops(a in any_filter(), b in any_filter()) {
        let r = a.intersect(&b);
        for n in NAMES {
            let n = n.as_bytes();
            prop_assert!(!r.keeps(n) || (a.keeps(n) && b.keeps(n)));
        }
        prop_assert!(r.is_subset_of(&a) && r.is_subset_of(&b));
    }

    /// A subset answer is never wrong: whatever `a` keeps, `b` keeps.
    #[test]
    fn subset_answers_are_sound(a in any_filter(), b in any_filter()) {
        if a.is_subset_of(&b) {
            for n in NAMES {
                let n = n.as_bytes();
                prop_assert!(!a.keeps(n) || b.keeps(n));
            }
        }
    }

    /// Two inheriting filters lose nothing in their intersection.
    #[test]
    fn inheriting_filters_intersect_exactly(a in any_filter(), b in any_filter()) {
        let a = EnvFilter { inherit: Inherit::AllButSecrets, ..a };
        let b = EnvFilter { inherit: Inherit::AllButSecrets, ..b };
        let r = a.intersect(&b);
        for n in NAMES {
            let n = n.as_bytes();
            prop_assert_eq!(r.keeps(n), a.keeps(n) && b.keeps(n));
        }
    }
}

#[test]
fn values_that_carry_a_credential_are_dropped_whatever_the_name() {
    let p = EnvFilter {
        inherit: Inherit::AllButSecrets,
        pass: vec!["PIP_INDEX_URL".into()],
        ..EnvFilter::default()
    };
    for (name, value) in [
        (
            "CI_REPOSITORY_URL",
            "https://gitlab-ci-token:glcbt-x@gitlab.example/g/p.git",
        ),
        ("POSTGRES_URL", "postgres://app:s3cret@db:5432/app"),
        ("HTTPS_PROXY", "http://u:p@proxy:3128"),
        (
            "AzureWebJobsStorage",
            "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==",
        ),
        ("SQLALCHEMY_DATABASE_URI", "mssql+pyodbc://x;PWD=y"),
        (
            "GCP_SA",
            "{\"type\":\"service_account\",\"private_key\":\"x\"}",
        ),
        ("CERT", "-----BEGIN PRIVATE KEY-----"),
    ] {
        assert!(!p.keeps_var(name.as_bytes(), value.as_bytes()), "{name}");
    }
    for (name, value) in [
        ("MONGO_URL", "mongodb://db:27017/app"),
        ("HTTPS_PROXY", "http://proxy:3128"),
        ("HOMEPAGE", "https://example.org/a:b@c"),
        ("JAVA_HOME", "/usr/lib/jvm/default"),
        // Named in `pass`: kept whatever it holds.
        ("PIP_INDEX_URL", "https://u:p@pypi.example/simple"),
    ] {
        assert!(p.keeps_var(name.as_bytes(), value.as_bytes()), "{name}");
    }
    for name in [
        "GITHUB_PAT",
        "CR_PAT",
        "SONAR_LOGIN",
        "SLACK_HOOK_URL",
        "STRIPE_SK",
        "DOCKER_HOST",
        "CONTAINER_HOST",
        "CONTAINERD_ADDRESS",
        "BUILDKIT_HOST",
    ] {
        assert!(!p.keeps(name.as_bytes()), "{name}");
    }
}

#[test]
fn token_shaped_values_are_secret_under_any_name() {
    for v in [
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "glpat-0123456789abcdefghij",
        "xoxb-1234567890-abcdefghijkl",
        "sk-ant-api03-0123456789abcdef",
        "npm_0123456789abcdefghijABCDEFGHIJ0123",
        // Where the token is not the whole value.
        "token ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "Bearer sk-ant-api03-0123456789abcdef",
        "{\"token\":\"ghp_0123456789abcdefghijABCDEFGHIJ012345\"}",
        "https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r",
        "https://0123456789abcdefghijABCDEFGHIJ0123@git.example/r",
        // More providers.
        "sk-0123456789abcdefghijABCDEFGHIJ0123456789abcdef",
        "sk-svcacct-0123456789abcdefghij",
        "sk_live_0123456789abcdefghijABCD",
        "hf_0123456789abcdefghijABCDEFGHIJabcd",
        "AIzaSyA0123456789abcdefghijABCDEFGHIJ0",
        "SG.0123456789abcdefghij.0123456789abcdefghijABCDEFGHIJ",
        "glptt-0123456789abcdefghij",
        "dop_v1_0123456789abcdef0123456789abcdef",
        "xapp-1-A0123456789-0123456789",
        "xoxe.xoxp-1-0123456789abcdef",
        "shpat_0123456789abcdef0123456789abcdef",
        "lin_api_0123456789abcdefghijABCDEFGHIJ",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        // HTTP authorization values and chat webhooks, under any name.
        "Basic dXNlcjpodW50ZXIyaHVudGVy",
        "Authorization: Bearer abcdef0123456789xyz",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
        "https://discord.com/api/webhooks/123/abc",
        "https://example.webhook.office.com/webhookb2/x",
        // Signed URLs and keys in a URL's path.
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=AbCdEf%2Bsecret",
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA/x&X-Amz-Signature=abc",
        "https://storage.googleapis.com/b/o?X-Goog-Algorithm=x&X-Goog-Signature=abc",
        "https://d111.cloudfront.net/a.mp4?Expires=1&Signature=abc&Key-Pair-Id=K",
        "https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/",
        "https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161",
        "https://eth-mainnet.g.alchemy.com/v2/abcdef0123456789",
    ] {
        assert!(secret_value(v.as_bytes()).is_some(), "{v} should be secret");
    }
    for v in [
        "ghp_",
        "npm_config",
        "sk-",
        "/usr/bin:/bin",
        "skeleton-key-of-a-dir",
        // Prefixes inside a word, short tokens, and look-alikes stay.
        "TASK-0123456789abcdefghijABCDEFGHIJ0123456789",
        "sk-SK",
        "hf_home",
        "https://proxy.example:3128",
        "https://user@example.com/path",
        "eyJ0eXAiOiJKV1QifQ0123456789abcdefghij",
        "/home/me/.cache/hf_hub_0123456789abcdefghijABCDEFGHIJ",
        "Basic usage",
        "Bearer of news",
        "https://hooks.example.com/services/x",
        "https://example.org/search?q=signature",
        "https://example.org/design?sign=1",
    ] {
        assert_eq!(secret_value(v.as_bytes()), None, "{v} should pass");
    }
}
