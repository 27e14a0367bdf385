#!/usr/bin/env bash
# Prepare the series for the mailing list (no mail is sent): git
# format-patch of the patched tree with the cover letter from ./cover-letter,
# the version from ./VERSION, a base-commit line, and To/Cc from the kernel
# tree's scripts/get_maintainer.pl.
#
# usage: [KERNEL=7.3] scripts/mail.sh
# output: build/outgoing/v<N>/*.patch, build/outgoing/v<N>/send-email.sh

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [KERNEL=7.3|6.12] $0" >&2; exit 2; }
load_params
LOG_TAG=mail
V=$(tr -d ' \n' <"$TOP/VERSION")
[[ $V =~ ^[1-9][0-9]*$ ]] || die "VERSION must hold a number, not '$V'"
COVER=$TOP/cover-letter
[ -s "$COVER" ] || die "no cover letter in $COVER"

"$TOP/scripts/tree.sh" patched
SRC=$(src_dir patched)
KVER=$(kernel_version)
OUT=$BUILD/outgoing/v$V
rm -rf "$OUT"
mkdir -p "$OUT"

# Maintainers of what the series touches: M: go to To, lists and reviewers
# to Cc, the same for every mail of the thread.
ALL=$OUT/.series.patch
git -C "$SRC" format-patch -q --stdout pristine..HEAD >"$ALL"
gm() {
	(cd "$SRC" && perl scripts/get_maintainer.pl --no-rolestats --no-git \
		--no-git-fallback "$@" "$ALL") | sort -u
}
mapfile -t TO < <(gm --no-l --no-r)
mapfile -t CC < <(gm --no-m | grep -vxF -f <(printf '%s\n' "${TO[@]}"))
[ ${#TO[@]} -gt 0 ] || die "get_maintainer.pl found no maintainer"

args=(-q --cover-letter -v"$V" --base=pristine --thread=shallow -o "$OUT")
for a in "${TO[@]}"; do args+=(--to="$a"); done
for a in "${CC[@]}"; do args+=(--cc="$a"); done
git -C "$SRC" format-patch "${args[@]}" pristine..HEAD

# The cover letter: subject from the first line of ./cover-letter, the
# blurb from the rest; shortlog, diffstat and base-commit stay generated.
cl=$(ls "$OUT"/*0000-cover-letter.patch)
subject=$(head -n1 "$COVER")
python3 - "$cl" "$subject" "$COVER" <<'PY'
import sys
path, subject, cover = sys.argv[1:]
blurb = open(cover).read().split("\n", 1)[1].strip("\n")
text = open(path).read()
text = text.replace("*** SUBJECT HERE ***", subject, 1)
text = text.replace("*** BLURB HERE ***", blurb, 1)
open(path, "w").write(text)
PY
grep -q '\*\*\*' "$cl" && die "cover letter placeholder left in $cl"

cat >"$OUT/send-email.sh" <<EOF
#!/bin/sh
# Review first; then: git send-email --dry-run ... without --dry-run.
exec git send-email --dry-run --confirm=always "\$(dirname "\$0")"/*.patch
EOF
chmod +x "$OUT/send-email.sh"

rm -f "$ALL"
n=$(find "$OUT" -name '*.patch' | wc -l)
log "v$V: $n mails in $OUT (base: Linux $KVER as packaged by Debian, tag 'pristine')"
log "To: $(IFS=,; echo "${TO[*]}")"
log "Cc: $(IFS=,; echo "${CC[*]}")"
grep -h '^Subject:' "$OUT"/*.patch | sed 's/^/  /'
