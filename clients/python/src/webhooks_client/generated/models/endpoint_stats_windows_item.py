from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.endpoint_stats_windows_item_window import EndpointStatsWindowsItemWindow

if TYPE_CHECKING:
    from ..models.endpoint_stats_windows_item_latency_ms_type_0 import EndpointStatsWindowsItemLatencyMsType0


T = TypeVar("T", bound="EndpointStatsWindowsItem")


@_attrs_define
class EndpointStatsWindowsItem:
    """
    Attributes:
        window (EndpointStatsWindowsItemWindow):
        attempts (int): sends in the window (test deliveries included)
        succeeded (int): sends answered 2xx
        failed (int):
        success_rate (float | None): succeeded / attempts; null without sends
        latency_ms (EndpointStatsWindowsItemLatencyMsType0 | None): send durations; null without timed sends
    """

    window: EndpointStatsWindowsItemWindow
    attempts: int
    succeeded: int
    failed: int
    success_rate: float | None
    latency_ms: EndpointStatsWindowsItemLatencyMsType0 | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_stats_windows_item_latency_ms_type_0 import EndpointStatsWindowsItemLatencyMsType0  # noqa: PLC0415

        window = self.window.value

        attempts = self.attempts

        succeeded = self.succeeded

        failed = self.failed

        success_rate: float | None
        success_rate = self.success_rate

        latency_ms: dict[str, Any] | None
        if isinstance(self.latency_ms, EndpointStatsWindowsItemLatencyMsType0):
            latency_ms = self.latency_ms.to_dict()
        else:
            latency_ms = self.latency_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "window": window,
                "attempts": attempts,
                "succeeded": succeeded,
                "failed": failed,
                "successRate": success_rate,
                "latencyMs": latency_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_stats_windows_item_latency_ms_type_0 import EndpointStatsWindowsItemLatencyMsType0  # noqa: PLC0415

        d = dict(src_dict)
        window = EndpointStatsWindowsItemWindow(d.pop("window"))

        attempts = d.pop("attempts")

        succeeded = d.pop("succeeded")

        failed = d.pop("failed")

        def _parse_success_rate(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        success_rate = _parse_success_rate(d.pop("successRate"))

        def _parse_latency_ms(data: object) -> EndpointStatsWindowsItemLatencyMsType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                latency_ms_type_0 = EndpointStatsWindowsItemLatencyMsType0.from_dict(data)

                return latency_ms_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointStatsWindowsItemLatencyMsType0 | None, data)

        latency_ms = _parse_latency_ms(d.pop("latencyMs"))

        endpoint_stats_windows_item = cls(
            window=window,
            attempts=attempts,
            succeeded=succeeded,
            failed=failed,
            success_rate=success_rate,
            latency_ms=latency_ms,
        )

        endpoint_stats_windows_item.additional_properties = d
        return endpoint_stats_windows_item

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
