"""The installed wheel against the live API (WEBHOOKS_URL, with authentication on and a
bearer token in WEBHOOKS_TOKEN), started with its worker and Temporal by
test/clients/python-client.test.ts: a tenant, a config whose endpoint is this process,
events, paging through the deliveries, a replay, the secret, and the verifier on the
deliveries that really arrived."""

import os
import secrets
import time
from uuid import UUID

import pytest

from webhooks_client import ApiError, RetryPolicy, WebhookVerificationError, connect, paginate, unwrap, verify_webhook
from webhooks_client.generated.api.default import (
    create_config,
    create_tenant,
    get_config,
    get_config_secret,
    ingest_event,
    list_config_deliveries,
    list_configs,
    replay_delivery,
)
from webhooks_client.generated.api.default import (
    test_config as send_test,
)
from webhooks_client.generated.models import ConfigUser, EventMessage, TenantUser

BASE_URL = os.environ.get("WEBHOOKS_URL")
TOKEN = os.environ.get("WEBHOOKS_TOKEN")
if not BASE_URL or not TOKEN:
    raise RuntimeError("set WEBHOOKS_URL and WEBHOOKS_TOKEN (a running API with authentication on)")
RUN = secrets.token_hex(4)


def until(what, check, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_tenant_config_events_paged_deliveries_replay_secret_and_verified_deliveries(server):
    api = connect(BASE_URL, TOKEN)
    endpoint = f"{server.url}/hook"
    tenant = unwrap(
        create_tenant.sync_detailed(client=api, body=TenantUser(uid=f"py-{RUN}", name="Python client"))
    ).data
    config = unwrap(
        create_config.sync_detailed(
            client=api, body=ConfigUser(endpoint=endpoint, event_types=["clients.order_paid"], tenant_id=tenant.id)
        )
    ).data
    assert config.tenant_id == tenant.id

    for i in range(3):
        event = EventMessage(
            type_="order_paid", app="clients", idempotency_key=f"py-{RUN}-{i}", tenant=tenant.uid, payload={"i": i}
        )
        ingested = ingest_event.sync_detailed(client=api, body=event)
        assert ingested.status_code == 202
        assert unwrap(ingested).data.configs == 1
    until("3 deliveries", lambda: len(server.requests) >= 3)

    # Two items a page: the three deliveries come over two pages.
    pages = []

    def page(**arguments):
        pages.append(arguments["cursor"])
        return list_config_deliveries.sync_detailed(**arguments)

    def delivered():
        pages.clear()
        found = list(paginate(page, client=api, id=config.id, page_size="2"))
        return len(found) == 3 and all(d.status == "success" for d in found) and found

    listed = until("3 delivered deliveries", delivered)
    assert len(pages) == 2
    received_ids = sorted(r["headers"]["svc-webhook-id"] for r in server.requests)
    assert sorted(str(d.webhook_id) for d in listed) == received_ids

    original = listed[0].webhook_id
    replay = replay_delivery.sync_detailed(original, client=api, idempotency_key=f"replay-{RUN}")
    assert replay.status_code == 202
    new_id = str(unwrap(replay).data.webhook_id)
    assert unwrap(replay).data.replay_of == original
    until("the replay's delivery", lambda: any(r["headers"]["svc-webhook-id"] == new_id for r in server.requests))

    secret = unwrap(get_config_secret.sync_detailed(config.id, client=api)).data.secret
    assert secret == config.secret
    for r in server.requests:
        assert verify_webhook(secret, r["headers"], r["body"]).id == r["headers"]["svc-webhook-id"]
        with pytest.raises(WebhookVerificationError) as raised:
            verify_webhook(secret, r["headers"], r["body"] + b" ")
        assert raised.value.code == "no-matching-signature"


def test_failures_raise_api_error_with_the_api_code():
    with pytest.raises(ApiError) as missing:
        unwrap(get_config.sync_detailed(UUID("00000000-0000-4000-8000-000000000000"), client=connect(BASE_URL, TOKEN)))
    assert (missing.value.status, missing.value.code) == (404, "NOT_FOUND")
    with pytest.raises(ApiError) as refused:
        unwrap(list_configs.sync_detailed(client=connect(BASE_URL)))
    assert (refused.value.status, refused.value.code) == (401, "UNAUTHORIZED")


def test_a_real_429_whose_retry_after_is_longer_than_max_delay_comes_back_at_once(server):
    # The API runs with --config-max-test-sends 1: the second test send of a minute is refused.
    impatient = connect(BASE_URL, TOKEN, retry=RetryPolicy(max_delay=0.1))
    body = ConfigUser(endpoint=f"{server.url}/hook", event_types=["clients.pinged"])
    config = unwrap(create_config.sync_detailed(client=impatient, body=body)).data
    unwrap(send_test.sync_detailed(config.id, client=impatient))
    started = time.monotonic()
    refused = send_test.sync_detailed(config.id, client=impatient)
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) > 0
    assert time.monotonic() - started < 5
    with pytest.raises(ApiError) as raised:
        unwrap(refused)
    assert raised.value.code == "RATE_LIMITED"
