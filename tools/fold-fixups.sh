#!/bin/bash
# Fold the fixup! commits of branch kevent of build/linux into the patches
# they fix (git rebase -i --autosquash onto kevent-base), then give every
# file the rebase rewrote with the same content its old mtime back. A
# rebase rewrites the files of every later patch (the system call tables
# among them), and make would otherwise rebuild most of each kernel in
# build/ (about 20 minutes for the debug kernel); this way only what
# really changed is rebuilt.
#
#   tools/fold-fixups.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_tree
cd "$TREE"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "uncommitted changes in $TREE: commit them as fixups first"

declare -A mtime sum
while read -r f; do
	[ -f "$f" ] || continue
	mtime[$f]=$(stat -c %Y "$f")
	sum[$f]=$(sha1sum <"$f" | cut -d' ' -f1)
done < <(git diff --name-only "$BASE_TAG" "$BRANCH")

GIT_SEQUENCE_EDITOR=true git rebase -q -i --autosquash "$BASE_TAG"

changed=0
for f in "${!mtime[@]}"; do
	[ -f "$f" ] || continue
	if [ "$(sha1sum <"$f" | cut -d' ' -f1)" = "${sum[$f]}" ]; then
		touch -d "@${mtime[$f]}" "$f"
	else
		changed=$((changed + 1))
		log "changed by the fold: $f"
	fi
done
log "folded; $(git rev-list --count "$BASE_TAG..$BRANCH") patches, $changed files changed"
