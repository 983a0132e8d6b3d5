from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthOauth2")


@_attrs_define
class EndpointAuthOauth2:
    """
    Attributes:
        token_url (str | Unset):
        client_id (str | Unset):
        client_secret (Literal['********'] | Unset): masked: never returned in clear
        scope (str | Unset):
        audience (str | Unset):
    """

    token_url: str | Unset = UNSET
    client_id: str | Unset = UNSET
    client_secret: Literal["********"] | Unset = UNSET
    scope: str | Unset = UNSET
    audience: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        token_url = self.token_url

        client_id = self.client_id

        client_secret = self.client_secret

        scope = self.scope

        audience = self.audience

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if token_url is not UNSET:
            field_dict["tokenUrl"] = token_url
        if client_id is not UNSET:
            field_dict["clientId"] = client_id
        if client_secret is not UNSET:
            field_dict["clientSecret"] = client_secret
        if scope is not UNSET:
            field_dict["scope"] = scope
        if audience is not UNSET:
            field_dict["audience"] = audience

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        token_url = d.pop("tokenUrl", UNSET)

        client_id = d.pop("clientId", UNSET)

        client_secret = cast(Literal["********"] | Unset, d.pop("clientSecret", UNSET))
        if client_secret != "********" and not isinstance(client_secret, Unset):
            raise ValueError(f"clientSecret must match const '********', got '{client_secret}'")

        scope = d.pop("scope", UNSET)

        audience = d.pop("audience", UNSET)

        endpoint_auth_oauth_2 = cls(
            token_url=token_url,
            client_id=client_id,
            client_secret=client_secret,
            scope=scope,
            audience=audience,
        )

        endpoint_auth_oauth_2.additional_properties = d
        return endpoint_auth_oauth_2

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
