from enum import StrEnum


class PortalSessionCurrentFeaturesItem(StrEnum):
    DELIVERIES = "deliveries"
    ENDPOINTS = "endpoints"
    RECOVERY = "recovery"
    REPLAY = "replay"
    SECRETS = "secrets"
    TEST_EVENTS = "test-events"

    def __str__(self) -> str:
        return str(self.value)
