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

package aws

import (
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
)

// CCM is the AWS CCM, unmodified, one release per Kubernetes minor the
// harness builds (the version matrix), built in a module generated for it.
// The default, v1.37.1, is built with this repository's dependency
// versions (Aligned), so that most of its packages come from the Go build
// cache: that lifts k8s.io/* from v0.37.0 to v0.37.2, a patch release, and
// keeps the AWS SDK its own (Own), the client whose requests fakecloud
// answers. The others link their own releases' libraries: v1.36.2 does
// not compile against k8s.io/cloud-provider v0.37 (its tagging controller
// reads KubeCloudShared.NodeMonitorPeriod, which 1.37 removed). Its go.mod
// replaces github.com/google/cel-go with the renamed
// github.com/cel-expr/cel-go, which the module proxy refuses; the same code
// is required under its old name instead. The first version is the default; --ccm-version picks
// another. It reports its version as upstream's release build does.
var CCM = binaries.Component{
	Name:    "aws-cloud-controller-manager",
	Module:  "k8s.io/cloud-provider-aws",
	Package: "k8s.io/cloud-provider-aws/cmd/aws-cloud-controller-manager",
	VersionLDFlags: func(v string) []string {
		return append(pins.KubeVersion(v), "-X", "main.gitVersion="+v)
	},
	Versions: []string{"v1.37.1", "v1.36.2", "v1.35.3", "v1.34.4"},
	Aligned:  []string{"v1.37.1"},
	Own:      []string{"github.com/aws/"},
	Withheld: map[string]string{"github.com/google/cel-go": "v0.31.0"},
	Floored:  true,
}
