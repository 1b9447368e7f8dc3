"""The clients' channel: credentials, options, where a token may go, tokens and deadlines."""

from __future__ import annotations

import ipaddress
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from toolhistory.errors import ToolHistoryError

DEFAULT_TIMEOUT = 30.0
"""Seconds a call may take when neither the call nor the client names a deadline."""
ERASE_TIMEOUT = 30.0
"""An erasure removes a whole conversation in one transaction: by default it may take at least this long."""

# -- The channel: credentials, options, and where a token may go.


@dataclass(frozen=True)
class TlsConfig:
    """TLS settings of the channel (PEM bytes).

    Attributes:
        root_certificates: the CAs to trust; ``None``: the system's roots.
        private_key: the client's key, with ``certificate_chain``, for mutual TLS.
        certificate_chain: the client's certificate chain, with ``private_key``.
        server_name_override: the name to check the server's certificate against instead of the address's host.
    """

    root_certificates: bytes | None = None
    private_key: bytes | None = None
    certificate_chain: bytes | None = None
    server_name_override: str | None = None


@dataclass(frozen=True)
class ChannelSetup:
    """How the clients open their channel: ``credentials`` is ``None`` for plaintext."""

    address: str
    credentials: grpc.ChannelCredentials | None
    options: list[tuple[str, Any]]


def channel_setup(
    address: str,
    *,
    token_given: bool,
    tls: bool | TlsConfig,
    channel_options: Sequence[tuple[str, Any]],
    allow_token_without_tls: bool,
) -> ChannelSetup:
    """The channel of the clients' arguments, refusing a token in the clear to another machine."""
    if not isinstance(address, str) or not address:
        raise ValueError(f"address: {address!r} is not a host:port")
    if not isinstance(tls, (bool, TlsConfig)):
        raise ValueError(f"tls: {tls!r} is neither a bool nor a TlsConfig")
    if token_given and tls is False and not allow_token_without_tls and not is_loopback(address):
        raise ValueError(
            f"token: a bearer token is not sent in the clear to {address}: set tls, or allow_token_without_tls=True "
            "when something else encrypts the connection"
        )
    options = list(channel_options)
    if tls is False:
        return ChannelSetup(address, None, options)
    if tls is True:
        return ChannelSetup(address, grpc.ssl_channel_credentials(), options)
    if (tls.private_key is None) != (tls.certificate_chain is None):
        raise ValueError("tls: private_key and certificate_chain go together (mutual TLS needs both)")
    if tls.server_name_override is not None:
        options.append(("grpc.ssl_target_name_override", tls.server_name_override))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.root_certificates,
        private_key=tls.private_key,
        certificate_chain=tls.certificate_chain,
    )
    return ChannelSetup(address, credentials, options)


def is_loopback(address: str) -> bool:
    """Whether a gRPC target names this machine: 127.0.0.0/8, ::1, localhost, or a unix socket."""
    target = address.strip().lower()
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    if target.startswith("dns:"):
        # dns:host:port, dns:///host:port, dns://resolver/host:port
        target = target[len("dns:") :]
        if target.startswith("//"):
            target = target[2:].split("/", 1)[-1]
    elif target.startswith(("ipv4:", "ipv6:")):
        hosts = target.split(":", 1)[1].split(",")
        return all(_is_loopback_host(_host_of(host)) for host in hosts)
    return _is_loopback_host(_host_of(target))


def _host_of(host_port: str) -> str:
    if host_port.startswith("["):
        return host_port[1:].split("]", 1)[0]
    if host_port.count(":") == 1:
        return host_port.split(":", 1)[0]
    return host_port  # no port, or a bare IPv6 address


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- Tokens and deadlines.


def check_token_source(token: object) -> None:
    """Refuses a token that is neither a non-empty string nor a callable."""
    if token is None or callable(token):
        return
    if not isinstance(token, str) or not token:
        raise ValueError(f"token: {_redacted(token)} is neither a non-empty string nor a function that returns one")


