"""Retries of answers that say "not now": 429 (a quota or rate limit) and 503 (a dependency
of the API did not answer in time). The wait is the answer's Retry-After when it has one
(seconds or an HTTP date), else a doubling backoff; a wait longer than ``max_delay`` is not
waited for: that answer goes back to the caller as it is."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

RETRIED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` retries after the first try (0: none); ``initial_delay`` seconds before
    the first retry of an answer without Retry-After, doubling; ``max_delay`` the longest wait."""

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        for name in ("initial_delay", "max_delay"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The wait a Retry-After value asks for, or None when absent or not understood."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        at = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


class RetryTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport (sync and async) that retries 429 and 503 answers under ``policy``,
    sending through ``transport`` / ``async_transport`` (httpx's own by default)."""

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self._sync = transport
        self._async = async_transport

    def _wait(self, response: httpx.Response, retry: int) -> float | None:
        if response.status_code not in RETRIED_STATUSES or retry >= self.policy.max_retries:
            return None
        wait = retry_after_seconds(response.headers.get("retry-after"))
        if wait is None:
            wait = self.policy.initial_delay * 2**retry
        return None if wait > self.policy.max_delay else wait

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._sync is None:
            self._sync = httpx.HTTPTransport()
        retry = 0
        while True:
            response = self._sync.handle_request(request)
            wait = self._wait(response, retry)
            if wait is None:
                return response
            response.close()
            time.sleep(wait)
            retry += 1

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._async is None:
            self._async = httpx.AsyncHTTPTransport()
        retry = 0
        while True:
            response = await self._async.handle_async_request(request)
            wait = self._wait(response, retry)
            if wait is None:
                return response
            await response.aclose()
            await asyncio.sleep(wait)
            retry += 1

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()
