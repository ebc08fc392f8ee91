//! Path, command and domain patterns against the cases they must and must not match.
use super::*;

/// The glob set every path pattern compiled to before the string fast paths.
fn reference(p: &PathPattern) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for g in [p.absolute.clone(), format!("{}/**", p.absolute)] {
        let glob = GlobBuilder::new(&g).literal_separator(true).build();
        assert!(glob.is_ok(), "{g}");
        if let Ok(glob) = glob {
            b.add(glob);
        }
    }
    b.build().unwrap_or_else(|_| GlobSet::empty())
}

/// Specifiers of every form: anchors, stars, double stars, syntax only the glob set has.
const SPECS: &[&str] = &[
    "//etc/passwd",
    "//etc",
    "//etc/**",
    "//**",
    "///**",
    "/**",
    "~/**",
    "~",
    "~/",
    "~/.ssh",
    "~/.ssh/**",
    "~/.ssh/id_*",
    "/src",
    "/src/",
    "./src/**",
    "src/lib.rs",
    ".env",
    "target/**",
    "//a/b/**/c",
    "./**",
    "//",
    "~//",
    "src//",
    "////etc/passwd",
    "//.",
    "./.",
    "x/.",
    "/./x",
    "~/./x",
    "~//**",
    "x/..",
    "//etc/../etc",
    "/x",
    // Stars and double stars: the compile-free matcher.
    "*secret*",
    "*.pem",
    "~/.ssh/id_*",
    "//a/*/c",
    "//a/**/c",
    "//**/x",
    "src/*",
    "*",
    "**",
    "//e*c/pass*d",
    "//a/**/b/**/c*",
    "//a**",
    "x/**/y/*",
    // Syntax only the glob set has.
    "//etc/passw?",
    "//etc/[p]asswd",
    "{src,target}/**",
];

#[test]
fn fast_path_matchers_agree_with_the_glob_set() {
    // Workspaces and homes with spaces, glob characters and trailing slashes.
    let envs = [
        ("/work/sp ace", "/home/u"),
        ("/w[1]", "/h{a}"),
        ("/w/", "/h/"),
        ("/w", "/"),
    ];
    for (ws, home) in envs {
        agree_in(ws, home);
    }
}

/// Every specifier's matcher agrees with the glob set over every path, in one environment.
fn agree_in(ws: &str, home: &str) {
    let env = WorkspaceContext::new(PathBuf::from(ws), PathBuf::from(home));
    let paths = paths_in(ws, home);
    let (mut fast, mut simple) = (0, 0);
    for spec in SPECS {
        let Ok(p) = PathPattern::new(spec, &env) else {
            panic!("{spec} does not compile");
        };
        if !matches!(p.matcher, PathMatcher::Glob(_)) {
            fast += 1;
        }
        if matches!(p.matcher, PathMatcher::Simple(_)) {
            simple += 1;
        }
        let set = reference(&p);
        for path in &paths {
            assert_eq!(
                p.matches(Path::new(path)),
                Some(set.is_match(path)),
                "{spec} against {path} in {env:?} ({:?})",
                p.matcher
            );
        }
    }
    assert!(fast >= 3, "the fast paths are exercised in {env:?}: {fast}");
    // A workspace or home with glob characters is escaped, which only the set matches.
    if !ws.contains('[') {
        assert!(
            simple >= 10,
            "the star matcher is exercised in {env:?}: {simple}"
        );
    }
}

