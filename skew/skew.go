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

// Package skew is Kubernetes' version skew policy between a cluster's
// kube-apiserver and its cloud-controller-manager, the one rule every door
// and the matrix apply: the CCM must not be newer than the kube-apiserver;
// it should be of the same minor and may be one minor older.
package skew

import (
	"fmt"
	"strconv"
	"strings"
)

// Policy is the rule as the version skew policy states it, quoted where
// the harness refuses a combination.
const Policy = "a cloud-controller-manager must not be newer than the kube-apiserver it talks to; it should match its minor version and may be one minor older (https://kubernetes.io/releases/version-skew-policy/)"

// Outside begins the String of a verdict outside the policy, as run
// metadata (reports.KeySkew) keeps it.
const Outside = "outside the skew policy"

// Verdict is where a (kube-apiserver, CCM) pair stands against Policy.
type Verdict int

const (
	// Unknown: a release is not known (a CCM from an image, an existing
	// cluster before bring-up).
	Unknown Verdict = iota
	// Same: the CCM is of the kube-apiserver's minor.
	Same
	// OneOlder: the CCM is one minor older, as the policy allows.
	OneOlder
	// TooOld: the CCM is older by more than one minor, outside the policy.
	TooOld
	// Newer: the CCM is newer than the kube-apiserver, outside the policy.
	Newer
)

// Within reports whether the policy allows the pair (an unknown release
// is not refused).
func (v Verdict) Within() bool { return v != TooOld && v != Newer }

func (v Verdict) String() string {
	switch v {
	case Same:
		return "same minor"
	case OneOlder:
		return "CCM one minor older"
	case TooOld:
		return Outside + ": CCM more than one minor older"
	case Newer:
		return Outside + ": CCM newer than the kube-apiserver"
	}
	return "unknown"
}

// Of judges a kube-apiserver release against a CCM release ("v1.36.3",
// "v1.35.0"); either "" is Unknown.
func Of(apiserver, ccm string) (Verdict, error) {
	if apiserver == "" || ccm == "" {
		return Unknown, nil
	}
	a, err := Minor(apiserver)
	if err != nil {
		return Unknown, err
	}
	c, err := Minor(ccm)
	if err != nil {
		return Unknown, err
	}
	switch {
	case c > a:
		return Newer, nil
	case c == a:
		return Same, nil
	case c == a-1:
		return OneOlder, nil
	}
	return TooOld, nil
}

// Minor is the minor version of a Kubernetes-style release: 35 for
// "v1.35.4" or "1.35".
func Minor(release string) (int, error) {
	parts := strings.Split(strings.TrimPrefix(release, "v"), ".")
	if len(parts) < 2 || parts[0] != "1" {
		return 0, fmt.Errorf("release %q is not of the form v1.MINOR[.PATCH]", release)
	}
	m, err := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err != nil {
		return 0, fmt.Errorf("release %q is not of the form v1.MINOR[.PATCH]", release)
	}
	return m, nil
}
