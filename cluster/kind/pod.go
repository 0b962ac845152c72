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

package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/audit"
	"sigs.k8s.io/ccm-harness/cluster/incluster"
	"sigs.k8s.io/ccm-harness/internal/oci"
	"sigs.k8s.io/ccm-harness/internal/process"
	"sigs.k8s.io/ccm-harness/manifests"
)

// The CCM's pod: its workload's one pod on the control-plane node,
// serving on the node's address at the CCM's usual port.
const (
	podSecurePort = 10258
	// podStartTimeout bounds the wait for the pod to serve /healthz: its
	// image is loaded already, so this is the CCM's start.
	podStartTimeout = 2 * time.Minute
	// crashRestarts is how many restarts make a crash loop.
	crashRestarts = 2
)

// podManager is the CCM run as the pod of its workload: a Deployment,
// DaemonSet or Pod, the provider's or the harness's default.
type podManager struct {
	cluster.Endpoint
	spec      cluster.ManagerSpec
	in        *instance
	namespace string
	// workload is what was applied; list finds its pods.
	workload *unstructured.Unstructured
	list     metav1.ListOptions
	log      string
	// restarts is the pod's restart count when it last became healthy.
	mu       sync.Mutex
	restarts int32
	stopLogs context.CancelFunc
}

var _ cluster.Manager = (*podManager)(nil)

func (m *podManager) Name() string              { return m.spec.Name }
func (m *podManager) Spec() cluster.ManagerSpec { return m.spec }
func (m *podManager) Log() string               { return m.log }

// Restart deletes the pod, as a node's drain would, and waits for its
// replacement to serve: the controller's, or, for a bare Pod, the same
// Pod applied again, as a kubelet restarts a static one.
func (m *podManager) Restart(ctx context.Context) error {
	pod, err := m.pod(ctx)
	if err != nil {
		return err
	}
	grace := int64(10)
	pods := m.in.client.CoreV1().Pods(m.namespace)
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		return fmt.Errorf("manager %s: delete its pod %s: %w", m.spec.Name, pod.Name, err)
	}
	if m.workload.GetKind() == "Pod" {
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			return fmt.Errorf("manager %s: timed out after 1m0s waiting for its pod %s to be deleted", m.spec.Name, pod.Name)
		}
		if err := m.apply(ctx); err != nil {
			return err
		}
	}
	return m.waitServing(ctx, pod.UID)
}

