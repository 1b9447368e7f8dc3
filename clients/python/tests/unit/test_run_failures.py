"""A run its host cancelled fails ``aborted`` in every adapter that sees the cancellation; any other error keeps the
code its adapter gives it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from toolhistory._recording import ABORTED, aborted_failure
from toolhistory.events import RunFailure
from toolhistory.langchain import failure_of
from toolhistory.openai_agents import describe_run_failure
from toolhistory.pydantic_ai import run_failure_of

if TYPE_CHECKING:
    from collections.abc import Callable


def pydantic_ai_failure(error: BaseException) -> RunFailure:
    code, message = run_failure_of(error)
    return RunFailure(code=code, message=message)


ADAPTERS: dict[str, Callable[[BaseException], RunFailure]] = {
    "langchain": failure_of,
    "openai-agents": describe_run_failure,
    "pydantic-ai": pydantic_ai_failure,
}


@pytest.mark.parametrize("describe", ADAPTERS.values(), ids=ADAPTERS.keys())
@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (asyncio.CancelledError(), RunFailure(ABORTED, "the run was cancelled before it completed")),
        (asyncio.CancelledError("the client went away"), RunFailure(ABORTED, "the client went away")),
        (ValueError("bad input"), RunFailure("ValueError", "bad input")),
        (KeyboardInterrupt(), RunFailure("KeyboardInterrupt", "KeyboardInterrupt")),
    ],
)
def test_a_cancelled_run_is_aborted_in_every_adapter(
    describe: Callable[[BaseException], RunFailure], error: BaseException, expected: RunFailure
) -> None:
    assert describe(error) == expected


def test_only_a_cancellation_is_an_abort() -> None:
    assert aborted_failure(TimeoutError("slow")) is None
    assert aborted_failure(asyncio.CancelledError("x" * 5_000)) == RunFailure(ABORTED, "x" * 4_000)
