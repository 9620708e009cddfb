#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the `wattline ...` examples of README.md and docs/*.md, so that an example cannot rot.

Every fenced block whose language is sh, bash, shell or console is read; its lines joined at `\\`
continuations; every line with a wattline command (`wattline ...` or `./build/wattline ...`) is
run, in order, in a fresh working directory per block (TMP/main, with TMP/shared -> ../shared so
that `../shared/data/...` resolves as it does beside a clone) that holds the files the docs use as
placeholders: run.h5 and RUN.h5 (copies of the microbatch-4 sample), gpu.csv, dmon.txt, dcgm.txt,
... (copies of tests/data), a made-up CharLLM-PPT results folder, resources/samples/ (copies:
commands may write beside them), tests/ and bench/ (links). A line joined with && or || runs only its wattline parts (the README's first command
builds first; its `./build/wattline RUN.h5` is what is tried here). Each must exit 0.

A command that opens the GUI (`wattline RUN.h5`) is tried as the user would see it: each file it
names must open (`wattline info FILE` exits 0) and the window must still be up, offscreen, after
a few seconds; it is then closed.

What is not run:
- ```text blocks: synopses (`[OPTIONS]`, `a|b`) and printed output such as error messages;
- a block right after `<!-- doc-test: needs WHAT -->`, for the few examples that need what the
  repository does not hold (a cluster, a server, hours of simulation); WHAT is printed.
A fence without a language holding a line that starts with a wattline command is an error (say sh
or text), as is a shell-block line whose wattline command is not one that can run here (inside
another program's arguments, such as sbatch --wrap) and is not marked.

The README's statement of the run-format version is checked against docs/format.md and the code.

Usage: doc_examples.py WATTLINE_BINARY [--source DIR] [--list] [--only TEXT]
       doc_examples.py --self-test      (the extraction rules on a made-up page)
"""

import argparse
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
# A wattline invocation: the program in command position (line start, after ; & | ( do then, or
# a quote as in sbatch --wrap 'wattline ...'), after optional VAR=value assignments; not the word
# as an argument (build.sh wattline), wattline-copy or WATTLINE=.
WATTLINE_WORD = re.compile(r"(?:^|[;&|(`'\"]|\bdo\b|\bthen\b)\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*"
                           r"(?:\./build/)?wattline(?=\s|$)")
# A segment that is a wattline command: optional VAR=value assignments, then the program.
WATTLINE_COMMAND = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:\./build/)?wattline(?:\s|$)")
SUBCOMMANDS = {"import", "info", "simulate", "analyze", "explain", "calibrate", "whatif", "compare", "summarize", "export", "upgrade",
               "help"}
COMMAND_TIMEOUT_S = 240
GUI_UP_S = 5


class Block:
    def __init__(self, doc, line, language, lines, marker):
        self.doc, self.line, self.language, self.lines, self.marker = (
            doc, line, language, lines, marker)


class Command:
    def __init__(self, block, line, text, segments):
        self.block, self.line, self.text, self.segments = block, line, text, segments

    def where(self):
        return f"{self.block.doc}:{self.line}"


def read_blocks(text, rel):
    """The fenced blocks of a Markdown text, each with the doc-test marker right before it."""
    lines = text.split("\n")
    blocks, i, marker = [], 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            mk = MARKER.match(lines[i])
            if mk:
                marker = mk.group(1)
            elif lines[i].strip():
                marker = None
            i += 1
            continue
        fence, language, start = m.group(2), m.group(3).lower(), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence[0] * len(fence)):
            body.append(lines[i])
            i += 1
        blocks.append(Block(rel, start + 2, language, body, marker))
        marker = None
        i += 1
    return blocks


def strip_comment(line):
    """The line without a trailing # comment (outside quotes)."""
    quote = None
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1] in " \t;&|"):
            return line[:k].rstrip()
    return line


