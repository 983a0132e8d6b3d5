from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.config import Config


T = TypeVar("T", bound="ConfigWritten")


@_attrs_define
class ConfigWritten:
    """The config as written, and when the event catalog is not empty, warnings about subscriptions it does not list

    Attributes:
        data (Config):
        warnings (list[str] | Unset): present only when there is one: a subscribed type not in the event catalog, a
            wildcard matching none of its types, a deprecated type
    """

    data: Config
    warnings: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        warnings: list[str] | Unset = UNSET
        if not isinstance(self.warnings, Unset):
            warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
            }
        )
        if warnings is not UNSET:
            field_dict["warnings"] = warnings

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config import Config  # noqa: PLC0415

        d = dict(src_dict)
        data = Config.from_dict(d.pop("data"))

        warnings = cast(list[str], d.pop("warnings", UNSET))

        config_written = cls(
            data=data,
            warnings=warnings,
        )

        config_written.additional_properties = d
        return config_written

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
