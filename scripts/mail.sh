#!/usr/bin/env bash
# Prepare the 7.3 series for the mailing lists as separate postings
# (./postings): each one based on the pristine tree alone, numbered on its
# own, with its cover letter from cover-letters/<name>, From: and
# Signed-off-by: of the sender (git config user.name / user.email, as
# 'git format-patch -s' does), the notes below each patch's '---', and
# To/Cc from the kernel tree's scripts/get_maintainer.pl for that posting's
# patches. Refuses while the sender's identity is unset or the repository's
# placeholder. Checks every mail with checkpatch --strict. Sends nothing.
#
# usage: scripts/mail.sh
# output: build/outgoing/<posting>/*.patch and send-email.sh per posting,
#   build/outgoing/summary

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: $0" >&2; exit 2; }
load_params
LOG_TAG=mail
[ "$KERNEL" = 7.3 ] || die "make mail posts the mainline (7.3) series; the $KERNEL line is not posted"

# Signing off certifies the Developer's Certificate of Origin
# (Documentation/process/submitting-patches.rst) for the person who sends:
# only a real name and address can do that.
NAME=$(git -C "$TOP" config user.name || true)
EMAIL=$(git -C "$TOP" config user.email || true)
# MAIL_APPLY_ONLY=1 (make check): only that each posting applies to the
# pristine tree on its own; no mail is written, so nobody signs
APPLY_ONLY=${MAIL_APPLY_ONLY:-0}
if [ "$APPLY_ONLY" = 1 ]; then
	NAME=softirq-rt EMAIL=softirq-rt@localhost
elif [ -z "$NAME" ] || [ -z "$EMAIL" ] ||
	[[ $EMAIL =~ (\.example|\.invalid|\.test|\.localhost|@localhost)$ ]] ||
	[[ $NAME =~ ^Seed\ [0-9a-f]{8}\ maintainers$ ]]; then
	die "no sender: set your own identity, which signs off every patch: git config --global user.name 'Your Name'; git config --global user.email you@your.domain"
fi
SENDER="$NAME <$EMAIL>"

