from http import HTTPStatus
from typing import Any
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.config_cursor import ConfigCursor
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    id: UUID | Unset = UNSET,
    endpoint: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_id: str | Unset = UNSET
    if not isinstance(id, Unset):
        json_id = str(id)
    params["id"] = json_id

    params["endpoint"] = endpoint

    params["pageSize"] = page_size

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/configs",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ConfigCursor | Error | None:
    if response.status_code == 200:
        response_200 = ConfigCursor.from_dict(response.json())

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
) -> Response[ConfigCursor | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    id: UUID | Unset = UNSET,
    endpoint: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[ConfigCursor | Error]:
    """List configs, newest update first

    Args:
        id (UUID | Unset):
        endpoint (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConfigCursor | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        endpoint=endpoint,
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
    id: UUID | Unset = UNSET,
    endpoint: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> ConfigCursor | Error | None:
    """List configs, newest update first

    Args:
        id (UUID | Unset):
        endpoint (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConfigCursor | Error
    """

    return sync_detailed(
        client=client,
        id=id,
        endpoint=endpoint,
        page_size=page_size,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    id: UUID | Unset = UNSET,
    endpoint: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[ConfigCursor | Error]:
    """List configs, newest update first

    Args:
        id (UUID | Unset):
        endpoint (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ConfigCursor | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        endpoint=endpoint,
        page_size=page_size,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    id: UUID | Unset = UNSET,
    endpoint: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> ConfigCursor | Error | None:
    """List configs, newest update first

    Args:
        id (UUID | Unset):
        endpoint (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ConfigCursor | Error
    """

    return (
        await asyncio_detailed(
            client=client,
            id=id,
            endpoint=endpoint,
            page_size=page_size,
            cursor=cursor,
        )
    ).parsed
