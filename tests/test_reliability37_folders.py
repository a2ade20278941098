"""Reliability-37 (folders): what vl-convert draws of a chart whose labels are cut short (``spectexts``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import altair as alt
import polars as pl

from storagelab.chartkit import top_categories
from storagelab.spectexts import LONGEST, short_texts


def _colour_chart(labels: list[str]) -> dict:
    df = pl.DataFrame({"series": labels, "x": list(range(len(labels))), "y": list(range(len(labels)))})
    df, colours = top_categories(df, "series", "other")
    return (
        alt.Chart(df)
        .mark_point()
        .encode(x="x:Q", y="y:Q", color=alt.Color("series_colour:N", scale=colours), order=alt.Order("x:Q"))
        .to_dict()
    )


def test_a_long_label_s_colour_scale_is_cut_as_its_data_is():
    """08_fio's series get their colours from a scale with an explicit domain (``top_categories``): labels over 300
    characters were cut in the data but not in the domain, and vl-convert drew those series in no colour at all
    (two of them alike, black) under a legend giving each its own colour."""
    labels = ["a" * 400 + "-one", "short", "c" * 400 + "-three"]
    drawn = short_texts(_colour_chart(labels))
    (rows,) = drawn["datasets"].values()
    domain = drawn["encoding"]["color"]["scale"]["domain"]
    assert sorted(r["series_colour"] for r in rows) == sorted(domain)
    assert all(len(d) <= LONGEST for d in domain) and len(set(domain)) == 3


def test_a_label_equal_to_another_s_cut_stays_another_series():
    """A label of exactly LONGEST characters was drawn whole: one written as another's cut form (the first 291
    letters, an ellipsis, 8 hex digits of its SHA-256) was drawn as one series with it."""
    long = "b" * 400
    cut = short_texts({"datasets": {"d": [{"s": long}]}})["datasets"]["d"][0]["s"]
    assert len(cut) == LONGEST
    rows = short_texts({"datasets": {"d": [{"s": long}, {"s": cut}, {"s": "b" * (LONGEST - 1)}]}})["datasets"]["d"]
    assert len({r["s"] for r in rows}) == 3
    assert rows[2]["s"] == "b" * (LONGEST - 1)  # shorter than any cut: drawn whole


def test_two_kernel_installs_at_once_each_keep_their_own_stage(tmp_path):
    """`./run`'s register_kernel staged ipykernel's files at one fixed name, <sys.prefix>/.storagelab-kernel-stage,
    removed and made again by each install: a second ./run installing at the same time removed the first's stage
    under it (ipykernel's shutil.Error / FileNotFoundError, exit 1). Issue 26: temporary files never at a fixed
    path. Here the function as `run` has it, with a stand-in for the environment's python: A stages a file, B
    installs whole meanwhile, A's file must still be there; nothing is left after."""
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = -c ]; then echo {tmp_path}/env; exit 0; fi\n'
        'if [ "${WHO:-}" = A ]; then echo a > "$TMPDIR/a"; touch "$GO/staged"\n'
        '  for _ in $(seq 500); do [ -e "$GO/release" ] && break; sleep 0.01; done\n'
        '  [ -e "$TMPDIR/a" ] || exit 7; fi\n'
        "exit 0\n"
    )
    fake.chmod(0o755)
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / ".storagelab-kernel-stage-999999999-old").mkdir()  # a killed install's (no such process)
    run = (Path(__file__).parent.parent / "run").read_text()
    function = run[run.index("register_kernel() {") : run.index("\n}\n", run.index("register_kernel() {")) + 3]
    script = (
        f"set -euo pipefail\nPY={fake}\nGO={tmp_path}\n{function}\n"
        f"(WHO=A register_kernel && echo 0 > {tmp_path}/a.rc || echo $? > {tmp_path}/a.rc) &\n"
        f"for _ in $(seq 500); do [ -e {tmp_path}/staged ] && break; sleep 0.01; done\n"
        f"register_kernel\ntouch {tmp_path}/release\nwait\n"
    )
    subprocess.run(["bash", "-c", script], check=True, timeout=30, env={**os.environ, "GO": str(tmp_path)})
    assert (tmp_path / "a.rc").read_text().strip() == "0"
    assert list((tmp_path / "env").iterdir()) == []
