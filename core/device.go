package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sdkpp/core/clock"
	"sdkpp/core/rest"
)

// DeviceAuthorizationArgs are the arguments of the device flow (consoles and TVs).
type DeviceAuthorizationArgs struct {
	clientID uint64
	scopes   string
}

// NewDeviceAuthorizationArgs returns empty arguments.
func NewDeviceAuthorizationArgs() *DeviceAuthorizationArgs { return &DeviceAuthorizationArgs{} }

// Clone returns a copy.
func (a *DeviceAuthorizationArgs) Clone() *DeviceAuthorizationArgs { c := *a; return &c }

// ClientId returns the application id; 0 means the Client's.
func (a *DeviceAuthorizationArgs) ClientId() uint64 { return a.clientID }

// SetClientId sets the application id.
func (a *DeviceAuthorizationArgs) SetClientId(id uint64) { a.clientID = id }

// Scopes returns the space-separated scopes.
func (a *DeviceAuthorizationArgs) Scopes() string { return a.scopes }

// SetScopes sets the space-separated scopes.
func (a *DeviceAuthorizationArgs) SetScopes(s string) { a.scopes = s }

// deviceCode is the answer of /oauth2/device/authorize (RFC 8628).
type deviceCode struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// GetTokenFromDevice runs the device flow: it shows the verification page (through the URL
// opener) and polls until the user approves on another device, declines, or the code expires.
func (c *Client) GetTokenFromDevice(args *DeviceAuthorizationArgs, cb Callback[ClientTokenExchangeCallback]) {
	c.deviceFlow(args, url.Values{}, cb)
}

// GetTokenFromDeviceProvisionalMerge is GetTokenFromDevice that also merges the provisional
// account identified by the external credentials.
func (c *Client) GetTokenFromDeviceProvisionalMerge(args *DeviceAuthorizationArgs, externalAuthType AuthenticationExternalAuthType, externalAuthToken string, cb Callback[ClientTokenExchangeCallback]) {
	Secrets.Add(externalAuthToken)
	c.deviceFlow(args, url.Values{
		"external_auth_type":  {externalAuthNames[externalAuthType]},
		"external_auth_token": {externalAuthToken},
	}, cb)
}

func (c *Client) deviceFlow(args *DeviceAuthorizationArgs, extra url.Values, cb Callback[ClientTokenExchangeCallback]) {
	scopes := strings.Join(strings.Fields(args.Scopes()), " ")
	clientID := c.appIDOr(args.ClientId())
	var bad error
	switch {
	case scopes == "":
		bad = invalid("DeviceAuthorizationArgs.Scopes is required")
	case clientID == 0:
		bad = invalid("no application id: set DeviceAuthorizationArgs.ClientId or call Client.SetApplicationId")
	}
	if bad != nil { // refused before anything is sent; a flow in progress goes on
		c.tokenOp(c.ctx, "device authorization", clientID, cb, func(context.Context) (*tokenResponse, error) { return nil, bad })
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	previous := c.auth.deviceCancel
	c.auth.deviceCancel = cancel
	c.mu.Unlock()
	if previous != nil {
		previous()
	}
	c.tokenOp(ctx, "device authorization", clientID, cb, func(ctx context.Context) (*tokenResponse, error) {
		defer cancel()
		return c.pollDevice(ctx, strconv.FormatUint(clientID, 10), scopes, extra)
	})
}

// pollDevice asks for a device code, opens the verification page, and polls the token endpoint.
func (c *Client) pollDevice(ctx context.Context, clientID, scopes string, extra url.Values) (*tokenResponse, error) {
	var dc deviceCode
	err := c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/device/authorize",
		Form: url.Values{"client_id": {clientID}, "scope": {scopes}}}, &dc)
	if err != nil {
		return nil, aborted(err)
	}
	Secrets.Add(dc.DeviceCode)
	page := dc.VerificationURIComplete
	if page == "" {
		page = dc.VerificationURI
	}
	if err := c.openURL(page); err != nil {
		return nil, err
	}
	interval := time.Duration(dc.Interval) * time.Second
	if interval <= 0 {
		interval = 5 * time.Second
	}
	form := url.Values{
		"grant_type":  {"urn:ietf:params:oauth:grant-type:device_code"},
		"client_id":   {clientID},
		"device_code": {dc.DeviceCode},
	}
	for k, v := range extra {
		form[k] = v
	}
	for {
		if err := clock.Sleep(ctx, c.clock, interval); err != nil {
			return nil, aborted(err)
		}
		var t tokenResponse
		err := c.api.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/oauth2/token", Form: form}, &t)
		var re *rest.Error
		switch {
		case err == nil:
			return &t, nil
		case errors.As(err, &re) && re.OAuthError == "authorization_pending":
		case errors.As(err, &re) && re.OAuthError == "slow_down":
			interval += 5 * time.Second // RFC 8628, section 3.5
		default:
			return nil, aborted(err)
		}
	}
}

// aborted maps a cancelled context to errAborted.
func aborted(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %v", errAborted, err)
	}
	return err
}

// AbortGetTokenFromDevice ends the device flow in progress; its callback fires with Aborted.
func (c *Client) AbortGetTokenFromDevice() {
	c.mu.Lock()
	cancel := c.auth.deviceCancel
	c.auth.deviceCancel = nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// OpenAuthorizeDeviceScreen shows the verification page for a user code that the game's backend
// obtained (the backend-driven device flow).
func (c *Client) OpenAuthorizeDeviceScreen(clientId uint64, userCode string) {
	u := strings.TrimRight(c.webBase, "/") + "/activate?" + url.Values{
		"user_code": {userCode}, "client_id": {strconv.FormatUint(c.appIDOr(clientId), 10)}}.Encode()
	if err := c.openURL(u); err != nil {
		c.logf(LoggingSeverityError, "OpenAuthorizeDeviceScreen: %v", err)
		return
	}
	c.mu.Lock()
	c.auth.screenOpen = true
	c.mu.Unlock()
}

// CloseAuthorizeDeviceScreen closes the verification page opened by OpenAuthorizeDeviceScreen;
// the screen-closed callback runs.
func (c *Client) CloseAuthorizeDeviceScreen() {
	c.mu.Lock()
	open := c.auth.screenOpen
	c.auth.screenOpen = false
	c.mu.Unlock()
	if open {
		postHandler(c, &c.auth.screenClosed, func(f ClientAuthorizeDeviceScreenClosedCallback) { f() })
	}
}

// SetAuthorizeDeviceScreenClosedCallback sets the handler of CloseAuthorizeDeviceScreen.
func (c *Client) SetAuthorizeDeviceScreenClosedCallback(cb Callback[ClientAuthorizeDeviceScreenClosedCallback]) {
	setHandler(c, &c.auth.screenClosed, cb)
}
