#!/usr/bin/env python3
"""Notes to the reader of a patch: the text between its '---' line and the
diffstat, which git am drops. The edit trees keep it as a git note of the
commit (tree.sh), export.sh and mail.sh write it back below '---'.

usage: notes.py get PATCH          print the notes of PATCH (nothing if none)
       notes.py mail PATCH         the same without the paragraphs which
                                   answer checkpatch (for the project only)
       notes.py put PATCH NOTES    write the file NOTES below PATCH's '---'
       notes.py --selftest
"""
import re
import sys

DIFFSTAT = re.compile(r"^ \S.* \| |^ \d+ files? changed|^diff --git ")


def split(lines):
    """(index of the '---' line, index of the diffstat) or None."""
    for i, line in enumerate(lines):
        if line.rstrip("\n") == "---":
            for j in range(i + 1, len(lines)):
                if DIFFSTAT.match(lines[j]):
                    return i, j
            return None
        if line.startswith("diff --git "):
            return None
    return None


def get(lines):
    where = split(lines)
    if not where:
        return ""
    return "".join(lines[where[0] + 1:where[1]]).strip("\n")


def for_mail(text):
    """text without its paragraphs starting 'checkpatch '."""
    return "\n\n".join(p for p in text.split("\n\n")
                       if p and not p.startswith("checkpatch "))


def put(lines, notes):
    where = split(lines)
    if not where:
        raise SystemExit("no '---' line before the diff")
    notes = notes.strip("\n")
    body = [notes + "\n", "\n"] if notes else []
    return lines[:where[0] + 1] + body + lines[where[1]:]


def selftest():
    p = ["Subject: x\n", "\n", "text\n", "\n", "Signed-off-by: a\n", "---\n",
         " a.c | 2 +-\n", " 1 file changed\n", "\n", "diff --git a/a.c b/a.c\n"]
    assert get(p) == ""
    q = put(p, "why the warning\nis fine\n")
    assert get(q) == "why the warning\nis fine", get(q)
    assert put(q, "other") == put(p, "other")
    assert put(q, "") == p
    assert for_mail("checkpatch asks\nx\n\nkeep\nthis") == "keep\nthis"
    assert for_mail("checkpatch only") == ""
    print("notes.py: selftest passed")


def main(argv):
    if argv[1:] == ["--selftest"]:
        return selftest()
    if len(argv) == 3 and argv[1] in ("get", "mail"):
        text = get(open(argv[2]).readlines())
        if argv[1] == "mail":
            text = for_mail(text)
        if text:
            print(text)
        return None
    if len(argv) == 4 and argv[1] == "put":
        lines = open(argv[2]).readlines()
        lines = put(lines, open(argv[3]).read())
        open(argv[2], "w").writelines(lines)
        return None
    raise SystemExit(__doc__.split("\n\n", 1)[1].rstrip())


if __name__ == "__main__":
    main(sys.argv)
