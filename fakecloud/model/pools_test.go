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

package model

import (
	"net/netip"
	"testing"
)

func TestNextAddress(t *testing.T) {
	tests := []struct {
		pool, last, want string
	}{
		{"127.1.0.0/16", "", "127.1.0.1"},
		{"127.1.0.0/16", "127.1.0.255", "127.1.1.0"},
		{"127.1.0.0/16", "127.1.255.253", "127.1.255.254"},
		{"127.1.0.0/16", "127.1.255.254", ""}, // next is the broadcast address
		{"127.1.0.0/16", "10.0.0.1", "127.1.0.1"},
		{"127.1.0.0/16", "garbage", "127.1.0.1"},
		{"fd00::/120", "", "fd00::1"},
		{"fd00::/120", "fd00::fe", "fd00::ff"},
		{"fd00::/120", "fd00::ff", ""},
	}
	for _, tt := range tests {
		p, err := parsePool("test", tt.pool, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := nextAddress(p, tt.last)
		if tt.want == "" {
			if err == nil {
				t.Errorf("nextAddress(%s, %q) = %s, want pool exhausted", tt.pool, tt.last, got)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("nextAddress(%s, %q) = %v, %v; want %s", tt.pool, tt.last, got, err, tt.want)
		}
	}
}

func TestUsableLBAddr(t *testing.T) {
	tests := []struct {
		pool, addr string
		want       bool
	}{
		{"127.20.0.0/16", "127.20.0.1", true},
		{"127.20.0.0/16", "127.20.0.0", false},
		{"127.20.0.0/16", "127.20.1.0", false}, // .0 inside the pool
		{"127.20.0.0/16", "127.20.1.255", true},
		{"127.20.0.0/16", "127.20.255.255", false},
		{"127.20.0.7/32", "127.20.0.7", true},
		{"127.20.0.0/32", "127.20.0.0", false},
		{"::1/128", "::1", true},
	}
	for _, tt := range tests {
		if got := usableLBAddr(netip.MustParsePrefix(tt.pool), netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("usableLBAddr(%s, %s) = %v, want %v", tt.pool, tt.addr, got, tt.want)
		}
	}
}
