from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthChangeTlsType0")


@_attrs_define
class EndpointAuthChangeTlsType0:
    """mutual TLS: a client certificate and its key (PEM, checked to match), and a CA bundle that replaces the system roots
    for the endpoint; applied to https hops of the endpoint's origin

        Attributes:
            certificate (str | Unset): PEM certificate (chain: the client certificate first)
            private_key (str | Unset): PEM private key, unencrypted (PKCS#8, PKCS#1, SEC1); sealed at rest
            ca_bundle (None | str | Unset): PEM certificates the endpoint's certificate must chain to; null removes it
    """

    certificate: str | Unset = UNSET
    private_key: str | Unset = UNSET
    ca_bundle: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        certificate = self.certificate

        private_key = self.private_key

        ca_bundle: None | str | Unset
        if isinstance(self.ca_bundle, Unset):
            ca_bundle = UNSET
        else:
            ca_bundle = self.ca_bundle

        field_dict: dict[str, Any] = {}

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

        private_key = d.pop("privateKey", UNSET)

        def _parse_ca_bundle(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        ca_bundle = _parse_ca_bundle(d.pop("caBundle", UNSET))

        endpoint_auth_change_tls_type_0 = cls(
            certificate=certificate,
            private_key=private_key,
            ca_bundle=ca_bundle,
        )

        return endpoint_auth_change_tls_type_0
