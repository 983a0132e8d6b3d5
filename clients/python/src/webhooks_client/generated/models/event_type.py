from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_type_schema_type_0 import EventTypeSchemaType0


T = TypeVar("T", bound="EventType")


@_attrs_define
class EventType:
    """
    Attributes:
        name (str): the normalised event type, <app>.<type> in lower case
        description (str):
        deprecated (bool):
        version (int): increases on every write of the type; schemas are compiled once per version
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        schema (bool | EventTypeSchemaType0 | Unset): the payload's JSON Schema, as written
        example (Any | Unset): an example payload
    """

    name: str
    description: str
    deprecated: bool
    version: int
    created_at: datetime.datetime
    updated_at: datetime.datetime
    schema: bool | EventTypeSchemaType0 | Unset = UNSET
    example: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_type_schema_type_0 import EventTypeSchemaType0  # noqa: PLC0415

        name = self.name

        description = self.description

        deprecated = self.deprecated

        version = self.version

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        schema: bool | dict[str, Any] | Unset
        if isinstance(self.schema, Unset):
            schema = UNSET
        elif isinstance(self.schema, EventTypeSchemaType0):
            schema = self.schema.to_dict()
        else:
            schema = self.schema

        example = self.example

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "description": description,
                "deprecated": deprecated,
                "version": version,
                "createdAt": created_at,
                "updatedAt": updated_at,
            }
        )
        if schema is not UNSET:
            field_dict["schema"] = schema
        if example is not UNSET:
            field_dict["example"] = example

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_schema_type_0 import EventTypeSchemaType0  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        description = d.pop("description")

        deprecated = d.pop("deprecated")

        version = d.pop("version")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))

        def _parse_schema(data: object) -> bool | EventTypeSchemaType0 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schema_type_0 = EventTypeSchemaType0.from_dict(data)

                return schema_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(bool | EventTypeSchemaType0 | Unset, data)

        schema = _parse_schema(d.pop("schema", UNSET))

        example = d.pop("example", UNSET)

        event_type = cls(
            name=name,
            description=description,
            deprecated=deprecated,
            version=version,
            created_at=created_at,
            updated_at=updated_at,
            schema=schema,
            example=example,
        )

        event_type.additional_properties = d
        return event_type

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
