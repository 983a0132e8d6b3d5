from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_status import DeliveryStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt import Attempt


T = TypeVar("T", bound="Delivery")


@_attrs_define
class Delivery:
    """One event delivered to one config: the aggregate of its attempts. `waiting`: its first send waits for the rate limit
    service (no attempt yet; `reason` says why, `nextRetryAfter` until when).

        Attributes:
            webhook_id (UUID):
            config_id (UUID):
            status (DeliveryStatus):
            attempt_count (int):
            attempts (list[Attempt]):
            workflow_id (str | Unset): its Temporal workflow (absent for test deliveries)
            reason (str | Unset): why it failed, when it did, or why it waits
            accepted_at (datetime.datetime | Unset): when it started, for a delivery not sent yet (its caps count from here)
            last_status_code (int | Unset):
            next_retry_after (datetime.datetime | Unset):
            first_attempt_at (datetime.datetime | Unset):
            last_attempt_at (datetime.datetime | Unset):
    """

    webhook_id: UUID
    config_id: UUID
    status: DeliveryStatus
    attempt_count: int
    attempts: list[Attempt]
    workflow_id: str | Unset = UNSET
    reason: str | Unset = UNSET
    accepted_at: datetime.datetime | Unset = UNSET
    last_status_code: int | Unset = UNSET
    next_retry_after: datetime.datetime | Unset = UNSET
    first_attempt_at: datetime.datetime | Unset = UNSET
    last_attempt_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        webhook_id = str(self.webhook_id)

        config_id = str(self.config_id)

        status = self.status.value

        attempt_count = self.attempt_count

        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)

        workflow_id = self.workflow_id

        reason = self.reason

        accepted_at: str | Unset = UNSET
        if not isinstance(self.accepted_at, Unset):
            accepted_at = self.accepted_at.isoformat()

        last_status_code = self.last_status_code

        next_retry_after: str | Unset = UNSET
        if not isinstance(self.next_retry_after, Unset):
            next_retry_after = self.next_retry_after.isoformat()

        first_attempt_at: str | Unset = UNSET
        if not isinstance(self.first_attempt_at, Unset):
            first_attempt_at = self.first_attempt_at.isoformat()

        last_attempt_at: str | Unset = UNSET
        if not isinstance(self.last_attempt_at, Unset):
            last_attempt_at = self.last_attempt_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "webhookID": webhook_id,
                "configID": config_id,
                "status": status,
                "attemptCount": attempt_count,
                "attempts": attempts,
            }
        )
        if workflow_id is not UNSET:
            field_dict["workflowID"] = workflow_id
        if reason is not UNSET:
            field_dict["reason"] = reason
        if accepted_at is not UNSET:
            field_dict["acceptedAt"] = accepted_at
        if last_status_code is not UNSET:
            field_dict["lastStatusCode"] = last_status_code
        if next_retry_after is not UNSET:
            field_dict["nextRetryAfter"] = next_retry_after
        if first_attempt_at is not UNSET:
            field_dict["firstAttemptAt"] = first_attempt_at
        if last_attempt_at is not UNSET:
            field_dict["lastAttemptAt"] = last_attempt_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt  # noqa: PLC0415

        d = dict(src_dict)
        webhook_id = UUID(d.pop("webhookID"))

        config_id = UUID(d.pop("configID"))

        status = DeliveryStatus(d.pop("status"))

        attempt_count = d.pop("attemptCount")

        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in _attempts:
            attempts_item = Attempt.from_dict(attempts_item_data)

            attempts.append(attempts_item)

        workflow_id = d.pop("workflowID", UNSET)

        reason = d.pop("reason", UNSET)

        _accepted_at = d.pop("acceptedAt", UNSET)
        accepted_at: datetime.datetime | Unset
        if isinstance(_accepted_at, Unset):
            accepted_at = UNSET
        else:
            accepted_at = datetime.datetime.fromisoformat(_accepted_at)

        last_status_code = d.pop("lastStatusCode", UNSET)

        _next_retry_after = d.pop("nextRetryAfter", UNSET)
        next_retry_after: datetime.datetime | Unset
        if isinstance(_next_retry_after, Unset):
            next_retry_after = UNSET
        else:
            next_retry_after = datetime.datetime.fromisoformat(_next_retry_after)

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

        delivery = cls(
            webhook_id=webhook_id,
            config_id=config_id,
            status=status,
            attempt_count=attempt_count,
            attempts=attempts,
            workflow_id=workflow_id,
            reason=reason,
            accepted_at=accepted_at,
            last_status_code=last_status_code,
            next_retry_after=next_retry_after,
            first_attempt_at=first_attempt_at,
            last_attempt_at=last_attempt_at,
        )

        delivery.additional_properties = d
        return delivery

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