// Stop deletes the workload.
func (m *podManager) Stop(ctx context.Context) error {
	var err error
	name := m.workload.GetName()
	switch m.workload.GetKind() {
	case "Deployment":
		err = m.in.client.AppsV1().Deployments(m.namespace).Delete(ctx, name, metav1.DeleteOptions{})
	case "DaemonSet":
		err = m.in.client.AppsV1().DaemonSets(m.namespace).Delete(ctx, name, metav1.DeleteOptions{})
	default:
		err = m.in.client.CoreV1().Pods(m.namespace).Delete(ctx, name, metav1.DeleteOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// apply applies the workload with server-side apply.
func (m *podManager) apply(ctx context.Context) error {
	rc, err := clientcmd.BuildConfigFromFlags("", m.in.kubeconfig())
	if err != nil {
		return err
	}
	if err := manifests.Apply(ctx, rc, []*unstructured.Unstructured{m.workload}); err != nil {
		return fmt.Errorf("manager %s: %w", m.spec.Name, err)
	}
	return nil
}

// pod is the workload's newest pod.
func (m *podManager) pod(ctx context.Context) (*v1.Pod, error) {
	list, err := m.in.client.CoreV1().Pods(m.namespace).List(ctx, m.list)
	if err != nil {
		return nil, err
	}
	var newest *v1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if newest == nil || p.CreationTimestamp.After(newest.CreationTimestamp.Time) {
			newest = p
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("manager %s: %s %s has no pod in namespace %s", m.spec.Name, m.workload.GetKind(), m.workload.GetName(), m.namespace)
	}
	return newest, nil
}

// health is an error once the pod restarted since it last served: a
// crashed CCM explains a spec's failure better than its timeout.
func (m *podManager) health() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pod, err := m.pod(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	base := m.restarts
	m.mu.Unlock()
	if n := restarts(pod); n > base {
		return fmt.Errorf("manager %s: its pod %s restarted %d times since it served%s", m.spec.Name, pod.Name, n-base, process.LogTail(m.log, 10))
	}
	return nil
}

// waitServing waits for a pod other than old to serve /healthz, and
// fails early on one that crash-loops, quoting its log.
func (m *podManager) waitServing(ctx context.Context, old types.UID) error {
	ctx, cancel := context.WithTimeout(ctx, podStartTimeout)
	defer cancel()
	var last error = errors.New("no pod yet")
	for {
		pod, err := m.pod(ctx)
		switch {
		case err != nil:
			last = err
		case old != "" && pod.UID == old:
			last = fmt.Errorf("pod %s not replaced yet", pod.Name)
		case restarts(pod) >= crashRestarts:
			return fmt.Errorf("manager %s: its pod %s crash-loops (restarted %d times, %s): fix what its log says%s",
				m.spec.Name, pod.Name, restarts(pod), waitingReason(pod), process.LogTail(m.log, 10))
		case pod.Status.Phase != v1.PodRunning:
			last = fmt.Errorf("pod %s is %s (%s)", pod.Name, pod.Status.Phase, waitingReason(pod))
		default:
			if last = m.Healthz(ctx); last == nil {
				m.mu.Lock()
				m.restarts = restarts(pod)
				m.mu.Unlock()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("manager %s: timed out after %s waiting for its pod to serve %s/healthz: %v%s", m.spec.Name, podStartTimeout, m.URL, last, process.LogTail(m.log, 10))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func restarts(p *v1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

func waitingReason(p *v1.Pod) string {
	for _, s := range p.Status.ContainerStatuses {
		var last string
		if t := s.LastTerminationState.Terminated; t != nil {
			last = fmt.Sprintf("last exited with code %d", t.ExitCode)
		}
		switch {
		case s.State.Waiting != nil && last != "":
			return s.State.Waiting.Reason + ", " + last
		case s.State.Waiting != nil:
			return s.State.Waiting.Reason
		case s.State.Terminated != nil:
			return fmt.Sprintf("exited with code %d", s.State.Terminated.ExitCode)
		case last != "":
			return last
		}
	}
	return "no container status yet"
}

// followLogs copies the pods' logs into the manager's log file until ctx
// ends, following each new pod or container restart.
func (m *podManager) followLogs(ctx context.Context) {
	f, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		m.in.logf("manager %s: log file: %v", m.spec.Name, err)
		return
	}
	defer f.Close()
	var since *metav1.Time
	for ctx.Err() == nil {
		pod, err := m.pod(ctx)
		if err == nil {
			opts := &v1.PodLogOptions{Follow: true, SinceTime: since}
			started := metav1.Now()
			if rc, err := m.in.client.CoreV1().Pods(m.namespace).GetLogs(pod.Name, opts).Stream(ctx); err == nil {
				_, _ = io.Copy(f, rc)
				rc.Close()
				since = &started
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// startPod runs the CCM's image as its workload's pod, as providers
// deploy it: the provider's Deployment, DaemonSet or Pod from its
// manifests (the harness's default Deployment where they ship none), the
// image and the harness's flags substituted into the CCM's container, the
// cloud config written into the ConfigMap or Secret the container reads
// it from, and the other files the flags name, and the cloud's, from a
// Secret mounted where the flags say. The image is loaded into the nodes'
// containerd: no registry is involved.
func (in *instance) startPod(ctx context.Context, spec cluster.ManagerSpec, img *oci.Image, args, env []string) (*podManager, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", in.kubeconfig())
	if err != nil {
		return nil, err
	}
	w, err := incluster.ApplyManifests(ctx, rc, in.spec.Profile.Manifests)
	if err != nil {
		return nil, err
	}
	ns := w.Namespace()
	in.audit.Set(filepath.Join(in.logDir(), audit.LogName), ns, w.ServiceAccount())
	ref, err := in.loadImage(img)
	if err != nil {
		return nil, fmt.Errorf("manager %s: %w", spec.Name, err)
	}
	cp, err := in.controlPlaneIP()
	if err != nil {
		return nil, err
	}
	cloudConfig, err := manifests.CloudConfig(args)
	if err != nil {
		return nil, fmt.Errorf("manager %s: %w", spec.Name, err)
	}
	args, secret, mounts, err := podFiles(spec.Name, args, []string{filepath.Join(in.dir, "cloud")})
	if err != nil {
		return nil, err
	}
	tmpl, config, err := w.Substitute(ref, args, env, cloudConfig)
	if err != nil {
		return nil, err
	}
	if config != nil {
		if err := manifests.WriteConfig(ctx, in.client, config); err != nil {
			return nil, fmt.Errorf("manager %s: %w", spec.Name, err)
		}
	}
	secret.Namespace = ns
	if _, err := in.client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("manager %s: its files' Secret: %w", spec.Name, err)
	}
	c := &tmpl.Spec.Containers[w.Container]
	c.VolumeMounts = append(c.VolumeMounts, mounts...)
	tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, v1.Volume{Name: filesVolume, VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: secret.Name}}})
	// The harness probes the CCM's /healthz from this machine at the
	// node's address, which a pod network's address is not reachable as.
	tmpl.Spec.HostNetwork = true
	if err := in.schedulable(ctx, w, tmpl); err != nil {
		return nil, err
	}
	obj, err := w.WithTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	if w.Kind() == "Deployment" {
		// One CCM: the cluster has one control-plane node, and the CCM
		// runs without leader election.
		if err := unstructured.SetNestedField(obj.Object, int64(1), "spec", "replicas"); err != nil {
			return nil, err
		}
	}
	m := &podManager{
		Endpoint:  cluster.Endpoint{URL: "https://" + net.JoinHostPort(cp, strconv.Itoa(podSecurePort)), Client: loopbackClient()},
		spec:      spec,
		in:        in,
		namespace: ns,
		workload:  obj,
		list:      metav1.ListOptions{LabelSelector: labels.SelectorFromSet(tmpl.Labels).String()},
		log:       filepath.Join(in.logDir(), spec.Name+".log"),
	}
	if w.Kind() == "Pod" {
		m.list = metav1.ListOptions{FieldSelector: "metadata.name=" + w.Name()}
	}
	if err := m.apply(ctx); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(in.logDir(), 0o700); err != nil {
		return nil, err
	}
	logCtx, stop := context.WithCancel(context.Background())
	m.stopLogs = stop
	go m.followLogs(logCtx)
	in.pods = append(in.pods, m)
	if err := m.waitServing(ctx, ""); err != nil {
		return nil, err
	}
	return m, nil
}

// schedulable fails at once where the workload's nodeSelector matches no
// node, rather than after a timeout with no pod.
func (in *instance) schedulable(ctx context.Context, w *manifests.Workload, tmpl *v1.PodTemplateSpec) error {
	if len(tmpl.Spec.NodeSelector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(tmpl.Spec.NodeSelector).String()
	nodes, err := in.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("manifests: %s selects nodes by %s, and no node of the cluster has that label (kind labels its control plane node-role.kubernetes.io/control-plane): fix the nodeSelector (a kustomization patch can)", w, sel)
	}
	return nil
}

// loadImage writes the image as a docker-archive tagged by its digest and
// loads it into every node's containerd, returning the reference a pod
// names it by.
func (in *instance) loadImage(img *oci.Image) (string, error) {
	image, err := oci.Open(img.Ref)
	if err != nil {
		return "", err
	}
	ref := "ccm-harness.local/cloud-controller-manager:" + strings.TrimPrefix(img.Digest, "sha256:")[:12]
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", err
	}
	archive := filepath.Join(in.dir, "ccm-image.tar")
	if err := tarball.WriteToFile(archive, tag, image); err != nil {
		return "", fmt.Errorf("image %s: %w", img.Ref, err)
	}
	for nodeName, n := range in.nodeList() {
		f, err := os.Open(archive)
		if err != nil {
			return "", err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("image %s: loading it into node %s: %w", img.Ref, nodeName, err)
		}
	}
	return ref, nil
}

// controlPlaneIP is the control-plane node's address, where a
// hostNetwork pod on it serves.
func (in *instance) controlPlaneIP() (string, error) {
	for _, n := range in.nodeList() {
		role, err := n.Role()
		if err != nil || role != "control-plane" {
			continue
		}
		ip, _, err := n.IP()
		return ip, err
	}
	return "", errors.New("kind cluster has no control-plane node")
}

// podFlags are the flags a CCM run as a pod takes differently: no
// kubeconfig (the pod's ServiceAccount instead), its serving address and
// port on the node, and no folder for certificates it makes itself.
var (
	dropInPod    = regexp.MustCompile(`^--(kubeconfig|authentication-kubeconfig|authorization-kubeconfig|cert-dir|bind-address|secure-port)=`)
	podServeArgs = []string{"--bind-address=0.0.0.0", "--secure-port=" + strconv.Itoa(podSecurePort)}
)

// filesVolume is the pod's volume of the files the harness's flags name.
const filesVolume = "ccm-harness-files"

// maxFolderFile is the largest file of a folder that goes into the pod's
// Secret, which holds a MiB at most.
const maxFolderFile = 64 << 10

// podFiles are the pod's flags, and a Secret and the mounts that put the
// files its flags name, and those of folders, at the same paths in the
// container, world-readable, as a Secret volume's files are.
func podFiles(name string, args, folders []string) ([]string, *v1.Secret, []v1.VolumeMount, error) {
	secret := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-files"}, Data: map[string][]byte{}}
	var mounts []v1.VolumeMount
	add := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		key := fmt.Sprintf("f%d-%s", len(secret.Data), filepath.Base(path))
		secret.Data[key] = data
		mounts = append(mounts, v1.VolumeMount{Name: filesVolume, MountPath: path, SubPath: key, ReadOnly: true})
		return nil
	}
	var out []string
	for _, a := range args {
		if dropInPod.MatchString(a) {
			continue
		}
		if _, value, ok := strings.Cut(a, "="); ok {
			if st, err := os.Stat(value); err == nil && st.Mode().IsRegular() {
				if err := add(value); err != nil {
					return nil, nil, nil, err
				}
			}
		}
		out = append(out, a)
	}
	for _, dir := range folders {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a cloud that runs nothing here has no folder
		}
		for _, e := range entries {
			// The cloud's credentials and settings, not its state.
			if info, err := e.Info(); err == nil && e.Type().IsRegular() && info.Size() <= maxFolderFile {
				if err := add(filepath.Join(dir, e.Name())); err != nil {
					return nil, nil, nil, err
				}
			}
		}
	}
	return append(out, podServeArgs...), secret, mounts, nil
}
