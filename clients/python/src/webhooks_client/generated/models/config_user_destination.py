from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.config_user_destination_type import ConfigUserDestinationType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.config_user_destination_auth import ConfigUserDestinationAuth
    from ..models.config_user_destination_sasl import ConfigUserDestinationSasl


T = TypeVar("T", bound="ConfigUserDestination")


@_attrs_define
class ConfigUserDestination:
    """where deliveries go: http (the default: POST to endpoint), kafka (a topic), nats (a subject), amqp (an exchange) or
    sqs (a queue). Every destination gets the same body and the same signed headers. For kafka, nats, amqp and sqs,
    endpoint is derived from the destination (leave it out, or give the derived value back); endpoint auth (auth)
    applies to http only. On update, absent keeps the current destination

        Attributes:
            type_ (ConfigUserDestinationType):
            brokers (list[str] | Unset): kafka: bootstrap brokers host:port, e.g. ["kafka-1.internal:9092"]
            topic (str | Unset): kafka: the topic (it must exist: deliveries never create topics)
            ssl (bool | Unset): kafka: TLS to the brokers (default false)
            sasl (ConfigUserDestinationSasl | Unset): kafka: SASL authentication
            servers (list[str] | Unset): nats: servers nats://host[:port], e.g. ["nats://nats.internal:4222"]
            subject (str | Unset): nats: the subject published to (no wildcards)
            jetstream (bool | Unset): nats: publish to the JetStream stream capturing the subject and wait for its
                acknowledgement (default true); false: a core NATS publish, sent once the server has it
            auth (ConfigUserDestinationAuth | Unset): nats: authentication (one kind)
            url (str | Unset): amqp: amqp://[user@]host[:port][/vhost] or amqps://..., without a password (give it in
                password); without a user the broker's guest account is used
            password (str | Unset): amqp: the password of the URL's user; sealed at rest, never returned (on update, absent
                keeps the stored one while the addresses stay the same)
            exchange (str | Unset): amqp: the exchange ("" or absent: the default exchange, where the routing key names a
                queue)
            routing_key (str | Unset): amqp: the routing key of every message
            queue_url (str | Unset): sqs: the queue's URL, http(s)://host[:port]/<account>/<queue name>, e.g.
                https://sqs.eu-west-1.amazonaws.com/123456789012/orders; a name ending in .fifo is a FIFO queue (ordering key as
                MessageGroupId, webhook id as MessageDeduplicationId). The queue must exist
            region (str | Unset): sqs: the region requests are signed for (default: the one in an sqs.<region>.amazonaws.com
                host, else us-east-1)
            access_key_id (str | Unset): sqs: the access key id requests are signed with; sealed at rest, never returned (on
                update, absent keeps the stored one while the addresses stay the same)
            secret_access_key (str | Unset): sqs: the secret access key requests are signed with; sealed at rest, never
                returned (on update, absent keeps the stored one while the addresses stay the same)
    """

    type_: ConfigUserDestinationType
    brokers: list[str] | Unset = UNSET
    topic: str | Unset = UNSET
    ssl: bool | Unset = UNSET
    sasl: ConfigUserDestinationSasl | Unset = UNSET
    servers: list[str] | Unset = UNSET
    subject: str | Unset = UNSET
    jetstream: bool | Unset = UNSET
    auth: ConfigUserDestinationAuth | Unset = UNSET
    url: str | Unset = UNSET
    password: str | Unset = UNSET
    exchange: str | Unset = UNSET
    routing_key: str | Unset = UNSET
    queue_url: str | Unset = UNSET
    region: str | Unset = UNSET
    access_key_id: str | Unset = UNSET
    secret_access_key: str | Unset = UNSET

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

        password = self.password

        exchange = self.exchange

        routing_key = self.routing_key

        queue_url = self.queue_url

        region = self.region

        access_key_id = self.access_key_id

        secret_access_key = self.secret_access_key

        field_dict: dict[str, Any] = {}

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
        if password is not UNSET:
            field_dict["password"] = password
        if exchange is not UNSET:
            field_dict["exchange"] = exchange
        if routing_key is not UNSET:
            field_dict["routingKey"] = routing_key
        if queue_url is not UNSET:
            field_dict["queueUrl"] = queue_url
        if region is not UNSET:
            field_dict["region"] = region
        if access_key_id is not UNSET:
            field_dict["accessKeyId"] = access_key_id
        if secret_access_key is not UNSET:
            field_dict["secretAccessKey"] = secret_access_key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.config_user_destination_auth import ConfigUserDestinationAuth  # noqa: PLC0415
        from ..models.config_user_destination_sasl import ConfigUserDestinationSasl  # noqa: PLC0415

        d = dict(src_dict)
        type_ = ConfigUserDestinationType(d.pop("type"))

        brokers = cast(list[str], d.pop("brokers", UNSET))

        topic = d.pop("topic", UNSET)

        ssl = d.pop("ssl", UNSET)

        _sasl = d.pop("sasl", UNSET)
        sasl: ConfigUserDestinationSasl | Unset
        if isinstance(_sasl, Unset):
            sasl = UNSET
        else:
            sasl = ConfigUserDestinationSasl.from_dict(_sasl)

        servers = cast(list[str], d.pop("servers", UNSET))

        subject = d.pop("subject", UNSET)

        jetstream = d.pop("jetstream", UNSET)

        _auth = d.pop("auth", UNSET)
        auth: ConfigUserDestinationAuth | Unset
        if isinstance(_auth, Unset):
            auth = UNSET
        else:
            auth = ConfigUserDestinationAuth.from_dict(_auth)

        url = d.pop("url", UNSET)

        password = d.pop("password", UNSET)

        exchange = d.pop("exchange", UNSET)

        routing_key = d.pop("routingKey", UNSET)

        queue_url = d.pop("queueUrl", UNSET)

        region = d.pop("region", UNSET)

        access_key_id = d.pop("accessKeyId", UNSET)

        secret_access_key = d.pop("secretAccessKey", UNSET)

        config_user_destination = cls(
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
            password=password,
            exchange=exchange,
            routing_key=routing_key,
            queue_url=queue_url,
            region=region,
            access_key_id=access_key_id,
            secret_access_key=secret_access_key,
        )

        return config_user_destination
