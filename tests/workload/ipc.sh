# Unix sockets and flock, in the workspace and in /tmp.
mkdir -p w/ipc || exit 1
for where in ws:w/ipc tmp:/tmp; do
  name=${where%%:*}; dir=${where#*:}
  python3 - "$dir/wl.sock" <<'PY' && echo "OK unix-socket-$name"
import os, socket, sys, threading
path = sys.argv[1]
if os.path.exists(path): os.unlink(path)
srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(1)
def serve():
    c, _ = srv.accept(); c.sendall(c.recv(100)[::-1]); c.close()
t = threading.Thread(target=serve); t.start()
cl = socket.socket(socket.AF_UNIX); cl.connect(path); cl.sendall(b"abc"); assert cl.recv(100) == b"cba"
t.join(); cl.close(); srv.close(); os.unlink(path)
a, b = socket.socketpair(); a.sendall(b"x"); assert b.recv(1) == b"x"
PY
  lock="$dir/wl.lock"
  # Holder takes the lock and keeps it until its fifo is written; the second try must fail,
  # then succeed after the holder is released.
  rm -f "$dir/wl.fifo"; mkfifo "$dir/wl.fifo"
  flock "$lock" sh -c "echo held; read x < '$dir/wl.fifo'" > "$dir/holder.out" &
  holder=$!
  # Wait for the holder (or for it to fail: then the fifo is opened here so nothing blocks).
  while kill -0 "$holder" 2>/dev/null && ! grep -q held "$dir/holder.out" 2>/dev/null; do sleep 0.05; done
  if grep -q held "$dir/holder.out" 2>/dev/null && ! flock -n "$lock" true; then busy=1; else busy=0; fi
  if kill -0 "$holder" 2>/dev/null; then echo go > "$dir/wl.fifo"; fi
  wait "$holder"; held=$?
  [ "$held" = 0 ] && [ "$busy" = 1 ] && flock -n "$lock" true && echo "OK flock-$name"
  rm -f "$dir/wl.fifo" "$dir/holder.out" "$lock"
done
