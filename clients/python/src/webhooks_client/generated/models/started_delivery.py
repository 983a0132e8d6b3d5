from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="StartedDelivery")


@_attrs_define
class StartedDelivery:
    """A delivery an event (ingested or replayed) asked for

    Attributes:
        config_id (UUID):
        webhook_id (UUID):
        workflow_id (str):
        started (bool): false when this delivery had started before (it is not started twice)
    """

    config_id: UUID
    webhook_id: UUID
    workflow_id: str
    started: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        config_id = str(self.config_id)

        webhook_id = str(self.webhook_id)

        workflow_id = self.workflow_id

        started = self.started

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "configID": config_id,
                "webhookID": webhook_id,
                "workflowID": workflow_id,
                "started": started,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        config_id = UUID(d.pop("configID"))

        webhook_id = UUID(d.pop("webhookID"))

        workflow_id = d.pop("workflowID")

        started = d.pop("started")

        started_delivery = cls(
            config_id=config_id,
            webhook_id=webhook_id,
            workflow_id=workflow_id,
            started=started,
        )

        started_delivery.additional_properties = d
        return started_delivery

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
