"""transcribed parser: being written (placeholder so the registry imports)."""

TOOL = "transcribed"
TABLES: dict = {}


def sniff(text: str):
    return None


def parse(text: str, fmt=None):
    raise NotImplementedError
