#!/usr/bin/env bash
# Process overhead of `sbx run` against a bare spawn, measured in one run with hyperfine -N,
# plus bubblewrap with comparable isolation when it is installed, and sbx's peak RSS.
# Usage: benches/overhead.sh [runs]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
cargo build --release --quiet
# .cargo/config.toml builds for the host tuple explicitly, so the binary sits under it.
sbx=$PWD/target/$(rustc -vV | sed -n 's/^host: //p')/release/sbx
work=$(mktemp -d /var/tmp/sbx-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
cmds=(
  "/bin/true"
  "$sbx run --no-policy --profile workspace -- /bin/true"
  "$sbx run --profile workspace -- /bin/true"
)
names=("bare" "sbx workspace (no policy)" "sbx workspace (with policy gate)")
if command -v bwrap >/dev/null; then
  cmds+=("bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $work $work /bin/true")
  names+=("bwrap (comparable isolation)")
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
PY
# Peak RSS of the sbx process itself (VmHWM just before it exits).
python3 - "$sbx" <<'PY'
import subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "run", "--no-policy", "--profile", "workspace", "--", "sleep", "0.5"])
hwm = 0
while p.poll() is None:
    try:
        for line in open(f"/proc/{p.pid}/status"):
            if line.startswith("VmHWM:"):
                hwm = max(hwm, int(line.split()[1]))
    except FileNotFoundError:
        break
    time.sleep(0.02)
print(f"sbx peak RSS: {hwm/1024:.1f} MiB")
PY
