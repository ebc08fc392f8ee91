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
# Reserving far more address space than the memory budget and using little of it, as JVM heaps,
# V8's cages and WebAssembly memories do: 64 GiB reserved, 16 MiB of it made writable and used.
python3 - <<'PY' && echo "OK reserve"
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_NONE, PROT_RW, MAP_PRIVATE, MAP_ANON, MAP_NORESERVE = 0, 3, 0x02, 0x20, 0x4000
base = libc.mmap(None, 64 << 30, PROT_NONE, MAP_PRIVATE | MAP_ANON | MAP_NORESERVE, -1, 0)
assert base not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
assert libc.mprotect(base, 16 << 20, PROT_RW) == 0, ctypes.get_errno()
ctypes.memset(base, 7, 16 << 20)
assert ctypes.string_at(base + (8 << 20), 1) == b"\x07"
PY
