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

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"

	"sigs.k8s.io/ccm-harness/cluster"
	"sigs.k8s.io/ccm-harness/cluster/local"
	"sigs.k8s.io/ccm-harness/fakecloud/api"
	"sigs.k8s.io/ccm-harness/internal/binaries"
	"sigs.k8s.io/ccm-harness/internal/nodewait"
	"sigs.k8s.io/ccm-harness/providers"
	"sigs.k8s.io/ccm-harness/providers/aws"
	"sigs.k8s.io/ccm-harness/providers/emulated"
	"sigs.k8s.io/ccm-harness/providers/fake"
	"sigs.k8s.io/ccm-harness/providers/openstack"
	"sigs.k8s.io/ccm-harness/reports"
)

// bringUps keeps each way's mean bring-up for the ratio printed after
// both ran.
var bringUps = map[string]time.Duration{}

// BenchmarkBringUp times a warm bring-up to "3 nodes initialized by the
// CCM", and kwokctl's to "Cluster is ready" on the same cached etcd,
// kube-apiserver and kube-controller-manager (kwokctl starts no cloud, no
// CCM and no nodes).
func BenchmarkBringUp(b *testing.B) {
	ctx := context.Background()
	src := &binaries.Source{Logf: b.Logf}
	bins, err := src.Paths(ctx, binaries.Etcd, binaries.KubeAPIServer, binaries.KubeControllerManager, binaries.Kwok, binaries.Kwokctl, emulated.FakeCloud, fake.CCM)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("harness", func(b *testing.B) {
		state := b.TempDir()
		rt := local.New(local.WithStateDir(state))
		var total time.Duration
		for i := 0; i < b.N; i++ {
			name := fmt.Sprintf("bench-up-%d", i)
			start := time.Now()
			c, err := rt.Up(ctx, cluster.Spec{Name: name, Profile: fake.Profile(), Nodes: 3, ArtifactsDir: b.TempDir(), Binaries: src})
			if err == nil {
				err = c.WaitInitialized(ctx, time.Minute)
			}
			total += time.Since(start)
			b.StopTimer()
			if derr := rt.Down(ctx, name); derr != nil {
				b.Error(derr)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		bringUps["harness"] = total / time.Duration(b.N)
	})
	b.Run("kwokctl", func(b *testing.B) {
		work := b.TempDir()
		var total time.Duration
		for i := 0; i < b.N; i++ {
			name := fmt.Sprintf("bench-kwokctl-%d", i)
			start := time.Now()
			err := kwokctl(work, bins["kwokctl"], "create", "cluster", "--name", name, "--runtime", "binary", "--wait", "60s",
				"--etcd-binary", bins["etcd"], "--kube-apiserver-binary", bins["kube-apiserver"],
				"--kube-controller-manager-binary", bins["kube-controller-manager"], "--kwok-controller-binary", bins["kwok"],
				"--disable", "kube-scheduler")
			total += time.Since(start)
			b.StopTimer()
			if derr := kwokctl(work, bins["kwokctl"], "delete", "cluster", "--name", name); derr != nil {
				b.Error(derr)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		bringUps["kwokctl"] = total / time.Duration(b.N)
	})
	if h, k := bringUps["harness"], bringUps["kwokctl"]; h > 0 && k > 0 {
		fmt.Printf("# bring-up: harness %.2fs (to 3 nodes initialized by the CCM), kwokctl %.2fs (to ready, no CCM or nodes): harness/kwokctl %.2f\n",
			h.Seconds(), k.Seconds(), h.Seconds()/k.Seconds())
	}
}

func kwokctl(workdir, bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+workdir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kwokctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// BenchmarkSuite runs a warm make e2e (fake provider, local cluster, 3
// nodes, every spec) end to end in one process and in parallel ones, one
// after the other in the same invocation, and reports each one's wall
// time, each scenario group's, and the peak memory of everything it ran
// (make, the ginkgo CLI, the suite's processes and every component of
// their clusters); then the serial/parallel ratio.
func BenchmarkSuite(b *testing.B) {
	if os.Getenv("E2E_TEST") == "" {
		b.Skip("E2E_TEST is not set: make bench builds the suite and sets it")
	}
	walls := map[int]time.Duration{}
	for _, procs := range []int{1, parallelProcs} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				wall, peakMB, run := makeE2E(b, procs)
				walls[procs] = wall
				groups := map[string]time.Duration{}
				for _, c := range run.Cases {
					if len(c.Tags) > 0 && !c.NotSelected() {
						groups[c.Tags[0]] += c.Duration
					}
				}
				b.ReportMetric(wall.Seconds(), "s/suite")
				b.ReportMetric(peakMB, "peak-MiB")
				for tag, d := range groups {
					b.ReportMetric(d.Seconds(), "s/"+tag)
				}
			}
		})
	}
	if s, p := walls[1], walls[parallelProcs]; s > 0 && p > 0 {
		fmt.Printf("# make e2e: serial %.1fs, %d processes %.1fs: serial/parallel %.2f\n", s.Seconds(), parallelProcs, p.Seconds(), s.Seconds()/p.Seconds())
	}
}

// parallelProcs is make e2e's PROCS on a local cluster.
const parallelProcs = 6

// makeE2E runs make e2e with procs processes, warm (make bench built
// everything first), in a state root and artifacts folder of its own.
func makeE2E(b *testing.B, procs int) (time.Duration, float64, *reports.Run) {
	state, artifacts := b.TempDir(), b.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "e2e", "PROVIDER=fake", "CLUSTER=local", "NODES=3", "CCM_VERSION=", "CCM_IMAGE=",
		"PROVIDER_CONFIG=", "K8S_VERSION=", "LABEL_FILTER=", fmt.Sprintf("PROCS=%d", procs), "ARTIFACTS="+artifacts)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CCM_HARNESS_STATE="+state)
	out, err := os.Create(filepath.Join(artifacts, "make.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	peak := samplePeak(cmd.Process.Pid, state)
	err = cmd.Wait()
	wall := time.Since(start)
	peakMB := peak()
	if err != nil {
		b.Fatalf("make e2e PROCS=%d failed (%v): see %s", procs, err, filepath.Join(artifacts, "make.log"))
	}
	run, err := reports.ReadRun(artifacts)
	if err != nil {
		b.Fatal(err)
	}
	return wall, peakMB, run
}

// samplePeak samples, every half second until stopped, the resident
// memory of pid and its descendants and of every cluster process under
// the state root, and
// returns the peak of their sum in MiB.
func samplePeak(pid int, stateRoot string) (stop func() float64) {
	done := make(chan struct{})
	var peak float64
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			pids := map[int]bool{}
			for _, p := range descendants(pid) {
				pids[p] = true
			}
			for _, r := range clusterProcesses(stateRoot) {
				pids[r.PID] = true
			}
			sum := 0.0
			for p := range pids {
				sum += rssMB(p)
			}
			peak = max(peak, sum)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() float64 { close(done); wg.Wait(); return peak }
}

// BenchmarkScale registers nodes at once, each with its fakecloud
// instance, and times until the CCM has initialized all of them, with the
// CCM's default settings (one node-sync worker, 20 QPS) and tuned. Beside
// it: each process's CPU seconds and peak memory, the harness's included,
// to show the harness is not the bottleneck, and how busy the whole
// machine was, to show when the CPU is.
func BenchmarkScale(b *testing.B) {
	tuned := []string{"--concurrent-node-syncs=20", "--kube-api-qps=500", "--kube-api-burst=500"}
	for _, n := range []int{100, 300, 1000} {
		for _, mode := range []string{"default", "tuned"} {
			b.Run(fmt.Sprintf("nodes=%d/ccm=%s", n, mode), func(b *testing.B) {
				p := fake.Profile()
				if mode == "tuned" {
					p.CCMArgs = append(slices.Clone(p.CCMArgs), tuned...)
				}
				for i := 0; i < b.N; i++ {
					scale(b, p, n)
				}
			})
		}
	}
}

// BenchmarkScaleOpenStack is BenchmarkScale's 300 nodes with the real
// OpenStack CCM, which looks each server up by name in Nova and its ports
// in Neutron, beside the fakecloud CCM's figures: fakecloud's CPU share
// (fakecloud-cpu-%) shows whether the emulation is the bottleneck.
func BenchmarkScaleOpenStack(b *testing.B) {
	for i := 0; i < b.N; i++ {
		scale(b, openstack.Profile(), 300)
	}
}

// BenchmarkScaleAWS is BenchmarkScale's 1,000 nodes with the real AWS
// CCM, which looks each node up by private DNS name in EC2 and batches
// its DescribeInstances by ID, beside the fakecloud CCM's figures: its
// calls to the cloud per node (cloud-calls/node) and fakecloud's CPU share.
func BenchmarkScaleAWS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		scale(b, aws.Profile(), 1000)
	}
}

