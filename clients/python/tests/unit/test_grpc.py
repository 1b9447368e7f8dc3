"""The clients' shared logic: arguments to requests, enum names, channel and token rules, deadlines, errors,
and the subscription's resumption."""

from __future__ import annotations

import math
import typing
from datetime import datetime, timedelta, timezone

import grpc
import grpc.aio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory import _grpc
from toolhistory.errors import ToolHistoryError, from_rpc_error
from toolhistory.formats import HISTORY_FORMATS, HistoryFormat
from toolhistory.v1 import toolhistory_pb2 as pb

AWARE = datetime(2026, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))


def replay_request(**overrides: typing.Any) -> pb.GetReplayHistoryRequest:
    arguments: dict[str, typing.Any] = {
        "tenant_id": "t1",
        "conversation_id": "c1",
        "format": "openai",
        "channel": None,
        "as_of": None,
        "freshness_window_seconds": None,
        "stale_results": None,
        "view": "all",
        "max_history_tokens": None,
    }
    return _grpc.replay_request(**{**arguments, **overrides})


class TestReplayRequest:
    @pytest.mark.parametrize(
        ("format", "wire"),
        [
            ("openai", pb.HISTORY_FORMAT_OPENAI_CHAT),
            ("anthropic", pb.HISTORY_FORMAT_ANTHROPIC_MESSAGES),
            ("openai-responses", pb.HISTORY_FORMAT_OPENAI_RESPONSES),
            ("gemini", pb.HISTORY_FORMAT_GEMINI),
            ("bedrock-converse", pb.HISTORY_FORMAT_BEDROCK_CONVERSE),
        ],
    )
    def test_asks_for_each_format_by_its_wire_value(self, format: str, wire: int) -> None:
        request = replay_request(format=format)
        assert (request.tenant_id, request.conversation_id, request.format) == ("t1", "c1", wire)
        # Unset optional fields stay unset: the service applies its policy.
        assert request.view == pb.REPLAY_VIEW_UNSPECIFIED
        assert request.stale_results == pb.STALE_RESULT_MODE_UNSPECIFIED
        assert not request.HasField("as_of")
        assert not request.HasField("freshness_window_seconds")
        assert not request.HasField("max_history_tokens")
        assert request.channel == ""

    def test_names_every_format_the_literal_names(self) -> None:
        assert set(HISTORY_FORMATS) == set(typing.get_args(HistoryFormat)) == set(_grpc.WIRE_FORMAT)

    @pytest.mark.parametrize(
        ("view", "wire"),
        [
            ("all", pb.REPLAY_VIEW_UNSPECIFIED),
            ("messages", pb.REPLAY_VIEW_MESSAGES),
            ("structured", pb.REPLAY_VIEW_STRUCTURED),
        ],
    )
    def test_maps_the_view(self, view: str, wire: int) -> None:
        assert replay_request(view=view).view == wire

    @pytest.mark.parametrize(
        ("stale", "wire"), [("drop", pb.STALE_RESULT_MODE_DROP), ("placeholder", pb.STALE_RESULT_MODE_PLACEHOLDER)]
    )
    def test_maps_stale_results(self, stale: str, wire: int) -> None:
        assert replay_request(stale_results=stale).stale_results == wire

    def test_sends_the_model_and_provider_about_to_be_called_and_none_unless_given(self) -> None:
        asked = replay_request(model="claude-opus-4-5", provider="anthropic")
        assert (asked.model, asked.provider) == ("claude-opus-4-5", "anthropic")
        assert (replay_request().model, replay_request().provider) == ("", "")

    def test_sets_the_optional_fields_given_zeros_included(self) -> None:
        request = replay_request(
            channel="web", as_of=AWARE, freshness_window_seconds=0, max_history_tokens=0, view="messages"
        )
        assert request.channel == "web"
        assert request.as_of.ToDatetime(tzinfo=timezone.utc) == AWARE
        assert request.HasField("freshness_window_seconds")
        assert request.freshness_window_seconds == 0
        assert request.HasField("max_history_tokens")
        assert request.max_history_tokens == 0

    @pytest.mark.parametrize(
        ("argument", "value", "message"),
        [
            ("format", "gemini-chat", "format: 'gemini-chat' is not one of 'openai', 'anthropic', 'openai-responses'"),
            ("format", "ai-sdk", "format: 'ai-sdk' is not one of"),
            ("format", None, "format: None is not one of"),
            ("view", "rounds", "view: 'rounds' is not one of 'all', 'messages', 'structured'"),
            ("stale_results", "keep", "stale_results: 'keep' is not one of 'drop', 'placeholder'"),
            ("freshness_window_seconds", -1, "freshness_window_seconds: -1 is not a whole number of seconds"),
            ("freshness_window_seconds", 1.5, "freshness_window_seconds: 1.5 is not a whole number"),
            ("freshness_window_seconds", True, "freshness_window_seconds: True is not a whole number"),
            ("max_history_tokens", -1, "max_history_tokens: -1 is not a whole number of tokens, 0 to 2147483647"),
            ("max_history_tokens", 2**31, "max_history_tokens: 2147483648 is not a whole number of tokens"),
            ("as_of", datetime(2026, 3, 1), "as_of: 2026-03-01T00:00:00 has no time zone"),
            ("as_of", "2026-03-01", "as_of: '2026-03-01' is not a datetime"),
            ("tenant_id", None, "tenant_id: None is not a string"),
            ("channel", 7, "channel: 7 is not a string"),
            ("model", 7, "model: 7 is not a string"),
            ("provider", b"google", "provider: b'google' is not a string"),
        ],
    )
    def test_refuses_a_wrong_argument_naming_it(self, argument: str, value: object, message: str) -> None:
        with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            replay_request(**{argument: value})


