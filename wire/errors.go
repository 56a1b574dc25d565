package wire

import (
	"fmt"
	"net/http"
)

// JSON error codes of the platform's API used by this service.
const (
	CodeGeneral                 = 0
	CodeUnknownApplication      = 10002
	CodeUnknownUser             = 10013
	CodeMissingAccess           = 50001
	CodeMissingPermissions      = 50013
	CodeInvalidOAuthToken       = 50025
	CodeInvalidFormBody         = 50035
	CodeInvalidJSON             = 50109
	CodeNotProvisional          = 530010 // the account is not a provisional account
	CodeInvalidMergeSource      = 530014
	CodeInvalidMergeDestination = 530016
	CodeMergeSourceBanned       = 530017
)

// APIError is the platform's JSON error body. Status is the HTTP status it is sent with.
type APIError struct {
	Status  int            `json:"-"`
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Errors  map[string]any `json:"errors,omitempty"`
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %d: %s", e.Status, e.Code, e.Message) }

// FieldError is one entry of a field's "_errors" list.
type FieldError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Invalid returns the 50035 error naming one field: {"errors": {field: {"_errors": [{code, message}]}}}.
func Invalid(field, code, message string) *APIError {
	return &APIError{
		Status:  http.StatusBadRequest,
		Code:    CodeInvalidFormBody,
		Message: "Invalid Form Body",
		Errors:  map[string]any{field: map[string]any{"_errors": []FieldError{{Code: code, Message: message}}}},
	}
}

// Required is Invalid for a missing field.
func Required(field string) *APIError {
	return Invalid(field, "BASE_TYPE_REQUIRED", "This field is required")
}

// Unauthorized is the body of a request without valid credentials.
func Unauthorized() *APIError {
	return &APIError{Status: http.StatusUnauthorized, Code: CodeGeneral, Message: "401: Unauthorized"}
}

// NotFound is the body of an unknown route.
func NotFound() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeGeneral, Message: "404: Not Found"}
}

// MethodNotAllowed is the body of a known route called with another method.
func MethodNotAllowed() *APIError {
	return &APIError{Status: http.StatusMethodNotAllowed, Code: CodeGeneral, Message: "405: Method Not Allowed"}
}

// MissingAccess is 50001.
func MissingAccess() *APIError {
	return &APIError{Status: http.StatusForbidden, Code: CodeMissingAccess, Message: "Missing Access"}
}

// InvalidJSON is 50109.
func InvalidJSON() *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "The request body contains invalid JSON."}
}

// Coded returns an error with a JSON code and HTTP 400.
func Coded(code int, message string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: code, Message: message}
}

// OAuth error codes (RFC 6749, RFC 7009, RFC 8628).
const (
	OAuthInvalidRequest         = "invalid_request"
	OAuthInvalidClient          = "invalid_client"
	OAuthInvalidGrant           = "invalid_grant"
	OAuthUnauthorizedClient     = "unauthorized_client"
	OAuthUnsupportedGrantType   = "unsupported_grant_type"
	OAuthInvalidScope           = "invalid_scope"
	OAuthAccessDenied           = "access_denied"
	OAuthUnsupportedResponse    = "unsupported_response_type"
	OAuthAuthorizationPending   = "authorization_pending"
	OAuthSlowDown               = "slow_down"
	OAuthExpiredToken           = "expired_token"
	OAuthInteractionRequired    = "interaction_required"
	OAuthLoginRequired          = "login_required"
	OAuthConsentRequired        = "consent_required"
	OAuthUnsupportedTokenType   = "unsupported_token_type"
	OAuthTemporarilyUnavailable = "temporarily_unavailable"
)

// OAuthError is the body of an OAuth error; Status is the HTTP status (400, or 401 for
// invalid_client).
type OAuthError struct {
	Status      int    `json:"-"`
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

// OAuth returns an OAuth error with HTTP 400.
func OAuth(code, description string) *OAuthError {
	return &OAuthError{Status: http.StatusBadRequest, Code: code, Description: description}
}
