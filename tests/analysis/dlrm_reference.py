#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent reference for the HTA breakdown of docs/analyses.md on the 8 ranks of the PARAM
DLRM Kineto traces (tests/data/kineto/param-dlrm-8rank-v100.tar.gz).

Writes the GPU events of every rank to OUT/events.csv (rank,stream,start_ns,dur_ns,kind,name;
kind 0 kernel, 1 memcpy, 2 memset) for the C++ test to store in a run, and prints per rank, as
JSON, span, idle, compute, communication, exposed communication, memory and overlap computed here
with a per-nanosecond-boundary sweep that shares no code with Wattline.
"""
import csv
import io
import json
import os
import re
import sys
import tarfile

src, out_dir = sys.argv[1], sys.argv[2]
COMM = re.compile(r"^nccl|^rccl|ncclKernel|ncclDevKernel")
KIND = {"kernel": 0, "Kernel": 0, "gpu_memcpy": 1, "Memcpy": 1, "gpu_memset": 2, "Memset": 2}


def cls(name, kind):
    if COMM.search(name):
        return "comm"
    if kind in (1, 2) or any(s in name for s in ("Memcpy", "Memset", "memcpy", "memset", "dma")):
        return "memory"
    return "compute" if kind == 0 else "other"


def union_len(intervals):
    """Length of the union by a sweep over sorted boundaries."""
    points = sorted([(a, 1) for a, b in intervals if b > a] + [(b, -1) for a, b in intervals if b > a])
    depth, last, total = 0, None, 0
    for x, d in points:
        if depth > 0:
            total += x - last
        depth += d
        last = x
    return total


def length_where(intervals_by_label, predicate):
    """Total length of the time where predicate(set of labels active) holds."""
    points = []
    for label, ivs in intervals_by_label.items():
        for a, b in ivs:
            if b > a:
                points.append((a, label, 1))
                points.append((b, label, -1))
    points.sort()
    active = {label: 0 for label in intervals_by_label}
    total, last = 0, None
    for x, label, d in points:
        if last is not None and predicate({l for l, n in active.items() if n > 0}):
            total += x - last
        active[label] += d
        last = x
    return total


rows, ref = [], {}
with tarfile.open(src) as tar:
    for m in tar.getmembers():
        if not m.name.endswith(".json"):
            continue
        trace = json.load(io.TextIOWrapper(tar.extractfile(m), encoding="utf-8"))
        rank = trace["distributedInfo"]["rank"]
        by = {"compute": [], "comm": [], "memory": [], "other": []}
        for e in trace["traceEvents"]:
            kind = KIND.get(e.get("cat"))
            if kind is None or e.get("ph") != "X":
                continue
            start, dur = int(round(e["ts"] * 1000)), int(round(e["dur"] * 1000))
            stream = int(e.get("args", {}).get("stream", e.get("tid", 0)))
            rows.append((rank, stream, start, dur, kind, e["name"]))
            by[cls(e["name"], kind)].append((start, start + dur))
        everything = [iv for ivs in by.values() for iv in ivs]
        span = max(b for a, b in everything) - min(a for a, b in everything)
        busy = union_len(everything)
        compute = union_len(by["compute"])
        comm = union_len(by["comm"])
        overlap = length_where({"c": by["compute"], "m": by["comm"]}, lambda s: s == {"c", "m"})
        ref[rank] = {
            "kernels": len(everything),
            "comm_kernels": len(by["comm"]),
            "span_ns": span,
            "idle_ns": span - busy,
            "compute_ns": compute,
            "non_compute_ns": span - compute - (span - busy),
            "comm_ns": comm,
            "exposed_comm_ns": length_where({"c": by["compute"], "m": by["comm"]},
                                            lambda s: s == {"m"}),
            "memory_ns": union_len(by["memory"]),
            "overlap_ns": overlap,
        }
with open(os.path.join(out_dir, "events.csv"), "w", newline="") as f:
    w = csv.writer(f)
    for r in rows:
        w.writerow(r)
json.dump(ref, sys.stdout)