def split_top_level(line):
    """Splits a shell line at && and || outside quotes, $( ) and loops (do ... done)."""
    parts, quote, depth, start, k = [], None, 0, 0, 0
    words = re.compile(r"\b(do|done)\b")
    while k < len(line):
        c = line[k]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif line.startswith("$(", k):
            depth += 1
            k += 1
        elif c == ")" and depth > 0:
            depth -= 1
        elif words.match(line, k) and (k == 0 or not line[k - 1].isalnum()):
            depth += 1 if words.match(line, k).group(1) == "do" else -1
        elif depth == 0 and line.startswith(("&&", "||"), k):
            parts.append(line[start:k].strip())
            start = k + 2
            k += 1
        k += 1
    parts.append(line[start:].strip())
    return [p for p in parts if p]


def commands_of(block):
    """The logical lines of a shell block that hold a wattline command, with their segments."""
    out, k = [], 0
    while k < len(block.lines):
        first = k
        text = block.lines[k]
        while text.endswith("\\") and k + 1 < len(block.lines):
            k += 1
            text = text[:-1] + block.lines[k]
        k += 1
        code = strip_comment(text)
        if WATTLINE_WORD.search(code):
            segments = [s for s in split_top_level(code) if WATTLINE_WORD.search(s)]
            out.append(Command(block, block.line + first, code, segments))
    return out


