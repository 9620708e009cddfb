#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Records a real training run on one NVIDIA GPU for Wattline.

nvidia-smi samples the GPU at 10 Hz (--smi-ms) from an idle lead-in, through the training, to an
idle tail; the PyTorch profiler records a Kineto trace of --trace-steps training iterations in the
middle. The workload is a GPT-style decoder trained with AdamW on random tokens (the tokens are
synthetic; the power, heat, clocks and kernels are what the GPU did). Where the driver knows them,
power.draw.average (NVML's 1-second average) and power.draw.instant are logged beside power.draw.
With --pause-every N the loop sleeps --pause-seconds on the host after every N-th iteration: known
steps of load, logged with their UTC times, that show a power sensor's averaging and lag. With
--nvml-ms a thread also reads NVML's instantaneous and average power fields and the SM clock at
that period (nvml.csv.gz), to see how often each reading actually changes. Writes to OUT:

  gpu.csv          nvidia-smi --query-gpu CSV (the field list of docs/import-telemetry.md)
  trace.json.gz    Kineto trace (torch.profiler, CPU + CUDA activities)
  nvml.csv.gz      (--nvml-ms) utc,power_instant_mw,power_average_mw,power_usage_mw,sm_mhz
  recording.json   GPU, driver, PyTorch and workload, iteration and pause times (UTC), throughput

Then, on any machine:

  wattline import OUT/gpu.csv OUT/trace.json.gz --utc-offset +00:00 -o run.h5

Needs PyTorch with CUDA (and nvidia-ml-py for --nvml-ms). Usage: record_gpu_run.py OUT
[--train-seconds S] [--idle-seconds S] [--trace-steps N] [--pause-every N --pause-seconds S]
[--smi-ms MS] [--nvml-ms MS]
"""
import argparse
import datetime
import gzip
import json
import os
import shutil
import subprocess
import threading
import time

import torch
import torch.nn.functional as F

FIELDS = (
    "timestamp,index,name,uuid,power.draw,temperature.gpu,temperature.memory,clocks.sm,"
    "clocks.mem,utilization.gpu,utilization.memory,memory.used,memory.total,power.limit,"
    "clocks.max.sm,clocks_event_reasons.active"
)
# Logged beside power.draw where `nvidia-smi --help-query-gpu` lists them (drivers >= 530 or so).
SENSOR_FIELDS = ("power.draw.average", "power.draw.instant")


def supported_fields():
    helptext = subprocess.run(["nvidia-smi", "--help-query-gpu"], capture_output=True,
                              text=True).stdout
    extra = [f for f in SENSOR_FIELDS if f'"{f}"' in helptext]
    return FIELDS.replace("power.draw,", ",".join(["power.draw"] + extra) + ",", 1)


def nvml_sampler(path, period_s, stop):
    """Reads NVML's power fields and SM clock every period_s until stop is set."""
    import pynvml
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    # NVML field ids 186 and 185 (nvml.h), for bindings that predate the names.
    fields = [getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", 186),
              getattr(pynvml, "NVML_FI_DEV_POWER_AVERAGE", 185)]
    with gzip.open(path, "wt") as out:
        out.write("utc,power_instant_mw,power_average_mw,power_usage_mw,sm_mhz\n")
        while not stop.is_set():
            now = datetime.datetime.now(datetime.timezone.utc)
            values = pynvml.nvmlDeviceGetFieldValues(handle, fields)
            got = [str(v.value.uiVal) if v.nvmlReturn == 0 else "" for v in values]
            usage = pynvml.nvmlDeviceGetPowerUsage(handle)
            sm = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
            out.write(f"{now.isoformat(timespec='microseconds')},{got[0]},{got[1]},{usage},{sm}\n")
            time.sleep(period_s)
    pynvml.nvmlShutdown()


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.proj = torch.nn.Linear(d, d, bias=False)
        self.ln2 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d, bias=False)
        self.down = torch.nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Gpt(torch.nn.Module):
    def __init__(self, vocab, d, heads, layers):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--train-seconds", type=float, default=120)
    parser.add_argument("--idle-seconds", type=float, default=8)
    parser.add_argument("--trace-at", type=float, default=0.5, help="fraction of the training")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--d-model", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--trace-steps", type=int, default=2, help="iterations in the trace")
    parser.add_argument("--pause-every", type=int, default=0, help="0: never")
    parser.add_argument("--pause-seconds", type=float, default=0.5)
    parser.add_argument("--smi-ms", type=int, default=100)
    parser.add_argument("--nvml-ms", type=float, default=0, help="0: no NVML sampler")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # nvidia-smi writes local time without a zone; record in UTC so the import is exact.
    env = dict(os.environ, TZ="UTC")
    fields = supported_fields()
    smi = subprocess.Popen(
        ["nvidia-smi", "-i", "0", f"--query-gpu={fields}", "--format=csv", "-lms",
         str(args.smi_ms), "-f", os.path.join(args.out, "gpu.csv")], env=env)
    stop = threading.Event()
    sampler = None
    if args.nvml_ms > 0:
        sampler = threading.Thread(target=nvml_sampler, daemon=True, args=(
            os.path.join(args.out, "nvml.csv.gz"), args.nvml_ms / 1000, stop))
        sampler.start()
    meta = {"recorded_utc": utc_now(), "nvidia_smi_fields": fields,
            "nvidia_smi_interval_ms": args.smi_ms, "nvml_interval_ms": args.nvml_ms}
    pauses = []

    def maybe_pause(done):
        if args.pause_every > 0 and done % args.pause_every == 0:
            start = utc_now()
            time.sleep(args.pause_seconds)
            pauses.append({"start_utc": start, "end_utc": utc_now()})

    try:
        meta["gpu"] = subprocess.run(
            ["nvidia-smi", "-i", "0", "--query-gpu=name,driver_version,vbios_version,"
             "power.limit,power.max_limit,clocks.max.sm,memory.total", "--format=csv"],
            capture_output=True, text=True, check=True).stdout
        time.sleep(args.idle_seconds)

        torch.manual_seed(0)
        device = torch.device("cuda", 0)
        model = Gpt(args.vocab, args.d_model, args.heads, args.layers).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        params = sum(p.numel() for p in model.parameters())

        def step():
            tokens = torch.randint(0, args.vocab, (args.batch, args.seq_len + 1), device=device)
            with torch.profiler.record_function("forward"):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = model(tokens[:, :-1])
                    loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
            with torch.profiler.record_function("backward"):
                loss.backward()
            with torch.profiler.record_function("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)
            return loss.item()  # one host sync per iteration, as a training loop logging loss

        iterations = []
        t0 = time.monotonic()
        traced = False
        while time.monotonic() - t0 < args.train_seconds:
            if not traced and time.monotonic() - t0 >= args.trace_at * args.train_seconds:
                traced = True
                activities = [torch.profiler.ProfilerActivity.CPU,
                              torch.profiler.ProfilerActivity.CUDA]
                schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.trace_steps,
                                                   repeat=1)
                raw = os.path.join(args.out, "trace.json")
                # The trace is written when the schedule's active steps end (exporting after the
                # profiler's context has closed gives an empty trace).
                with torch.profiler.profile(
                        activities=activities, schedule=schedule,
                        on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
                    for i in range(args.trace_steps + 1):
                        loss = step()
                        iterations.append({"end_utc": utc_now(), "loss": loss, "traced": i > 0})
                        maybe_pause(len(iterations))
                        prof.step()
                with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", 9) as dst:
                    shutil.copyfileobj(src, dst)
                os.remove(raw)
                continue
            loss = step()
            iterations.append({"end_utc": utc_now(), "loss": loss})
            maybe_pause(len(iterations))
        train_s = time.monotonic() - t0
        tokens = len(iterations) * args.batch * args.seq_len
        meta.update({
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "workload": {"model": "GPT decoder, random tokens", "layers": args.layers,
                         "d_model": args.d_model, "heads": args.heads, "seq_len": args.seq_len,
                         "batch": args.batch, "vocab": args.vocab, "parameters": params,
                         "precision": "bf16 autocast, fp32 master weights, fused AdamW"},
            "train_seconds": train_s, "iterations": len(iterations),
            "tokens_per_second": tokens / train_s, "iteration_log": iterations,
            "pauses": pauses, "pause_every": args.pause_every,
            "pause_seconds": args.pause_seconds})
        del model, opt
        torch.cuda.empty_cache()
        time.sleep(args.idle_seconds)
    finally:
        stop.set()
        if sampler is not None:
            sampler.join()
        smi.terminate()
        smi.wait()
        meta["finished_utc"] = utc_now()
        with open(os.path.join(args.out, "recording.json"), "w") as f:
            json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
