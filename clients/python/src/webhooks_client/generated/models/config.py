from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.config_signature_headers import ConfigSignatureHeaders
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.config_batch import ConfigBatch
    from ..models.config_destination import ConfigDestination
    from ..models.config_filter import ConfigFilter
    from ..models.config_ordering import ConfigOrdering
    from ..models.endpoint_auth import EndpointAuth


T = TypeVar("T", bound="Config")


@_attrs_define
class Config:
    """
    Attributes:
        id (UUID):
        name (str):
        endpoint (str): the URL POSTed to; for a kafka, nats, amqp or sqs destination, derived from it: kafka://<first
            broker>/<topic>, nats://<first server>/<subject>, amqp://<host:port>/<vhost>?exchange=...&routingKey=...,
            sqs+<queue URL>
        event_types (list[str]):
        secret (str): the secret in clear only in the answers of create and secret change; "********" in every other
            answer (GET /configs/{id}/secret reads it)
        active (bool):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        destination (ConfigDestination | Unset): present for kafka, nats, amqp and sqs destinations (absent: http, to
            endpoint): the fields given, credentials left out (they are write-only)
        previous_secret_expires_at (datetime.datetime | Unset): present while the rotated-out secret still signs
            deliveries
        auth (EndpointAuth | Unset): The kinds of endpoint auth configured, with their public parts; every credential
            masked
        tenant_id (UUID | Unset): the tenant owning the config (the default tenant: the nil UUID)
        filter_ (ConfigFilter | Unset): the payload filter an event must pass besides its type; absent when the config
            has none
        ordering (ConfigOrdering | Unset): present when the config delivers in order; onFailure is always shown
        batch (ConfigBatch | Unset): present when the config batches its deliveries
        signature_headers (ConfigSignatureHeaders | Unset): the names the signature travels under: svc (svc-webhook-id,
            svc-webhook-timestamp, svc-webhook-signature) or standard (webhook-id, webhook-timestamp, webhook-signature:
            Standard Webhooks libraries verify deliveries unchanged, with the config's secret as it is). The signature, the
            other headers (svc-webhook-test, svc-webhook-idempotency-key, svc-webhook-batch-ids) and the body are the same
            in both; present when the config sets it, absent when its deliveries follow the deployment's default
            (--signature-headers)
        max_concurrency (int | Unset): most sends of this config in flight at once, across every worker process (a POST
            counts from its claim to its attempt row); a send past it waits and tries again, shown as the delivery's wait
            ("waiting for a send slot"); absent: no cap
        deactivated_reason (str | Unset): set when the config was deactivated automatically (--auto-deactivate-after);
            cleared by activate
        deactivated_at (datetime.datetime | Unset):
    """

    id: UUID
    name: str
    endpoint: str
    event_types: list[str]
    secret: str
    active: bool
    created_at: datetime.datetime
    updated_at: datetime.datetime
    destination: ConfigDestination | Unset = UNSET
    previous_secret_expires_at: datetime.datetime | Unset = UNSET
    auth: EndpointAuth | Unset = UNSET
    tenant_id: UUID | Unset = UNSET
    filter_: ConfigFilter | Unset = UNSET
    ordering: ConfigOrdering | Unset = UNSET
    batch: ConfigBatch | Unset = UNSET
    signature_headers: ConfigSignatureHeaders | Unset = UNSET
    max_concurrency: int | Unset = UNSET
    deactivated_reason: str | Unset = UNSET
    deactivated_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        name = self.name

        endpoint = self.endpoint

        event_types = self.event_types

        secret = self.secret

        active = self.active

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        destination: dict[str, Any] | Unset = UNSET
        if not isinstance(self.destination, Unset):
            destination = self.destination.to_dict()

        previous_secret_expires_at: str | Unset = UNSET
        if not isinstance(self.previous_secret_expires_at, Unset):
            previous_secret_expires_at = self.previous_secret_expires_at.isoformat()

        auth: dict[str, Any] | Unset = UNSET
        if not isinstance(self.auth, Unset):
            auth = self.auth.to_dict()

        tenant_id: str | Unset = UNSET
        if not isinstance(self.tenant_id, Unset):
            tenant_id = str(self.tenant_id)

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        ordering: dict[str, Any] | Unset = UNSET
        if not isinstance(self.ordering, Unset):
            ordering = self.ordering.to_dict()

        batch: dict[str, Any] | Unset = UNSET
        if not isinstance(self.batch, Unset):
            batch = self.batch.to_dict()

        signature_headers: str | Unset = UNSET
        if not isinstance(self.signature_headers, Unset):
            signature_headers = self.signature_headers.value

        max_concurrency = self.max_concurrency

        deactivated_reason = self.deactivated_reason

        deactivated_at: str | Unset = UNSET
        if not isinstance(self.deactivated_at, Unset):
            deactivated_at = self.deactivated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "endpoint": endpoint,
                "eventTypes": event_types,
                "secret": secret,
                "active": active,
                "createdAt": created_at,
                "updatedAt": updated_at,
            }
        )
        if destination is not UNSET:
            field_dict["destination"] = destination
        if previous_secret_expires_at is not UNSET:
            field_dict["previousSecretExpiresAt"] = previous_secret_expires_at
        if auth is not UNSET:
            field_dict["auth"] = auth
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if ordering is not UNSET:
            field_dict["ordering"] = ordering
        if batch is not UNSET:
            field_dict["batch"] = batch
        if signature_headers is not UNSET:
            field_dict["signatureHeaders"] = signature_headers
        if max_concurrency is not UNSET:
            field_dict["maxConcurrency"] = max_concurrency
        if deactivated_reason is not UNSET:
            field_dict["deactivatedReason"] = deactivated_reason
        if deactivated_at is not UNSET:
            field_dict["deactivatedAt"] = deactivated_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_batch import ConfigBatch  # noqa: PLC0415
        from ..models.config_destination import ConfigDestination  # noqa: PLC0415
        from ..models.config_filter import ConfigFilter  # noqa: PLC0415
        from ..models.config_ordering import ConfigOrdering  # noqa: PLC0415
        from ..models.endpoint_auth import EndpointAuth  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        name = d.pop("name")

        endpoint = d.pop("endpoint")

        event_types = cast(list[str], d.pop("eventTypes"))

        secret = d.pop("secret")

        active = d.pop("active")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updatedAt"))

        _destination = d.pop("destination", UNSET)
        destination: ConfigDestination | Unset
        if isinstance(_destination, Unset):
            destination = UNSET
        else:
            destination = ConfigDestination.from_dict(_destination)

        _previous_secret_expires_at = d.pop("previousSecretExpiresAt", UNSET)
        previous_secret_expires_at: datetime.datetime | Unset
        if isinstance(_previous_secret_expires_at, Unset):
            previous_secret_expires_at = UNSET
        else:
            previous_secret_expires_at = datetime.datetime.fromisoformat(_previous_secret_expires_at)

        _auth = d.pop("auth", UNSET)
        auth: EndpointAuth | Unset
        if isinstance(_auth, Unset):
            auth = UNSET
        else:
            auth = EndpointAuth.from_dict(_auth)

        _tenant_id = d.pop("tenantId", UNSET)
        tenant_id: UUID | Unset
        if isinstance(_tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = UUID(_tenant_id)

        _filter_ = d.pop("filter", UNSET)
        filter_: ConfigFilter | Unset
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = ConfigFilter.from_dict(_filter_)

        _ordering = d.pop("ordering", UNSET)
        ordering: ConfigOrdering | Unset
        if isinstance(_ordering, Unset):
            ordering = UNSET
        else:
            ordering = ConfigOrdering.from_dict(_ordering)

        _batch = d.pop("batch", UNSET)
        batch: ConfigBatch | Unset
        if isinstance(_batch, Unset):
            batch = UNSET
        else:
            batch = ConfigBatch.from_dict(_batch)

        _signature_headers = d.pop("signatureHeaders", UNSET)
        signature_headers: ConfigSignatureHeaders | Unset
        if isinstance(_signature_headers, Unset):
            signature_headers = UNSET
        else:
            signature_headers = ConfigSignatureHeaders(_signature_headers)

        max_concurrency = d.pop("maxConcurrency", UNSET)

        deactivated_reason = d.pop("deactivatedReason", UNSET)

        _deactivated_at = d.pop("deactivatedAt", UNSET)
        deactivated_at: datetime.datetime | Unset
        if isinstance(_deactivated_at, Unset):
            deactivated_at = UNSET
        else:
            deactivated_at = datetime.datetime.fromisoformat(_deactivated_at)

        config = cls(
            id=id,
            name=name,
            endpoint=endpoint,
            event_types=event_types,
            secret=secret,
            active=active,
            created_at=created_at,
            updated_at=updated_at,
            destination=destination,
            previous_secret_expires_at=previous_secret_expires_at,
            auth=auth,
            tenant_id=tenant_id,
            filter_=filter_,
            ordering=ordering,
            batch=batch,
            signature_headers=signature_headers,
            max_concurrency=max_concurrency,
            deactivated_reason=deactivated_reason,
            deactivated_at=deactivated_at,
        )

        config.additional_properties = d
        return config

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
