from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.config_user_destination_sasl_mechanism import ConfigUserDestinationSaslMechanism
from ..types import UNSET, Unset

T = TypeVar("T", bound="ConfigUserDestinationSasl")


@_attrs_define
class ConfigUserDestinationSasl:
    """kafka: SASL authentication

    Attributes:
        mechanism (ConfigUserDestinationSaslMechanism):
        username (str):
        password (str | Unset): the SASL password; sealed at rest, never returned (on update, absent keeps the stored
            one while the addresses stay the same)
    """

    mechanism: ConfigUserDestinationSaslMechanism
    username: str
    password: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        mechanism = self.mechanism.value

        username = self.username

        password = self.password

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "mechanism": mechanism,
                "username": username,
            }
        )
        if password is not UNSET:
            field_dict["password"] = password

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        mechanism = ConfigUserDestinationSaslMechanism(d.pop("mechanism"))

        username = d.pop("username")

        password = d.pop("password", UNSET)

        config_user_destination_sasl = cls(
            mechanism=mechanism,
            username=username,
            password=password,
        )

        return config_user_destination_sasl
