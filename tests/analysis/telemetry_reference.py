#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent reference for the telemetry statistics of docs/analyses.md, the way the seed
paper's scripts compute them (numpy.trapz), on an nvidia-smi CSV with the columns
timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W.

Prints JSON: per GPU the trapezoid energy with gaps left out, the time-weighted (left Riemann)
mean power, the plain numpy.trapz over every sample (what the seed paper's scripts report, gaps
included), and the energy of the gap segments alone.
"""
import csv
import gzip
import json
import sys

import numpy as np

trapz = getattr(np, "trapezoid", None) or np.trapz

rows = list(csv.reader(gzip.open(sys.argv[1], 'rt') if sys.argv[1].endswith('.gz') else open(sys.argv[1])))[1:]
by_gpu = {}
for r in rows:
    t = np.datetime64(r[0].strip().rstrip("Z"), "ns").astype(np.int64)
    by_gpu.setdefault(int(r[1]), []).append((int(t), float(r[4])))

out = {}
for gpu, samples in sorted(by_gpu.items()):
    samples.sort()
    t = np.array([s[0] for s in samples], dtype=np.int64)
    p = np.array([s[1] for s in samples], dtype=np.float64)
    d = np.sort(np.diff(t))
    m = len(d) // 2
    median = int(d[m]) if len(d) % 2 else int(d[m - 1] + (d[m] - d[m - 1]) // 2)
    threshold = max(1_000_000_000, 5 * median)
    ts = (t - t[0]) * 1e-9  # seconds, relative to keep float precision
    dt = np.diff(t)
    ok = (dt > 0) & (dt <= threshold)
    # Split at the gaps and integrate each contiguous piece with numpy.trapz.
    cuts = np.flatnonzero(~ok) + 1
    energy = sum(trapz(pp, tt) for pp, tt in zip(np.split(p, cuts), np.split(ts, cuts)))
    seg = np.diff(ts)
    mean = float(np.sum(p[:-1][ok] * seg[ok]) / np.sum(seg[ok]))
    gap_energy = float(np.sum(((p[:-1] + p[1:]) / 2 * seg)[~ok]))
    out[gpu] = {
        "energy_j": float(energy),
        "mean_w": mean,
        "trapz_all_j": float(trapz(p, ts)),
        "gap_energy_j": gap_energy,
        "gaps": int(np.sum(~ok)),
        "max_w": float(p.max()),
        "min_w": float(p.min()),
    }
json.dump(out, sys.stdout)
