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

package options

import (
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/binaries/pins"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/reports"
	"sigs.k8s.io/ccm-harness/skew"
)

// Setup is what the options resolve to: the profile, its cloud's config,
// the runtime and where the run's files go.
type Setup struct {
	Options
	// Profile is the provider with the chosen CCM version or image.
	Profile providers.Profile
	// CloudConfig is what the profile's cloud gets: the provider config,
	// or, for a profile file, its cloudConfig.
	CloudConfig []byte
	// Runtime brings clusters up and down.
	Runtime cluster.Runtime
	// ArtifactsDir is Artifacts made absolute.
	ArtifactsDir string
	// Binaries finds or builds executables: in BinDir, else the cache.
	Binaries *binaries.Source
	// Release is the Kubernetes release of the cluster the harness makes;
	// "" for an existing cluster, which runs its own.
	Release string
	// Skew is where the CCM stands against the release under the version
	// skew policy.
	Skew skew.Verdict
	// Logf reports progress.
	Logf func(format string, args ...any)

	secretsMu sync.Mutex
	secrets   []string
}

// Secrets are the credentials of every cluster this setup brought up (a
// suite's leader-migration clusters too): no artifact may hold them.
func (s *Setup) Secrets() []string {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	return slices.Clone(s.secrets)
}

func (s *Setup) keepSecrets(secrets []string) {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	for _, v := range secrets {
		if !slices.Contains(s.secrets, v) {
			s.secrets = append(s.secrets, v)
		}
	}
}

// Spec is the cluster called name that the setup brings up.
func (s *Setup) Spec(name string) cluster.Spec {
	return cluster.Spec{
		Name:           name,
		Profile:        s.Profile,
		ProviderConfig: s.CloudConfig,
		Nodes:          s.Nodes,
		ArtifactsDir:   s.ArtifactsDir,
		Binaries:       s.Binaries,
		Logf:           s.Logf,

		KubernetesVersion:         s.Release,
		CoordinatedLeaderElection: s.CoordinatedLeaderElection,
		DualStack:                 s.DualStack,
	}
}

// LogDir is where the cluster called name logs.
func (s *Setup) LogDir(name string) string { return cluster.LogDir(s.ArtifactsDir, name) }

// Components are the executables a cluster of the setup runs on this
// machine; with migration, also the managers the leader-migration specs
// run besides (release N's, and the older CCM), where the profile has
// them.
func (s *Setup) Components(migration bool) []binaries.Component {
	var comps []binaries.Component
	if l, ok := s.Runtime.(cluster.ComponentLister); ok {
		comps = l.Components(s.Spec("components"))
	}
	// The leader-migration specs' managers run only where a cluster has a
	// control plane of the spec's own; elsewhere the specs skip.
	if cp, ok := s.Runtime.(cluster.ControlPlaneRuntime); migration && ok && cp.ControlPlanes() {
		for _, c := range []binaries.Component{s.Profile.InTreeKCM, s.Profile.OlderCCM} {
			if c.Name != "" {
				comps = append(comps, c)
			}
		}
	}
	return comps
}

// JobVersion is what the run tests, testgrid's column version: the CCM
// under test at its version, or at its image. The harness's own CCM is
// built on the control plane's release, and reports that.
func (s *Setup) JobVersion() string {
	ccm := s.Profile.CCM
	switch {
	case ccm.Name == "":
		return ClusterCCM
	case (ccm.Image != "" || ccm.Path != "") && ccm.Version != "":
		// Its release, as its maker names it: runs of one release,
		// wherever its image lies, are one column.
		return ccm.Name + "@" + ccm.Version
	case ccm.Image != "":
		return ccm.Name + "@" + ccm.Image
	case ccm.Path != "":
		return ccm.Name + "@" + ccm.Path
	}
	v := strings.Replace(ccm.String(), " ", "@", 1)
	if !strings.Contains(v, "@") {
		v += "@" + pins.ModuleVersion(pins.Kubernetes)
	}
	return v
}

// CCMSource is where the CCM under test comes from: its image, its
// binary, or the module it is built from at its version.
func (s *Setup) CCMSource() string {
	ccm := s.Profile.CCM
	switch {
	case ccm.Name == "":
		return "the cluster's own"
	case ccm.Image != "":
		return ccm.Image
	case ccm.Path != "":
		return ccm.Path
	case ccm.Module == "":
		return ""
	case ccm.Module == pins.ModulePath:
		// This repository's own CCM, on the Kubernetes libraries of its
		// release.
		return ccm.Package + " (this harness's, on Kubernetes " + ccm.Release() + ")"
	}
	return ccm.Module + "@" + ccm.Release()
}

// ClusterCCM stands for the CCM under test where a profile names none: the
// existing cluster's own, already running.
const ClusterCCM = "cloud-controller-manager@existing-cluster"

// CCM says which CCM the run judges, for the bring-up line.
func (s *Setup) CCM() string {
	if s.Profile.CCM.Name == "" {
		return "the CCM the cluster runs"
	}
	return s.Profile.CCM.String()
}

// Metadata are the run's keys for metadata.json, which Prow merges into
// finished.json: the CCM under test (testgrid's column version), the
// provider, the runtime.
func (s *Setup) Metadata() map[string]string {
	return map[string]string{
		reports.KeyJobVersion: s.JobVersion(),
		reports.KeyProvider:   s.Profile.Name,
		reports.KeyCluster:    s.Cluster,
		reports.KeyCCM:        s.Profile.CCM.Name,
		reports.KeyCCMVersion: s.Profile.CCM.Release(),
		// Where the CCM came from: its image or binary, or its module.
		reports.KeyCCMSource: s.CCMSource(),
		reports.KeySkew:      s.Skew.String(),
		// The claims, for the conformance report.
		reports.KeyCapabilities: s.Profile.Capabilities.String(),
	}
}
