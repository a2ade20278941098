"""storagelab: storage benchmark logs (fio, bonnie++, zdb, ...) into DuckDB, with provenance."""

from storagelab.deferred import defer_slow_imports

__version__ = "0.1.0"

defer_slow_imports()  # before anything imports jsonschema (papermill, nbformat, altair): 0.8 s less per process