/// Paths to match, normalized as they are before matching (no `.`, `..`, `//` or trailing
/// `/`): system paths, and paths under the workspace and the home.
fn paths_in(ws: &str, home: &str) -> Vec<String> {
    let roots = [ws.trim_end_matches('/'), home.trim_end_matches('/')];
    let mut paths: Vec<String> = [
        "/",
        "/etc",
        "/etc/passwd",
        "/etc/passwd2",
        "/etcx",
        "/etc/my-secret.txt",
        "/etc/secret",
        "/etc/a.pem",
        "/etc/.pem",
        "/etc/a.pem/b",
        "/ab",
        "/a/c",
        "/a/b/c",
        "/a/b/b/c",
        "/a/b/cd/e",
        "/a/b/y/b/c",
        "/a/x/y/c",
        "/a/b/x/c",
        "/home",
        "/work",
        "/x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for root in roots {
        for tail in [
            "",
            "/src",
            "/src/lib.rs",
            "/srcx",
            "/.env",
            "/a/.env",
            "/target",
            "/target/d/x",
            "/.ssh",
            "/.ssh/id_rsa",
            "/.sshx",
            "/x",
            "/x/y",
            "/x/q/y/z",
            "/secrets/a",
            "/a/b.pem",
            "/.ssh/id_ed25519.pub",
        ] {
            paths.push(format!("{root}{tail}"));
        }
    }
    paths
}

fn env() -> WorkspaceContext {
    WorkspaceContext::new("/w", "/h")
}

fn path(spec: &str, p: &str) -> bool {
    PathPattern::new(spec, &env())
        .ok()
        .and_then(|x| x.matches(Path::new(p)))
        .unwrap_or(false)
}

#[test]
fn path_anchors() {
    assert!(path("src/**", "/w/src/a/b.rs"));
    assert!(!path("src/**", "/w/x/src/a.rs"));
    assert!(path("~/.ssh/**", "/h/.ssh/id_rsa"));
    assert!(path("//etc/passwd", "/etc/passwd"));
    assert!(path("/docs/*.md", "/w/docs/a.md"));
    assert!(!path("/docs/*.md", "/w/docs/x/a.md"));
    assert!(path(".env", "/w/a/b/.env"));
    assert!(path("*.pem", "/w/k.pem"));
    assert!(!path("*.pem", "/elsewhere/k.pem"));
}

#[test]
fn directory_pattern_covers_contents() {
    assert!(path("~/.ssh", "/h/.ssh/id_rsa"));
    assert!(path("build/", "/w/build/out/x"));
    assert!(!path("~/.ssh", "/h/.sshx"));
}

#[test]
fn domains() {
    let d = DomainPattern::new("domain:example.com").map_err(|e| e.to_string());
    assert!(d.as_ref().is_ok_and(|d| d.matches("example.com")));
    assert!(d.as_ref().is_ok_and(|d| !d.matches("a.example.com")));
    let s = DomainPattern::new("domain:*.example.com");
    assert!(s.as_ref().is_ok_and(|d| d.matches("a.example.com")));
    assert!(s.as_ref().is_ok_and(|d| !d.matches("example.com")));
    assert!(s.as_ref().is_ok_and(|d| !d.matches("badexample.com")));
    assert!(DomainPattern::new("example.com").is_err());
}

#[test]
fn parse_forms() {
    let e = env();
    assert!(matches!(Pattern::parse("Bash", &e), Ok(Pattern::Tool(t)) if t == "Bash"));
    assert!(matches!(
        Pattern::parse("Bash(*)", &e),
        Ok(Pattern::Tool(_))
    ));
    assert!(matches!(
        Pattern::parse("Bash(git diff *)", &e),
        Ok(Pattern::Bash(_))
    ));
    assert!(matches!(
        Pattern::parse("Edit", &e),
        Ok(Pattern::Family(PathFamily::Edit))
    ));
    assert!(matches!(
        Pattern::parse("Write(src/**)", &e),
        Ok(Pattern::Path {
            family: PathFamily::Edit,
            tool: Some(_),
            ..
        })
    ));
    assert!(matches!(
        Pattern::parse("mcp__gh", &e),
        Ok(Pattern::Mcp { tool: None, .. })
    ));
    assert!(matches!(
        Pattern::parse("mcp__gh__*", &e),
        Ok(Pattern::Mcp { tool: None, .. })
    ));
    assert!(matches!(
        Pattern::parse("mcp__gh__issue", &e),
        Ok(Pattern::Mcp { tool: Some(_), .. })
    ));
    assert!(Pattern::parse("Bash(git", &e).is_err());
    assert!(Pattern::parse("Task(x)", &e).is_err());
    assert!(Pattern::parse("WebFetch(example.com)", &e).is_err());
    assert!(Pattern::parse("", &e).is_err());
}

