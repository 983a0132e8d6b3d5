from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.attempt_status import AttemptStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt_config import AttemptConfig
    from ..models.attempt_request_headers import AttemptRequestHeaders
    from ..models.attempt_response import AttemptResponse


T = TypeVar("T", bound="Attempt")


@_attrs_define
class Attempt:
    """
    Attributes:
        id (UUID):
        webhook_id (UUID):
        config (AttemptConfig): snapshot of the config at send time, without its secret
        payload (str): the body that was sent
        status_code (int): HTTP status; 0 when no answer came
        retry_attempt (int):
        status (AttemptStatus):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        duration_ms (int | Unset): how long the send took; absent when there was no send or for old rows
        next_retry_after (datetime.datetime | Unset): when the next try happens (status `to retry`)
        error (str | Unset): transport error, or why the delivery ended
        replay_of (UUID | Unset): the webhook this delivery replays
        batch_id (UUID | Unset): the batch this attempt was sent in (its POST's svc-webhook-id, docs/webhooks/ordering-
            and-batching.md#batched-delivery); absent when sent alone; payload is then this event's element of the array
        request_headers (AttemptRequestHeaders | Unset): the headers of the POST as sent (its last redirect hop): the
            signing headers whole, the values of custom headers and Authorization masked; absent when nothing was sent and
            for attempts recorded before this field
        response (AttemptResponse | Unset): An excerpt of the endpoint's answer, kept with the attempt (and removed with
            it); absent when no answer came
    """

    id: UUID
    webhook_id: UUID
    config: AttemptConfig
    payload: str
    status_code: int
    retry_attempt: int
    status: AttemptStatus
    created_at: datetime.datetime
    updated_at: datetime.datetime
    duration_ms: int | Unset = UNSET
    next_retry_after: datetime.datetime | Unset = UNSET
    error: str | Unset = UNSET
    replay_of: UUID | Unset = UNSET
    batch_id: UUID | Unset = UNSET
    request_headers: AttemptRequestHeaders | Unset = UNSET
    response: AttemptResponse | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        webhook_id = str(self.webhook_id)

        config = self.config.to_dict()

        payload = self.payload

        status_code = self.status_code

        retry_attempt = self.retry_attempt

        status = self.status.value

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        duration_ms = self.duration_ms

        next_retry_after: str | Unset = UNSET
        if not isinstance(self.next_retry_after, Unset):
            next_retry_after = self.next_retry_after.isoformat()

        error = self.error

        replay_of: str | Unset = UNSET
        if not isinstance(self.replay_of, Unset):
            replay_of = str(self.replay_of)

        batch_id: str | Unset = UNSET
        if not isinstance(self.batch_id, Unset):
            batch_id = str(self.batch_id)

        request_headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.request_headers, Unset):
            request_headers = self.request_headers.to_dict()

        response: dict[str, Any] | Unset = UNSET
        if not isinstance(self.response, Unset):
            response = self.response.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "webhookID": webhook_id,
                "config": config,
                "payload": payload,
                "statusCode": status_code,
                "retryAttempt": retry_attempt,
                "status": status,
                "createdAt": created_at,
                "updatedAt": updated_at,
            }
        )
        if duration_ms is not UNSET:
            field_dict["durationMs"] = duration_ms
        if next_retry_after is not UNSET:
            field_dict["nextRetryAfter"] = next_retry_after
        if error is not UNSET:
            field_dict["error"] = error
        if replay_of is not UNSET:
            field_dict["replayOf"] = replay_of
        if batch_id is not UNSET:
            field_dict["batchID"] = batch_id
        if request_headers is not UNSET:
            field_dict["requestHeaders"] = request_headers
        if response is not UNSET:
            field_dict["response"] = response

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt_config import AttemptConfig  # noqa: PLC0415
        from ..models.attempt_request_headers import AttemptRequestHeaders  # noqa: PLC0415
        from ..models.attempt_response import AttemptResponse  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        webhook_id = UUID(d.pop("webhookID"))

        config = AttemptConfig.from_dict(d.pop("config"))

        payload = d.pop("payload")

        status_code = d.pop("statusCode")

        retry_attempt = d.pop("retryAttempt")

        status = AttemptStatus(d.pop("status"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))

        duration_ms = d.pop("durationMs", UNSET)

        _next_retry_after = d.pop("nextRetryAfter", UNSET)
        next_retry_after: datetime.datetime | Unset
        if isinstance(_next_retry_after, Unset):
            next_retry_after = UNSET
        else:
            next_retry_after = datetime.datetime.fromisoformat(_next_retry_after)

        error = d.pop("error", UNSET)

        _replay_of = d.pop("replayOf", UNSET)
        replay_of: UUID | Unset
        if isinstance(_replay_of, Unset):
            replay_of = UNSET
        else:
            replay_of = UUID(_replay_of)

        _batch_id = d.pop("batchID", UNSET)
        batch_id: UUID | Unset
        if isinstance(_batch_id, Unset):
            batch_id = UNSET
        else:
            batch_id = UUID(_batch_id)

        _request_headers = d.pop("requestHeaders", UNSET)
        request_headers: AttemptRequestHeaders | Unset
        if isinstance(_request_headers, Unset):
            request_headers = UNSET
        else:
            request_headers = AttemptRequestHeaders.from_dict(_request_headers)

        _response = d.pop("response", UNSET)
        response: AttemptResponse | Unset
        if isinstance(_response, Unset):
            response = UNSET
        else:
            response = AttemptResponse.from_dict(_response)

        attempt = cls(
            id=id,
            webhook_id=webhook_id,
            config=config,
            payload=payload,
            status_code=status_code,
            retry_attempt=retry_attempt,
            status=status,
            created_at=created_at,
            updated_at=updated_at,
            duration_ms=duration_ms,
            next_retry_after=next_retry_after,
            error=error,
            replay_of=replay_of,
            batch_id=batch_id,
            request_headers=request_headers,
            response=response,
        )

        attempt.additional_properties = d
        return attempt

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
