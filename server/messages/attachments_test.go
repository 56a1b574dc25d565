package messages_test

import (
	"bytes"
	"encoding/json"
	"image"
	imagepng "image/png"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// pngOf is a w×h PNG image.
func pngOf(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, imagepng.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return b.String()
}

// fileOf is a files[n] part.
func fileOf(n, filename, body string) guildtest.Part {
	return guildtest.Part{Name: "files[" + n + "]", Filename: filename, ContentType: "application/octet-stream", Body: body}
}

// ATT-2, LIM-1: a message uploaded as multipart/form-data (payload_json and files[n]) carries
// its files as attachments, in the order of the attachments array, then the files it does not
// list; each has its sniffed content type, size, URL (serving the bytes), description and the
// IS_SPOILER flag, set by is_spoiler or the SPOILER_ prefix but never by a request's flags.
// Filenames lose their path. The message needs no content. Users read the attachments, a bot
// whose application may not read message content does not; deleting the message deletes them.
func TestAttachmentsUploadAndRead(t *testing.T) {
	f := guildtest.NewBots(t)
	guildtest.SetAppFlags(t, f.E, wire.AppFlagGatewayMessageContentLimited) // for MESSAGE_CONTENT (rule LIM-4)
	with := guildtest.Dial(t, f.E, "")
	with.Identify(f.E.App.BotToken, gwire.IntentGuildMessages|gwire.IntentMessageContent)
	without := guildtest.Dial(t, f.E, "")
	without.Identify(f.E.App.BotToken, gwire.IntentGuildMessages)
	general := f.Channel("general").ID
	img := pngOf(t, 3, 2)
	r := guildtest.SendParts(t, http.MethodPost, f.MessagesURL(general), guildtest.Bearer(f.Alice),
		guildtest.PayloadPart(map[string]any{"attachments": []map[string]any{
			{"id": "1", "filename": "SPOILER_map.png"},
			{"id": 0, "description": "the plan", "is_spoiler": true},
			{"id": 2, "flags": wire.AttachmentFlagIsSpoiler}, // ATT-2: read-only
		}}),
		fileOf("0", "notes.txt", "meet at nine"),
		fileOf("1", "ignored.png", img),
		fileOf("2", "data.bin", "\x00\x01\x02"),
		fileOf("3", "../../etc/x y.txt", "path"),
	)
	var msg wire.GuildMessage
	guildtest.OK(t, r, &msg)
	assert.Empty(t, msg.Content)
	require.Len(t, msg.Attachments, 4, "%s", r.Body)
	type view struct {
		Filename, Description, ContentType string
		Size, Flags                        int
	}
	var got []view
	for _, a := range msg.Attachments {
		got = append(got, view{a.Filename, a.Description, a.ContentType, a.Size, a.Flags})
		assert.True(t, strings.HasPrefix(a.URL, f.E.URL+"/attachments/"+general.String()+"/"+a.ID.String()+"/"), a.URL)
		assert.Equal(t, a.URL, a.ProxyURL)
	}
	assert.Equal(t, []view{
		{"SPOILER_map.png", "", "image/png", len(img), wire.AttachmentFlagIsSpoiler},
		{"notes.txt", "the plan", "text/plain; charset=utf-8", 12, wire.AttachmentFlagIsSpoiler},
		{"data.bin", "", "application/octet-stream", 3, 0},
		{"x_y.txt", "", "text/plain; charset=utf-8", 4, 0},
	}, got)
	require.NotNil(t, msg.Attachments[0].Width)
	assert.Equal(t, [2]int{3, 2}, [2]int{*msg.Attachments[0].Width, *msg.Attachments[0].Height})
	assert.Nil(t, msg.Attachments[1].Width, "not an image")

	// The bytes, with their type; anything but an image as a download.
	for i, want := range []struct{ body, disposition string }{
		{img, ""}, {"meet at nine", `attachment; filename=notes.txt`},
	} {
		res := guildtest.Do(t, http.MethodGet, msg.Attachments[i].URL, nil, nil)
		require.Equal(t, http.StatusOK, res.Status)
		assert.Equal(t, want.body, string(res.Body))
		assert.Equal(t, msg.Attachments[i].ContentType, res.Header.Get("Content-Type"))
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, want.disposition, res.Header.Get("Content-Disposition"))
	}
	wrongName := strings.Replace(msg.Attachments[1].URL, "/notes.txt?", "/other.txt?", 1)
	require.NotEqual(t, msg.Attachments[1].URL, wrongName)
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, wrongName, nil, nil).Status)

	// Readers: the gateway with MESSAGE_CONTENT and users get the attachments; a session
	// without it, and a bot's REST reads without the privilege, do not.
	var d wire.GuildMessage
	with.Expect(gwire.OpDispatch, gwire.EventMessageCreate, &d)
	assert.Equal(t, unsignedAttachments(msg.Attachments), unsignedAttachments(d.Attachments))
	without.Expect(gwire.OpDispatch, gwire.EventMessageCreate, &d)
	assert.Empty(t, d.Attachments)
	var read wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, msg.ID), nil, guildtest.Bearer(f.Bob)), &read)
	assert.Equal(t, unsignedAttachments(msg.Attachments), unsignedAttachments(read.Attachments))
	assert.Equal(t, http.StatusOK, guildtest.Do(t, http.MethodGet, read.Attachments[1].URL, nil, nil).Status, "a read's URL is signed as well")
	guildtest.SetAppFlags(t, f.E, 0) // off again: REST reads follow the flag, and the session using it ends
	with.ExpectClosed(gwire.CloseDisallowedIntents)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, msg.ID), nil, f.BotHeader()), &read)
	assert.Empty(t, read.Attachments, "no message content access: no attachments")
	guildtest.SetAppFlags(t, f.E, wire.AppFlagGatewayMessageContentLimited)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, msg.ID), nil, f.BotHeader()), &read)
	assert.Equal(t, unsignedAttachments(msg.Attachments), unsignedAttachments(read.Attachments))

	// Deleting the message deletes its files.
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete, f.MessagesURL(general, msg.ID), nil, guildtest.Bearer(f.Alice)).Status)
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, msg.Attachments[0].URL, nil, nil).Status)
	without.Expect(gwire.OpDispatch, gwire.EventMessageDelete)
	without.Sync()
}

