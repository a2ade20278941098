"""Reliability-17 (issue 26), paths: the attacks of the campaign on every path a command makes, names or removes, and
on the environment, done again here as the second user did them (docs/reliability-17-paths.md)."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import their_folder
from test_reliability5_processes import _as_user
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab import ownership

_ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks need root and a second user")


def _user(*argv: str) -> None:
    subprocess.run(argv, check=True, preexec_fn=_as_user(USER))


@_ROOT_ONLY
def test_a_refused_exports_clean_up_removes_only_the_folders_it_made_not_what_a_swapped_parent_leads_to(
    shared_tmp,  # noqa: F811
    monkeypatch,
):
    """`export --dataset THEIRS/ds/a` is refused (THEIRS is the user's), and the refusal removes the empty folders it
    made. It removed them by path: the user renamed the new `ds` away and put their link `ds -> ELSEWHERE` in its place
    between the mkdir and the clean-up, and root's rmdir followed it and removed ELSEWHERE/a/_storagelab and
    ELSEWHERE/a, empty folders that were not the export's. Now each is removed by its parent's descriptor, only while
    it is the folder made."""
    import duckdb  # noqa: PLC0415

    from storagelab import dataset  # noqa: PLC0415

    theirs = their_folder(shared_tmp)
    elsewhere = shared_tmp / "elsewhere"
    (elsewhere / "a" / "_storagelab").mkdir(parents=True)  # empty folders of root's, kept by whoever made them
    real = dataset._owned_folder

    def swapped_then_checked(out):
        _user("mv", str(theirs / "ds"), str(theirs / "moved"))
        _user("ln", "-s", str(elsewhere), str(theirs / "ds"))
        return real(out)

    monkeypatch.setattr(dataset, "_owned_folder", swapped_then_checked)
    con = duckdb.connect()
    con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")  # the refusal comes before any table is read
    try:
        with pytest.raises(ownership.SharedFolderError, match=r"^--dataset "):
            dataset.export(con, theirs / "ds" / "a")
    finally:
        con.close()
    assert (elsewhere / "a" / "_storagelab").is_dir()
    assert sorted(str(p.relative_to(theirs)) for p in theirs.rglob("*")) == ["ds", "moved"]  # its own: removed


@_ROOT_ONLY
def test_an_empty_search_path_entry_is_the_working_folder_and_is_checked(tmp_path, monkeypatch):
    """`cd THEIRS; PATH=:/usr/bin:/bin storagelab lab fio ...` (THEIRS the user's folder, their `fio` in it) -> rc 0
    and "their fio ran as uid 0": an empty entry of PATH is the working folder (execvp, shutil.which), and the check
    skipped it. PYTHONPATH's and LD_LIBRARY_PATH's empty entries are the working folder too; PATH set but empty is."""
    theirs = their_folder(tmp_path)
    monkeypatch.chdir(theirs)
    for var, value in (
        ("PATH", ":/usr/bin:/bin"),
        ("PATH", "/usr/bin:"),
        ("PATH", "/usr/bin::/bin"),
        ("PATH", ""),
        ("PYTHONPATH", ":/usr/lib"),
        ("LD_LIBRARY_PATH", "/usr/lib:"),
    ):
        said = ownership.environment_refusal({var: value})
        assert said is not None and said.startswith(f"the environment's {var} (.): {theirs} is another user's"), value
    assert ownership.environment_refusal({"PATH": "/usr/bin:/bin", "PYTHONPATH": "", "LD_LIBRARY_PATH": ""}) is None


@_ROOT_ONLY
def test_a_relative_entry_is_checked_from_the_folder_the_kernels_run_in_too(tmp_path, monkeypatch):
    """`cd /root/h17h3/a/b/c/d; PYTHONPATH=/work/main/lib:../../../tmp/h17h3/pp storagelab run 09_bonnie ...` -> "kernel
    code ran as uid 0": the check saw /root/h17h3/tmp/h17h3/pp (missing, in root's folder), the kernels run in the
    notebooks folder, where the same entry is the user's /tmp/h17h3/pp with their ipykernel_launcher.py. The entry is
    now checked from both folders. PYTHONPLATLIBDIR (the standard library's folder under Python's prefix) too."""
    import sys  # noqa: PLC0415

    theirs = their_folder(tmp_path)
    kernels = tmp_path / "clone" / "notebooks"
    kernels.mkdir(parents=True)
    here = tmp_path / "r" / "a" / "b"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    monkeypatch.setattr(ownership, "_kernels_folder", lambda: str(kernels), raising=False)
    said = ownership.environment_refusal({"PYTHONPATH": "../../theirs"})
    assert said is not None and said.startswith(
        f"the environment's PYTHONPATH ({kernels}/../../theirs): {theirs} is another user's"
    )
    up = os.path.relpath(theirs, sys.base_prefix)
    said = ownership.environment_refusal({"PYTHONPLATLIBDIR": up})
    assert said is not None and f": {theirs} is another user's" in said
    assert ownership.environment_refusal({"PYTHONPATH": "../../r", "PYTHONPLATLIBDIR": "lib"}) is None


@_ROOT_ONLY
def test_font_iconv_locale_and_loader_output_paths_of_another_user_are_refused(tmp_path):
    """Reliability-16 Low, left: FONTCONFIG_FILE/FONTCONFIG_PATH naming the user's folder (their configuration's
    <include>s and fonts read as root). The same for glibc's GCONV_PATH (iconv's shared objects), LOCPATH, and the
    loader's LD_DEBUG_OUTPUT/LD_PROFILE_OUTPUT (files written by name there)."""
    theirs = their_folder(tmp_path)
    for var, value in (
        ("FONTCONFIG_FILE", f"{theirs}/fonts.conf"),
        ("FONTCONFIG_PATH", str(theirs)),
        ("FONTCONFIG_SYSROOT", str(theirs)),
        ("GCONV_PATH", str(theirs)),
        ("LOCPATH", str(theirs)),
        ("LD_DEBUG_OUTPUT", f"{theirs}/debug"),
        ("LD_PROFILE_OUTPUT", str(theirs)),
    ):
        said = ownership.environment_refusal({var: value})
        assert said is not None and said.startswith(f"the environment's {var} ({theirs}): {theirs} is another user's")
    assert ownership.environment_refusal({"FONTCONFIG_FILE": "/etc/fonts/fonts.conf", "GCONV_PATH": "/usr/lib"}) is None


