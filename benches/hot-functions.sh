#!/usr/bin/env bash
# Regenerate link/hot-functions.txt: the functions `sbx run` and `sbx check` execute, which
# build.rs hands to the linker (lld's --symbol-ordering-file) so that they sit together at the
# start of the text. The kernel maps a file's pages around each fault (64 KiB at a time), so a
# run that touches code spread over the whole binary maps most of it: about 1.1 MB of functions
# run, spread over ~50 such windows, against ~18 when packed. That is fewer page faults at start,
# less to unmap at exit, and a lower peak RSS.
#
# The list comes from sampled call stacks of real runs (perf), callgrind (valgrind) runs of the
# scenarios below, and the sandbox init's and the command's code, which callgrind cannot dump.
# Symbols are matched by name; a stale entry is ignored by the linker, so the list degrades
# gently as the code changes; benches/overhead.sh says how much of it still matches.
# Usage: benches/hot-functions.sh   (needs valgrind and perf; run as root)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
cargo build --release --quiet
sbx=$PWD/target/$(rustc -vV | sed -n 's/^host: //p')/release/sbx
work=$(mktemp -d /var/tmp/sbx-hot.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ws"
cd "$work/ws"
scenarios=(
  "run -- /bin/true"
  "run --no-policy -- /bin/true"
  "run --json -- sh -c 'echo out; echo err >&2; exit 3'"
  "run -- sleep 0.05"
  "run --no-policy --timeout 0.1 -- sleep 1"
  "run --profile read-only -- /bin/true"
  "run --profile workspace-net -- /bin/true"
  "run --profile strict -- /bin/true"
  "run --profile ci -- /bin/true"
  "check -- git status"
  "check -- git push --force origin main"
)
i=0
for s in "${scenarios[@]}"; do
  i=$((i + 1))
  eval valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$i" \
    --trace-children=no "$sbx" "$s" >/dev/null 2>&1 || true
done
# callgrind cannot follow a whole run (valgrind does not know the Landlock calls, so sbx stops
# at planning), so real runs are sampled too, with full call stacks, which name every function
# on the stack at each sample.
if command -v perf >/dev/null; then
  perf record -q -F 20000 --call-graph dwarf,8192 -o "$work/perf.data" -- sh -c "
    for i in \$(seq 150); do
      $sbx run -- /bin/true; $sbx run --no-policy -- /bin/true
      $sbx run --json -- sh -c 'echo x; exit 2' >/dev/null; $sbx run -- sleep 0.01
    done" >/dev/null 2>&1 || true
  perf script -i "$work/perf.data" --comm sbx -F ip,sym --no-demangle 2>/dev/null |
    awk 'NF >= 2 && $1 !~ /^ffffffff/ {print $2}' | sort | uniq -c | sort -rn > "$work/sampled" || true
  [ -s "$work/sampled" ] || { echo "perf recorded no samples" >&2; exit 1; }
else
  echo "perf not found: only callgrind's functions are listed" >&2
  : > "$work/sampled"
fi
python3 - "$sbx" "$work" "$root/link/hot-functions.txt" <<'PY'
import collections, glob, re, subprocess, sys
sbx, work, out = sys.argv[1:]
syms = {}
for line in subprocess.run(["nm", "-S", "--defined-only", sbx], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tTwWiI":
        syms.setdefault(p[3], (int(p[0], 16), int(p[1], 16)))
# How many scenarios ran each function: the ones every run needs come first.
uses = collections.Counter()
for f in glob.glob(f"{work}/cg.*"):
    seen = set()
    for line in open(f, errors="replace"):
        m = re.match(r"^c?fn=\(\d+\)\s+(.*?)('\d+)?$", line.strip())
        if m:
            seen.add(m.group(1))
    uses.update(seen)
# callgrind names glibc's string functions by their generic names; the binary has the
# CPU-specific variants that ifuncs pick, which are small: keep all of them.
variants = [s for s in syms if re.match(r"__(mem|str|stp|raw|wmem|wcs)\w*_(avx2|evex|erms|sse2|sse42|ssse3)", s)]
# The sandbox init and the command run in clones that exit too early for valgrind to dump:
# their own functions, and the libc calls they make.
child = [s for s in syms if s.startswith("_ZN3sbx7enforce")]
libc = ["mount", "umount2", "sethostname", "socket", "ioctl", "__libc_sigaction", "__sigaction",
        "sigprocmask", "__sigprocmask", "sigwaitinfo", "__sigwaitinfo", "__sigtimedwait",
        "waitpid", "__waitpid", "__wait4", "kill", "getrusage", "__getrusage", "prctl",
        "__prctl", "setpgid", "__setpgid", "setsid", "__setsid", "dup2", "__dup2", "chdir",
        "__chdir", "setrlimit", "__setrlimit", "getrlimit", "__getrlimit", "execve", "__execve",
        "_exit", "_Exit", "__clone", "clone", "__close", "close", "__libc_write", "__libc_read",
        "poll", "__poll", "__libc_open64", "__open64_nocancel", "symlink", "mkdir", "mknod",
        "__mknodat", "syscall", "__errno_location", "sigemptyset", "sigaddset", "chmod",
        "__libc_close", "write", "read", "__GI___libc_write", "__GI___libc_read"]
sampled = [l.split()[1] for l in open(f"{work}/sampled") if len(l.split()) == 2]
order = [n for n in sampled if n in syms]
for n in sorted((n for n in uses if n in syms), key=lambda n: (-uses[n], syms[n][0])):
    if n not in order:
        order.append(n)
for n in variants + child + [n for n in libc if n in syms]:
    if n not in order:
        order.append(n)
open(out, "w").write("\n".join(order) + "\n")
size = sum(syms[n][1] for n in order)
print(f"{len(order)} functions, {size / 1024:.0f} KiB, written to {out}")
PY
