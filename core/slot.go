package core

import "sdkpp/core/callbacks"

// handlerSlot holds one replaceable game callback (core/callbacks).
type handlerSlot[F any] = callbacks.Slot[F]

// setHandler replaces the handler in slot; the old one is released.
func setHandler[F any](c *Client, slot *handlerSlot[F], cb Callback[F]) {
	slot.Set(c.scope.NewScope(cb.Release), cb.Fn)
}
