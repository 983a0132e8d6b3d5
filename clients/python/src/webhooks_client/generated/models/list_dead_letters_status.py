from enum import StrEnum


class ListDeadLettersStatus(StrEnum):
    PENDING = "pending"
    REPLAYED = "replayed"

    def __str__(self) -> str:
        return str(self.value)
