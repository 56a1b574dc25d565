// Package launch registers how the platform's desktop client launches the game: a command, or
// the game's store application, written to a file per application that the desktop client reads.
package launch

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
)

// DirEnv names the environment variable that overrides where registrations are written; by
// default the user's configuration directory, under sdkpp/launch, where the platform's desktop
// client reads them.
const DirEnv = "SDKPP_LAUNCH_DIR"

// Dir returns the registration directory.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "sdkpp", "launch"), nil
}

// Registration is the file <Dir>/<application id>.json.
type Registration struct {
	ApplicationID string `json:"application_id"`
	Command       string `json:"command,omitempty"`
	StoreAppID    uint32 `json:"store_app_id,omitempty"`
}

// Write writes reg for application appID atomically: a reader sees the old file or the new one.
// It refuses an appID of 0 and a registration with neither a command nor a store application id.
func Write(appID uint64, reg Registration) error {
	switch {
	case reg.Command == "" && reg.StoreAppID == 0:
		return errors.New("nothing to register: the command is empty and the store application id is 0")
	case appID == 0:
		return errors.New("no application id (pass one or call SetApplicationId)")
	}
	reg.ApplicationID = strconv.FormatUint(appID, 10)
	dir, err := Dir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".launch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, reg.ApplicationID+".json"))
}
