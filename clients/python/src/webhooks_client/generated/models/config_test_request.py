from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ConfigTestRequest")


@_attrs_define
class ConfigTestRequest:
    """
    Attributes:
        event_type (str | Unset): a catalog event type whose `example` is sent as the test event's payload, under its
            type; absent: `webhooks.test` with `{"data":"test"}`
    """

    event_type: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        event_type = self.event_type

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if event_type is not UNSET:
            field_dict["eventType"] = event_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_type = d.pop("eventType", UNSET)

        config_test_request = cls(
            event_type=event_type,
        )

        return config_test_request
