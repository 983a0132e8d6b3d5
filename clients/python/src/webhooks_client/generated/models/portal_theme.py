from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="PortalTheme")


@_attrs_define
class PortalTheme:
    """What the page applies as CSS variables.

    Attributes:
        brand_color (str | Unset): #rrggbb
        logo_url (str | Unset): an https URL whose host is in --portal-logo-hosts
    """

    brand_color: str | Unset = UNSET
    logo_url: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        brand_color = self.brand_color

        logo_url = self.logo_url

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if brand_color is not UNSET:
            field_dict["brandColor"] = brand_color
        if logo_url is not UNSET:
            field_dict["logoUrl"] = logo_url

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        brand_color = d.pop("brandColor", UNSET)

        logo_url = d.pop("logoUrl", UNSET)

        portal_theme = cls(
            brand_color=brand_color,
            logo_url=logo_url,
        )

        return portal_theme
