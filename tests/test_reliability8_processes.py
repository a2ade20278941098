"""The eighth reliability campaign, processes side (docs/reliability-8-processes.md): each test repeats an attack
that broke, as the attack did it (a real second user, a real signal, real concurrency)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_processes import FIXTURES, project  # noqa: F401  (the fixture: a project of two notebooks and one fio log)
from test_reliability5_processes import _as_user, _env
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)

from storagelab.errors import StoragelabError

_TURN = """set -e
mkdir -p "$1/rep/executed"; ln -s "$4" "$1/rep/executed/07_explore.ipynb"; ln -s "$4" "$1/rep/07_explore.html"
ln -s "$3" "$2"
for i in $(seq 1 6000); do
  if [ -d "$3/rep" ]; then sleep 0.3; ln -s "$1" "$2.new"; mv -T "$2.new" "$2"; exit 0; fi
  sleep 0.01
done"""


@pytest.mark.e2e
def test_run_output_through_another_users_symlink_is_refused(project, shared_tmp, tmp_path):  # noqa: F811
    """Attack: the second user's symlink /tmp/.../link points at a folder of root's; root's `run 07_explore --output
    link/rep` made rep there and checked it (root's, in root's folders: fine); the user, watching, turned the link to
    a folder of theirs whose rep/ held `executed/07_explore.ipynb -> a root-only file`, and the run, which went on
    writing through the path it was given, wrote the executed notebook into that file (132 kB of notebook JSON, exit
    0). b886612 made the run write only to the folder it checked (the path resolved once); since h10-paths a symlink
    of another user's anywhere on the way is refused before anything is made (docs/write-paths.md). The ingest
    before it takes most of the 6 s."""
    victim = shared_tmp / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    ours, theirs = shared_tmp / "ours", shared_tmp / "theirs"
    ours.mkdir(mode=0o755)
    theirs.mkdir()
    subprocess.run(["chown", USER, str(theirs)], check=True)
    link = theirs / "link"
    env = dict(_env(), STORAGELAB_ROOT=str(project))
    cmd = [sys.executable, "-m", "storagelab"]
    subprocess.run([*cmd, "ingest", "--quiet"], check=True, capture_output=True, env=env, cwd=tmp_path)
    turn = subprocess.Popen(["/bin/sh", "-c", _TURN, "turn", str(theirs / "own"), str(link), str(ours), str(victim)],
                            preexec_fn=_as_user(USER))  # fmt: skip
    try:
        r = subprocess.run([*cmd, "run", "07_explore", "--output", str(link / "rep")], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=240)  # fmt: skip
    finally:
        turn.terminate()
        turn.wait(10)
    assert victim.read_text() == "root secret\n"  # before b886612: the executed notebook's JSON
    assert (r.returncode, r.stdout) == (2, "")  # since h10-paths: any symlink of another user's on the way is refused
    assert r.stderr == (
        f"storagelab run: --output {link / 'rep'}: {link} is a symlink of another user's ({USER}), who could turn it "
        "once it is checked: give a folder of your own\n"
    )
    assert not (ours / "rep").exists()


_HOLD = """import fcntl, os, sys, time
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
except PermissionError:
    print("cannot open", flush=True)
    sys.exit()
fcntl.flock(fd, fcntl.LOCK_EX)
print("holding", flush=True)
time.sleep(60)"""


def _hold(lock):
    """The second user's process holding an flock on ``lock``, once it says so (or that it cannot open it)."""
    hold = subprocess.Popen(["/usr/bin/python3", "-c", _HOLD, str(lock)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=_as_user(USER))  # fmt: skip
    return hold, hold.stdout.readline().strip()


@pytest.mark.e2e
def test_another_user_cannot_hold_the_report_tree_from_root(shared_tmp):  # noqa: F811
    """Attack: the report tree's lock file was 0644, and flock needs only a file open for reading: the second user
    opened reports/.storagelab.lock and held it; root's `report` then waited for ever ("waiting for another
    storagelab command (pid ) to finish writing ..."), `build --wait 3` gave up after 3 s. Now the lock file is
    root's alone (0600, under a new name: the old one may be held open already): with the user holding the old one,
    root's `report` ends at once, and the user cannot open the new one. Two CLI starts (about 2 s idle)."""
    root = shared_tmp / "project"
    reports = root / "reports"
    reports.mkdir(parents=True)
    (reports / ".storagelab.lock").write_text("")  # as the old code left it
    (reports / ".storagelab.lock").chmod(0o644)
    env = dict(_env(), STORAGELAB_ROOT=str(root))
    cmd = [sys.executable, "-m", "storagelab", "report"]
    hold, said = _hold(reports / ".storagelab.lock")
    try:
        assert said == "holding"
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=shared_tmp, timeout=30)
    finally:
        hold.kill()
        hold.wait()
    assert (r.returncode, r.stderr) == (0, "")  # without the fix: still waiting after 30 s (TimeoutExpired)
    assert oct((reports / ".storagelab-writer.lock").stat().st_mode & 0o777) == "0o600"
    hold, said = _hold(reports / ".storagelab-writer.lock")
    hold.wait()
    assert said == "cannot open"


def test_a_lock_file_that_is_no_regular_file_is_named_in_one_line(tmp_path):
    """Attack: a FIFO where the report tree's lock file goes: `report` said "[Errno 22] Invalid argument" (the pid's
    write), naming nothing. Now the file is named and what to do."""
    from storagelab import reportlock  # noqa: PLC0415

    os.mkfifo(tmp_path / reportlock.LOCK, 0o644)
    (tmp_path / reportlock.LOCK).chmod(0o644)  # whatever the umask
    with pytest.raises(StoragelabError) as e, reportlock.writing(tmp_path):
        pass
    assert str(e.value) == f"{tmp_path / reportlock.LOCK} is not a regular file (prw-r--r--): remove it"


_PLANT = """end=$(( $(date +%s) + 60 ))
while [ $(date +%s) -lt $end ]; do
  for pid in $(pgrep -u 0 -f "$1"); do ln -s "$2" "$3/.$4.$pid.tmp" 2>/dev/null; done
  sleep 0.01
done"""


@pytest.mark.e2e
def test_a_parquet_or_dataset_folder_another_user_made_is_refused(shared_tmp, tmp_path):  # noqa: F811
    """Attack: root's `ingest --db /tmp/x.duckdb` writes the Parquet copy into /tmp/x-parquet, a name known in
    advance; the second user made that folder first and, watching for root's ingest, put
    `.parquet-stamp.json.<its pid>.tmp -> a root-only file` in it: the ingest wrote its stamp JSON into that file
    (1359 bytes, exit 0). `export --dataset DIR` into a folder the user made did the same with
    `_storagelab/.meta.json.<pid>.tmp` (37 kB of meta.json). Now both folders are refused in one line (the database
    itself is complete), with the user's planting loop running, and the root file is untouched. Three CLI starts on
    one fio log (about 4 s idle)."""
    victim = shared_tmp / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    sticky = shared_tmp / "tmp"  # as /tmp: every user may make a folder there
    sticky.mkdir()
    sticky.chmod(0o1777)
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "seq-write.txt").write_bytes((FIXTURES / "fio" / "3.33" / "seq_write_group.txt").read_bytes())
    db, parquet, ds = sticky / "x.duckdb", sticky / "x-parquet", sticky / "ds"
    # root's own link: a database in /tmp itself is refused since reliability-9 (DuckDB's <db>.wal beside it)
    (shared_tmp / "ours").mkdir()
    db.symlink_to(shared_tmp / "ours" / "x.duckdb")
    cmd = [sys.executable, "-m", "storagelab"]
    for folder, name, pattern in ((parquet, "parquet-stamp.json", f"ingest.*{db}"),
                                  (ds / "_storagelab", "meta.json", f"export.*{ds}")):  # fmt: skip
        subprocess.run(["mkdir", "-p", str(folder)], check=True, preexec_fn=_as_user(USER))
        plant = subprocess.Popen(["/bin/sh", "-c", _PLANT, "plant", pattern, str(victim), str(folder), name],
                                 preexec_fn=_as_user(USER))  # fmt: skip
        try:
            if name == "meta.json":
                r = subprocess.run([*cmd, "export", "--db", str(db), "--dataset", str(ds)], capture_output=True,
                                   text=True, env=_env(), timeout=120)  # fmt: skip
                why = (f"storagelab export: --dataset {ds} is another user's (mode drwxr-xr-x): another user could "
                       "put a symlink there under a name the export writes (.<part>.<pid>.tmp, "
                       "_storagelab/.meta.json.<pid>.tmp), and have it overwrite any file you can write; give a folder "
                       "of your own (e.g. a new folder under it)\n")  # fmt: skip
                assert (r.returncode, r.stderr) == (2, why)
            else:
                r = subprocess.run([*cmd, "ingest", str(raw), "--db", str(db), "--quiet"], capture_output=True,
                                   text=True, env=_env(), timeout=120)  # fmt: skip
                assert r.returncode == 1
                assert r.stderr.splitlines()[1:] == [
                    f"error: Parquet export refused: {parquet} is another user's (mode drwxr-xr-x): another user "
                    "could put a symlink there under a name the export writes (.<table>.parquet.<pid>.tmp, "
                    ".parquet-stamp.json.<pid>.tmp), and have it overwrite any file you can write; remove the folder, "
                    "give a database in a folder of your own, or use --no-parquet (the database is complete)",
                    "note: database schema (re)created",
                ]  # after the manifest's warning
        finally:
            plant.kill()
            plant.wait()
        assert victim.read_text() == "root secret\n"  # without the fix: the stamp's, then meta.json's JSON


@pytest.mark.e2e
def test_the_lab_says_when_its_ingest_refused_the_parquet_folder(shared_tmp, tmp_path, capsys):  # noqa: F811
    """Attack: `lab fio --db /tmp/x.duckdb` with /tmp/x-parquet made first by the second user: the ingest refused
    that folder (above), and the lab said only "ingest: ingested 7 ...", exit 0. Now it says the refusal, exit 1."""
    from storagelab.lab.fio import _ingest  # noqa: PLC0415

    sticky = shared_tmp / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    subprocess.run(["mkdir", str(sticky / "x-parquet")], check=True, preexec_fn=_as_user(USER))
    (shared_tmp / "ours").mkdir()
    (sticky / "x.duckdb").symlink_to(shared_tmp / "ours" / "x.duckdb")  # root's link (reliability-9: not the file)
    log = tmp_path / "seq-write.txt"
    log.write_bytes((FIXTURES / "fio" / "3.33" / "seq_write_group.txt").read_bytes())
    (tmp_path / "manifest.csv").write_text("path,label\nseq-write.txt,mine\n")
    assert _ingest([log], sticky / "x.duckdb", tmp_path / "manifest.csv") == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith(f"error: Parquet export refused: {sticky / 'x-parquet'} is another user's")
