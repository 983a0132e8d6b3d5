from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.portal_session_current_features_item import PortalSessionCurrentFeaturesItem

if TYPE_CHECKING:
    from ..models.portal_session_current_tenant import PortalSessionCurrentTenant
    from ..models.portal_theme import PortalTheme


T = TypeVar("T", bound="PortalSessionCurrent")


@_attrs_define
class PortalSessionCurrent:
    """
    Attributes:
        id (UUID):
        tenant (PortalSessionCurrentTenant):
        features (list[PortalSessionCurrentFeaturesItem]):
        theme (PortalTheme): What the page applies as CSS variables.
        expires_at (datetime.datetime):
    """

    id: UUID
    tenant: PortalSessionCurrentTenant
    features: list[PortalSessionCurrentFeaturesItem]
    theme: PortalTheme
    expires_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        tenant = self.tenant.to_dict()

        features = []
        for features_item_data in self.features:
            features_item = features_item_data.value
            features.append(features_item)

        theme = self.theme.to_dict()

        expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "tenant": tenant,
                "features": features,
                "theme": theme,
                "expiresAt": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.portal_session_current_tenant import PortalSessionCurrentTenant  # noqa: PLC0415
        from ..models.portal_theme import PortalTheme  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        tenant = PortalSessionCurrentTenant.from_dict(d.pop("tenant"))

        features = []
        _features = d.pop("features")
        for features_item_data in _features:
            features_item = PortalSessionCurrentFeaturesItem(features_item_data)

            features.append(features_item)

        theme = PortalTheme.from_dict(d.pop("theme"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expiresAt"))

        portal_session_current = cls(
            id=id,
            tenant=tenant,
            features=features,
            theme=theme,
            expires_at=expires_at,
        )

        portal_session_current.additional_properties = d
        return portal_session_current

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