@_ROOT_ONLY
def test_a_dataset_listing_a_part_outside_its_folder_is_not_read_nor_copied(shared_tmp, monkeypatch):  # noqa: F811
    """The second user's dataset (/tmp/h17h3u/a/ds) whose meta.json lists the part `../h17h3zz/../../root/h17h3v/
    planted`: root's `open_db` of it (a notebook's db_path, `compare --db`) copied it into its private folder
    /tmp/storagelab-read-*/, and the same name led to their file on the read (from the dataset, one level deeper)
    and to /root/h17h3v/planted on the write: a new file of root's with their bytes ("written by storagelab-rel5, as
    root"), where they chose (/etc/cron.d/x as well). Now such a meta.json is refused in one line."""
    import tempfile  # noqa: PLC0415

    from storagelab import dataset  # noqa: PLC0415
    from storagelab.analysis.db import open_db  # noqa: PLC0415
    from storagelab.database import schema_signature  # noqa: PLC0415
    from storagelab.errors import StoreError  # noqa: PLC0415

    tmp = shared_tmp / "t"  # the temporary folder, as /tmp: sticky, every user may add names
    tmp.mkdir(mode=0o1777)
    tmp.chmod(0o1777)
    victim = shared_tmp / "victim"
    victim.mkdir(mode=0o755)
    theirs = shared_tmp / "u"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 1002, 1002)
    rel = "../zz/../../victim/planted"
    body = b"written by storagelab-rel5, as root\n"
    meta = {"format": dataset.FORMAT, "parts": {"files": {rel: len(body)}}, "tables": {}}
    meta["schema_signature"] = schema_signature()
    _user(
        "sh",
        "-c",
        f"mkdir -p {theirs}/a/ds/_storagelab {theirs}/a/zz {theirs}/victim {tmp}/zz && "
        f"printf '%s' '{__import__('json').dumps(meta)}' > {theirs}/a/ds/_storagelab/meta.json && "
        f"printf 'written by storagelab-rel5, as root\\n' > {theirs}/victim/planted",
    )
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    try:
        open_db(theirs / "a" / "ds").close()
        said = ""
    except StoreError as e:
        said = str(e)
    assert list(victim.iterdir()) == []  # main: [.../victim/planted], root's, with their bytes
    assert said == (
        f"{theirs}/a/ds: its _storagelab/meta.json lists a part file outside the dataset's folder ('{rel}'): not read"
    )
