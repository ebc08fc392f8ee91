# The sandbox's private, writable /tmp and /dev/shm.
test "$(stat -f -c %T /tmp)" = tmpfs && test "$(stat -f -c %T /dev/shm)" = tmpfs \
  && listing=$(ls -A /tmp) && test -z "$(printf '%s' "$listing" | grep -v '^git-clone2$')" && echo "OK tmp-private"
d=$(mktemp -d) && printf 'tmp-data\n' > "$d/f" && mv "$d/f" "$d/g" && grep -qx tmp-data "$d/g" \
  && ln -s "$d/g" "$d/link" && cat "$d/link" | grep -qx tmp-data && rm -r "$d" && echo "OK tmp"
printf 'shm-data\n' > /dev/shm/wl-f && grep -qx shm-data /dev/shm/wl-f && rm /dev/shm/wl-f \
  && python3 -c '
from multiprocessing import shared_memory
s = shared_memory.SharedMemory(create=True, size=4096); s.buf[0] = 7
t = shared_memory.SharedMemory(name=s.name); assert t.buf[0] == 7
t.close(); s.close(); s.unlink()' && echo "OK dev-shm"
