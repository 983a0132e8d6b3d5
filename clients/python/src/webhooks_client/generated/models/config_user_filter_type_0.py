from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ConfigUserFilterType0")


@_attrs_define
class ConfigUserFilterType0:
    """payload filter with MongoDB-style operators, tested on the event message endpoints receive (type, payload, ...):
    {"payload.amount": {"$gte": 100}, "payload.currency": {"$in": ["EUR", "USD"]}}; operators $eq $ne $gt $gte $lt $lte
    $in $nin $all $size $exists $regex (RE2, $options i m s) $not $elemMatch $and $or $nor; at most 16 KiB as JSON, 10
    $regex of at most 256 characters, counted repetitions up to {100} and 1 000 RE2 instructions each, lists ($in $nin
    $all) of at most 256 values; evaluated under a step budget per event (over it, the event counts as filtered); null
    removes it; on update, absent keeps the current filter

    """

    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        config_user_filter_type_0 = cls()

        config_user_filter_type_0.additional_properties = d
        return config_user_filter_type_0

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
