package binaries

import "testing"

// A renamed component (the CCM an upgrade starts from, beside the CCM) is
// the same build under another name: one cache entry, one lock.
func TestRenamedSharesTheBuild(t *testing.T) {
	s := &Source{CacheDir: t.TempDir()}
	c := Component{Name: "some-ccm", Module: "example.com/ccm", Package: "example.com/ccm/cmd/some-ccm", Versions: []string{"v1.2.3", "v1.1.0"}}
	older, err := c.At("v1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	renamed := older.Renamed("some-ccm-older")
	want, _, err := s.cachedPath(older)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := s.cachedPath(renamed)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("expected %s cached as %s, actual %s", renamed.Name, want, got)
	}
	if renamed.Name != "some-ccm-older" || renamed.String() != "some-ccm-older v1.1.0" {
		t.Errorf("expected it to run as some-ccm-older v1.1.0, actual %s", renamed)
	}
	if again := renamed.Renamed("third"); again.buildName() != "some-ccm" {
		t.Errorf("expected a second rename still built as some-ccm, actual %s", again.buildName())
	}
}
