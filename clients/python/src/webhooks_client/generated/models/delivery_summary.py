from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_summary_status import DeliverySummaryStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeliverySummary")


@_attrs_define
class DeliverySummary:
    """One delivery of GET /configs/{id}/deliveries: the Delivery of GET /webhooks/{webhookId} without its attempts, plus
    its event type.

        Attributes:
            webhook_id (UUID):
            config_id (UUID):
            status (DeliverySummaryStatus):
            attempt_count (int):
            event_type (str | Unset): the event's type (absent when the stored body has none)
            last_status_code (int | Unset): HTTP status of the last attempt; 0 when no answer came
            first_attempt_at (datetime.datetime | Unset):
            last_attempt_at (datetime.datetime | Unset):
            accepted_at (datetime.datetime | Unset): when it started, for a delivery not sent yet
            next_retry_after (datetime.datetime | Unset): the next try (status `to retry` or `waiting`)
            reason (str | Unset): why it failed, when it did, or why it waits
            replay_of (UUID | Unset): the webhook this delivery replays
            workflow_id (str | Unset): its Temporal workflow (absent for test deliveries)
    """

    webhook_id: UUID
    config_id: UUID
    status: DeliverySummaryStatus
    attempt_count: int
    event_type: str | Unset = UNSET
    last_status_code: int | Unset = UNSET
    first_attempt_at: datetime.datetime | Unset = UNSET
    last_attempt_at: datetime.datetime | Unset = UNSET
    accepted_at: datetime.datetime | Unset = UNSET
    next_retry_after: datetime.datetime | Unset = UNSET
    reason: str | Unset = UNSET
    replay_of: UUID | Unset = UNSET
    workflow_id: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        webhook_id = str(self.webhook_id)

        config_id = str(self.config_id)

        status = self.status.value

        attempt_count = self.attempt_count

        event_type = self.event_type

        last_status_code = self.last_status_code

        first_attempt_at: str | Unset = UNSET
        if not isinstance(self.first_attempt_at, Unset):
            first_attempt_at = self.first_attempt_at.isoformat()

        last_attempt_at: str | Unset = UNSET
        if not isinstance(self.last_attempt_at, Unset):
            last_attempt_at = self.last_attempt_at.isoformat()

        accepted_at: str | Unset = UNSET
        if not isinstance(self.accepted_at, Unset):
            accepted_at = self.accepted_at.isoformat()

        next_retry_after: str | Unset = UNSET
        if not isinstance(self.next_retry_after, Unset):
            next_retry_after = self.next_retry_after.isoformat()

        reason = self.reason

        replay_of: str | Unset = UNSET
        if not isinstance(self.replay_of, Unset):
            replay_of = str(self.replay_of)

        workflow_id = self.workflow_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "webhookID": webhook_id,
                "configID": config_id,
                "status": status,
                "attemptCount": attempt_count,
            }
        )
        if event_type is not UNSET:
            field_dict["eventType"] = event_type
        if last_status_code is not UNSET:
            field_dict["lastStatusCode"] = last_status_code
        if first_attempt_at is not UNSET:
            field_dict["firstAttemptAt"] = first_attempt_at
        if last_attempt_at is not UNSET:
            field_dict["lastAttemptAt"] = last_attempt_at
        if accepted_at is not UNSET:
            field_dict["acceptedAt"] = accepted_at
        if next_retry_after is not UNSET:
            field_dict["nextRetryAfter"] = next_retry_after
        if reason is not UNSET:
            field_dict["reason"] = reason
        if replay_of is not UNSET:
            field_dict["replayOf"] = replay_of
        if workflow_id is not UNSET:
            field_dict["workflowID"] = workflow_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        webhook_id = UUID(d.pop("webhookID"))

        config_id = UUID(d.pop("configID"))

        status = DeliverySummaryStatus(d.pop("status"))

        attempt_count = d.pop("attemptCount")

        event_type = d.pop("eventType", UNSET)

        last_status_code = d.pop("lastStatusCode", UNSET)

        _first_attempt_at = d.pop("firstAttemptAt", UNSET)
        first_attempt_at: datetime.datetime | Unset
        if isinstance(_first_attempt_at, Unset):
            first_attempt_at = UNSET
        else:
            first_attempt_at = datetime.datetime.fromisoformat(_first_attempt_at)

        _last_attempt_at = d.pop("lastAttemptAt", UNSET)
        last_attempt_at: datetime.datetime | Unset
        if isinstance(_last_attempt_at, Unset):
            last_attempt_at = UNSET
        else:
            last_attempt_at = datetime.datetime.fromisoformat(_last_attempt_at)

        _accepted_at = d.pop("acceptedAt", UNSET)
        accepted_at: datetime.datetime | Unset
        if isinstance(_accepted_at, Unset):
            accepted_at = UNSET
        else:
            accepted_at = datetime.datetime.fromisoformat(_accepted_at)

        _next_retry_after = d.pop("nextRetryAfter", UNSET)
        next_retry_after: datetime.datetime | Unset
        if isinstance(_next_retry_after, Unset):
            next_retry_after = UNSET
        else:
            next_retry_after = datetime.datetime.fromisoformat(_next_retry_after)

        reason = d.pop("reason", UNSET)

        _replay_of = d.pop("replayOf", UNSET)
        replay_of: UUID | Unset
        if isinstance(_replay_of, Unset):
            replay_of = UNSET
        else:
            replay_of = UUID(_replay_of)

        workflow_id = d.pop("workflowID", UNSET)

        delivery_summary = cls(
            webhook_id=webhook_id,
            config_id=config_id,
            status=status,
            attempt_count=attempt_count,
            event_type=event_type,
            last_status_code=last_status_code,
            first_attempt_at=first_attempt_at,
            last_attempt_at=last_attempt_at,
            accepted_at=accepted_at,
            next_retry_after=next_retry_after,
            reason=reason,
            replay_of=replay_of,
            workflow_id=workflow_id,
        )

        delivery_summary.additional_properties = d
        return delivery_summary

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
