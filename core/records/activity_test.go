package records

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullActivity returns an activity with every field set, nested parts included.
func fullActivity() *Activity {
	a := NewActivity()
	a.SetName("Harbor Siege")
	a.SetType(ActivityTypesPlaying)
	sdt := StatusDisplayTypesDetails
	a.SetStatusDisplayType(&sdt)
	a.SetState(strp("In a match"))
	a.SetStateUrl(strp("https://game.example/state"))
	a.SetDetails(strp("Capture the flag"))
	a.SetDetailsUrl(strp("https://game.example/details"))
	app, parent := uint64(11), uint64(12)
	a.SetApplicationId(&app)
	a.SetParentApplicationId(&parent)
	as := NewActivityAssets()
	as.SetLargeImage(strp("map_harbor"))
	as.SetLargeText(strp("Harbor"))
	as.SetLargeUrl(strp("https://game.example/large"))
	as.SetSmallImage(strp("class_medic"))
	as.SetSmallText(strp("Medic"))
	as.SetSmallUrl(strp("https://game.example/small"))
	as.SetInviteCoverImage(strp("https://game.example/cover.png"))
	a.SetAssets(as)
	ts := NewActivityTimestamps()
	ts.SetStart(1_700_000_000_000)
	ts.SetEnd(1_700_000_600_000)
	a.SetTimestamps(ts)
	p := NewActivityParty()
	p.SetId("party-1")
	p.SetCurrentSize(1)
	p.SetMaxSize(4)
	p.SetPrivacy(ActivityPartyPrivacyPublic)
	a.SetParty(p)
	s := NewActivitySecrets()
	s.SetJoin("join-secret-1")
	a.SetSecrets(s)
	for _, label := range []string{"Watch", "Guide"} {
		b := NewActivityButton()
		b.SetLabel(label)
		b.SetUrl("https://game.example/" + label)
		a.AddButton(b)
	}
	a.SetSupportedPlatforms(ActivityGamePlatformsDesktop | ActivityGamePlatformsAndroid)
	return a
}

// editAssets changes one part of a's assets through the public setters.
func editAssets(a *Activity, edit func(*ActivityAssets)) {
	as := a.Assets()
	edit(as)
	a.SetAssets(as)
}

