"""storagelab.deferred: rfc3987_syntax (0.8 s of CPU to import, through jsonschema) is imported only when used,
and jsonschema's "iri" format checks answer as they do with the real module imported first."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

CHECKS = (
    "from jsonschema import FormatChecker\n"
    "fc = FormatChecker()\n"
    "print([fc.conforms(v, f) for v, f in [('http://example.org/a b', 'iri'), ('http://example.org/\\u00e4', 'iri'),"
    " ('\\u00e4/x', 'iri-reference'), ('http://[::1', 'iri-reference')]])\n"
)


def _python(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "lib"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_papermill_and_altair_leave_the_grammar_unbuilt_until_an_iri_is_checked():
    out = _python(
        "import sys, storagelab, papermill, altair\n"
        "print('rfc3987_syntax.syntax_helpers' in sys.modules)\n"
        + CHECKS
        + "print('rfc3987_syntax.syntax_helpers' in sys.modules, type(sys.modules['rfc3987_syntax']).__name__)\n"
    )
    assert out.splitlines() == ["False", "[False, True, True, False]", "True module"]


def test_the_checks_answer_as_with_the_real_module():
    assert _python("import rfc3987_syntax\n" + CHECKS) == _python("import storagelab\n" + CHECKS)


def test_the_stand_in_hands_over_any_other_name_and_its_submodules():
    # __file__ is the stand-in's own: Hypothesis's pytest plugin reads it from every module in sys.modules, and a
    # hand-over then compiled the grammar in every pytest process
    out = _python(
        "import sys, storagelab, rfc3987_syntax\n"
        "print(rfc3987_syntax.__file__.endswith('/rfc3987_syntax/__init__.py'),"
        " 'rfc3987_syntax.syntax_helpers' in sys.modules)\n"
        "from rfc3987_syntax.utils import load_grammar\n"
        "print(rfc3987_syntax.RFC3987_SYNTAX_PARSER_TYPE, callable(load_grammar))\n"
    )
    assert out.splitlines() == ["True False", "earley True"]
