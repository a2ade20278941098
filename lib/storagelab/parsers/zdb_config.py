"""Pool configurations in zdb output: ``zdb -C`` (``MOS Configuration:``, ``Cached configuration:``), the same
block at the top of ``zdb POOL``, and the label configurations of ``zdb -l DEVICE``.

A part of the zdb parser (``zdb.py`` calls ``add_configs`` on every zdb output, and reads a file holding only
configurations as the format ``zdb-C``); its own module because it is one job: the nvlist dump.

Format (OpenZFS ``cmd/zdb/zdb.c: dump_config/dump_label`` -> ``lib/libnvpair: dump_nvlist``; the ztest pools of
tests/fixtures/zdb-config, 2.1 and 2.3):

* One pair a line, indented by the nesting (4 spaces a level in OpenZFS, 8 for the members of a
  ``children[N]`` array in older releases): ``key: value`` (OpenZFS, FreeBSD 9+, ZFS on Linux 0.6+) or, in
  Solaris' older zdb, ``key=value`` (read the same way, but no published output of that form was found to test
  it); strings are quoted (``'ztest'``), numbers are decimal. A nested list is a line ``key:`` (or a
  bare ``key``) followed by deeper lines; a bare word with nothing deeper is a flag
  (``com.delphix:has_per_vdev_zaps``, the names under ``features_for_read:``).
* Every configuration holds a ``vdev_tree``: the pool's ``root`` vdev with its ``children[N]`` in a pool
  configuration, the device's top-level vdev in a label. The block is the run of lines at the indent of
  ``vdev_tree`` and deeper; the line before it names it (``MOS Configuration:``, ``LABEL 0``, a pool name).
* A vdev's ``ashift`` and ``asize`` are printed on top-level vdevs only (``is_log: 1`` for log vdevs,
  ``alloc_bias`` 'special'/'dedup' in 0.8+); leaves carry ``path`` (and ``devid``, ``whole_disk`` on disks).
"""

from __future__ import annotations

import re

from .base import LINES, Parsed, ParseError, table

TABLES = {
    "zdb_config_pools": table(
        "Pool configurations in zdb output (zdb -C, the top of zdb POOL, zdb -l labels): one row per configuration.",
        ("config_no", "INTEGER", "1-based number of the configuration in the file"),
        (
            "source",
            "VARCHAR",
            "the line naming the block: 'MOS Configuration', 'Cached configuration', 'LABEL 0', a pool name",
        ),
        ("pool", "VARCHAR", "name"),
        ("pool_guid", "VARCHAR", "pool_guid (64-bit unsigned, as text)"),
        ("version", "INTEGER", "SPA version (5000 = feature flags)"),
        ("state", "INTEGER", "pool state (0 active, 1 exported, 2 destroyed ...)"),
        ("txg", "BIGINT", "transaction group of the configuration, count"),
        ("hostname", "VARCHAR", "hostname, when printed"),
        ("vdev_children", "INTEGER", "top-level vdevs, count (NULL when not printed)"),
        ("n_vdevs", "INTEGER", "vdevs of the tree stored in zdb_config_vdevs (root and leaves included), count"),
        *LINES,
    ),
    "zdb_config_vdevs": table(
        "The vdev_tree of each configuration: one row per vdev (root, mirror/raidz/draid, disk, file ...).",
        ("config_no", "INTEGER", "zdb_config_pools.config_no"),
        ("pool", "VARCHAR", "pool name of the configuration"),
        ("vdev_key", "VARCHAR", "position in the tree: '/' for vdev_tree itself, '/0' its children[0], '/0/1' ..."),
        ("parent_key", "VARCHAR", "vdev_key of the parent; NULL for vdev_tree itself"),
        ("depth", "INTEGER", "0 for vdev_tree, 1 for its children ..."),
        ("top_level", "BOOLEAN", "a top-level vdev: a child of the root, or the vdev_tree of a label"),
        ("type", "VARCHAR", "root, mirror, raidz, draid, disk, file, hole, missing, spare, replacing ..."),
        ("vdev_id", "INTEGER", "id (the child's index among its siblings)"),
        ("guid", "VARCHAR", "guid (64-bit unsigned, as text)"),
        ("path", "VARCHAR", "path of a leaf (device or file)"),
        ("ashift", "INTEGER", "ashift (sector size = 2^ashift bytes); printed on top-level vdevs"),
        ("asize_bytes", "BIGINT", "asize: allocatable size of a top-level vdev, bytes"),
        ("is_log", "BOOLEAN", "is_log: a log (SLOG) vdev; NULL when not printed"),
        ("alloc_bias", "VARCHAR", "alloc_bias of a special/dedup/log class vdev (0.8+), else NULL"),
        ("nparity", "INTEGER", "nparity of raidz/draid"),
        ("whole_disk", "BOOLEAN", "whole_disk of a disk leaf"),
        ("create_txg", "BIGINT", "create_txg, count"),
        ("metaslab_shift", "INTEGER", "metaslab_shift (metaslab size = 2^shift bytes)"),
        ("n_children", "INTEGER", "children of this vdev in the tree, count"),
        (
            "flags",
            "VARCHAR",
            "state flags printed as 1 (offline, faulted, degraded, removed, not_present), comma-separated",
        ),
        *LINES,
    ),
}

