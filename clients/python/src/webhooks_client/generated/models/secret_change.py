from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SecretChange")


@_attrs_define
class SecretChange:
    """
    Attributes:
        secret (str | Unset): standard base64 of exactly 24 bytes (32 characters); generated when absent
        overlap (str | Unset): how long the previous secret keeps signing alongside the new one (Go duration, at most
            720h); immediate rotation when absent
    """

    secret: str | Unset = UNSET
    overlap: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        secret = self.secret

        overlap = self.overlap

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if secret is not UNSET:
            field_dict["secret"] = secret
        if overlap is not UNSET:
            field_dict["overlap"] = overlap

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        secret = d.pop("secret", UNSET)

        overlap = d.pop("overlap", UNSET)

        secret_change = cls(
            secret=secret,
            overlap=overlap,
        )

        return secret_change
