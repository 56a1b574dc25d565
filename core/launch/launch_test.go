package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Write refuses what registers nothing, and writes the registration of an application to its file.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	assert.ErrorContains(t, Write(7, Registration{}), "nothing to register")
	assert.ErrorContains(t, Write(0, Registration{Command: "/games/harbor"}), "no application id")
	require.NoError(t, Write(7, Registration{Command: "/games/harbor --join"}))
	raw, err := os.ReadFile(filepath.Join(dir, "7.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"application_id": "7", "command": "/games/harbor --join"}`, string(raw))
}