// ATT-1: editing a message with an attachments array keeps only the attachments it lists (the
// others are deleted), in its order, with their description and is_spoiler changed; a
// multipart edit adds files. Only the author edits; an id that is not one of the message's
// attachments is a 400; removing every attachment of a message without content is a 400 50006.
func TestAttachmentsEdit(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	var msg wire.GuildMessage
	guildtest.OK(t, guildtest.SendParts(t, http.MethodPost, f.MessagesURL(general), guildtest.Bearer(f.Alice),
		guildtest.PayloadPart(map[string]any{"content": "files", "attachments": []map[string]any{{"id": 0, "description": "first"}}}),
		fileOf("0", "a.txt", "aaa"), fileOf("1", "SPOILER_b.txt", "bbb")), &msg)
	require.Len(t, msg.Attachments, 2)
	a, b := msg.Attachments[0], msg.Attachments[1]
	var other wire.GuildMessage
	guildtest.OK(t, guildtest.SendParts(t, http.MethodPost, f.MessagesURL(general), guildtest.Bearer(f.Alice),
		fileOf("0", "c.txt", "ccc")), &other)
	edit := f.MessagesURL(general, msg.ID)

	// Keep b only, unspoilered with a description; a is gone.
	var edited wire.GuildMessage
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, edit, map[string]any{"attachments": []map[string]any{
		{"id": b.ID, "description": "second", "is_spoiler": false}}}, guildtest.Bearer(f.Alice)), &edited)
	require.Len(t, edited.Attachments, 1)
	assert.Equal(t, b.ID, edited.Attachments[0].ID)
	assert.Equal(t, "second", edited.Attachments[0].Description)
	assert.Zero(t, edited.Attachments[0].Flags, "is_spoiler false clears the flag")
	assert.Equal(t, "files", edited.Content, "content unchanged")
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, a.URL, nil, nil).Status, "a removed attachment's file is gone")

	// Spoiler again, description kept; a new file comes first by the array's order.
	guildtest.OK(t, guildtest.SendParts(t, http.MethodPatch, edit, guildtest.Bearer(f.Alice),
		guildtest.PayloadPart(map[string]any{"attachments": []map[string]any{{"id": 0}, {"id": b.ID.String(), "is_spoiler": true}}}),
		fileOf("0", "d.txt", "ddd")), &edited)
	require.Len(t, edited.Attachments, 2)
	assert.Equal(t, "d.txt", edited.Attachments[0].Filename)
	assert.Equal(t, b.ID, edited.Attachments[1].ID)
	assert.Equal(t, "second", edited.Attachments[1].Description)
	assert.Equal(t, wire.AttachmentFlagIsSpoiler, edited.Attachments[1].Flags)

	// Content only: the attachments stay.
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, edit, map[string]any{"content": "still files"}, guildtest.Bearer(f.Alice)), &edited)
	assert.Len(t, edited.Attachments, 2)

	for _, tc := range []struct {
		name   string
		body   map[string]any
		h      http.Header
		status int
		code   int
	}{
		{"another message's attachment", map[string]any{"attachments": []map[string]any{{"id": other.Attachments[0].ID}}},
			guildtest.Bearer(f.Alice), http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"is_spoiler not a boolean", map[string]any{"attachments": []map[string]any{{"id": b.ID, "is_spoiler": "yes"}}},
			guildtest.Bearer(f.Alice), http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"not the author", map[string]any{"attachments": []any{}}, guildtest.Bearer(f.Bob), http.StatusForbidden, 50005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := guildtest.SendJSON(t, http.MethodPatch, edit, tc.body, tc.h)
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			assert.Equal(t, tc.code, r.APIError(t).Code, "%s", r.Body)
		})
	}

	// No content and no attachment left: refused, nothing changed.
	r := guildtest.SendJSON(t, http.MethodPatch, f.MessagesURL(general, other.ID), map[string]any{"attachments": []any{}}, guildtest.Bearer(f.Alice))
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, 50006, r.APIError(t).Code)
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, edit, map[string]any{"attachments": []any{}}, guildtest.Bearer(f.Alice)), &edited)
	assert.Empty(t, edited.Attachments, "a message with content may lose all its attachments")
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, b.URL, nil, nil).Status)
}

