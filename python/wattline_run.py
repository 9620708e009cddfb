# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a Wattline run file (docs/format.md, versions 1 to 3) from Python: h5py + numpy, pandas optional.

    import wattline_run
    with wattline_run.open("resources/samples/llama3-8b-h100x8-mbs4.h5") as run:
        run.gpus                                  # [0, 1, ..., 7]
        t_ns, w = run.metric(0, "power_w")        # raw samples, int64 ns and float32 W
        s = run.metric_summary(0, "power_w", resolution_ns=1_000_000_000)   # pyramid buckets
        k = run.kernels(0)                        # pandas DataFrame (kernel_arrays: numpy)

Everything is read-only (h5py mode "r") and read from what the file stores: nothing here is an
analysis of Wattline's (those are `wattline analyze`, docs/analyses.md), except `integral()`, the
trapezoid of raw samples as docs/analyses.md defines it (gaps left out, edges interpolated).
Written from docs/format.md alone; docs/python.md is its guide, tests/python/wattline_run_test.py
checks it against `wattline analyze --json` and `wattline info --json`.
"""

import math as _math

import h5py
import numpy as np

__all__ = ["open", "Run", "MetricSummary", "SUPPORTED_FORMAT_VERSION", "CLASS_NAMES", "KIND_NAMES",
           "THROTTLE_BITS", "SLOWDOWN_MASK"]

SUPPORTED_FORMAT_VERSION = 3
CLASS_NAMES = ("compute", "communication", "memory", "other")   # /kernels/class
KIND_NAMES = ("kernel", "memcpy", "memset", "other")             # /kernels/kind
# NVML clock-event reason bits (docs/format.md, /telemetry).
THROTTLE_BITS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
    0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake", 0x100: "display_clock_setting",
}
SLOWDOWN_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80
THROTTLE_NOT_RECORDED = 0xFFFFFFFF

_REQUIRED = ("gpus", "ranks", "telemetry/offsets", "telemetry/t_ns", "telemetry/metrics",
             "telemetry/lod", "kernels/start_ns", "kernels/dur_ns", "kernels/name", "kernels/class",
             "kernels/tracks", "kernels/blocks", "kernels/lod", "iterations", "annotations",
             "quality", "strings", "sources")


class WattlineKeyError(KeyError):
    """A KeyError whose message prints as written (KeyError quotes its argument)."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError(
            "wattline_run: this method returns a pandas DataFrame and pandas is not installed "
            "(Debian: apt install python3-pandas; pip: pip install pandas); the *_arrays methods "
            "return the same columns as numpy arrays without pandas") from e
    return pandas


def _text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.shape == ():
        return _text(v[()])
    return str(v)


def _texts(ds):
    """A variable-length string dataset as a numpy array of str."""
    return np.array([_text(v) for v in ds[()]], dtype=object)


class MetricSummary:
    """Buckets of one pyramid level over a range: every field is a numpy array, one element per
    bucket, except level and width_ns.

    start_ns   bucket start (bucket b covers [start_ns, start_ns + width_ns))
    min, max   of the valid samples in the bucket (NaN if none)
    count      number of valid samples in the bucket
    mean       time-weighted mean wsum / dt (left Riemann), NaN where dt == 0
    integral   trapezoids of the segments that start in the bucket (tsum; joules for power_w)
    covered_s  dt: seconds of non-gap segments that start in the bucket
    """

    FIELDS = ("start_ns", "min", "max", "mean", "count", "integral", "covered_s")

    def __init__(self, level, width_ns, **arrays):
        self.level = level
        self.width_ns = width_ns
        for k in self.FIELDS:
            setattr(self, k, arrays[k])

    def __len__(self):
        return len(self.start_ns)

    def arrays(self):
        return {k: getattr(self, k) for k in self.FIELDS}

    def __repr__(self):
        return f"MetricSummary(level={self.level}, width_ns={self.width_ns}, buckets={len(self)})"


