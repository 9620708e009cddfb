#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Node logs of nvidia-smi --query-gpu CSV for the telemetry import benchmarks (docs/performance.md,
"Telemetry within the memory budget").

Usage: bench/gen_nvsmi.py DIR NODES SECONDS [HZ]
Writes DIR/nodeNN.csv: 8 GPUs per node sampled HZ times a second (default 10) for SECONDS from
2025-03-01 00:00; power follows a sine with per-GPU and per-node phases, the SM clock drops and
the mask says SW power cap above 680 W; six metrics and the throttle mask per row.
"""
import math
import os
import sys


def node_log(path, node, seconds, hz):
    step_ms = 1000 // hz
    with open(path, "w") as f:
        f.write("timestamp, index, name, power.draw [W], temperature.gpu, clocks.sm [MHz], "
                "utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
                "clocks_event_reasons.active\n")
        rows = []
        for b in range(seconds * hz):
            ms = b * step_ms
            s = ms // 1000
            stamp = f"2025/03/01 {s // 3600:02}:{s // 60 % 60:02}:{s % 60:02}.{ms % 1000:03}"
            for g in range(8):
                x = b * 0.003 + g * 0.4 + node * 0.1
                p = 390 + 310 * math.sin(x) + g
                sm = 1410 + b % 300 if p > 680 else 1980
                rows.append(f"{stamp}, {g}, NVIDIA H100 80GB HBM3, {p:.2f} W, "
                            f"{60 + 25 * math.sin(x - 0.5):.0f}, {sm} MHz, "
                            f"{int(50 + 50 * math.sin(3 * x))} %, {int(20 + 15 * math.sin(2 * x))} %, "
                            f"{40000 + 100 * g} MiB, 0x{4 if p > 680 else 0:016X}\n")
            if len(rows) > 65536:
                f.write("".join(rows))
                rows.clear()
        f.write("".join(rows))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, nodes, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    hz = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    os.makedirs(out, exist_ok=True)
    for n in range(nodes):
        node_log(os.path.join(out, f"node{n:02}.csv"), n, seconds, hz)


if __name__ == "__main__":
    main()
