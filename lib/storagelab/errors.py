"""The project's exception types. Library code raises these, never sys.exit."""

from __future__ import annotations


class StoragelabError(Exception):
    """Base class of every error storagelab raises on purpose."""


class ParseError(StoragelabError, ValueError):
    """A file could not be parsed.

    kind is one of: empty, binary, encoding, unknown-format, truncated, invalid,
    unsupported-version, compression (a corrupt stream or zstandard missing), too-large
    (a compressed log past the decompression limit). line is 1-based (None when the problem is the file as a whole).
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        expected: str | None = None,
        kind: str = "invalid",
        path: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.line = line
        self.expected = expected
        self.kind = kind
        self.path = path

    def with_path(self, path: str) -> ParseError:
        self.path = str(path)
        return self

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: {self.kind}: {self.message}"
        if self.expected:
            text += f" (expected {self.expected})"
        return text


class ManifestError(StoragelabError):
    """The manifest (data/raw/manifest.csv) is malformed or points outside data/raw/."""


class DatabaseBusyError(StoragelabError):
    """Another process holds the database."""


class ParameterError(StoragelabError):
    """A notebook parameter is unknown or has the wrong type."""


class StoreError(StoragelabError):
    """The database cannot be opened or written: corrupt or not a DuckDB file, a folder, read-only,
    disk full. The message is one line and says what to do."""
