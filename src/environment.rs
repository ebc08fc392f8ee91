//! Which of the caller's environment variables reach the command.
//!
//! A variable is kept when no `deny` pattern matches it and either a `pass` pattern does or the
//! filter inherits the caller's environment and the name is not secret-shaped
//! ([`SECRET_NAMES`]). `set` values are applied last. Patterns are a name or a prefix with a
//! trailing `*`.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How much of the caller's environment a command starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inherit {
    /// Nothing but the `pass` list.
    None,
    /// Everything except secret-shaped names and the `deny` list.
    #[default]
    AllButSecrets,
}

impl Inherit {
    /// The name a profile writes (`environment.inherit`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::AllButSecrets => "all-but-secrets",
        }
    }
}

/// The environment a command starts with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvFilter {
    /// What happens to the caller's variables that are not named.
    pub inherit: Inherit,
    /// Kept even when secret-shaped; under `inherit = none`, the only variables kept.
    pub pass: Vec<String>,
    /// Dropped whatever else says; wins over `pass`.
    pub deny: Vec<String>,
    /// Fixed values, applied last.
    pub set: BTreeMap<String, String>,
}

/// Secret-shaped names, matched without regard to case: `*X*` anywhere in the name, `X*` at its
/// start, `X` the whole name, `A*B*` a name that starts with A and holds B after it. With the
/// reason each is dropped; docs/environment.md lists them.
pub const SECRET_NAMES: &[(&str, &str)] = &[
    (
        "*KEY*",
        "API, access and signing keys (OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY)",
    ),
    ("*SECRET*", "client and webhook secrets"),
    (
        "*TOKEN*",
        "access tokens (GITHUB_TOKEN, NPM_TOKEN, CI_JOB_TOKEN, HF_TOKEN)",
    ),
    (
        "*PASS*",
        "passwords and passphrases (PGPASSWORD, DOCKER_PASS), askpass helpers (GIT_ASKPASS)",
    ),
    (
        "*PWD*",
        "passwords spelled short (MYSQL_PWD); PWD and OLDPWD themselves are kept",
    ),
    (
        "*CRED*",
        "credentials and paths to them (GOOGLE_APPLICATION_CREDENTIALS)",
    ),
    (
        "*AUTH*",
        "auth headers (HTTP_AUTHORIZATION), OAuth tokens, agent sockets (SSH_AUTH_SOCK); not AUTHOR (GIT_AUTHOR_NAME)",
    ),
    ("*COOKIE*", "session cookies"),
    ("*BEARER*", "bearer tokens for HTTP APIs"),
    ("*SIGNATURE*", "request-signing secrets"),
    ("PW", "a password spelled shortest"),
    ("*_PW", "passwords spelled short (SMTP_PW)"),
    (
        "BUNDLE_*__*",
        "Bundler's per-host registry credentials (BUNDLE_GEMS__EXAMPLE__COM); other BUNDLE_ settings are kept",
    ),
    ("HEROKU_*", "Heroku API settings and keys"),
    (
        "*SESSION*",
        "session ids, the desktop session bus (DBUS_SESSION_BUS_ADDRESS)",
    ),
    ("*PRIVATE*", "private keys passed as values"),
    ("*JWT*", "signed identity tokens (CI_JOB_JWT)"),
    (
        "*MNEMONIC*",
        "a wallet's recovery words (MNEMONIC in Hardhat and Foundry setups)",
    ),
    ("*SEED_PHRASE*", "a wallet's recovery words"),
    ("*WALLET*", "wallet keys and seeds (WALLET_SEED)"),
    ("*TOTP*", "a second factor's shared seed (TOTP_SEED)"),
    (
        "*SAS_URL*",
        "an Azure shared-access-signature URL (BLOB_SAS_URL)",
    ),
    ("*WEBHOOK*", "webhook URLs, which are their own credential"),
    (
        "*DSN*",
        "connection strings with a password or key (SENTRY_DSN)",
    ),
    ("*DATABASE_URL*", "database URLs with a password"),
    ("REDIS_URL", "a Redis URL with a password"),
    (
        "*_PAT",
        "personal access tokens (GITHUB_PAT, CR_PAT, GITLAB_PAT)",
    ),
    ("*LOGIN*", "login tokens (SONAR_LOGIN)"),
    ("*HOOK*", "webhook URLs (SLACK_HOOK_URL, DISCORD_HOOK)"),
    ("*_SK", "secret keys spelled short (STRIPE_SK)"),
    (
        "*CONNECTIONSTRING*",
        "connection strings (ConnectionStrings__Default)",
    ),
    (
        "DOCKER_HOST",
        "a container daemon's socket or address: root on its host",
    ),
    (
        "CONTAINER_HOST",
        "Podman's service socket or address: root on its host",
    ),
    (
        "CONTAINERD_ADDRESS",
        "containerd's socket (nerdctl): root on its host",
    ),
    (
        "BUILDKIT_HOST",
        "BuildKit's daemon (buildctl): builds as root",
    ),
    ("MONGODB_URI", "a MongoDB URI with a password"),
    ("AWS_*", "AWS account settings and keys"),
    ("AZURE_*", "Azure account settings and keys"),
    ("ANTHROPIC_*", "Anthropic API settings and keys"),
    ("OPENAI_*", "OpenAI API settings and keys"),
    ("GH_*", "GitHub CLI tokens and settings"),
    ("OP_*", "1Password CLI sessions and service-account tokens"),
    ("VAULT_*", "HashiCorp Vault address, token and namespace"),
    ("KRB5CCNAME", "the Kerberos ticket cache"),
    ("GPG_AGENT_INFO", "the GnuPG agent socket"),
    ("DBUS_SYSTEM_BUS_ADDRESS", "the system bus socket"),
    (
        "XDG_RUNTIME_DIR",
        "the caller's runtime directory: agent, keyring and display sockets",
    ),
    ("DISPLAY", "the caller's X display: its keyboard and screen"),
    ("WAYLAND_DISPLAY", "the caller's Wayland display"),
    (
        "TMUX",
        "the caller's tmux server: keys typed into its panes",
    ),
    ("STY", "the caller's screen session"),
    ("KITTY_LISTEN_ON", "kitty's remote-control socket"),
    ("WEZTERM_UNIX_SOCKET", "WezTerm's control socket"),
    ("NVIM", "the caller's Neovim server"),
    ("VSCODE_IPC_HOOK*", "the VS Code window's control socket"),
    ("VSCODE_GIT_IPC_HANDLE", "VS Code's git credential socket"),
    (
        "GIT_CONFIG_COUNT",
        "git configuration passed by the environment, dropped whole (git refuses a count whose keys, which match *KEY*, are gone): credentials in http.extraheader",
    ),
    (
        "GIT_CONFIG_VALUE_*",
        "the values of that configuration (AUTHORIZATION headers)",
    ),
    (
        "GIT_CONFIG_PARAMETERS",
        "git configuration given to the programs git runs (`git -c`): credentials in http.extraheader",
    ),
    (
        "LD_PRELOAD",
        "a library loaded into every program the command runs",
    ),
    (
        "LD_AUDIT",
        "a loader audit library loaded into every program the command runs",
    ),
];

