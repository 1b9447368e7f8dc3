"""ToolHistoryClient against a real gRPC server on 127.0.0.1 that answers canned responses."""

from __future__ import annotations

import itertools
import json
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import grpc
import pytest

from toolhistory.client import TlsConfig, ToolHistoryClient
from toolhistory.consistency import last_consistency_token, remember_consistency_token
from toolhistory.errors import ToolHistoryError
from toolhistory.v1 import toolhistory_pb2 as pb

from toolhistory_peer import CannedToolHistory, Stream, recorded, serving, watch_changes

if TYPE_CHECKING:
    from collections.abc import Iterator

FROM = datetime(2026, 3, 1, tzinfo=timezone.utc)
TO = datetime(2026, 3, 2, tzinfo=timezone.utc)


@pytest.fixture
def service() -> CannedToolHistory:
    return CannedToolHistory()


@pytest.fixture
def address(service: CannedToolHistory) -> Iterator[str]:
    with serving(service) as address:
        yield address


@pytest.fixture
def client(address: str) -> Iterator[ToolHistoryClient]:
    with ToolHistoryClient(address, token="static-token") as client:
        yield client


def invocation(tool_call_id: str) -> pb.Invocation:
    return pb.Invocation(tenant_id="t1", tool_call_id=tool_call_id, tool_name="search")


