"""storagelab: storage benchmark logs (fio, bonnie++, zdb, ...) into DuckDB, with provenance."""

__version__ = "0.1.0"
