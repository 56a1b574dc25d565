package core

import "sdkpp/core/launch"

// LaunchDirEnv names the environment variable that overrides where RegisterLaunchCommand and
// RegisterLaunchStoreApplication write (core/launch).
const LaunchDirEnv = launch.DirEnv

// writeLaunch registers reg for applicationID (the Client's when 0) with core/launch; it reports
// false, logging why, on failure.
func (c *Client) writeLaunch(what string, applicationID uint64, reg launch.Registration) bool {
	if err := launch.Write(c.appIDOr(applicationID), reg); err != nil {
		c.logf(LoggingSeverityError, "%s: %v", what, err)
		return false
	}
	return true
}
