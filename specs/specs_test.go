/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package specs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAll: every spec has an ID, a text and a tag of its own; IDs are
// unique, and so are texts, by which reports name specs (Of).
func TestAll(t *testing.T) {
	ids, texts := map[ID]bool{}, map[string]bool{}
	for _, s := range All {
		if s.ID.IsZero() || s.Text == "" || s.Tag == "" {
			t.Errorf("%+v: an ID, a text and a tag, each", s)
		}
		if ids[s.ID] || texts[s.Text] {
			t.Errorf("%s (%q) declared twice", s.ID, s.Text)
		}
		ids[s.ID], texts[s.Text] = true, true
		if got, ok := Of("[It] Container " + s.Text + " [" + s.Tag + "]"); !ok || got.ID != s.ID {
			t.Errorf("Of(its JUnit name) = %v, %t; want %s", got.ID, ok, s.ID)
		}
	}
	if _, ok := Of("[It] Nodes does something else [zone]"); ok {
		t.Errorf("Of found a spec the suite does not have")
	}
}

// TestParse: a file names a spec by its ID; another string is refused,
// listing the IDs there are.
func TestParse(t *testing.T) {
	var d struct{ Spec ID }
	if err := json.Unmarshal([]byte(`{"spec":"loadbalancer/udp"}`), &d); err != nil || d.Spec != LBUDP {
		t.Errorf("got %v, %v; want %s", d.Spec, err, LBUDP)
	}
	err := json.Unmarshal([]byte(`{"spec":"serves UDP"}`), &d)
	if err == nil || !strings.Contains(err.Error(), `spec "serves UDP" is none of the suite's (node-init/taint-removed, `) {
		t.Errorf("a spec's text for its ID: %v", err)
	}
	if b, _ := json.Marshal(struct{ Spec ID }{ZoneRegionLabels}); string(b) != `{"Spec":"zone/labels"}` {
		t.Errorf("marshalled %s", b)
	}
}

func TestUntagged(t *testing.T) {
	for leaf, want := range map[string]string{
		"provisions without node ports when allocateLoadBalancerNodePorts=false [loadbalancer]": "provisions without node ports when allocateLoadBalancerNodePorts=false",
		"moves them back, member by member [downgrade] [leader-migration]":                      "moves them back, member by member",
		"labels the zone":         "labels the zone",
		"keeps [brackets] inside": "keeps [brackets] inside",
	} {
		if got := Untagged(leaf); got != want {
			t.Errorf("Untagged(%q) = %q, want %q", leaf, got, want)
		}
	}
}
