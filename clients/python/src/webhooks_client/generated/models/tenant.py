from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.tenant_metadata import TenantMetadata


T = TypeVar("T", bound="Tenant")


@_attrs_define
class Tenant:
    """
    Attributes:
        id (UUID): the default tenant's is the nil UUID 00000000-0000-0000-0000-000000000000
        uid (str): the default tenant's is "default"
        name (str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        metadata (TenantMetadata | Unset): the operator's labels and references; absent in the answers to a portal
            session
    """

    id: UUID
    uid: str
    name: str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    metadata: TenantMetadata | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        uid = self.uid

        name = self.name

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "uid": uid,
                "name": name,
                "createdAt": created_at,
                "updatedAt": updated_at,
            }
        )
        if metadata is not UNSET:
            field_dict["metadata"] = metadata

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tenant_metadata import TenantMetadata  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        uid = d.pop("uid")

        name = d.pop("name")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))

        _metadata = d.pop("metadata", UNSET)
        metadata: TenantMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = TenantMetadata.from_dict(_metadata)

        tenant = cls(
            id=id,
            uid=uid,
            name=name,
            created_at=created_at,
            updated_at=updated_at,
            metadata=metadata,
        )

        tenant.additional_properties = d
        return tenant

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
