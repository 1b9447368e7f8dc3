"""The source numbers an answer cites, for RunCompleted's ``citedSources``."""

from __future__ import annotations

import re

from toolhistory.limits import MAX_INDEX

_CITATION = re.compile(r"\[source(\d+)\]")


def cited_sources_from(answer_text: str) -> list[int]:
    """The source numbers an answer cites, for `complete(cited_sources=...)`: every `[sourceN]` in the text (also side
    by side, as in `[source1][source2]`), sorted, once each. Other spellings (`[Source 1]`, `[source-1]`) are not
    read: a number misread would drop a source the answer needs; a number missed only keeps one it does not."""
    numbers = {int(digits) for digits in _CITATION.findall(answer_text)}
    return sorted(n for n in numbers if n <= MAX_INDEX)
