# git in the workspace's own repository (created outside the sandbox by the test):
# status, diff, commit, branches, stash, worktrees and local clones.
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e
mkdir -p w/git && cd w/git || exit 1
printf 'one\n' > tracked.txt
git add tracked.txt && git commit -q -m 'add tracked' \
  && git log --format=%s -1 | grep -qx 'add tracked' && echo "OK git-commit"
printf 'two\n' >> tracked.txt
git status --porcelain | grep -q '^ M w/git/tracked.txt' && echo "OK git-status"
git diff | grep -q '^+two' && echo "OK git-diff"
git commit -q -am 'second' || echo "second commit failed"
git branch feature && git checkout -q feature && printf 'feat\n' > feat.txt && git add feat.txt \
  && git commit -q -m feat && git checkout -q - && git merge -q --no-edit feature \
  && git branch --list | grep -q feature && test -f feat.txt && echo "OK git-branch"
printf 'wip\n' >> tracked.txt
git stash -q && ! grep -q wip tracked.txt && git stash list | grep -q . \
  && git stash pop -q && grep -q wip tracked.txt && git checkout -q -- tracked.txt && echo "OK git-stash"
top=$(git rev-parse --show-toplevel)
git worktree add -q "$top/w/git-wt" -b wt-branch && (cd "$top/w/git-wt" && printf 'wt\n' > wt.txt \
  && git add wt.txt && git commit -q -m 'from worktree') \
  && git log --format=%s -1 wt-branch | grep -qx 'from worktree' \
  && git worktree remove "$top/w/git-wt" && echo "OK git-worktree"
# Left for the next run (git-later.sh) to remove: a worktree outlives the run that added it.
git worktree add -q "$top/w/git-wt-kept" -b kept-branch || echo "worktree for a later run failed"
git clone -q "$top" "$top/w/git-clone" && (cd "$top/w/git-clone" && git log --format=%s | grep -qx second) \
  && git clone -q --no-local "$top" /tmp/git-clone2 && test -f /tmp/git-clone2/w/git/feat.txt \
  && echo "OK git-clone"
printf 'u\n' > untracked.txt && git stash -u -q && test ! -e untracked.txt && git stash pop -q \
  && test -f untracked.txt && rm untracked.txt && echo "OK git-stash-untracked"
# At the repository's root: nothing that sbx made may stand in the way (no placeholder
# directories, no mount points of its own).
(cd "$top" && mkdir -p junk-dir && touch junk-dir/f rootjunk && git clean -fdxq -e w -e .wl \
  && test ! -e rootjunk && test ! -e junk-dir && echo "OK git-clean")
