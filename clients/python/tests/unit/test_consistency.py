"""Consistency tokens: the contract's grammar (the shared vectors, as the TypeScript client passes them), which token
of a conversation a process keeps, and the process-wide registry the clients' reads take theirs from."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolhistory
from toolhistory import consistency
from toolhistory.consistency import (
    MAX_CONSISTENCY_TOKEN_LENGTH,
    EventStorePosition,
    KafkaMessage,
    _TokenRegistry,
    format_consistency_token,
    kafka_consistency_token,
    last_consistency_token,
    later_consistency_token,
    parse_consistency_token,
    remember_consistency_token,
    token_for_read,
)

VECTORS = Path(__file__).parent.joinpath("../../../../libs/contract/test-vectors").resolve()
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def vectors() -> dict[str, list[dict[str, Any]]]:
    loaded: dict[str, list[dict[str, Any]]] = json.loads(VECTORS.joinpath("consistency-tokens.json").read_text("utf-8"))
    return loaded


def named(vector: dict[str, Any]) -> KafkaMessage | EventStorePosition:
    if "kafka" in vector:
        kafka = vector["kafka"]
        return KafkaMessage(kafka["topic"], kafka["partition"], int(kafka["offset"]))
    return EventStorePosition(int(vector["position"]))


class TestTheSharedVectors:
    @pytest.mark.parametrize("vector", vectors()["valid"], ids=lambda vector: vector["token"])
    def test_a_valid_token_names_what_the_vector_says_and_is_written_back_byte_for_byte(
        self, vector: dict[str, Any]
    ) -> None:
        parsed = parse_consistency_token(vector["token"])
        assert parsed == named(vector)
        assert format_consistency_token(parsed) == vector["token"]

    @pytest.mark.parametrize("vector", vectors()["invalid"], ids=lambda vector: f"{vector['token']!r} {vector['why']}")
    def test_an_invalid_text_is_refused_saying_why(self, vector: dict[str, Any]) -> None:
        with pytest.raises(ValueError, match=r"^not a consistency token: "):
            parse_consistency_token(vector["token"])

    @pytest.mark.parametrize(
        "vector", vectors()["later"], ids=lambda vector: f"{vector['current']} then {vector['next']}"
    )
    def test_the_token_kept_is_the_vectors(self, vector: dict[str, Any]) -> None:
        assert later_consistency_token(vector["current"], vector["next"]) == vector["later"]

    def test_the_vectors_have_all_three_sections(self) -> None:
        loaded = vectors()
        assert {name: len(loaded[name]) > 0 for name in ("valid", "invalid", "later")} == {
            "valid": True,
            "invalid": True,
            "later": True,
        }


class TestTheGrammar:
    @pytest.mark.parametrize(
        "text",
        [
            "ct1:k:t:0:1\n",  # a regular expression's $ would let the newline pass
            "ct1:k:t:٣:1",  # a digit of another script
            "ct1:k:t:0:+1",
            "ct1:p:-1",
            "ct1:p:01",
            "ct1:k:" + "t" * 250 + ":0:1",
            "ct1:p:" + "1" * (MAX_CONSISTENCY_TOKEN_LENGTH),
        ],
    )
    def test_refuses_what_the_contract_refuses(self, text: str) -> None:
        with pytest.raises(ValueError, match=r"^not a consistency token: "):
            parse_consistency_token(text)

    def test_a_kafka_acknowledgement_gives_the_token_the_typescript_client_gives(self) -> None:
        assert kafka_consistency_token("agent.tool-events", 11, 1234567) == "ct1:k:agent.tool-events:11:1234567"

    @given(
        topic=st.text(
            alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1, max_size=249
        ),
        partition=st.integers(0, INT32_MAX),
        offset=st.integers(0, INT64_MAX),
    )
    def test_a_kafka_token_round_trips(self, topic: str, partition: int, offset: int) -> None:
        token = kafka_consistency_token(topic, partition, offset)
        assert parse_consistency_token(token) == KafkaMessage(topic, partition, offset)
        assert format_consistency_token(parse_consistency_token(token)) == token

    @given(position=st.integers(1, INT64_MAX))
    def test_a_position_token_round_trips(self, position: int) -> None:
        token = format_consistency_token(EventStorePosition(position))
        assert token == f"ct1:p:{position}"
        assert parse_consistency_token(token) == EventStorePosition(position)

    @given(st.text(max_size=40))
    def test_any_text_is_a_token_or_a_value_error(self, text: str) -> None:
        try:
            parsed = parse_consistency_token(text)
        except ValueError:
            return
        assert format_consistency_token(parsed) == text


class TestTheLaterToken:
    @given(offsets=st.lists(st.integers(0, INT64_MAX), min_size=1, max_size=20))
    def test_of_one_partition_it_is_the_highest_offset_whatever_the_order(self, offsets: list[int]) -> None:
        kept: str | None = None
        for offset in offsets:
            kept = later_consistency_token(kept, kafka_consistency_token("agent.tool-events", 3, offset))
        assert kept == kafka_consistency_token("agent.tool-events", 3, max(offsets))

    @given(positions=st.lists(st.integers(1, INT64_MAX), min_size=1, max_size=20))
    def test_of_positions_it_is_the_highest_whatever_the_order(self, positions: list[int]) -> None:
        kept: str | None = None
        for position in positions:
            kept = later_consistency_token(kept, f"ct1:p:{position}")
        assert kept == f"ct1:p:{max(positions)}"

    def test_across_partitions_or_kinds_or_with_an_unknown_token_it_is_the_one_given_last(self) -> None:
        assert later_consistency_token("ct1:k:t:0:9", "ct1:k:u:0:1") == "ct1:k:u:0:1"
        assert later_consistency_token("ct1:p:9", "ct2:anything") == "ct2:anything"
        assert later_consistency_token("ct2:anything", "ct1:p:1") == "ct1:p:1"


class TestTheRegistry:
    def test_keeps_the_later_token_per_tenant_and_conversation(self) -> None:
        registry = _TokenRegistry(10)
        registry.remember("t1", "c1", "ct1:k:t:0:7")
        registry.remember("t1", "c1", "ct1:k:t:0:5")  # an older acknowledgement, reported late
        registry.remember("t2", "c1", "ct1:k:t:0:1")
        assert (registry.last("t1", "c1"), registry.last("t2", "c1"), registry.last("t1", "c2")) == (
            "ct1:k:t:0:7",
            "ct1:k:t:0:1",
            None,
        )

    def test_ids_with_separators_do_not_collide(self) -> None:
        registry = _TokenRegistry(10)
        registry.remember("a:b", "c", "ct1:p:1")
        assert registry.last("a", "b:c") is None

    def test_is_bounded_forgetting_the_conversation_published_for_least_recently(self) -> None:
        registry = _TokenRegistry(3)
        for name in ("a", "b", "c"):
            registry.remember("t", name, "ct1:p:1")
        registry.remember("t", "a", "ct1:p:2")  # a is the most recent now
        registry.remember("t", "d", "ct1:p:1")
        assert len(registry) == 3
        assert [registry.last("t", name) for name in ("a", "b", "c", "d")] == ["ct1:p:2", None, "ct1:p:1", "ct1:p:1"]

    def test_threads_publishing_at_once_leave_the_highest_offset_of_each_conversation(self) -> None:
        registry = _TokenRegistry(100)
        start = threading.Barrier(8)

        def publish(worker: int) -> None:
            start.wait()
            for offset in range(worker, 4000, 8):
                registry.remember("t", f"c{offset % 5}", kafka_consistency_token("topic", 0, offset))

        threads = [threading.Thread(target=publish, args=(worker,)) for worker in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [registry.last("t", f"c{n}") for n in range(5)] == [
            kafka_consistency_token("topic", 0, max(o for o in range(4000) if o % 5 == n)) for n in range(5)
        ]

    def test_the_process_wide_one_is_bounded_and_read_through_the_exported_names(self) -> None:
        assert consistency.MAX_REMEMBERED_CONVERSATIONS == 10_000
        conversation = f"c-{uuid.uuid4().hex}"
        assert toolhistory.last_consistency_token("t", conversation) is None
        remember_consistency_token("t", conversation, "ct1:k:t:0:4")
        remember_consistency_token("t", conversation, "")  # nothing named: nothing changes
        assert last_consistency_token("t", conversation) == "ct1:k:t:0:4"


class TestTheTokenAReadSends:
    def test_the_callers_else_the_last_published_else_none(self) -> None:
        conversation = f"c-{uuid.uuid4().hex}"
        assert token_for_read(None, "t", conversation) == ""
        remember_consistency_token("t", conversation, "ct1:k:t:0:4")
        assert token_for_read(None, "t", conversation) == "ct1:k:t:0:4"
        assert token_for_read("", "t", conversation) == ""  # the caller asks for no wait
        assert token_for_read("ct1:p:9", "t", conversation) == "ct1:p:9"
        assert token_for_read(None, "t", None) == ""  # a read of no one conversation

    def test_an_explicit_token_is_sent_as_it_is_opaque_even_of_a_later_version(self) -> None:
        assert token_for_read("ct2:something-new", "t", "c") == "ct2:something-new"

    def test_a_token_that_is_not_text_is_refused_naming_the_argument(self) -> None:
        with pytest.raises(ValueError, match=r"^consistency_token: 7 is not a string$"):
            token_for_read(7, "t", "c")  # type: ignore[arg-type]
