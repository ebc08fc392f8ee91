#!/usr/bin/env bash
# Process overhead of `sbx run` against a bare spawn, measured in one run with hyperfine -N,
# plus bubblewrap with comparable isolation when it is installed, and sbx's peak RSS.
# Usage: benches/overhead.sh [runs] [baseline-sbx]   (builds the release binary first; a second
# sbx binary, say a build of an earlier commit, is measured in the same run for comparison)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
runs=${1:-300}
baseline=${2:-}
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
cargo build --release --quiet
# .cargo/config.toml builds for the host tuple explicitly, so the binary sits under it.
sbx=$PWD/target/$(rustc -vV | sed -n 's/^host: //p')/release/sbx
# build.rs packs the functions a run executes at the start of the text (link/hot-functions.txt);
# names the code no longer has are skipped, so say how much of the list still matches.
if command -v nm >/dev/null && [ -s link/hot-functions.txt ]; then
  listed=$(sort -u link/hot-functions.txt | wc -l)
  found=$(comm -12 <(nm --defined-only "$sbx" | awk '{print $3}' | sort -u) <(sort -u link/hot-functions.txt) | wc -l)
  echo "hot-function list: $found of $listed names found in the binary$([ $((found * 10)) -lt $((listed * 9)) ] && echo ' (stale: run benches/hot-functions.sh)')"
fi
work=$(mktemp -d /var/tmp/sbx-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cmds=(
  "/bin/true"
  "$sbx run --no-policy --profile workspace -- /bin/true"
  "$sbx run --profile workspace -- /bin/true"
)
names=("bare" "sbx workspace (no policy)" "sbx workspace (with policy gate)")
if [ -n "$baseline" ]; then
  # A workspace of its own: an older build may leave files in its workspace (placeholder
  # directories) that would change what the current one mounts.
  mkdir "$work/base"
  cmds+=("$baseline run --no-policy --workspace $work/base --profile workspace -- /bin/true"
    "$baseline run --workspace $work/base --profile workspace -- /bin/true")
  names+=("baseline workspace (no policy)" "baseline workspace (with gate)")
fi
# The floor any namespace sandbox pays: creating the same namespaces, one fork, one exec.
# benches/floor.c does only that, from a static binary; unshare does the same from a dynamic one.
if command -v cc >/dev/null && { cc -O2 -static -o "$work/floor" "$repo/benches/floor.c" 2>/dev/null ||
  cc -O2 -o "$work/floor" "$repo/benches/floor.c"; }; then
  cmds+=("$work/floor /bin/true")
  names+=("floor: namespaces, fork, exec")
else
  echo "no C compiler: the floor program is left out" >&2
fi
userns=(); [ "$(id -u)" = 0 ] || userns=(--user --map-root-user)
cmds+=("unshare ${userns[*]} --fork --pid --mount --net --ipc --uts /bin/true")
names+=("unshare: namespaces alone")
if command -v bwrap >/dev/null; then
  cmds+=("bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $work $work /bin/true")
  names+=("bwrap (comparable isolation)")
fi
# A developer's workspace exists for longer than a second: let the fresh one's change times
# fall behind the one second the store of plans waits before a directory's stamp vouches for
# its entries, and let each command store and settle its plan (docs/sandbox.md), as the runs
# of a real workspace find it. SETTLE=0 measures runs in a workspace made that very second.
if [ "${SETTLE:-1}" != 0 ]; then
  sleep 1.2
  for c in "${cmds[@]}"; do for _ in 1 2 3; do $c >/dev/null 2>&1 || true; done; done
fi
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hyperfine -N --warmup 20 --runs "$runs" --export-json "$work/h.json" "${args[@]}" >/dev/null
python3 - "$work/h.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
base = statistics.median(r[0]["times"])
print(f"{'command':<34} {'median':>10} {'ratio':>7}")
for x in r:
    m = statistics.median(x["times"])
    print(f"{x['command']:<34} {m*1e6:>8.0f}us {m/base:>6.2f}x")
by = {x["command"]: statistics.median(x["times"]) for x in r}
for new, old in (("sbx workspace (no policy)", "baseline workspace (no policy)"),
                 ("sbx workspace (with policy gate)", "baseline workspace (with gate)")):
    if old in by:
        print(f"{new} against the baseline: {by[new] / by[old]:.3f}x")
PY
# Peak RSS of the sbx process itself (VmHWM, sampled until it exits), with and without the
# permission gate, and how much of it is pages of the sbx binary (RssFile).
python3 - "$sbx" <<'PY'
import subprocess, sys, time
for gate in ([], ["--no-policy"]):
    p = subprocess.Popen([sys.argv[1], "run", *gate, "--profile", "workspace", "--", "sleep", "0.5"])
    hwm = rss_file = 0
    while p.poll() is None:
        try:
            for line in open(f"/proc/{p.pid}/status"):
                key, value = line.split(":", 1)
                if key == "VmHWM":
                    hwm = max(hwm, int(value.split()[0]))
                elif key == "RssFile":
                    rss_file = max(rss_file, int(value.split()[0]))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.01)
    label = "with the gate" if not gate else "--no-policy"
    print(f"sbx peak RSS ({label}): {hwm/1024:.2f} MiB, of which binary pages {rss_file/1024:.2f} MiB")
PY
