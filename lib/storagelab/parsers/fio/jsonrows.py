"""The row lists one fio JSON document fills, in the column order of their schema (fio/schema.py)."""

from __future__ import annotations

from ..base import Parsed
from .schema import TABLES

# The tables this module fills hold tuples (base.Tuples) in the column order of their schema (fio/schema.py):
# the row builders below append values in that order.
JOB_COLUMNS = TABLES["fio_jobs"].row_columns
RESULT_COLUMNS = TABLES["fio_results"].row_columns
PERCENTILE_COLUMNS = TABLES["fio_percentiles"].row_columns
BIN_COLUMNS = TABLES["fio_latency_bins"].row_columns
BUCKET_COLUMNS = TABLES["fio_latency_buckets"].row_columns
IODEPTH_COLUMNS = TABLES["fio_iodepths"].row_columns


class Out:
    """The row lists of one document's tables (Tuples), fetched once."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.jobs = parsed.tuples("fio_jobs", JOB_COLUMNS)
        self.results = parsed.tuples("fio_results", RESULT_COLUMNS)
        self.percentiles = parsed.tuples("fio_percentiles", PERCENTILE_COLUMNS)
        self.buckets = parsed.tuples("fio_latency_buckets", BUCKET_COLUMNS)
        self.iodepths = parsed.tuples("fio_iodepths", IODEPTH_COLUMNS)
        self._bins: list[tuple] | None = None
        self.unknown_latency: set[str] = set()

    @property
    def bins(self) -> list[tuple]:
        if self._bins is None:
            self._bins = self.parsed.tuples("fio_latency_bins", BIN_COLUMNS)
        return self._bins
