"""The seventh reliability campaign, processes side (docs/reliability-7-processes.md): each test repeats an attack
that broke, as the attack did it (a real second user, a real signal, real concurrency)."""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys

import pytest
from test_reliability5_processes import _as_user, _env
from test_reliability6_processes import USER, shared_tmp  # noqa: F401  (the fixture: a /tmp folder the user can enter)


@pytest.mark.e2e
def test_run_refuses_an_output_folder_another_user_can_plant_symlinks_in(shared_tmp):  # noqa: F811
    """Attack: a second, unprivileged user makes `/tmp/.../rep/executed/` and plants `07_explore.ipynb -> a
    root-only file` in it; `run 07_explore --output /tmp/.../rep`, run as root, wrote the executed notebook through
    the symlink (the 0600 file held 132 kB of notebook JSON, exit 0). Now a folder another user owns, a folder every
    user can write (1777), and a folder of ours holding a folder of theirs are refused in one line before any
    notebook runs, and the root file is untouched."""
    victim = shared_tmp / "victim"
    victim.write_text("root secret\n")
    victim.chmod(0o600)
    shared, ours = shared_tmp / "shared", shared_tmp / "ours"
    theirs = shared / "rep"  # made by the user in the shared folder before root's run
    shared.mkdir(mode=0o1777)
    shared.chmod(0o1777)
    ours.mkdir(mode=0o755)
    ours.chmod(0o777)  # the user makes their folder inside ours, then ours is closed again
    plant = f"mkdir -p {shlex.quote(str(theirs / 'executed'))} {shlex.quote(str(ours / 'executed'))}"
    for folder in (theirs, shared, ours):
        plant += f" && ln -s {shlex.quote(str(victim))} {shlex.quote(str(folder / 'executed' / '07_explore.ipynb'))}"
    subprocess.run(["/bin/sh", "-c", f"mkdir -p {shlex.quote(str(shared / 'executed'))} && {plant}"], check=True,
                   preexec_fn=_as_user(USER))  # fmt: skip
    ours.chmod(0o755)
    for out, where, why in (
        (theirs, theirs, "is another user's (mode drwxr-xr-x)"),
        (shared, shared, "can be written by every user (mode drwxrwxrwt)"),
        (ours, ours / "executed", "is another user's (mode drwxr-xr-x)"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "storagelab", "run", "07_explore", "--output", str(out)],
            capture_output=True, text=True, env=_env(),
        )  # fmt: skip
        assert (r.returncode, r.stdout, r.stderr) == (
            2,
            "",
            f"storagelab run: --output {where} {why}: another user could put a symlink there under a name the run "
            "writes (executed/<notebook>.ipynb, <notebook>.html), and have it overwrite any file you can write; give "
            "a folder of your own (e.g. a new folder under it)\n",
        )
    assert hashlib.sha256(victim.read_bytes()).hexdigest() == hashlib.sha256(b"root secret\n").hexdigest()
