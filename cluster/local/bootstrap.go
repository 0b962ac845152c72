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
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// ccmRole is what a cloud-controller-manager needs, after the role in
// k8s.io/cloud-provider's deployment examples. The control plane bootstraps
// no such role: a CCM's installer must bring it, so the harness does.
var ccmRole = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "update", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"services/status"}, Verbs: []string{"patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"create", "get"}},
	{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
	{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"endpoints"}, Verbs: []string{"create", "get", "list", "watch", "update"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
}

// bootstrap writes the admin kubeconfig, installs the CCM's RBAC and
// returns the server's version.
func (in *instance) bootstrap(ctx context.Context) (string, error) {
	path, err := in.writeKubeconfig("admin", in.pki.admin)
	if err != nil {
		return "", err
	}
	in.kubeconfig = path
	cs, err := adminClient(path)
	if err != nil {
		return "", err
	}
	in.client = cs
	if err := grantCCM(ctx, cs, CCMUser); err != nil {
		return "", err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return "", err
	}
	return v.GitVersion, nil
}

// adminClient is the harness's client of the cluster whose admin
// kubeconfig is at path.
func adminClient(path string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	// The harness registers hundreds of nodes at once in the scale
	// benchmarks: client-go's default 5 QPS would make it the bottleneck.
	cfg.QPS, cfg.Burst = 500, 1000
	// Protobuf, as kube-controller-manager and CCMs speak: the API server
	// then encodes each node event for their watches and the harness's once.
	cfg.ContentType = runtime.ContentTypeProtobuf
	return kubernetes.NewForConfig(cfg)
}

// grantCCM gives user the CCM role, and delegated authentication and
// authorization for its secure port.
func grantCCM(ctx context.Context, cs kubernetes.Interface, user string) error {
	const role = "ccm-harness:cloud-controller-manager"
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	objs := []func() error{
		func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: ccmRole}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects:   subject,
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: role + ":auth-delegator"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
				Subjects:   subject,
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objs {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install the CCM's RBAC: %w", err)
		}
	}
	return nil
}
