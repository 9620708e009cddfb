#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""An independent reader of the Wattline run format, written from docs/format.md with h5py alone.

Usage: h5py_reader.py WATTLINE_BIN WRITE_SYNTHETIC_BIN

Writes the synthetic test run, reads it with h5py, and checks that
  * what `wattline info --json` reports equals what this reader finds, and
  * the stored pyramids equal min / max / count / trapezoid integrals recomputed with numpy from
    the raw samples, as docs/format.md defines them.
Exits 0 on success, 1 with a message on the first mismatch.
"""
import json
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def fail(msg):
    print("h5py_reader: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def read_run(path):
    f = h5py.File(path, "r")
    check(f.attrs["format"] in ("wattline-run", b"wattline-run"), "format attribute")
    check(int(f.attrs["format_version"]) <= 1, "format version")
    s = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    run = {
        "name": s(f.attrs["name"]),
        "platform": s(f.attrs["platform"]),
        "simulated": bool(f.attrs["simulated"]),
        "start_ns": int(f.attrs["start_ns"]),
        "end_ns": int(f.attrs["end_ns"]),
        "config": {k: int(v) for k, v in f["config"].attrs.items()},
    }
    gpus = f["gpus"]
    tel = f["telemetry"]
    offsets = tel["offsets"][:]
    metrics = [s(m) for m in tel["metrics"][:]]
    run["gpus"] = []
    for g in range(len(gpus["id"])):
        a, b = int(offsets[g]), int(offsets[g + 1])
        run["gpus"].append({
            "id": int(gpus["id"][g]),
            "node": int(gpus["node"][g]),
            "local_index": int(gpus["local_index"][g]),
            "rank": int(gpus["rank"][g]),
            "device_name": s(gpus["device_name"][g]),
            "samples": b - a,
            "metrics": {m: int(np.count_nonzero(~np.isnan(tel[m][a:b]))) for m in metrics},
        })
    k = f["kernels"]
    tracks = k["tracks"]
    classes = k["class"][:]
    per_rank = {}
    for i in range(len(tracks["rank"])):
        r = int(tracks["rank"][i])
        o, n = int(tracks["offset"][i]), int(tracks["count"][i])
        e = per_rank.setdefault(r, {"kernels": 0, "comm_kernels": 0, "streams": 0})
        e["kernels"] += n
        e["comm_kernels"] += int(np.count_nonzero(classes[o:o + n] == 1))
        e["streams"] += 1
    run["ranks"] = per_rank
    its = f["iterations"]["rank"][:]
    run["iterations"] = {int(r): int(np.count_nonzero(its == r)) for r in np.unique(its)}
    return f, run


def check_pyramids(f):
    tel = f["telemetry"]
    lod = tel["lod"]
    origin = int(lod.attrs["origin_ns"])
    widths = lod["widths_ns"][:]
    nb = lod["buckets"][:]
    offsets = tel["offsets"][:]
    gap = tel["gap_threshold_ns"][:]
    for m in ("power_w", "temp_c"):
        for g in range(len(offsets) - 1):
            a, b = int(offsets[g]), int(offsets[g + 1])
            t = tel["t_ns"][a:b]
            v = tel[m][a:b].astype(np.float64)
            ok = ~np.isnan(v)
            tv, vv = t[ok], v[ok]
            for lvl in range(len(widths)):
                w = int(widths[lvl])
                bucket = np.clip((tv - origin) // w, 0, int(nb[lvl]) - 1)
                mx = lod[f"L{lvl}/{m}/max"][g]
                cnt = lod[f"L{lvl}/{m}/count"][g]
                check(int(cnt.sum()) == len(vv), f"{m} gpu {g} level {lvl}: count")
                for bk in np.unique(bucket):
                    check(np.float32(vv[bucket == bk].max()) == mx[bk],
                          f"{m} gpu {g} level {lvl} bucket {bk}: max")
                # Trapezoid over the whole series, not across gaps.
                dt = np.diff(tv)
                seg = dt <= gap[g]
                trapz = np.sum(((vv[:-1] + vv[1:]) / 2 * dt * 1e-9)[seg])
                total = lod[f"L{lvl}/{m}/tsum"][g].sum()
                check(abs(total - trapz) <= 1e-6 * max(1.0, abs(trapz)),
                      f"{m} gpu {g} level {lvl}: tsum {total} != numpy trapezoid {trapz}")


def main():
    wattline, writer = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        path = d + "/run.h5"
        subprocess.run([writer, path], check=True)
        f, mine = read_run(path)
        info = json.loads(subprocess.run([wattline, "info", path, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
        for key in ("name", "platform", "simulated", "start_ns", "end_ns"):
            check(info[key] == mine[key], f"{key}: info says {info[key]}, h5py reads {mine[key]}")
        for key, val in mine["config"].items():
            check(info["config"][key] == val, f"config.{key}")
        check(len(info["gpus"]) == len(mine["gpus"]), "number of GPUs")
        for a, b in zip(info["gpus"], mine["gpus"]):
            for key in ("id", "node", "local_index", "rank", "device_name", "samples", "metrics"):
                check(a[key] == b[key], f"gpu {b['id']} {key}: {a[key]} != {b[key]}")
        for r in info["ranks"]:
            m = mine["ranks"].get(r["rank"], {"kernels": 0, "comm_kernels": 0, "streams": 0})
            for key in ("kernels", "comm_kernels", "streams"):
                check(r[key] == m[key], f"rank {r['rank']} {key}: {r[key]} != {m[key]}")
            check(r["iterations"] == mine["iterations"].get(r["rank"], 0), "iterations")
        check_pyramids(f)
    print("h5py_reader: the h5py reader agrees with wattline info and the pyramids")


if __name__ == "__main__":
    main()
