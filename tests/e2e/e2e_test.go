// Package e2e runs the C++ and C# account-linking programs, linked to the real library, against a
// live service on loopback, phase by phase. Between phases the harness plays the other parties:
// the game's backend (bot endpoint, bans), an OpenID Connect issuer with TLS, the webhook
// receiver and the platform's desktop client.
//
// make test-e2e builds the programs and runs this with SDKPP_E2E_CPP, SDKPP_E2E_CSHARP and
// SDKPP_BROWSER set; without them the test skips. make test-windows runs the C++ program's
// Windows build against sdkpp.dll under Wine: SDKPP_E2E_WINE names the directory of the Windows
// builds (auth_e2e.exe, sdkpp-browser.exe, sdkpp-desktop.exe and the DLLs) and SDKPP_WINE the
// command that runs a Windows program. There the desktop client is sdkpp-desktop.exe under Wine
// too, so that the SDK reaches it over a named pipe.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rpc"
	"sdkpp/core/rpc/peer"
	"sdkpp/internal/pulseserver"
	"sdkpp/server/servertest"
	"sdkpp/tests/internal/speechscore"
	"sdkpp/wire"
)

// program is one language's build of the account-linking program.
type program struct {
	name string
	argv []string // the command, to which the phase is appended
	wine *wine    // set for the Windows build, which runs under Wine
}

// wine runs the Windows builds in dir with the command run.
type wine struct {
	run string
	dir string
}

// command is the command line that runs the Windows program name of dir with args.
func (w *wine) command(name string, args ...string) []string {
	return append([]string{w.run, filepath.Join(w.dir, name)}, args...)
}

// windowsPath is the path of an absolute unix path on Wine's drive Z:, the root directory.
func windowsPath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }

func programs(t *testing.T) []program {
	var ps []program
	if p := os.Getenv("SDKPP_E2E_CPP"); p != "" {
		ps = append(ps, program{name: "cpp", argv: []string{p}})
	}
	if p := os.Getenv("SDKPP_E2E_CSHARP"); p != "" {
		ps = append(ps, program{name: "csharp", argv: []string{"mono", "--debug", p}})
	}
	if dir := os.Getenv("SDKPP_E2E_WINE"); dir != "" {
		w := &wine{run: os.Getenv("SDKPP_WINE"), dir: dir}
		if w.run == "" {
			w.run = "wine"
		}
		ps = append(ps, program{name: "windows", argv: w.command("auth_e2e.exe"), wine: w})
	}
	// The Windows build brings its own browser.
	if len(ps) == 0 || (os.Getenv("SDKPP_BROWSER") == "" && (len(ps) > 1 || ps[0].wine == nil)) {
		t.Skip("set SDKPP_E2E_CPP / SDKPP_E2E_CSHARP / SDKPP_E2E_WINE and SDKPP_BROWSER (make test-e2e and make test-windows do)")
	}
	return ps
}

// harness is one language's world: a fresh service and the parties around it.
type harness struct {
	t       *testing.T
	prog    program
	env     *servertest.Env
	issuer  *servertest.OIDCIssuer
	hooks   *servertest.Receiver
	ipcDir  string
	baseEnv []string

	logs    servertest.LogBuffer // the service's log at Debug level and every program's output
	secrets []string             // every credential the harness knows of
}

// secret notes a credential that must never appear in a log, and returns it.
func (h *harness) secret(s string) string {
	h.secrets = append(h.secrets, s)
	return s
}

