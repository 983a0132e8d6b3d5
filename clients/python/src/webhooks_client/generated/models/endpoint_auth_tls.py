from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthTls")


@_attrs_define
class EndpointAuthTls:
    """
    Attributes:
        certificate (str | Unset):
        private_key (Literal['********'] | Unset): masked: never returned in clear
        ca_bundle (str | Unset):
    """

    certificate: str | Unset = UNSET
    private_key: Literal["********"] | Unset = UNSET
    ca_bundle: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        certificate = self.certificate

        private_key = self.private_key

        ca_bundle = self.ca_bundle

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if certificate is not UNSET:
            field_dict["certificate"] = certificate
        if private_key is not UNSET:
            field_dict["privateKey"] = private_key
        if ca_bundle is not UNSET:
            field_dict["caBundle"] = ca_bundle

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        certificate = d.pop("certificate", UNSET)

        private_key = cast(Literal["********"] | Unset, d.pop("privateKey", UNSET))
        if private_key != "********" and not isinstance(private_key, Unset):
            raise ValueError(f"privateKey must match const '********', got '{private_key}'")

        ca_bundle = d.pop("caBundle", UNSET)

        endpoint_auth_tls = cls(
            certificate=certificate,
            private_key=private_key,
            ca_bundle=ca_bundle,
        )

        endpoint_auth_tls.additional_properties = d
        return endpoint_auth_tls

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
