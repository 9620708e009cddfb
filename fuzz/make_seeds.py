#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the seed corpora of the fuzz targets (fuzz/README.md) into OUT/<target>/.

Seeds are small cuts of the real files in tests/data (the first events of each Kineto and
rocprofv3 trace, the first rows of each CSV, an Nsight Systems export reduced to the tables the
importer reads), plus generated seeds where tests/data has none (CharLLM-PPT folders, command
lines, --range values). Small seeds keep every fuzz iteration fast. Usage: make_seeds.py OUT
"""
import gzip
import io
import json
import os
import shutil
import sqlite3
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
OUT = sys.argv[1] if len(sys.argv) > 1 else "seeds"


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def head_lines(data, n):
    return b"".join(data.splitlines(keepends=True)[:n])


def cut_events(events, per_cat=6, total=40):
    """A few events of every category, in file order."""
    seen, out = {}, []
    for e in events:
        key = (e.get("cat"), e.get("ph")) if isinstance(e, dict) else None
        if seen.get(key, 0) < per_cat:
            seen[key] = seen.get(key, 0) + 1
            out.append(e)
        if len(out) >= total:
            break
    return out


def kineto_seed(doc):
    if isinstance(doc, list):
        return cut_events(doc)
    small = {}
    for k, v in doc.items():
        small[k] = cut_events(v) if k == "traceEvents" else v
    return small


# ---- Kineto
kineto_docs = []
for f in sorted(os.listdir(os.path.join(DATA, "kineto"))):
    p = os.path.join(DATA, "kineto", f)
    if f.endswith(".json.gz"):
        kineto_docs.append((f[:-8], json.loads(read(p))))
    elif f.endswith(".tar.gz"):
        with tarfile.open(p) as t:
            for m in t.getmembers():
                if m.isfile() and m.name.endswith(".json"):
                    kineto_docs.append((os.path.basename(m.name)[:-5],
                                        json.load(t.extractfile(m))))
                    break
for name, doc in kineto_docs:
    text = json.dumps(kineto_seed(doc), separators=(",", ":"))
    put("kineto", name + ".json", text)
put("kineto", "small-gzip.json.gz", gzip.compress(
    json.dumps(kineto_seed(kineto_docs[0][1]), separators=(",", ":")).encode(), mtime=0))

# ---- rocprofv3
doc = json.loads(read(os.path.join(DATA, "rocprof", "tracelens-rocprofv3-mi350x.json.gz")))
for proc in doc.get("rocprofiler-sdk-tool", []):
    for k in ("kernel_symbols",):
        if isinstance(proc.get(k), list):
            proc[k] = proc[k][:12]
    if isinstance(proc.get("agents"), list):
        proc["agents"] = [{k: a[k] for k in ("id", "type", "logical_node_type_id", "product_name",
                                              "name", "node_id") if k in a}
                          for a in proc["agents"][:4]]
    if isinstance(proc.get("strings"), dict):
        proc["strings"] = {"buffer_records": [
            g for g in proc["strings"].get("buffer_records", [])
            if isinstance(g, dict) and g.get("kind") == "MEMORY_COPY"]}
    br = proc.get("buffer_records", {})
    for k in list(br):
        if isinstance(br[k], list):
            br[k] = br[k][:10]
    for k in list(proc):
        if k not in ("metadata", "agents", "kernel_symbols", "strings", "buffer_records"):
            del proc[k]
put("rocprofv3", "tracelens-mi350x.json", json.dumps(doc, separators=(",", ":")))

# ---- rocprof CSV
put("rocprof_csv", "gunrock-v1.csv", head_lines(read(os.path.join(DATA, "rocprof", "gunrock-rocprof-v1.csv")), 6))
put("rocprof_csv", "v2-names.csv",
    "Index,Kernel_Name,GPU_ID,Queue_ID,PID,Start_Timestamp,End_Timestamp,Correlation_ID\n"
    "0,\"kernel_a(int, float)\",2,1,4242,1000,2000,7\n1,kernel_b,2,1,4242,2500,2400,8\n")

# ---- Nsight Systems: only the tables the importer reads, a few rows each, small pages.
KEEP = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "NVTX_EVENTS", "StringIds", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME",
        "META_DATA_EXPORT", "EXPORT_META_DATA", "ENUM_CUDA_MEMCPY_OPER"}
tmp = os.path.join(OUT, "nsys-tmp.sqlite")
os.makedirs(OUT, exist_ok=True)
shutil.copy(os.path.join(DATA, "nsys", "pipit-cloverleaf-a100-nsys2024.sqlite"), tmp)
db = sqlite3.connect(tmp)
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
for t in tables:
    if t not in KEEP:
        db.execute(f'DROP TABLE "{t}"')
for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('index', 'view', 'trigger')").fetchall():
    pass
for t in KEEP & set(tables):
    if t != "StringIds":
        db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN (SELECT rowid FROM "{t}" LIMIT 8)')
used = set()
for t, cols in (("CUPTI_ACTIVITY_KIND_KERNEL", ("demangledName", "shortName", "mangledName")),
                ("NVTX_EVENTS", ("textId",))):
    if t in tables:
        have = {r[1] for r in db.execute(f'PRAGMA table_info("{t}")')}
        for c in cols:
            if c in have:
                used |= {r[0] for r in db.execute(f'SELECT "{c}" FROM "{t}"')}
ids = ",".join(str(int(u)) for u in used if u is not None) or "-1"
db.execute(f"DELETE FROM StringIds WHERE id NOT IN ({ids}) AND rowid > 10")
db.commit()
db.execute("PRAGMA page_size = 512")
db.execute("VACUUM")
db.close()
with open(tmp, "rb") as f:
    put("nsys", "pipit-cloverleaf-a100.sqlite", f.read())
os.remove(tmp)

# ---- Telemetry CSVs and dmon text
tel = os.path.join(DATA, "telemetry")
put("nvidia_smi_csv", "h100-query.csv", head_lines(read(os.path.join(tel, "nvidia-smi-h100-query.csv")), 8))
put("nvidia_smi_csv", "h200-query.csv", head_lines(read(os.path.join(tel, "nvidia-smi-h200-query.csv")), 8))
nano = head_lines(read(os.path.join(tel, "nanogpt-8gpu-h100class-nvidia-smi.csv.gz")), 20)
put("nvidia_smi_csv", "nanogpt-8gpu.csv", nano)
put("nvidia_smi_csv", "nanogpt-8gpu.csv.gz", gzip.compress(nano, mtime=0))
put("nvidia_smi_csv", "reasons.csv",
    "timestamp, index, name, power.draw [W], clocks.sm [MHz], temperature.gpu, "
    "clocks_throttle_reasons.active, clocks_throttle_reasons.sw_thermal_slowdown\n"
    "2025/09/24 03:41:43.487, 0, NVIDIA H100, 512.30 W, 1755 MHz, 81, 0x0000000000000020, Active\n"
    "2025-09-24T03:41:43.587Z, 1, NVIDIA H100, [N/A], 1980 MHz, 60, 0x0, Not Active\n")
for f in ("nvidia-smi-h100-dmon.txt", "nvidia-smi-h200-dmon.txt", "nvidia-smi-dmon-odt-2gpu.txt"):
    put("nvidia_smi_dmon", f, head_lines(read(os.path.join(tel, f)), 12))
put("dcgm", "dcgm-dmon-2gpu.txt", read(os.path.join(tel, "dcgm-dmon-2gpu.txt")))
put("dcgm", "dcgm-long-2gpu.csv", read(os.path.join(tel, "dcgm-long-2gpu.csv")))
put("amd_smi", "amd-smi-8gpu.csv", head_lines(read(os.path.join(tel, "amd-smi-metric-8gpu-excerpt.csv")), 4))
put("zeus", "zeus-monitor-power-mw.csv", read(os.path.join(tel, "zeus-monitor-power-mw.csv")))
put("zeus", "zeus-windows-4xa40.csv", read(os.path.join(tel, "zeus-windows-4xa40.csv")))

# ---- CharLLM-PPT folders (generated: tests/data holds none). Files are "NAME\nCONTENT" joined
# by NUL bytes (fuzz/targets.cpp).
def folder(files):
    return b"\0".join(n.encode() + b"\n" + (c.encode() if isinstance(c, str) else c) for n, c in files)

rows = "".join(f"{1727385120 + i * 0.05:.6f},{300 + 7 * i}\n" for i in range(6))
put("charllm", "one-file.csv", rows)
put("charllm", "nvidia-run", folder([
    ("gpu_power_0.csv", rows), ("gpu_util_0.csv", rows.replace(",3", ",9")),
    ("gpu_thermal_1.csv", rows), ("sm_clock_0.csv", "1727385120.0,1980\n1727385120.05,-1\n"),
    ("nvlink_tx_throughput_0.csv", "1727385120.0,4294967000\n1727385120.05,12\n"),
    ("system_cpu_usage_rank_0_id_3.csv", "1727385120.0,12.5\n1727385120.0,3.5\n"),
    ("system_memory_used_0.csv", "1727385120.0,1024\n")]))
small_kineto = json.dumps(kineto_seed(kineto_docs[0][1]), separators=(",", ":"))
matrix = head_lines(read(os.path.join(ROOT, "loaders", "import", "telemetry",
                                      "charllm-experiment-matrix.csv")), 3)
put("charllm", "with-trace-and-matrix", folder([
    ("gpu_power_0.csv", rows), ("4242_kineto/rank-0.json", small_kineto),
    ("experiment-matrix.csv", matrix)]))

# ---- Experiment matrix
full = read(os.path.join(ROOT, "loaders", "import", "telemetry", "charllm-experiment-matrix.csv"))
lines = full.splitlines(keepends=True)
put("experiment_matrix", "head.csv", b"".join(lines[:6]))
put("experiment_matrix", "mixed.csv", lines[0] + b"".join(lines[1::60]))

# ---- Command lines (NUL-separated arguments) and --range values
for i, args in enumerate([
        ["trace.json", "-o", "run.h5", "--config", "tp=4,pp=2,dp=1,mbs=2,gbs=512,recompute=on",
         "--offset", "trace.json=-1.5ms", "--offset", "kineto=2s", "--dcgm-interval-ms", "100"],
        ["run.h5", "--range", "10s:25.5s", "--gpus", "0,2,4-7", "--metrics", "power_w,temp_c",
         "--json"],
        ["a.h5", "b.h5", "--filter", "tp=4,mbs=2", "--csv", "--width=1600", "--dpi", "300"],
        ["--", "-o", "--json"]]):
    put("cli_args", f"args-{i}", "\0".join(args))
for i, r in enumerate(["10s:25.5s", ":2m", "1.5m:", "250ms:1h", "12:13",
                       "1700000000000000000:1700000000500000000", "0,2,4-7"]):
    put("range_args", f"range-{i}", r)
# ---- Whole imports: the first byte picks the format (0: detect); a seed per text format.
for i, (target, name) in enumerate([("nvidia_smi_csv", "reasons.csv"), ("dcgm", "dcgm-long-2gpu.csv"),
                                    ("zeus", "zeus-monitor-power-mw.csv"),
                                    ("nvidia_smi_dmon", "nvidia-smi-dmon-odt-2gpu.txt"),
                                    ("rocprof_csv", "v2-names.csv")]):
    with open(os.path.join(OUT, target, name), "rb") as f:
        put("import_job", f"detect-{i}-{name}", b"\0" + f.read())
put("import_job", "detect-kineto.json", b"\0" + json.dumps(
    kineto_seed(kineto_docs[0][1]), separators=(",", ":")).encode())
print(f"seeds written to {OUT}")
