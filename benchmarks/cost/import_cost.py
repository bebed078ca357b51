"""Start-up cost: wall time of fresh interpreters doing only an import or ``graphmem --help``.

    python -m benchmarks.cost.import_cost [--runs 15]

Each line is the median (and min / max) of ``--runs`` subprocess runs, interpreter start included;
the first line is a bare interpreter, for reference. Targets (README): ``import graphmem`` < 0.3 s,
``graphmem --help`` < 0.5 s. A loaded machine inflates every line, the bare interpreter's too.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "python -c pass (interpreter only)": [sys.executable, "-c", "pass"],
    "import graphmem": [sys.executable, "-c", "import graphmem"],
    "from graphmem import Memory": [sys.executable, "-c", "from graphmem import Memory"],
    "graphmem --help": [shutil.which("graphmem") or str(Path(sys.executable).parent / "graphmem"), "--help"],
}


def measure(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=15)
    args = p.parse_args(argv)
    print(f"| command | median s | min s | max s |  ({args.runs} runs each)")
    print("|---|---|---|---|")
    for name, cmd in CASES.items():
        measure(cmd, 1)  # warm the file cache
        t = measure(cmd, args.runs)
        print(f"| {name} | {statistics.median(t):.3f} | {min(t):.3f} | {max(t):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
