"""List endpoints answer ``{"cursor": {"data": [...], "hasMore", "next"}}``; the next page is
asked for with ``cursor=<next>`` (and the same page size). Pages are keyset pages, so items
created while iterating never shift others between pages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from .errors import ApiError
from .generated.types import UNSET, Response


def _page(response: Response[Any]) -> Any:
    inner = getattr(response.parsed, "cursor", None)
    if response.status_code != 200 or inner is None:
        raise ApiError(int(response.status_code), response.content)
    if inner.has_more and not inner.next_:
        raise ApiError(int(response.status_code), b'{"errorMessage": "hasMore without a next cursor"}')
    return inner


def _detailed(operation: Any, name: str) -> Callable[..., Any]:
    found = getattr(operation, name, operation)
    if not callable(found):
        raise TypeError(f"{operation!r} is neither a generated operation module nor its {name}")
    return found


def paginate(operation: Any, /, **arguments: Any) -> Iterator[Any]:
    """Every item of a list endpoint, page after page. ``operation`` is a generated module
    (``list_config_deliveries``) or its ``sync_detailed``; ``arguments`` are the call's
    (``client=``, ``id=``, ``page_size="100"``, filters) but the cursor. A failed page raises
    ApiError.

        for d in paginate(list_config_deliveries, client=api, id=config_id, page_size="100"): ...
    """
    call = _detailed(operation, "sync_detailed")
    cursor: Any = UNSET
    while True:
        inner = _page(call(**arguments, cursor=cursor))
        yield from inner.data
        if not inner.has_more:
            return
        cursor = inner.next_


async def apaginate(operation: Any, /, **arguments: Any) -> AsyncIterator[Any]:
    """``paginate`` for async code: ``operation`` is a generated module or its ``asyncio_detailed``."""
    call = _detailed(operation, "asyncio_detailed")
    cursor: Any = UNSET
    while True:
        inner = _page(await call(**arguments, cursor=cursor))
        for item in inner.data:
            yield item
        if not inner.has_more:
            return
        cursor = inner.next_
