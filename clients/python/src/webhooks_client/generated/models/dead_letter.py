from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.dead_letter_kind import DeadLetterKind
from ..models.dead_letter_status import DeadLetterStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeadLetter")


@_attrs_define
class DeadLetter:
    """A broker message whose deliveries could not start: kept with its reason until replayed or deleted.

    Attributes:
        id (UUID):
        topic (str):
        position (str): where the broker holds it: nats:<stream>:<sequence> or kafka:<topic>:<partition>:<offset>
        kind (DeadLetterKind): permanent: retrying cannot help (event over a bound, config row unusable, start refused
            by Temporal); exhausted: failures that may pass outlasted --broker-max-deliveries
        reason (str):
        delivery_count (int): deliveries of the message by the broker
        status (DeadLetterStatus):
        replay_attempts (int):
        message_bytes (int):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        event_type (str | Unset): the normalised event type
        config_id (UUID | Unset): the config whose start failed; absent when the whole message failed
        tenant_id (UUID | Unset): the event's tenant (or its config's); absent when the message did not parse or named a
            tenant that does not exist
        last_replay_error (str | Unset): why the last replay did not start everything
        replayed_at (datetime.datetime | Unset):
        message (str | Unset): the message as consumed (GET of one dead letter)
        message_base_64 (str | Unset): instead of message when it is not UTF-8
        message_preview (str | Unset): its first 200 characters (lists)
        message_preview_base_64 (str | Unset):
    """

    id: UUID
    topic: str
    position: str
    kind: DeadLetterKind
    reason: str
    delivery_count: int
    status: DeadLetterStatus
    replay_attempts: int
    message_bytes: int
    created_at: datetime.datetime
    updated_at: datetime.datetime
    event_type: str | Unset = UNSET
    config_id: UUID | Unset = UNSET
    tenant_id: UUID | Unset = UNSET
    last_replay_error: str | Unset = UNSET
    replayed_at: datetime.datetime | Unset = UNSET
    message: str | Unset = UNSET
    message_base_64: str | Unset = UNSET
    message_preview: str | Unset = UNSET
    message_preview_base_64: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        topic = self.topic

        position = self.position

        kind = self.kind.value

        reason = self.reason

        delivery_count = self.delivery_count

        status = self.status.value

        replay_attempts = self.replay_attempts

        message_bytes = self.message_bytes

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        event_type = self.event_type

        config_id: str | Unset = UNSET
        if not isinstance(self.config_id, Unset):
            config_id = str(self.config_id)

        tenant_id: str | Unset = UNSET
        if not isinstance(self.tenant_id, Unset):
            tenant_id = str(self.tenant_id)

        last_replay_error = self.last_replay_error

        replayed_at: str | Unset = UNSET
        if not isinstance(self.replayed_at, Unset):
            replayed_at = self.replayed_at.isoformat()

        message = self.message

        message_base_64 = self.message_base_64

        message_preview = self.message_preview

        message_preview_base_64 = self.message_preview_base_64

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "topic": topic,
                "position": position,
                "kind": kind,
                "reason": reason,
                "deliveryCount": delivery_count,
                "status": status,
                "replayAttempts": replay_attempts,
                "messageBytes": message_bytes,
                "createdAt": created_at,
                "updatedAt": updated_at,
            }
        )
        if event_type is not UNSET:
            field_dict["eventType"] = event_type
        if config_id is not UNSET:
            field_dict["configID"] = config_id
        if tenant_id is not UNSET:
            field_dict["tenantID"] = tenant_id
        if last_replay_error is not UNSET:
            field_dict["lastReplayError"] = last_replay_error
        if replayed_at is not UNSET:
            field_dict["replayedAt"] = replayed_at
        if message is not UNSET:
            field_dict["message"] = message
        if message_base_64 is not UNSET:
            field_dict["messageBase64"] = message_base_64
        if message_preview is not UNSET:
            field_dict["messagePreview"] = message_preview
        if message_preview_base_64 is not UNSET:
            field_dict["messagePreviewBase64"] = message_preview_base_64

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        topic = d.pop("topic")

        position = d.pop("position")

        kind = DeadLetterKind(d.pop("kind"))

        reason = d.pop("reason")

        delivery_count = d.pop("deliveryCount")

        status = DeadLetterStatus(d.pop("status"))

        replay_attempts = d.pop("replayAttempts")

        message_bytes = d.pop("messageBytes")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))

        event_type = d.pop("eventType", UNSET)

        _config_id = d.pop("configID", UNSET)
        config_id: UUID | Unset
        if isinstance(_config_id, Unset):
            config_id = UNSET
        else:
            config_id = UUID(_config_id)

        _tenant_id = d.pop("tenantID", UNSET)
        tenant_id: UUID | Unset
        if isinstance(_tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = UUID(_tenant_id)

        last_replay_error = d.pop("lastReplayError", UNSET)

        _replayed_at = d.pop("replayedAt", UNSET)
        replayed_at: datetime.datetime | Unset
        if isinstance(_replayed_at, Unset):
            replayed_at = UNSET
        else:
            replayed_at = datetime.datetime.fromisoformat(_replayed_at)

        message = d.pop("message", UNSET)

        message_base_64 = d.pop("messageBase64", UNSET)

        message_preview = d.pop("messagePreview", UNSET)

        message_preview_base_64 = d.pop("messagePreviewBase64", UNSET)

        dead_letter = cls(
            id=id,
            topic=topic,
            position=position,
            kind=kind,
            reason=reason,
            delivery_count=delivery_count,
            status=status,
            replay_attempts=replay_attempts,
            message_bytes=message_bytes,
            created_at=created_at,
            updated_at=updated_at,
            event_type=event_type,
            config_id=config_id,
            tenant_id=tenant_id,
            last_replay_error=last_replay_error,
            replayed_at=replayed_at,
            message=message,
            message_base_64=message_base_64,
            message_preview=message_preview,
            message_preview_base_64=message_preview_base_64,
        )

        dead_letter.additional_properties = d
        return dead_letter

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
