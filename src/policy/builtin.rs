//! The built-in policy source and the default policies of the built-in profiles.
#![forbid(unsafe_code)]

/// Built-in rules: the plainly malicious are denied, secrets reads ask. Wiping by glob
/// (`rm -rf /*`) is the shell analysis's to deny: a rule with a wildcard after `/` would also
/// match every absolute path, the workspace's own included.
pub const BUILTIN_POLICY: &str = r#"
[policy]
deny = [
  { rule = "Bash(rm -rf /)", reason = "deletes the filesystem" },
  { rule = "Bash(rm -rf / *)", reason = "deletes the filesystem" },
  { rule = "Bash(rm -rf ~)", reason = "deletes the home directory" },
  { rule = "Bash(rm -rf ~/)", reason = "deletes the home directory" },
  { rule = "Bash(rm -fr /)", reason = "deletes the filesystem" },
  { rule = "Bash(mkfs *)", reason = "formats a disk" },
  { rule = "Bash(mkfs.* *)", reason = "formats a disk" },
  { rule = "Bash(dd * of=/dev/sd*)", reason = "overwrites a disk" },
  { rule = "Bash(dd * of=/dev/nvme*)", reason = "overwrites a disk" },
  { rule = "Bash(:(){ :|:& };:)", reason = "fork bomb" },
  { rule = "Bash(chmod -R 777 / *)", reason = "opens the filesystem" },
]
ask = [
  { rule = "Read(~/.ssh/**)", reason = "ssh keys" },
  { rule = "Read(~/.aws/**)", reason = "cloud credentials" },
  { rule = "Read(~/.gnupg/**)", reason = "gpg keys" },
  { rule = "Read(~/.config/gcloud/**)", reason = "cloud credentials" },
  { rule = "Read(~/.kube/**)", reason = "cluster credentials" },
  { rule = "Read(~/.netrc)", reason = "credentials" },
  { rule = "Read(~/.docker/config.json)", reason = "registry credentials" },
]
"#;

/// The default policy of a built-in profile, as shipped in `profiles/policy/` (the profile
/// module holds the texts: a loaded profile carries its policy in
/// [`Profile::policy_sources`](crate::profile::Profile::policy_sources)).
pub fn profile_policy(profile: &str) -> Option<&'static str> {
    crate::profile::BUILTIN_POLICIES
        .iter()
        .find(|(name, _)| *name == profile)
        .map(|(_, text)| *text)
}

/// Names of the built-in profiles that ship a default policy.
pub const PROFILE_POLICIES: &[&str] = &[
    "read-only",
    "workspace",
    "workspace-net",
    "workspace-registries",
    "strict",
    "ci",
];
