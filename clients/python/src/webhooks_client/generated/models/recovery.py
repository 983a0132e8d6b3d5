from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.recovery_state import RecoveryState
from ..types import UNSET, Unset

T = TypeVar("T", bound="Recovery")


@_attrs_define
class Recovery:
    """
    Attributes:
        id (UUID):
        config_id (UUID):
        since (datetime.datetime):
        until (datetime.datetime):
        event_types (list[str]):
        state (RecoveryState):
        matched (int): failed deliveries found in the window so far
        started (int): replays this recovery started
        already_started (int | Unset): replays this idempotency key had started before (not started twice)
        failed_to_start (int | Unset): deliveries whose replay could not start (see lastError)
        last_error (str | Unset):
        workflow_id (str | Unset): the recoverDeliveries workflow doing the work
        created_at (datetime.datetime | Unset):
        updated_at (datetime.datetime | Unset):
        finished_at (datetime.datetime | Unset):
    """

    id: UUID
    config_id: UUID
    since: datetime.datetime
    until: datetime.datetime
    event_types: list[str]
    state: RecoveryState
    matched: int
    started: int
    already_started: int | Unset = UNSET
    failed_to_start: int | Unset = UNSET
    last_error: str | Unset = UNSET
    workflow_id: str | Unset = UNSET
    created_at: datetime.datetime | Unset = UNSET
    updated_at: datetime.datetime | Unset = UNSET
    finished_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        config_id = str(self.config_id)

        since = self.since.isoformat()

        until = self.until.isoformat()

        event_types = self.event_types

        state = self.state.value

        matched = self.matched

        started = self.started

        already_started = self.already_started

        failed_to_start = self.failed_to_start

        last_error = self.last_error

        workflow_id = self.workflow_id

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        updated_at: str | Unset = UNSET
        if not isinstance(self.updated_at, Unset):
            updated_at = self.updated_at.isoformat()

        finished_at: str | Unset = UNSET
        if not isinstance(self.finished_at, Unset):
            finished_at = self.finished_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "configID": config_id,
                "since": since,
                "until": until,
                "eventTypes": event_types,
                "state": state,
                "matched": matched,
                "started": started,
            }
        )
        if already_started is not UNSET:
            field_dict["alreadyStarted"] = already_started
        if failed_to_start is not UNSET:
            field_dict["failedToStart"] = failed_to_start
        if last_error is not UNSET:
            field_dict["lastError"] = last_error
        if workflow_id is not UNSET:
            field_dict["workflowID"] = workflow_id
        if created_at is not UNSET:
            field_dict["createdAt"] = created_at
        if updated_at is not UNSET:
            field_dict["updatedAt"] = updated_at
        if finished_at is not UNSET:
            field_dict["finishedAt"] = finished_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        config_id = UUID(d.pop("configID"))

        since = datetime.datetime.fromisoformat(d.pop("since"))

        until = datetime.datetime.fromisoformat(d.pop("until"))

        event_types = cast(list[str], d.pop("eventTypes"))

        state = RecoveryState(d.pop("state"))

        matched = d.pop("matched")

        started = d.pop("started")

        already_started = d.pop("alreadyStarted", UNSET)

        failed_to_start = d.pop("failedToStart", UNSET)

        last_error = d.pop("lastError", UNSET)

        workflow_id = d.pop("workflowID", UNSET)

        _created_at = d.pop("createdAt", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        _updated_at = d.pop("updatedAt", UNSET)
        updated_at: datetime.datetime | Unset
        if isinstance(_updated_at, Unset):
            updated_at = UNSET
        else:
            updated_at = datetime.datetime.fromisoformat(_updated_at)

        _finished_at = d.pop("finishedAt", UNSET)
        finished_at: datetime.datetime | Unset
        if isinstance(_finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = datetime.datetime.fromisoformat(_finished_at)

        recovery = cls(
            id=id,
            config_id=config_id,
            since=since,
            until=until,
            event_types=event_types,
            state=state,
            matched=matched,
            started=started,
            already_started=already_started,
            failed_to_start=failed_to_start,
            last_error=last_error,
            workflow_id=workflow_id,
            created_at=created_at,
            updated_at=updated_at,
            finished_at=finished_at,
        )

        recovery.additional_properties = d
        return recovery

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
