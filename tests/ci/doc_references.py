#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every reference to a page of docs/ names a page (and a section) that exists (issue 30).

Looks at the repository's text files (code, CMake, scripts, READMEs, docs; build trees, .git and
test data aside) for two kinds of reference:

  - "docs/<page>.md" or "docs/<page>.md#<anchor>" anywhere, read from the repository root (a
    comment such as "// The JSON of `wattline info --json` (docs/format.md)");
  - in Markdown files, links to a .md file relative to the file itself ("[format.md](format.md)",
    "[the guide](docs/user-guide.md#throttling-at-a-glance)").

A reference fails when the file does not exist, or when its anchor is not the anchor of one of
the file's headings as GitHub makes them: the heading's text in lower case, links reduced to
their text, everything but letters, digits, '_', '-' and spaces dropped, spaces turned into '-',
and "-1", "-2"... added to repeated ones.

    doc_references.py [REPO_ROOT]     (default: two folders up from this script)

Prints one line per bad reference ("FILE:LINE: docs/<page>.md does not exist") and exits 1 if
there is any.
"""

import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
SKIP_DIRS = {".git", "data", "node_modules", "__pycache__"}
TEXT = re.compile(r"(\.(c|cc|cpp|h|hpp|py|sh|cmake|md|txt|json|in|desktop|xml|yml|yaml|toml)|"
                  r"CMakeLists\.txt|run)$")
ROOT_REF = re.compile(r"(?<![\w./-])docs/([\w.-]+\.md)(#[\w-]+)?")
MD_LINK = re.compile(r"\]\(([^()\s#]+\.md)(#[^()\s]*)?\)")


def source_files():
    for top, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(top, ROOT)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")
                         and not (rel == "." and d.startswith(".") and d != ".ci")
                         and not (rel == "resources" and d == "samples"))
        for f in sorted(files):
            if TEXT.search(f):
                yield os.path.join(top, f)


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        found, seen, fenced = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if not m:
                    continue
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        _anchors[path] = found
    return _anchors[path]


def check(target, anchor):
    """None when target (an absolute path) and anchor ('#x' or None) exist, else the problem."""
    if not os.path.isfile(target):
        return "does not exist"
    if anchor and anchor[1:] not in anchors(target):
        return f"has no heading with the anchor {anchor}"
    return None


def main():
    bad = []
    for path in source_files():
        rel = os.path.relpath(path, ROOT)
        try:
            lines = open(path, encoding="utf-8").read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        for no, line in enumerate(lines, 1):
            refs = []
            for m in ROOT_REF.finditer(line):
                refs.append((f"docs/{m.group(1)}", m.group(2),
                             os.path.join(ROOT, "docs", m.group(1))))
            if path.endswith(".md"):
                for m in MD_LINK.finditer(line):
                    link = m.group(1)
                    if "://" in link or link.startswith("docs/"):
                        continue  # URLs; docs/... is checked above
                    refs.append((link, m.group(2),
                                 os.path.normpath(os.path.join(os.path.dirname(path), link))))
            for shown, anchor, target in refs:
                problem = check(target, anchor)
                if problem:
                    bad.append(f"{rel}:{no}: {shown}{anchor or ''} {problem}")
    for b in bad:
        print(b)
    print(f"doc_references: {len(bad)} bad reference(s)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
