from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.started_delivery import StartedDelivery


T = TypeVar("T", bound="Ingested")


@_attrs_define
class Ingested:
    """
    Attributes:
        type_ (str): the normalised event type
        configs (int): active configs it matched (type and payload filter)
        deliveries (list[StartedDelivery]):
        filtered (int | Unset): active configs whose types it matched but whose payload filter it did not pass; absent
            when none
        over_budget (int | Unset): of filtered, the configs whose filter was stopped by its step budget (counted as not
            passed: docs/webhooks/security.md, payload filter bounds); absent when none
    """

    type_: str
    configs: int
    deliveries: list[StartedDelivery]
    filtered: int | Unset = UNSET
    over_budget: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        configs = self.configs

        deliveries = []
        for deliveries_item_data in self.deliveries:
            deliveries_item = deliveries_item_data.to_dict()
            deliveries.append(deliveries_item)

        filtered = self.filtered

        over_budget = self.over_budget

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "configs": configs,
                "deliveries": deliveries,
            }
        )
        if filtered is not UNSET:
            field_dict["filtered"] = filtered
        if over_budget is not UNSET:
            field_dict["overBudget"] = over_budget

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.started_delivery import StartedDelivery  # noqa: PLC0415

        d = dict(src_dict)
        type_ = d.pop("type")

        configs = d.pop("configs")

        deliveries = []
        _deliveries = d.pop("deliveries")
        for deliveries_item_data in _deliveries:
            deliveries_item = StartedDelivery.from_dict(deliveries_item_data)

            deliveries.append(deliveries_item)

        filtered = d.pop("filtered", UNSET)

        over_budget = d.pop("overBudget", UNSET)

        ingested = cls(
            type_=type_,
            configs=configs,
            deliveries=deliveries,
            filtered=filtered,
            over_budget=over_budget,
        )

        ingested.additional_properties = d
        return ingested

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