// LIM-1, and the other refusals of an upload: a file over 20 MiB and a body declared larger than
// ten such files are 413 40005 (the latter before any of it is read); eleven files are a 400
// 30015; ATTACH_FILES is needed (403 50013); a malformed request is a 400 naming what is wrong.
// Nothing is sent.
func TestAttachmentsRefused(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	u := f.MessagesURL(general)

	// LIM-1: one byte over the limit.
	big := strings.Repeat("a", wire.MaxUploadBytes+1)
	r := guildtest.SendParts(t, http.MethodPost, u, guildtest.Bearer(f.Alice), fileOf("0", "big.txt", big))
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "%.200s", r.Body)
	assert.Equal(t, wire.CodeRequestTooLarge, r.APIError(t).Code)
	big = ""

	// A body declared past the bound is refused before it is sent (Expect: 100-continue).
	req, err := http.NewRequest(http.MethodPost, u, io.LimitReader(zeros{}, wire.MaxMessageUploadBytes+1))
	require.NoError(t, err)
	req.ContentLength = wire.MaxMessageUploadBytes + 1
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	req.Header.Set("Authorization", "Bearer "+f.Alice)
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "%s", body)
	assert.Equal(t, wire.CodeRequestTooLarge, guildtest.Resp{Status: res.StatusCode, Body: body}.APIError(t).Code)

	eleven := []guildtest.Part{}
	for i := range 11 {
		eleven = append(eleven, fileOf(strconv.Itoa(i), "f.txt", "x"))
	}
	cases := []struct {
		name   string
		h      http.Header
		parts  []guildtest.Part
		status int
		code   int
	}{
		{"eleven files", guildtest.Bearer(f.Alice), eleven, http.StatusBadRequest, wire.CodeMaxAttachments},
		{"no ATTACH_FILES", f.BotHeader(), []guildtest.Part{fileOf("0", "a.txt", "a")}, http.StatusForbidden, wire.CodeMissingPermissions},
		{"entry without its file", guildtest.Bearer(f.Alice), []guildtest.Part{guildtest.PayloadPart(map[string]any{"attachments": []map[string]any{{"id": 1}}}),
			fileOf("0", "a.txt", "a")}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"entries only", guildtest.Bearer(f.Alice), []guildtest.Part{guildtest.PayloadPart(map[string]any{"content": "x", "attachments": []map[string]any{{"id": 0}}})},
			http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"is_spoiler not a boolean", guildtest.Bearer(f.Alice), []guildtest.Part{guildtest.PayloadPart(map[string]any{"attachments": []map[string]any{{"id": 0, "is_spoiler": 1}}}),
			fileOf("0", "a.txt", "a")}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"filename not UTF-8", guildtest.Bearer(f.Alice), []guildtest.Part{fileOf("0", "a\xff.txt", "a")}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"file part twice", guildtest.Bearer(f.Alice), []guildtest.Part{fileOf("0", "a.txt", "a"), fileOf("0", "b.txt", "b")},
			http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"unknown part", guildtest.Bearer(f.Alice), []guildtest.Part{{Name: "file", Filename: "a.txt", Body: "a"}}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"files[01]", guildtest.Bearer(f.Alice), []guildtest.Part{fileOf("01", "a.txt", "a")}, http.StatusBadRequest, wire.CodeInvalidFormBody},
		{"payload_json not JSON", guildtest.Bearer(f.Alice), []guildtest.Part{{Name: wire.PayloadJSONPart, Body: "{"}, fileOf("0", "a.txt", "a")},
			http.StatusBadRequest, wire.CodeInvalidJSON},
		{"no content, no file", guildtest.Bearer(f.Alice), []guildtest.Part{guildtest.PayloadPart(map[string]any{"attachments": []any{}})}, http.StatusBadRequest, 50006},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := guildtest.SendParts(t, http.MethodPost, u, tc.h, tc.parts...)
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			assert.Equal(t, tc.code, r.APIError(t).Code, "%s", r.Body)
		})
	}
	// A body cut short.
	r = guildtest.Do(t, http.MethodPost, u, strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"a\"\r\n\r\nabc"),
		http.Header{"Content-Type": {"multipart/form-data; boundary=x"}, "Authorization": {"Bearer " + f.Alice}})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)

	var list []json.RawMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, u, nil, guildtest.Bearer(f.Alice)), &list)
	assert.Empty(t, list, "nothing was sent")
}