"$TOP/scripts/tree.sh" patched
SRC=$(src_dir patched)
KVER=$(kernel_version)
OUT=$BUILD/outgoing
if [ "$APPLY_ONLY" = 0 ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	SUMMARY=$OUT/summary
	: >"$SUMMARY"
fi

subject_of() { # PATCH: its subject without "[PATCH] "
	sed -n '/^Subject: /{s/^Subject: \[PATCH\] //;p;q}' "$1"
}

# The changelog of patch $1 without the repository's placeholder sign-off,
# signed off by the sender.
message_of() {
	python3 - "$1" "$SENDER" <<'PY'
import re, sys
path, sender = sys.argv[1:]
lines = open(path).read().split("\n")
i = next(n for n, l in enumerate(lines) if l.startswith("Subject: "))
subject = lines[i][len("Subject: "):]
i += 1
while lines[i].startswith(" "):
    subject += lines[i]
    i += 1
subject = re.sub(r"^\[PATCH\] ", "", subject)
while lines[i] != "":
    i += 1
body = []
for l in lines[i + 1:]:
    if l == "---":
        break
    if re.match(r"Signed-off-by: .*(\.example|\.invalid|@localhost)>$", l):
        continue
    body.append(l)
while body and body[-1] == "":
    body.pop()
sob = "Signed-off-by: " + sender
if sob not in body:
    # trailers are one block, separated from the text by a blank line
    if body and not re.match(r"[A-Za-z-]+: \S", body[-1]):
        body.append("")
    body.append(sob)
print(subject + "\n\n" + "\n".join(body))
PY
}

# Commits of one posting on top of pristine, made from the patch files
# without a work tree: any dependency on another posting fails here.
commit_posting() { # PATCH...: prints the last commit
	local idx parent tree p
	idx=$(mktemp)
	parent=$(git -C "$SRC" rev-parse pristine)
	GIT_INDEX_FILE=$idx git -C "$SRC" read-tree pristine
	for p in "$@"; do
		GIT_INDEX_FILE=$idx git -C "$SRC" apply --cached "$TOP/$p" ||
			die "$p does not apply to $KVER without the other postings"
		tree=$(GIT_INDEX_FILE=$idx git -C "$SRC" write-tree)
		parent=$(message_of "$TOP/$p" |
			GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$EMAIL \
			GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$EMAIL \
			git -C "$SRC" commit-tree "$tree" -p "$parent")
	done
	rm -f "$idx"
	echo "$parent"
}

posting() { # NAME PREFIX SUBJECT-PREFIX VERSION PATCH...
	local name=$1 sp=$3 v=$4 dir=$OUT/$1 head cover subject n i p f to cc added
	shift 4
	cover=$TOP/cover-letters/$name
	[ -s "$cover" ] || die "no cover letter in cover-letters/$name"
	# To: and Cc: lines at the top of the cover letter add people whom
	# MAINTAINERS does not name for these files (kernel/softirq.c has no
	# entry of its own)
	mapfile -t xto < <(sed -n '/^\(To\|Cc\): /!q; s/^To: //p' "$cover")
	mapfile -t xcc < <(sed -n '/^\(To\|Cc\): /!q; s/^Cc: //p' "$cover")
	head=$(commit_posting "$@")
	mkdir -p "$dir"

	# maintainers and lists of what this posting touches
	git -C "$SRC" format-patch -q --stdout "pristine..$head" >"$dir/.all"
	# (its --fixes lookup of the commit a Fixes: tag names finds nothing
	# in Debian's source import, which has no upstream history: quiet)
	gm() {
		(cd "$SRC" && perl scripts/get_maintainer.pl --no-rolestats --no-git \
			--no-git-fallback "$@" "$dir/.all" 2>/dev/null) | sort -u
	}
	mapfile -t to < <( (printf '%s\n' "${xto[@]}"; gm --no-l --no-r) | awk 'NF && !seen[$0]++')
	mapfile -t cc < <( (printf '%s\n' "${xcc[@]}"; gm --no-m) | awk 'NF && !seen[$0]++' |
		grep -vxF -f <(printf '%s\n' "${to[@]}"))
	[ ${#to[@]} -gt 0 ] || die "$name: get_maintainer.pl found no maintainer"
	added=$(git -C "$SRC" diff --numstat pristine "$head" | awk '{a += $1} END {print a + 0}')
	rm -f "$dir/.all"

	local args=(-q --cover-letter --thread=shallow --subject-prefix="$sp" -o "$dir")
	[ "$v" = 1 ] || args+=(-v"$v")
	for f in "${to[@]}"; do args+=(--to="$f"); done
	for f in "${cc[@]}"; do args+=(--cc="$f"); done
	# the committer identity names the cover letter and the Message-Ids
	git -C "$SRC" -c user.name="$NAME" -c user.email="$EMAIL" \
		format-patch "${args[@]}" "pristine..$head"

	# notes to the reader below '---', as in patches/, but for the
	# project's answers to checkpatch, which are addressed to nobody
	i=0
	for p in "$@"; do
		i=$((i + 1))
		python3 "$TOP/scripts/notes.py" mail "$TOP/$p" >"$dir/.notes"
		[ -s "$dir/.notes" ] &&
			python3 "$TOP/scripts/notes.py" put "$(ls "$dir"/*"$(printf '%04d' $i)"-*.patch)" "$dir/.notes"
	done
	rm -f "$dir/.notes"

	f=$(ls "$dir"/*0000-cover-letter.patch)
	subject=$(sed -n '/^\(To\|Cc\): /!{p;q}' "$cover")
	python3 - "$f" "$subject" "$cover" "$KVER" "$(cat "$CACHE/dl/$KSRC_PKG.deb-name" 2>/dev/null || echo "$KSRC_PKG")" <<'PY'
import sys
path, subject, cover, kver, deb = sys.argv[1:]
lines = open(cover).read().split("\n")
while lines and (lines[0].startswith("To: ") or lines[0].startswith("Cc: ")):
    lines.pop(0)
blurb = "\n".join(lines[1:]).strip("\n")
blurb += f"\n\nBased on Linux {kver} ({deb});\napplies to it on its own.\n"
text = open(path).read()
text = text.replace("*** SUBJECT HERE ***", subject, 1)
text = text.replace("*** BLURB HERE ***", blurb, 1)
open(path, "w").write(text)
PY
	grep -qE '\*\*\*|@[A-Z]+@' "$f" && die "cover letter placeholder left in $f"

	# what goes out is what checkpatch --strict accepts, or what the
	# patch's notes in patches/ answer (left out of the mail)
	i=0
	for p in "$@"; do
		i=$((i + 1))
		f=$(ls "$dir"/*"$(printf '%04d' $i)"-*.patch)
		run_checkpatch "$SRC" "$f" >"$dir/.checkpatch" 2>&1 ||
			grep -q '^checkpatch ' <<<"$(python3 "$TOP/scripts/notes.py" get "$TOP/$p")" ||
			die "checkpatch --strict: $f: $(cat "$dir/.checkpatch")"
	done
	rm -f "$dir/.checkpatch"

	cat >"$dir/send-email.sh" <<'EOF'
#!/bin/sh
# Review first; then: git send-email ... without --dry-run.
exec git send-email --dry-run --confirm=always "$(dirname "$0")"/*.patch
EOF
	chmod +x "$dir/send-email.sh"
	n=$#
	{
		echo "$name: [$sp$([ "$v" = 1 ] || echo " v$v")] $n patches, $added lines added: $subject"
		echo "  To: $(IFS=,; echo "${to[*]}")"
		echo "  Cc: $(IFS=,; echo "${cc[*]}")"
		grep -h '^Subject:' "$dir"/*.patch | sed 's/^/  /'
	} >>"$SUMMARY"
}

# Which patch goes with which posting: posting_of(), the first line whose
# prefix matches.
declare -A TAKEN=()
while read -r p; do
	owner=$(posting_of "$(subject_of "$TOP/$p")") || die "$p is in no posting: check ./postings"
	TAKEN[$p]=${owner%% *}
done < <(series_patches)
npost=0
while read -r name prefix sp1 sp2 rest; do
	if [ "$sp1" = RFC ]; then sp="RFC $sp2" v=$rest; else sp=$sp1 v="$sp2"; fi
	mine=()
	while read -r p; do
		[ "${TAKEN[$p]}" != "$name" ] || mine+=("$p")
	done < <(series_patches)
	[ ${#mine[@]} -gt 0 ] || die "posting $name matches no patch"
	if [ "$APPLY_ONLY" = 1 ]; then
		commit_posting "${mine[@]}" >/dev/null
		log "$name: ${#mine[@]} patches apply to $KVER on their own"
	else
		posting "$name" "$prefix" "$sp" "$v" "${mine[@]}"
	fi
	npost=$((npost + 1))
done < <(postings)
[ "$APPLY_ONLY" = 0 ] || exit 0

# nothing of the repository's placeholder identity goes out
if grep -rlE 'a-seed-[0-9a-f]{8}|Seed [0-9a-f]{8} maintainers|\.example>' "$OUT"; then
	die "the placeholder identity is in the mails above"
fi
cat "$SUMMARY"
log "$npost postings from $SENDER in $OUT (each based on Linux $KVER, tag 'pristine', alone)"
