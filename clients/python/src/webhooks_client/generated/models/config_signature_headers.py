from enum import StrEnum


class ConfigSignatureHeaders(StrEnum):
    STANDARD = "standard"
    SVC = "svc"

    def __str__(self) -> str:
        return str(self.value)
