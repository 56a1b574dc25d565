package core

import "sdkpp/core/launch"

// LaunchDirEnv names the environment variable that overrides where RegisterLaunchCommand and
// RegisterLaunchStoreApplication write (core/launch).
const LaunchDirEnv = launch.DirEnv

// writeLaunch writes reg for applicationID (the Client's when 0); it reports false, logging why,
// on failure.
func (c *Client) writeLaunch(what string, applicationID uint64, reg launch.Registration) bool {
	applicationID = c.appIDOr(applicationID)
	if applicationID == 0 {
		c.logf(LoggingSeverityError, "%s: no application id (pass one or call SetApplicationId)", what)
		return false
	}
	if err := launch.Write(applicationID, reg); err != nil {
		c.logf(LoggingSeverityError, "%s: %v", what, err)
		return false
	}
	return true
}

// RegisterLaunchCommand registers the command the platform's desktop client runs to launch the
// game (for example when the player accepts an invite there).
func (c *Client) RegisterLaunchCommand(applicationId uint64, command string) bool {
	if command == "" {
		c.logf(LoggingSeverityError, "RegisterLaunchCommand: the command is empty")
		return false
	}
	return c.writeLaunch("RegisterLaunchCommand", applicationId, launch.Registration{Command: command})
}

// RegisterLaunchStoreApplication registers the game's store application id, through which the
// desktop client launches it.
func (c *Client) RegisterLaunchStoreApplication(applicationId uint64, storeAppId uint32) bool {
	if storeAppId == 0 {
		c.logf(LoggingSeverityError, "RegisterLaunchStoreApplication: the store application id is 0")
		return false
	}
	return c.writeLaunch("RegisterLaunchStoreApplication", applicationId, launch.Registration{StoreAppID: storeAppId})
}
