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

package existing

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The lease a cloud-controller-manager of k8s.io/cloud-provider takes to
// lead (--leader-elect, its default; --leader-elect-resource-name).
const (
	leaseNamespace = metav1.NamespaceSystem
	leaseName      = "cloud-controller-manager"
)

// ccmRuns checks that a CCM leads the cluster now: its lease is held and
// was renewed within twice its duration. Without one, every spec would
// judge what a CCM did long ago, or time out waiting for one that is not
// there; the suite says so before it starts. It returns the lease's
// holder.
func ccmRuns(ctx context.Context, cs kubernetes.Interface, now time.Time) (string, error) {
	l, err := cs.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("no CCM leads the existing cluster: it has no Lease %s/%s, which a CCM takes with leader election (its default); start the cluster's CCM, with leader election on", leaseNamespace, leaseName)
	case err != nil:
		return "", fmt.Errorf("read Lease %s/%s, by which the cluster's CCM leads: %w", leaseNamespace, leaseName, err)
	}
	if err := leaseCurrent(l, now); err != nil {
		return "", err
	}
	return *l.Spec.HolderIdentity, nil
}

// leaseCurrent says why l shows no CCM leading now.
func leaseCurrent(l *coordinationv1.Lease, now time.Time) error {
	name := leaseNamespace + "/" + leaseName
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return fmt.Errorf("no CCM leads the existing cluster: Lease %s has no holder; is the cluster's CCM running?", name)
	}
	holder := *l.Spec.HolderIdentity
	if l.Spec.RenewTime == nil {
		return fmt.Errorf("no CCM leads the existing cluster: Lease %s, held by %s, was never renewed", name, holder)
	}
	duration := 15 * time.Second
	if l.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if age := now.Sub(l.Spec.RenewTime.Time); age > 2*duration {
		return fmt.Errorf("no CCM leads the existing cluster: Lease %s, held by %s, was last renewed %s ago (it lasts %s); is the cluster's CCM running?", name, holder, age.Round(time.Second), duration)
	}
	return nil
}
