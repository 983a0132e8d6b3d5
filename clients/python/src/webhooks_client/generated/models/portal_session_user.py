from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..models.portal_session_user_features_item import PortalSessionUserFeaturesItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.portal_theme import PortalTheme


T = TypeVar("T", bound="PortalSessionUser")


@_attrs_define
class PortalSessionUser:
    """A portal session as its creator asks for it (every field optional).

    Attributes:
        expires_in (str | Unset): Go duration, whole seconds from 1s to 24h (default "1h")
        features (list[PortalSessionUserFeaturesItem] | Unset): default: every feature but "secrets" (least privilege:
            ask for it to show or rotate the signing secret)
        theme (PortalTheme | Unset): What the page applies as CSS variables.
    """

    expires_in: str | Unset = UNSET
    features: list[PortalSessionUserFeaturesItem] | Unset = UNSET
    theme: PortalTheme | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        expires_in = self.expires_in

        features: list[str] | Unset = UNSET
        if not isinstance(self.features, Unset):
            features = []
            for features_item_data in self.features:
                features_item = features_item_data.value
                features.append(features_item)

        theme: dict[str, Any] | Unset = UNSET
        if not isinstance(self.theme, Unset):
            theme = self.theme.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if expires_in is not UNSET:
            field_dict["expiresIn"] = expires_in
        if features is not UNSET:
            field_dict["features"] = features
        if theme is not UNSET:
            field_dict["theme"] = theme

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.portal_theme import PortalTheme  # noqa: PLC0415

        d = dict(src_dict)
        expires_in = d.pop("expiresIn", UNSET)

        _features = d.pop("features", UNSET)
        features: list[PortalSessionUserFeaturesItem] | Unset = UNSET
        if _features is not UNSET:
            features = []
            for features_item_data in _features:
                features_item = PortalSessionUserFeaturesItem(features_item_data)

                features.append(features_item)

        _theme = d.pop("theme", UNSET)
        theme: PortalTheme | Unset
        if isinstance(_theme, Unset):
            theme = UNSET
        else:
            theme = PortalTheme.from_dict(_theme)

        portal_session_user = cls(
            expires_in=expires_in,
            features=features,
            theme=theme,
        )

        return portal_session_user