class Run:
    """An open run file. Use `wattline_run.open(path)`; close() or a `with` block closes it."""

    def __init__(self, path):
        self.path = str(path)
        try:
            self._f = h5py.File(self.path, "r")
        except FileNotFoundError:
            raise
        except OSError as e:
            raise ValueError(f"{self.path}: not an HDF5 file, so not a Wattline run ({e})") from e
        try:
            self._validate()
        except BaseException:
            self._f.close()
            raise
        self._cache = {}

    # ---- opening and validation ----
    def _fail(self, what):
        raise ValueError(f"{self.path}: {what}")

    def _validate(self):
        f = self._f
        fmt = f.attrs.get("format")
        if fmt is None or _text(fmt) != "wattline-run":
            self._fail("not a Wattline run: HDF5 file without the root attribute "
                       "format = 'wattline-run' (docs/format.md)")
        if "format_version" not in f.attrs:
            self._fail("Wattline run without the root attribute format_version")
        self.format_version = int(f.attrs["format_version"])
        if self.format_version > SUPPORTED_FORMAT_VERSION or self.format_version < 1:
            self._fail(f"format_version {self.format_version} is not supported by this reader "
                       f"(it reads versions 1..{SUPPORTED_FORMAT_VERSION})")
        required = _REQUIRED + (("domains", "gpus/domain") if self.format_version >= 2 else ())
        for p in required:
            if p not in f:
                self._fail(f"missing /{p}, which every Wattline run has (docs/format.md)")
        off = f["telemetry/offsets"][()]
        n_gpus = len(f["gpus/id"]) if "id" in f["gpus"] else 0
        if len(off) != n_gpus + 1 or off[0] != 0 or np.any(np.diff(off.astype(np.int64)) < 0) \
                or int(off[-1]) != len(f["telemetry/t_ns"]):
            self._fail("/telemetry/offsets does not rise from 0 to the number of rows of "
                       "/telemetry/t_ns with one range per GPU")
        for m in _texts(f["telemetry/metrics"]):
            if m not in f["telemetry"]:
                self._fail(f"metric {m!r} is listed in /telemetry/metrics but /telemetry/{m} is missing")

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return (f"<wattline_run.Run {self.name!r}: {len(self.gpus)} GPUs, {len(self.ranks)} ranks, "
                f"{(self.end_ns - self.start_ns) / 1e9:.3f} s, {self.path}>")

    @property
    def file(self):
        """The underlying h5py.File (read-only), for what this module does not wrap."""
        return self._f

    # ---- metadata ----
    def _attr(self, name, default=None):
        v = self._f.attrs.get(name, default)
        return v

    @property
    def name(self):
        return _text(self._attr("name", ""))

    @property
    def platform(self):
        return _text(self._attr("platform", ""))

    @property
    def model(self):
        return _text(self._attr("model", ""))

    @property
    def simulated(self):
        return bool(int(self._attr("simulated", 0)))

    @property
    def start_ns(self):
        return int(self._attr("start_ns"))

    @property
    def end_ns(self):
        return int(self._attr("end_ns"))

    @property
    def duration_s(self):
        return (self.end_ns - self.start_ns) / 1e9

    @property
    def sample_interval_s(self):
        return float(self._attr("sample_interval_s", 0.0))

    @property
    def created_by(self):
        return _text(self._attr("created_by", ""))

    @property
    def parameters(self):
        """parameters_json parsed (a dict; {} when empty)."""
        import json
        s = _text(self._attr("parameters_json", "")) or "{}"
        return json.loads(s)

    @property
    def config(self):
        """The parallel configuration: {'tp': 2, 'pp': 2, ...}, only the keys the file has."""
        if "config" not in self._f:
            return {}
        return {k: int(v) for k, v in self._f["config"].attrs.items()}

    def _table(self, group, columns=None):
        """Columns of a table group as {name: numpy array}; string columns as arrays of str."""
        g = self._f[group]
        out = {}
        for k in (columns or g.keys()):
            ds = g[k]
            if not isinstance(ds, h5py.Dataset):
                continue
            out[k] = _texts(ds) if h5py.check_string_dtype(ds.dtype) else ds[()]
        return out

    def _rows(self, group):
        t = self._table(group)
        n = len(next(iter(t.values()))) if t else 0
        return [{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in t.items()}
                for i in range(n)]

    @property
    def sources(self):
        """The inputs the run was made from: a list of dicts (path, format, offset_ns, detail)."""
        return self._rows("sources")

    @property
    def quality(self):
        """Data-quality notes: a list of dicts (severity 0 info / 1 warning, code, subject, message)."""
        return self._rows("quality")

    # ---- GPUs, domains, ranks ----
    @property
    def gpus(self):
        """GPU ids (the rows of /gpus, 0..n-1)."""
        if "gpus" not in self._cache:
            self._cache["gpus"] = [int(i) for i in self._f["gpus/id"][()]]
        return list(self._cache["gpus"])

    def gpu_info(self, gpu):
        """One row of /gpus as a dict (node, local_index, rank, slot, package, domain, hostname, ...)."""
        g = self._gpu(gpu)
        if "gpu_rows" not in self._cache:
            self._cache["gpu_rows"] = self._rows("gpus")
        row = dict(self._cache["gpu_rows"][g])
        row["domain"] = self._domain_of()[g]
        return row

    def _gpu(self, gpu):
        gpus = self.gpus
        try:
            g = int(gpu)
        except (TypeError, ValueError):
            raise WattlineKeyError(f"{self.path}: {gpu!r} is not a GPU id (GPUs: {gpus})") from None
        if g != gpu or g not in gpus:
            span = f"0..{len(gpus) - 1}" if gpus else "none"
            raise WattlineKeyError(f"{self.path}: no GPU {gpu!r} in /gpus (GPUs {span})")
        return gpus.index(g)

    @property
    def ranks(self):
        """Process ranks (/ranks/rank), in file order."""
        return [int(r) for r in self._f["ranks/rank"][()]]

    def rank_gpu(self, rank):
        """The GPU a rank drove (/ranks/gpu), None if unknown."""
        ranks = self.ranks
        if rank not in ranks:
            raise WattlineKeyError(f"{self.path}: no rank {rank!r} in /ranks (ranks: {ranks})")
        g = int(self._f["ranks/gpu"][ranks.index(rank)])
        return None if g < 0 else g

    def _domain_of(self):
        """The domain of every GPU; version 1 files get them derived as docs/format.md says."""
        if "domain_of" not in self._cache:
            self._cache["domains"], self._cache["domain_of"] = self._load_domains()
        return self._cache["domain_of"]

    @property
    def domains(self):
        """Power domains: a list of dicts (id, kind, name, node, power_gpu (None if -1),
        power_limit_w, gpus). Version 1 files (no /domains) get them derived by the format's rule."""
        self._domain_of()
        return [dict(d) for d in self._cache["domains"]]

    def _load_domains(self):
        f = self._f
        n = len(self.gpus)
        if self.format_version >= 2:
            t = self._table("domains")
            dom_of = [int(d) for d in f["gpus/domain"][()]]
            out = []
            for i in range(len(t["id"])):
                pg = int(t["power_gpu"][i])
                out.append({"id": int(t["id"][i]), "kind": str(t["kind"][i]), "name": str(t["name"][i]),
                            "node": int(t["node"][i]), "power_gpu": None if pg < 0 else pg,
                            "power_limit_w": float(t["power_limit_w"][i]),
                            "gpus": [g for g in range(n) if dom_of[g] == i]})
            return out, dom_of
        # Version 1: GPUs with the same package (>= 0) on the same node form one package domain
        # when there are several; every other GPU is a board; numbered by their first GPU.
        node = f["gpus/node"][()]
        package = f["gpus/package"][()] if "package" in f["gpus"] else np.full(n, -1)
        limit = f["gpus/power_limit_w"][()] if "power_limit_w" in f["gpus"] else np.full(n, np.nan)
        has_power = self._has_samples("power_w")
        groups, key_of = [], {}
        for g in range(n):
            key = (int(node[g]), int(package[g])) if package[g] >= 0 else None
            if key is not None and key in key_of:
                groups[key_of[key]].append(g)
            else:
                if key is not None:
                    key_of[key] = len(groups)
                groups.append([g])
        out, dom_of = [], [0] * n
        for i, members in enumerate(groups):
            for g in members:
                dom_of[g] = i
            if len(members) == 1:
                kind, pg = "board", members[0]
                name = f"gpu {members[0]}"
            else:
                kind = "package"
                powered = [g for g in members if has_power[g]]
                pg = powered[0] if len(powered) == 1 else None
                name = f"package {sum(1 for d in out if d['kind'] == 'package')}"
            if pg is not None and not _math.isnan(float(limit[pg])):
                cap = float(limit[pg])
            else:
                caps = [float(limit[g]) for g in members if not _math.isnan(float(limit[g]))]
                cap = max(caps) if caps else float("nan")
            out.append({"id": i, "kind": kind, "name": name, "node": int(node[members[0]]),
                        "power_gpu": pg, "power_limit_w": cap, "gpus": members})
        return out, dom_of

    # ---- telemetry ----
    def _tel(self, node=False):
        return self._f["node_telemetry" if node else "telemetry"]

    @property
    def metric_ids(self):
        """Every metric dataset of /telemetry (/telemetry/metrics), in file order."""
        if "metric_ids" not in self._cache:
            self._cache["metric_ids"] = [str(m) for m in _texts(self._tel()["metrics"])]
        return list(self._cache["metric_ids"])

    def _has_samples(self, metric):
        """Per GPU: whether the metric has any valid sample (the top pyramid level's count)."""
        key = ("has", metric)
        if key in self._cache:
            return self._cache[key]
        n = len(self.gpus)
        lod = self._tel()["lod"]
        if metric not in self.metric_ids:
            return [False] * n
        top = len(lod["widths_ns"]) - 1
        p = f"L{top}/{metric}/count"
        if p not in lod:
            return [False] * n
        c = lod[p][()]
        self._cache[key] = [bool(c[g].sum() > 0) for g in range(n)]
        return self._cache[key]

    def metrics(self, gpu):
        """The metric ids with at least one valid sample on this GPU (file order)."""
        g = self._gpu(gpu)
        return [m for m in self.metric_ids if self._has_samples(m)[g]]

    def metric_info(self, metric):
        """{'unit', 'label', 'kind' ('gauge' or 'counter'), 'dtype'} of a metric."""
        ds = self._metric_ds(metric)
        return {"unit": _text(ds.attrs.get("unit", "")), "label": _text(ds.attrs.get("label", "")),
                "kind": _text(ds.attrs.get("kind", "")), "dtype": str(ds.dtype)}

    def _metric_ds(self, metric):
        if metric not in self.metric_ids:
            raise WattlineKeyError(f"{self.path}: no metric {metric!r} in /telemetry/metrics "
                                   f"(metrics: {', '.join(self.metric_ids)})")
        return self._tel()[metric]

    def _gpu_rows(self, g):
        off = self._cache.get("offsets")
        if off is None:
            off = self._cache["offsets"] = self._tel()["offsets"][()].astype(np.int64)
        return int(off[g]), int(off[g + 1])

    def gap_threshold_ns(self, gpu):
        """The GPU's gap threshold: a longer pause between samples is a gap (not integrated across)."""
        return int(self._tel()["gap_threshold_ns"][self._gpu(gpu)])

    def median_interval_ns(self, gpu):
        return int(self._tel()["median_interval_ns"][self._gpu(gpu)])

    def _lower_bound(self, g, t):
        """The first row of GPU g (absolute row) whose t_ns >= t, reading one index block."""
        a, b = self._gpu_rows(g)
        tel = self._tel()
        t_ns = tel["t_ns"]
        if b == a:
            return a
        key = ("tindex", g)
        idx = self._cache.get(key)
        if idx is None:
            stride = int(tel.attrs.get("index_stride", 1024))
            idx = None
            if "t_index" in tel and "t_index_offsets" in tel:
                io = tel["t_index_offsets"][g:g + 2].astype(np.int64)
                if io[1] - io[0] == -(-(b - a) // stride):
                    ix = tel["t_index"][io[0]:io[1]]
                    # The index holds rows 0, stride, 2 x stride, ... of the GPU; if its first
                    # entry is not the GPU's first time, do not trust it.
                    if len(ix) and ix[0] == t_ns[a]:
                        idx = (stride, ix)
            if idx is None:   # no usable index: one block of the whole GPU
                idx = (b - a, t_ns[a:a + 1])
            self._cache[key] = idx
        stride, ix = idx
        k = int(np.searchsorted(ix, t, "left"))
        if k == 0:
            return a
        lo, hi = a + (k - 1) * stride, min(a + k * stride, b)
        return lo + int(np.searchsorted(t_ns[lo:hi], t, "left"))

    def _row_range(self, g, t0_ns, t1_ns):
        a, b = self._gpu_rows(g)
        r0 = a if t0_ns is None else self._lower_bound(g, int(t0_ns))
        r1 = b if t1_ns is None else self._lower_bound(g, int(t1_ns))
        return r0, max(r0, r1)

    def metric(self, gpu, metric, t0_ns=None, t1_ns=None, dropna=True):
        """Raw samples of one GPU's metric with t0_ns <= t < t1_ns (None: the run's edge).

        Returns (t_ns, values): int64 ns on the run clock, and the values as stored (float32 for
        gauges, float64 for counters). Rows where the metric has no value (NaN) are left out unless
        dropna=False, which returns every row of the GPU's time column in the range."""
        g = self._gpu(gpu)
        ds = self._metric_ds(metric)
        r0, r1 = self._row_range(g, t0_ns, t1_ns)
        t = self._tel()["t_ns"][r0:r1]
        v = ds[r0:r1]
        if dropna:
            keep = ~np.isnan(v)
            if not keep.all():
                t, v = t[keep], v[keep]
        return t, v

    def times(self, gpu, t0_ns=None, t1_ns=None):
        """The GPU's sample times (every row) in [t0_ns, t1_ns)."""
        g = self._gpu(gpu)
        r0, r1 = self._row_range(g, t0_ns, t1_ns)
        return self._tel()["t_ns"][r0:r1]

    def throttle_reasons(self, gpu, t0_ns=None, t1_ns=None):
        """(t_ns, mask) of the recorded NVML clock-event reason masks per sample (uint32;
        0xFFFFFFFF = not recorded, left out), or None when the run has no throttle_reasons."""
        g = self._gpu(gpu)
        tel = self._tel()
        if "throttle_reasons" not in tel:
            return None
        r0, r1 = self._row_range(g, t0_ns, t1_ns)
        t, m = tel["t_ns"][r0:r1], tel["throttle_reasons"][r0:r1]
        keep = m != THROTTLE_NOT_RECORDED
        return t[keep], m[keep]

    def samples(self, gpu, metric):
        """Number of valid samples of a GPU's metric (from the pyramid's counts, no raw read)."""
        g = self._gpu(gpu)
        self._metric_ds(metric)
        lod = self._tel()["lod"]
        top = len(lod["widths_ns"]) - 1
        return int(lod[f"L{top}/{metric}/count"][g].sum(dtype=np.uint64))

    # ---- pyramids ----
    @property
    def pyramid_widths_ns(self):
        """Bucket width of each telemetry pyramid level, finest (L0) first."""
        return [int(w) for w in self._tel()["lod/widths_ns"][()]]

    def pyramid_level(self, resolution_ns):
        """The level to read for a resolution: the coarsest whose bucket width <= resolution_ns
        (level 0 when resolution_ns is finer than level 0's buckets: read raw samples instead)."""
        widths = self.pyramid_widths_ns
        level = 0
        for k, w in enumerate(widths):
            if w <= resolution_ns:
                level = k
        return level

    def metric_summary(self, gpu, metric, t0_ns=None, t1_ns=None, resolution_ns=None, level=None):
        """Per-bucket min / max / mean / count / integral of a GPU's metric from the pyramid.

        The level is `level` if given, else pyramid_level(resolution_ns), else the top (coarsest)
        one. The buckets returned are those that hold any time of [t0_ns, t1_ns) (whole buckets: a
        bucket's values cover its whole width, not the part inside the range)."""
        g = self._gpu(gpu)
        self._metric_ds(metric)
        lod = self._tel()["lod"]
        widths = self.pyramid_widths_ns
        nb = [int(b) for b in lod["buckets"][()]]
        if level is None:
            level = len(widths) - 1 if resolution_ns is None else self.pyramid_level(resolution_ns)
        if not 0 <= level < len(widths):
            raise WattlineKeyError(f"{self.path}: no pyramid level {level} in /telemetry/lod "
                                   f"(levels 0..{len(widths) - 1})")
        w, n = widths[level], nb[level]
        origin = int(lod.attrs["origin_ns"])

        def bucket(t):
            return min(max(0, (int(t) - origin) // w), n - 1)

        b0 = 0 if t0_ns is None else bucket(t0_ns)
        b1 = n - 1 if t1_ns is None else bucket(int(t1_ns) - 1)
        if t0_ns is not None and t1_ns is not None and int(t1_ns) <= int(t0_ns):
            b1 = b0 - 1
        sl = slice(b0, max(b0, b1 + 1))
        grp = lod[f"L{level}/{metric}"]
        wsum, dt = grp["wsum"][g, sl], grp["dt"][g, sl]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(dt > 0, wsum / np.where(dt > 0, dt, 1.0), np.nan)
        return MetricSummary(level, w, start_ns=origin + np.arange(sl.start, sl.stop, dtype=np.int64) * w,
                             min=grp["min"][g, sl], max=grp["max"][g, sl], mean=mean,
                             count=grp["count"][g, sl], integral=grp["tsum"][g, sl], covered_s=dt)

    def metric_frame(self, gpu, metric, t0_ns=None, t1_ns=None, resolution_ns=None, level=None):
        """A DataFrame (pandas) of raw samples (columns t_ns, <metric>), or with resolution_ns or
        level, of pyramid buckets (start_ns, min, max, mean, count, integral, covered_s)."""
        pd = _pandas()
        if resolution_ns is None and level is None:
            t, v = self.metric(gpu, metric, t0_ns, t1_ns)
            return pd.DataFrame({"t_ns": t, metric: v})
        s = self.metric_summary(gpu, metric, t0_ns, t1_ns, resolution_ns=resolution_ns, level=level)
        return pd.DataFrame(s.arrays())

    def integral(self, gpu, metric="power_w", t0_ns=None, t1_ns=None):
        """Trapezoidal integral of raw samples over [t0_ns, t1_ns) in value x seconds (joules for
        power_w), as docs/analyses.md defines it: segments between consecutive valid samples,
        gaps (segments longer than the GPU's gap threshold) left out, segments crossing the range's
        edges interpolated linearly to the edge. The whole run's integral of power_w is the
        `energy_j` of the GPU in `wattline analyze --json` when the GPU carries its domain's power."""
        g = self._gpu(gpu)
        ds = self._metric_ds(metric)
        gap = int(self._tel()["gap_threshold_ns"][g])
        a, b = self._gpu_rows(g)
        r0, r1 = self._row_range(g, t0_ns, t1_ns)
        t_all = self._tel()["t_ns"]
        # Widen by rows until a valid sample lies before r0 and at or after r1 (or the GPU's edge).
        lo, hi, step = r0, r1, 64
        while True:
            lo2, hi2 = max(a, r0 - step), min(b, r1 + step)
            v = ds[lo2:hi2].astype(np.float64)
            ok_before = lo2 == a or (r0 > lo2 and np.any(~np.isnan(v[:r0 - lo2])))
            ok_after = hi2 == b or (hi2 > r1 and np.any(~np.isnan(v[r1 - lo2:])))
            if ok_before and ok_after:
                lo, hi = lo2, hi2
                break
            step *= 4
        t = t_all[lo:hi]
        keep = ~np.isnan(v)
        t, v = t[keep], v[keep]
        if len(t) < 2:
            return 0.0
        ta, tb = t[:-1], t[1:]
        va, vb = v[:-1], v[1:]
        seg = tb - ta                                  # int64 ns: exact
        use = seg <= gap
        lo_t = np.int64(t[0]) if t0_ns is None else np.int64(t0_ns)
        hi_t = np.int64(t[-1]) if t1_ns is None else np.int64(t1_ns)
        ca = np.maximum(ta, lo_t)
        cb = np.minimum(tb, hi_t)
        use &= cb > ca
        ta, tb, va, vb, seg, ca, cb = (x[use] for x in (ta, tb, va, vb, seg, ca, cb))
        slope = (vb - va) / seg.astype(np.float64)
        ya = va + slope * (ca - ta).astype(np.float64)
        yb = va + slope * (cb - ta).astype(np.float64)
        return float(np.sum((ya + yb) * 0.5 * ((cb - ca).astype(np.float64) / 1e9)))

    # ---- kernels ----
    def _tracks(self):
        if "tracks" not in self._cache:
            self._cache["tracks"] = self._table("kernels/tracks")
        return self._cache["tracks"]

    def _strings(self):
        if "strings" not in self._cache:
            self._cache["strings"] = _texts(self._f["strings"])
        return self._cache["strings"]

    def string(self, sid):
        """The string of an id into /strings."""
        return str(self._strings()[int(sid)])

    def _rank_known(self, rank):
        ranks = self.ranks
        if rank not in ranks and rank not in set(int(r) for r in self._tracks()["rank"]):
            raise WattlineKeyError(f"{self.path}: no rank {rank!r} in /ranks (ranks: {ranks})")

    def streams(self, rank):
        """The streams of a rank that have kernel events (/kernels/tracks)."""
        self._rank_known(rank)
        tr = self._tracks()
        return [int(s) for r, s in zip(tr["rank"], tr["stream"]) if int(r) == rank]

    def kernel_counts(self, rank):
        """Events of a rank per class, from /kernels/tracks: {'total', 'compute', 'communication',
        'memory', 'other'} (no event read)."""
        self._rank_known(rank)
        tr = self._tracks()
        sel = tr["rank"] == rank
        out = {"total": int(tr["count"][sel].sum())}
        for c in CLASS_NAMES:
            col = f"count_{c}"
            out[c] = int(tr[col][sel].sum()) if col in tr else None
        return out

    def kernel_arrays(self, rank, t0_ns=None, t1_ns=None, stream=None):
        """The device events of a rank (all its streams, or one) that overlap [t0_ns, t1_ns), as a
        dict of numpy arrays sorted by start: start_ns, dur_ns, name (str), class (str), kind (str),
        stream, device, correlation, name_id, class_id, kind_id, and truth_clock_mhz when stored."""
        self._rank_known(rank)
        k = self._f["kernels"]
        tr = self._tracks()
        boff = k["blocks/offsets"][()].astype(np.int64)
        empty = {"start_ns": np.int64, "dur_ns": np.int64, "name": np.uint32, "class": np.uint8,
                 "kind": np.uint8, "correlation": np.int64, "stream": np.int64, "device": np.int32,
                 "truth_clock_mhz": np.float32}
        # Columns a file may lack get their "unknown" value: kind other, correlation -1.
        optional = [("start_ns", 0), ("dur_ns", 0), ("name", 0), ("class", 3), ("kind", 3),
                    ("correlation", -1)]
        if "truth_clock_mhz" in k:
            optional.append(("truth_clock_mhz", np.nan))
        parts = []
        for i in range(len(tr["rank"])):
            if int(tr["rank"][i]) != rank or (stream is not None and int(tr["stream"][i]) != stream):
                continue
            o, n = int(tr["offset"][i]), int(tr["count"][i])
            if n == 0:
                continue
            r0, r1 = o, o + n
            if t0_ns is not None or t1_ns is not None:
                bs = int(k.attrs.get("block_size", 4096))
                mins = k["blocks/min_start_ns"][boff[i]:boff[i + 1]]
                maxe = k["blocks/max_end_ns"][boff[i]:boff[i + 1]]
                sel = np.ones(len(mins), bool)
                if t0_ns is not None:
                    sel &= maxe > t0_ns
                if t1_ns is not None:
                    sel &= mins < t1_ns
                hit = np.flatnonzero(sel)
                if len(hit) == 0:
                    continue
                r0, r1 = o + int(hit[0]) * bs, min(o + (int(hit[-1]) + 1) * bs, o + n)
            cols = {c: (k[c][r0:r1] if c in k else np.full(r1 - r0, fill, empty[c]))
                    for c, fill in optional}
            keep = np.ones(r1 - r0, bool)
            if t0_ns is not None:
                keep &= cols["start_ns"] + cols["dur_ns"] > t0_ns
            if t1_ns is not None:
                keep &= cols["start_ns"] < t1_ns
            cols = {c: v[keep] for c, v in cols.items()}
            m = len(cols["start_ns"])
            cols["stream"] = np.full(m, int(tr["stream"][i]), np.int64)
            cols["device"] = np.full(m, int(tr["device"][i]) if "device" in tr else -1, np.int32)
            parts.append(cols)
        names = ["start_ns", "dur_ns", "name", "class", "kind", "correlation", "stream", "device"]
        if "truth_clock_mhz" in k:
            names.append("truth_clock_mhz")
        if parts:
            raw = {c: np.concatenate([p[c] for p in parts]) for c in names}
        else:
            raw = {c: np.zeros(0, empty[c]) for c in names}
        order = np.argsort(raw["start_ns"], kind="stable")
        raw = {c: v[order] for c, v in raw.items()}
        strings = self._strings()
        out = {"start_ns": raw["start_ns"], "dur_ns": raw["dur_ns"],
               "name": strings[raw["name"].astype(np.int64)] if len(raw["name"]) else np.zeros(0, object),
               "class": np.array(CLASS_NAMES + ("?",), object)[np.minimum(raw["class"], 4)]
               if len(raw["class"]) else np.zeros(0, object),
               "kind": np.array(KIND_NAMES + ("?",), object)[np.minimum(raw["kind"], 4)]
               if len(raw["kind"]) else np.zeros(0, object),
               "stream": raw["stream"], "device": raw["device"], "correlation": raw["correlation"],
               "name_id": raw["name"], "class_id": raw["class"], "kind_id": raw["kind"]}
        if "truth_clock_mhz" in raw:
            out["truth_clock_mhz"] = raw["truth_clock_mhz"]
        return out

    def kernels(self, rank, t0_ns=None, t1_ns=None, stream=None):
        """kernel_arrays() as a pandas DataFrame (one row per event, sorted by start_ns)."""
        pd = _pandas()
        a = self.kernel_arrays(rank, t0_ns, t1_ns, stream)
        df = pd.DataFrame(a)
        for c in ("class", "kind"):
            df[c] = df[c].astype("category")
        return df

    # ---- iterations, annotations, throttle intervals ----
    def iteration_arrays(self, rank=None):
        """/iterations as numpy arrays (rank, step, start_ns, end_ns, dur_ns), sorted by rank then
        start; only one rank's when rank is given."""
        t = self._table("iterations", ["rank", "step", "start_ns", "end_ns"])
        if rank is not None:
            self._rank_known(rank)
            sel = t["rank"] == rank
            t = {c: v[sel] for c, v in t.items()}
        t["dur_ns"] = t["end_ns"] - t["start_ns"]
        return t

    def iterations(self, rank=None):
        """iteration_arrays() as a pandas DataFrame."""
        pd = _pandas()
        return pd.DataFrame(self.iteration_arrays(rank))

    def annotation_arrays(self, rank=None):
        """/annotations (rank, start_ns, dur_ns, name (str), on_gpu) as numpy arrays."""
        t = self._table("annotations")
        if rank is not None:
            sel = t["rank"] == rank
            t = {c: v[sel] for c, v in t.items()}
        if "name" in t:
            t["name"] = self._strings()[t["name"].astype(np.int64)] if len(t["name"]) else np.zeros(0, object)
        return t

    def annotations(self, rank=None):
        """annotation_arrays() as a pandas DataFrame."""
        pd = _pandas()
        return pd.DataFrame(self.annotation_arrays(rank))

    @property
    def has_ground_truth(self):
        """True when the run stores the simulator's ground truth (/ground_truth; simulated runs)."""
        return "ground_truth" in self._f

    def throttle_interval_arrays(self, gpu=None):
        """The stored throttle intervals: /ground_truth/throttle of a simulated run as numpy arrays
        (gpu, start_ns, end_ns, reasons, and busy_s, deficit_mhz_s, unthrottled_mhz, NaN where the
        file lacks them), or None when the file stores none (measured runs: the intervals that
        `wattline analyze` reports are derived by the analysis, not stored, and not derived here)."""
        if "ground_truth/throttle" not in self._f:
            return None
        t = self._table("ground_truth/throttle")
        n = len(t["gpu"])
        for c in ("busy_s", "deficit_mhz_s", "unthrottled_mhz"):
            if c not in t:
                t[c] = np.full(n, np.nan)
        if gpu is not None:
            g = self._gpu(gpu)
            sel = t["gpu"] == g
            t = {c: v[sel] for c, v in t.items()}
        return t

    def throttle_intervals(self, gpu=None):
        """throttle_interval_arrays() as a pandas DataFrame, with reason names in `causes`;
        None when the file stores no intervals."""
        a = self.throttle_interval_arrays(gpu)
        if a is None:
            return None
        pd = _pandas()
        df = pd.DataFrame(a)
        df["causes"] = [",".join(n for bit, n in THROTTLE_BITS.items() if int(r) & bit)
                        for r in a["reasons"]]
        return df

    def ground_truth_energy_j(self):
        """/ground_truth/energy_j (per GPU, the integral of the simulated power), or None."""
        if "ground_truth/energy_j" not in self._f:
            return None
        return self._f["ground_truth/energy_j"][()]


def open(path):
    """Open a Wattline run file read-only. Raises ValueError naming the file for a file that is
    not HDF5 or not a Wattline run, or of a newer format version; FileNotFoundError if absent."""
    return Run(path)

