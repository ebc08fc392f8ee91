#!/usr/bin/env bash
# Spawn cost of `sbx run` when every entry of the built-in credentials list exists in the home
# (each hidden by its own mount), against the same run with a home that has none of them, and,
# when a second sbx binary is given (say a build of an earlier commit), against that binary in
# the same hyperfine run.
# Usage: benches/secrets.sh [runs] [baseline-sbx]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
baseline=${2:-}
cargo build --release --quiet
sbx=$PWD/target/$(rustc -vV | sed -n 's/^host: //p')/release/sbx
work=$(mktemp -d /var/tmp/sbx-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/empty-home" "$work/full-home"
# Every `{home}` entry of profiles/base.toml, as a file (globs as one match).
python3 - profiles/base.toml "$work/full-home" <<'PY'
import os, sys, tomllib
entries = tomllib.load(open(sys.argv[1], "rb"))["filesystem"]["deny_read"]
home = sys.argv[2]
n = 0
for e in entries:
    if e.startswith("{home}/"):
        p = os.path.join(home, e[len("{home}/"):].replace("*", "-x"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write("secret\n")
        n += 1
print(f"{n} home entries planted")
PY
cd "$work/ws"
HOME=$work/full-home "$sbx" run --no-policy --profile workspace -- sh -c 'cat ~/.netrc ~/.claude/.credentials.json; echo exit=$?'
mounts=$(HOME=$work/full-home "$sbx" explain --json --profile workspace | python3 -c 'import json,sys; print(sum(1 for m in json.load(sys.stdin)["plan"]["mounts"] if m["op"] == "hide"))')
echo "hidden paths with the full home: $mounts"
# Interleaved rounds (each round runs every command once, in turn), so that the load of other
# processes on the machine falls on all commands alike; medians over the rounds.
python3 - "$runs" "$sbx" "$work" $baseline <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, sbx, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
bins = [("this", sbx)] + [("baseline", b) for b in sys.argv[4:]]
cmds = [("bare", ["/bin/true"], None)]
for tag, b in bins:
    for home in ("empty-home", "full-home"):
        label = f"{tag}, {'every' if home == 'full-home' else 'no'} secret in home"
        env = dict(os.environ, HOME=f"{work}/{home}")
        cmds.append((label, [b, "run", "--no-policy", "--profile", "workspace", "--", "/bin/true"], env))
# Wall time, and CPU time (user + system of the command and its children), which the load
# of other processes disturbs less.
times = {c[0]: ([], []) for c in cmds}
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for i in range(runs + 20):
    for label, argv, env in cmds:
        t, c = time.perf_counter(), cpu()
        subprocess.run(argv, env=env, check=True)
        if i >= 20:
            times[label][0].append(time.perf_counter() - t)
            times[label][1].append(cpu() - c)
ref = [statistics.median(x) for x in times[cmds[1][0]]]
print(f"{'command':<34} {'wall':>8} {'ratio':>6} {'cpu':>8} {'ratio':>6}  (medians; ratio to the first sbx)")
for label, _, _ in cmds:
    w, c = (statistics.median(x) for x in times[label])
    print(f"{label:<34} {w*1e6:>6.0f}us {w/ref[0]:>5.2f}x {c*1e6:>6.0f}us {c/ref[1]:>5.2f}x")
PY
