from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthHeadersItem")


@_attrs_define
class EndpointAuthHeadersItem:
    """
    Attributes:
        name (str | Unset):
        value (Literal['********'] | Unset): masked: never returned in clear
    """

    name: str | Unset = UNSET
    value: Literal["********"] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value = self.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        value = cast(Literal["********"] | Unset, d.pop("value", UNSET))
        if value != "********" and not isinstance(value, Unset):
            raise ValueError(f"value must match const '********', got '{value}'")

        endpoint_auth_headers_item = cls(
            name=name,
            value=value,
        )

        endpoint_auth_headers_item.additional_properties = d
        return endpoint_auth_headers_item

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
