"""Test size against the RAM a run had, read from the only places logs and labels hold it."""

from storagelab.analysis import plausibility
from storagelab.units import GiB, MiB


def test_ram_from_bonnie_r_and_from_lab_notes():
    assert plausibility.ram_bytes("bonnie++ -r 32768 -m NAME -u root") == (32 * GiB, "bonnie++ -r 32768 (MiB)")
    assert plausibility.ram_bytes("bonnie++ -r32768 -d /x")[0] == 32 * GiB
    assert plausibility.ram_bytes("fio --name=x", "kernel=6.1; ram_bytes=8589934592; fstype=ext4") == (
        8 * GiB,
        "ram_bytes in the manifest's notes",
    )
    assert plausibility.ram_bytes("fio --name=x --size=16G") == (None, None)  # fio does not say
    assert plausibility.ram_bytes("bonnie++ -d /x -s 64g") == (None, None)
    assert plausibility.ram_bytes(None, "ram_bytes=abc") == (None, None)
    # the manifest's ram_bytes column comes first (what storagelab lab writes now)
    assert plausibility.ram_bytes("bonnie++ -r 1024", "ram_bytes=1", 16 * GiB) == (16 * GiB, "the manifest's ram_bytes")


def test_against_cache():
    c = plausibility.against_cache(64 * GiB, 32 * GiB, 29 * GiB)
    assert c["size_over_ram"] == 2.0 and round(c["size_over_cache"], 3) == 1.049 and not c["fits_in_cache"]
    assert plausibility.against_cache(16 * GiB, 32 * GiB)["fits_in_cache"]
    assert plausibility.against_cache(16 * GiB, None) is None and plausibility.against_cache(None, 1 * MiB) is None


def test_fio_file_size_counts_a_shared_file_once():
    from storagelab.analysis.stacks import file_bytes

    row = dict(wl_size=str(16 * GiB), wl_numjobs="8", shared_file=True)
    assert file_bytes(row) == 16 * GiB  # 8 jobs on one --filename write one 16 GiB file
    assert file_bytes({**row, "shared_file": False}) == 128 * GiB  # 8 files of 16 GiB
    assert file_bytes({**row, "wl_size": None}) is None
