from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.ordering_key_state import OrderingKeyState
from ..types import UNSET, Unset

T = TypeVar("T", bound="OrderingKey")


@_attrs_define
class OrderingKey:
    """
    Attributes:
        ordering_key (str):
        state (OrderingKeyState):
        workflow_id (str): the key's sequencer workflow (Temporal Web UI)
        queued (int): deliveries of the key whose turn has not ended (the head included)
        updated_at (datetime.datetime):
        head_webhook_id (UUID | Unset): the delivery holding the key, when blocked
        reason (str | Unset): why the head failed, when blocked
    """

    ordering_key: str
    state: OrderingKeyState
    workflow_id: str
    queued: int
    updated_at: datetime.datetime
    head_webhook_id: UUID | Unset = UNSET
    reason: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ordering_key = self.ordering_key

        state = self.state.value

        workflow_id = self.workflow_id

        queued = self.queued

        updated_at = self.updated_at.isoformat()

        head_webhook_id: str | Unset = UNSET
        if not isinstance(self.head_webhook_id, Unset):
            head_webhook_id = str(self.head_webhook_id)

        reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "orderingKey": ordering_key,
                "state": state,
                "workflowId": workflow_id,
                "queued": queued,
                "updatedAt": updated_at,
            }
        )
        if head_webhook_id is not UNSET:
            field_dict["headWebhookID"] = head_webhook_id
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ordering_key = d.pop("orderingKey")

        state = OrderingKeyState(d.pop("state"))

        workflow_id = d.pop("workflowId")

        queued = d.pop("queued")

        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))

        _head_webhook_id = d.pop("headWebhookID", UNSET)
        head_webhook_id: UUID | Unset
        if isinstance(_head_webhook_id, Unset):
            head_webhook_id = UNSET
        else:
            head_webhook_id = UUID(_head_webhook_id)

        reason = d.pop("reason", UNSET)

        ordering_key = cls(
            ordering_key=ordering_key,
            state=state,
            workflow_id=workflow_id,
            queued=queued,
            updated_at=updated_at,
            head_webhook_id=head_webhook_id,
            reason=reason,
        )

        ordering_key.additional_properties = d
        return ordering_key

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