func newHarness(t *testing.T, prog program) *harness {
	h := &harness{t: t, prog: prog, issuer: servertest.NewOIDCIssuer(t)}
	h.env = servertest.Start(t, servertest.WithOIDCTestIssuer(h.issuer.Client),
		servertest.WithLogger(slog.New(slog.NewTextHandler(&h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	h.secret(h.env.App.ClientSecret)
	h.secret(h.env.App.BotToken)
	h.secret(h.env.ChildApp.ClientSecret)
	h.secret(h.env.Creds.AdminToken)
	appID := uint64(h.env.App.ID)
	h.hooks = servertest.NewReceiver(t, h.env.App.PublicKey)
	require.NoError(t, h.env.Server.SetWebhookURL(appID, h.hooks.URL), "SetWebhookURL")
	require.NoError(t, h.env.Server.ConfigureOIDC(appID, h.issuer.URL, h.issuer.ClientID), "ConfigureOIDC")
	dir, err := os.MkdirTemp("", "ipc")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	h.ipcDir = dir
	var users []string
	for _, u := range h.env.Creds.Users {
		users = append(users, u.Username+":"+h.secret(u.Password))
	}
	h.baseEnv = append(os.Environ(),
		"SDKPP_API_BASE="+h.env.APIURL,
		"SDKPP_WEB_BASE="+h.env.URL,
		"SDKPP_APP_ID="+h.env.App.ID.String(),
		"SDKPP_CHILD_APP_ID="+h.env.ChildApp.ID.String(),
		"SDKPP_USERS="+strings.Join(users, ","),
		"XDG_RUNTIME_DIR="+dir,
	)
	if w := prog.wine; w != nil {
		// The Windows program opens URLs in the browser's Windows build.
		h.baseEnv = append(h.baseEnv, "SDKPP_BROWSER="+windowsPath(filepath.Join(w.dir, "sdkpp-browser.exe")))
	}
	return h
}

// start runs one phase of the program with extra environment; wait collects it.
func (h *harness) start(phase string, extra ...string) (wait func(), lines <-chan string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	argv := append(append([]string{}, h.prog.argv...), phase)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append([]string{}, h.baseEnv...), extra...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(h.t, err)
	if err := cmd.Start(); err != nil {
		cancel()
		require.NoError(h.t, err, "start %v", argv)
	}
	ch := make(chan string, 256)
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r") // a Windows program's text mode
			out.WriteString(line + "\n")
			select {
			case ch <- line:
			default:
			}
		}
	}()
	return func() {
		h.t.Helper()
		defer cancel()
		<-done
		err := cmd.Wait()
		h.t.Logf("%s %s:\n%s", h.prog.name, phase, out.String())
		h.logs.Write([]byte(out.String() + stderr.String()))
		assert.NoError(h.t, err, "%s %s failed: %v\n%s", h.prog.name, phase, err, stderr.String())
		assert.Contains(h.t, out.String(), " passed, 0 failed", "%s %s did not report success", h.prog.name, phase)
	}, ch
}

func (h *harness) run(phase string, extra ...string) {
	h.t.Helper()
	wait, _ := h.start(phase, extra...)
	wait()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A desktop client that restarts slowly (under Wine, seconds) is found on the SDK's next
	// connection attempt, up to the backoff's longest delay later.
	require.Eventually(t, cond, 15*time.Second+rpc.DefaultBackoff.Max, 10*time.Millisecond, "timed out waiting for %s", what)
}

// deauthorized waits for APPLICATION_DEAUTHORIZED naming user (rule WH-1); every delivery on the
// way must carry a valid signature.
func (h *harness) deauthorized(user wire.Snowflake) {
	h.t.Helper()
	for {
		got := h.hooks.Next(h.t, 15*time.Second)
		assert.True(h.t, got.SignatureOK, "a webhook delivery had a bad signature: %s", got.Body)
		if got.User != nil && got.User.ID == user {
			return
		}
	}
}

// mint signs an ID token for subject.
func (h *harness) mint(subject string) string {
	return h.secret(h.issuer.Token(h.t, time.Now(), map[string]any{"sub": subject}))
}

// botToken plays the game backend: a provisional account's token from the bot endpoint.
func (h *harness) botToken(externalID string) string {
	body, _ := json.Marshal(wire.BotTokenRequest{ExternalUserID: externalID})
	req, _ := http.NewRequest(http.MethodPost, h.env.APIURL+"/partner-sdk/token/bot", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bot "+h.env.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	var tr wire.TokenResponse
	require.Equal(h.t, 200, resp.StatusCode, "bot endpoint: HTTP %d", resp.StatusCode)
	require.NoError(h.t, json.NewDecoder(resp.Body).Decode(&tr), "bot endpoint: HTTP %d", resp.StatusCode)
	return tr.AccessToken
}

// TestAccountLinking is the account-linking story of issue 3, from C++ and from C#.
func TestAccountLinking(t *testing.T) {
	for _, prog := range programs(t) {
		t.Run(prog.name, func(t *testing.T) {
			h := newHarness(t, prog)
			oidc1 := "SDKPP_OIDC_TOKEN=" + h.mint("player-"+prog.name+"-1")
			oidc2 := "SDKPP_OIDC_TOKEN2=" + h.mint("player-"+prog.name+"-2")

			// rules AU-1, AA-5, AU-6, AU-7, AA-2; the revocation deauthorizes alice.
			h.run("link")
			h.deauthorized(h.env.User("alice").ID)

			// rules AU-5, AU-9: bot endpoint and OIDC, then a merge into bob's account.
			h.run("provisional", "SDKPP_BOT_ISSUED_TOKEN="+h.secret(h.botToken("player-"+prog.name)), oidc1)

			// rule ST-1: the backend bans bob; the link is severed, and merging that identity
			// again fails with 530017.
			bob := h.env.User("bob")
			require.NoError(t, h.env.Server.BanUser(uint64(bob.ID), time.Time{}), "BanUser")
			h.deauthorized(bob.ID) // rule WH-1
			h.run("merge-banned", oidc1)

			// rules ST-2, WH-1: an unmerge sends the webhook.
			h.run("unmerge", oidc2)
			h.deauthorized(h.env.User("carol").ID)

			h.run("device")
			h.run("child") // rule AU-4
			if prog.name == "csharp" {
				// The same story awaited through the binding's Task forms and events; each
				// continuation on the thread that runs callbacks (issue 28).
				h.run("async")
			}

			// rules LOB-1, LOB-2: two connected players in one lobby, through the C ABI's maps and
			// lists.
			h.run("lobby", "SDKPP_BOT_ISSUED_TOKEN="+h.secret(h.botToken("lobby-a-"+prog.name)),
				"SDKPP_BOT_ISSUED_TOKEN2="+h.secret(h.botToken("lobby-b-"+prog.name)))

			// rule VER-2: three players in an end-to-end encrypted voice call with the real engine,
			// on a private PulseAudio, with the raw PCM hooks. Not under Wine, which has no sound
			// server here. The program must exit afterwards (h.run fails on a hang): Mono waits
			// at exit for every thread that entered managed code.
			if prog.wine == nil {
				pulse, err := pulseserver.Start()
				require.NoError(t, err, "the voice phase needs PulseAudio (build/scripts/deps.sh test)")
				// Recorded speech into the default sink, whose monitor is every player's
				// microphone, for as long as the phase runs.
				speech, err := filepath.Abs("../../audio/internal/speech/testdata/alice.wav")
				require.NoError(t, err)
				stopSpeech := playLoop(t, pulse, speech)
				records := t.TempDir()
				h.run("voice", "PULSE_SERVER="+pulse.Address,
					"SDKPP_BOT_ISSUED_TOKEN="+h.secret(h.botToken("voice-a-"+prog.name)),
					"SDKPP_BOT_ISSUED_TOKEN2="+h.secret(h.botToken("voice-b-"+prog.name)),
					"SDKPP_BOT_ISSUED_TOKEN3="+h.secret(h.botToken("voice-c-"+prog.name)),
					"SDKPP_BOT_ISSUED_TOKEN4="+h.secret(h.botToken("voice-outsider-"+prog.name)),
					"SDKPP_VOICE_SPEECH_DIR="+filepath.Dir(speech), "SDKPP_VOICE_RECORD_DIR="+records)
				stopSpeech()
				scoreSpeech(t, records)
				assert.NoError(t, pulse.Close())
			}

			// rules LOB-1..LOB-3, LIM-2, MSG-1, MSG-3, MODR-1, WH-2: three players chat in one
			// lobby; the harness moderates a message as the game's backend; one player reconnects
			// and reads the history; two exchange direct messages. The webhook hears of every
			// message.
			h.chat()
			// Relationships, rich presence and invites; rule EVT-1 with two devices of one player.
			h.run("social", "SDKPP_BOT_ISSUED_TOKEN="+h.secret(h.botToken("social-host-"+prog.name)),
				"SDKPP_BOT_ISSUED_TOKEN2="+h.secret(h.botToken("social-guest-"+prog.name)))

			// rules GCH-1, LOB-5: full accounts list guilds and channels, link a channel to a
			// lobby once the backend grants CanLinkLobby, and get a guild invite; a provisional
			// player is asked to merge.
			h.guilds()

			// rule RPC-2: AUTHORIZE_REQUEST before and after the desktop client restarts.
			// Under Wine, over a named pipe.
			p := h.listenDesktop()
			wait, _ := h.start("rpc")
			eventually(t, "the AUTHORIZE_REQUEST subscription", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
			p.AuthorizeRequest()
			p.Close()
			p = h.listenDesktop()
			eventually(t, "the subscription after the restart", func() bool { return p.Subscribers(rpc.EvtAuthorizeRequest) == 1 })
			p.AuthorizeRequest()
			wait()
			p.Close()

			// rule VS-1: the desktop client's voice settings through the binding, an update when
			// they change there, and none once it has gone.
			h.voiceSettings()

			// rule AU-10: the whole run's logs, the service's at Debug and the SDK's at Verbose,
			// hold no credential.
			h.checkLogs()

		})
	}
}

// playLoop plays file into the server's default sink again and again until the returned stop
// function is called; stop waits for the player to end.
func playLoop(t *testing.T, pulse *pulseserver.Server, file string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cmd := exec.CommandContext(ctx, "paplay", file)
			cmd.Env = pulse.Env()
			if out, err := cmd.CombinedOutput(); err != nil && ctx.Err() == nil {
				t.Errorf("paplay: %v %s", err, out)
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// credentialShapes are what a leaked token, code or verifier looks like in a log line.
var credentialShapes = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|(?i)(access_token|refresh_token|code_verifier|client_secret|id_token)["=: ]+[A-Za-z0-9_\-.]{8,}|\b(Bearer|Bot) [A-Za-z0-9_\-.]{20,}`)

func (h *harness) checkLogs() {
	h.t.Helper()
	all := h.logs.String()
	assert.Contains(h.t, all, "level=DEBUG", "the logs were not captured at the most verbose levels")
	assert.Contains(h.t, all, "log [Verbose]", "the logs were not captured at the most verbose levels")
	for _, s := range h.secrets {
		if s != "" {
			assert.NotContains(h.t, all, s, "a credential (%d bytes) appears in the logs", len(s))
		}
	}
	m := credentialShapes.FindString(all)
	assert.Empty(h.t, m, "something shaped like a credential appears in the logs: %.12s...", m)
}

// desktop is the platform's desktop client as the harness plays it.
type desktop interface {
	// Subscribers is how many connections subscribe to evt.
	Subscribers(evt string) int
	// AuthorizeRequest sends AUTHORIZE_REQUEST to its subscribers and returns how many.
	AuthorizeRequest() int
	// Exec runs one of its line commands (peer.Usage) and returns the reply.
	Exec(line string) (string, error)
	// Close stops the desktop client.
	Close() error
}

// listenDesktop starts the desktop client at endpoint 0: a peer in this process, or for the
// Windows build the desktop client's Windows build under Wine.
func (h *harness) listenDesktop() desktop {
	if h.prog.wine != nil {
		return h.startWineDesktop()
	}
	p, err := peer.Listen(peer.Config{Dir: h.ipcDir, Index: 0})
	require.NoError(h.t, err)
	return p
}

// wineDesktop is sdkpp-desktop.exe under Wine, driven through its HTTP control.
type wineDesktop struct {
	t       *testing.T
	control string        // the control URL
	exited  chan struct{} // closed when the process has exited
}

// startWineDesktop starts sdkpp-desktop.exe and waits until it listens.
func (h *harness) startWineDesktop() *wineDesktop {
	h.t.Helper()
	argv := h.prog.wine.command("sdkpp-desktop.exe", "-index", "0", "-http", "127.0.0.1:0", "-v")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = &h.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start sdkpp-desktop.exe: %v", err)
	}
	d := &wineDesktop{t: h.t, exited: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(strings.TrimSuffix(sc.Text(), "\r"), "control "); ok {
				urls <- u
			}
		}
		cmd.Wait()
		close(d.exited)
	}()
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		<-d.exited
	})
	select {
	case d.control = <-urls:
	case <-d.exited:
		h.t.Fatal("sdkpp-desktop.exe exited before it listened")
	case <-time.After(60 * time.Second):
		h.t.Fatal("sdkpp-desktop.exe did not start listening within 60 s")
	}
	return d
}

// exec runs one control command and returns its reply.
func (d *wineDesktop) exec(command string) string {
	d.t.Helper()
	resp, err := http.Post(d.control, "text/plain", strings.NewReader(command))
	if err != nil {
		d.t.Fatalf("desktop %q: %v", command, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&b); err != nil || resp.StatusCode != http.StatusOK {
		d.t.Fatalf("desktop %q: HTTP %d %v", command, resp.StatusCode, err)
	}
	return strings.TrimSpace(b.String())
}

// Exec runs one control command.
func (d *wineDesktop) Exec(line string) (string, error) { return d.exec(line), nil }

// Subscribers reads the count from the status line, "connections=N subscriptions=[EVT=N ...]".
func (d *wineDesktop) Subscribers(evt string) int {
	_, rest, _ := strings.Cut(d.exec("status"), "subscriptions=[")
	for _, f := range strings.Fields(strings.TrimSuffix(rest, "]")) {
		if name, n, ok := strings.Cut(f, "="); ok && name == evt {
			k, _ := strconv.Atoi(n)
			return k
		}
	}
	return 0
}

// AuthorizeRequest parses the reply "sent AUTHORIZE_REQUEST to N".
func (d *wineDesktop) AuthorizeRequest() int {
	var n int
	if _, err := fmt.Sscanf(d.exec("authorize-request"), "sent AUTHORIZE_REQUEST to %d", &n); err != nil {
		d.t.Errorf("authorize-request: %v", err)
	}
	return n
}

// Close tells it to quit and waits until it has exited, so that its pipe is free. Once it has
// exited, Close does nothing.
func (d *wineDesktop) Close() error {
	select {
	case <-d.exited:
		return nil
	default:
	}
	d.exec("quit")
	select {
	case <-d.exited:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("sdkpp-desktop.exe still runs 30 s after quit")
	}
}

// voiceSettings runs the voicesettings phase against a desktop client whose settings it sets,
// changes one once the program subscribes, and stops the desktop client once the program has the
// update (rule VS-1).
func (h *harness) voiceSettings() {
	h.t.Helper()
	p := h.listenDesktop()
	defer p.Close()
	for _, line := range []string{"voice mode ptt", "voice ptt-key SHIFT + F", "voice output-volume 150"} {
		_, err := p.Exec(line)
		require.NoError(h.t, err, line)
	}
	wait, lines := h.start("voicesettings")
	eventually(h.t, "the VOICE_SETTINGS_UPDATE subscription", func() bool { return p.Subscribers(rpc.EvtVoiceSettingsUpdate) == 1 })
	reply, err := p.Exec("voice deaf true")
	require.NoError(h.t, err)
	assert.Equal(h.t, "sent VOICE_SETTINGS_UPDATE to 1", reply)
	deadline := time.After(60 * time.Second)
	for updated := false; !updated; {
		select {
		case l := <-lines:
			updated = l == "updated"
		case <-deadline:
			h.t.Error("the program did not report the voice settings update")
			updated = true
		}
	}
	p.Close()
	wait()
}

// chat runs the chat phase, answering its "moderate <lobby> <message>" line as the game's backend,
// then checks the webhook received each message (rule WH-2).
func (h *harness) chat() {
	h.t.Helper()
	name := h.prog.name
	wait, lines := h.start("chat", "SDKPP_BOT_ISSUED_TOKEN="+h.secret(h.botToken("chat-a-"+name)),
		"SDKPP_BOT_ISSUED_TOKEN2="+h.secret(h.botToken("chat-b-"+name)),
		"SDKPP_BOT_ISSUED_TOKEN3="+h.secret(h.botToken("chat-c-"+name)))
	deadline := time.After(60 * time.Second)
	for moderated := false; !moderated; {
		select {
		case l := <-lines:
			var lobby, message uint64
			if n, _ := fmt.Sscanf(l, "moderate %d %d", &lobby, &message); n != 2 {
				continue
			}
			body := strings.NewReader(`{"verdict":"clean"}`)
			req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/lobbies/%d/messages/%d/moderation-metadata", h.env.APIURL, lobby, message), body)
			req.Header.Set("Authorization", "Bot "+h.env.App.BotToken)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if assert.NoError(h.t, err, "moderation") {
				assert.Equal(h.t, http.StatusNoContent, resp.StatusCode, "moderation")
				resp.Body.Close()
			}
			moderated = true
		case <-deadline:
			assert.Fail(h.t, "the chat phase never asked for moderation")
			moderated = true
		}
	}
	wait()
	// Earlier phases' deliveries may still be queued: look for this phase's four messages.
	want := map[string]bool{"LOBBY_MESSAGE_CREATE m0": true, "LOBBY_MESSAGE_CREATE m1": true, "LOBBY_MESSAGE_CREATE m2": true,
		"GAME_DIRECT_MESSAGE_CREATE psst": true}
	for len(want) > 0 {
		ev := h.hooks.Next(h.t, 10*time.Second)
		assert.True(h.t, ev.SignatureOK, "a webhook without a valid signature")
		if ev.Event.Event == nil {
			continue
		}
		var m struct {
			Content string `json:"content"`
		}
		json.Unmarshal(ev.Event.Event.Data, &m)
		delete(want, ev.Event.Event.Type+" "+m.Content)
	}
}

// scoreSpeech compares what each player of the voice phase heard of each other player
// (got-<listener>-<sender>.raw, written by the program) with what that player played
// (sent-<sender>.raw), for every pair (package speechscore).
func scoreSpeech(t *testing.T, dir string) {
	t.Helper()
	read := func(name string) []int16 {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "the voice phase's recording %s", name)
		out := make([]int16, len(b)/2)
		for i := range out {
			out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return out
	}
	for s := range 3 {
		sent := read(fmt.Sprintf("sent-%d.raw", s))
		for l := range 3 {
			if l == s {
				continue
			}
			score, err := speechscore.Compare(sent, read(fmt.Sprintf("got-%d-%d.raw", l, s)))
			require.NoError(t, err)
			t.Logf("player %d hears player %d's voice at %s", l, s, score)
			assert.True(t, score.OK(), "player %d hearing player %d: %s", l, s, score)
		}
	}
}
