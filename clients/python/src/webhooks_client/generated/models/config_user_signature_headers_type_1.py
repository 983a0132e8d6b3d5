from enum import StrEnum


class ConfigUserSignatureHeadersType1(StrEnum):
    STANDARD = "standard"
    SVC = "svc"

    def __str__(self) -> str:
        return str(self.value)
