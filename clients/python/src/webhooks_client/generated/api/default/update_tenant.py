from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.tenant_user import TenantUser
from ...models.update_tenant_response_200 import UpdateTenantResponse200
from ...types import Response


def _get_kwargs(
    tenant: str,
    *,
    body: TenantUser,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/tenants/{tenant}".format(
            tenant=quote(str(tenant), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | UpdateTenantResponse200 | None:
    if response.status_code == 200:
        response_200 = UpdateTenantResponse200.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

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
) -> Response[Error | UpdateTenantResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    tenant: str,
    *,
    client: AuthenticatedClient | Client,
    body: TenantUser,
) -> Response[Error | UpdateTenantResponse200]:
    """Change a tenant's uid, name or metadata (the default tenant keeps its uid); 403 for a tenant-scoped
    token

    Args:
        tenant (str):
        body (TenantUser): A tenant as the caller sends it: create (uid required) and PATCH (every
            field optional).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | UpdateTenantResponse200]
    """

    kwargs = _get_kwargs(
        tenant=tenant,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    tenant: str,
    *,
    client: AuthenticatedClient | Client,
    body: TenantUser,
) -> Error | UpdateTenantResponse200 | None:
    """Change a tenant's uid, name or metadata (the default tenant keeps its uid); 403 for a tenant-scoped
    token

    Args:
        tenant (str):
        body (TenantUser): A tenant as the caller sends it: create (uid required) and PATCH (every
            field optional).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | UpdateTenantResponse200
    """

    return sync_detailed(
        tenant=tenant,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    tenant: str,
    *,
    client: AuthenticatedClient | Client,
    body: TenantUser,
) -> Response[Error | UpdateTenantResponse200]:
    """Change a tenant's uid, name or metadata (the default tenant keeps its uid); 403 for a tenant-scoped
    token

    Args:
        tenant (str):
        body (TenantUser): A tenant as the caller sends it: create (uid required) and PATCH (every
            field optional).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | UpdateTenantResponse200]
    """

    kwargs = _get_kwargs(
        tenant=tenant,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    tenant: str,
    *,
    client: AuthenticatedClient | Client,
    body: TenantUser,
) -> Error | UpdateTenantResponse200 | None:
    """Change a tenant's uid, name or metadata (the default tenant keeps its uid); 403 for a tenant-scoped
    token

    Args:
        tenant (str):
        body (TenantUser): A tenant as the caller sends it: create (uid required) and PATCH (every
            field optional).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | UpdateTenantResponse200
    """

    return (
        await asyncio_detailed(
            tenant=tenant,
            client=client,
            body=body,
        )
    ).parsed
