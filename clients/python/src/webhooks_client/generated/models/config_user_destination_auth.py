from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.config_user_destination_auth_kind import ConfigUserDestinationAuthKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="ConfigUserDestinationAuth")


@_attrs_define
class ConfigUserDestinationAuth:
    """nats: authentication (one kind)

    Attributes:
        kind (ConfigUserDestinationAuthKind):
        token (str | Unset): kind token: the token; sealed at rest, never returned (on update, absent keeps the stored
            one while the addresses stay the same)
        username (str | Unset): kind userPassword
        password (str | Unset): kind userPassword: the password; sealed at rest, never returned (on update, absent keeps
            the stored one while the addresses stay the same)
        creds (str | Unset): kind creds: the .creds file's content (JWT and NKey seed); sealed at rest, never returned
            (on update, absent keeps the stored one while the addresses stay the same)
    """

    kind: ConfigUserDestinationAuthKind
    token: str | Unset = UNSET
    username: str | Unset = UNSET
    password: str | Unset = UNSET
    creds: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        token = self.token

        username = self.username

        password = self.password

        creds = self.creds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kind": kind,
            }
        )
        if token is not UNSET:
            field_dict["token"] = token
        if username is not UNSET:
            field_dict["username"] = username
        if password is not UNSET:
            field_dict["password"] = password
        if creds is not UNSET:
            field_dict["creds"] = creds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = ConfigUserDestinationAuthKind(d.pop("kind"))

        token = d.pop("token", UNSET)

        username = d.pop("username", UNSET)

        password = d.pop("password", UNSET)

        creds = d.pop("creds", UNSET)

        config_user_destination_auth = cls(
            kind=kind,
            token=token,
            username=username,
            password=password,
            creds=creds,
        )

        return config_user_destination_auth
