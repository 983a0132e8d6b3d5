from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.tenant_cursor import TenantCursor
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    uid: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["uid"] = uid

    params["pageSize"] = page_size

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/tenants",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Error | TenantCursor | None:
    if response.status_code == 200:
        response_200 = TenantCursor.from_dict(response.json())

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
) -> Response[Error | TenantCursor]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    uid: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[Error | TenantCursor]:
    """Tenants, newest first (paged, default 100); 403 for a tenant-scoped token

    Args:
        uid (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TenantCursor]
    """

    kwargs = _get_kwargs(
        uid=uid,
        page_size=page_size,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    uid: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Error | TenantCursor | None:
    """Tenants, newest first (paged, default 100); 403 for a tenant-scoped token

    Args:
        uid (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TenantCursor
    """

    return sync_detailed(
        client=client,
        uid=uid,
        page_size=page_size,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    uid: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[Error | TenantCursor]:
    """Tenants, newest first (paged, default 100); 403 for a tenant-scoped token

    Args:
        uid (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | TenantCursor]
    """

    kwargs = _get_kwargs(
        uid=uid,
        page_size=page_size,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    uid: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Error | TenantCursor | None:
    """Tenants, newest first (paged, default 100); 403 for a tenant-scoped token

    Args:
        uid (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | TenantCursor
    """

    return (
        await asyncio_detailed(
            client=client,
            uid=uid,
            page_size=page_size,
            cursor=cursor,
        )
    ).parsed
