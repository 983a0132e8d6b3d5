from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_stats_windows_item import EndpointStatsWindowsItem


T = TypeVar("T", bound="EndpointStats")


@_attrs_define
class EndpointStats:
    """
    Attributes:
        config_id (UUID):
        active (bool):
        windows (list[EndpointStatsWindowsItem]):
        failing_since (datetime.datetime | Unset): the first send of the current failing streak (no 2xx since, nor since
            activation)
        deactivated_reason (str | Unset): why it was deactivated automatically
    """

    config_id: UUID
    active: bool
    windows: list[EndpointStatsWindowsItem]
    failing_since: datetime.datetime | Unset = UNSET
    deactivated_reason: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        config_id = str(self.config_id)

        active = self.active

        windows = []
        for windows_item_data in self.windows:
            windows_item = windows_item_data.to_dict()
            windows.append(windows_item)

        failing_since: str | Unset = UNSET
        if not isinstance(self.failing_since, Unset):
            failing_since = self.failing_since.isoformat()

        deactivated_reason = self.deactivated_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "configID": config_id,
                "active": active,
                "windows": windows,
            }
        )
        if failing_since is not UNSET:
            field_dict["failingSince"] = failing_since
        if deactivated_reason is not UNSET:
            field_dict["deactivatedReason"] = deactivated_reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_stats_windows_item import EndpointStatsWindowsItem  # noqa: PLC0415

        d = dict(src_dict)
        config_id = UUID(d.pop("configID"))

        active = d.pop("active")

        windows = []
        _windows = d.pop("windows")
        for windows_item_data in _windows:
            windows_item = EndpointStatsWindowsItem.from_dict(windows_item_data)

            windows.append(windows_item)

        _failing_since = d.pop("failingSince", UNSET)
        failing_since: datetime.datetime | Unset
        if isinstance(_failing_since, Unset):
            failing_since = UNSET
        else:
            failing_since = datetime.datetime.fromisoformat(_failing_since)

        deactivated_reason = d.pop("deactivatedReason", UNSET)

        endpoint_stats = cls(
            config_id=config_id,
            active=active,
            windows=windows,
            failing_since=failing_since,
            deactivated_reason=deactivated_reason,
        )

        endpoint_stats.additional_properties = d
        return endpoint_stats

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
