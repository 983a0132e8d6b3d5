"""Client of the webhooks API.

``generated`` is produced by openapi-python-client from the API's OpenAPI document
(``scripts/generate-clients.ts``; never edited by hand): one module per operation under
``generated.api.default`` and the models under ``generated.models``. Around it, by hand:
``connect`` (bearer token and retries of 429 and 503), ``paginate`` (the cursor wrapper of
list endpoints), ``ApiError`` and ``verify_webhook`` (the receiver's signature check).
"""

from .client import connect
from .errors import ApiError, unwrap
from .paging import apaginate, paginate
from .retry import RetryPolicy, RetryTransport, retry_after_seconds
from .webhook import VerifiedWebhook, WebhookVerificationError, verify_webhook

__all__ = [
    "ApiError",
    "RetryPolicy",
    "RetryTransport",
    "VerifiedWebhook",
    "WebhookVerificationError",
    "apaginate",
    "connect",
    "paginate",
    "retry_after_seconds",
    "unwrap",
    "verify_webhook",
]
