from enum import StrEnum


class OrderingKeyState(StrEnum):
    ACTIVE = "active"
    BLOCKED = "blocked"

    def __str__(self) -> str:
        return str(self.value)
