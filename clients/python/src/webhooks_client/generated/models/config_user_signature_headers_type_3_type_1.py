from enum import StrEnum


class ConfigUserSignatureHeadersType3Type1(StrEnum):
    STANDARD = "standard"
    SVC = "svc"

    def __str__(self) -> str:
        return str(self.value)
