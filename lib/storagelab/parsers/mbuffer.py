"""mbuffer parser: being written (placeholder so the registry imports)."""

TOOL = "mbuffer"
TABLES: dict = {}


def sniff(text: str):
    return None


def parse(text: str, fmt=None):
    raise NotImplementedError
