from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.change_config_auth_response_200 import ChangeConfigAuthResponse200
from ...models.endpoint_auth_change import EndpointAuthChange
from ...models.error import Error
from ...types import Response


def _get_kwargs(
    id: UUID,
    *,
    body: EndpointAuthChange,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/configs/{id}/auth".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ChangeConfigAuthResponse200 | Error | None:
    if response.status_code == 200:
        response_200 = ChangeConfigAuthResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 500:
        response_500 = Error.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Error.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ChangeConfigAuthResponse200 | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: EndpointAuthChange,
) -> Response[ChangeConfigAuthResponse200 | Error]:
    """Change the endpoint auth and headers as a merge (null removes a kind; absent fields are kept; a new
    oauth2.tokenUrl needs oauth2.clientSecret again, and no credential goes over plain http:// except to
    loopback while the egress policy allows it)

    Args:
        id (UUID):
        body (EndpointAuthChange): Endpoint auth and custom headers, applied as a merge: a kind
            absent is kept, null removes it, and inside a kind a field absent keeps its stored value
            (so one credential changes without resending the others). Only one of basic, bearer and
            oauth2 (each sets Authorization). Every credential is sealed at rest and masked in
            answers. A credential is bound to the endpoint origin (and the client secret to the token
            URL) it was given for: a change of either needs it again in the same request. Credentials
            over plain http:// are refused (endpoint and token URL), except to a loopback address or
            localhost while the egress policy allows loopback (no --egress-deny-private).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChangeConfigAuthResponse200 | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: EndpointAuthChange,
) -> ChangeConfigAuthResponse200 | Error | None:
    """Change the endpoint auth and headers as a merge (null removes a kind; absent fields are kept; a new
    oauth2.tokenUrl needs oauth2.clientSecret again, and no credential goes over plain http:// except to
    loopback while the egress policy allows it)

    Args:
        id (UUID):
        body (EndpointAuthChange): Endpoint auth and custom headers, applied as a merge: a kind
            absent is kept, null removes it, and inside a kind a field absent keeps its stored value
            (so one credential changes without resending the others). Only one of basic, bearer and
            oauth2 (each sets Authorization). Every credential is sealed at rest and masked in
            answers. A credential is bound to the endpoint origin (and the client secret to the token
            URL) it was given for: a change of either needs it again in the same request. Credentials
            over plain http:// are refused (endpoint and token URL), except to a loopback address or
            localhost while the egress policy allows loopback (no --egress-deny-private).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChangeConfigAuthResponse200 | Error
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: EndpointAuthChange,
) -> Response[ChangeConfigAuthResponse200 | Error]:
    """Change the endpoint auth and headers as a merge (null removes a kind; absent fields are kept; a new
    oauth2.tokenUrl needs oauth2.clientSecret again, and no credential goes over plain http:// except to
    loopback while the egress policy allows it)

    Args:
        id (UUID):
        body (EndpointAuthChange): Endpoint auth and custom headers, applied as a merge: a kind
            absent is kept, null removes it, and inside a kind a field absent keeps its stored value
            (so one credential changes without resending the others). Only one of basic, bearer and
            oauth2 (each sets Authorization). Every credential is sealed at rest and masked in
            answers. A credential is bound to the endpoint origin (and the client secret to the token
            URL) it was given for: a change of either needs it again in the same request. Credentials
            over plain http:// are refused (endpoint and token URL), except to a loopback address or
            localhost while the egress policy allows loopback (no --egress-deny-private).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ChangeConfigAuthResponse200 | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: EndpointAuthChange,
) -> ChangeConfigAuthResponse200 | Error | None:
    """Change the endpoint auth and headers as a merge (null removes a kind; absent fields are kept; a new
    oauth2.tokenUrl needs oauth2.clientSecret again, and no credential goes over plain http:// except to
    loopback while the egress policy allows it)

    Args:
        id (UUID):
        body (EndpointAuthChange): Endpoint auth and custom headers, applied as a merge: a kind
            absent is kept, null removes it, and inside a kind a field absent keeps its stored value
            (so one credential changes without resending the others). Only one of basic, bearer and
            oauth2 (each sets Authorization). Every credential is sealed at rest and masked in
            answers. A credential is bound to the endpoint origin (and the client secret to the token
            URL) it was given for: a change of either needs it again in the same request. Credentials
            over plain http:// are refused (endpoint and token URL), except to a loopback address or
            localhost while the egress policy allows loopback (no --egress-deny-private).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ChangeConfigAuthResponse200 | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
