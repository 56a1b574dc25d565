package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// TestDemo runs what `make demo` runs (SDKPP_DEMO names the built demo command, SDKPP_DEMO_BIN the
// directory of sdkpp-server, sdkpp-browser and the samples under demo/) on a free port, and checks
// its transcript: both players link, chat, and talk in the voice call, where each hears the other
// and both show the same verification code. It runs the C++ sample for both players, then the C
// sample for alice against the C# one for bob: each of the three samples plays a whole match.
func TestDemo(t *testing.T) {
	demo, bin := os.Getenv("SDKPP_DEMO"), os.Getenv("SDKPP_DEMO_BIN")
	if demo == "" || bin == "" {
		t.Skip("set SDKPP_DEMO and SDKPP_DEMO_BIN (make test-e2e does)")
	}
	speech, err := filepath.Abs("../../audio/internal/speech/testdata")
	require.NoError(t, err)
	for _, sample := range []string{"cpp", "c,csharp"} {
		t.Run(sample, func(t *testing.T) {
			runDemo(t, demo, bin, speech, sample)
		})
	}
}

func runDemo(t *testing.T, demo, bin, speech, sample string) {
	addr := servertest.FreeAddr(t) // below the ephemeral range: no connection takes it meanwhile

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, demo, "-bin", bin, "-addr", addr, "-speech", speech, "-sample", sample)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	transcript := out.String()
	require.NoError(t, err, "the demo failed:\n%s", transcript)

	for _, want := range []string{
		`(?m)^  alice +\| game: linked as Alice`,
		`(?m)^  bob +\| game: linked as Bob`,
		`(?m)^  alice +\| presence: friend Bob is online`,
		`(?m)^  alice +\| chat: <Bob> hello from bob`,
		`(?m)^  bob +\| chat: <Alice> hello from alice`,
		`(?m)^  bob +\| voice: call connected`,
		`(?m)^  alice +\| voice: positional voice on, standing at x=[03]$`,
		`(?m)^  bob +\| voice: positional voice on, standing at x=[03]$`,
		`(?m)^  alice +\| voice: presses push-to-talk`,
		`(?m)^  bob +\| voice: hears Alice speaking`,
		`(?m)^  alice +\| voice: hears Bob speaking`,
		`(?m)^  bob +\| voice: left the call`,
		`(?m)^  (alice|bob) +\| game: exits; SDK objects still alive: 0$`,
		`(?m)^demo: both players .* talked in its voice call`,
	} {
		assert.Regexp(t, regexp.MustCompile(want), transcript)
	}
	codes := regexp.MustCompile(`(?m)^  (\w+) +\| voice: in the call with 2 players, verification code (.+)$`).FindAllStringSubmatch(transcript, -1)
	require.Len(t, codes, 2, "each player prints the verification code:\n%s", transcript)
	assert.NotEqual(t, codes[0][1], codes[1][1])
	assert.Equal(t, codes[0][2], codes[1][2], "both players see the same verification code")
	assert.NotEmpty(t, codes[0][2])
	if t.Failed() {
		t.Log(transcript)
	}
}
