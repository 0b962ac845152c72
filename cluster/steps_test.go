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

package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSteps(t *testing.T) {
	var said []string
	s := Steps{Logf: func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }}
	start := time.Now()
	if err := s.Do("certificates", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("no etcd")
	if err := s.Do("etcd", func() error { return broken }); !errors.Is(err, broken) {
		t.Errorf("a failed step: %v, want its error", err)
	}
	got := s.Total(start)
	if len(got) != 2 || got[0].Name != "certificates" || got[1].Name != "total" {
		t.Errorf("steps %+v: want certificates and total, the failed step left out", got)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "certificates ") || !strings.HasSuffix(said[0], "s") {
		t.Errorf("said %q: want one line for the step done", said)
	}
}

func TestRunning(t *testing.T) {
	var r Running[int]
	if _, ok := r.Take("a"); ok {
		t.Errorf("Take of a cluster never added: ok")
	}
	r.Add("a", 1)
	if v, ok := r.Take("a"); !ok || v != 1 {
		t.Errorf("Take(a) = %d, %t; want 1, true", v, ok)
	}
	if _, ok := r.Take("a"); ok {
		t.Errorf("Take(a) twice: ok; want it forgotten")
	}
}
