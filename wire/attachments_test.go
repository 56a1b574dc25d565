package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Filenames of uploads lose their path and characters unsafe in a download's name; one that is
// not UTF-8 is refused.
func TestSanitizeFilename(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"notes.txt", "notes.txt", true},
		{"../../etc/passwd", "passwd", true},
		{`C:\Users\me\a:b?.txt`, "a_b_.txt", true},
		{"my file.png", "my_file.png", true},
		{"SPOILER_x.png", "SPOILER_x.png", true},
		{"a\x00b\nc", "a_b_c", true},
		{"", "unknown", true},
		{"..", "unknown", true},
		{"dir/", "unknown", true},
		{"héllo.txt", "héllo.txt", true},
		{strings.Repeat("é", 200), strings.Repeat("é", MaxAttachmentFilenameBytes/2), true},
		{"a\xff.txt", "", false},
	} {
		got, ok := SanitizeFilename(tc.in)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

// files[n] part names: n a decimal without leading zeros.
func TestParseFilePart(t *testing.T) {
	for name, want := range map[string]int64{"files[0]": 0, "files[9]": 9, "files[12]": 12, "files[01]": -1, "files[]": -1,
		"files[-1]": -1, "files[1": -1, "file": -1, "files[99999999999999999999]": -1, "files[ 1]": -1} {
		n, ok := ParseFilePart(name)
		assert.Equal(t, want >= 0, ok, name)
		if want >= 0 {
			assert.Equal(t, uint64(want), n, name)
			assert.Equal(t, name, FilePart(n))
		}
	}
}

// ATT-1, ATT-2: the attachments array of a request; flags are read but never set IS_SPOILER.
func TestParseAttachmentRequests(t *testing.T) {
	got, err := ParseAttachmentRequests(json.RawMessage(`[{"id": 0, "description": "alt", "is_spoiler": true},
		{"id": "123", "filename": "a.png", "flags": 8}, {"id": 5, "description": null}]`))
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, uint64(0), got[0].ID)
	assert.Equal(t, "alt", *got[0].Description)
	assert.True(t, *got[0].IsSpoiler)
	assert.Equal(t, uint64(123), got[1].ID)
	assert.Equal(t, "a.png", *got[1].Filename)
	assert.Nil(t, got[1].IsSpoiler, "flags do not make a spoiler")
	assert.Equal(t, "", *got[2].Description, "null clears")

	for _, raw := range []string{`5`, `[5]`, `[{}]`, `[{"id": -1}]`, `[{"id": "x"}]`, `[{"id": 1.5}]`, `[{"id": 0}, {"id": "0"}]`,
		`[{"id": 0, "is_spoiler": "true"}]`, `[{"id": 0, "description": 1}]`, `[{"id": 0, "flags": -8}]`,
		`[{"id": 0, "filename": null, "description": "` + strings.Repeat("x", MaxAttachmentDescriptionChars+1) + `"}]`,
		`[` + strings.TrimSuffix(strings.Repeat(`{"id": 0},`, MaxAttachments+1), ",") + `]`} {
		_, err := ParseAttachmentRequests(json.RawMessage(raw))
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr, raw)
		assert.Equal(t, 400, apiErr.Status, raw)
	}
	got, err = ParseAttachmentRequests(json.RawMessage(`null`))
	assert.NoError(t, err)
	assert.Nil(t, got)
}