#[test]
fn a_long_glob_is_compiled_at_load_and_matches() {
    let dirs = "d/".repeat(150);
    let spec = format!("{dirs}?.rs");
    assert!(spec.len() > EAGER_GLOB_LEN);
    let p = PathPattern::new(&spec, &env());
    assert!(p.is_ok(), "{:?}", p.err());
    let Ok(p) = p else { return };
    // Compiled already, before any match.
    assert!(matches!(&p.matcher, PathMatcher::Glob(l) if l.set.get().is_some()));
    assert_eq!(p.matches(Path::new(&format!("/w/{dirs}a.rs"))), Some(true));
    assert_eq!(p.matches(Path::new("/w/d/a.rs")), Some(false));
    // A short glob waits for its first match.
    let short = PathPattern::new("src/?.rs", &env());
    assert!(
        matches!(&short, Ok(s) if matches!(&s.matcher, PathMatcher::Glob(l) if l.set.get().is_none()))
    );
}

/// A glob set that could not compile fails closed: a deny rule holding it matches every path
/// of its family, an allow rule none. Paired with the same rules over a set that compiled.
#[test]
fn a_glob_that_cannot_compile_fails_closed() {
    use crate::decision::Decision;
    use crate::policy::{Policy, Rule, RuleSource, SourceKind, Target};
    let rule = |effect, broken: bool| {
        let mut p = PathPattern::new("src/?.rs", &env()).unwrap_or_else(|e| panic!("{e}"));
        if broken && let PathMatcher::Glob(l) = &mut p.matcher {
            l.set = OnceLock::from(None);
        }
        Rule {
            effect,
            text: "Edit(src/?.rs)".into(),
            pattern: Pattern::Path {
                family: PathFamily::Edit,
                tool: None,
                pattern: p,
            },
            reason: None,
            source: RuleSource {
                kind: SourceKind::File,
                file: "t".into(),
                line: 1,
            },
            modes: None,
        }
    };
    let target = |path: &'static str| Target::Path {
        tool: "Edit",
        family: PathFamily::Edit,
        path: Path::new(path),
    };
    for broken in [false, true] {
        let policy = Policy::from_parts(
            vec![rule(Decision::Deny, broken), rule(Decision::Allow, broken)],
            None,
            Vec::new(),
            env(),
        );
        // Inside the glob, deny matches either way; allow only when the set compiled.
        let inside = target("/w/src/a.rs");
        assert!(
            policy
                .find(Decision::Deny, &inside, crate::decision::Mode::Default)
                .is_some()
        );
        assert_eq!(
            policy
                .find(Decision::Allow, &inside, crate::decision::Mode::Default)
                .is_some(),
            !broken
        );
        // Outside it, only the broken deny rule matches.
        let outside = target("/w/docs/a.md");
        assert_eq!(
            policy
                .find(Decision::Deny, &outside, crate::decision::Mode::Default)
                .is_some(),
            broken
        );
        assert!(
            policy
                .find(Decision::Allow, &outside, crate::decision::Mode::Default)
                .is_none()
        );
    }
}

#[test]
fn byte_prefix_agrees_with_path_components_on_clean_paths() {
    let bases = ["/", "/a", "/a/b", "/ab"];
    let paths = [
        "/", "/a", "/a/", "/ab", "/a/b", "/a/bc", "/a/b/c", "/abc", "/b/a",
    ];
    for b in bases {
        for p in paths {
            let (b, p) = (Path::new(b), Path::new(p));
            assert_eq!(super::under(p, b), p.starts_with(b), "{p:?} under {b:?}");
        }
    }
}
