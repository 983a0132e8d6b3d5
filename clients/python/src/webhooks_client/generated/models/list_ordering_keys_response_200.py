from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.list_ordering_keys_response_200_cursor import ListOrderingKeysResponse200Cursor


T = TypeVar("T", bound="ListOrderingKeysResponse200")


@_attrs_define
class ListOrderingKeysResponse200:
    """
    Attributes:
        cursor (ListOrderingKeysResponse200Cursor | Unset):
    """

    cursor: ListOrderingKeysResponse200Cursor | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cursor: dict[str, Any] | Unset = UNSET
        if not isinstance(self.cursor, Unset):
            cursor = self.cursor.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if cursor is not UNSET:
            field_dict["cursor"] = cursor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.list_ordering_keys_response_200_cursor import ListOrderingKeysResponse200Cursor  # noqa: PLC0415

        d = dict(src_dict)
        _cursor = d.pop("cursor", UNSET)
        cursor: ListOrderingKeysResponse200Cursor | Unset
        if isinstance(_cursor, Unset):
            cursor = UNSET
        else:
            cursor = ListOrderingKeysResponse200Cursor.from_dict(_cursor)

        list_ordering_keys_response_200 = cls(
            cursor=cursor,
        )

        list_ordering_keys_response_200.additional_properties = d
        return list_ordering_keys_response_200

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
