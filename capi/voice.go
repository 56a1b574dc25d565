package main

import (
	"sdkpp/audio/engine"
	"sdkpp/core/voice"
)

// The library's voice calls run on audio/engine: registering its factory here is what links
// Opus, speexdsp and miniaudio (statically) into libsdkpp.so and sdkpp.dll. core/voice reaches
// the engine only through voice.Engine.
func init() {
	voice.SetEngineFactory(func(cfg voice.EngineConfig) (voice.Engine, error) {
		return engine.New(cfg, engine.Options{Stereo: true}) // positional voice places speakers left and right
	})
}
