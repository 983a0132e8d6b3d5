from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.attempt_response_headers import AttemptResponseHeaders


T = TypeVar("T", bound="AttemptResponse")


@_attrs_define
class AttemptResponse:
    """An excerpt of the endpoint's answer, kept with the attempt (and removed with it); absent when no answer came

    Attributes:
        headers (AttemptResponseHeaders): the answer's content-type, content-length, retry-after, location, www-
            authenticate, x-request-id when present, each at most 256 characters
        body (str): the body's first 1024 bytes as UTF-8 text, the endpoint's own credentials masked; for tenant-scoped
            callers address literals are withheld
        truncated (bool): the body was longer than the excerpt
    """

    headers: AttemptResponseHeaders
    body: str
    truncated: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        headers = self.headers.to_dict()

        body = self.body

        truncated = self.truncated

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "headers": headers,
                "body": body,
                "truncated": truncated,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt_response_headers import AttemptResponseHeaders  # noqa: PLC0415

        d = dict(src_dict)
        headers = AttemptResponseHeaders.from_dict(d.pop("headers"))

        body = d.pop("body")

        truncated = d.pop("truncated")

        attempt_response = cls(
            headers=headers,
            body=body,
            truncated=truncated,
        )

        attempt_response.additional_properties = d
        return attempt_response

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
