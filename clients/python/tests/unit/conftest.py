"""Every unit test starts with no consistency token remembered, whatever the tests before it published."""

from __future__ import annotations

import pytest

from toolhistory import consistency


@pytest.fixture(autouse=True)
def fresh_consistency_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(consistency, "_REGISTRY", consistency._TokenRegistry(consistency.MAX_REMEMBERED_CONVERSATIONS))