class TestOtherRequests:
    @pytest.mark.parametrize(
        ("status", "wire"),
        [
            (None, pb.INVOCATION_STATUS_UNSPECIFIED),
            ("pending", pb.INVOCATION_STATUS_PENDING),
            ("succeeded", pb.INVOCATION_STATUS_SUCCEEDED),
            ("error", pb.INVOCATION_STATUS_ERROR),
        ],
    )
    def test_invocations_request_maps_the_status(self, status: typing.Any, wire: int) -> None:
        request = _grpc.invocations_request(
            tenant_id="t1",
            conversation_id=None,
            run_id=None,
            tool_name=None,
            status=status,
            from_=None,
            to=None,
            page_size=None,
        )
        assert request.status == wire
        assert (request.page_size, request.page_token) == (0, "")
        assert not request.HasField("from")
        assert not request.HasField("to")

    def test_invocations_request_carries_every_filter(self) -> None:
        request = _grpc.invocations_request(
            tenant_id="t1",
            conversation_id="c1",
            run_id="r1",
            tool_name="search",
            status="error",
            from_=AWARE,
            to=AWARE + timedelta(days=1),
            page_size=250,
        )
        assert (request.conversation_id, request.run_id, request.tool_name, request.page_size) == (
            "c1",
            "r1",
            "search",
            250,
        )
        assert getattr(request, "from").ToDatetime(tzinfo=timezone.utc) == AWARE
        assert request.to.ToDatetime(tzinfo=timezone.utc) == AWARE + timedelta(days=1)

    @pytest.mark.parametrize("page_size", [0, -5, 2**31, 10.0])
    def test_invocations_request_refuses_a_page_size_that_is_no_count(self, page_size: object) -> None:
        with pytest.raises(ValueError, match=r"^page_size: "):
            _grpc.invocations_request(
                tenant_id="t1",
                conversation_id=None,
                run_id=None,
                tool_name=None,
                status=None,
                from_=None,
                to=None,
                page_size=page_size,  # type: ignore[arg-type]
            )

    def test_invocations_request_refuses_an_unknown_status(self) -> None:
        with pytest.raises(ValueError, match=r"^status: 'failed' is not one of 'pending', 'succeeded', 'error'$"):
            _grpc.invocations_request(
                tenant_id="t1",
                conversation_id=None,
                run_id=None,
                tool_name=None,
                status="failed",  # type: ignore[arg-type]
                from_=None,
                to=None,
                page_size=None,
            )

    @pytest.mark.parametrize(("bucket", "wire"), [("hour", pb.USAGE_BUCKET_HOUR), ("day", pb.USAGE_BUCKET_DAY)])
    def test_usage_request(self, bucket: typing.Any, wire: int) -> None:
        request = _grpc.usage_request(tenant_id="t1", from_=AWARE, to=AWARE + timedelta(hours=1), bucket=bucket)
        assert request.bucket == wire
        assert getattr(request, "from").ToDatetime(tzinfo=timezone.utc) == AWARE

    def test_usage_request_refuses_an_unknown_bucket_and_a_missing_period(self) -> None:
        with pytest.raises(ValueError, match=r"^bucket: 'week' is not one of 'hour', 'day'$"):
            _grpc.usage_request(tenant_id="t1", from_=AWARE, to=AWARE, bucket="week")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"^from_: None is not a datetime$"):
            _grpc.usage_request(tenant_id="t1", from_=None, to=AWARE, bucket="day")  # type: ignore[arg-type]

    def test_search_request(self) -> None:
        request = _grpc.search_request(
            tenant_id="t1", query='"git status" -draft', conversation_id="c1", limit=5, from_=AWARE, to=None
        )
        assert (request.query, request.conversation_id, request.limit) == ('"git status" -draft', "c1", 5)
        assert request.HasField("from")
        assert not request.HasField("to")
        with pytest.raises(ValueError, match=r"^limit: 0 is not a whole number of hits, 1 to"):
            _grpc.search_request(tenant_id="t1", query="x", conversation_id=None, limit=0, from_=None, to=None)

    def test_search_request_matches_words_unless_asked_for_a_substring(self) -> None:
        words = _grpc.search_request(
            tenant_id="t1", query="kettle", conversation_id=None, limit=None, from_=None, to=None
        )
        assert words.match == pb.SEARCH_MATCH_WORDS
        substring = _grpc.search_request(
            tenant_id="t1", query="kett", conversation_id="c1", limit=None, from_=None, to=None, match="substring"
        )
        assert substring.match == pb.SEARCH_MATCH_SUBSTRING
        with pytest.raises(ValueError, match=r"^match"):
            _grpc.search_request(
                tenant_id="t1",
                query="x",
                conversation_id=None,
                limit=None,
                from_=None,
                to=None,
                match="regex",  # type: ignore[arg-type]
            )

    def test_erase_request(self) -> None:
        assert _grpc.erase_request(tenant_id="t1", conversation_id="c1") == pb.EraseConversationRequest(
            tenant_id="t1", conversation_id="c1"
        )


