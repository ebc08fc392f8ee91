# python: a venv, pip installing a local package offline, multiprocessing, sqlite.
mkdir -p w/py && cd w/py || exit 1
python3 -m venv --system-site-packages venv && venv/bin/python -c 'import sys; assert sys.prefix != sys.base_prefix' \
  && echo "OK python-venv"
mkdir -p pkg/wlpkg
printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "wlpkg"\nversion = "1.0"\n' > pkg/pyproject.toml
printf 'def answer():\n    return 42\n' > pkg/wlpkg/__init__.py
venv/bin/pip install -q --disable-pip-version-check --no-index --no-build-isolation ./pkg \
  && (cd / && "$OLDPWD/venv/bin/python" -c 'import wlpkg; assert wlpkg.answer() == 42') && echo "OK pip-local"
# From a file: the spawn and forkserver methods re-import the main module.
cat > mp_check.py <<'PY'
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    for method in ("fork", "spawn", "forkserver"):
        with mp.get_context(method).Pool(4) as p:
            assert p.map(sq, range(20)) == [x * x for x in range(20)], method
    lock = mp.Lock(); q = mp.Queue()  # POSIX semaphores, in /dev/shm
    with lock:
        pr = mp.Process(target=q.put, args=("hi",)); pr.start(); assert q.get() == "hi"; pr.join()
    assert pr.exitcode == 0
PY
# A bound, so that a broken pool cannot hang the run (workers re-spawned forever).
timeout 300 python3 mp_check.py && echo "OK multiprocessing"
python3 - <<'PY' && echo "OK sqlite"
import sqlite3
c = sqlite3.connect("wl.db")
c.execute("pragma journal_mode=wal")
c.execute("create table t(k text, v int)"); c.execute("insert into t values('a', 7)"); c.commit()
c2 = sqlite3.connect("wl.db")
assert c2.execute("select v from t where k='a'").fetchone() == (7,)
m = sqlite3.connect("/tmp/wl.db"); m.execute("create table u(x)"); m.execute("insert into u values(1)"); m.commit()
assert m.execute("select count(*) from u").fetchone() == (1,)
PY
