#!/bin/bash
# Export branch kevent of the kernel tree back to kevent.mbox, the only
# form in which the patches live in this repository, then mark the tree
# as holding that mbox so tools/tree.sh leaves it alone.
#
#   tools/export.sh
#
# The 0/N mail takes its subject (first paragraph) and body from
# tools/cover-letter.txt; commit that file and kevent.mbox together.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_tree
cd "$TREE"
git rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null || die "no branch $BRANCH in $TREE"
[ -d "$(git rev-parse --git-path rebase-apply)" ] && die "a git am or rebase is in progress in $TREE"
n=$(git rev-list --count "$BASE_TAG..$BRANCH")
[ "$n" -gt 0 ] || die "branch $BRANCH has no commits over $BASE_TAG"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	log "warning: uncommitted changes in $TREE are not exported"
fi

# format-patch takes the cover letter from the branch description.
git config "branch.$BRANCH.description" "$(cat "$ROOT/tools/cover-letter.txt")"

# The cover letter is dated and signed by the committer: use the newest
# patch's date and the tip's author, so exporting the same commits gives
# the same mbox byte for byte, whoever runs it.
date=$(git log --format=%at "$BASE_TAG..$BRANCH" | sort -n | tail -n 1)
GIT_COMMITTER_DATE="@$date +0000" \
GIT_COMMITTER_NAME=$(git log -1 --format=%an "$BRANCH") \
GIT_COMMITTER_EMAIL=$(git log -1 --format=%ae "$BRANCH") \
	git format-patch --stdout --cover-letter --cover-from-description=subject \
	--base="$BASE_TAG" "$BASE_TAG..$BRANCH" >"$MBOX.tmp"
grep -q '\*\*\* SUBJECT HERE \*\*\*' "$MBOX.tmp" && die "cover letter has no subject"
mv "$MBOX.tmp" "$MBOX"
record_applied
log "wrote $n patches to $MBOX"
