from conftest import ROOT

from storagelab import schema
from storagelab.parsers import modules

UNIT_SUFFIXES = ("_bytes", "_bytes_per_s", "_ns", "_pct")
FORBIDDEN = ("_kib", "_mib", "_gib", "_kb", "_mb", "_gb", "_us", "_usec", "_ms", "_msec", "_sec", "_kbps", "_mbps")


def test_docs_schema_md_is_up_to_date():
    assert (ROOT / "docs" / "schema.md").read_text().strip() == schema.markdown().strip(), (
        "docs/schema.md is stale: run ./run schema"
    )


def test_one_unit_per_quantity_in_column_names():
    for name, tab in schema.all_tables().items():
        for c in tab.columns:
            assert not c.name.endswith(FORBIDDEN), f"{name}.{c.name}: store base units only"
            assert c.doc, f"{name}.{c.name} has no documentation"


def test_every_tool_table_has_file_id_first():
    for name, (_tool, tab) in schema.tool_tables().items():
        assert tab.columns[0].name == "file_id", name


def test_every_parser_declares_the_contract():
    for mod in modules():
        assert isinstance(mod.TOOL, str) and mod.TOOL
        assert callable(mod.sniff) and callable(mod.parse)
        assert mod.TABLES, f"{mod.__name__} declares no tables"
