"""The generated client with the bearer token and retries of 429 and 503."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from .generated.client import AuthenticatedClient, Client
from .retry import RetryPolicy, RetryTransport

DEFAULT_RETRY = RetryPolicy()


def connect(
    base_url: str,
    token: str | None = None,
    *,
    retry: RetryPolicy | None = DEFAULT_RETRY,
    timeout: float = 30.0,
) -> AuthenticatedClient | Client:
    """A client of the API at ``base_url``: with ``token``, every request carries
    ``Authorization: Bearer <token>``; ``retry`` (None turns it off) retries 429 and 503
    answers, sync and async calls alike. Pass it as ``client=`` to any operation of
    ``webhooks_client.generated.api.default``."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url must be an absolute http(s) URL, got {base_url!r}")
    if token is not None and not token:
        raise ValueError("token is empty")
    httpx_args: dict[str, object] = {}
    if retry is not None:
        # One transport serves the sync and the async httpx client the generated client makes.
        httpx_args = {"transport": RetryTransport(retry)}
    options = {
        "base_url": base_url.rstrip("/"),
        "timeout": httpx.Timeout(timeout),
        "httpx_args": httpx_args,
    }
    if token is None:
        return Client(**options)
    return AuthenticatedClient(token=token, **options)
