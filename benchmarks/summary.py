"""Run every benchmark in benchmarks/ (one after another, every thread pool at one thread) and print one table
of ratios, with the CPU time beside the wall time of each row.

Each benchmark runs in the process environment of the frame's workers (``core.executors.WORKER_MALLOC``:
glibc keeps freed memory for reuse), so that it times the code as `icml24 run` runs it; both sides of every
comparison run in that one process. Set the variables yourself to time another allocator setting.

Each benchmark prints its own report and, for every comparison, a machine-readable row
(``icml24.core.bench.ratio_row``); this script passes the reports through and then prints those rows
as one markdown table: ours / baseline below 1 means this package is faster. `make bench` runs it.
Usage: python benchmarks/summary.py [bench_name ...]   (default: all)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from icml24.core.bench import POOL_VARS, RATIO_MARK
from icml24.core.executors import WORKER_MALLOC

HERE = Path(__file__).parent


def main(names: list[str]) -> int:
    scripts = [HERE / f"{n}.py" for n in names] if names else sorted(HERE.glob("bench_*.py"))
    rows: list[tuple[str, list[str]]] = []
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        env = {**WORKER_MALLOC, **os.environ, **{var: "1" for var in POOL_VARS}}  # every pool at one thread
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
        for line in proc.stdout.splitlines():
            if line.startswith(RATIO_MARK):
                rows.append((script.stem, line[len(RATIO_MARK):].split("\t")))
            else:
                print(line)
        if proc.returncode:
            failed.append(script.name)
            print(proc.stderr[-2000:], file=sys.stderr)
    print("\n| benchmark | workload | baseline | ours ms | baseline ms | ours / baseline | outputs agree "
          "| ours CPU ms | baseline CPU ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for bench, (workload, baseline, ours, base, ratio, agree, ours_cpu, base_cpu) in rows:
        print(f"| {bench} | {workload} | {baseline} | {float(ours):.2f} | {float(base):.2f} | {float(ratio):.2f} "
              f"| {agree} | {ours_cpu} | {base_cpu} |")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
