from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EndpointAuthChangeOauth2Type0")


@_attrs_define
class EndpointAuthChangeOauth2Type0:
    """OAuth 2.0 client credentials: a token fetched from tokenUrl (client_secret_basic) before the send, cached until
    shortly before it expires and shared by the process's sends; a 401 from the endpoint fetches a new one and re-sends
    once within the attempt

        Attributes:
            token_url (str | Unset): absolute https URL (http only to loopback while the egress policy allows it), under the
                egress policy; a new one needs clientSecret again
            client_id (str | Unset):
            client_secret (str | Unset): sealed at rest
            scope (None | str | Unset): null removes it
            audience (None | str | Unset): null removes it
    """

    token_url: str | Unset = UNSET
    client_id: str | Unset = UNSET
    client_secret: str | Unset = UNSET
    scope: None | str | Unset = UNSET
    audience: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        token_url = self.token_url

        client_id = self.client_id

        client_secret = self.client_secret

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        else:
            scope = self.scope

        audience: None | str | Unset
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        field_dict: dict[str, Any] = {}

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

        client_secret = d.pop("clientSecret", UNSET)

        def _parse_scope(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        def _parse_audience(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        audience = _parse_audience(d.pop("audience", UNSET))

        endpoint_auth_change_oauth_2_type_0 = cls(
            token_url=token_url,
            client_id=client_id,
            client_secret=client_secret,
            scope=scope,
            audience=audience,
        )

        return endpoint_auth_change_oauth_2_type_0
