from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.config import Config


T = TypeVar("T", bound="ConfigCursorCursor")


@_attrs_define
class ConfigCursorCursor:
    """
    Attributes:
        has_more (bool):
        data (list[Config]):
        page_size (int | Unset):
        next_ (str | Unset): pass as `cursor` to get the next page
    """

    has_more: bool
    data: list[Config]
    page_size: int | Unset = UNSET
    next_: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        has_more = self.has_more

        data = []
        for data_item_data in self.data:
            data_item = data_item_data.to_dict()
            data.append(data_item)

        page_size = self.page_size

        next_ = self.next_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "hasMore": has_more,
                "data": data,
            }
        )
        if page_size is not UNSET:
            field_dict["pageSize"] = page_size
        if next_ is not UNSET:
            field_dict["next"] = next_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config import Config  # noqa: PLC0415

        d = dict(src_dict)
        has_more = d.pop("hasMore")

        data = []
        _data = d.pop("data")
        for data_item_data in _data:
            data_item = Config.from_dict(data_item_data)

            data.append(data_item)

        page_size = d.pop("pageSize", UNSET)

        next_ = d.pop("next", UNSET)

        config_cursor_cursor = cls(
            has_more=has_more,
            data=data,
            page_size=page_size,
            next_=next_,
        )

        config_cursor_cursor.additional_properties = d
        return config_cursor_cursor

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