/// What a value that carries its own credential looks like, whatever its name: a URL with a
/// password (`https://user:pass@host`, `postgres://u:p@db`, proxies and registries), a
/// connection string with a password or account key, a private key, a service-account JSON.
/// With the reason; docs/environment.md lists them.
pub const SECRET_VALUES: &[(&str, &str)] = &[
    ("://USER:PASSWORD@", "a URL that carries a password"),
    ("PASSWORD=", "a connection string with a password"),
    ("PWD=", "a connection string with a password, spelled short"),
    ("ACCOUNTKEY=", "an Azure storage connection string"),
    (
        "SHAREDACCESSKEY=",
        "an Azure Service Bus or Event Hubs connection string",
    ),
    (
        "-----BEGIN",
        "a PEM private key or certificate passed as a value",
    ),
    ("\"PRIVATE_KEY\"", "a service-account JSON key (GCP_SA)"),
    (
        "^GHP_ ^GHO_ ^GHU_ ^GHS_ ^GHR_ ^GITHUB_PAT_",
        "a GitHub token under any name",
    ),
    (
        "^GLPAT- ^GLPTT- ^GLDT- ^GLRT-",
        "a GitLab access, trigger, deploy or runner token",
    ),
    ("^XOXB- ^XOXP- ^XOXA- ^XOXE- ^XOXE. ^XAPP-", "a Slack token"),
    (
        "^SK-ANT- ^SK-PROJ- ^SK-SVCACCT-",
        "an Anthropic or OpenAI API key",
    ),
    ("^SK-:40", "an OpenAI API key of the older form"),
    ("^NPM_ ^PYPI-AGE", "an npm or PyPI publishing token"),
    (
        "^SK_LIVE_ ^RK_LIVE_ ^SK_TEST_ ^RK_TEST_",
        "a Stripe secret or restricted key",
    ),
    ("^HF_:30", "a Hugging Face token"),
    ("^AIZA:35", "a Google API key"),
    ("^SG.:40", "a SendGrid API key"),
    ("^DOP_V1_ ^DOO_V1_ ^DOR_V1_", "a DigitalOcean token"),
    ("^SHPAT_ ^SHPSS_ ^SHPCA_ ^SHPPA_", "a Shopify access token"),
    ("^LIN_API_", "a Linear API key"),
    ("^EYJ:40", "a JSON Web Token (three dot-separated parts)"),
    (
        "://TOKEN@",
        "a URL whose user name is a token (`https://<token>@host`)",
    ),
    (
        "BASIC BEARER",
        "an HTTP Authorization value (`Basic <base64>`, `Bearer <token>`) of 16 characters or more",
    ),
    (
        "?SIG= &SIG= X-AMZ-SIGNATURE= X-GOOG-SIGNATURE= ?SIGNATURE= &SIGNATURE=",
        "a signed URL (Azure SAS, S3 or GCS presigned, CloudFront): its signature grants access",
    ),
    (
        "API.TELEGRAM.ORG/BOT",
        "a Telegram bot URL, which holds the bot's token",
    ),
    (
        "INFURA.IO/V3/ ALCHEMY.COM/V2/",
        "a blockchain RPC URL, which holds the project's key",
    ),
    ("HOOKS.SLACK.COM/SERVICES/", "a Slack webhook URL"),
    (
        "DISCORD.COM/API/WEBHOOKS/ DISCORDAPP.COM/API/WEBHOOKS/",
        "a Discord webhook URL",
    ),
    (
        "WEBHOOK.OFFICE.COM/ .LOGIC.AZURE.COM/WORKFLOWS/",
        "a Microsoft Teams or Power Automate webhook URL",
    ),
];

