from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.dead_letter import DeadLetter
    from ..models.started_delivery import StartedDelivery


T = TypeVar("T", bound="DeadLetterReplay")


@_attrs_define
class DeadLetterReplay:
    """
    Attributes:
        dead_letter (DeadLetter): A broker message whose deliveries could not start: kept with its reason until replayed
            or deleted.
        deliveries (list[StartedDelivery]):
    """

    dead_letter: DeadLetter
    deliveries: list[StartedDelivery]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dead_letter = self.dead_letter.to_dict()

        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deadLetter": dead_letter,
                "deliveries": deliveries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dead_letter import DeadLetter  # noqa: PLC0415
        from ..models.started_delivery import StartedDelivery  # noqa: PLC0415

        d = dict(src_dict)
        dead_letter = DeadLetter.from_dict(d.pop("deadLetter"))

        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in _deliveries:
            deliveries_item = StartedDelivery.from_dict(deliveries_item_data)

            deliveries.append(deliveries_item)

        dead_letter_replay = cls(
            dead_letter=dead_letter,
            deliveries=deliveries,
        )

        dead_letter_replay.additional_properties = d
        return dead_letter_replay

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
