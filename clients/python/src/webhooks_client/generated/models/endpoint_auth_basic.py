from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthBasic")


@_attrs_define
class EndpointAuthBasic:
    """
    Attributes:
        username (str | Unset):
        password (Literal['********'] | Unset): masked: never returned in clear
    """

    username: str | Unset = UNSET
    password: Literal["********"] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        username = self.username

        password = self.password

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if username is not UNSET:
            field_dict["username"] = username
        if password is not UNSET:
            field_dict["password"] = password

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        username = d.pop("username", UNSET)

        password = cast(Literal["********"] | Unset, d.pop("password", UNSET))
        if password != "********" and not isinstance(password, Unset):
            raise ValueError(f"password must match const '********', got '{password}'")

        endpoint_auth_basic = cls(
            username=username,
            password=password,
        )

        endpoint_auth_basic.additional_properties = d
        return endpoint_auth_basic

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