// TestActivityEquals: Activity::Equals (API.md 3) compares every field, nested parts included; a
// change to any one of them makes two activities unequal.
func TestActivityEquals(t *testing.T) {
	other := uint64(99)
	sdtName := StatusDisplayTypesName
	cases := []struct {
		field string // the Activity struct field the change reaches
		name  string
		edit  func(*Activity)
	}{
		{"name", "name", func(a *Activity) { a.SetName("Other") }},
		{"typ", "type", func(a *Activity) { a.SetType(ActivityTypesCustomStatus) }}, // rule ACT-1
		{"statusDisplayType", "status display type", func(a *Activity) { a.SetStatusDisplayType(&sdtName) }},
		{"statusDisplayType", "status display type cleared", func(a *Activity) { a.SetStatusDisplayType(nil) }},
		{"state", "state", func(a *Activity) { a.SetState(strp("In the lobby")) }},
		{"state", "state cleared", func(a *Activity) { a.SetState(nil) }},
		{"stateUrl", "state url", func(a *Activity) { a.SetStateUrl(strp("https://game.example/other")) }}, // rule ACT-2
		{"details", "details", func(a *Activity) { a.SetDetails(strp("Defending")) }},
		{"detailsUrl", "details url", func(a *Activity) { a.SetDetailsUrl(nil) }}, // rule ACT-2
		{"applicationId", "application id", func(a *Activity) { a.SetApplicationId(&other) }},
		{"parentApplicationId", "parent application id", func(a *Activity) { a.SetParentApplicationId(nil) }},
		{"assets", "assets cleared", func(a *Activity) { a.SetAssets(nil) }},
		{"assets", "large image", func(a *Activity) { editAssets(a, func(x *ActivityAssets) { x.SetLargeImage(strp("map_fort")) }) }},
		{"assets", "large text", func(a *Activity) { editAssets(a, func(x *ActivityAssets) { x.SetLargeText(nil) }) }},
		{"assets", "large url", func(a *Activity) { editAssets(a, func(x *ActivityAssets) { x.SetLargeUrl(strp("https://x.example")) }) }},
		{"assets", "small image", func(a *Activity) { editAssets(a, func(x *ActivityAssets) { x.SetSmallImage(nil) }) }},
		{"assets", "small text", func(a *Activity) { editAssets(a, func(x *ActivityAssets) { x.SetSmallText(strp("Tank")) }) }},
		{"assets", "small url", func(a *Activity) { editAssets(a, func(x *ActivityAssets) { x.SetSmallUrl(nil) }) }},
		{"assets", "invite cover image", func(a *Activity) { // rule ACT-3
			editAssets(a, func(x *ActivityAssets) { x.SetInviteCoverImage(strp("cover_2")) })
		}},
		{"timestamps", "timestamps cleared", func(a *Activity) { a.SetTimestamps(nil) }},
		{"timestamps", "start", func(a *Activity) { ts := a.Timestamps(); ts.SetStart(1); a.SetTimestamps(ts) }},
		{"timestamps", "end", func(a *Activity) { ts := a.Timestamps(); ts.SetEnd(0); a.SetTimestamps(ts) }},
		{"party", "party cleared", func(a *Activity) { a.SetParty(nil) }},
		{"party", "party id", func(a *Activity) { p := a.Party(); p.SetId("party-2"); a.SetParty(p) }},
		{"party", "party size", func(a *Activity) { p := a.Party(); p.SetCurrentSize(2); a.SetParty(p) }},
		{"party", "party max", func(a *Activity) { p := a.Party(); p.SetMaxSize(8); a.SetParty(p) }},
		{"party", "party privacy", func(a *Activity) {
			p := a.Party()
			p.SetPrivacy(ActivityPartyPrivacyPrivate)
			a.SetParty(p)
		}},
		{"secrets", "secrets cleared", func(a *Activity) { a.SetSecrets(nil) }},
		{"secrets", "join secret", func(a *Activity) { s := a.Secrets(); s.SetJoin("join-secret-2"); a.SetSecrets(s) }},
		{"buttons", "one more button", func(a *Activity) { a.AddButton(NewActivityButton()) }}, // rule ACT-5
		{"buttons", "button order", func(a *Activity) {
			bs := a.GetButtons()
			a.buttons = nil
			a.AddButton(bs[1])
			a.AddButton(bs[0])
		}},
		{"buttons", "button url", func(a *Activity) {
			bs := a.GetButtons()
			bs[0].SetUrl("https://game.example/other")
			a.buttons = nil
			a.AddButton(bs[0])
			a.AddButton(bs[1])
		}},
		{"supportedPlatforms", "supported platforms", func(a *Activity) { a.SetSupportedPlatforms(ActivityGamePlatformsDesktop) }},
	}

	base := fullActivity()
	require.True(t, base.Equals(base), "an activity is not equal to itself, an equal one or its clone")
	require.True(t, base.Equals(fullActivity()), "an activity is not equal to itself, an equal one or its clone")
	require.True(t, base.Equals(base.Clone()), "an activity is not equal to itself, an equal one or its clone")
	require.False(t, base.Equals(nil), "an activity equals nil")
	require.False(t, NewActivity().Equals(nil), "an activity equals nil")
	require.True(t, NewActivity().Equals(NewActivity()), "two empty activities differ")
	// Through the wire and back only the application ids, which the service fills in, are lost.
	back := ActivityFromWire(ActivityToWire(base))
	require.False(t, base.Equals(back), "the application ids do not count")
	back.SetApplicationId(base.applicationId)
	back.SetParentApplicationId(base.parentApplicationId)
	require.True(t, base.Equals(back), "activity changed through its wire form: %+v", ActivityToWire(back))

	covered := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := fullActivity()
			c.edit(a)
			assert.False(t, a.Equals(base), "a change of %s left the activities equal", c.name)
			assert.False(t, base.Equals(a), "a change of %s left the activities equal", c.name)
		})
		covered[c.field] = true
	}
	// Every field of Activity has a case, so a field added later cannot be left out of Equals
	// unnoticed.
	typ := reflect.TypeOf(Activity{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i).Name
		assert.True(t, covered[f], "no case changes Activity.%s", f)
	}
}