/// Whether `upper` holds an HTTP authorization scheme followed by its credential: `Basic` or
/// `Bearer`, a space, and a run of at least 16 base64 or token characters, at the start of the
/// value or after a character that is not a letter (`Authorization: Bearer ...`).
fn auth_scheme(upper: &str) -> bool {
    let cred = |b: &u8| b.is_ascii_alphanumeric() || b"+/=_-.~".contains(b);
    ["BASIC ", "BEARER "].iter().any(|scheme| {
        upper.match_indices(scheme).any(|(i, _)| {
            let bytes = upper.as_bytes();
            let boundary = i == 0 || !bytes[i - 1].is_ascii_alphabetic();
            let rest = &bytes[i + scheme.len()..];
            boundary && rest.iter().take_while(|b| cred(b)).count() >= 16
        })
    })
}

/// Characters a token is made of (upper-cased): a prefix counts where none of them comes
/// before it, and the token runs while they follow.
fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Whether `prefix` starts a token of at least `min` characters anywhere in `upper`: at the
/// start of the value, after a character that is not part of a token nor a `/`
/// (`token ghp_...`, `Bearer sk-ant-...`, `{"token":"ghp_..."}`), or right after a URL's
/// `://` (`https://ghp_...@host`). A JSON Web Token must also have its three parts.
fn has_token(upper: &str, prefix: &str, min: usize) -> bool {
    let bytes = upper.as_bytes();
    upper.match_indices(prefix).any(|(i, _)| {
        // A path's component is no token (`~/.cache/hf_hub`); a URL's user name is.
        let at_boundary = i == 0
            || (!token_char(bytes[i - 1]) && bytes[i - 1] != b'/')
            || upper[..i].ends_with("://");
        let token = &bytes[i..];
        let len = token.iter().take_while(|b| token_char(**b)).count();
        let parts_ok = prefix != "EYJ" || token[..len].iter().filter(|b| **b == b'.').count() == 2;
        at_boundary && len >= min && parts_ok
    })
}

