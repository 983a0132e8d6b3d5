from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ConfigSecret")


@_attrs_define
class ConfigSecret:
    """
    Attributes:
        secret (str): standard base64 of exactly 24 bytes (32 characters)
        previous_secret_expires_at (datetime.datetime | Unset): present while the rotated-out secret still signs
            deliveries
    """

    secret: str
    previous_secret_expires_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        secret = self.secret

        previous_secret_expires_at: str | Unset = UNSET
        if not isinstance(self.previous_secret_expires_at, Unset):
            previous_secret_expires_at = self.previous_secret_expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "secret": secret,
            }
        )
        if previous_secret_expires_at is not UNSET:
            field_dict["previousSecretExpiresAt"] = previous_secret_expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        secret = d.pop("secret")

        _previous_secret_expires_at = d.pop("previousSecretExpiresAt", UNSET)
        previous_secret_expires_at: datetime.datetime | Unset
        if isinstance(_previous_secret_expires_at, Unset):
            previous_secret_expires_at = UNSET
        else:
            previous_secret_expires_at = datetime.datetime.fromisoformat(_previous_secret_expires_at)

        config_secret = cls(
            secret=secret,
            previous_secret_expires_at=previous_secret_expires_at,
        )

        config_secret.additional_properties = d
        return config_secret

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
