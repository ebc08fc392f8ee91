# git in a later run than git.sh's: a worktree added by an earlier run is removed, and its
# branch deleted (nothing sbx holds in `.git/worktrees/NAME` may stand in the way).
cd w/git || exit 1
top=$(git rev-parse --show-toplevel)
git worktree list --porcelain | grep -qx "worktree $top/w/git-wt-kept" \
  && git worktree remove "$top/w/git-wt-kept" && test ! -e "$top/.git/worktrees/git-wt-kept" \
  && git branch -q -D kept-branch && echo "OK git-worktree-later"
