from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.skip_ordering_key_head_response_202 import SkipOrderingKeyHeadResponse202
from ...types import Response


def _get_kwargs(
    id: UUID,
    key: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/configs/{id}/ordering-keys/{key}/skip".format(
            id=quote(str(id), safe=""),
            key=quote(str(key), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | SkipOrderingKeyHeadResponse202 | None:
    if response.status_code == 202:
        response_202 = SkipOrderingKeyHeadResponse202.from_dict(response.json())

        return response_202

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
) -> Response[Error | SkipOrderingKeyHeadResponse202]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: UUID,
    key: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | SkipOrderingKeyHeadResponse202]:
    """Release a blocked ordering key: its failed head stays failed, the next queued event goes (replaying
    the head releases it too, with the replay first); for a batched config the head is the failed batch,
    released whole

    Args:
        id (UUID):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SkipOrderingKeyHeadResponse202]
    """

    kwargs = _get_kwargs(
        id=id,
        key=key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    key: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | SkipOrderingKeyHeadResponse202 | None:
    """Release a blocked ordering key: its failed head stays failed, the next queued event goes (replaying
    the head releases it too, with the replay first); for a batched config the head is the failed batch,
    released whole

    Args:
        id (UUID):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SkipOrderingKeyHeadResponse202
    """

    return sync_detailed(
        id=id,
        key=key,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    key: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Error | SkipOrderingKeyHeadResponse202]:
    """Release a blocked ordering key: its failed head stays failed, the next queued event goes (replaying
    the head releases it too, with the replay first); for a batched config the head is the failed batch,
    released whole

    Args:
        id (UUID):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | SkipOrderingKeyHeadResponse202]
    """

    kwargs = _get_kwargs(
        id=id,
        key=key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    key: str,
    *,
    client: AuthenticatedClient | Client,
) -> Error | SkipOrderingKeyHeadResponse202 | None:
    """Release a blocked ordering key: its failed head stays failed, the next queued event goes (replaying
    the head releases it too, with the replay first); for a batched config the head is the failed batch,
    released whole

    Args:
        id (UUID):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | SkipOrderingKeyHeadResponse202
    """

    return (
        await asyncio_detailed(
            id=id,
            key=key,
            client=client,
        )
    ).parsed
