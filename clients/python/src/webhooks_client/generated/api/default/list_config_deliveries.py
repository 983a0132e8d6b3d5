from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_summary_cursor import DeliverySummaryCursor
from ...models.error import Error
from ...models.list_config_deliveries_status import ListConfigDeliveriesStatus
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: UUID,
    *,
    status: ListConfigDeliveriesStatus | Unset = UNSET,
    event_type: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params["eventType"] = event_type

    params["pageSize"] = page_size

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/configs/{id}/deliveries".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeliverySummaryCursor | Error | None:
    if response.status_code == 200:
        response_200 = DeliverySummaryCursor.from_dict(response.json())

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
) -> Response[DeliverySummaryCursor | Error]:
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
    status: ListConfigDeliveriesStatus | Unset = UNSET,
    event_type: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[DeliverySummaryCursor | Error]:
    """Deliveries to this config, one per webhook, newest first by last attempt (or acceptance while
    unsent); paged, default 50

    Args:
        id (UUID):
        status (ListConfigDeliveriesStatus | Unset):
        event_type (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliverySummaryCursor | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        status=status,
        event_type=event_type,
        page_size=page_size,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    status: ListConfigDeliveriesStatus | Unset = UNSET,
    event_type: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> DeliverySummaryCursor | Error | None:
    """Deliveries to this config, one per webhook, newest first by last attempt (or acceptance while
    unsent); paged, default 50

    Args:
        id (UUID):
        status (ListConfigDeliveriesStatus | Unset):
        event_type (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliverySummaryCursor | Error
    """

    return sync_detailed(
        id=id,
        client=client,
        status=status,
        event_type=event_type,
        page_size=page_size,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    status: ListConfigDeliveriesStatus | Unset = UNSET,
    event_type: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[DeliverySummaryCursor | Error]:
    """Deliveries to this config, one per webhook, newest first by last attempt (or acceptance while
    unsent); paged, default 50

    Args:
        id (UUID):
        status (ListConfigDeliveriesStatus | Unset):
        event_type (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliverySummaryCursor | Error]
    """

    kwargs = _get_kwargs(
        id=id,
        status=status,
        event_type=event_type,
        page_size=page_size,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: UUID,
    *,
    client: AuthenticatedClient | Client,
    status: ListConfigDeliveriesStatus | Unset = UNSET,
    event_type: str | Unset = UNSET,
    page_size: str | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> DeliverySummaryCursor | Error | None:
    """Deliveries to this config, one per webhook, newest first by last attempt (or acceptance while
    unsent); paged, default 50

    Args:
        id (UUID):
        status (ListConfigDeliveriesStatus | Unset):
        event_type (str | Unset):
        page_size (str | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliverySummaryCursor | Error
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            status=status,
            event_type=event_type,
            page_size=page_size,
            cursor=cursor,
        )
    ).parsed
