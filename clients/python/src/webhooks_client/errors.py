"""What a failed call raises: the HTTP status with the API's error body."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from .generated.models.error import Error
from .generated.types import Response

T = TypeVar("T")


class ApiError(Exception):
    """An answer that is not the operation's success: ``code`` is the API's errorCode
    (VALIDATION, NOT_FOUND, RATE_LIMITED, ...), or ``HTTP_<status>`` without one."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body
        parsed: Any = None
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            pass
        error = parsed if isinstance(parsed, dict) else {}
        self.code: str = error.get("errorCode") or f"HTTP_{status}"
        message = error.get("errorMessage") or body.decode("utf-8", "replace")
        super().__init__(f"{status} {self.code}: {message}")


def unwrap(response: Response[T]) -> T:
    """The parsed answer of a ``sync_detailed``/``asyncio_detailed`` call when it succeeded
    (2xx); ApiError otherwise."""
    parsed = response.parsed
    if 200 <= response.status_code < 300 and parsed is not None and not isinstance(parsed, Error):
        return parsed
    raise ApiError(int(response.status_code), response.content)
