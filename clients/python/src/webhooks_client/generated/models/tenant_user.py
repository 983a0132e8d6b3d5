from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.tenant_user_metadata import TenantUserMetadata


T = TypeVar("T", bound="TenantUser")


@_attrs_define
class TenantUser:
    """A tenant as the caller sends it: create (uid required) and PATCH (every field optional).

    Attributes:
        uid (str | Unset): the caller's own id of its customer, unique: letters, digits, . _ ~ -, starting with a letter
            or digit, at most 128 characters, never UUID-shaped (events and tokens name a tenant by id or uid)
        name (str | Unset):
        metadata (TenantUserMetadata | Unset): free JSON object, at most 4 KiB as JSON; PATCH replaces it whole
    """

    uid: str | Unset = UNSET
    name: str | Unset = UNSET
    metadata: TenantUserMetadata | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        uid = self.uid

        name = self.name

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if uid is not UNSET:
            field_dict["uid"] = uid
        if name is not UNSET:
            field_dict["name"] = name
        if metadata is not UNSET:
            field_dict["metadata"] = metadata

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tenant_user_metadata import TenantUserMetadata  # noqa: PLC0415

        d = dict(src_dict)
        uid = d.pop("uid", UNSET)

        name = d.pop("name", UNSET)

        _metadata = d.pop("metadata", UNSET)
        metadata: TenantUserMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = TenantUserMetadata.from_dict(_metadata)

        tenant_user = cls(
            uid=uid,
            name=name,
            metadata=metadata,
        )

        return tenant_user
