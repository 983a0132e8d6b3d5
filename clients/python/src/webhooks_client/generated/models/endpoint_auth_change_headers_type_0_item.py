from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthChangeHeadersType0Item")


@_attrs_define
class EndpointAuthChangeHeadersType0Item:
    """
    Attributes:
        name (str): an HTTP header name (token)
        value (str | Unset): visible ASCII, spaces and tabs (no CR/LF); absent keeps the stored value of this name
    """

    name: str
    value: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        value = d.pop("value", UNSET)

        endpoint_auth_change_headers_type_0_item = cls(
            name=name,
            value=value,
        )

        return endpoint_auth_change_headers_type_0_item
