from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthBearer")


@_attrs_define
class EndpointAuthBearer:
    """
    Attributes:
        token (Literal['********'] | Unset): masked: never returned in clear
    """

    token: Literal["********"] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        token = self.token

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if token is not UNSET:
            field_dict["token"] = token

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token = cast(Literal["********"] | Unset, d.pop("token", UNSET))
        if token != "********" and not isinstance(token, Unset):
            raise ValueError(f"token must match const '********', got '{token}'")

        endpoint_auth_bearer = cls(
            token=token,
        )

        endpoint_auth_bearer.additional_properties = d
        return endpoint_auth_bearer

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
