#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Checks that product code includes point down the layers and name them (HACKING.md, "Layers"):
#
#   app/      may include app/, widgets/, analysis/, loaders/
#   widgets/  may include widgets/, analysis/, loaders/   (Qt starts here)
#   analysis/ may include analysis/, loaders/             (no Qt)
#   loaders/  may include loaders/                        (no Qt)
#
# Every quoted #include in those folders is written from the project root with its layer
# ("analysis/run_analysis.h", "loaders/format/run_file.h"), never relative to the including file
# or to a folder's own include root; the generated "NAME.moc" files are the only exception.
# Folders of one layer include each other without a cycle (widgets/timeline/model <- render <- view;
# a folder and its subfolders count as one).
# Prints each violation as FILE:LINE: message (FILE: for a cycle) and exits 1 when there is one.
#
#   scripts/check-layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

python3 - <<'PY'
import pathlib, re, sys

ALLOWED = {
    "app": ("app/", "widgets/", "analysis/", "loaders/"),
    "widgets": ("widgets/", "analysis/", "loaders/"),
    "analysis": ("analysis/", "loaders/"),
    "loaders": ("loaders/",),
}
QT_FREE = ("analysis", "loaders")
quoted = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
angled = re.compile(r'^\s*#\s*include\s*<(Q[A-Za-z]+|Qt[A-Za-z]*/[^>]*)>')
bad = 0
for layer, allowed in ALLOWED.items():
    for path in sorted(pathlib.Path(layer).rglob("*")):
        if path.suffix not in (".h", ".cpp", ".hpp"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = quoted.match(line)
            if m:
                inc = m.group(1)
                if inc.endswith(".moc"):
                    continue
                if not inc.startswith(("app/", "widgets/", "analysis/", "loaders/")):
                    print(f'{path}:{n}: "{inc}" does not name its layer (write it from the project root)')
                    bad += 1
                elif not inc.startswith(allowed):
                    print(f'{path}:{n}: {layer}/ may not include "{inc}" (layers point down: '
                          f'app -> widgets -> analysis -> loaders)')
                    bad += 1
                elif not pathlib.Path(inc).is_file():
                    print(f'{path}:{n}: "{inc}" does not exist')
                    bad += 1
            elif layer in QT_FREE and angled.match(line):
                print(f"{path}:{n}: {layer}/ is free of Qt; {line.strip()} belongs in widgets/ or app/")
                bad += 1
# No include cycle between the folders of one layer (widgets/timeline/model <- render <- view;
# widgets/panels, widgets/study and widgets/export all use widgets/charts): a depth-first search
# of the graph of folders, where an edge is a file of one folder including a header of another
# that is neither its subfolder nor its parent.
edges = {}
for layer in ALLOWED:
    for path in sorted(pathlib.Path(layer).rglob("*")):
        if path.suffix not in (".h", ".cpp", ".hpp"):
            continue
        src = str(path.parent)
        for line in path.read_text(encoding="utf-8").splitlines():
            m = quoted.match(line)
            if m and m.group(1).startswith(layer + "/"):
                dst = str(pathlib.Path(m.group(1)).parent)
                # A folder and its subfolders are one unit (loaders/import registers the
                # importers of loaders/import/telemetry, which implement its importer.h).
                nested = dst.startswith(src + "/") or src.startswith(dst + "/")
                if dst != src and not nested:
                    edges.setdefault(src, {}).setdefault(dst, str(path))
state, stack = {}, []
def visit(node):
    global bad
    state[node] = 1
    stack.append(node)
    for nxt, via in sorted(edges.get(node, {}).items()):
        if state.get(nxt) == 1:
            cycle = stack[stack.index(nxt):] + [nxt]
            print(f"{via}: include cycle between folders: {' -> '.join(cycle)}")
            bad += 1
        elif nxt not in state:
            visit(nxt)
    stack.pop()
    state[node] = 2
for node in sorted(edges):
    if node not in state:
        visit(node)
if bad:
    print(f"check-layers: {bad} violation(s)", file=sys.stderr)
    sys.exit(1)
print("check-layers: every include names its layer and points down; no folder include cycle")
PY
