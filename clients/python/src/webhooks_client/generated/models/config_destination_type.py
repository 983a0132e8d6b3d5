from enum import StrEnum


class ConfigDestinationType(StrEnum):
    AMQP = "amqp"
    KAFKA = "kafka"
    NATS = "nats"
    SQS = "sqs"

    def __str__(self) -> str:
        return str(self.value)
