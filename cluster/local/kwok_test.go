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

package local

import (
	"strings"
	"testing"
	"text/template"

	nodeinit "sigs.k8s.io/kwok/kustomize/stage/node/fast"
)

// The filter must leave a template that still parses and that no longer
// emits the condition, for the stages of the pinned kwok.
func TestKubeletStagesDropNetworkUnavailable(t *testing.T) {
	stages, err := kubeletStages()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stages, `{{ if ne .type "NetworkUnavailable" }}`); n != 2 {
		t.Fatalf("filter applied %d times, want 2 (node-initialize and heartbeat)", n)
	}

	s, err := withoutCondition(nodeinit.DefaultNodeInit, "NetworkUnavailable")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(s, "{{ range NodeConditions }}")
	end := strings.Index(s[start:], "{{ end }}{{ end }}")
	if end < 0 {
		t.Fatalf("loop not closed twice:\n%s", s)
	}
	body := s[start : start+end+len("{{ end }}{{ end }}")]
	tmpl, err := template.New("t").Funcs(template.FuncMap{
		"NodeConditions": func() any {
			return []map[string]string{{"type": "Ready"}, {"type": "NetworkUnavailable"}, {"type": "DiskPressure"}}
		},
		"Quote": func(s any) string { v, _ := s.(string); return `"` + v + `"` },
	}).Parse(`{{ $now := "now" }}{{ $lastTransitionTime := "then" }}` + body)
	if err != nil {
		t.Fatalf("filtered template does not parse: %v", err)
	}
	var out strings.Builder
	data := map[string]any{}
	if err := tmpl.Execute(&out, data); err != nil {
		t.Fatalf("execute: %v", err)
	}
	got := out.String()
	if strings.Contains(got, "NetworkUnavailable") || !strings.Contains(got, "Ready") || !strings.Contains(got, "DiskPressure") {
		t.Errorf("filtered conditions:\n%s\nwant Ready and DiskPressure without NetworkUnavailable", got)
	}

	if _, err := withoutCondition("no loop here", "X"); err == nil {
		t.Error("a stage without the loop must be refused, naming the kwok change")
	}
}
