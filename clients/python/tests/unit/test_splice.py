"""splice_history: where each replayed turn goes among the host's messages."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory.replay import replay_history_of
from toolhistory.splice import default_id_of, host_branch, splice_history
from toolhistory.v1 import toolhistory_pb2 as pb


@dataclass(frozen=True)
class Host:
    id: str | None
    text: str


@dataclass(frozen=True)
class Turn:
    assistant_message_id: str
    after_message_id: str | None
    messages: list[str]


def host_of(ids: list[str]) -> list[Host]:
    """Host messages by id; "-" has none."""
    return [Host(None, "-") if i == "-" else Host(i, i) for i in ids]


def turn(name: str, assistant_message_id: str, after_message_id: str | None = None) -> Turn:
    return Turn(assistant_message_id, after_message_id, [f"{name}.call", f"{name}.result"])


def texts(spliced: list[Host | str]) -> list[str]:
    return [m if isinstance(m, str) else m.text for m in spliced]


@pytest.mark.parametrize(
    ("host_ids", "turns", "expected"),
    [
        pytest.param(
            ["u1", "a1", "u2", "a2", "u3"],
            [turn("T1", "a1"), turn("T2", "a2")],
            ["u1", "T1.call", "T1.result", "a1", "u2", "T2.call", "T2.result", "a2", "u3"],
            id="a completed turn goes right before its answer",
        ),
        pytest.param(
            ["u1", "a1"],
            [turn("T1", "gone", "u1")],
            ["u1", "a1"],
            id="a completed turn whose answer the host lacks is left out",
        ),
        pytest.param(
            ["u1", "a1", "u2"],
            [turn("T1", "", "u1")],
            ["u1", "T1.call", "T1.result", "a1", "u2"],
            id="a turn without an answer goes right after the message it started from",
        ),
        pytest.param(
            ["u1", "a1"],
            [turn("T1", "", "gone")],
            ["u1", "a1", "T1.call", "T1.result"],
            id="a turn without an answer whose message the host lacks goes after the last message",
        ),
        pytest.param(
            ["u1", "a1", "u2"],
            [turn("T1", "")],
            ["u1", "a1", "u2", "T1.call", "T1.result"],
            id="a turn with neither goes after the last message",
        ),
        pytest.param(
            ["u1", "a1"], [turn("T1", "", "")], ["u1", "a1", "T1.call", "T1.result"], id="an empty after id is none"
        ),
        pytest.param(
            ["u1", "x", "a1"],
            [turn("T1", "a1", "u1")],
            ["u1", "x", "T1.call", "T1.result", "a1"],
            id="an answer wins over after_message_id",
        ),
        pytest.param(
            ["u1", "a1"],
            [turn("T1", "", "u1"), turn("T2", "a1", "u1"), turn("T3", "", "u1")],
            ["u1", "T1.call", "T1.result", "T2.call", "T2.result", "T3.call", "T3.result", "a1"],
            id="turns at the same place keep their order",
        ),
        pytest.param(
            ["u1"],
            [turn("T1", ""), turn("T2", "", "u1"), turn("T3", "", "gone")],
            ["u1", "T1.call", "T1.result", "T2.call", "T2.result", "T3.call", "T3.result"],
            id="turns after the last message keep their order",
        ),
        pytest.param(
            [],
            [turn("T1", "a1"), turn("T2", "", "u1")],
            ["T2.call", "T2.result"],
            id="with no host messages only turns without an answer remain",
        ),
        pytest.param(
            ["-", "u1", "a1", "u1", "a1"],
            [turn("T1", "a1"), turn("T2", "", "u1")],
            ["-", "u1", "T1.call", "T1.result", "T2.call", "T2.result", "a1", "u1", "a1"],
            id="ids match the first host message that has them and messages without an id match nothing",
        ),
    ],
)
def test_places_each_turn(host_ids: list[str], turns: list[Turn], expected: list[str]) -> None:
    spliced = splice_history(host_of(host_ids), turns, id_of=lambda m: m.id)
    assert texts(spliced) == expected


def test_does_not_change_its_inputs() -> None:
    host = host_of(["u1", "a1"])
    turns = [turn("T1", "a1"), turn("T2", "", "u1")]
    before = copy.deepcopy((host, turns))
    splice_history(host, turns, id_of=lambda m: m.id)
    assert (host, turns) == before


def test_takes_a_replay_history_whole() -> None:
    history = replay_history_of(
        pb.GetReplayHistoryResponse(
            turns=[
                pb.Turn(run_id="r1", assistant_message_id="a1", messages_json='["r1.call", "r1.result"]'),
                pb.Turn(run_id="r2", after_message_id="u2", messages_json='["r2.call"]'),
            ]
        ),
        "openai",
    )
    host = [{"id": "u1"}, {"id": "a1"}, {"id": "u2"}, {"id": "a2"}]
    assert splice_history(host, history, id_of=lambda m: m["id"]) == [
        {"id": "u1"},
        "r1.call",
        "r1.result",
        {"id": "a1"},
        {"id": "u2"},
        "r2.call",
        {"id": "a2"},
    ]
    assert splice_history(host, history.turns, id_of=lambda m: m["id"]) == splice_history(
        host, history, id_of=lambda m: m["id"]
    )


IDS = st.sampled_from(["u1", "a1", "u2", "a2", "u3"])


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Host], list[Turn]]:
    host = [Host(draw(st.none() | IDS), f"host-{i}") for i in range(draw(st.integers(0, 8)))]
    turns = [
        Turn(
            assistant_message_id=draw(st.just("") | IDS),
            after_message_id=draw(st.none() | st.just("") | IDS | st.just("gone")),
            messages=[f"turn-{t}-{k}" for k in range(draw(st.integers(1, 3)))],
        )
        for t in range(draw(st.integers(0, 6)))
    ]
    return host, turns


def first_index(host: list[Host], message_id: str | None) -> int | None:
    return next((i for i, m in enumerate(host) if message_id and m.id == message_id), None)


@given(conversations())
def test_keeps_every_host_message_in_order(conversation: tuple[list[Host], list[Turn]]) -> None:
    host, turns = conversation
    spliced = splice_history(host, turns, id_of=lambda m: m.id)
    assert [m for m in spliced if isinstance(m, Host)] == host


@given(conversations())
def test_places_each_turn_once_whole_or_drops_it_only_when_its_answer_is_absent(
    conversation: tuple[list[Host], list[Turn]],
) -> None:
    host, turns = conversation
    spliced = splice_history(host, turns, id_of=lambda m: m.id)
    for turn_ in turns:
        answer = first_index(host, turn_.assistant_message_id)
        dropped = bool(turn_.assistant_message_id) and answer is None
        starts = [i for i, m in enumerate(spliced) if m == turn_.messages[0]]
        if dropped:
            assert starts == []
            continue
        assert len(starts) == 1
        start = starts[0]
        assert spliced[start : start + len(turn_.messages)] == turn_.messages
        # The host message right after the turn's segment (other turns' messages aside) is where it belongs.
        following = next((m for m in spliced[start:] if isinstance(m, Host)), None)
        if answer is not None:
            expected: Host | None = host[answer]
        else:
            after = first_index(host, turn_.after_message_id)
            expected = None if after is None or after + 1 == len(host) else host[after + 1]
        assert following is expected


@given(conversations())
def test_turns_at_one_place_keep_their_order(conversation: tuple[list[Host], list[Turn]]) -> None:
    host, turns = conversation
    spliced = splice_history(host, turns, id_of=lambda m: m.id)
    turn_messages = [m for m in spliced if isinstance(m, str)]
    placed = [t for t in turns if t.messages[0] in turn_messages]
    by_place: dict[int, list[str]] = {}
    for position, message in enumerate(spliced):
        if isinstance(message, str) and message.endswith("-0"):
            gap = sum(1 for m in spliced[:position] if isinstance(m, Host))
            by_place.setdefault(gap, []).append(message)
    for firsts in by_place.values():
        order = [next(i for i, t in enumerate(placed) if t.messages[0] == m) for m in firsts]
        assert order == sorted(order)


class TestHostBranch:
    def test_the_ids_in_order_each_once_without_the_messages_that_have_none(self) -> None:
        host = host_of(["u1", "a1", "-", "u2", "a1", "a2"])
        assert host_branch(host, lambda m: m.id) == ["u1", "a1", "u2", "a2"]

    def test_an_empty_id_is_no_id(self) -> None:
        assert host_branch([{"id": ""}, {"id": "u1"}, {}], lambda m: m.get("id")) == ["u1"]

    def test_the_default_id_of_reads_a_mappings_id_or_an_objects(self) -> None:
        assert [default_id_of(m) for m in [{"id": "a"}, Host("b", "x"), {"id": 3}, object(), {"id": ""}]] == [
            "a",
            "b",
            None,
            None,
            None,
        ]

    @given(st.lists(st.sampled_from(["u1", "a1", "u2", "a2", "-"]), max_size=12))
    def test_splicing_a_history_of_the_branch_keeps_every_host_message(self, ids: list[str]) -> None:
        host = host_of(ids)
        branch = host_branch(host, lambda m: m.id)
        assert len(branch) == len(set(branch))
        assert set(branch) == {i for i in ids if i != "-"}
        turns = [turn(f"T{n}", answer) for n, answer in enumerate(branch)]
        spliced = splice_history(host, turns, id_of=lambda m: m.id)
        assert [m for m in spliced if isinstance(m, Host)] == host
