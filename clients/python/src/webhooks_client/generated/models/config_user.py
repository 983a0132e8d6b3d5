from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.config_user_signature_headers_type_1 import ConfigUserSignatureHeadersType1
from ..models.config_user_signature_headers_type_2_type_1 import ConfigUserSignatureHeadersType2Type1
from ..models.config_user_signature_headers_type_3_type_1 import ConfigUserSignatureHeadersType3Type1
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.config_user_batch_type_0 import ConfigUserBatchType0
    from ..models.config_user_destination import ConfigUserDestination
    from ..models.config_user_filter_type_0 import ConfigUserFilterType0
    from ..models.config_user_ordering_type_0 import ConfigUserOrderingType0
    from ..models.endpoint_auth_change import EndpointAuthChange


T = TypeVar("T", bound="ConfigUser")


@_attrs_define
class ConfigUser:
    """A config as the caller sends it (create and update).

    Attributes:
        event_types (list[str]):
        endpoint (str | Unset): absolute http(s) URL the events are POSTed to; required unless destination is kafka,
            nats, amqp or sqs (then derived from it)
        destination (ConfigUserDestination | Unset): where deliveries go: http (the default: POST to endpoint), kafka (a
            topic), nats (a subject), amqp (an exchange) or sqs (a queue). Every destination gets the same body and the same
            signed headers. For kafka, nats, amqp and sqs, endpoint is derived from the destination (leave it out, or give
            the derived value back); endpoint auth (auth) applies to http only. On update, absent keeps the current
            destination
        secret (str | Unset): standard base64 of exactly 24 bytes (32 characters); generated when absent (on update by a
            portal session without the "secrets" feature: absent keeps the stored one, given is 403)
        name (str | Unset):
        tenant_id (UUID | Unset): the tenant owning the config (create only: a config never changes tenant; on update it
            must be the current one or absent); the default tenant when absent, or the token's tenant with a tenant-scoped
            token
        filter_ (ConfigUserFilterType0 | None | Unset): payload filter with MongoDB-style operators, tested on the event
            message endpoints receive (type, payload, ...): {"payload.amount": {"$gte": 100}, "payload.currency": {"$in":
            ["EUR", "USD"]}}; operators $eq $ne $gt $gte $lt $lte $in $nin $all $size $exists $regex (RE2, $options i m s)
            $not $elemMatch $and $or $nor; at most 16 KiB as JSON, 10 $regex of at most 256 characters, counted repetitions
            up to {100} and 1 000 RE2 instructions each, lists ($in $nin $all) of at most 256 values; evaluated under a step
            budget per event (over it, the event counts as filtered); null removes it; on update, absent keeps the current
            filter
        auth (EndpointAuthChange | Unset): Endpoint auth and custom headers, applied as a merge: a kind absent is kept,
            null removes it, and inside a kind a field absent keeps its stored value (so one credential changes without
            resending the others). Only one of basic, bearer and oauth2 (each sets Authorization). Every credential is
            sealed at rest and masked in answers. A credential is bound to the endpoint origin (and the client secret to the
            token URL) it was given for: a change of either needs it again in the same request. Credentials over plain
            http:// are refused (endpoint and token URL), except to a loopback address or localhost while the egress policy
            allows loopback (no --egress-deny-private).
        ordering (ConfigUserOrderingType0 | None | Unset): ordered delivery per ordering key (docs/webhooks/ordering-
            and-batching.md#ordered-delivery); null turns it off; on update, absent keeps the current setting
        batch (ConfigUserBatchType0 | None | Unset): send up to maxEvents events in one POST as a JSON array
            (docs/webhooks/ordering-and-batching.md#batched-delivery); an ordered config sends the events of each ordering
            key in batches, one after the other; null turns it off; on update, absent keeps the current setting
        signature_headers (ConfigUserSignatureHeadersType1 | ConfigUserSignatureHeadersType2Type1 |
            ConfigUserSignatureHeadersType3Type1 | None | Unset): the names the signature travels under: svc (svc-webhook-
            id, svc-webhook-timestamp, svc-webhook-signature) or standard (webhook-id, webhook-timestamp, webhook-signature:
            Standard Webhooks libraries verify deliveries unchanged, with the config's secret as it is). The signature, the
            other headers (svc-webhook-test, svc-webhook-idempotency-key, svc-webhook-batch-ids) and the body are the same
            in both; null or absent on create: the deployment's default (--signature-headers, svc unless set); on update,
            null returns to that default and absent keeps the current setting
        max_concurrency (int | None | Unset): most sends of this config in flight at once, across every worker process
            (a POST counts from its claim to its attempt row); a send past it waits and tries again, shown as the delivery's
            wait ("waiting for a send slot"); null or absent on create: no cap; on update, null removes the cap and absent
            keeps it
    """

    event_types: list[str]
    endpoint: str | Unset = UNSET
    destination: ConfigUserDestination | Unset = UNSET
    secret: str | Unset = UNSET
    name: str | Unset = UNSET
    tenant_id: UUID | Unset = UNSET
    filter_: ConfigUserFilterType0 | None | Unset = UNSET
    auth: EndpointAuthChange | Unset = UNSET
    ordering: ConfigUserOrderingType0 | None | Unset = UNSET
    batch: ConfigUserBatchType0 | None | Unset = UNSET
    signature_headers: (
        ConfigUserSignatureHeadersType1
        | ConfigUserSignatureHeadersType2Type1
        | ConfigUserSignatureHeadersType3Type1
        | None
        | Unset
    ) = UNSET
    max_concurrency: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.config_user_batch_type_0 import ConfigUserBatchType0  # noqa: PLC0415
        from ..models.config_user_filter_type_0 import ConfigUserFilterType0  # noqa: PLC0415
        from ..models.config_user_ordering_type_0 import ConfigUserOrderingType0  # noqa: PLC0415

        event_types = self.event_types

        endpoint = self.endpoint

        destination: dict[str, Any] | Unset = UNSET
        if not isinstance(self.destination, Unset):
            destination = self.destination.to_dict()

        secret = self.secret

        name = self.name

        tenant_id: str | Unset = UNSET
        if not isinstance(self.tenant_id, Unset):
            tenant_id = str(self.tenant_id)

        filter_: dict[str, Any] | None | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        elif isinstance(self.filter_, ConfigUserFilterType0):
            filter_ = self.filter_.to_dict()
        else:
            filter_ = self.filter_

        auth: dict[str, Any] | Unset = UNSET
        if not isinstance(self.auth, Unset):
            auth = self.auth.to_dict()

        ordering: dict[str, Any] | None | Unset
        if isinstance(self.ordering, Unset):
            ordering = UNSET
        elif isinstance(self.ordering, ConfigUserOrderingType0):
            ordering = self.ordering.to_dict()
        else:
            ordering = self.ordering

        batch: dict[str, Any] | None | Unset
        if isinstance(self.batch, Unset):
            batch = UNSET
        elif isinstance(self.batch, ConfigUserBatchType0):
            batch = self.batch.to_dict()
        else:
            batch = self.batch

        signature_headers: None | str | Unset
        if isinstance(self.signature_headers, Unset):
            signature_headers = UNSET
        elif isinstance(self.signature_headers, ConfigUserSignatureHeadersType1):
            signature_headers = self.signature_headers.value
        elif isinstance(self.signature_headers, ConfigUserSignatureHeadersType2Type1):
            signature_headers = self.signature_headers.value
        elif isinstance(self.signature_headers, ConfigUserSignatureHeadersType3Type1):
            signature_headers = self.signature_headers.value
        else:
            signature_headers = self.signature_headers

        max_concurrency: int | None | Unset
        if isinstance(self.max_concurrency, Unset):
            max_concurrency = UNSET
        else:
            max_concurrency = self.max_concurrency

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "eventTypes": event_types,
            }
        )
        if endpoint is not UNSET:
            field_dict["endpoint"] = endpoint
        if destination is not UNSET:
            field_dict["destination"] = destination
        if secret is not UNSET:
            field_dict["secret"] = secret
        if name is not UNSET:
            field_dict["name"] = name
        if tenant_id is not UNSET:
            field_dict["tenantId"] = tenant_id
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if auth is not UNSET:
            field_dict["auth"] = auth
        if ordering is not UNSET:
            field_dict["ordering"] = ordering
        if batch is not UNSET:
            field_dict["batch"] = batch
        if signature_headers is not UNSET:
            field_dict["signatureHeaders"] = signature_headers
        if max_concurrency is not UNSET:
            field_dict["maxConcurrency"] = max_concurrency

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_user_batch_type_0 import ConfigUserBatchType0  # noqa: PLC0415
        from ..models.config_user_destination import ConfigUserDestination  # noqa: PLC0415
        from ..models.config_user_filter_type_0 import ConfigUserFilterType0  # noqa: PLC0415
        from ..models.config_user_ordering_type_0 import ConfigUserOrderingType0  # noqa: PLC0415
        from ..models.endpoint_auth_change import EndpointAuthChange  # noqa: PLC0415

        d = dict(src_dict)
        event_types = cast(list[str], d.pop("eventTypes"))

        endpoint = d.pop("endpoint", UNSET)

        _destination = d.pop("destination", UNSET)
        destination: ConfigUserDestination | Unset
        if isinstance(_destination, Unset):
            destination = UNSET
        else:
            destination = ConfigUserDestination.from_dict(_destination)

        secret = d.pop("secret", UNSET)

        name = d.pop("name", UNSET)

        _tenant_id = d.pop("tenantId", UNSET)
        tenant_id: UUID | Unset
        if isinstance(_tenant_id, Unset):
            tenant_id = UNSET
        else:
            tenant_id = UUID(_tenant_id)

        def _parse_filter_(data: object) -> ConfigUserFilterType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filter_type_0 = ConfigUserFilterType0.from_dict(data)

                return filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfigUserFilterType0 | None | Unset, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        _auth = d.pop("auth", UNSET)
        auth: EndpointAuthChange | Unset
        if isinstance(_auth, Unset):
            auth = UNSET
        else:
            auth = EndpointAuthChange.from_dict(_auth)

        def _parse_ordering(data: object) -> ConfigUserOrderingType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ordering_type_0 = ConfigUserOrderingType0.from_dict(data)

                return ordering_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfigUserOrderingType0 | None | Unset, data)

        ordering = _parse_ordering(d.pop("ordering", UNSET))

        def _parse_batch(data: object) -> ConfigUserBatchType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                batch_type_0 = ConfigUserBatchType0.from_dict(data)

                return batch_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfigUserBatchType0 | None | Unset, data)

        batch = _parse_batch(d.pop("batch", UNSET))

        def _parse_signature_headers(
            data: object,
        ) -> (
            ConfigUserSignatureHeadersType1
            | ConfigUserSignatureHeadersType2Type1
            | ConfigUserSignatureHeadersType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signature_headers_type_1 = ConfigUserSignatureHeadersType1(data)

                return signature_headers_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signature_headers_type_2_type_1 = ConfigUserSignatureHeadersType2Type1(data)

                return signature_headers_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                signature_headers_type_3_type_1 = ConfigUserSignatureHeadersType3Type1(data)

                return signature_headers_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                ConfigUserSignatureHeadersType1
                | ConfigUserSignatureHeadersType2Type1
                | ConfigUserSignatureHeadersType3Type1
                | None
                | Unset,
                data,
            )

        signature_headers = _parse_signature_headers(d.pop("signatureHeaders", UNSET))

        def _parse_max_concurrency(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_concurrency = _parse_max_concurrency(d.pop("maxConcurrency", UNSET))

        config_user = cls(
            event_types=event_types,
            endpoint=endpoint,
            destination=destination,
            secret=secret,
            name=name,
            tenant_id=tenant_id,
            filter_=filter_,
            auth=auth,
            ordering=ordering,
            batch=batch,
            signature_headers=signature_headers,
            max_concurrency=max_concurrency,
        )

        return config_user