class TestChannel:
    @pytest.mark.parametrize(
        ("address", "loopback"),
        [
            ("127.0.0.1:50051", True),
            ("127.8.9.10:1", True),
            ("localhost:50051", True),
            ("LOCALHOST:50051", True),
            ("[::1]:50051", True),
            ("::1", True),
            ("dns:///localhost:50051", True),
            ("dns://8.8.8.8/localhost:50051", True),
            ("ipv4:127.0.0.1:1,127.0.0.2:2", True),
            ("ipv4:127.0.0.1:1,10.0.0.2:2", False),
            ("ipv6:[::1]:50051", True),
            ("unix:/run/toolhistory.sock", True),
            ("toolhistory:50051", False),
            ("10.0.0.1:50051", False),
            ("dns:///toolhistory.internal:443", False),
            ("localhost.evil.example:50051", False),
            ("128.0.0.1:50051", False),
        ],
    )
    def test_knows_which_addresses_are_this_machine(self, address: str, loopback: bool) -> None:
        assert _grpc.is_loopback(address) is loopback

    def test_refuses_a_token_in_the_clear_to_another_machine(self) -> None:
        with pytest.raises(ValueError, match=r"^token: a bearer token is not sent in the clear to toolhistory:50051"):
            _grpc.channel_setup(
                "toolhistory:50051", token_given=True, tls=False, channel_options=(), allow_token_without_tls=False
            )

    @pytest.mark.parametrize(
        ("address", "tls", "allow"),
        [
            ("toolhistory:50051", True, False),
            ("toolhistory:50051", _grpc.TlsConfig(), False),
            ("toolhistory:50051", False, True),
            ("127.0.0.1:50051", False, False),
        ],
    )
    def test_sends_a_token_over_tls_to_loopback_or_when_allowed(
        self, address: str, tls: bool | _grpc.TlsConfig, allow: bool
    ) -> None:
        setup = _grpc.channel_setup(
            address, token_given=True, tls=tls, channel_options=(), allow_token_without_tls=allow
        )
        assert (setup.credentials is None) == (tls is False)

    def test_a_name_override_becomes_a_channel_option_after_the_callers(self) -> None:
        setup = _grpc.channel_setup(
            "10.0.0.1:443",
            token_given=False,
            tls=_grpc.TlsConfig(root_certificates=b"", server_name_override="toolhistory.internal"),
            channel_options=[("grpc.keepalive_time_ms", 10_000)],
            allow_token_without_tls=False,
        )
        assert setup.options == [
            ("grpc.keepalive_time_ms", 10_000),
            ("grpc.ssl_target_name_override", "toolhistory.internal"),
        ]

    def test_refuses_half_a_client_certificate_and_a_tls_of_another_type(self) -> None:
        with pytest.raises(ValueError, match=r"^tls: private_key and certificate_chain go together"):
            _grpc.channel_setup(
                "h:1",
                token_given=False,
                tls=_grpc.TlsConfig(private_key=b"key"),
                channel_options=(),
                allow_token_without_tls=False,
            )
        with pytest.raises(ValueError, match=r"^tls: 'yes' is neither a bool nor a TlsConfig$"):
            _grpc.channel_setup(
                "h:1",
                token_given=False,
                tls="yes",  # type: ignore[arg-type]
                channel_options=(),
                allow_token_without_tls=False,
            )
        with pytest.raises(ValueError, match=r"^address: '' is not a host:port$"):
            _grpc.channel_setup("", token_given=False, tls=False, channel_options=(), allow_token_without_tls=False)