_PAIR = re.compile(r"^([^\s:=]+(?::[^\s:=]+)*?)(?:: | = |=)(.*)$")
_NEST = re.compile(r"^(\S+?):?$")
_CHILD = re.compile(r"^children\[(\d+)\]$")
_VDEV_TREE = re.compile(r"^\s*vdev_tree:?\s*$", re.MULTILINE)
_SNIFF = re.compile(r"^(MOS Configuration|Cached configuration):\s*$", re.MULTILINE)
_FLAGS = ("offline", "faulted", "degraded", "removed", "not_present")


class _Node:
    """A nested list of the dump: its pairs, flags and child lists, with the lines it spans."""

    def __init__(self, name: str, line: int, indent: int):
        self.name, self.line, self.indent, self.end = name, line, indent, line
        self.values: dict[str, str] = {}
        self.lines: dict[str, int] = {}  # the 1-based line of each value
        self.nodes: list[_Node] = []

    def get(self, key: str) -> str | None:
        return self.values.get(key)


def sniff(text: str) -> bool:
    """A zdb pool configuration: a `MOS/Cached configuration:` title, or a `vdev_tree` with pool keys."""
    head = text[:2_000_000]
    if _SNIFF.search(head):
        return True
    return bool(_VDEV_TREE.search(head)) and bool(re.search(r"^\s+(pool_guid|top_guid)[:=] ?\d+\s*$", head, re.M))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _unquote(v: str) -> str:
    v = v.strip()
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] == "'" else v


def _block(lines: list[str], k: int) -> tuple[int, int, int]:
    """(first, last, indent) of the configuration around the vdev_tree line k (0-based, inclusive)."""
    base = _indent(lines[k])
    first = k
    while first > 0 and lines[first - 1].strip() and _indent(lines[first - 1]) >= base:
        first -= 1
    last = k
    while last + 1 < len(lines) and lines[last + 1].strip() and _indent(lines[last + 1]) >= base:
        last += 1
    return first, last, base


def _tree(lines: list[str], first: int, last: int, base: int) -> _Node:
    """The nested lists of lines first..last (0-based) as a tree under a root node."""
    root = _Node("", first + 1, base - 1)
    stack = [root]
    for k in range(first, last + 1):
        s = lines[k].strip()
        ind = _indent(lines[k])
        while len(stack) > 1 and ind <= stack[-1].indent:
            stack.pop()
        parent = stack[-1]
        deeper = k < last and _indent(lines[k + 1]) > ind
        pair = _PAIR.match(s)
        if pair and not (deeper and s.endswith(":")):
            parent.values.setdefault(pair.group(1), _unquote(pair.group(2)))
            parent.lines.setdefault(pair.group(1), k + 1)
        elif deeper:
            node = _Node(s.rstrip(":"), k + 1, ind)
            parent.nodes.append(node)
            stack.append(node)
        else:
            parent.values.setdefault(s.rstrip(":"), "")  # a flag (feature name)
        for n in stack[1:]:
            n.end = k + 1
    return root


