# ps and /proc/self.
sleep 30 & sp=$!
# The child may not have exec'd sleep yet when ps looks: wait until it has (bounded).
i=0; while [ "$(cat /proc/$sp/comm 2>/dev/null)" != sleep ] && [ $i -lt 100000 ]; do i=$((i+1)); done
ps -eo pid,comm | awk -v p="$sp" '$1==p && $2=="sleep"{f=1} END{exit !f}' && ps -ef | grep -q 'ps -ef' && echo "OK ps"
kill "$sp"; wait "$sp" 2>/dev/null
readlink /proc/self/exe | grep -q readlink \
  && grep -q '^Name:' /proc/self/status && test -r /proc/self/maps && ls /proc/self/fd | grep -qx 0 \
  && test "$(readlink /proc/$$/cwd)" = "$PWD" && grep -q . /proc/cpuinfo && grep -q MemTotal /proc/meminfo \
  && echo "OK proc-self"
