#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Lists the product functions longer than a limit (default 150 lines, the project's rule), longest
# first: "LINES  FILE:LINE  NAME". A function's length counts from the first line of its signature
# to its closing brace. Product code is loaders/, analysis/, widgets/ and app/; tests, benchmarks,
# fuzz targets and generated files are left out.
#
#   scripts/long-functions.sh [--limit N] [--check] [DIR...]
#
# --check exits 1 when any function is over the limit (for CI; the CTest test long_functions runs
# it). The count is by braces, not by a compiler: comments, string/char literals and preprocessor
# lines are blanked first, and a brace block counts as a function when its header (the text since
# the previous ';', '{' or '}') has a parameter list and is not a namespace, class, control
# statement or '= {' initializer. Brace initializers at namespace scope (declarative tables) are
# therefore never counted. Lambdas count as part of the function that holds them.
#
# Declarative tables inside a function are exempt too (HACKING.md: "declarative tables aside"):
# a function is a table, and not listed, when at least half of its lines are table lines and its
# other lines stay under the limit. A table line holds data and no logic: a string literal or a
# piece of one, a number, or a brace row ('{Kind::A, "a"},'), with nothing else than names,
# punctuation and the literal wrappers QStringLiteral, QLatin1String, tr, QObject::tr, QT_TR_NOOP,
# std::string and std::string_view; or the head of an assignment whose value follows ('k.name =').
# A control statement (if, for, while, switch, case, do, else, try, catch) or any other call
# makes a line logic. --tables lists the functions over the limit that are exempt as tables,
# with their share of table lines.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
limit=150
check=0
tables=0
dirs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --limit) limit="$2"; shift 2 ;;
    --check) check=1; shift ;;
    --tables) tables=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[[ ${#dirs[@]} -gt 0 ]] || dirs=(loaders analysis widgets app)
cd "$root"
files=$(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cc' \) | sort)
# shellcheck disable=SC2086  # file names have no spaces
python3 - "$limit" "$check" "$tables" $files <<'PY'
import re, sys

limit, check, list_tables = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3] == "1"
paths = sys.argv[4:]

def blank(text, literal_lines=None):
    """Comments, literals and preprocessor lines become spaces; newlines stay (line numbers).
    The numbers (1-based) of the lines a string or char literal touches go into literal_lines."""
    out, i, n = [], 0, len(text)
    at_line_start = True

    def literal(start, end):
        if literal_lines is not None:
            first = text.count("\n", 0, start) + 1
            literal_lines.update(range(first, first + text.count("\n", start, end) + 1))

    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # Preprocessor line, with backslash continuations.
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
                                                      or text[i - 1] in "u8LU"):
            delim_end = text.find("(", i + 2)
            closing = ")" + text[i + 2:delim_end] + '"'
            end = text.find(closing, delim_end)
            end = n if end < 0 else end + len(closing)
            literal(i, end)
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            literal(i, min(j, n - 1) + 1)
            out.append(" " * (min(j, n - 1) + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)

CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|try)\b")
NAME = re.compile(r"((?:[A-Za-z_~][\w]*\s*(?:<[^(){};]*>)?\s*::\s*)*(?:operator\s*[^\s(]+|~?[A-Za-z_]\w*))\s*\($")

def function_name(header):
    depth = 0
    for k, ch in enumerate(header):
        if ch == "(" and depth == 0:
            m = NAME.search(header[: k + 1])
            return re.sub(r"\s+", "", m.group(1)) if m else None
        if ch == "<":
            depth += 0  # template arguments may hold parentheses rarely; ignored
    return None

def classify(header):
    h = header.strip()
    if re.match(r"^(inline\s+)?namespace\b", h) or h.startswith("extern"):
        return "scope"
    if re.search(r"\b(class|struct|union|enum)\b", h) and "(" not in h.split(":")[0]:
        return "scope"
    if "=" in re.sub(r"(operator\s*\S+)|==|!=|<=|>=", "", h) and not re.search(r"\)\s*(const\s*)?=\s*default", h):
        paren = re.sub(r"\([^()]*\)", "", h)
        if "=" in paren.replace("==", ""):
            return "init"
    if CONTROL.match(h):
        return "init"
    if "(" in h and function_name(h):
        return "function"
    return "init"

# Table lines (see the header): data without logic.
WRAPPERS = {"QStringLiteral", "QLatin1String", "QLatin1StringView", "tr", "QT_TR_NOOP",
            "QT_TRANSLATE_NOOP", "string", "string_view", "u8"}
LOGIC = re.compile(r"\b(if|for|while|switch|case|do|else|try|catch|goto)\b")
CALL = re.compile(r"(\w+)\s*\(")

def table_line(code_line, has_literal):
    c = code_line.strip()
    if not c:
        return has_literal  # a piece of a literal (or a blank or comment line)
    if LOGIC.search(c) or re.search(r">\s*\(", c):
        return False
    if any(m.group(1) not in WRAPPERS for m in CALL.finditer(c)):
        return False
    if re.search(r"[^\w\s{}(),;=.:\[\]&*|+\-<>]", c):
        return False
    return (has_literal or re.search(r"\b\d", c) is not None or c.startswith("{")
            or re.search(r"=\s*$", c) is not None)

def table_share(code_lines, literal_lines, start, end):
    """Share of the lines start..end (1-based, inclusive) that are table lines, and their count."""
    n = sum(1 for k in range(start, end + 1)
            if table_line(code_lines[k - 1] if k - 1 < len(code_lines) else "", k in literal_lines))
    return n / (end - start + 1), n

results, exempt = [], []
for path in paths:
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        continue
    literal_lines = set()
    code = blank(text, literal_lines)
    code_lines = code.split("\n")
    line = 1
    header, header_line = "", None
    stack = []  # kinds of the open braces: scope, function, init
    func_start = None
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
        in_function = any(k == "function" for k in stack)
        if c == "{":
            if in_function or (stack and stack[-1] == "init"):
                stack.append("init")
            else:
                # Constructor initializer lists: 'x_{a}' braces follow a name, the body follows ')' or '}'.
                h = header.rstrip()
                ctor_init = re.search(r"\)\s*(noexcept\s*)?:(?!:)", h) is not None
                if ctor_init and h and (h[-1].isalnum() or h[-1] in "_>"):
                    depth = 1
                    header += c
                    i += 1
                    while i < n and depth:
                        header += code[i]
                        if code[i] == "\n":
                            line += 1
                        depth += {"{": 1, "}": -1}.get(code[i], 0)
                        i += 1
                    continue
                kind = classify(header)
                stack.append(kind)
                if kind == "function":
                    func_start = (header_line or line, function_name(header.strip()))
            header, header_line = "", None
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function" and func_start:
                length = line - func_start[0] + 1
                if length > limit:
                    share, n = table_share(code_lines, literal_lines, func_start[0], line)
                    row = (length, path, func_start[0], func_start[1])
                    if share >= 0.5 and length - n <= limit:
                        exempt.append(row + (share,))
                    else:
                        results.append(row)
                func_start = None
            header, header_line = "", None
        elif c == ";":
            header, header_line = "", None
        elif not in_function:
            if header_line is None and not c.isspace():
                header_line = line
            header += c
        i += 1

results.sort(key=lambda r: (-r[0], r[1], r[2]))
for length, path, start, name in results:
    print(f"{length:5d}  {path}:{start}  {name}")
if list_tables:
    for length, path, start, name, share in sorted(exempt, key=lambda r: (-r[0], r[1], r[2])):
        print(f"{length:5d}  {path}:{start}  {name}  (table: {share:.0%} table lines)")
print(f"{len(results)} function(s) over {limit} lines"
      + (f" ({len(exempt)} more exempt as tables, --tables lists them)" if exempt else ""),
      file=sys.stderr)
sys.exit(1 if check and results else 0)
PY
