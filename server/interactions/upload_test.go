package interactions_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// multipartBody is a multipart/form-data body of payload_json and files[n] parts.
func multipartBody(t *testing.T, payload any, files map[string][]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	p, err := w.CreateFormField(wire.PayloadJSONPart)
	require.NoError(t, err)
	require.NoError(t, json.NewEncoder(p).Encode(payload))
	n := 0
	for name, data := range files {
		f, err := w.CreateFormFile(wire.FilePart(uint64(n)), name)
		require.NoError(t, err)
		_, err = f.Write(data)
		require.NoError(t, err)
		n++
	}
	require.NoError(t, w.Close())
	return w.FormDataContentType(), buf.Bytes()
}

// MOD-8: a modal's File Upload takes real files: the submission comes as multipart/form-data
// (payload_json and files[n]); the component's values name the files by n; the bot gets them as
// the attachments' ids with data.resolved.attachments, whose URLs serve the bytes. A value naming
// no file of the request is a 400; files come with a modal submission only.
func TestModalFileUpload(t *testing.T) {
	x := newIxFixture(t)
	general := x.Channel("general")
	cmd := x.command(t, x.E.App.BotToken, x.E.App.ID, map[string]any{"name": "report", "description": "d"})
	x.invoke(t, map[string]any{"type": 2, "application_id": x.E.App.ID, "guild_id": x.Guild.ID, "channel_id": general.ID,
		"data": map[string]any{"id": cmd.ID, "name": "report"}}, http.StatusNoContent)
	var ix wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &ix)
	r := x.callback(t, ix, json.RawMessage(`{"type": 9, "data": {"custom_id": "bug", "title": "Bug", "components": [
		{"type": 18, "label": "Logs", "component": {"type": 19, "custom_id": "logs", "min_values": 1, "max_values": 2}}]}}`))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var shown wire.ModalCreate
	x.alice.Until("INTERACTION_MODAL_CREATE", &shown)

	post := func(values []string, files map[string][]byte, typ int) guildtest.Resp {
		t.Helper()
		ct, body := multipartBody(t, map[string]any{"type": typ, "application_id": x.E.App.ID, "guild_id": x.Guild.ID,
			"channel_id": general.ID, "data": map[string]any{"id": shown.ID, "name": "report", "custom_id": "bug", "components": []any{
				map[string]any{"type": 18, "component": map[string]any{"type": 19, "custom_id": "logs", "values": values}}}}}, files)
		return guildtest.Do(t, http.MethodPost, x.API("/interactions"), bytes.NewReader(body),
			http.Header{"Content-Type": {ct}, "Authorization": {"Bearer " + x.Alice}})
	}
	log := []byte("panic: the harbour flooded\n")
	guildtest.ExpectAPIError(t, "a value naming no file", post([]string{"1"}, map[string][]byte{"crash.log": log}, 5),
		http.StatusBadRequest, wire.CodeInvalidFormBody)
	guildtest.ExpectAPIError(t, "files with a command", post([]string{"0"}, map[string][]byte{"crash.log": log}, 2),
		http.StatusBadRequest, wire.CodeInvalidFormBody)
	r = post([]string{"0"}, map[string][]byte{"crash.log": log}, 5)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)

	var sub wire.Interaction
	x.bot.Until("INTERACTION_CREATE", &sub)
	assert.Equal(t, wire.InteractionModalSubmit, sub.Type)
	require.Len(t, sub.Data.Components, 1)
	require.NotNil(t, sub.Data.Components[0].Component)
	values := sub.Data.Components[0].Component.Values
	require.Len(t, values, 1)
	require.NotNil(t, sub.Data.Resolved)
	att, ok := sub.Data.Resolved.Attachments[values[0]]
	require.True(t, ok, "resolved %+v", sub.Data.Resolved)
	assert.Equal(t, "crash.log", att.Filename)
	assert.Equal(t, len(log), att.Size)
	res, err := http.Get(att.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, log, got)
}
