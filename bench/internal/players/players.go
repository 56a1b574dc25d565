// Package players gives the benchmarks that run SDK clients against an in-process service
// their players: a provisional player's token from the bot endpoint, as a game backend gets it,
// and a way to run the SDK's callbacks until a client reaches a state.
package players

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/wire"
)

// BotToken gets a provisional player's token from the service at base with the application's
// bot token, as a game backend does.
func BotToken(base, botToken, externalID string) (string, error) {
	body, _ := json.Marshal(wire.BotTokenRequest{ExternalUserID: externalID})
	req, err := http.NewRequest(http.MethodPost, base+server.APIVersionPath+"/partner-sdk/token/bot", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("bot token: %w", err)
	}
	req.Header.Set("Authorization", "Bot "+botToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("bot token: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("bot token: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	var tr wire.TokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		return "", fmt.Errorf("bot token: %w", err)
	}
	return tr.AccessToken, nil
}

// Pump runs the SDK's callbacks until done reports true (it returns true) or the timeout passes
// (false).
func Pump(timeout time.Duration, done func() bool) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		core.RunCallbacks()
		if done() {
			return true
		}
		core.WaitCallbacks(10 * time.Millisecond)
	}
	return false
}
