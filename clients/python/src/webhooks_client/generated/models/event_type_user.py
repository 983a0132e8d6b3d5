from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_user_schema_type_0 import EventTypeUserSchemaType0


T = TypeVar("T", bound="EventTypeUser")


@_attrs_define
class EventTypeUser:
    """An event type as the caller sends it (PUT creates or replaces it: an omitted field takes its default)

    Attributes:
        description (str | Unset): what the event means; "" when absent
        schema (bool | EventTypeUserSchemaType0 | Unset): JSON Schema (2020-12) of the payload, at most 128 KiB and 64
            levels deep; checked when written (400 naming what is wrong). Patterns run on RE2 (no look-arounds or
            backreferences); no remote $ref. Absent: any payload
        example (Any | Unset): an example payload (at most 64 KiB), checked against the schema
        deprecated (bool | Unset): still delivered; subscribing to it warns and its events are counted
            (webhooks_deprecated_events_total); false when absent
    """

    description: str | Unset = UNSET
    schema: bool | EventTypeUserSchemaType0 | Unset = UNSET
    example: Any | Unset = UNSET
    deprecated: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_type_user_schema_type_0 import EventTypeUserSchemaType0  # noqa: PLC0415

        description = self.description

        schema: bool | dict[str, Any] | Unset
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, EventTypeUserSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        example = self.example

        deprecated = self.deprecated

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if description is not UNSET:
            field_dict["description"] = description
        if schema is not UNSET:
            field_dict["schema"] = schema
        if example is not UNSET:
            field_dict["example"] = example
        if deprecated is not UNSET:
            field_dict["deprecated"] = deprecated

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_user_schema_type_0 import EventTypeUserSchemaType0  # noqa: PLC0415

        d = dict(src_dict)
        description = d.pop("description", UNSET)

        def _parse_schema(data: object) -> bool | EventTypeUserSchemaType0 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = EventTypeUserSchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | EventTypeUserSchemaType0 | Unset, data)

        schema = _parse_schema(d.pop("schema", UNSET))

        example = d.pop("example", UNSET)

        deprecated = d.pop("deprecated", UNSET)

        event_type_user = cls(
            description=description,
            schema=schema,
            example=example,
            deprecated=deprecated,
        )

        return event_type_user
