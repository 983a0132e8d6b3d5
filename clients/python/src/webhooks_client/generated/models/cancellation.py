from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Cancellation")


@_attrs_define
class Cancellation:
    """
    Attributes:
        webhook_id (UUID):
        workflow_id (str):
        cancel_requested (bool):
    """

    webhook_id: UUID
    workflow_id: str
    cancel_requested: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        webhook_id = str(self.webhook_id)

        workflow_id = self.workflow_id

        cancel_requested = self.cancel_requested

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "webhookID": webhook_id,
                "workflowID": workflow_id,
                "cancelRequested": cancel_requested,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        webhook_id = UUID(d.pop("webhookID"))

        workflow_id = d.pop("workflowID")

        cancel_requested = d.pop("cancelRequested")

        cancellation = cls(
            webhook_id=webhook_id,
            workflow_id=workflow_id,
            cancel_requested=cancel_requested,
        )

        cancellation.additional_properties = d
        return cancellation

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
