//! Command families that are asked about: network clients, destructive
//! commands, privilege, package managers and interactive editors.

/// Network clients.
pub(crate) const NETWORK: &[&str] = &[
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "ssh",
    "scp",
    "sftp",
    "ftp",
    "telnet",
    "http",
    "https",
    "xh",
    "aria2c",
    "lynx",
    "w3m",
    "links",
    "ping",
    "ping6",
    "dig",
    "nslookup",
    "host",
    "traceroute",
    "mosh",
    "rclone",
    "gsutil",
    "aws",
    "az",
    "gcloud",
    "kubectl",
    "gh",
    "glab",
    "tftp",
    "whois",
    "nmap",
    "websocat",
    "grpcurl",
    "fetch",
];

/// Commands that delete or change data or processes irreversibly.
pub(crate) const DESTRUCTIVE: &[&str] = &[
    "rm", "rmdir", "shred", "unlink", "dd", "truncate", "chmod", "chown", "chgrp", "kill",
    "killall", "pkill", "wipefs", "fdisk", "sfdisk", "parted", "mkswap", "srm", "chattr",
    "shutdown", "reboot", "halt", "poweroff", "crontab", "setfacl",
];

/// Commands that run other commands with other privileges.
pub(crate) const PRIVILEGE: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "chroot",
    "nsenter",
    "setcap",
    "setpriv",
    "capsh",
    "mount",
    "umount",
    "sg",
    "newgrp",
    "visudo",
    "passwd",
    "chpasswd",
    "useradd",
    "usermod",
    "userdel",
    "groupadd",
    "insmod",
    "rmmod",
    "modprobe",
    "sysctl",
    "iptables",
    "nft",
    "ufw",
    "losetup",
    "cryptsetup",
];

/// Package managers whose install verbs are asked about.
pub(crate) const PACKAGE_MANAGERS: &[&str] = &[
    "pip",
    "pip3",
    "pipx",
    "uv",
    "poetry",
    "pdm",
    "conda",
    "mamba",
    "apt",
    "apt-get",
    "aptitude",
    "dnf",
    "yum",
    "zypper",
    "pacman",
    "apk",
    "brew",
    "port",
    "snap",
    "flatpak",
    "gem",
    "bundle",
    "bundler",
    "composer",
    "nix-env",
    "opam",
    "cabal",
    "stack",
    "nuget",
    "vcpkg",
    "conan",
    "sdk",
    "asdf",
    "mise",
    "rustup",
    "nvm",
    "volta",
    "corepack",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
    "cpan",
    "cpanm",
    "luarocks",
    "gradle-install",
];

/// Interactive editors: they can run anything from inside.
pub(crate) const EDITORS: &[&str] = &[
    "vi", "vim", "nvim", "view", "nano", "emacs", "ed", "ex", "pico", "joe", "mcedit", "micro",
    "helix", "hx", "kak",
];

/// Version options a program takes besides `--version`, `-V`, `--help` and `-h`: alone on
/// the command line they print and run nothing of the project (`pytest -v` is verbose, so
/// only the programs named here).
pub(crate) const VERSION_FLAGS: &[(&str, &[&str])] = &[
    ("node", &["-v"]),
    ("nodejs", &["-v"]),
    ("java", &["-version", "-fullversion", "-showversion"]),
    ("javac", &["-version"]),
    ("mvn", &["-v"]),
    ("gradle", &["-v"]),
    ("gcc", &["-dumpversion", "-dumpmachine"]),
    ("cc", &["-dumpversion", "-dumpmachine"]),
    ("clang", &["-dumpversion", "-dumpmachine"]),
];

/// Whether `args` only ask `name` for its version or help.
pub(crate) fn version_only(name: &str, args: &[crate::shell::words::Word]) -> bool {
    let own: &[&str] = VERSION_FLAGS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(&[], |(_, f)| f);
    !args.is_empty()
        && args.iter().all(|a| {
            let v = a.value.as_str();
            matches!(v, "--version" | "-V" | "--help" | "-h") || own.contains(&v)
        })
}

/// Options a toolchain or package manager takes before its subcommand with the next word as
/// their value: the directory it runs in (`cargo -C DIR`, `pnpm -C DIR`, `yarn --cwd DIR`,
/// `npm --prefix DIR`), then the others (`npm -w PKG`, `pnpm --filter PKG`). The subcommand is
/// the first word after them, and project files are read from the directory.
pub(crate) const LEADING_OPTIONS: &[(&str, &[&str], &[&str])] = &[
    ("cargo", &["-C"], &["-Z", "--color", "--config"]),
    ("npm", &["--prefix"], &["-w", "--workspace"]),
    ("pnpm", &["-C", "--dir", "--prefix"], &["--filter", "-F"]),
    ("yarn", &["--cwd"], &[]),
    ("bun", &["--cwd"], &["--filter", "-F"]),
];
