from enum import StrEnum


class DeadLetterKind(StrEnum):
    EXHAUSTED = "exhausted"
    PERMANENT = "permanent"

    def __str__(self) -> str:
        return str(self.value)
