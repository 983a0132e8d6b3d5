"""Contains all the data models used in inputs/outputs"""

from .activate_config_response_200 import ActivateConfigResponse200
from .attempt import Attempt
from .attempt_config import AttemptConfig
from .attempt_cursor import AttemptCursor
from .attempt_cursor_cursor import AttemptCursorCursor
from .attempt_request_headers import AttemptRequestHeaders
from .attempt_response import AttemptResponse
from .attempt_response_headers import AttemptResponseHeaders
from .attempt_status import AttemptStatus
from .cancel_delivery_response_202 import CancelDeliveryResponse202
from .cancellation import Cancellation
from .change_config_auth_response_200 import ChangeConfigAuthResponse200
from .change_config_secret_response_200 import ChangeConfigSecretResponse200
from .config import Config
from .config_batch import ConfigBatch
from .config_cursor import ConfigCursor
from .config_cursor_cursor import ConfigCursorCursor
from .config_destination import ConfigDestination
from .config_destination_auth import ConfigDestinationAuth
from .config_destination_sasl import ConfigDestinationSasl
from .config_destination_type import ConfigDestinationType
from .config_filter import ConfigFilter
from .config_ordering import ConfigOrdering
from .config_ordering_on_failure import ConfigOrderingOnFailure
from .config_secret import ConfigSecret
from .config_signature_headers import ConfigSignatureHeaders
from .config_test_request import ConfigTestRequest
from .config_user import ConfigUser
from .config_user_batch_type_0 import ConfigUserBatchType0
from .config_user_destination import ConfigUserDestination
from .config_user_destination_auth import ConfigUserDestinationAuth
from .config_user_destination_auth_kind import ConfigUserDestinationAuthKind
from .config_user_destination_sasl import ConfigUserDestinationSasl
from .config_user_destination_sasl_mechanism import ConfigUserDestinationSaslMechanism
from .config_user_destination_type import ConfigUserDestinationType
from .config_user_filter_type_0 import ConfigUserFilterType0
from .config_user_ordering_type_0 import ConfigUserOrderingType0
from .config_user_ordering_type_0_on_failure import ConfigUserOrderingType0OnFailure
from .config_user_signature_headers_type_1 import ConfigUserSignatureHeadersType1
from .config_user_signature_headers_type_2_type_1 import ConfigUserSignatureHeadersType2Type1
from .config_user_signature_headers_type_3_type_1 import ConfigUserSignatureHeadersType3Type1
from .config_written import ConfigWritten
from .create_tenant_response_200 import CreateTenantResponse200
from .deactivate_config_response_200 import DeactivateConfigResponse200
from .dead_letter import DeadLetter
from .dead_letter_cursor import DeadLetterCursor
from .dead_letter_cursor_cursor import DeadLetterCursorCursor
from .dead_letter_kind import DeadLetterKind
from .dead_letter_replay import DeadLetterReplay
from .dead_letter_status import DeadLetterStatus
from .delete_config_auth_response_200 import DeleteConfigAuthResponse200
from .delete_config_auth_response_200_data import DeleteConfigAuthResponse200Data
from .delivery import Delivery
from .delivery_status import DeliveryStatus
from .delivery_summary import DeliverySummary
from .delivery_summary_cursor import DeliverySummaryCursor
from .delivery_summary_cursor_cursor import DeliverySummaryCursorCursor
from .delivery_summary_status import DeliverySummaryStatus
from .endpoint_auth import EndpointAuth
from .endpoint_auth_basic import EndpointAuthBasic
from .endpoint_auth_bearer import EndpointAuthBearer
from .endpoint_auth_change import EndpointAuthChange
from .endpoint_auth_change_basic_type_0 import EndpointAuthChangeBasicType0
from .endpoint_auth_change_bearer_type_0 import EndpointAuthChangeBearerType0
from .endpoint_auth_change_headers_type_0_item import EndpointAuthChangeHeadersType0Item
from .endpoint_auth_change_oauth_2_type_0 import EndpointAuthChangeOauth2Type0
from .endpoint_auth_change_tls_type_0 import EndpointAuthChangeTlsType0
from .endpoint_auth_headers_item import EndpointAuthHeadersItem
from .endpoint_auth_oauth_2 import EndpointAuthOauth2
from .endpoint_auth_tls import EndpointAuthTls
from .endpoint_stats import EndpointStats
from .endpoint_stats_windows_item import EndpointStatsWindowsItem
from .endpoint_stats_windows_item_latency_ms_type_0 import EndpointStatsWindowsItemLatencyMsType0
from .endpoint_stats_windows_item_window import EndpointStatsWindowsItemWindow
from .error import Error
from .error_error_code import ErrorErrorCode
from .event_message import EventMessage
from .event_type import EventType
from .event_type_cursor import EventTypeCursor
from .event_type_cursor_cursor import EventTypeCursorCursor
from .event_type_schema_type_0 import EventTypeSchemaType0
from .event_type_user import EventTypeUser
from .event_type_user_schema_type_0 import EventTypeUserSchemaType0
from .get_config_auth_response_200 import GetConfigAuthResponse200
from .get_config_recovery_response_200 import GetConfigRecoveryResponse200
from .get_config_response_200 import GetConfigResponse200
from .get_config_secret_response_200 import GetConfigSecretResponse200
from .get_config_stats_response_200 import GetConfigStatsResponse200
from .get_dead_letter_response_200 import GetDeadLetterResponse200
from .get_delivery_response_200 import GetDeliveryResponse200
from .get_event_type_response_200 import GetEventTypeResponse200
from .get_tenant_response_200 import GetTenantResponse200
from .info_response_200 import InfoResponse200
from .ingest_event_response_200 import IngestEventResponse200
from .ingest_event_response_202 import IngestEventResponse202
from .ingested import Ingested
from .list_config_deliveries_status import ListConfigDeliveriesStatus
from .list_config_recoveries_response_200 import ListConfigRecoveriesResponse200
from .list_dead_letters_status import ListDeadLettersStatus
from .list_ordering_keys_response_200 import ListOrderingKeysResponse200
from .list_ordering_keys_response_200_cursor import ListOrderingKeysResponse200Cursor
from .list_ordering_keys_state import ListOrderingKeysState
from .ordering_key import OrderingKey
from .ordering_key_state import OrderingKeyState
from .portal_session import PortalSession
from .portal_session_created import PortalSessionCreated
from .portal_session_created_features_item import PortalSessionCreatedFeaturesItem
from .portal_session_current import PortalSessionCurrent
from .portal_session_current_features_item import PortalSessionCurrentFeaturesItem
from .portal_session_current_tenant import PortalSessionCurrentTenant
from .portal_session_cursor import PortalSessionCursor
from .portal_session_cursor_cursor import PortalSessionCursorCursor
from .portal_session_features_item import PortalSessionFeaturesItem
from .portal_session_user import PortalSessionUser
from .portal_session_user_features_item import PortalSessionUserFeaturesItem
from .portal_theme import PortalTheme
from .put_event_type_response_200 import PutEventTypeResponse200
from .put_event_type_response_201 import PutEventTypeResponse201
from .recover_config_deliveries_response_200 import RecoverConfigDeliveriesResponse200
from .recover_config_deliveries_response_202 import RecoverConfigDeliveriesResponse202
from .recovery import Recovery
from .recovery_request import RecoveryRequest
from .recovery_state import RecoveryState
from .replay import Replay
from .replay_dead_letter_response_200 import ReplayDeadLetterResponse200
from .replay_delivery_response_200 import ReplayDeliveryResponse200
from .replay_delivery_response_202 import ReplayDeliveryResponse202
from .secret_change import SecretChange
from .skip_ordering_key_head_response_202 import SkipOrderingKeyHeadResponse202
from .started_delivery import StartedDelivery
from .tenant import Tenant
from .tenant_cursor import TenantCursor
from .tenant_cursor_cursor import TenantCursorCursor
from .tenant_metadata import TenantMetadata
from .tenant_user import TenantUser
from .tenant_user_metadata import TenantUserMetadata
from .test_config_deprecated_response_200 import TestConfigDeprecatedResponse200
from .test_config_response_200 import TestConfigResponse200
from .update_tenant_response_200 import UpdateTenantResponse200

