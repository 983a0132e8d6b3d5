from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ConfigUserBatchType0")


@_attrs_define
class ConfigUserBatchType0:
    """send up to maxEvents events in one POST as a JSON array (docs/webhooks/ordering-and-batching.md#batched-delivery);
    an ordered config sends the events of each ordering key in batches, one after the other; null turns it off; on
    update, absent keeps the current setting

        Attributes:
            max_events (int): most events in one POST (their webhook ids share one header, hence at most 200)
            max_wait_ms (int): longest the first event of a batch waits for more before the batch goes (milliseconds)
    """

    max_events: int
    max_wait_ms: int

    def to_dict(self) -> dict[str, Any]:
        max_events = self.max_events

        max_wait_ms = self.max_wait_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "maxEvents": max_events,
                "maxWaitMs": max_wait_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_events = d.pop("maxEvents")

        max_wait_ms = d.pop("maxWaitMs")

        config_user_batch_type_0 = cls(
            max_events=max_events,
            max_wait_ms=max_wait_ms,
        )

        return config_user_batch_type_0
