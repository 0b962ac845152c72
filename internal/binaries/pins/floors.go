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

package pins

import "strings"

// Floors are, for a Kubernetes minor older than go.mod's, the versions
// ("path version") every CCM built on it in a module generated for it
// requires at least (Component.Floored): for each module two of them
// share, the higher of the versions each resolves alone. Go's minimal
// version selection then resolves one version set for all of them, and
// the packages they share (Kubernetes' libraries, most of each build) are
// compiled once and found in the Go build cache by the next, as the
// default release's CCMs find go.mod's. Without it, on empty caches the
// AWS CCM v1.36.2 (k8s.io/* v0.36.0) and the fakecloud CCM on v1.36.3
// (v0.36.3, and older gRPC, OpenTelemetry and golang.org/x) compiled them
// once each. The lift is of patch releases of k8s.io/* and of libraries
// to versions another CCM of the minor is released with; each CCM's own
// cloud SDK is no other's. The release's own binaries (its kube-apiserver
// and kube-controller-manager) are built as released, without it.
// TestFloorsResolveOneVersionSet (internal/binaries) says what a floor
// lacks when a pinned version changes.
var Floors = map[string][]string{
	"v1.36": {
		"cel.dev/expr v0.25.2",
		"github.com/antlr4-go/antlr/v4 v4.13.1",
		"github.com/go-logr/logr v1.4.4",
		"github.com/google/cel-go v0.31.0",
		"github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0",
		"go.opentelemetry.io/otel v1.45.0",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.45.0",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.45.0",
		"go.opentelemetry.io/otel/metric v1.45.0",
		"go.opentelemetry.io/otel/sdk v1.45.0",
		"go.opentelemetry.io/otel/trace v1.45.0",
		"go.opentelemetry.io/proto/otlp v1.11.0",
		"golang.org/x/crypto v0.58.0",
		"golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e",
		"golang.org/x/net v0.62.0",
		"golang.org/x/oauth2 v0.37.0",
		"golang.org/x/sync v0.24.0",
		"golang.org/x/sys v0.49.0",
		"golang.org/x/term v0.47.0",
		"golang.org/x/text v0.43.0",
		"golang.org/x/time v0.16.0",
		"google.golang.org/genproto/googleapis/api v0.0.0-20260803160001-6ac0973c030d",
		"google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d",
		"google.golang.org/grpc v1.83.2",
		"k8s.io/api v0.36.3",
		"k8s.io/apimachinery v0.36.3",
		"k8s.io/apiserver v0.36.3",
		"k8s.io/client-go v0.36.3",
		"k8s.io/cloud-provider v0.36.3",
		"k8s.io/component-base v0.36.3",
		"k8s.io/component-helpers v0.36.3",
		"k8s.io/controller-manager v0.36.3",
		"k8s.io/kms v0.36.3",
		"k8s.io/streaming v0.36.3",
		"sigs.k8s.io/structured-merge-diff/v6 v6.3.3",
	},
}

// Minor is release v's minor ("v1.36" of v1.36.3), the key of Floors.
func Minor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
