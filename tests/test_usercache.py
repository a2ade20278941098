"""The per-user cache of the Vega bundle (usercache.py): every process that rendered a page with a chart made the same
0.9 MB bundle again in vl-convert's JavaScript engine, about 3 s of CPU each (its biggest single cost in `run`,
found by sampling a whole test run). A cached copy is used only when it is whole and nobody else could have written
it; in every other case the bundle is made again, and the page gets the same script either way."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from storagelab import rendering, usercache

OTHER_UID = 1002  # any uid but ours: root can chown to it whether or not the user exists


def _entry(text: str) -> bytes:
    body = text.encode()
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def _never() -> str:
    raise AssertionError("made again, though a whole private copy was cached")


def test_the_cached_bundle_is_vl_converts_own(cache_home):
    import vl_convert as vlc

    made = rendering.vega_bundle.__wrapped__()  # past the per-process cache: through the file cache
    name = f"vega-bundle-{vlc.__version__}.js"
    kept = cache_home / "storagelab" / name
    assert made == vlc.javascript_bundle()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert usercache.cached_text(name, _never) == made  # read back, not made
    assert [p.name for p in kept.parent.iterdir()] == [name]  # no temporary file left


def _foreign_owner(p):
    p.write_bytes(_entry("theirs"))
    os.chown(p, OTHER_UID, OTHER_UID)


def _group_writable(p):
    p.write_bytes(_entry("theirs"))
    p.chmod(0o664)


def _symlink(p):
    (p.parent / "elsewhere").write_bytes(_entry("theirs"))
    p.symlink_to(p.parent / "elsewhere")


def _cut_short(p):
    p.write_bytes(_entry("theirs" * 100)[:-7])


def _fifo(p):
    os.mkfifo(p)  # a read would wait for a writer for ever


@pytest.mark.parametrize("spoil", [_foreign_owner, _group_writable, _symlink, _cut_short, _fifo])
def test_a_cache_file_that_is_not_whole_or_not_ours_alone_is_made_again(cache_home, spoil):
    folder = cache_home / "storagelab"
    folder.mkdir(parents=True, mode=0o700)
    spoil(folder / "x.js")
    assert usercache.cached_text("x.js", lambda: "ours") == "ours"
    assert (folder / "x.js").read_bytes() == _entry("ours")  # replaced by a whole copy of ours
    assert usercache.cached_text("x.js", _never) == "ours"


@pytest.mark.parametrize("whose", ["every user can write it", "another user's"])
def test_a_cache_folder_others_can_change_is_not_used(tmp_path, monkeypatch, whose):
    home = tmp_path / "cache"
    (home / "storagelab").mkdir(parents=True)
    (home / "storagelab" / "x.js").write_bytes(_entry("theirs"))
    if whose == "another user's":
        os.chown(home / "storagelab", OTHER_UID, OTHER_UID)
    else:
        (home / "storagelab").chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    assert usercache.folder() is None
    assert usercache.cached_text("x.js", lambda: "ours") == "ours"
    assert (home / "storagelab" / "x.js").read_bytes() == _entry("theirs")  # nothing written there


def test_no_home_and_no_cache_folder_still_gives_the_text(monkeypatch, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # a file where the folder would be
    assert usercache.folder() is None
    assert usercache.cached_text("x.js", lambda: "ours") == "ours"


@pytest.mark.parametrize("env", [{"XDG_CACHE_HOME": "", "HOME": ""}, {"XDG_CACHE_HOME": "rel", "HOME": "."}])
def test_a_relative_or_empty_home_gives_no_cache(monkeypatch, tmp_path, env):
    """Not the working folder's .cache (another user's, when root runs in their folder), nor /.cache."""
    monkeypatch.chdir(tmp_path)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert usercache.folder() is None
    assert usercache.cached_text("x.js", lambda: "ours") == "ours"
    assert list(tmp_path.iterdir()) == []
