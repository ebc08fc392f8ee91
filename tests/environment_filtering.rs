//! The command's environment: secret-shaped variables are dropped unless the profile passes
//! them, toolchain variables reach it (except under `strict`).
//!
//! Each protection is attempted from inside the sandbox and paired with the same action allowed
//! (under a wider profile, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;

/// `env` under `profile`, with `vars` set by the caller.
fn env_inside(s: &Scratch, profile: &str, vars: &[(&str, &str)]) -> std::process::Output {
    let mut c = s.command(profile, "env");
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn secret_shaped_variables_are_dropped_unless_passed() {
    let vars = [
        ("SECRET_TOKEN", "ENV-SENTINEL-TOKEN"),
        ("OPENAI_API_KEY", "ENV-SENTINEL-KEY"),
        ("SSH_AUTH_SOCK", "ENV-SENTINEL-AGENT"),
        // The name says nothing; the value carries a password.
        (
            "CI_REPOSITORY_URL",
            "https://ci:ENV-SENTINEL-URL@git.example/p.git",
        ),
        // Nor here: a token inside the value, after a scheme word.
        (
            "SBX_AUTH_HEADER",
            "token ghp_ENVSENTINEL0123456789abcdefghijABCD",
        ),
        ("HTTP_AUTHORIZATION", "ENV-SENTINEL-AUTHZ"),
        // An HTTP authorization value under a name that says nothing.
        ("SBX_HEADER", "Bearer ENVSENTINEL0123456789xyz"),
        ("SBX_PLAIN", "ENV-SENTINEL-PLAIN"),
    ];
    for u in users() {
        let s = Scratch::new(u);
        let passing = s.write_profile(
            "passing",
            "extends = \"workspace\"\n[environment]\npass = [\"SECRET_TOKEN\", \"OPENAI_*\", \"SSH_AUTH_SOCK\", \"CI_REPOSITORY_URL\", \"SBX_AUTH_HEADER\", \"HTTP_AUTHORIZATION\", \"SBX_HEADER\"]\n",
        );
        let denying = s.write_profile(
            "denying",
            "extends = \"workspace\"\n[environment]\ndeny = [\"SBX_PLAIN\"]\n",
        );
        let blocked = stdout(&env_inside(&s, "workspace", &vars));
        for (name, value) in &vars[..vars.len() - 1] {
            assert!(
                !blocked.contains(value),
                "{}: {name} leaked: {blocked}",
                s.label()
            );
        }
        assert!(
            blocked.contains("SBX_PLAIN=ENV-SENTINEL-PLAIN"),
            "{}: {blocked}",
            s.label()
        );
        // Paired: a profile whose `pass` keeps them lets them through...
        let allowed = stdout(&env_inside(&s, passing.to_str().unwrap(), &vars));
        for (name, value) in &vars {
            assert!(
                allowed.contains(&format!("{name}={value}")),
                "{}: {name} missing: {allowed}",
                s.label()
            );
        }
        // ...and one whose `deny` names a harmless variable drops it.
        let denied = stdout(&env_inside(&s, denying.to_str().unwrap(), &vars));
        assert!(
            !denied.contains("ENV-SENTINEL-PLAIN"),
            "{}: {denied}",
            s.label()
        );
        assert!(denied.contains("PATH="), "{}: {denied}", s.label());
    }
}

/// git configuration passed by the environment carries tokens (`http.extraheader`) and git
/// needs each key with its value: all of it is dropped, and git works inside; paired, a
/// profile that passes the variables gets the configuration to git.
#[test]
fn git_configuration_from_the_environment_is_dropped_whole() {
    let header = "AUTHORIZATION: basic ENV-SENTINEL-GITCFG";
    let vars = [
        ("GIT_CONFIG_COUNT", "2"),
        ("GIT_CONFIG_KEY_0", "http.extraheader"),
        ("GIT_CONFIG_VALUE_0", header),
        ("GIT_CONFIG_KEY_1", "core.abbrev"),
        ("GIT_CONFIG_VALUE_1", "9"),
        (
            "GIT_CONFIG_PARAMETERS",
            "'http.extraheader'='ENV-SENTINEL-PARAMS'",
        ),
    ];
    let script = "env; git config --get http.extraheader; echo git-rc=$?";
    for u in users() {
        let s = Scratch::new(u);
        let run = |profile: &str| {
            let mut c = s.command(profile, script);
            c.envs(vars);
            stdout(&c.output().unwrap())
        };
        let inside = run("workspace");
        assert!(!inside.contains("ENV-SENTINEL"), "{}: {inside}", s.label());
        assert!(!inside.contains("GIT_CONFIG_"), "{}: {inside}", s.label());
        assert!(
            inside.contains("git-rc=1"),
            "{}: git failed: {inside}",
            s.label()
        );
        let passing = s.write_profile(
            "passing",
            "extends = \"workspace\"\n[environment]\npass = [\"GIT_CONFIG_*\"]\n",
        );
        let passed = run(passing.to_str().unwrap());
        assert!(passed.contains(header), "{}: {passed}", s.label());
        assert!(passed.contains("git-rc=0"), "{}: {passed}", s.label());
    }
}

#[test]
fn toolchain_variables_reach_the_command_except_under_strict() {
    let vars = [
        ("RUSTUP_HOME", "/opt/sbx-test/rustup"),
        ("CARGO_HOME", "/opt/sbx-test/cargo"),
        ("JAVA_HOME", "/opt/sbx-test/jdk"),
        ("VIRTUAL_ENV", "/opt/sbx-test/venv"),
        ("GOPATH", "/opt/sbx-test/go"),
        ("GITHUB_SHA", "0123abc"),
    ];
    for u in users() {
        let s = Scratch::new(u);
        for profile in ["workspace", "ci"] {
            let o = env_inside(&s, profile, &vars);
            for (name, value) in &vars {
                assert!(
                    stdout(&o).contains(&format!("{name}={value}\n")),
                    "{} under {profile}: {name} missing: {}",
                    s.label(),
                    text(&o)
                );
            }
        }
        let o = env_inside(&s, "strict", &vars);
        assert!(stdout(&o).contains("PATH="), "{}: {}", s.label(), text(&o));
        for (name, _) in &vars {
            assert!(
                !stdout(&o).contains(&format!("{name}=")),
                "{} under strict: {name} passed: {}",
                s.label(),
                text(&o)
            );
        }
    }
}

/// A `PATH` directory in which the profile lets nothing execute is left out of the command's
/// `PATH`: a shell would take the first file of the name there and stop at EACCES. Under
/// `strict` (which executes only the system's directories and the workspace) a `tool` first
/// found in the home runs from `/usr/bin` instead; under `workspace`, which executes the home,
/// the home's copy runs.
#[test]
fn path_directories_the_sandbox_cannot_execute_in_are_left_out() {
    for u in users() {
        let s = Scratch::new(u);
        let bin = s.home.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("env"), "#!/bin/sh\necho HOME-ENV\n").unwrap();
        std::fs::set_permissions(
            bin.join("env"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        s.chown_all();
        let path = format!("{}:/usr/bin:/bin", bin.display());
        let run = |profile: &str| {
            let o = s
                .command(profile, "env; echo PATH=$PATH")
                .env("PATH", &path)
                .output()
                .unwrap();
            text(&o)
        };
        let strict = run("strict");
        assert!(!strict.contains("HOME-ENV"), "{}: {strict}", s.label());
        assert!(
            strict.contains("PATH=/usr/bin:/bin\n"),
            "{}: {strict}",
            s.label()
        );
        assert!(
            !strict.contains("Permission denied"),
            "{}: {strict}",
            s.label()
        );
        let workspace = run("workspace");
        assert!(workspace.contains("HOME-ENV"), "{}: {workspace}", s.label());
        assert!(
            workspace.contains(&format!("PATH={path}\n")),
            "{}: {workspace}",
            s.label()
        );
    }
}
