package local

import (
	"slices"
	"testing"
)

// The --controllers help of k8s.io/controller-manager's options, as
// kube-controller-manager v1.36 prints it (cut short), and a CCM's with no
// controller disabled by default.
func TestParseControllers(t *testing.T) {
	for _, tt := range []struct {
		help string
		want []string
	}{
		{"      --controllers strings    A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\n" +
			"                All controllers: cloud-node-lifecycle-controller, service-lb-controller, token-cleaner-controller\n" +
			"                Disabled-by-default controllers: token-cleaner-controller (default [*])\n      --kube-api-qps float32",
			[]string{"cloud-node-lifecycle-controller", "service-lb-controller", "token-cleaner-controller", "token-cleaner-controller"}},
		{"All controllers: cloud-node-controller, node-route-controller\nDisabled-by-default controllers: \n", []string{"cloud-node-controller", "node-route-controller"}},
		{"no such flag\n", nil},
	} {
		if got := ParseControllers(tt.help); !slices.Equal(got, tt.want) {
			t.Errorf("ParseControllers(%q) = %v, want %v", tt.help, got, tt.want)
		}
	}
}
