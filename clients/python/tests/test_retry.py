"""Retries of 429 and 503 against a real HTTP server that answers them on purpose (the live
API answers 503 only when a dependency is down): what is waited for, what is not, and that a
retried POST sends its body again; sync and async."""

import asyncio
import json
import time

import pytest

from webhooks_client import ApiError, RetryPolicy, connect, unwrap
from webhooks_client.generated.api.default import ingest_event, list_configs
from webhooks_client.generated.models import EventMessage


def test_503_with_retry_after_is_tried_again_with_the_token_and_the_same_body(server):
    server.script = [(503, {"retry-after": "1"}), (429, {"retry-after": "0"})]
    api = connect(server.url, "t0k3n")
    response = ingest_event.sync_detailed(client=api, body=EventMessage(type_="b", app="a", idempotency_key="k1"))
    assert response.status_code == 200
    assert len(server.requests) == 3
    assert server.requests[1]["at"] - server.requests[0]["at"] >= 0.99
    for r in server.requests:
        assert r["headers"]["authorization"] == "Bearer t0k3n"
        assert json.loads(r["body"]) == {"type": "b", "app": "a", "idempotency_key": "k1"}


def test_without_retry_after_the_wait_doubles_then_the_answer_is_returned(server):
    server.script = [(503, {}), (503, {}), (503, {})]
    api = connect(server.url, retry=RetryPolicy(max_retries=2, initial_delay=0.1))
    response = list_configs.sync_detailed(client=api)
    assert response.status_code == 503
    at = [r["at"] for r in server.requests]
    assert len(at) == 3 and at[1] - at[0] >= 0.095 and at[2] - at[1] >= 0.195
    with pytest.raises(ApiError) as raised:
        unwrap(response)
    assert raised.value.code == "UNAVAILABLE"


def test_a_retry_after_longer_than_max_delay_is_not_waited_for(server):
    server.script = [(429, {"retry-after": "120"})]
    started = time.monotonic()
    response = list_configs.sync_detailed(client=connect(server.url))
    assert response.status_code == 429 and len(server.requests) == 1
    assert time.monotonic() - started < 1


def test_async_calls_retry_too(server):
    server.script = [(503, {"retry-after": "0"})]
    response = asyncio.run(list_configs.asyncio_detailed(client=connect(server.url)))
    assert response.status_code == 200 and len(server.requests) == 2


def test_off_and_bad_input(server):
    server.script = [(503, {"retry-after": "0"})]
    assert list_configs.sync_detailed(client=connect(server.url, retry=None)).status_code == 503
    assert len(server.requests) == 1
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="base_url must be an absolute"):
        connect("localhost:8080")
