"""All-reduce bandwidth: Plexus (plexus.distribute, Gloo underneath) against
torch.distributed with its Gloo backend, same machine, same sizes, as a ratio.

    PYTHONPATH=build/python build/venv/bin/python bench/peers/allreduce.py --nproc 2 \
        --out bench/results_allreduce.json

Both run float32 sums of 4 KiB to 64 MiB on N processes over 127.0.0.1, in
interleaved rounds (Plexus, then PyTorch, then Plexus...), so that the
machine's drift hits both alike. Per size and framework the best round's
median time per all-reduce is kept; bandwidth is the bus bandwidth NCCL's
tests report (2 (n-1)/n bytes / time). Plexus's call returns a new tensor
(a copy of the input, then Gloo's ring in place); PyTorch's reduces in place.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]


def iterations(nbytes):
    return max(5, min(200, (32 << 20) // nbytes))


def time_sizes(sizes, make, all_reduce):
    """Median seconds of all_reduce(make(elements)) per size, after 3 warm-up calls."""
    out = {}
    for nbytes in sizes:
        t = make(nbytes // 4)
        for _ in range(3):
            all_reduce(t)
        times = []
        for _ in range(iterations(nbytes)):
            t0 = time.perf_counter()
            all_reduce(t)
            times.append(time.perf_counter() - t0)
        out[nbytes] = statistics.median(times)
    return out


def worker_plexus(sizes):
    import plexus as px
    import plexus.distribute as dist
    dist.init()
    out = time_sizes(sizes, lambda n: px.constant(np.ones(n, np.float32)), dist.all_reduce)
    dist.barrier()
    return out


def worker_torch(sizes):
    import torch
    import torch.distributed as tdist
    torch.set_num_threads(1)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}",
                             rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
    out = time_sizes(sizes, lambda n: torch.ones(n, dtype=torch.float32), tdist.all_reduce)
    tdist.barrier()
    tdist.destroy_process_group()
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(framework, nproc, sizes):
    """Starts nproc ranks of this script; rank 0's timings."""
    port = free_port()
    procs = []
    for r in range(nproc):
        env = {**os.environ, "RANK": str(r), "WORLD_SIZE": str(nproc), "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "PLEXUS_RANK": str(r), "PLEXUS_WORLD_SIZE": str(nproc),
               "PLEXUS_RUN_ID": f"bench{port}", "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker", framework, "--sizes",
                                       ",".join(map(str, sizes))], env=env, stdout=subprocess.PIPE))
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for p in procs:
        if p.returncode != 0:
            raise SystemExit(f"{framework} rank failed with {p.returncode}")
    return {int(k): v for k, v in json.loads(outs[0].decode().strip().splitlines()[-1]).items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    if a.worker:
        result = (worker_plexus if a.worker == "plexus" else worker_torch)(sizes)
        if int(os.environ["RANK"]) == 0:
            print(json.dumps(result))
        return
    best = {"plexus": {}, "torch": {}}
    for _ in range(a.rounds):
        for fw in ("plexus", "torch"):
            for size, t in run(fw, a.nproc, sizes).items():
                best[fw][size] = min(best[fw].get(size, float("inf")), t)
    load = os.getloadavg()
    rows = []
    print(f"all-reduce float32 sum, {a.nproc} ranks on 127.0.0.1, best of {a.rounds} rounds "
          f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs)")
    print(f"{'size':>8} {'plexus us':>10} {'torch us':>10} {'plexus GB/s':>12} {'torch GB/s':>11} {'ratio':>6}")
    factor = 2 * (a.nproc - 1) / a.nproc
    for size in sizes:
        p, t = best["plexus"][size], best["torch"][size]
        row = {"bytes": size, "plexus_us": p * 1e6, "torch_us": t * 1e6, "plexus_bus_gbps": factor * size / p / 1e9,
               "torch_bus_gbps": factor * size / t / 1e9, "speed_ratio_plexus_over_torch": t / p}
        rows.append(row)
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        print(f"{label:>8} {row['plexus_us']:10.1f} {row['torch_us']:10.1f} {row['plexus_bus_gbps']:12.3f} "
              f"{row['torch_bus_gbps']:11.3f} {row['speed_ratio_plexus_over_torch']:6.2f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"nproc": a.nproc, "rounds": a.rounds, "loadavg": load, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
