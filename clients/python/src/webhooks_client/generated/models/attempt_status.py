from enum import StrEnum


class AttemptStatus(StrEnum):
    FAILED = "failed"
    RETRYING = "retrying"
    SUCCESS = "success"
    TO_RETRY = "to retry"

    def __str__(self) -> str:
        return str(self.value)
