from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.config_user_ordering_type_0_on_failure import ConfigUserOrderingType0OnFailure
from ..types import UNSET, Unset

T = TypeVar("T", bound="ConfigUserOrderingType0")


@_attrs_define
class ConfigUserOrderingType0:
    """ordered delivery per ordering key (docs/webhooks/ordering-and-batching.md#ordered-delivery); null turns it off; on
    update, absent keeps the current setting

        Attributes:
            enabled (bool): deliver the events of one ordering key (the event's ordering_key, else the config id) one at a
                time, in the order they were accepted
            on_failure (ConfigUserOrderingType0OnFailure | Unset): what a head that failed for good does: skip (default)
                closes it failed and goes on; block holds its key until POST /configs/{id}/ordering-keys/{key}/skip, a replay or
                a cancel of the head (a batched config: the head is a batch, and a replay of any of its events releases the key)
    """

    enabled: bool
    on_failure: ConfigUserOrderingType0OnFailure | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        enabled = self.enabled

        on_failure: str | Unset = UNSET
        if not isinstance(self.on_failure, Unset):
            on_failure = self.on_failure.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "enabled": enabled,
            }
        )
        if on_failure is not UNSET:
            field_dict["onFailure"] = on_failure

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        enabled = d.pop("enabled")

        _on_failure = d.pop("onFailure", UNSET)
        on_failure: ConfigUserOrderingType0OnFailure | Unset
        if isinstance(_on_failure, Unset):
            on_failure = UNSET
        else:
            on_failure = ConfigUserOrderingType0OnFailure(_on_failure)

        config_user_ordering_type_0 = cls(
            enabled=enabled,
            on_failure=on_failure,
        )

        return config_user_ordering_type_0