__all__ = (
    "ActivateConfigResponse200",
    "Attempt",
    "AttemptConfig",
    "AttemptCursor",
    "AttemptCursorCursor",
    "AttemptRequestHeaders",
    "AttemptResponse",
    "AttemptResponseHeaders",
    "AttemptStatus",
    "CancelDeliveryResponse202",
    "Cancellation",
    "ChangeConfigAuthResponse200",
    "ChangeConfigSecretResponse200",
    "Config",
    "ConfigBatch",
    "ConfigCursor",
    "ConfigCursorCursor",
    "ConfigDestination",
    "ConfigDestinationAuth",
    "ConfigDestinationSasl",
    "ConfigDestinationType",
    "ConfigFilter",
    "ConfigOrdering",
    "ConfigOrderingOnFailure",
    "ConfigSecret",
    "ConfigSignatureHeaders",
    "ConfigTestRequest",
    "ConfigUser",
    "ConfigUserBatchType0",
    "ConfigUserDestination",
    "ConfigUserDestinationAuth",
    "ConfigUserDestinationAuthKind",
    "ConfigUserDestinationSasl",
    "ConfigUserDestinationSaslMechanism",
    "ConfigUserDestinationType",
    "ConfigUserFilterType0",
    "ConfigUserOrderingType0",
    "ConfigUserOrderingType0OnFailure",
    "ConfigUserSignatureHeadersType1",
    "ConfigUserSignatureHeadersType2Type1",
    "ConfigUserSignatureHeadersType3Type1",
    "ConfigWritten",
    "CreateTenantResponse200",
    "DeactivateConfigResponse200",
    "DeadLetter",
    "DeadLetterCursor",
    "DeadLetterCursorCursor",
    "DeadLetterKind",
    "DeadLetterReplay",
    "DeadLetterStatus",
    "DeleteConfigAuthResponse200",
    "DeleteConfigAuthResponse200Data",
    "Delivery",
    "DeliveryStatus",
    "DeliverySummary",
    "DeliverySummaryCursor",
    "DeliverySummaryCursorCursor",
    "DeliverySummaryStatus",
    "EndpointAuth",
    "EndpointAuthBasic",
    "EndpointAuthBearer",
    "EndpointAuthChange",
    "EndpointAuthChangeBasicType0",
    "EndpointAuthChangeBearerType0",
    "EndpointAuthChangeHeadersType0Item",
    "EndpointAuthChangeOauth2Type0",
    "EndpointAuthChangeTlsType0",
    "EndpointAuthHeadersItem",
    "EndpointAuthOauth2",
    "EndpointAuthTls",
    "EndpointStats",
    "EndpointStatsWindowsItem",
    "EndpointStatsWindowsItemLatencyMsType0",
    "EndpointStatsWindowsItemWindow",
    "Error",
    "ErrorErrorCode",
    "EventMessage",
    "EventType",
    "EventTypeCursor",
    "EventTypeCursorCursor",
    "EventTypeSchemaType0",
    "EventTypeUser",
    "EventTypeUserSchemaType0",
    "GetConfigAuthResponse200",
    "GetConfigRecoveryResponse200",
    "GetConfigResponse200",
    "GetConfigSecretResponse200",
    "GetConfigStatsResponse200",
    "GetDeadLetterResponse200",
    "GetDeliveryResponse200",
    "GetEventTypeResponse200",
    "GetTenantResponse200",
    "InfoResponse200",
    "Ingested",
    "IngestEventResponse200",
    "IngestEventResponse202",
    "ListConfigDeliveriesStatus",
    "ListConfigRecoveriesResponse200",
    "ListDeadLettersStatus",
    "ListOrderingKeysResponse200",
    "ListOrderingKeysResponse200Cursor",
    "ListOrderingKeysState",
    "OrderingKey",
    "OrderingKeyState",
    "PortalSession",
    "PortalSessionCreated",
    "PortalSessionCreatedFeaturesItem",
    "PortalSessionCurrent",
    "PortalSessionCurrentFeaturesItem",
    "PortalSessionCurrentTenant",
    "PortalSessionCursor",
    "PortalSessionCursorCursor",
    "PortalSessionFeaturesItem",
    "PortalSessionUser",
    "PortalSessionUserFeaturesItem",
    "PortalTheme",
    "PutEventTypeResponse200",
    "PutEventTypeResponse201",
    "RecoverConfigDeliveriesResponse200",
    "RecoverConfigDeliveriesResponse202",
    "Recovery",
    "RecoveryRequest",
    "RecoveryState",
    "Replay",
    "ReplayDeadLetterResponse200",
    "ReplayDeliveryResponse200",
    "ReplayDeliveryResponse202",
    "SecretChange",
    "SkipOrderingKeyHeadResponse202",
    "StartedDelivery",
    "Tenant",
    "TenantCursor",
    "TenantCursorCursor",
    "TenantMetadata",
    "TenantUser",
    "TenantUserMetadata",
    "TestConfigDeprecatedResponse200",
    "TestConfigResponse200",
    "UpdateTenantResponse200",
)