def copy(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def gunzip(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(src, "rb") as f, open(dst, "wb") as g:
        shutil.copyfileobj(f, g)


def time_of_day_dmon(src, dst):
    """nvidia-smi dmon -o T from a -o DT log: the date column dropped."""
    rows = []
    for line in Path(src).read_text().splitlines():
        tok = line.split()
        if tok[0] == "#Date":
            rows.append("#Time        " + "  ".join(tok[2:]))
        elif tok[0] == "#YYYYMMDD":
            rows.append("#HH:MM:SS    " + "  ".join(tok[2:]))
        else:
            rows.append(" " + "  ".join(tok[1:]))
    dst.write_text("\n".join(rows) + "\n")


def charllm_folder(d):
    """A made-up CharLLM-PPT run folder in the artifact's layout (docs/import-telemetry.md): two
    ranks, 2 s of power, temperature, SM clock and utilization every 50 ms."""
    d.mkdir(parents=True)
    values = {"gpu_power": 650, "gpu_thermal": 70, "sm_clock": 1800, "gpu_util": 97}
    for rank in (0, 1):
        for metric, v in values.items():
            rows = [f"{1764000000 + k * 0.05:.3f},{v + rank + k % 3}" for k in range(40)]
            (d / f"{metric}_{rank}.csv").write_text("\n".join(rows) + "\n")


def last_json_block(blocks, before):
    text = None
    for b in blocks:
        if b is before:
            break
        if b.language == "json":
            text = "\n".join(b.lines) + "\n"
    return text


class Workdir:
    """TMP/main with the placeholders a block names (created only when named), TMP/shared."""

    def __init__(self, source, binary, root):
        self.source, self.binary, self.root = source, binary, root
        self.main = root / "main"

    def placeholders(self, blocks, block):
        s, data = self.source, self.source / "tests" / "data"
        sample = s / "resources" / "samples" / "llama3-8b-h100x8-mbs4.h5"
        samples = sorted((s / "resources" / "samples").glob("*.h5"))
        h200 = data / "h200"

        def sweep(d):
            for f in samples:
                copy(f, d / f.name)

        def dlrm(d):
            with tarfile.open(data / "kineto" / "param-dlrm-8rank-v100.tar.gz") as t:
                if hasattr(tarfile, "data_filter"):  # Python 3.12 (and late 3.11 releases)
                    t.extractall(d.parent, filter="data")
                else:  # the repository's own test data
                    t.extractall(d.parent)

        def rec(d):
            gunzip(h200 / "gpu.csv.gz", d / "gpu.csv")
            copy(h200 / "trace.json.gz", d / "trace.json.gz")

        return {
            "run.h5": lambda p: copy(sample, p),
            "RUN.h5": lambda p: copy(sample, p),
            "resources/samples": lambda p: sweep(p),
            "sweep/": lambda p: sweep(p),
            "runs/": lambda p: sweep(p),
            "figs": lambda p: p.mkdir(parents=True, exist_ok=True),
            "docs/img": lambda p: p.mkdir(parents=True, exist_ok=True),
            "gpu.csv": lambda p: copy(data / "telemetry" / "nvidia-smi-h100-query.csv", p),
            "dmon.txt": lambda p: copy(data / "telemetry" / "nvidia-smi-dmon-odt-2gpu.txt", p),
            "dmon-t.txt": lambda p: time_of_day_dmon(
                data / "telemetry" / "nvidia-smi-dmon-odt-2gpu.txt", p),
            "dcgm.txt": lambda p: copy(data / "telemetry" / "dcgm-dmon-2gpu.txt", p),
            "amd.csv": lambda p: copy(data / "telemetry" / "amd-smi-metric-8gpu-excerpt.csv", p),
            "power.csv": lambda p: copy(data / "telemetry" / "zeus-monitor-power-mw.csv", p),
            "windows.csv": lambda p: copy(data / "telemetry" / "zeus-windows-4xa40.csv", p),
            "traces/dlrm_kineto": dlrm,
            "gpu_metrics.csv": lambda p: gunzip(h200 / "gpu.csv.gz", p),
            "rank0.json.gz": lambda p: copy(h200 / "trace.json.gz", p),
            "rank1.json.gz": lambda p: copy(h200 / "trace.json.gz", p),
            "report.sqlite": lambda p: copy(data / "nsys" / "pipit-cloverleaf-a100-nsys2024.sqlite",
                                            p),
            "rec/": rec,
            "results/optimization-sweep-h200/llama3-70b/llama3-70b_1_10000": charllm_folder,
            "h100-liquid.json": lambda p: p.write_text(last_json_block(blocks, block)),
        }

    def make(self, blocks, block):
        if self.root.exists():
            shutil.rmtree(self.root)
        self.main.mkdir(parents=True)
        shared = self.source.parent / "shared"
        if shared.exists():
            (self.root / "shared").symlink_to(shared.resolve())
        (self.main / "build").mkdir()
        (self.main / "build" / "wattline").symlink_to(self.binary)
        (self.root / "bin").mkdir()
        (self.root / "bin" / "wattline").symlink_to(self.binary)
        for d in ("tests", "bench"):
            (self.main / d).symlink_to(self.source / d)
        text = "\n".join(block.lines)
        for name, make in self.placeholders(blocks, block).items():
            if re.search(r"(?:^|[\s\"'/=])" + re.escape(name.rstrip("/")) + r"(?:$|[\s\"'/)])",
                         text):
                make(self.main / name.rstrip("/"))

    def env(self):
        env = dict(os.environ)
        env["PATH"] = f"{self.root / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
        env["HOME"] = str(self.root / "home")
        env["XDG_CONFIG_HOME"] = str(self.root / "home" / ".config")
        env["XDG_CACHE_HOME"] = str(self.root / "home" / ".cache")
        env["QT_QPA_PLATFORM"] = "offscreen"
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        return env


def gui_arguments(segment):
    """The files and folders a GUI-opening segment names, or None if it runs a subcommand."""
    if not WATTLINE_COMMAND.match(segment):
        return None
    words = segment.split()
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)
    args = words[1:]
    if not args or args[0] in SUBCOMMANDS or args[0].startswith("-"):
        return None
    return args


def run_gui(segment, work, env):
    """`wattline FILES...`: every file opens with `info`; the window stays up offscreen."""
    for a in gui_arguments(segment):
        files = sorted(Path(work.main, a).glob("*.h5")) if Path(work.main, a).is_dir() else [a]
        for f in files:
            r = subprocess.run([str(work.binary), "info", str(f)], cwd=work.main, env=env,
                               capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
            if r.returncode != 0:
                return False, f"wattline info {f} exited {r.returncode}: {r.stderr.strip()}"
    p = subprocess.Popen(["bash", "-c", "exec " + segment], cwd=work.main, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=GUI_UP_S)
        return False, f"the GUI exited ({p.returncode}) within {GUI_UP_S} s: {err.strip()[-800:]}"
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        return True, f"the window was up after {GUI_UP_S} s"


def run_segment(segment, work, env):
    if gui_arguments(segment) is not None:
        return run_gui(segment, work, env)
    try:
        r = subprocess.run(["bash", "-o", "pipefail", "-c", segment], cwd=work.main, env=env,
                           capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {COMMAND_TIMEOUT_S} s"
    if r.returncode != 0:
        tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-15:])
        return False, f"exit code {r.returncode}:\n{tail}"
    return True, ""


def check_format_version(source):
    """README's '(version N' of the run format = docs/format.md's title = format_version.h."""
    readme = (source / "README.md").read_text()
    spec = (source / "docs" / "format.md").read_text()
    code = (source / "loaders" / "format" / "format_version.h").read_text()
    said = re.search(r"\[docs/format\.md\]\(docs/format\.md\) \(version (\d+)", readme)
    title = re.search(r"^# Wattline run format, version (\d+)", spec, re.M)
    real = re.search(r"kVersion = (\d+);", code)
    if not (said and title and real):
        return ["cannot find the format version in README.md, docs/format.md or "
                "loaders/format/format_version.h"]
    if said.group(1) == title.group(1) == real.group(1):
        return []
    return [f"README.md says format version {said.group(1)}, docs/format.md "
            f"{title.group(1)}, loaders/format/format_version.h {real.group(1)}"]


class Plan:
    """What the docs ask to run: commands (with their doc's blocks), the commands a marker
    excludes, and problems (fences and commands that are neither runnable nor marked)."""

    def __init__(self):
        self.commands, self.excluded, self.problems, self.marked_blocks = [], [], [], 0

    def add(self, rel, text):
        blocks = read_blocks(text, rel)
        for b in blocks:
            if b.language == "":
                if any(WATTLINE_COMMAND.match(line) for line in b.lines):
                    self.problems.append(f"{rel}:{b.line}: a fence without a language holds a "
                                         "wattline command: say sh (an example, run by this "
                                         "test) or text (a synopsis or output)")
                continue
            if b.language not in SHELL_LANGUAGES:
                continue
            found = commands_of(b)
            if b.marker is not None:
                if not b.marker.startswith("needs "):
                    self.problems.append(f"{rel}:{b.line}: unknown doc-test marker "
                                         f"'{b.marker}' (expected: needs WHAT)")
                if not found:
                    self.problems.append(f"{rel}:{b.line}: a doc-test marker on a block without "
                                         "wattline commands")
                self.marked_blocks += 1
                self.excluded += [(c, b.marker) for c in found]
                continue
            for c in found:
                bad = [s for s in c.segments
                       if not (WATTLINE_COMMAND.match(s) or re.match(r"^\s*for\s", s))]
                if bad:
                    self.problems.append(f"{c.where()}: '{bad[0]}' runs wattline inside another "
                                         "command: make it a plain wattline command or mark the "
                                         "block <!-- doc-test: needs WHAT -->")
                else:
                    self.commands.append((c, blocks))


SELF_TEST_DOC = """
<!-- doc-test: needs a cluster -->
```sh
wattline compare /x --csv
```

```sh
# a comment; ./scripts/build.sh wattline builds the app
./scripts/build.sh wattline && ./build/wattline RUN.h5
wattline simulate -o a.h5 --tp 2 \\
    --pp 2   # a trailing comment
for r in runs/*.h5; do wattline export "$r" -o "f/$(basename "$r" .h5).pdf"; done
sbatch --wrap 'wattline summarize x'
WATTLINE=/tmp/wattline-copy nice bench/study_sweep.sh /tmp/s
nvidia-smi dmon > dmon.txt
```

```
wattline analyze RUN.h5 [--json]
```

```text
wattline analyze RUN.h5 [--json]
```

<!-- doc-test: needs nothing -->
```sh
ls
```
"""


def self_test():
    """The extraction rules on SELF_TEST_DOC, against what they must give."""
    plan = Plan()
    plan.add("t.md", SELF_TEST_DOC)
    got = [(c.line, c.segments) for c, _ in plan.commands]
    want = [(9, ["./build/wattline RUN.h5"]),
            (10, ["wattline simulate -o a.h5 --tp 2     --pp 2"]),
            (12, ['for r in runs/*.h5; do wattline export "$r" -o "f/$(basename "$r" .h5).pdf"; '
                  'done'])]
    errors = [] if got == want else [f"commands: got {got}, want {want}"]
    excluded = [(c.line, why) for c, why in plan.excluded]
    if excluded != [(4, "needs a cluster")]:
        errors.append(f"excluded: got {excluded}")
    expected_problems = ["t.md:13: 'sbatch --wrap 'wattline summarize x'' runs wattline inside",
                         "t.md:19: a fence without a language holds a wattline command",
                         "t.md:28: a doc-test marker on a block without wattline commands"]
    if len(plan.problems) != len(expected_problems) or not all(
            p.startswith(e) for p, e in zip(plan.problems, expected_problems)):
        errors.append(f"problems: got {plan.problems}")
    if gui_arguments("./build/wattline RUN.h5 B.h5") != ["RUN.h5", "B.h5"] or \
            gui_arguments("wattline info RUN.h5") is not None:
        errors.append("gui_arguments")
    for e in errors:
        print(f"self-test: {e}")
    print("self-test: " + ("FAILED" if errors else "passed"))
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap.add_argument("wattline", help="the wattline binary")
    ap.add_argument("--source", default=str(Path(__file__).resolve().parents[2]),
                    help="the source tree (default: this script's)")
    ap.add_argument("--list", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--only", default="", help="run the commands whose text or place has this")
    opts = ap.parse_args()
    source = Path(opts.source).resolve()
    binary = Path(opts.wattline).resolve()
    docs = [source / "README.md"] + sorted((source / "docs").glob("*.md"))

    plan = Plan()
    plan.problems += check_format_version(source)
    for doc in docs:
        plan.add(str(doc.relative_to(source)), doc.read_text(encoding="utf-8"))
    commands, excluded, problems = plan.commands, plan.excluded, plan.problems
    marked_blocks = plan.marked_blocks

    if opts.list:
        for c, _ in commands:
            print(f"run      {c.where()}: {c.text.strip()}")
        for c, why in excluded:
            print(f"excluded {c.where()}: {c.text.strip()}  [{why}]")
        for p in problems:
            print(f"problem  {p}")
        return 0

    shared = source.parent / "shared" / "data"
    if not shared.is_dir():
        problems.append(f"{shared} is missing: the docs' examples read ../shared/data beside the "
                        "source tree (CI has it beside the clone)")
    failures, ran, t0 = [], 0, time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wattline-doc-test-") as tmp:
        work = Workdir(source, binary, Path(tmp) / "w")
        env = work.env()
        current = None
        for c, blocks in commands:
            if opts.only and opts.only not in c.text and opts.only not in c.where():
                continue
            if c.block is not current:
                work.make(blocks, c.block)
                current = c.block
            for s in c.segments:
                t = time.monotonic()
                ok, why = run_segment(s, work, env)
                ran += 1
                status = "ok  " if ok else "FAIL"
                print(f"{status} {time.monotonic() - t:6.1f} s  {c.where()}: {s}", flush=True)
                if not ok:
                    print("       " + why.replace("\n", "\n       "), flush=True)
                    failures.append(f"{c.where()}: {s}")
    for c, why in excluded:
        print(f"excluded by marker  {c.where()}: {c.text.strip()}  [{why}]")
    for p in problems:
        print(f"PROBLEM {p}")
    for f in failures:
        print(f"FAILED  {f}")
    print(f"doc examples: {ran} commands run, {len(failures)} failed, {len(excluded)} excluded by "
          f"marker ({marked_blocks} blocks), {len(problems)} problems, "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if failures or problems else 0


if __name__ == "__main__":
    sys.exit(main())
