from enum import StrEnum


class DeadLetterStatus(StrEnum):
    PENDING = "pending"
    REPLAYED = "replayed"

    def __str__(self) -> str:
        return str(self.value)
