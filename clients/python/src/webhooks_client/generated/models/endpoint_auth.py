from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_auth_basic import EndpointAuthBasic
    from ..models.endpoint_auth_bearer import EndpointAuthBearer
    from ..models.endpoint_auth_headers_item import EndpointAuthHeadersItem
    from ..models.endpoint_auth_oauth_2 import EndpointAuthOauth2
    from ..models.endpoint_auth_tls import EndpointAuthTls


T = TypeVar("T", bound="EndpointAuth")


@_attrs_define
class EndpointAuth:
    """The kinds of endpoint auth configured, with their public parts; every credential masked

    Attributes:
        headers (list[EndpointAuthHeadersItem] | Unset):
        basic (EndpointAuthBasic | Unset):
        bearer (EndpointAuthBearer | Unset):
        oauth2 (EndpointAuthOauth2 | Unset):
        tls (EndpointAuthTls | Unset):
    """

    headers: list[EndpointAuthHeadersItem] | Unset = UNSET
    basic: EndpointAuthBasic | Unset = UNSET
    bearer: EndpointAuthBearer | Unset = UNSET
    oauth2: EndpointAuthOauth2 | Unset = UNSET
    tls: EndpointAuthTls | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        headers: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = []
            for headers_item_data in self.headers:
                headers_item = headers_item_data.to_dict()
                headers.append(headers_item)

        basic: dict[str, Any] | Unset = UNSET
        if not isinstance(self.basic, Unset):
            basic = self.basic.to_dict()

        bearer: dict[str, Any] | Unset = UNSET
        if not isinstance(self.bearer, Unset):
            bearer = self.bearer.to_dict()

        oauth2: dict[str, Any] | Unset = UNSET
        if not isinstance(self.oauth2, Unset):
            oauth2 = self.oauth2.to_dict()

        tls: dict[str, Any] | Unset = UNSET
        if not isinstance(self.tls, Unset):
            tls = self.tls.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if headers is not UNSET:
            field_dict["headers"] = headers
        if basic is not UNSET:
            field_dict["basic"] = basic
        if bearer is not UNSET:
            field_dict["bearer"] = bearer
        if oauth2 is not UNSET:
            field_dict["oauth2"] = oauth2
        if tls is not UNSET:
            field_dict["tls"] = tls

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_auth_basic import EndpointAuthBasic  # noqa: PLC0415
        from ..models.endpoint_auth_bearer import EndpointAuthBearer  # noqa: PLC0415
        from ..models.endpoint_auth_headers_item import EndpointAuthHeadersItem  # noqa: PLC0415
        from ..models.endpoint_auth_oauth_2 import EndpointAuthOauth2  # noqa: PLC0415
        from ..models.endpoint_auth_tls import EndpointAuthTls  # noqa: PLC0415

        d = dict(src_dict)
        _headers = d.pop("headers", UNSET)
        headers: list[EndpointAuthHeadersItem] | Unset = UNSET
        if _headers is not UNSET:
            headers = []
            for headers_item_data in _headers:
                headers_item = EndpointAuthHeadersItem.from_dict(headers_item_data)

                headers.append(headers_item)

        _basic = d.pop("basic", UNSET)
        basic: EndpointAuthBasic | Unset
        if isinstance(_basic, Unset):
            basic = UNSET
        else:
            basic = EndpointAuthBasic.from_dict(_basic)

        _bearer = d.pop("bearer", UNSET)
        bearer: EndpointAuthBearer | Unset
        if isinstance(_bearer, Unset):
            bearer = UNSET
        else:
            bearer = EndpointAuthBearer.from_dict(_bearer)

        _oauth2 = d.pop("oauth2", UNSET)
        oauth2: EndpointAuthOauth2 | Unset
        if isinstance(_oauth2, Unset):
            oauth2 = UNSET
        else:
            oauth2 = EndpointAuthOauth2.from_dict(_oauth2)

        _tls = d.pop("tls", UNSET)
        tls: EndpointAuthTls | Unset
        if isinstance(_tls, Unset):
            tls = UNSET
        else:
            tls = EndpointAuthTls.from_dict(_tls)

        endpoint_auth = cls(
            headers=headers,
            basic=basic,
            bearer=bearer,
            oauth2=oauth2,
            tls=tls,
        )

        endpoint_auth.additional_properties = d
        return endpoint_auth

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
