from enum import StrEnum


class ConfigUserOrderingType0OnFailure(StrEnum):
    BLOCK = "block"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
