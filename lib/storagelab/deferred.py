"""Imports deferred until used: a dependency of a dependency that is slow to import and that storagelab never calls.

jsonschema (imported by papermill, nbformat and altair: every notebook run, every kernel, every render) imports
``rfc3987_syntax`` for its optional "iri" format checks, and that module compiles an Earley grammar as it is
imported: 0.8 s of CPU in each of those processes, for a check nothing here makes. Until something calls it, a
stand-in module holds its place; the first call (or any other attribute) imports the real module and hands over.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

SLOW = "rfc3987_syntax"


def _real() -> types.ModuleType:
    """The real module, imported now in place of the stand-in."""
    if isinstance(sys.modules.get(SLOW), _StandIn):
        del sys.modules[SLOW]
    return importlib.import_module(SLOW)


class _StandIn(types.ModuleType):
    def __getattr__(self, name: str):
        return getattr(_real(), name)


def is_valid_syntax(term: str, value: str) -> bool:
    """rfc3987_syntax.is_valid_syntax (the name jsonschema imports), from the real module."""
    return _real().is_valid_syntax(term, value)


def defer_slow_imports() -> None:
    """Put the stand-in in place, unless the module is missing or already imported."""
    if SLOW in sys.modules:
        return
    spec = importlib.util.find_spec(SLOW)
    if spec is None:
        return
    stand_in = _StandIn(SLOW, "stand-in until first use (storagelab.deferred)")
    stand_in.__path__ = list(spec.submodule_search_locations or [])  # its submodules import as usual
    stand_in.__file__ = spec.origin  # read by what walks sys.modules (Hypothesis's pytest plugin): no hand-over
    stand_in.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    sys.modules[SLOW] = stand_in
