from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RecoveryRequest")


@_attrs_define
class RecoveryRequest:
    """Which failed deliveries of the config to replay: those that ended failed in [since, until), optionally only of these
    event types

        Attributes:
            since (str): RFC 3339 time: deliveries that ended failed from then
            until (str | Unset): RFC 3339 time, later than since; the request's time when absent
            event_types (list[str] | Unset):
    """

    since: str
    until: str | Unset = UNSET
    event_types: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        since = self.since

        until = self.until

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = self.event_types

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "since": since,
            }
        )
        if until is not UNSET:
            field_dict["until"] = until
        if event_types is not UNSET:
            field_dict["eventTypes"] = event_types

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        since = d.pop("since")

        until = d.pop("until", UNSET)

        event_types = cast(list[str], d.pop("eventTypes", UNSET))

        recovery_request = cls(
            since=since,
            until=until,
            event_types=event_types,
        )

        return recovery_request
