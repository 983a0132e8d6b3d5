from enum import StrEnum


class ConfigUserDestinationAuthKind(StrEnum):
    CREDS = "creds"
    TOKEN = "token"
    USERPASSWORD = "userPassword"

    def __str__(self) -> str:
        return str(self.value)
