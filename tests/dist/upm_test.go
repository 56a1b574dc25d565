// Package dist tests the packages of build/dist/ that tests/dist/run.sh hands it (make test-dist).
package dist

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readTarball returns the regular files of a .tgz by name and the set of its folders.
func readTarball(t *testing.T, path string) (map[string][]byte, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	files, dirs := map[string][]byte{}, map[string]bool{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		name := strings.TrimSuffix(h.Name, "/")
		switch h.Typeflag {
		case tar.TypeDir:
			dirs[name] = true
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			files[name] = b
		default:
			t.Errorf("%s: entry of type %c; a UPM tarball holds files and folders only", h.Name, h.Typeflag)
		}
	}
	return files, dirs
}

// TestUPMPackage checks the Unity package named by SDKPP_UPM (version SDKPP_VERSION): its
// package.json, a .meta with a unique GUID for every file and folder Unity imports, the native
// libraries' import settings, and the assembly definitions.
func TestUPMPackage(t *testing.T) {
	path, version := os.Getenv("SDKPP_UPM"), os.Getenv("SDKPP_VERSION")
	if path == "" || version == "" {
		t.Skip("set SDKPP_UPM and SDKPP_VERSION (make test-dist does)")
	}
	files, dirs := readTarball(t, path)

	var manifest struct {
		Name, Version, DisplayName, Description, Unity string
		Samples                                        []struct{ DisplayName, Path string }
	}
	require.NoError(t, json.Unmarshal(files["package/package.json"], &manifest), "package.json is valid JSON")
	assert.Equal(t, "com.sdkpp.sdk", manifest.Name)
	assert.Equal(t, version, manifest.Version)
	assert.NotEmpty(t, manifest.DisplayName)
	assert.NotEmpty(t, manifest.Description)
	assert.Regexp(t, `^\d{4}\.\d+$`, manifest.Unity)
	require.NotEmpty(t, manifest.Samples)
	for _, s := range manifest.Samples {
		assert.True(t, dirs["package/"+s.Path], "sample %q: no folder %s", s.DisplayName, s.Path)
	}

	t.Run("metas", func(t *testing.T) {
		guids := map[string]string{}
		guidLine := regexp.MustCompile(`(?m)^guid: ([0-9a-f]{32})$`)
		assets := map[string]bool{}
		for name := range files {
			assets[name] = true
		}
		for name := range dirs {
			assets[name] = true
		}
		for name := range assets {
			if name == "package" || name == "package/Samples~" {
				continue // the root, and the folder Unity hides (its contents have metas)
			}
			if meta, ok := strings.CutSuffix(name, ".meta"); ok {
				assert.True(t, assets[meta], "%s has no asset", name)
				m := guidLine.FindStringSubmatch(string(files[name]))
				if !assert.NotNil(t, m, "%s: no 32-digit guid", name) {
					continue
				}
				if other, dup := guids[m[1]]; dup {
					t.Errorf("%s and %s share the guid %s", name, other, m[1])
				}
				guids[m[1]] = name
				assert.True(t, strings.HasPrefix(string(files[name]), "fileFormatVersion: 2\n"), "%s: fileFormatVersion", name)
				assert.Equal(t, dirs[meta], strings.Contains(string(files[name]), "\nfolderAsset: yes\n"), "%s: folderAsset for folders only", name)
				continue
			}
			assert.Contains(t, files, name+".meta", "%s has no .meta", name)
		}
		assert.Greater(t, len(guids), 10)
	})

	t.Run("native libraries", func(t *testing.T) {
		for _, c := range []struct {
			file, editorOS, player string
		}{
			{"package/Runtime/Plugins/x86_64/libsdkpp.so", "Linux", "Linux64"},
			{"package/Runtime/Plugins/x86_64/sdkpp.dll", "Windows", "Win64"},
		} {
			require.Contains(t, files, c.file)
			platforms := pluginPlatforms(string(files[c.file+".meta"]))
			editor := platforms["Editor: Editor"]
			assert.Equal(t, "1", editor["enabled"], "%s: enabled in the editor", c.file)
			assert.Equal(t, c.editorOS, editor["OS"], "%s: the editor's OS", c.file)
			assert.Equal(t, "x86_64", editor["CPU"], "%s: the editor's CPU", c.file)
			for _, player := range []string{"Linux64", "OSXUniversal", "Win", "Win64"} {
				p, ok := platforms["Standalone: "+player]
				if !assert.True(t, ok, "%s: no setting for the %s player", c.file, player) {
					continue
				}
				if player == c.player {
					assert.Equal(t, "1", p["enabled"], "%s: enabled for the %s player", c.file, player)
					assert.Equal(t, "x86_64", p["CPU"], "%s: %s CPU", c.file, player)
				} else {
					assert.Equal(t, "0", p["enabled"], "%s: disabled for the %s player", c.file, player)
				}
			}
		}
	})

	t.Run("assembly definitions", func(t *testing.T) {
		var runtime, sample struct {
			Name               string
			References         []string
			NoEngineReferences bool
		}
		require.NoError(t, json.Unmarshal(files["package/Runtime/Sdkpp.asmdef"], &runtime))
		assert.Equal(t, "Sdkpp", runtime.Name)
		assert.True(t, runtime.NoEngineReferences, "the binding needs no engine assembly")
		require.NoError(t, json.Unmarshal(files["package/Samples~/Basic/Sdkpp.Samples.Basic.asmdef"], &sample))
		assert.Equal(t, []string{"Sdkpp"}, sample.References)
		assert.Contains(t, files, "package/Runtime/Sdkpp.g.cs")
		assert.Contains(t, files, "package/Runtime/Runtime.cs")
		var glue struct {
			Name               string
			References         []string
			NoEngineReferences bool
		}
		require.NoError(t, json.Unmarshal(files["package/Runtime/Unity/Sdkpp.Unity.asmdef"], &glue))
		assert.Equal(t, "Sdkpp.Unity", glue.Name)
		assert.Equal(t, []string{"Sdkpp"}, glue.References)
		assert.False(t, glue.NoEngineReferences, "the glue uses the engine's events and console")
		assert.Contains(t, files, "package/Runtime/Unity/SdkppUnity.cs")
	})
}

// pluginPlatforms reads a PluginImporter's platformData: for each "first" key (such as
// "Editor: Editor" or "Standalone: Win64"), its enabled flag and settings.
func pluginPlatforms(meta string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, entry := range strings.Split(meta, "\n  - first:\n")[1:] {
		lines := strings.Split(entry, "\n")
		key := strings.TrimSpace(lines[0])
		values := map[string]string{}
		for _, l := range lines[1:] {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
				values[k] = strings.TrimSpace(v)
			}
		}
		out[key] = values
	}
	return out
}
