from enum import StrEnum


class DeliverySummaryStatus(StrEnum):
    FAILED = "failed"
    RETRYING = "retrying"
    SUCCESS = "success"
    TO_RETRY = "to retry"
    WAITING = "waiting"

    def __str__(self) -> str:
        return str(self.value)
