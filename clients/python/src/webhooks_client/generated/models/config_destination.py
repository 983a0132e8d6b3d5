from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.config_destination_type import ConfigDestinationType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.config_destination_auth import ConfigDestinationAuth
    from ..models.config_destination_sasl import ConfigDestinationSasl


T = TypeVar("T", bound="ConfigDestination")


@_attrs_define
class ConfigDestination:
    """present for kafka, nats, amqp and sqs destinations (absent: http, to endpoint): the fields given, credentials left
    out (they are write-only)

        Attributes:
            type_ (ConfigDestinationType):
            brokers (list[str] | Unset):
            topic (str | Unset):
            ssl (bool | Unset):
            sasl (ConfigDestinationSasl | Unset):
            servers (list[str] | Unset):
            subject (str | Unset):
            jetstream (bool | Unset):
            auth (ConfigDestinationAuth | Unset):
            url (str | Unset):
            exchange (str | Unset):
            routing_key (str | Unset):
            queue_url (str | Unset):
            region (str | Unset):
    """

    type_: ConfigDestinationType
    brokers: list[str] | Unset = UNSET
    topic: str | Unset = UNSET
    ssl: bool | Unset = UNSET
    sasl: ConfigDestinationSasl | Unset = UNSET
    servers: list[str] | Unset = UNSET
    subject: str | Unset = UNSET
    jetstream: bool | Unset = UNSET
    auth: ConfigDestinationAuth | Unset = UNSET
    url: str | Unset = UNSET
    exchange: str | Unset = UNSET
    routing_key: str | Unset = UNSET
    queue_url: str | Unset = UNSET
    region: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        brokers: list[str] | Unset = UNSET
        if not isinstance(self.brokers, Unset):
            brokers = self.brokers

        topic = self.topic

        ssl = self.ssl

        sasl: dict[str, Any] | Unset = UNSET
        if not isinstance(self.sasl, Unset):
            sasl = self.sasl.to_dict()

        servers: list[str] | Unset = UNSET
        if not isinstance(self.servers, Unset):
            servers = self.servers

        subject = self.subject

        jetstream = self.jetstream

        auth: dict[str, Any] | Unset = UNSET
        if not isinstance(self.auth, Unset):
            auth = self.auth.to_dict()

        url = self.url

        exchange = self.exchange

        routing_key = self.routing_key

        queue_url = self.queue_url

        region = self.region

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
            }
        )
        if brokers is not UNSET:
            field_dict["brokers"] = brokers
        if topic is not UNSET:
            field_dict["topic"] = topic
        if ssl is not UNSET:
            field_dict["ssl"] = ssl
        if sasl is not UNSET:
            field_dict["sasl"] = sasl
        if servers is not UNSET:
            field_dict["servers"] = servers
        if subject is not UNSET:
            field_dict["subject"] = subject
        if jetstream is not UNSET:
            field_dict["jetstream"] = jetstream
        if auth is not UNSET:
            field_dict["auth"] = auth
        if url is not UNSET:
            field_dict["url"] = url
        if exchange is not UNSET:
            field_dict["exchange"] = exchange
        if routing_key is not UNSET:
            field_dict["routingKey"] = routing_key
        if queue_url is not UNSET:
            field_dict["queueUrl"] = queue_url
        if region is not UNSET:
            field_dict["region"] = region

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_destination_auth import ConfigDestinationAuth  # noqa: PLC0415
        from ..models.config_destination_sasl import ConfigDestinationSasl  # noqa: PLC0415

        d = dict(src_dict)
        type_ = ConfigDestinationType(d.pop("type"))

        brokers = cast(list[str], d.pop("brokers", UNSET))

        topic = d.pop("topic", UNSET)

        ssl = d.pop("ssl", UNSET)

        _sasl = d.pop("sasl", UNSET)
        sasl: ConfigDestinationSasl | Unset
        if isinstance(_sasl, Unset):
            sasl = UNSET
        else:
            sasl = ConfigDestinationSasl.from_dict(_sasl)

        servers = cast(list[str], d.pop("servers", UNSET))

        subject = d.pop("subject", UNSET)

        jetstream = d.pop("jetstream", UNSET)

        _auth = d.pop("auth", UNSET)
        auth: ConfigDestinationAuth | Unset
        if isinstance(_auth, Unset):
            auth = UNSET
        else:
            auth = ConfigDestinationAuth.from_dict(_auth)

        url = d.pop("url", UNSET)

        exchange = d.pop("exchange", UNSET)

        routing_key = d.pop("routingKey", UNSET)

        queue_url = d.pop("queueUrl", UNSET)

        region = d.pop("region", UNSET)

        config_destination = cls(
            type_=type_,
            brokers=brokers,
            topic=topic,
            ssl=ssl,
            sasl=sasl,
            servers=servers,
            subject=subject,
            jetstream=jetstream,
            auth=auth,
            url=url,
            exchange=exchange,
            routing_key=routing_key,
            queue_url=queue_url,
            region=region,
        )

        config_destination.additional_properties = d
        return config_destination

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
