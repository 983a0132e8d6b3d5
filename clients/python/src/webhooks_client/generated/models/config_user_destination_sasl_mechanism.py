from enum import StrEnum


class ConfigUserDestinationSaslMechanism(StrEnum):
    PLAIN = "plain"
    SCRAM_SHA_256 = "scram-sha-256"
    SCRAM_SHA_512 = "scram-sha-512"

    def __str__(self) -> str:
        return str(self.value)