/// A URL whose user-info is a bare token: a long run of token characters and no password.
fn url_user_is_token(s: &str) -> bool {
    s.match_indices("://").any(|(i, _)| {
        let authority = s[i + 3..].split(['/', '?', '#', ' ']).next().unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(user, _)| {
            !user.contains(':') && user.len() >= 30 && user.bytes().all(token_char)
        })
    })
}

/// The entry of [`SECRET_VALUES`] that `value` matches, if any (remembered for the values
/// this thread saw).
pub fn secret_value(value: &[u8]) -> Option<&'static str> {
    thread_local! {
        static KNOWN: std::cell::RefCell<std::collections::HashMap<Vec<u8>, Option<&'static str>>> =
            std::cell::RefCell::default();
    }
    if let Some(rule) = KNOWN.with(|k| k.borrow().get(value).copied()) {
        return rule;
    }
    let rule = judge_value(value);
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() < SECRET_RULES_KEPT && value.len() <= SECRET_VALUE_KEPT {
            k.insert(value.to_vec(), rule);
        }
    });
    rule
}

/// A value longer than this is judged every time, not remembered.
const SECRET_VALUE_KEPT: usize = 4096;

/// [`secret_value`], judged afresh.
fn judge_value(value: &[u8]) -> Option<&'static str> {
    let upper = String::from_utf8_lossy(value).to_ascii_uppercase();
    SECRET_VALUES.iter().map(|(p, _)| *p).find(|p| match *p {
        "://USER:PASSWORD@" => url_has_password(&upper),
        "://TOKEN@" => url_user_is_token(&upper),
        "BASIC BEARER" => auth_scheme(&upper),
        // Token prefixes (`^PREFIX`, or `^PREFIX:N` for a token of at least N characters; 20
        // when not said), anywhere a token can start.
        _ if p.starts_with('^') => p.split(' ').any(|q| {
            let q = q.trim_start_matches('^');
            let (prefix, min) = match q.split_once(':') {
                Some((prefix, n)) => (prefix, n.parse().unwrap_or(20)),
                None => (q, 20),
            };
            has_token(&upper, prefix, min)
        }),
        _ => p.split(' ').any(|q| upper.contains(q)),
    })
}

