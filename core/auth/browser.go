package auth

import (
	"os/exec"
	"runtime"

	"sdkpp/core/internal/sdkerr"
)

// OpenBrowser opens u in the system's browser. It does not wait for the browser: the launcher
// may live as long as the browser it starts, so a goroutine only reaps the process and ends
// when the process does.
func OpenBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	case "darwin":
		cmd = exec.Command("open", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return sdkerr.Invalid("cannot open the browser (%v); set a URL opener with SetOpenUrlCallback", err)
	}
	go cmd.Wait()
	return nil
}
