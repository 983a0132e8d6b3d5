from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointStatsWindowsItemLatencyMsType0")


@_attrs_define
class EndpointStatsWindowsItemLatencyMsType0:
    """send durations; null without timed sends

    Attributes:
        p50 (int | Unset):
        p90 (int | Unset):
        p99 (int | Unset):
    """

    p50: int | Unset = UNSET
    p90: int | Unset = UNSET
    p99: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        p50 = self.p50

        p90 = self.p90

        p99 = self.p99

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if p50 is not UNSET:
            field_dict["p50"] = p50
        if p90 is not UNSET:
            field_dict["p90"] = p90
        if p99 is not UNSET:
            field_dict["p99"] = p99

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        p50 = d.pop("p50", UNSET)

        p90 = d.pop("p90", UNSET)

        p99 = d.pop("p99", UNSET)

        endpoint_stats_windows_item_latency_ms_type_0 = cls(
            p50=p50,
            p90=p90,
            p99=p99,
        )

        endpoint_stats_windows_item_latency_ms_type_0.additional_properties = d
        return endpoint_stats_windows_item_latency_ms_type_0

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
