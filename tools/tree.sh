#!/bin/bash
# Make the kernel tree: unpack Debian's linux-source-6.12 into build/linux,
# commit it as the base (tag kevent-base), and git-am kevent.mbox onto the
# branch "kevent". Re-running is cheap: nothing happens when the branch
# already holds the current mbox.
#
#   tools/tree.sh          make or refresh the tree
#   tools/tree.sh --force  re-apply the mbox even over local commits
set -euo pipefail
. "$(dirname "$0")/lib.sh"

force=0
[ "${1:-}" = --force ] && force=1

make_base() {
	[ -d "$TREE/.git" ] && return
	[ -f "$SRC_TAR" ] || install_source
	log "unpacking $SRC_TAR into $TREE"
	rm -rf "$TREE" "$BUILD/linux-source-6.12"
	mkdir -p "$BUILD"
	tar -C "$BUILD" -xf "$SRC_TAR"
	mv "$BUILD/linux-source-6.12" "$TREE"
	cd "$TREE"
	git init -q -b base
	git config core.autocrlf false
	git config gc.auto 0
	# Debian's tarball ignores everything at the top level ("/*"), so
	# the base has to be added with -f.
	git add -f -A
	local ver
	ver=$(make -s kernelversion)
	GIT_AUTHOR_DATE="2025-01-01T00:00:00Z" GIT_COMMITTER_DATE="2025-01-01T00:00:00Z" \
		git commit -q -m "Debian $SRC_PKG $ver" \
		-m "Unpacked from $SRC_TAR as shipped by the Debian package."
	git tag "$BASE_TAG"
}

apply_series() {
	cd "$TREE"
	local sum head applied
	sum=$(mbox_sum)
	if git rev-parse -q --verify "refs/heads/$BRANCH" >/dev/null; then
		head=$(git rev-parse "$BRANCH")
		applied=$(git config --get kevent.applied-head || true)
		if [ "$(git config --get kevent.applied-mbox || true)" = "$sum" ] &&
		   [ "$head" = "$applied" ]; then
			log "branch $BRANCH already holds kevent.mbox"
			git checkout -q "$BRANCH"
			return
		fi
		if [ "$head" != "$applied" ] && [ $force = 0 ]; then
			die "branch $BRANCH has commits not from kevent.mbox; run tools/export.sh first or pass --force"
		fi
	fi
	# Re-applying checks out and cleans the tree: never lose work silently.
	# --ignored: Debian's .gitignore ignores "/*", so new files show only so.
	if [ $force = 0 ] && [ -n "$(git status --porcelain --ignored)" ]; then
		die "uncommitted changes in $TREE; commit and run tools/export.sh, or pass --force"
	fi
	log "applying $MBOX on $BRANCH"
	git am --abort >/dev/null 2>&1 || true
	git checkout -q -f -B "$BRANCH" "$BASE_TAG"
	git clean -q -fdx
	# --empty=drop skips the cover letter, which has no diff. Taking the
	# committer date from the author date (and the identity from lib.sh)
	# gives every machine the same commit ids for the same mbox.
	git am -q --empty=drop --whitespace=nowarn --committer-date-is-author-date "$MBOX"
	record_applied
	log "$(git rev-list --count "$BASE_TAG..HEAD") patches applied"
}

make_base
[ -f "$MBOX" ] || die "no $MBOX"
apply_series