// zeros reads zero bytes without end.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Attachment URLs are signed with an expiry as the platform's CDN signs them (ex, is, hm);
// a URL without its signature, with a changed one, with another attachment's, or past its
// expiry (24 hours) gets 404.
func TestAttachmentURLsSigned(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	r := guildtest.SendParts(t, http.MethodPost, f.MessagesURL(general), guildtest.Bearer(f.Alice),
		guildtest.PayloadPart(map[string]any{}), fileOf("0", "a.txt", "one"), fileOf("1", "b.txt", "two"))
	var msg wire.GuildMessage
	guildtest.OK(t, r, &msg)
	require.Len(t, msg.Attachments, 2)
	a, b := msg.Attachments[0].URL, msg.Attachments[1].URL
	u, err := url.Parse(a)
	require.NoError(t, err)
	q := u.Query()
	for _, name := range []string{"ex", "is", "hm"} {
		require.NotEmpty(t, q.Get(name), "%s in %s", name, a)
	}
	get := func(u string) int { return guildtest.Do(t, http.MethodGet, u, nil, nil).Status }
	require.Equal(t, http.StatusOK, get(a))
	require.Equal(t, http.StatusOK, get(b))
	bare := strings.SplitN(a, "?", 2)[0]
	otherQuery := strings.SplitN(b, "?", 2)[1]
	forged := strings.Replace(a, "hm="+q.Get("hm"), "hm="+strings.Repeat("0", len(q.Get("hm"))), 1)
	later := q.Get("ex")
	longer := strings.Replace(a, "ex="+later, "ex=7fffffff", 1)
	for what, u := range map[string]string{
		"no signature":                bare,
		"a forged hm":                 forged,
		"another attachment's":        bare + "?" + otherQuery,
		"a later ex with the same hm": longer,
	} {
		assert.Equal(t, http.StatusNotFound, get(u), what)
	}
	f.E.Clock.Advance(24*time.Hour - time.Minute)
	assert.Equal(t, http.StatusOK, get(a), "before its expiry")
	f.E.Clock.Advance(2 * time.Minute)
	assert.Equal(t, http.StatusNotFound, get(a), "expired")
	// Read again, the message carries URLs signed anew.
	var again wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.MessagesURL(general, msg.ID), nil, guildtest.Bearer(f.Alice)), &again)
	assert.Equal(t, http.StatusOK, get(again.Attachments[0].URL))
}
