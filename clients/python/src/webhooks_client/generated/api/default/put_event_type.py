from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.event_type_user import EventTypeUser
from ...models.put_event_type_response_200 import PutEventTypeResponse200
from ...models.put_event_type_response_201 import PutEventTypeResponse201
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: EventTypeUser,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/event-types/{name}".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | PutEventTypeResponse200 | PutEventTypeResponse201 | None:
    if response.status_code == 200:
        response_200 = PutEventTypeResponse200.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = PutEventTypeResponse201.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

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
) -> Response[Error | PutEventTypeResponse200 | PutEventTypeResponse201]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUser,
) -> Response[Error | PutEventTypeResponse200 | PutEventTypeResponse201]:
    """Create or replace an event type: description, optional JSON Schema of its payload, example,
    deprecated flag

    Args:
        name (str):
        body (EventTypeUser): An event type as the caller sends it (PUT creates or replaces it: an
            omitted field takes its default)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | PutEventTypeResponse200 | PutEventTypeResponse201]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUser,
) -> Error | PutEventTypeResponse200 | PutEventTypeResponse201 | None:
    """Create or replace an event type: description, optional JSON Schema of its payload, example,
    deprecated flag

    Args:
        name (str):
        body (EventTypeUser): An event type as the caller sends it (PUT creates or replaces it: an
            omitted field takes its default)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | PutEventTypeResponse200 | PutEventTypeResponse201
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUser,
) -> Response[Error | PutEventTypeResponse200 | PutEventTypeResponse201]:
    """Create or replace an event type: description, optional JSON Schema of its payload, example,
    deprecated flag

    Args:
        name (str):
        body (EventTypeUser): An event type as the caller sends it (PUT creates or replaces it: an
            omitted field takes its default)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | PutEventTypeResponse200 | PutEventTypeResponse201]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: EventTypeUser,
) -> Error | PutEventTypeResponse200 | PutEventTypeResponse201 | None:
    """Create or replace an event type: description, optional JSON Schema of its payload, example,
    deprecated flag

    Args:
        name (str):
        body (EventTypeUser): An event type as the caller sends it (PUT creates or replaces it: an
            omitted field takes its default)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | PutEventTypeResponse200 | PutEventTypeResponse201
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