func scale(b *testing.B, p providers.Profile, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.StopTimer()
	state := b.TempDir()
	// A real kubelet's node lease (40 s): the local runtime's 8 s, kept to
	// notice dead nodes fast, would have kwok renew 500 leases a second
	// for 1,000 nodes, a load no real cluster of that size sees.
	timing := local.DefaultTiming
	timing.NodeLease, timing.NodeGrace = 40*time.Second, 50*time.Second
	rt := local.New(local.WithStateDir(state), local.WithTiming(timing))
	name := fmt.Sprintf("bench-scale-%d", n)
	artifacts := b.TempDir()
	c, err := rt.Up(ctx, cluster.Spec{Name: name, Profile: p, Nodes: 0, ArtifactsDir: artifacts, Binaries: &binaries.Source{Logf: b.Logf}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := rt.Down(context.Background(), name); err != nil {
			b.Error(err)
		}
	}()
	cs := client(b, c.Kubeconfig)
	procs := clusterProcesses(state)
	before := map[string]usage{}
	for _, r := range procs {
		before[r.Name], _ = usageOf(r.PID)
	}
	self, _ := usageOf(0)
	machineBefore, err := readMachineCPU()
	if err != nil {
		b.Fatal(err)
	}

	// Watch first, so no initialization is missed; then register.
	initialized := make(chan map[string]time.Time, 1)
	go func() { initialized <- watchInitialized(ctx, cs, n) }()
	b.StartTimer()
	start := time.Now()
	registered := make([]time.Time, n)
	names := make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := range n {
		names[i] = fmt.Sprintf("scale-%04d", i)
		g.Go(func() error {
			_, err := c.Nodes.Add(gctx, names[i])
			registered[i] = time.Now()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	allRegistered := time.Since(start)
	done := <-initialized
	all := time.Since(start)
	b.StopTimer()
	machineAfter, err := readMachineCPU()
	if err != nil {
		b.Fatal(err)
	}
	if len(done) < n {
		b.Fatalf("%d of %d nodes initialized within the bound", len(done), n)
	}
	var lat []float64
	for i, name := range names {
		lat = append(lat, done[name].Sub(registered[i]).Seconds())
	}
	sort.Float64s(lat)
	b.ReportMetric(all.Seconds(), "s/all-initialized")
	b.ReportMetric(allRegistered.Seconds(), "s/all-registered")
	b.ReportMetric(float64(n)/all.Seconds(), "nodes/s")
	b.ReportMetric(lat[len(lat)/2], "p50-s")
	b.ReportMetric(lat[len(lat)*99/100], "p99-s")
	if calls, err := cloudCalls(artifacts, start); err == nil {
		b.ReportMetric(float64(calls)/float64(n), "cloud-calls/node")
	} else {
		b.Logf("counting the CCM's calls to the cloud: %v", err)
	}
	var total float64
	for _, r := range procs {
		after, err := usageOf(r.PID)
		if err != nil {
			continue
		}
		cpu := after.cpu - before[r.Name].cpu
		total += cpu
		switch r.Name {
		case "kube-apiserver", "kube-controller-manager", "cloud-controller-manager", "fakecloud", "kwok", "etcd":
			b.ReportMetric(cpu, r.Name+"-cpu-s")
			b.ReportMetric(after.peakMB, r.Name+"-MiB")
		}
	}
	me, _ := usageOf(0)
	harness := me.cpu - self.cpu
	for _, r := range procs {
		if after, err := usageOf(r.PID); err == nil && r.Name == "fakecloud" {
			b.ReportMetric(100*(after.cpu-before[r.Name].cpu)/(total+harness), "fakecloud-cpu-%")
		}
	}
	b.ReportMetric(harness, "harness-cpu-s")
	b.ReportMetric(me.peakMB, "harness-MiB")
	b.ReportMetric(100*harness/(total+harness), "harness-cpu-%")
	// Near 100, the machine had no core to spare: the figure is bound by
	// its CPU, not by a wait in the CCM or the harness.
	b.ReportMetric(busyPercent(machineBefore, machineAfter), "machine-busy-%")
}

// cloudCalls counts the calls to fakecloud's cloud API (the CCM's, in any
// dialect) since start, from its audit log under the run's artifacts.
func cloudCalls(artifacts string, since time.Time) (int, error) {
	logs, err := filepath.Glob(filepath.Join(artifacts, "logs", "*", "fakecloud-audit.jsonl"))
	if err != nil || len(logs) != 1 {
		return 0, fmt.Errorf("want one fakecloud audit log under %s, found %v (%v)", artifacts, logs, err)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e api.AuditEntry
		if json.Unmarshal(line, &e) == nil && e.Caller == "cloud" && !e.Time.Before(since) {
			n++
		}
	}
	return n, nil
}

// watchInitialized watches nodes until n are initialized, recording when
// each was first seen so; it returns what it saw by ctx's end.
func watchInitialized(ctx context.Context, cs kubernetes.Interface, n int) map[string]time.Time {
	seen := map[string]time.Time{}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "", fields.Everything())
	note := func(node *v1.Node) {
		if _, ok := seen[node.Name]; !ok && nodewait.Initialized(node) == nil {
			seen[node.Name] = time.Now()
		}
	}
	_, _ = watchtools.UntilWithSync(ctx, lw, &v1.Node{},
		func(store cache.Store) (bool, error) {
			for _, o := range store.List() {
				note(o.(*v1.Node))
			}
			return len(seen) >= n, nil
		},
		func(ev watch.Event) (bool, error) {
			if node, ok := ev.Object.(*v1.Node); ok && ev.Type != watch.Deleted {
				note(node)
			}
			return len(seen) >= n, nil
		})
	return seen
}

func client(b *testing.B, kubeconfig string) kubernetes.Interface {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cfg.ContentType = runtime.ContentTypeProtobuf
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}
