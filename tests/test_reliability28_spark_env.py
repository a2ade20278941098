"""Reliability-28 (h44, the dataset, Spark, the environment, the ignore language): the ignore language's backslash
before a '/' and at a pattern's end, as git 2.39 reads them (found by a random comparison with git's `ls-files -i`)."""

from storagelab.ignore import IgnoreList

FILES = ["a/b", "a\\/b", "foo/z", "x/y", "sp\\"]  # "a\\/b": the file b in the folder named `a\`
# what git 2.39's `ls-files -o -i --exclude-standard` ignores with each line as the .gitignore (docs/
# reliability-28-spark-env.md); storagelab before: [] for the first three and the last, and ["sp\\"] for `*\` and `sp\`
CASES = {
    "a\\/b": ["a/b"],  # an escaped '/' is a '/'
    "/a\\/b": ["a/b"],
    "a\\/*": ["a/b"],
    "**\\/b": ["a/b", "a\\/b"],
    "a\\\\/b": ["a\\/b"],  # an escaped backslash, then a folder's '/'
    "*\\": [],  # a lone backslash at the end matches nothing
    "sp\\": [],
    "foo\\/": [],
    "sp\\\\": ["sp\\"],
}


def test_a_backslash_before_a_slash_or_at_the_end_is_read_as_git_reads_it():
    assert {p: sorted(f for f in FILES if IgnoreList([p]).ignored(f)) for p in CASES} == CASES


def test_a_browser_variable_of_blanks_is_no_traceback():
    """BROWSER=' ' (or a tab, ' :', 'x: ') ended every command in an IndexError (reliability-28 spark-env, Medium 1):
    an entry of blanks names no program, and no folder to check."""
    from storagelab.ownership import environment_refusal

    for value in (" ", "\t", " :", "x: "):
        assert environment_refusal({"BROWSER": value, "PATH": "/usr/bin"}) is None
