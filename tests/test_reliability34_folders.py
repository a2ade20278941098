"""reliability-34, report folders: two report folders exchanged again and again while the index is made."""

from __future__ import annotations

from test_reliability31_folders import _Page
from test_reliability32_folders import two_studies
from test_reliability33_folders import _exchange

from storagelab import rendering, report


def test_folders_exchanged_at_every_read_of_the_index_keep_each_heading_with_its_own_summaries(tmp_path, monkeypatch):
    """`report` while reports/a and reports/b were exchanged again and again (a loop of `renameat2(RENAME_EXCHANGE)`,
    0.5 ms apart): every try of the index saw a name no longer holding the folder read, and after the third the index
    was made by the names: a's summaries read by the name a, then (exchanged) b's heading by the same name, so a's
    section showed the heading BBB over a's summary (thumper-x4500's heading over homelab-mergerfs's 01_vdev_scaling
    numbers), exit 0. Here every read of the summaries is followed by an exchange. However often the folders move,
    each section is read through one handle: its heading, summaries and runs are one folder's."""
    two_studies(tmp_path)
    real = rendering._summaries

    def exchanged_after_read(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        finally:
            _exchange(tmp_path)

    monkeypatch.setattr(rendering, "_summaries", exchanged_after_read)
    monkeypatch.setattr(rendering, "_exporter", lambda: _Page())
    report.render_reports(tmp_path)
    index = (tmp_path / "index.html").read_text()
    for section in index.split("<h2 id='")[1:]:
        word = section.split("</h2>", 1)[0].rsplit(">", 1)[1]  # the heading: the folder's study
        other = {"AAA": "BBB", "BBB": "AAA"}[word]
        assert other not in section, section  # the old code: BBB's heading over AAA's summary
