from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.portal_session_features_item import PortalSessionFeaturesItem

if TYPE_CHECKING:
    from ..models.portal_theme import PortalTheme


T = TypeVar("T", bound="PortalSession")


@_attrs_define
class PortalSession:
    """
    Attributes:
        id (UUID):
        tenant_id (UUID):
        features (list[PortalSessionFeaturesItem]):
        theme (PortalTheme): What the page applies as CSS variables.
        created_by (None | str): subject of the token that created it (null with auth off)
        created_at (datetime.datetime):
        expires_at (datetime.datetime):
    """

    id: UUID
    tenant_id: UUID
    features: list[PortalSessionFeaturesItem]
    theme: PortalTheme
    created_by: None | str
    created_at: datetime.datetime
    expires_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        tenant_id = str(self.tenant_id)

        features = []
        for features_item_data in self.features:
            features_item = features_item_data.value
            features.append(features_item)

        theme = self.theme.to_dict()

        created_by: None | str
        created_by = self.created_by

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "tenantId": tenant_id,
                "features": features,
                "theme": theme,
                "createdBy": created_by,
                "createdAt": created_at,
                "expiresAt": expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.portal_theme import PortalTheme  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        tenant_id = UUID(d.pop("tenantId"))

        features = []
        _features = d.pop("features")
        for features_item_data in _features:
            features_item = PortalSessionFeaturesItem(features_item_data)

            features.append(features_item)

        theme = PortalTheme.from_dict(d.pop("theme"))

        def _parse_created_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        created_by = _parse_created_by(d.pop("createdBy"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expiresAt"))

        portal_session = cls(
            id=id,
            tenant_id=tenant_id,
            features=features,
            theme=theme,
            created_by=created_by,
            created_at=created_at,
            expires_at=expires_at,
        )

        portal_session.additional_properties = d
        return portal_session

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
