from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Replay")


@_attrs_define
class Replay:
    """
    Attributes:
        webhook_id (UUID): the new delivery
        replay_of (UUID):
        workflow_id (str): its Temporal workflow
        created (bool):
    """

    webhook_id: UUID
    replay_of: UUID
    workflow_id: str
    created: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        webhook_id = str(self.webhook_id)

        replay_of = str(self.replay_of)

        workflow_id = self.workflow_id

        created = self.created

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "webhookID": webhook_id,
                "replayOf": replay_of,
                "workflowID": workflow_id,
                "created": created,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        webhook_id = UUID(d.pop("webhookID"))

        replay_of = UUID(d.pop("replayOf"))

        workflow_id = d.pop("workflowID")

        created = d.pop("created")

        replay = cls(
            webhook_id=webhook_id,
            replay_of=replay_of,
            workflow_id=workflow_id,
            created=created,
        )

        replay.additional_properties = d
        return replay

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
