"""Reliability-25, Spark and the environment: reliability-24's structural fix (Spark's start folder) and the paths
storagelab hands to other programs, attacked again (issue 26)."""

import errno
import os
import shutil
import stat
import subprocess
import tempfile

from storagelab import sparkjvm


def _climbs(start: str, depth: int) -> list[tuple[int, str, int, int]]:
    """(k, the folder "../" k times from ``start`` reaches, its owner, its mode) for k = 1 .. depth + 2."""
    out = []
    for k in range(1, depth + 3):
        reached = os.path.realpath(os.path.join(start, *[".."] * k))
        st = os.lstat(reached)
        out.append((k, reached, st.st_uid, stat.S_IMODE(st.st_mode)))
    return out


def test_spark_start_folder_on_a_read_only_root_is_still_shut_to_other_users(tmp_path, monkeypatch):
    """With "/" read-only (a container's read-only root file system) root's Spark started in /tmp/storagelab-spark-X
    again, and reliability-24's highs came back: root's own `JDK_JAVA_OPTIONS=@/root/opts` holding
    `-Dlog4j2.configurationFile=../l.properties` read the second user's /tmp/l.properties, whose appender wrote 44 lines
    into a 0600 file of root's (rc 0). Now the chain is made under another folder whose every folder up to "/" only
    this user or root can write (/run, the home): every climb from Spark's start folder reaches such a folder."""
    made = tempfile.mkdtemp

    def mkdtemp(*args, dir=None, **kwargs):  # "/" read-only; mkdir(2) on it says EROFS
        if dir == "/":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/")
        return made(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    start, top = sparkjvm.start_folder({}, "/tmp/storagelab-spark-")
    try:
        assert top is not None and start.startswith(top), start  # on the old code: ('/tmp/storagelab-spark-', None)
        depth = len(str(here).strip("/").split("/"))
        for k, reached, owner, mode in _climbs(start, depth):
            assert owner in (0, os.geteuid()) and not mode & 0o022, (k, reached, oct(mode))
            if k <= depth:  # the chain's own folders, the last its top
                assert reached.startswith(top) and mode == 0o700, (k, reached)
    finally:
        if top:
            shutil.rmtree(top)


def test_spark_start_folder_is_as_deep_as_a_working_folder_deeper_than_path_max(tmp_path, monkeypatch):
    """The kernel gives no name for a working folder longer than PATH_MAX (readlink: ENAMETOOLONG); its depth was
    taken as 256, whatever it was. Now the climbs to "/" are counted."""
    monkeypatch.chdir(tmp_path)
    for _ in range(22):  # 22 x 201 characters: over 4096
        os.mkdir("x" * 200)
        os.chdir("x" * 200)
    depth = len(str(tmp_path).strip("/").split("/")) + 22
    start, top = sparkjvm.start_folder({}, "/tmp/storagelab-spark-")
    try:  # the chain below its top: as deep as the working folder under "/", one deeper elsewhere
        chain = [] if start == top else os.path.relpath(start, top).split("/")
        assert len(chain) == depth - (os.path.dirname(top) == "/"), len(chain)  # on the old code: 255
    finally:
        if top:
            shutil.rmtree(top)


def test_a_fio_filename_that_fio_would_cut_is_refused(tmp_path, capsys):
    """fio reads --filename up to a ';' or '#' and strips blanks at its ends: `lab fio --target T --filename 'd;x'`
    wrote fio's data into T/d, a file of the user's, and unlinked it (rc 0). Now refused in one line, before fio."""
    from storagelab.lab.cli import main  # noqa: PLC0415

    (tmp_path / "d").write_text("precious\n")
    if shutil.which("fio"):  # fio itself: "d;x" is "d" to it
        argv = ["fio", "--name=j", f"--directory={tmp_path}", "--filename=d;x", "--size=8k", "--rw=write"]
        subprocess.run([*argv, "--ioengine=psync", "--unlink=0"], capture_output=True, check=True)
        assert sorted(os.listdir(tmp_path)) == ["d"] and (tmp_path / "d").stat().st_size == 8192
    for name in ("d;x", "d#x", " d", "d ", "d\t"):
        assert main(["fio", "--target", str(tmp_path), "--filename", name, "--preset", "smoke", "--dry-run"]) == 2
        assert capsys.readouterr().err.strip() == (
            f"storagelab lab fio: --filename {name!r}: fio reads a name up to a ';' or '#' and without blanks at its "
            "ends, so it would write (and delete) another file: give a name without them"
        )  # on the old code: the dry run's plan, rc 0
    assert main(["fio", "--target", str(tmp_path), "--filename", "d x,y:z", "--preset", "smoke", "--dry-run"]) == 0


def test_a_kernels_address_is_not_taken_for_jupyterlabs(monkeypatch):
    """`storagelab lab --KernelManager.ip=127.0.0.1` (the kernels' address) was taken for the server's: JupyterLab
    kept its default "localhost", and with the second user's listener on [::1] the printed URL's token went to them
    (reliability-24's High 3). Only `--ip` and `--ServerApp.ip` name the server's address."""
    from jupyter_server.serverapp import ServerApp  # noqa: PLC0415

    from storagelab.labstart import loopback  # noqa: PLC0415

    def address(extra: list[str]) -> str:
        app = ServerApp()
        app.parse_command_line(loopback(extra))
        return app.ip

    for extra in (["--KernelManager.ip=127.0.0.1"], ["--LabApp.ip=0.0.0.0"], ["-ip=0.0.0.0"]):
        assert address(extra) == "127.0.0.1", extra  # on the old code: "localhost"
    assert address(["--ServerApp.ip", "::1"]) == "::1" and address(["--ip=0.0.0.0"]) == "0.0.0.0"


def test_an_empty_storagelab_root_is_unset_not_the_working_folder(tmp_path):
    """`cd THEIRS; STORAGELAB_ROOT= storagelab run 05_stacks` ran the second user's notebooks/05_stacks.ipynb as root:
    Path("") is ".", and the check of the environment reads an empty value as no folder. Set but blank is now unset,
    for this process and the programs it starts (the kernels)."""
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from storagelab import paths  # noqa: PLC0415

    code = (
        "from storagelab import paths; import os; "
        "print(paths.ROOT, 'STORAGELAB_ROOT' in os.environ, paths.current_report_dir(), 'IPYTHONDIR' in os.environ)"
    )
    lib = str(Path(paths.__file__).resolve().parents[1])
    env = dict(os.environ, STORAGELAB_ROOT="", STORAGELAB_REPORT_DIR=" ", IPYTHONDIR="", PYTHONPATH=lib)
    got = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    root = Path(lib).parent
    # old: "."; and IPYTHONDIR="" given to the kernels, which IPython reads as "." (reliability-26, Low)
    assert got.stdout.split() == [str(root), "False", str(root / "reports" / "_interactive"), "False"], got.stderr


def test_jupyterlab_takes_the_ipv6_loopback_on_a_host_without_127_0_0_1(monkeypatch):
    """On a host whose loopback has only ::1 (a network namespace without IPv4), `storagelab lab` stopped with
    tornado's traceback "OSError: [Errno 99] Cannot assign requested address", exit 1: it gave JupyterLab
    --ServerApp.ip=127.0.0.1. Now ::1 there (checked with `unshare -n`: http://[::1]:PORT/lab?token=..., 200)."""
    import socket  # noqa: PLC0415

    import pytest  # noqa: PLC0415

    from storagelab.labstart import loopback  # noqa: PLC0415

    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    real = socket.socket

    class NoIPv4(real):  # bind as on that host
        def bind(self, address):
            if address[0] == "127.0.0.1":
                raise OSError(errno.EADDRNOTAVAIL, os.strerror(errno.EADDRNOTAVAIL))
            return super().bind(address)

    assert loopback([]) == ["--ServerApp.ip=127.0.0.1"]
    monkeypatch.setattr(socket, "socket", NoIPv4)
    assert loopback(["--no-browser"]) == ["--no-browser", "--ServerApp.ip=::1"]  # on the old code: 127.0.0.1
