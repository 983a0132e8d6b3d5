from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EventMessage")


@_attrs_define
class EventMessage:
    """The platform's event message, as on the broker; the type becomes lower(app).lower(type); other fields are dropped

    Attributes:
        type_ (str):
        idempotency_key (str | Unset): repeat it and nothing new starts
        date (str | Unset):
        app (str | Unset):
        version (str | Unset):
        payload (Any | Unset): any JSON, at most 128 levels deep and 2 MiB in all (the event as JSON)
        tenant (str | Unset): the tenant the event is for, by id or uid: it matches only that tenant's configs (without
            it, the default tenant's); a tenant that does not exist refuses the event (400); not part of the body sent
        ordering_key (str | Unset): an ordered config delivers the events of one ordering key one at a time, in the
            order they were accepted (without it, the config id is the key); part of the body sent
    """

    type_: str
    idempotency_key: str | Unset = UNSET
    date: str | Unset = UNSET
    app: str | Unset = UNSET
    version: str | Unset = UNSET
    payload: Any | Unset = UNSET
    tenant: str | Unset = UNSET
    ordering_key: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        idempotency_key = self.idempotency_key

        date = self.date

        app = self.app

        version = self.version

        payload = self.payload

        tenant = self.tenant

        ordering_key = self.ordering_key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
            }
        )
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key
        if date is not UNSET:
            field_dict["date"] = date
        if app is not UNSET:
            field_dict["app"] = app
        if version is not UNSET:
            field_dict["version"] = version
        if payload is not UNSET:
            field_dict["payload"] = payload
        if tenant is not UNSET:
            field_dict["tenant"] = tenant
        if ordering_key is not UNSET:
            field_dict["ordering_key"] = ordering_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = d.pop("type")

        idempotency_key = d.pop("idempotency_key", UNSET)

        date = d.pop("date", UNSET)

        app = d.pop("app", UNSET)

        version = d.pop("version", UNSET)

        payload = d.pop("payload", UNSET)

        tenant = d.pop("tenant", UNSET)

        ordering_key = d.pop("ordering_key", UNSET)

        event_message = cls(
            type_=type_,
            idempotency_key=idempotency_key,
            date=date,
            app=app,
            version=version,
            payload=payload,
            tenant=tenant,
            ordering_key=ordering_key,
        )

        event_message.additional_properties = d
        return event_message

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