class TestTokensAndDeadlines:
    def test_a_token_becomes_the_authorization_header(self) -> None:
        assert _grpc.authorization_metadata("abc.def") == (("authorization", "Bearer abc.def"),)
        assert _grpc.authorization_metadata(None) == ()

    @pytest.mark.parametrize(
        ("request_", "headers"),
        [
            (pb.GetReplayHistoryRequest(tenant_id="acme"), (("toolhistory-tenant", "acme"),)),
            (pb.ListToolInvocationsRequest(tenant_id="acme-2"), (("toolhistory-tenant", "acme-2"),)),
            (pb.GetReplayHistoryRequest(), ()),
            (pb.GetReplayHistoryRequest(tenant_id="café"), ()),
            (pb.GetReplayHistoryRequest(tenant_id="a\nb"), ()),
        ],
        ids=["replay", "listing", "no tenant", "not ASCII", "a line break"],
    )
    def test_a_reads_tenant_goes_in_the_headers_too_when_a_header_can_carry_it(
        self, request_: object, headers: tuple[tuple[str, str], ...]
    ) -> None:
        assert _grpc.tenant_metadata(request_) == headers

    @pytest.mark.parametrize("token", ["", b"secret-bytes", "secret\nx-injected: 1", 42])
    def test_refuses_what_is_no_token_without_repeating_it(self, token: object) -> None:
        with pytest.raises(ValueError, match=r"^token: the token source returned ") as raised:
            _grpc.authorization_metadata(token)
        assert "secret" not in str(raised.value)

    def test_checks_a_token_source(self) -> None:
        _grpc.check_token_source("t")
        _grpc.check_token_source(lambda: "t")
        _grpc.check_token_source(None)
        with pytest.raises(ValueError, match=r"^token: '' is neither"):
            _grpc.check_token_source("")
        with pytest.raises(ValueError, match=r"^token: a bytes is neither"):
            _grpc.check_token_source(b"t")

    @pytest.mark.parametrize("timeout", [0, -1, math.nan, math.inf, True, "5"])
    def test_refuses_a_timeout_that_is_no_duration(self, timeout: object) -> None:
        with pytest.raises(ValueError, match=r"^timeout: .* is not a number of seconds above 0 \(or None\)$"):
            _grpc.check_timeout("timeout", timeout)

    def test_accepts_seconds_or_none(self) -> None:
        assert _grpc.check_timeout("timeout", 2) == 2.0
        assert _grpc.check_timeout("timeout", None) is None

    @pytest.mark.parametrize(
        ("call", "default", "expected"), [(None, 10.0, 30.0), (None, 60.0, 60.0), (5.0, 60.0, 5.0), (None, None, None)]
    )
    def test_an_erasure_waits_at_least_30_s_unless_told(
        self, call: float | None, default: float | None, expected: float | None
    ) -> None:
        assert _grpc.erase_timeout(call, default) == expected

    def test_a_deadline_counts_down_and_then_refuses(self) -> None:
        now = [100.0]
        deadline = _grpc.Deadline(2.0, clock=lambda: now[0])
        now[0] = 101.5
        assert deadline.remaining("GetUsage") == pytest.approx(0.5)
        now[0] = 102.0
        with pytest.raises(ToolHistoryError) as raised:
            deadline.remaining("GetUsage")
        assert (raised.value.code, raised.value.method, raised.value.retriable) == (
            grpc.StatusCode.DEADLINE_EXCEEDED,
            "GetUsage",
            True,
        )
        assert _grpc.Deadline(None).remaining("GetUsage") is None


RETRIABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.ABORTED,
}


class TestErrors:
    @pytest.mark.parametrize("code", [code for code in grpc.StatusCode if code is not grpc.StatusCode.OK])
    def test_maps_every_status_and_says_whether_a_retry_may_pass(self, code: grpc.StatusCode) -> None:
        rpc_error = grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="what went wrong")
        error = from_rpc_error("GetUsage", rpc_error)
        assert (error.code, error.status, error.details, error.method) == (
            code,
            code.name,
            "what went wrong",
            "GetUsage",
        )
        assert error.retriable is (code in RETRIABLE)
        assert str(error) == f"GetUsage: {code.name}: what went wrong"

    def test_keeps_the_pushback_of_a_busy_refusal(self) -> None:
        trailers = grpc.aio.Metadata(("grpc-retry-pushback-ms", "250"))
        busy = grpc.aio.AioRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), trailers, details="busy")
        assert from_rpc_error("GetReplayHistory", busy).retry_after_ms == 250
        for value in ("-1", "soon", "1.5"):
            malformed = grpc.aio.Metadata(("grpc-retry-pushback-ms", value))
            error = grpc.aio.AioRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), malformed)
            assert from_rpc_error("GetReplayHistory", error).retry_after_ms is None
        plain = grpc.aio.AioRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata())
        assert from_rpc_error("GetReplayHistory", plain).retry_after_ms is None

    def test_an_error_without_a_status_is_unknown(self) -> None:
        error = from_rpc_error("GetUsage", grpc.RpcError("the channel broke"))
        assert (error.code, error.details, error.retriable) == (grpc.StatusCode.UNKNOWN, "the channel broke", False)


