from enum import StrEnum


class ConfigUserSignatureHeadersType2Type1(StrEnum):
    STANDARD = "standard"
    SVC = "svc"

    def __str__(self) -> str:
        return str(self.value)
