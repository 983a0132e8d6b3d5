from enum import StrEnum


class ConfigOrderingOnFailure(StrEnum):
    BLOCK = "block"
    SKIP = "skip"

    def __str__(self) -> str:
        return str(self.value)