class TestPushback:
    BUSY = ToolHistoryError(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy", "GetReplayHistory", retry_after_ms=100)

    def test_waits_never_less_than_asked_and_at_most_half_as_long_again(self) -> None:
        assert _grpc.jittered_pushback(200, lambda: 0.0) == 0.2
        assert _grpc.jittered_pushback(200, lambda: 1.0) == 0.3
        waits = {_grpc.jittered_pushback(100) for _ in range(500)}
        assert min(waits) >= 0.1
        assert max(waits) <= 0.15
        assert len(waits) > 20  # spread out, so refused callers do not come back together

    def test_retries_a_busy_refusal_that_says_when_within_the_attempts_and_the_deadline(self) -> None:
        half = lambda: 0.5  # noqa: E731
        assert _grpc.retry_delay(self.BUSY, 1, 3, _grpc.Deadline(10.0), half) == pytest.approx(0.125)
        assert _grpc.retry_delay(self.BUSY, 1, 3, _grpc.Deadline(None), half) == pytest.approx(0.125)
        assert _grpc.retry_delay(self.BUSY, 3, 3, _grpc.Deadline(10.0), half) is None
        # A wait that would leave no time for the next attempt: fail now, the caller goes on without.
        assert _grpc.retry_delay(self.BUSY, 1, 3, _grpc.Deadline(0.13), half) is None

    @pytest.mark.parametrize(
        "error",
        [
            ToolHistoryError(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams", "WatchConversation"),
            ToolHistoryError(grpc.StatusCode.UNAVAILABLE, "down", "GetReplayHistory", retry_after_ms=100),
        ],
    )
    def test_retries_nothing_else(self, error: ToolHistoryError) -> None:
        assert _grpc.retry_delay(error, 1, 3, _grpc.Deadline(10.0)) is None

    @pytest.mark.parametrize("max_attempts", [0, -1, 1.5, True, "3"])
    def test_refuses_a_number_of_attempts_that_is_no_count(self, max_attempts: object) -> None:
        with pytest.raises(ValueError, match=r"max_attempts: .* is not a whole number, 1 or more"):
            _grpc.check_max_attempts(max_attempts)


class TestSubscription:
    def subscription(self, reconnect: bool = True) -> _grpc.Subscription:
        return _grpc.Subscription(
            tenant_id="t1", from_position=7, types=["RunCompleted", "RunFailed"], reconnect=reconnect
        )

    def test_resumes_after_the_last_position_delivered(self) -> None:
        subscription = self.subscription()
        assert subscription.request() == pb.SubscribeToolEventsRequest(
            tenant_id="t1", from_position=7, types=["RunCompleted", "RunFailed"]
        )
        event = pb.RecordedEvent(position=12, type="RunCompleted", payload_json='{"type":"RunCompleted","x":[1]}')
        event.recorded_at.FromSeconds(1_700_000_000)
        delivered = subscription.delivered(event)
        assert subscription.request().from_position == 12
        assert (delivered.position, delivered.type, delivered.event) == (
            12,
            "RunCompleted",
            {"type": "RunCompleted", "x": [1]},
        )
        assert delivered.recorded_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
        assert delivered.occurred_at is None
        assert delivered.raw is event

    def test_reconnects_on_unavailable_with_growing_backoff(self) -> None:
        subscription = self.subscription()
        error = ToolHistoryError(grpc.StatusCode.UNAVAILABLE, "try again", "SubscribeToolEvents")
        delays = [subscription.retry_after(error) for _ in range(8)]
        assert all(delay is not None for delay in delays)
        ceilings = [min(5.0, 0.1 * 2**failures) for failures in range(8)]
        assert all(c / 2 <= d <= c for d, c in zip(delays, ceilings, strict=True))
        # A delivered event means the stream works again: the next failure waits the shortest time.
        subscription.delivered(pb.RecordedEvent(position=8))
        assert subscription.retry_after(error) <= 0.1  # type: ignore[operator]

    @pytest.mark.parametrize(
        "code", [c for c in grpc.StatusCode if c not in (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE)]
    )
    def test_ends_on_another_status(self, code: grpc.StatusCode) -> None:
        # RESOURCE_EXHAUSTED included: the tenant's subscription limit, which reconnecting would not lift.
        assert self.subscription().retry_after(ToolHistoryError(code, "no", "S")) is None

    def test_ends_without_reconnect(self) -> None:
        assert (
            self.subscription(reconnect=False).retry_after(ToolHistoryError(grpc.StatusCode.UNAVAILABLE, "x", "S"))
            is None
        )

    @pytest.mark.parametrize(
        ("argument", "value", "message"),
        [
            ("from_position", -1, "from_position: -1 is not a whole number of positions"),
            ("from_position", "12", "from_position: '12' is not a whole number"),
            ("types", "RunCompleted", "types: 'RunCompleted' is one string, not a sequence of event types"),
            ("types", [3], "types: 3 is not a string"),
        ],
    )
    def test_refuses_a_wrong_argument_naming_it(self, argument: str, value: object, message: str) -> None:
        arguments: dict[str, typing.Any] = {"tenant_id": "t1", "from_position": 0, "types": None, "reconnect": True}
        with pytest.raises(ValueError, match="^" + message):
            _grpc.Subscription(**{**arguments, argument: value})

    @given(st.integers(min_value=0, max_value=10_000))
    def test_backoff_stays_within_half_to_all_of_its_ceiling(self, failures: int) -> None:
        ceiling = min(5.0, 0.1 * 2.0 ** min(failures, 16))
        assert ceiling / 2 <= _grpc.reconnect_delay(failures) <= ceiling
