from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ConfigBatch")


@_attrs_define
class ConfigBatch:
    """present when the config batches its deliveries

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

        config_batch = cls(
            max_events=max_events,
            max_wait_ms=max_wait_ms,
        )

        return config_batch
