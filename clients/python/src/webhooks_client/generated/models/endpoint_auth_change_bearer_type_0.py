from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthChangeBearerType0")


@_attrs_define
class EndpointAuthChangeBearerType0:
    """a static bearer token (Authorization: Bearer)

    Attributes:
        token (str | Unset): RFC 6750 token; sealed
    """

    token: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token = self.token

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if token is not UNSET:
            field_dict["token"] = token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token = d.pop("token", UNSET)

        endpoint_auth_change_bearer_type_0 = cls(
            token=token,
        )

        return endpoint_auth_change_bearer_type_0
