"""Receiver side: checks that a delivery was signed by the service. The scheme is Standard
Webhooks: HMAC-SHA256 over ``<id>.<unix seconds>.<body>``, keyed by the base64-decoded secret
(written with or without a ``whsec_`` prefix), sent as space-separated ``v1,<base64>``
signatures (two while a rotated secret overlaps). The headers are ``svc-webhook-id``,
``svc-webhook-timestamp`` and ``svc-webhook-signature``, or the same without ``svc-``."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PREFIXES = ("webhook-", "svc-webhook-")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


class WebhookVerificationError(Exception):
    """Why a delivery does not verify. ``code`` is one of missing-header, invalid-timestamp,
    timestamp-out-of-tolerance, invalid-secret, no-matching-signature."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class VerifiedWebhook:
    """``id``: the webhook (delivery) id, the same on every retry of one delivery (a key to
    drop duplicates); ``timestamp``: when it was signed, in unix seconds."""

    id: str
    timestamp: int


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _signed_headers(headers: Mapping[str, str]) -> tuple[str, str, str]:
    prefix = next((p for p in PREFIXES if _header(headers, p + "id") is not None), PREFIXES[1])
    names = [prefix + n for n in ("id", "timestamp", "signature")]
    values = [_header(headers, n) for n in names]
    missing = [n for n, v in zip(names, values, strict=True) if not v]
    if missing:
        raise WebhookVerificationError(
            "missing-header", f'missing header {", ".join(missing)} (or the same names without "svc-")'
        )
    return values[0], values[1], values[2]  # type: ignore[return-value]


def _key(secret: str) -> bytes:
    text = secret.removeprefix("whsec_")
    try:
        if not _BASE64.match(text):
            raise ValueError(text)
        return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raise WebhookVerificationError("invalid-secret", "the secret is not base64 (with or without whsec_)") from None


def verify_webhook(
    secret: str | Iterable[str],
    headers: Mapping[str, str],
    body: bytes | str,
    *,
    tolerance_seconds: int = 300,
    now: float | None = None,
) -> VerifiedWebhook:
    """Verifies one delivery: ``body`` must be the exact bytes received, ``headers`` any
    mapping of header names (any case) to values. Returns its id and timestamp, or raises
    WebhookVerificationError saying why it does not verify. With several secrets (a rotation
    on the receiver's side), any one of them is enough. ``tolerance_seconds`` 0 turns the
    timestamp check off."""
    keys = [_key(s) for s in ([secret] if isinstance(secret, str) else list(secret))]
    webhook_id, raw_timestamp, signature = _signed_headers(headers)
    if not raw_timestamp.isascii() or not raw_timestamp.isdigit():
        raise WebhookVerificationError("invalid-timestamp", f"timestamp {raw_timestamp!r} is not unix seconds")
    timestamp = int(raw_timestamp)
    current = int(time.time() if now is None else now)
    if tolerance_seconds > 0 and abs(current - timestamp) > tolerance_seconds:
        raise WebhookVerificationError(
            "timestamp-out-of-tolerance",
            f"timestamp {timestamp} is {current - timestamp} s from now, more than {tolerance_seconds} s",
        )
    data = body.encode("utf-8") if isinstance(body, str) else body
    offered = []
    for part in signature.split(" "):
        if part.startswith("v1,"):
            try:
                offered.append(base64.b64decode(part[3:]))
            except binascii.Error:
                continue
    signed = f"{webhook_id}.{timestamp}.".encode() + data
    for key in keys:
        expected = hmac.new(key, signed, hashlib.sha256).digest()
        if any(hmac.compare_digest(expected, sig) for sig in offered):
            return VerifiedWebhook(id=webhook_id, timestamp=timestamp)
    raise WebhookVerificationError("no-matching-signature", "no v1 signature matches the body with this secret")
