#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent reference numbers for the importer tests.

Reads a kernel trace with Python's own json / gzip / csv / sqlite3 modules (no Wattline code)
and prints, per rank (process), the numbers the C++ tests compare against: device events by
kind, communication kernels, streams, iterations, and the first start and last end in exact
integer nanoseconds (timestamps are read as decimals, never as floats).

usage: reference.py kineto|rocprofv3|rocprof-csv|nsys-sqlite FILE
"""
import csv
import gzip
import json
import sqlite3
import sys
from decimal import ROUND_HALF_UP, Decimal


def opener(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rt") if magic == b"\x1f\x8b" else open(path, "rt")


def is_comm_name(name):
    # docs/analyses.md, section B (kernel-trace breakdown): communication by name.
    return (name.startswith("nccl") or name.startswith("rccl") or "ncclKernel" in name
            or "ncclDevKernel" in name)


def us_to_ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def stream_of(v):
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("stream "):
            s = s[7:].strip()
        if s.startswith("0x"):
            return int(s, 16)
        try:
            return int(s)
        except ValueError:
            return None
    return v


def new_rank(rank):
    return {"rank": rank, "kernels": 0, "memcpy": 0, "memset": 0, "comm": 0, "streams": set(),
            "iterations": 0, "first_ns": None, "last_ns": None, "collectives": []}


def add_event(r, kind, name, comm_meta, device, stream, start, end):
    r[kind] += 1
    if kind == "kernels" and (comm_meta or is_comm_name(name)):
        r["comm"] += 1
    elif kind != "kernels" and (comm_meta or is_comm_name(name)):
        r["comm"] += 1
    r["streams"].add((device, stream))
    r["first_ns"] = start if r["first_ns"] is None else min(r["first_ns"], start)
    r["last_ns"] = end if r["last_ns"] is None else max(r["last_ns"], end)


def kineto(path):
    with opener(path) as f:
        top = json.load(f, parse_float=Decimal)
    events = top if isinstance(top, list) else top["traceEvents"]
    base = 0 if isinstance(top, list) else int(top.get("baseTimeNanoseconds", 0))
    dist = {} if isinstance(top, list) else (top.get("distributedInfo") or {})
    r = new_rank(dist.get("rank"))
    kinds = {"kernel": "kernels", "Kernel": "kernels", "gpu_memcpy": "memcpy",
             "Memcpy": "memcpy", "gpu_memset": "memset", "Memset": "memset"}
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        name = e.get("name", "")
        if cat in kinds:
            args = e.get("args") or {}
            device = args.get("device", e.get("pid"))
            stream = stream_of(args.get("stream", e.get("tid")))
            start = base + us_to_ns(e["ts"])
            end = start + us_to_ns(e["dur"])
            meta = "Collective name" in args or "Process Group Name" in args
            add_event(r, kinds[cat], name, meta, device, stream, start, end)
            if kinds[cat] == "kernels" and (meta or is_comm_name(name)):
                r["collectives"].append({
                    "start_ns": start, "end_ns": end,
                    "collective": str(args.get("Collective name", "")).lower(),
                    "pg": str(args.get("Process Group Name", "")),
                    "in_nelems": int(args.get("In msg nelems", -1)),
                    "group_size": int(args.get("Group size", -1)),
                    "dtype": str(args.get("dtype", ""))})
        elif name.startswith("ProfilerStep#") and cat != "gpu_user_annotation":
            # Iterations are the CPU-side ProfilerStep#N ranges; the GPU-side copies of them
            # (gpu_user_annotation) are annotations.
            r["iterations"] += 1
    return [r]


def rocprofv3(path):
    with opener(path) as f:
        top = json.load(f)
    out = []
    for proc in top["rocprofiler-sdk-tool"]:
        symbols = {}
        for s in proc["kernel_symbols"]:
            symbols[s["kernel_id"]] = (s.get("formatted_kernel_name") or
                                       s.get("demangled_kernel_name") or s.get("kernel_name"))
        agents = {a["id"]["handle"]: a for a in proc["agents"]}
        r = new_rank(None)
        for d in proc["buffer_records"]["kernel_dispatch"]:
            info = d["dispatch_info"]
            device = agents[info["agent_id"]["handle"]]["logical_node_type_id"]
            stream = info["queue_id"]["handle"]  # tracks are hardware queues
            add_event(r, "kernels", symbols[info["kernel_id"]], False, device, stream,
                      d["start_timestamp"], max(d["end_timestamp"], d["start_timestamp"]))
        for c in proc["buffer_records"].get("memory_copy", []):
            add_event(r, "memcpy", "", False, None, None, c["start_timestamp"],
                      max(c["end_timestamp"], c["start_timestamp"]))
        out.append(r)
    return out


def rocprof_csv(path):
    ranks = {}
    with opener(path) as f:
        for row in csv.DictReader(f):
            r = ranks.setdefault(int(row["pid"]), new_rank(None))
            begin, end = int(row["BeginNs"]), int(row["EndNs"])
            add_event(r, "kernels", row["KernelName"], False, int(row["gpu-id"]),
                      int(row["queue-id"]), begin, max(begin, end))
    return [ranks[k] for k in sorted(ranks)]


def nsys(path):
    db = sqlite3.connect(path)
    base = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    ranks = {}

    def rank_of(global_pid):
        return ranks.setdefault((global_pid >> 24) & 0xFFFFFF, new_rank(None))
    for start, end, dev, stream, gpid, name in db.execute(
            "SELECT start, end, deviceId, streamId, globalPid, demangledName "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        add_event(rank_of(gpid), "kernels", names[name], False, dev, stream, base + start,
                  base + max(start, end))
    tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"),
                        ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        if table in tables:
            for start, end, dev, stream, gpid in db.execute(
                    f"SELECT start, end, deviceId, streamId, globalPid FROM {table}"):
                add_event(rank_of(gpid), kind, "Memcpy" if kind == "memcpy" else "Memset",
                          False, dev, stream, base + start, base + max(start, end))
    return [ranks[k] for k in sorted(ranks)]


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    ranks = {"kineto": kineto, "rocprofv3": rocprofv3, "rocprof-csv": rocprof_csv,
             "nsys-sqlite": nsys}[fmt](path)
    for r in ranks:
        r["streams"] = len(r["streams"])
    print(json.dumps({"ranks": ranks}))


if __name__ == "__main__":
    main()