class TestCalls:
    def test_replay_sends_the_request_and_parses_the_messages(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        items = [
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": '{"tempC":-3}'},
        ]
        service.replay = pb.GetReplayHistoryResponse(
            turns=[pb.Turn(run_id="r1", assistant_message_id="a1", messages_json=json.dumps(items))], history_tokens=9
        )
        history = client.get_replay_history(
            tenant_id="t1",
            conversation_id="c1",
            format="openai-responses",
            view="messages",
            stale_results="placeholder",
            max_history_tokens=8000,
        )
        assert history.messages() == items
        assert (history.format, history.history_tokens, history.turns[0].run_id) == ("openai-responses", 9, "r1")
        [call] = service.received("GetReplayHistory")
        assert call.request == pb.GetReplayHistoryRequest(
            tenant_id="t1",
            conversation_id="c1",
            format=pb.HISTORY_FORMAT_OPENAI_RESPONSES,
            view=pb.REPLAY_VIEW_MESSAGES,
            stale_results=pb.STALE_RESULT_MODE_PLACEHOLDER,
            max_history_tokens=8000,
        )

    def test_replay_sends_the_model_and_provider_and_gives_each_round_s_reasoning_omission(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        rounds = [
            pb.Round(round_index=0, provider="google", model="gemini-3-pro", reasoning_placeholder=True),
            pb.Round(
                round_index=1,
                provider="google",
                model="gemini-2.5-pro",
                reasoning_omitted=pb.REASONING_OMISSION_OTHER_MODEL,
            ),
        ]
        service.replay = pb.GetReplayHistoryResponse(turns=[pb.Turn(run_id="r1", rounds=rounds)])
        history = client.get_replay_history(
            tenant_id="t1", conversation_id="c1", format="gemini", model="gemini-3-pro", provider="google"
        )
        [call] = service.received("GetReplayHistory")
        assert (call.request.model, call.request.provider) == ("gemini-3-pro", "google")
        assert [(r.reasoning_omitted, r.reasoning_placeholder) for r in history.turns[0].rounds] == [
            (pb.REASONING_OMISSION_UNSPECIFIED, True),
            (pb.REASONING_OMISSION_OTHER_MODEL, False),
        ]

    @pytest.mark.parametrize("argument", ["model", "provider"])
    def test_refuses_a_model_or_provider_that_is_no_text(
        self, service: CannedToolHistory, client: ToolHistoryClient, argument: str
    ) -> None:
        with pytest.raises(ValueError, match=f"^{argument}: 7 is not a string"):
            client.get_replay_history(tenant_id="t1", conversation_id="c1", **{argument: 7})  # type: ignore[arg-type]
        assert service.calls == []

    def test_refuses_a_wrong_argument_before_calling(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        with pytest.raises(ValueError, match=r"^format: 'gemini-chat' is not one of"):
            client.get_replay_history(tenant_id="t1", conversation_id="c1", format="gemini-chat")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^status: "):
            client.list_tool_invocations(tenant_id="t1", status="done")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^from_position: "):
            client.subscribe(tenant_id="t1", from_position=-1)
        assert service.calls == []

    def test_lists_invocations_following_every_page_token(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.pages = {
            "": pb.ListToolInvocationsResponse(invocations=[invocation("1"), invocation("2")], next_page_token="p2"),
            "p2": pb.ListToolInvocationsResponse(invocations=[], next_page_token="p3"),
            "p3": pb.ListToolInvocationsResponse(invocations=[invocation("3")]),
        }
        invocations = client.list_tool_invocations(tenant_id="t1", tool_name="search", status="error", page_size=2)
        assert service.calls == []  # pages are asked for as the iteration reaches them
        assert [i.tool_call_id for i in invocations] == ["1", "2", "3"]
        requests = [call.request for call in service.received("ListToolInvocations")]
        assert [r.page_token for r in requests] == ["", "p2", "p3"]
        # Every page asks with the same filters.
        assert {(r.tenant_id, r.tool_name, r.status, r.page_size) for r in requests} == {
            ("t1", "search", pb.INVOCATION_STATUS_ERROR, 2)
        }

    def test_usage_search_and_erasure_answer_the_services_messages(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.usage = pb.GetUsageResponse(rows=[pb.UsageRow(tool_name="search", calls=3)], input_tokens=10)
        service.search = pb.SearchToolHistoryResponse(hits=[pb.SearchHit(invocation=invocation("1"), score=0.5)])
        service.erase = pb.EraseConversationResponse(erased_events=4, erased_invocations=2)
        assert client.get_usage(tenant_id="t1", from_=FROM, to=TO, bucket="day") == service.usage
        assert client.search_tool_history(tenant_id="t1", query="status", limit=5) == service.search
        assert client.erase_conversation(tenant_id="t1", conversation_id="c1") == service.erase
        usage = service.received("GetUsage")[0].request
        assert (usage.bucket, getattr(usage, "from").ToDatetime(tzinfo=timezone.utc)) == (pb.USAGE_BUCKET_DAY, FROM)
        assert service.received("SearchToolHistory")[0].request.limit == 5
        assert service.received("EraseConversation")[0].request == pb.EraseConversationRequest(
            tenant_id="t1", conversation_id="c1"
        )


class TestTokensAndDeadlines:
    def test_sends_a_static_token_on_every_call(self, service: CannedToolHistory, client: ToolHistoryClient) -> None:
        client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        client.search_tool_history(tenant_id="t1", query="x")
        assert [call.metadata.get("authorization") for call in service.calls] == ["Bearer static-token"] * 2

    def test_fetches_a_token_from_its_source_before_every_call(self, service: CannedToolHistory, address: str) -> None:
        rotation = itertools.count(1)
        with ToolHistoryClient(address, token=lambda: f"token-{next(rotation)}") as client:
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        assert [call.metadata["authorization"] for call in service.calls] == ["Bearer token-1", "Bearer token-2"]

    def test_sends_no_authorization_without_a_token(self, service: CannedToolHistory, address: str) -> None:
        with ToolHistoryClient(address) as client:
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        assert "authorization" not in service.calls[0].metadata

    def test_refuses_a_token_in_the_clear_to_another_machine(self) -> None:
        with pytest.raises(ValueError, match=r"^token: a bearer token is not sent in the clear"):
            ToolHistoryClient("toolhistory.internal:50051", token="t")

    def test_sends_the_clients_deadline_and_a_calls_own(self, service: CannedToolHistory, address: str) -> None:
        with ToolHistoryClient(address, timeout=5) as client:
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
            client.get_usage(tenant_id="t1", from_=FROM, to=TO, timeout=60)
            # An erasure waits at least 30 s unless its call says otherwise.
            client.erase_conversation(tenant_id="t1", conversation_id="c1")
        # gRPC rounds a deadline up as it encodes it: allow it a little.
        remaining = [call.time_remaining for call in service.calls]
        assert 0 < remaining[0] <= 5.5  # type: ignore[operator]
        assert 55 < remaining[1] <= 60.5  # type: ignore[operator]
        assert 25 < remaining[2] <= 30.5  # type: ignore[operator]

    def test_a_call_past_its_deadline_is_deadline_exceeded_and_retriable(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.hang.add("GetReplayHistory")
        with pytest.raises(ToolHistoryError) as raised:
            client.get_replay_history(tenant_id="t1", conversation_id="c1", timeout=0.2)
        assert (raised.value.code, raised.value.method, raised.value.retriable) == (
            grpc.StatusCode.DEADLINE_EXCEEDED,
            "GetReplayHistory",
            True,
        )


class TestBusy:
    def test_tries_again_after_the_pushback_and_answers(self, service: CannedToolHistory, address: str) -> None:
        service.busy["GetReplayHistory"] = [50, 50]
        with ToolHistoryClient(address) as client:
            started = time.monotonic()
            client.get_replay_history(tenant_id="t1", conversation_id="c1")
            elapsed = time.monotonic() - started
        assert len(service.received("GetReplayHistory")) == 3
        assert elapsed >= 0.1  # never sooner than asked, twice

    def test_gives_up_after_its_attempts_with_the_refusal_which_says_when(
        self, service: CannedToolHistory, address: str
    ) -> None:
        service.busy["GetUsage"] = [5, 5, 7]
        with ToolHistoryClient(address) as client, pytest.raises(ToolHistoryError) as raised:
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        assert (raised.value.status, raised.value.retriable, raised.value.retry_after_ms) == (
            "RESOURCE_EXHAUSTED",
            True,
            7,
        )
        assert len(service.received("GetUsage")) == 3

    @pytest.mark.parametrize(
        ("busy", "max_attempts", "timeout"),
        [([2000], 3, 0.5), ([None], 3, 10.0), ([5], 1, 10.0)],
        ids=["pushback past the deadline", "no pushback", "retries off"],
    )
    def test_fails_at_once(
        self, service: CannedToolHistory, address: str, busy: list[int | None], max_attempts: int, timeout: float
    ) -> None:
        service.busy["SearchToolHistory"] = busy
        with ToolHistoryClient(address, max_attempts=max_attempts) as client, pytest.raises(ToolHistoryError):
            client.search_tool_history(tenant_id="t1", query="x", timeout=timeout)
        assert len(service.received("SearchToolHistory")) == 1


class TestErrors:
    @pytest.mark.parametrize(
        ("code", "retriable"),
        [
            (grpc.StatusCode.PERMISSION_DENIED, False),
            (grpc.StatusCode.INVALID_ARGUMENT, False),
            (grpc.StatusCode.UNAVAILABLE, True),
            (grpc.StatusCode.RESOURCE_EXHAUSTED, True),
        ],
    )
    def test_every_failure_is_a_tool_history_error(
        self, service: CannedToolHistory, client: ToolHistoryClient, code: grpc.StatusCode, retriable: bool
    ) -> None:
        service.failures["SearchToolHistory"] = (code, 'tenant "t1" is not permitted to this caller')
        with pytest.raises(ToolHistoryError) as raised:
            client.search_tool_history(tenant_id="t1", query="x")
        error = raised.value
        assert (error.code, error.status, error.details, error.method, error.retriable) == (
            code,
            code.name,
            'tenant "t1" is not permitted to this caller',
            "SearchToolHistory",
            retriable,
        )
        assert isinstance(error.__cause__, grpc.RpcError)

    def test_a_failed_page_fails_the_iteration(self, service: CannedToolHistory, client: ToolHistoryClient) -> None:
        service.pages = {"": pb.ListToolInvocationsResponse(invocations=[invocation("1")], next_page_token="p2")}
        service.failures["ListToolInvocations"] = (grpc.StatusCode.INVALID_ARGUMENT, "page_token is not this service's")
        with pytest.raises(ToolHistoryError, match="ListToolInvocations: INVALID_ARGUMENT: page_token"):
            list(client.list_tool_invocations(tenant_id="t1"))

    def test_a_closed_client_says_so(self, address: str) -> None:
        client = ToolHistoryClient(address)
        with client as entered:
            assert entered is client
        client.close()  # closing again does nothing
        with pytest.raises(RuntimeError, match="the ToolHistoryClient is closed"):
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)


class TestSubscribe:
    def test_delivers_events_parsed_and_resumes_after_the_last_one_on_unavailable(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.streams = [
            Stream([recorded(4), recorded(5)], end=(grpc.StatusCode.UNAVAILABLE, "resume from your last position")),
            Stream([], end=(grpc.StatusCode.UNAVAILABLE, "still restarting")),
            Stream([recorded(6, "RunCompleted", assistantMessageId="a1")]),
        ]
        events = client.subscribe(
            tenant_id="t1", from_position=3, types=["ToolCallRequested", "RunCompleted"], reconnect=True
        )
        received = [next(events) for _ in range(3)]
        events.close()
        assert [(e.position, e.type) for e in received] == [
            (4, "ToolCallRequested"),
            (5, "ToolCallRequested"),
            (6, "RunCompleted"),
        ]
        assert received[2].event == {"type": "RunCompleted", "assistantMessageId": "a1"}
        assert received[0].occurred_at == datetime.fromtimestamp(1_700_000_004, tz=timezone.utc)
        requests = [call.request for call in service.received("SubscribeToolEvents")]
        assert [r.from_position for r in requests] == [3, 5, 5]
        assert {tuple(r.types) for r in requests} == {("ToolCallRequested", "RunCompleted")}
        assert {call.metadata["authorization"] for call in service.received("SubscribeToolEvents")} == {
            "Bearer static-token"
        }
        # No deadline: a subscription is meant to stay open.
        assert {call.time_remaining for call in service.received("SubscribeToolEvents")} == {None}

    def test_ends_the_servers_stream_when_the_caller_stops(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.streams = [Stream([recorded(1), recorded(2)])]
        for event in client.subscribe(tenant_id="t1"):
            if event.position == 1:
                break
        assert service.stream_cancelled.wait(timeout=10)

    @pytest.mark.parametrize(
        ("end", "reconnect"),
        [((grpc.StatusCode.UNAVAILABLE, "shutting down"), False), ((grpc.StatusCode.PERMISSION_DENIED, "no"), True)],
    )
    def test_raises_a_status_it_does_not_reconnect_on(
        self,
        service: CannedToolHistory,
        client: ToolHistoryClient,
        end: tuple[grpc.StatusCode, str],
        reconnect: bool,
    ) -> None:
        service.streams = [Stream([recorded(1)], end=end)]
        events = client.subscribe(tenant_id="t1", reconnect=reconnect)
        assert next(events).position == 1
        with pytest.raises(ToolHistoryError) as raised:
            next(events)
        assert (raised.value.code, raised.value.method) == (end[0], "SubscribeToolEvents")
        assert len(service.received("SubscribeToolEvents")) == 1


class TestWatchConversation:
    def test_delivers_the_snapshot_then_each_change_until_erasure_ends_it_not_found(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.watches = [Stream(watch_changes(), end=(grpc.StatusCode.NOT_FOUND, "conversation c1 was erased"))]
        changes = client.watch_conversation(tenant_id="t1", conversation_id="c1")
        received = [next(changes) for _ in range(5)]
        with pytest.raises(ToolHistoryError) as raised:
            next(changes)
        assert [change.WhichOneof("change") for change in received] == [
            "snapshot",
            "snapshot",
            "invocation_changed",
            "invocation_changed",
            "run_ended",
        ]
        assert [received[0].snapshot.complete, received[1].snapshot.complete] == [False, True]
        assert received[3].invocation_changed.invocation.invocation.result == "ok"
        assert received[4].run_ended.status == pb.RUN_STATUS_COMPLETED
        assert (raised.value.code, raised.value.method, raised.value.details) == (
            grpc.StatusCode.NOT_FOUND,
            "WatchConversation",
            "conversation c1 was erased",
        )
        [call] = service.received("WatchConversation")
        assert (call.request.tenant_id, call.request.conversation_id) == ("t1", "c1")
        assert call.metadata["authorization"] == "Bearer static-token"
        assert call.time_remaining is None  # a watch is meant to stay open

    def test_ends_the_servers_stream_when_the_caller_stops(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.watches = [Stream(watch_changes())]
        for change in client.watch_conversation(tenant_id="t1", conversation_id="c1"):
            if change.WhichOneof("change") == "invocation_changed":
                break
        assert service.stream_cancelled.wait(timeout=10)

    def test_refuses_a_wrong_argument_before_calling(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        with pytest.raises(ValueError, match="conversation_id: None is not a string"):
            client.watch_conversation(tenant_id="t1", conversation_id=None)  # type: ignore[arg-type]
        assert service.calls == []


def self_signed(host: str) -> tuple[bytes, bytes]:
    """A certificate for ``host`` and its key (PEM), signed by itself."""
    from datetime import timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.now(timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


def test_calls_over_tls_trusting_the_given_roots_with_a_name_override(service: CannedToolHistory) -> None:
    certificate, key = self_signed("toolhistory.test")
    with serving(service, grpc.ssl_server_credentials([(key, certificate)])) as address:
        tls = TlsConfig(root_certificates=certificate, server_name_override="toolhistory.test")
        with ToolHistoryClient(address, token="over-tls", tls=tls) as client:
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        # Without the server's CA among the roots, the handshake fails.
        other, _ = self_signed("toolhistory.test")
        untrusting = TlsConfig(root_certificates=other, server_name_override="toolhistory.test")
        with ToolHistoryClient(address, tls=untrusting, timeout=5) as client, pytest.raises(ToolHistoryError) as raised:
            client.get_usage(tenant_id="t1", from_=FROM, to=TO)
    assert service.calls[0].metadata["authorization"] == "Bearer over-tls"
    assert len(service.calls) == 1
    assert raised.value.code is grpc.StatusCode.UNAVAILABLE


class TestReadYourWrites:
    """Each read of a conversation sends the last token this process published for it, or the caller's."""

    def test_every_read_of_a_conversation_sends_the_last_token_published_for_it(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        remember_consistency_token("t1", "c1", "ct1:k:agent.tool-events:2:17")
        remember_consistency_token("t1", "other", "ct1:k:agent.tool-events:0:99")
        service.pages = {"": pb.ListToolInvocationsResponse()}
        service.watches = [Stream([], end=(grpc.StatusCode.UNAVAILABLE, "going away"))]
        client.get_replay_history(tenant_id="t1", conversation_id="c1")
        list(client.list_tool_invocations(tenant_id="t1", conversation_id="c1"))
        client.search_tool_history(tenant_id="t1", query="x", conversation_id="c1")
        with pytest.raises(ToolHistoryError):
            list(client.watch_conversation(tenant_id="t1", conversation_id="c1"))
        assert [(call.method, call.request.consistency_token) for call in service.calls] == [
            ("GetReplayHistory", "ct1:k:agent.tool-events:2:17"),
            ("ListToolInvocations", "ct1:k:agent.tool-events:2:17"),
            ("SearchToolHistory", "ct1:k:agent.tool-events:2:17"),
            ("WatchConversation", "ct1:k:agent.tool-events:2:17"),
        ]

    def test_a_token_given_wins_and_an_empty_one_asks_for_no_wait(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        remember_consistency_token("t1", "c1", "ct1:k:agent.tool-events:2:17")
        client.get_replay_history(tenant_id="t1", conversation_id="c1", consistency_token="ct1:p:5")
        client.get_replay_history(tenant_id="t1", conversation_id="c1", consistency_token="")
        client.search_tool_history(tenant_id="t1", query="x", consistency_token="ct1:p:6")
        assert [call.request.consistency_token for call in service.calls] == ["ct1:p:5", "", "ct1:p:6"]

    def test_reads_of_no_one_conversation_or_of_one_this_process_did_not_publish_to_wait_for_nothing(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        remember_consistency_token("t1", "c1", "ct1:k:agent.tool-events:2:17")
        service.pages = {"": pb.ListToolInvocationsResponse()}
        list(client.list_tool_invocations(tenant_id="t1"))
        client.search_tool_history(tenant_id="t1", query="x")
        client.get_replay_history(tenant_id="t2", conversation_id="c1")
        assert [call.request.consistency_token for call in service.calls] == ["", "", ""]

    def test_every_page_of_a_listing_sends_the_token(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.pages = {
            "": pb.ListToolInvocationsResponse(invocations=[invocation("1")], next_page_token="p2"),
            "p2": pb.ListToolInvocationsResponse(invocations=[invocation("2")]),
        }
        list(client.list_tool_invocations(tenant_id="t1", conversation_id="c1", consistency_token="ct1:p:3"))
        assert [call.request.consistency_token for call in service.calls] == ["ct1:p:3", "ct1:p:3"]

    def test_the_services_unavailable_for_a_token_not_recorded_in_time_is_a_retriable_error(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.failures["GetReplayHistory"] = (
            grpc.StatusCode.UNAVAILABLE,
            "ct1:k:agent.tool-events:2:17 is not recorded yet: the recorder is at offset 12",
        )
        with pytest.raises(ToolHistoryError) as failed:
            client.get_replay_history(
                tenant_id="t1", conversation_id="c1", consistency_token="ct1:k:agent.tool-events:2:17"
            )
        assert (failed.value.status, failed.value.retriable) == ("UNAVAILABLE", True)
        assert "ct1:k:agent.tool-events:2:17" in failed.value.details

    def test_a_token_that_is_not_text_is_refused_before_calling(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        with pytest.raises(ValueError, match=r"^consistency_token: 5 is not a string$"):
            client.get_replay_history(tenant_id="t1", conversation_id="c1", consistency_token=5)  # type: ignore[arg-type]
        assert service.calls == []


class TestBranches:
    def test_replay_sends_the_hosts_branch(self, service: CannedToolHistory, client: ToolHistoryClient) -> None:
        client.get_replay_history(tenant_id="t1", conversation_id="c1", branch_message_ids=("u1", "a1", "u2"))
        assert list(service.received("GetReplayHistory")[0].request.branch_message_ids) == ["u1", "a1", "u2"]

    @pytest.mark.parametrize(
        ("ids", "message"),
        [
            ("u1", r"^branch_message_ids: 'u1' is not a sequence of message ids$"),
            (["u1", ""], r"^branch_message_ids\[1\]: '' is not a message id \(a non-empty string\)$"),
            (["u1", 7], r"^branch_message_ids\[1\]: 7 is not a message id"),
        ],
    )
    def test_refuses_a_branch_that_is_not_message_ids(
        self, service: CannedToolHistory, client: ToolHistoryClient, ids: object, message: str
    ) -> None:
        with pytest.raises(ValueError, match=message):
            client.get_replay_history(tenant_id="t1", conversation_id="c1", branch_message_ids=ids)  # type: ignore[arg-type]
        assert service.calls == []

    def test_spliced_history_asks_for_the_hosts_branch_and_splices_it(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        remember_consistency_token("t1", "c1", "ct1:p:8")
        service.replay = pb.GetReplayHistoryResponse(
            turns=[
                pb.Turn(
                    run_id="r1",
                    assistant_message_id="a1",
                    after_message_id="u1",
                    messages_json=json.dumps([{"role": "assistant", "tool_calls": []}, {"role": "tool"}]),
                )
            ]
        )
        host = [
            {"id": "u1", "role": "user"},
            {"id": "a1", "role": "assistant"},
            {"role": "system"},  # no id: not on the branch, still kept
            {"id": "u2", "role": "user"},
        ]
        spliced = client.spliced_history(tenant_id="t1", conversation_id="c1", host_messages=host)
        assert [m.get("id", m["role"]) for m in spliced] == ["u1", "assistant", "tool", "a1", "system", "u2"]
        [call] = service.received("GetReplayHistory")
        assert (list(call.request.branch_message_ids), call.request.consistency_token, call.request.view) == (
            ["u1", "a1", "u2"],
            "ct1:p:8",
            pb.REPLAY_VIEW_MESSAGES,
        )

    def test_spliced_history_sends_the_model_and_provider_about_to_be_called(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        client.spliced_history(
            tenant_id="t1", conversation_id="c1", host_messages=[], model="claude-opus-4-5", provider="anthropic"
        )
        request = service.received("GetReplayHistory")[0].request
        assert (request.model, request.provider) == ("claude-opus-4-5", "anthropic")

    def test_spliced_history_reads_ids_with_the_hosts_function(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        host = [("m-1", "hello"), ("m-2", "hi")]
        assert (
            client.spliced_history(
                tenant_id="t1", conversation_id="c1", host_messages=host, id_of=lambda m: m[0], format="anthropic"
            )
            == host
        )
        request = service.received("GetReplayHistory")[0].request
        assert (list(request.branch_message_ids), request.format) == (
            ["m-1", "m-2"],
            pb.HISTORY_FORMAT_ANTHROPIC_MESSAGES,
        )


class TestFork:
    def test_forks_and_this_process_reads_the_new_conversation_with_the_forks_token(
        self, service: CannedToolHistory, client: ToolHistoryClient
    ) -> None:
        service.fork = pb.ForkConversationResponse(copied_invocations=3, consistency_token="ct1:p:42")
        remember_consistency_token("t1", "c1", "ct1:k:agent.tool-events:0:8")
        answer = client.fork_conversation(
            tenant_id="t1", conversation_id="c1", up_to_message_id="a1", new_conversation_id="c1-fork"
        )
        assert answer == service.fork
        [fork] = service.received("ForkConversation")
        assert fork.request == pb.ForkConversationRequest(
            tenant_id="t1",
            conversation_id="c1",
            up_to_message_id="a1",
            new_conversation_id="c1-fork",
            consistency_token="ct1:k:agent.tool-events:0:8",  # the source's events are recorded first
        )
        assert fork.time_remaining is not None
        assert fork.time_remaining > 25  # the client's 30 s, as an erasure's
        assert last_consistency_token("t1", "c1-fork") == "ct1:p:42"
        assert last_consistency_token("t1", "c1") == "ct1:k:agent.tool-events:0:8"
        client.get_replay_history(tenant_id="t1", conversation_id="c1-fork")
        assert service.received("GetReplayHistory")[0].request.consistency_token == "ct1:p:42"

    def test_a_refused_fork_remembers_nothing(self, service: CannedToolHistory, client: ToolHistoryClient) -> None:
        service.failures["ForkConversation"] = (grpc.StatusCode.PERMISSION_DENIED, "needs conversations:fork")
        with pytest.raises(ToolHistoryError) as failed:
            client.fork_conversation(
                tenant_id="t1", conversation_id="c1", up_to_message_id="a1", new_conversation_id="c2"
            )
        assert failed.value.status == "PERMISSION_DENIED"
        assert last_consistency_token("t1", "c2") is None

    def test_the_typed_invocation_names_where_a_copy_came_from(self) -> None:
        copied = pb.Invocation(forked_from=pb.ForkProvenance(conversation_id="c1", position=12))
        assert copied.HasField("forked_from")
        assert (copied.forked_from.conversation_id, copied.forked_from.position) == ("c1", 12)
        assert not pb.Invocation().HasField("forked_from")