def _int(node: _Node, key: str, line: int) -> int | None:
    """The integer value of ``key``; a ParseError naming its line when it is not one."""
    v = node.get(key)
    line = node.lines.get(key, line)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ParseError(
            f"{key}: not an integer: {v!r}", line=line, expected=f"`{key}: N` in the zdb configuration"
        ) from None


def _bool(node: _Node, key: str, line: int) -> bool | None:
    v = _int(node, key, line)
    return None if v is None else v != 0


def _vdev_rows(node: _Node, pool: str | None, key: str, parent: str | None, depth: int, label: bool) -> list[dict]:
    children = [(int(m.group(1)), n) for n in node.nodes if (m := _CHILD.match(n.name))]
    line = node.line
    for n in node.nodes:  # reliability-34: `chilren[1]:` was passed over, and the vdevs under it lost, exit 0
        if not _CHILD.match(n.name):
            raise ParseError(
                f"unreadable vdev list {n.name[:40]!r} in the vdev tree", line=n.line, expected="children[N]:"
            )
    row = {
        "pool": pool,
        "vdev_key": key,
        "parent_key": parent,
        "depth": depth,
        "top_level": (depth == 1) if not label else depth == 0,
        "type": node.get("type"),
        "vdev_id": _int(node, "id", line),
        "guid": node.get("guid"),
        "path": node.get("path"),
        "ashift": _int(node, "ashift", line),
        "asize_bytes": _int(node, "asize", line),
        "is_log": _bool(node, "is_log", line),
        "alloc_bias": node.get("alloc_bias"),
        "nparity": _int(node, "nparity", line),
        "whole_disk": _bool(node, "whole_disk", line),
        "create_txg": _int(node, "create_txg", line),
        "metaslab_shift": _int(node, "metaslab_shift", line),
        "n_children": len(children),
        "flags": ",".join(f for f in _FLAGS if node.get(f) == "1") or None,
        "line_start": node.line,
        "line_end": node.end,
    }
    rows = [row]
    for idx, child in children:
        ckey = f"{key.rstrip('/')}/{idx}"
        rows += _vdev_rows(child, pool, ckey, key, depth + 1, label)
    return rows


def add_configs(lines: list[str], parsed: Parsed) -> int:
    """Add a row to zdb_config_pools (and the tree to zdb_config_vdevs) for every configuration in ``lines``
    (the zdb output's lines, progress removed); returns how many were found."""
    n = 0
    k = 0
    while k < len(lines):
        if not _VDEV_TREE.match(lines[k]):
            k += 1
            continue
        first, last, base = _block(lines, k)
        root = _tree(lines, first, last, base)
        tree = next((t for t in root.nodes if t.name == "vdev_tree"), None)
        k = last + 1
        if tree is None:
            continue
        n += 1
        title = lines[first - 1].strip().rstrip(":") if first > 0 and lines[first - 1].strip() else None
        if title and set(title) <= {"-"}:
            title = lines[first - 2].strip() if first > 1 else None
        pool = root.get("name")
        label = tree.get("type") != "root"
        vdevs = _vdev_rows(tree, pool, "/", None, 0, label)
        children, top = _int(root, "vdev_children", first + 1), sum(1 for v in vdevs if v["top_level"])
        if not label and children is not None and top < children:  # reliability-37: a tree cut at a line end
            parsed.warnings.append(  # stored its first vdevs as the pool's whole tree, exit 0
                f"line {last + 1}: the vdev tree of {pool} lists {top} of its {children} top-level vdevs (cut short?)"
            )
        parsed.add(
            "zdb_config_pools",
            {
                "config_no": n,
                "source": title,
                "pool": pool,
                "pool_guid": root.get("pool_guid"),
                "version": _int(root, "version", first + 1),
                "state": _int(root, "state", first + 1),
                "txg": _int(root, "txg", first + 1),
                "hostname": root.get("hostname"),
                "vdev_children": _int(root, "vdev_children", first + 1),
                "n_vdevs": len(vdevs),
                "line_start": first + 1,
                "line_end": last + 1,
            },
        )
        for row in vdevs:
            parsed.add("zdb_config_vdevs", {"config_no": n, **row})
    return n
