"""data/raw/ holds the seeds' outputs verbatim, each with its manifest row."""

import csv

import pytest
from conftest import RAW, SEEDS

from storagelab.manifest import load


def _rows():
    with open(RAW / "manifest.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_raw_file_has_a_manifest_row_and_back():
    listed = {r["path"] for r in _rows()}
    present = {p.relative_to(RAW).as_posix() for p in RAW.rglob("*") if p.is_file() and p.name != "manifest.csv"}
    assert listed == present


def test_manifest_loads_with_types():
    m = load(RAW / "manifest.csv")
    row = m.rows["homelab-mergerfs/fio-zfs-mirror-zfs0.8.4.txt"]
    assert row["vdev_count"] == 1 and row["vdev_width"] == 2 and row["device_limit_bytes_per_s"] == 900e6
    assert m.rows["freebsd-bonnie-dedup/bonnie-raid1-sec63-cache-log.txt"]["partition_start_sector"] == 63


@pytest.mark.skipif(not SEEDS.exists(), reason="shared/seeds not beside the checkout")
@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["path"])
def test_raw_file_is_verbatim_from_its_seed(row):
    if not row["seed"]:
        pytest.skip("not extracted verbatim")
    seed = (SEEDS / row["seed"]).read_bytes().split(b"\n")
    if row["seed_lines"]:
        a, b = (int(x) for x in row["seed_lines"].split("-"))
        data = (RAW / row["path"]).read_bytes()
        if data.startswith(b"# storagelab transcribed table"):
            pytest.skip("a transcription, checked by its own test")
        assert data == b"\n".join(seed[a - 1 : b]) + b"\n"
