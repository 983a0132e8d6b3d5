from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.event_type_cursor_cursor import EventTypeCursorCursor


T = TypeVar("T", bound="EventTypeCursor")


@_attrs_define
class EventTypeCursor:
    """
    Attributes:
        cursor (EventTypeCursorCursor):
    """

    cursor: EventTypeCursorCursor
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cursor = self.cursor.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cursor": cursor,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_type_cursor_cursor import EventTypeCursorCursor  # noqa: PLC0415

        d = dict(src_dict)
        cursor = EventTypeCursorCursor.from_dict(d.pop("cursor"))

        event_type_cursor = cls(
            cursor=cursor,
        )

        event_type_cursor.additional_properties = d
        return event_type_cursor

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