/// Whether a URL anywhere in `s` has a user-info part with a password (`scheme://u:p@`).
fn url_has_password(s: &str) -> bool {
    s.match_indices("://").any(|(i, _)| {
        let rest = &s[i + 3..];
        let authority = rest.split(['/', '?', '#', ' ']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// Names that a `*X*` entry would match but that hold nothing secret.
const NOT_SECRET: &[&str] = &[
    "PWD",
    "OLDPWD",
    // Settings whose names hold a pattern's word and no secret.
    "TOKENIZERS_PARALLELISM",
    "KEYRING_BACKEND",
    "PYTHON_KEYRING_BACKEND",
    "KEYBOARD",
    "XKB_DEFAULT_LAYOUT",
];

/// Whether the built-in list calls `name` secret-shaped.
pub fn secret_shaped(name: &[u8]) -> bool {
    secret_rule(name).is_some()
}

/// Whether `name` says it holds a secret by a generic entry of the filter (`*KEY*`,
/// `*SECRET*`, `*TOKEN*`, ...), not by a whole provider's prefix (`AWS_REGION` and
/// `AWS_CA_BUNDLE` are no secrets to print) nor as a socket or session.
pub fn named_secret(name: &[u8]) -> bool {
    const GENERIC: [&str; 9] = [
        "*KEY*",
        "*SECRET*",
        "*TOKEN*",
        "*PASS*",
        "*PWD*",
        "*CRED*",
        "*BEARER*",
        "*COOKIE*",
        "*PRIVATE*",
    ];
    secret_rule(name).is_some_and(|r| GENERIC.contains(&r))
}

/// How many names (and values) each thread remembers the answer of [`secret_rule`] (and of
/// [`secret_value`]) for: a session asks about the same caller's variables on every call.
const SECRET_RULES_KEPT: usize = 4096;

/// A name longer than this is judged every time, not remembered (a name from a command line
/// can be of any length).
const SECRET_RULE_NAME_KEPT: usize = 128;

/// The built-in entry that makes `name` secret-shaped, if any.
pub fn secret_rule(name: &[u8]) -> Option<&'static str> {
    thread_local! {
        static KNOWN: std::cell::RefCell<std::collections::HashMap<Vec<u8>, Option<&'static str>>> =
            std::cell::RefCell::default();
    }
    if let Some(rule) = KNOWN.with(|k| k.borrow().get(name).copied()) {
        return rule;
    }
    let rule = judge_name(name);
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() < SECRET_RULES_KEPT && name.len() <= SECRET_RULE_NAME_KEPT {
            k.insert(name.to_vec(), rule);
        }
    });
    rule
}

/// An entry of [`SECRET_NAMES`], taken apart once.
enum Shape {
    /// `*X*`: X anywhere (AUTHOR scrubbed first).
    Inside(&'static [u8]),
    /// `X*`: X at the start.
    Prefix(&'static [u8]),
    /// `*X`: X at the end.
    Suffix(&'static [u8]),
    /// `A*B*`: starts with A, and B somewhere after it.
    PrefixThen(&'static [u8], &'static [u8]),
    /// `X`: the whole name.
    Whole(&'static [u8]),
}

impl Shape {
    fn of(p: &'static str) -> Self {
        if let Some((prefix, inner)) = p.trim_end_matches('*').split_once('*')
            && !prefix.is_empty()
        {
            return Shape::PrefixThen(prefix.as_bytes(), inner.as_bytes());
        }
        match (p.strip_prefix('*'), p.strip_suffix('*')) {
            (Some(inner), Some(_)) => Shape::Inside(inner.trim_end_matches('*').as_bytes()),
            (None, Some(prefix)) => Shape::Prefix(prefix.as_bytes()),
            (Some(suffix), None) => Shape::Suffix(suffix.as_bytes()),
            (None, None) => Shape::Whole(p.as_bytes()),
        }
    }

    fn matches(&self, upper: &[u8], scrubbed: &[u8]) -> bool {
        match *self {
            Shape::Inside(x) => holds(scrubbed, x),
            Shape::Prefix(x) => upper.starts_with(x),
            Shape::Suffix(x) => upper.ends_with(x),
            Shape::PrefixThen(a, b) => upper.starts_with(a) && holds(&upper[a.len()..], b),
            Shape::Whole(x) => upper == x,
        }
    }
}

/// [`secret_rule`], worked out.
fn judge_name(name: &[u8]) -> Option<&'static str> {
    static SHAPES: std::sync::LazyLock<Vec<(Shape, &'static str)>> =
        std::sync::LazyLock::new(|| {
            SECRET_NAMES
                .iter()
                .map(|(p, _)| (Shape::of(p), *p))
                .collect()
        });
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET.iter().any(|n| n.as_bytes() == upper) {
        return None;
    }
    // AUTHOR (GIT_AUTHOR_NAME, XAUTHORITY) is not AUTH; AUTHORIZATION is.
    let scrubbed = if holds(&upper, b"AUTHOR") {
        String::from_utf8_lossy(&upper)
            .replace("AUTHORIZ", "AUTH-Z")
            .replace("AUTHORIS", "AUTH-S")
            .replace("AUTHOR", "-")
            .into_bytes()
    } else {
        upper.clone()
    };
    SHAPES
        .iter()
        .find(|(shape, _)| shape.matches(&upper, &scrubbed))
        .map(|(_, p)| *p)
}

/// Whether `word` occurs in `name`: each place its first byte is, compared there; cheaper than
/// a substring search's set-up on names this short.
fn holds(name: &[u8], word: &[u8]) -> bool {
    let Some((&first, rest)) = word.split_first() else {
        return true;
    };
    (0..name.len().saturating_sub(rest.len()))
        .any(|i| name[i] == first && name[i + 1..].starts_with(rest))
}

/// Whether `pattern` (a name, or a prefix ending in `*`) matches `name`, case-sensitively.
pub fn pattern_matches(pattern: &str, name: &[u8]) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix.as_bytes()),
        None => name == pattern.as_bytes(),
    }
}

/// Why `pattern` is not a valid `pass` or `deny` entry, if it is not.
pub fn pattern_error(pattern: &str) -> Option<String> {
    let body = pattern.strip_suffix('*').unwrap_or(pattern);
    if body.is_empty() && !pattern.is_empty() {
        return None; // `*`: every name.
    }
    if pattern.is_empty() {
        return Some("an empty name".into());
    }
    if let Some(c) = body.chars().find(|c| matches!(c, '=' | '*' | '\0')) {
        return Some(format!(
            "`{pattern}`: `{}` is not allowed in a name (a single `*` may end it, as a prefix)",
            c.escape_default()
        ));
    }
    None
}

/// Every name `q` matches, `p` matches too.
fn covers(p: &str, q: &str) -> bool {
    match p.strip_suffix('*') {
        Some(prefix) => q.starts_with(prefix),
        None => p == q,
    }
}

/// The pattern matching exactly the names both match, if any.
fn meet(p: &str, q: &str) -> Option<String> {
    if covers(p, q) {
        Some(q.to_string())
    } else if covers(q, p) {
        Some(p.to_string())
    } else {
        None
    }
}

impl EnvFilter {
    /// Whether the caller's variable `name` with `value` reaches the command: as
    /// [`EnvFilter::keeps`], and a value that carries its own credential is dropped too unless
    /// `pass` names the variable.
    pub fn keeps_var(&self, name: &[u8], value: &[u8]) -> bool {
        self.keeps(name)
            && (self.pass.iter().any(|p| pattern_matches(p, name)) || secret_value(value).is_none())
    }

    /// Whether the caller's variable `name` reaches the command.
    pub fn keeps(&self, name: &[u8]) -> bool {
        if self.deny.iter().any(|p| pattern_matches(p, name)) {
            return false;
        }
        if self.pass.iter().any(|p| pattern_matches(p, name)) {
            return true;
        }
        match self.inherit {
            Inherit::None => false,
            Inherit::AllButSecrets => !secret_shaped(name),
        }
    }

    /// A filter that keeps a variable only when both keep it. When one inherits and the other
    /// does not, a variable the inheriting side keeps only as non-secret and the other passes
    /// is dropped too: the result may keep less than both together, never more.
    #[must_use]
    pub fn intersect(&self, other: &Self) -> Self {
        let mut pass: Vec<String> = Vec::new();
        for p in &self.pass {
            for q in &other.pass {
                if let Some(m) = meet(p, q)
                    && !pass.contains(&m)
                {
                    pass.push(m);
                }
            }
        }
        let mut deny = self.deny.clone();
        for d in &other.deny {
            if !deny.contains(d) {
                deny.push(d.clone());
            }
        }
        let mut set = self.set.clone();
        set.retain(|k, v| other.set.get(k) == Some(v));
        Self {
            inherit: match (self.inherit, other.inherit) {
                (Inherit::AllButSecrets, Inherit::AllButSecrets) => Inherit::AllButSecrets,
                (Inherit::None, _) | (_, Inherit::None) => Inherit::None,
            },
            pass,
            deny,
            set,
        }
    }

    /// True when every variable `self` keeps, `other` keeps too, and the fixed values agree.
    /// Conservative: a `false` may be a subset written differently.
    pub fn is_subset_of(&self, other: &Self) -> bool {
        let inherit_ok = self.inherit == Inherit::None || other.inherit == Inherit::AllButSecrets;
        inherit_ok
            && self
                .pass
                .iter()
                .all(|p| other.pass.iter().any(|q| covers(q, p)))
            && other
                .deny
                .iter()
                .all(|d| self.deny.iter().any(|e| covers(e, d)))
            && self.set.iter().all(|(k, v)| other.set.get(k) == Some(v))
    }
}

#[cfg(test)]
#[path = "environment_tests.rs"]
mod tests;
