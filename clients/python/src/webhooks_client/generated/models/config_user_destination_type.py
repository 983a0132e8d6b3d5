from enum import StrEnum


class ConfigUserDestinationType(StrEnum):
    AMQP = "amqp"
    HTTP = "http"
    KAFKA = "kafka"
    NATS = "nats"
    SQS = "sqs"

    def __str__(self) -> str:
        return str(self.value)
