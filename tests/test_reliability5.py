"""The fifth reliability campaign (docs/reliability-5-processes.md): each test repeats an attack that broke."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from conftest import ROOT

GiB_KiB = 1024 * 1024


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    env.pop("STORAGELAB_MIN_ADDRESS_SPACE", None)
    return env


def _limit(kib: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (kib * 1024, kib * 1024))


def test_a_command_that_draws_charts_under_a_memory_limit_is_one_line_not_a_v8_abort(tmp_path):
    """Attack: `ulimit -v 1400000` (and up to 34 GB) then `report`: exit 133 (SIGTRAP), 39 lines of V8's C stack
    ("Fatal process out of memory: Oilpan: CagedHeap reservation"), no line of ours; `run` and `build` lost their
    notebooks' kernels the same way. vl-convert's V8 reserves its caged heap when it starts: 64 GiB of address
    space is too little, 66 GiB is enough. Now run, report and build refuse such a limit in one line, exit 2."""

    probe = [sys.executable, "-c", "import vl_convert as v; v.javascript_bundle(); print('drew')"]
    crashed = subprocess.run(probe, capture_output=True, text=True, preexec_fn=_limit(8 * GiB_KiB))
    assert crashed.returncode == -5 and "CagedHeap reservation" in crashed.stdout + crashed.stderr  # SIGTRAP
    drew = subprocess.run(probe, capture_output=True, text=True, preexec_fn=_limit(66 * GiB_KiB))
    assert (drew.returncode, drew.stdout) == (0, "drew\n")

    for args in (["report"], ["run", "08_fio", "--output", str(tmp_path / "rep")], ["build"]):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", *args],
            capture_output=True, text=True, env=_env(), cwd=tmp_path, preexec_fn=_limit(8 * GiB_KiB),
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            f"storagelab {args[0]}: the address-space limit (ulimit -v 8388608) is below the 67584 MiB that drawing "
            "charts needs: vl-convert's JavaScript engine (V8) reserves that much address space when it starts (not "
            "memory used), and aborts the process below it; raise the limit (ulimit -v 69206016, or unlimited), or set "
            "STORAGELAB_MIN_ADDRESS_SPACE=MiB to try a lower floor\n",
        )
    assert not (tmp_path / "rep").exists()
