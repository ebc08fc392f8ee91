# Hundreds of processes, hundreds of open files, dozens of threads, a few hundred MiB.
# WL_PROCS is set by the test (below the profile's process limit).
python3 - "$WL_PROCS" <<'PY' && echo "OK processes"
import subprocess, sys, os
n = int(sys.argv[1])
# Every child blocks on its stdin until released, so all n are alive at the same time.
kids = [subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(n)]
alive = [k for k in kids if k.poll() is None]
assert len(alive) == n, len(alive)
outs = [k.communicate(b"r%d" % i)[0] for i, k in enumerate(kids)]
assert outs == [b"r%d" % i for i in range(n)]
assert all(k.returncode == 0 for k in kids)
PY
mkdir -p w/files && python3 - <<'PY' && echo "OK open-files"
import os
fs = [open("w/files/f%d" % i, "w") for i in range(500)]
for i, f in enumerate(fs): f.write(str(i))
for f in fs: f.close()
assert len(os.listdir("w/files")) == 500
PY
python3 - <<'PY' && echo "OK threads"
import threading
n = 50; b = threading.Barrier(n); done = []
def work(i):
    b.wait(); done.append(i)
ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
for t in ts: t.start()
for t in ts: t.join()
assert sorted(done) == list(range(n))
PY
python3 - <<'PY' && echo "OK memory"
import mmap
size = 300 << 20
m = mmap.mmap(-1, size)
for off in range(0, size, 4096): m[off] = 1
assert sum(m[off] for off in range(0, size, 1 << 20)) == 300
m.close()
PY
