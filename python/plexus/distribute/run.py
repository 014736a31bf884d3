"""plexus-run: starts N ranks of a script on this machine and watches them.

::

    plexus-run --nproc 4 train.py --epochs 3
    python -m plexus.distribute.run --nproc 4 -m mypackage.train

Hosts the run's key-value store, sets each rank's environment (PLEXUS_RANK,
PLEXUS_WORLD_SIZE, PLEXUS_LOCAL_RANK, MASTER_ADDR, MASTER_PORT,
PLEXUS_RUN_ID, and torchrun's RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE), prefixes every line a rank prints with ``[rank]``, and
when a rank fails gives the others ``--grace`` seconds to end on their
own (their collectives report the failure), then stops them (SIGTERM, then
SIGKILL) and exits with the failing rank's code. Several
machines: run one launcher per machine with ``--nnodes``, ``--node-rank``
and the first machine's ``--master-addr`` (docs/distributed.md).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
import uuid


def _parse(argv):
    p = argparse.ArgumentParser(prog="plexus-run", description=__doc__.split("\n\n")[0])
    p.add_argument("--nproc", "--nproc-per-node", type=int, required=True, help="ranks to start on this machine")
    p.add_argument("--nnodes", type=int, default=1, help="machines in the run (one launcher each)")
    p.add_argument("--node-rank", type=int, default=0, help="this machine's index (0 hosts the store)")
    p.add_argument("--master-addr", default="127.0.0.1", help="address of machine 0 (the store)")
    p.add_argument("--master-port", type=int, default=0, help="the store's port (0: any free one; one machine only)")
    p.add_argument("--timeout", type=float, default=None, help="seconds each collective may take (PLEXUS_DIST_TIMEOUT)")
    p.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL when stopping ranks")
    p.add_argument("--run-id", default=None, help="namespace of this run's keys in the store")
    p.add_argument("--no-prefix", action="store_true", help="do not prefix output lines with [rank]")
    p.add_argument("-m", dest="module", action="store_true", help="run the script argument as a module")
    p.add_argument("script", help="the Python script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p.parse_args(argv)


def _describe(code):
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _pump(stream, prefix, out, lock):
    for raw in iter(stream.readline, b""):
        with lock:
            out.write(prefix + raw)
            out.flush()
    stream.close()


def main(argv=None) -> int:
    a = _parse(sys.argv[1:] if argv is None else argv)
    if a.nproc < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
        print("plexus-run: --nproc and --nnodes must be positive and --node-rank below --nnodes", file=sys.stderr)
        return 2
    if a.nnodes > 1 and a.master_port == 0:
        print("plexus-run: several machines need a fixed --master-port", file=sys.stderr)
        return 2
    server = None
    port = a.master_port
    if a.node_rank == 0:
        from plexus import _plexus
        host = a.master_addr if a.nnodes == 1 else "0.0.0.0"
        try:
            server = _plexus.StoreServer.start(host, a.master_port)
        except Exception as e:  # noqa: BLE001 - reported as is
            print(f"plexus-run: cannot start the store on {host}:{a.master_port}: {e}", file=sys.stderr)
            return 1
        port = server.port
    world = a.nproc * a.nnodes
    run_id = a.run_id or uuid.uuid4().hex[:12]
    out = sys.stdout.buffer
    lock = threading.Lock()
    procs = []
    pumps = []
    cmd = [sys.executable, "-u"] + (["-m", a.script] if a.module else [a.script]) + list(a.args)
    for local in range(a.nproc):
        rank = a.node_rank * a.nproc + local
        env = dict(os.environ)
        env.update({
            "PLEXUS_RANK": str(rank), "PLEXUS_WORLD_SIZE": str(world), "PLEXUS_LOCAL_RANK": str(local),
            "PLEXUS_LOCAL_WORLD_SIZE": str(a.nproc), "RANK": str(rank), "WORLD_SIZE": str(world),
            "LOCAL_RANK": str(local), "LOCAL_WORLD_SIZE": str(a.nproc), "MASTER_ADDR": a.master_addr,
            "MASTER_PORT": str(port), "PLEXUS_RUN_ID": run_id, "PLEXUS_STORE_HOSTED": "1",
        })
        if a.timeout is not None:
            env["PLEXUS_DIST_TIMEOUT"] = str(a.timeout)
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append((rank, p))
        prefix = b"" if a.no_prefix else f"[{rank}] ".encode()
        t = threading.Thread(target=_pump, args=(p.stdout, prefix, out, lock), daemon=True)
        t.start()
        pumps.append(t)

    def stop_all(sig=signal.SIGTERM):
        for _, p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, sig)
                    if sig == signal.SIGTERM:  # a stopped rank acts on SIGTERM only once continued
                        os.killpg(p.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass

    interrupted = []

    def on_signal(signum, frame):
        interrupted.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    status = 0
    try:
        while True:
            if interrupted:
                with lock:
                    print(f"plexus-run: {signal.Signals(interrupted[0]).name}: stopping every rank", file=sys.stderr)
                status = 128 + interrupted[0]
                break
            failed = [(r, p.returncode) for r, p in procs if p.poll() is not None and p.returncode != 0]
            if failed:
                r, code = failed[0]
                with lock:
                    print(f"plexus-run: rank {r} {_describe(code)}; stopping the other ranks", file=sys.stderr)
                status = code if code > 0 else 128 - code
                break
            if all(p.poll() is not None for _, p in procs):
                break
            time.sleep(0.05)
        if status != 0:
            # The others usually fail on their own at once (their collectives
            # report the dead rank); give them the grace period to say so,
            # then SIGTERM, then SIGKILL.
            for sig in ((None, signal.SIGTERM, signal.SIGKILL) if not interrupted else (signal.SIGTERM, signal.SIGKILL)):
                if sig is not None:
                    stop_all(sig)
                deadline = time.monotonic() + a.grace
                while time.monotonic() < deadline and any(p.poll() is None for _, p in procs):
                    time.sleep(0.05)
        for _, p in procs:
            p.wait()
        for t in pumps:
            t.join(timeout=2)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if server is not None:
            server.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
