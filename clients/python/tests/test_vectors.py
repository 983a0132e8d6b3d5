"""The verifier against the shared test vectors (clients/test-vectors.json, path in
TEST_VECTORS): run by test/clients/python-client.test.ts on the installed wheel."""

import json
import os

import pytest

from webhooks_client import WebhookVerificationError, verify_webhook

with open(os.environ["TEST_VECTORS"], encoding="utf-8") as f:
    VECTORS = json.load(f)


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_vector(case):
    def verify(body):
        return verify_webhook(
            case["secret"], case["headers"], body, now=case["now"], tolerance_seconds=VECTORS["toleranceSeconds"]
        )

    if case["expect"] == "ok":
        expected_id = case["headers"].get("webhook-id") or case["headers"]["svc-webhook-id"]
        verified = verify(case["body"].encode("utf-8"))
        assert (verified.id, verified.timestamp) == (expected_id, case["signed"]["timestamp"])
        assert verify(case["body"]).id == expected_id
    else:
        with pytest.raises(WebhookVerificationError) as raised:
            verify(case["body"].encode("utf-8"))
        assert raised.value.code == case["expect"]


def test_header_names_in_any_case():
    case = next(c for c in VECTORS["cases"] if c["expect"] == "ok")
    headers = {k.upper(): v for k, v in case["headers"].items()}
    assert (
        verify_webhook(case["secret"], headers, case["body"], now=case["now"]).timestamp == case["signed"]["timestamp"]
    )


def test_a_secret_that_is_not_base64_is_refused_by_name():
    case = VECTORS["cases"][0]
    with pytest.raises(WebhookVerificationError) as raised:
        verify_webhook("whsec_not base64!", case["headers"], case["body"], now=case["now"])
    assert raised.value.code == "invalid-secret"
