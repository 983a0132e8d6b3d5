from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.endpoint_auth_change_basic_type_0 import EndpointAuthChangeBasicType0
    from ..models.endpoint_auth_change_bearer_type_0 import EndpointAuthChangeBearerType0
    from ..models.endpoint_auth_change_headers_type_0_item import EndpointAuthChangeHeadersType0Item
    from ..models.endpoint_auth_change_oauth_2_type_0 import EndpointAuthChangeOauth2Type0
    from ..models.endpoint_auth_change_tls_type_0 import EndpointAuthChangeTlsType0


T = TypeVar("T", bound="EndpointAuthChange")


@_attrs_define
class EndpointAuthChange:
    """Endpoint auth and custom headers, applied as a merge: a kind absent is kept, null removes it, and inside a kind a
    field absent keeps its stored value (so one credential changes without resending the others). Only one of basic,
    bearer and oauth2 (each sets Authorization). Every credential is sealed at rest and masked in answers. A credential
    is bound to the endpoint origin (and the client secret to the token URL) it was given for: a change of either needs
    it again in the same request. Credentials over plain http:// are refused (endpoint and token URL), except to a
    loopback address or localhost while the egress policy allows loopback (no --egress-deny-private).

        Attributes:
            headers (list[EndpointAuthChangeHeadersType0Item] | None | Unset): custom headers sent with every delivery to
                the endpoint's origin, replacing the whole list (a header given without value keeps the stored value of that
                name); values are sealed like credentials. Not allowed: svc-webhook-*, webhook-id, webhook-timestamp, webhook-
                signature, Host, Content-Length, Content-Type, User-Agent, Connection, Keep-Alive, Transfer-Encoding, TE,
                Upgrade, Trailer, Expect, Proxy-*, traceparent, tracestate, baggage; names and values total at most 8192 bytes
            basic (EndpointAuthChangeBasicType0 | None | Unset): HTTP Basic auth (RFC 7617)
            bearer (EndpointAuthChangeBearerType0 | None | Unset): a static bearer token (Authorization: Bearer)
            oauth2 (EndpointAuthChangeOauth2Type0 | None | Unset): OAuth 2.0 client credentials: a token fetched from
                tokenUrl (client_secret_basic) before the send, cached until shortly before it expires and shared by the
                process's sends; a 401 from the endpoint fetches a new one and re-sends once within the attempt
            tls (EndpointAuthChangeTlsType0 | None | Unset): mutual TLS: a client certificate and its key (PEM, checked to
                match), and a CA bundle that replaces the system roots for the endpoint; applied to https hops of the endpoint's
                origin
    """

    headers: list[EndpointAuthChangeHeadersType0Item] | None | Unset = UNSET
    basic: EndpointAuthChangeBasicType0 | None | Unset = UNSET
    bearer: EndpointAuthChangeBearerType0 | None | Unset = UNSET
    oauth2: EndpointAuthChangeOauth2Type0 | None | Unset = UNSET
    tls: EndpointAuthChangeTlsType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_auth_change_basic_type_0 import EndpointAuthChangeBasicType0  # noqa: PLC0415
        from ..models.endpoint_auth_change_bearer_type_0 import EndpointAuthChangeBearerType0  # noqa: PLC0415
        from ..models.endpoint_auth_change_oauth_2_type_0 import EndpointAuthChangeOauth2Type0  # noqa: PLC0415
        from ..models.endpoint_auth_change_tls_type_0 import EndpointAuthChangeTlsType0  # noqa: PLC0415

        headers: list[dict[str, Any]] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, list):
            headers = []
            for headers_type_0_item_data in self.headers:
                headers_type_0_item = headers_type_0_item_data.to_dict()
                headers.append(headers_type_0_item)

        else:
            headers = self.headers

        basic: dict[str, Any] | None | Unset
        if isinstance(self.basic, Unset):
            basic = UNSET
        elif isinstance(self.basic, EndpointAuthChangeBasicType0):
            basic = self.basic.to_dict()
        else:
            basic = self.basic

        bearer: dict[str, Any] | None | Unset
        if isinstance(self.bearer, Unset):
            bearer = UNSET
        elif isinstance(self.bearer, EndpointAuthChangeBearerType0):
            bearer = self.bearer.to_dict()
        else:
            bearer = self.bearer

        oauth2: dict[str, Any] | None | Unset
        if isinstance(self.oauth2, Unset):
            oauth2 = UNSET
        elif isinstance(self.oauth2, EndpointAuthChangeOauth2Type0):
            oauth2 = self.oauth2.to_dict()
        else:
            oauth2 = self.oauth2

        tls: dict[str, Any] | None | Unset
        if isinstance(self.tls, Unset):
            tls = UNSET
        elif isinstance(self.tls, EndpointAuthChangeTlsType0):
            tls = self.tls.to_dict()
        else:
            tls = self.tls

        field_dict: dict[str, Any] = {}

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
        from ..models.endpoint_auth_change_basic_type_0 import EndpointAuthChangeBasicType0  # noqa: PLC0415
        from ..models.endpoint_auth_change_bearer_type_0 import EndpointAuthChangeBearerType0  # noqa: PLC0415
        from ..models.endpoint_auth_change_headers_type_0_item import EndpointAuthChangeHeadersType0Item  # noqa: PLC0415
        from ..models.endpoint_auth_change_oauth_2_type_0 import EndpointAuthChangeOauth2Type0  # noqa: PLC0415
        from ..models.endpoint_auth_change_tls_type_0 import EndpointAuthChangeTlsType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_headers(data: object) -> list[EndpointAuthChangeHeadersType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                headers_type_0 = []
                _headers_type_0 = data
                for headers_type_0_item_data in _headers_type_0:
                    headers_type_0_item = EndpointAuthChangeHeadersType0Item.from_dict(headers_type_0_item_data)

                    headers_type_0.append(headers_type_0_item)

                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[EndpointAuthChangeHeadersType0Item] | None | Unset, data)

        headers = _parse_headers(d.pop("headers", UNSET))

        def _parse_basic(data: object) -> EndpointAuthChangeBasicType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                basic_type_0 = EndpointAuthChangeBasicType0.from_dict(data)

                return basic_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointAuthChangeBasicType0 | None | Unset, data)

        basic = _parse_basic(d.pop("basic", UNSET))

        def _parse_bearer(data: object) -> EndpointAuthChangeBearerType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                bearer_type_0 = EndpointAuthChangeBearerType0.from_dict(data)

                return bearer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointAuthChangeBearerType0 | None | Unset, data)

        bearer = _parse_bearer(d.pop("bearer", UNSET))

        def _parse_oauth2(data: object) -> EndpointAuthChangeOauth2Type0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                oauth2_type_0 = EndpointAuthChangeOauth2Type0.from_dict(data)

                return oauth2_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointAuthChangeOauth2Type0 | None | Unset, data)

        oauth2 = _parse_oauth2(d.pop("oauth2", UNSET))

        def _parse_tls(data: object) -> EndpointAuthChangeTlsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tls_type_0 = EndpointAuthChangeTlsType0.from_dict(data)

                return tls_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointAuthChangeTlsType0 | None | Unset, data)

        tls = _parse_tls(d.pop("tls", UNSET))

        endpoint_auth_change = cls(
            headers=headers,
            basic=basic,
            bearer=bearer,
            oauth2=oauth2,
            tls=tls,
        )

        return endpoint_auth_change
