# Read-only git: log, status, diff, show on the workspace's repository.
git log --format=%s | grep -qx init && git status --porcelain >/dev/null && git diff --stat >/dev/null \
  && git show -s --format=%an HEAD | grep -q . && echo "OK git-read"