TENANT_METADATA_KEY = "toolhistory-tenant"
"""The request metadata naming the tenant a read is for, beside the request's own ``tenant_id``: a flooded service
refuses the read from its headers alone, before reading it (libs/contract/src/request-metadata.ts)."""


def tenant_metadata(request: object) -> tuple[tuple[str, str], ...]:
    """The request's tenant as a header (none when it names none, or one a header cannot carry as it is)."""
    tenant = getattr(request, "tenant_id", "")
    if not isinstance(tenant, str) or not tenant or not all(" " <= c <= "~" for c in tenant):
        return ()
    return ((TENANT_METADATA_KEY, tenant),)


def authorization_metadata(token: object) -> tuple[tuple[str, str], ...]:
    """The call's headers for a fetched token (none without one)."""
    if token is None:
        return ()
    if not isinstance(token, str) or not token or "\n" in token or "\r" in token:
        raise ValueError(f"token: the token source returned {_redacted(token)}, not a non-empty one-line string")
    return (("authorization", f"Bearer {token}"),)


def _redacted(token: object) -> str:
    # Never repeat a credential in an error message: say what kind of value it was.
    return repr(token) if token is None or token == "" else f"a {type(token).__name__}"


def check_timeout(name: str, timeout: object) -> float | None:
    """A deadline in seconds (``None``: none), or a ValueError naming the argument."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"{name}: {timeout!r} is not a number of seconds above 0 (or None)")
    return float(timeout)


def erase_timeout(timeout: float | None, default: float | None) -> float | None:
    """An erasure's deadline: the call's, else the client's but at least ERASE_TIMEOUT."""
    if timeout is not None:
        return check_timeout("timeout", timeout)
    return None if default is None else max(default, ERASE_TIMEOUT)


class Deadline:
    """A call's deadline, taken before its token is fetched: a slow identity provider must not hold a turn past it."""

    def __init__(self, timeout: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._at = None if timeout is None else clock() + timeout

    def left(self) -> float | None:
        """Seconds left, 0 at the least (``None``: no deadline)."""
        return None if self._at is None else max(0.0, self._at - self._clock())

    def remaining(self, method: str) -> float | None:
        """Seconds left (``None``: no deadline); DEADLINE_EXCEEDED when none are."""
        if self._at is None:
            return None
        left = self._at - self._clock()
        if left <= 0:
            raise ToolHistoryError(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the call was sent", method
            )
        return left


# -- Busy refusals: the pushback honoured.

DEFAULT_MAX_ATTEMPTS = 3
"""A call refused RESOURCE_EXHAUSTED with a pushback is tried this often in all, by default (within its deadline)."""
_MIN_TIME_FOR_AN_ATTEMPT = 0.01


def check_max_attempts(max_attempts: object) -> int:
    """A number of attempts, 1 or more, or a ValueError naming the argument."""
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts: {max_attempts!r} is not a whole number, 1 or more")
    return max_attempts


def jittered_pushback(pushback_ms: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait after a pushback: never sooner than the service asked, and up to half as long again at
    random, so callers refused together do not come back together."""
    return pushback_ms * (1 + rand() / 2) / 1000


def retry_delay(
    error: ToolHistoryError,
    attempt: int,
    max_attempts: int,
    deadline: Deadline,
    rand: Callable[[], float] = random.random,
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or ``None`` to give up now.

    Only RESOURCE_EXHAUSTED with a pushback is retried (the service said when to come back), at most
    ``max_attempts`` in all, and only when the wait leaves time for an attempt before the deadline: a turn is
    better served by failing fast than by waiting past it.
    """
    if error.code != grpc.StatusCode.RESOURCE_EXHAUSTED or error.retry_after_ms is None or attempt >= max_attempts:
        return None
    wait = jittered_pushback(error.retry_after_ms, rand)
    left = deadline.left()
    if left is not None and wait + _MIN_TIME_FOR_AN_ATTEMPT > left:
        return None
    return wait
