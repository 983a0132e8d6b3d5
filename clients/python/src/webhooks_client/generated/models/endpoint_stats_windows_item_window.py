from enum import StrEnum


class EndpointStatsWindowsItemWindow(StrEnum):
    VALUE_0 = "5m"
    VALUE_1 = "1h"
    VALUE_2 = "24h"

    def __str__(self) -> str:
        return str(self.value)
